//! Which Langfuse server to talk to, from the SDK's own variables: `LANGFUSE_BASE_URL`
//! (else the older `LANGFUSE_HOST`, else Langfuse Cloud), `LANGFUSE_PUBLIC_KEY` and
//! `LANGFUSE_SECRET_KEY` (HTTP Basic auth, as the SDK sends them).

use std::time::Duration;

use crate::error::CliError;
use crate::http::{self, Address, Failure, Reply, Retry};

pub const DEFAULT_HOST: &str = "https://cloud.langfuse.com";

#[derive(Debug, Clone)]
pub struct Server {
    /// Without a trailing slash; printed with its userinfo redacted.
    pub host: Address,
    authorization: String,
    agent: ureq::Agent,
    pub retry: Retry,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Server {
    /// The server of the environment; `needed_for` names the command in the message when
    /// keys are missing.
    pub fn from_env(needed_for: &str, timeout: Duration, retry: Retry) -> Result<Server, CliError> {
        let (Some(public), Some(secret)) = (var("LANGFUSE_PUBLIC_KEY"), var("LANGFUSE_SECRET_KEY"))
        else {
            return Err(CliError::Usage(format!(
                "{needed_for} needs LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY (and LANGFUSE_BASE_URL for a server other than Langfuse Cloud)"
            )));
        };
        let (name, host) = match (var("LANGFUSE_BASE_URL"), var("LANGFUSE_HOST")) {
            (Some(url), _) => ("LANGFUSE_BASE_URL", url),
            (None, Some(url)) => ("LANGFUSE_HOST", url),
            (None, None) => ("", DEFAULT_HOST.to_owned()),
        };
        let host = Address::new(host.trim().trim_end_matches('/'));
        // An address that cannot be one would be "unreachable" on every retry, minutes later.
        let lower = host.as_str().to_ascii_lowercase();
        let rest = lower
            .strip_prefix("https://")
            .or_else(|| lower.strip_prefix("http://"));
        if rest.is_none_or(|r| r.is_empty() || r.contains(char::is_whitespace)) {
            return Err(CliError::Usage(format!(
                "{name} `{host}` is not an http:// or https:// address of a Langfuse server (e.g. `https://cloud.langfuse.com`, `http://localhost:3000`)"
            )));
        }
        Ok(Server {
            host,
            authorization: http::basic_auth(&public, &secret),
            agent: http::agent(timeout),
            retry,
        })
    }

    /// `GET` a path (with its query) of the public API.
    pub fn get(&self, path_and_query: &str) -> Result<Reply, Failure> {
        let url = self.host.join(path_and_query);
        http::send(
            &self.agent,
            &http::Request {
                method: "GET",
                url: &url,
                headers: vec![("Authorization", self.authorization.clone())],
                body: None,
            },
            self.retry,
        )
    }

    /// `POST` a JSON body to a path of the public API.
    pub fn post(&self, path: &str, body: &str) -> Result<Reply, Failure> {
        let url = self.host.join(path);
        http::send(
            &self.agent,
            &http::Request {
                method: "POST",
                url: &url,
                headers: vec![("Authorization", self.authorization.clone())],
                body: Some(body),
            },
            self.retry,
        )
    }

    /// The message for a failure that means the keys or the address are wrong, if it is one.
    pub fn access_problem(&self, failure: &Failure) -> Option<String> {
        match failure {
            Failure::Status {
                status: status @ (401 | 403),
                ..
            } => Some(format!(
                "Langfuse at `{}` refused the keys ({}): check LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL{}",
                self.host,
                failure.describe(),
                if *status == 403 { " (the keys may belong to another project)" } else { "" }
            )),
            Failure::Status {
                status: 300..=399, ..
            } => Some(format!(
                "Langfuse at `{}` answered with a redirect, {}: set LANGFUSE_BASE_URL to the address of the server itself",
                self.host,
                failure.describe()
            )),
            _ => None,
        }
    }
}
