//! Langfuse: `grade push` and `--push langfuse`, which send score bodies (made by the
//! engine's `sink::langfuse`) to a Langfuse server, and `--source langfuse:session/ID`,
//! which reads a session from one.

pub mod fetch;
pub mod push;
pub mod server;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::args::PushArgs;
use crate::error::CliError;
use server::Server;

/// Reads `{"score name": "config id"}`.
pub fn read_config_ids(path: &Path) -> Result<HashMap<String, String>, CliError> {
    let text = crate::input::read_text(path, crate::input::MAX_DOCUMENT, "config ids file")
        .and_then(|text| {
            text.ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory")
            })
        })
        .map_err(|source| CliError::Io {
            path: path.to_owned(),
            source,
        })?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        CliError::Usage(format!("config ids `{}` are not JSON: {e}", path.display()))
    })?;
    let Value::Object(map) = value else {
        return Err(CliError::Usage(format!(
            "config ids `{}` must be an object mapping score names to config ids",
            path.display()
        )));
    };
    map.into_iter()
        .map(|(k, v)| match v {
            Value::String(id) => Ok((k, id)),
            other => Err(CliError::Usage(format!(
                "config id of `{k}` in `{}` is not a string: {other}",
                path.display()
            ))),
        })
        .collect()
}

/// Reads score bodies: JSON lines, or one JSON array.
fn read_bodies(path: &Path) -> Result<Vec<Value>, CliError> {
    // `-` is standard input; a device is refused and a file past the cap is not read.
    let text = crate::input::read_text(path, crate::input::MAX_DOCUMENT, "file of score bodies")
        .and_then(|text| {
            text.ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory")
            })
        })
        .map_err(|source| CliError::Io {
            path: path.to_owned(),
            source,
        })?;
    let shown = if path.as_os_str() == "-" {
        "stdin".to_owned()
    } else {
        path.display().to_string()
    };
    if text.trim_start().starts_with('[') {
        let bodies: Vec<Value> = serde_json::from_str(&text).map_err(|e| {
            CliError::Usage(format!("{shown}: not a JSON array of score bodies: {e}"))
        })?;
        if let Some(i) = bodies.iter().position(|b| {
            b.get("name").and_then(Value::as_str).is_none() || b.get("value").is_none()
        }) {
            return Err(CliError::Usage(format!(
                "{shown}: item {i} of the array: a score body needs `name` and `value`"
            )));
        }
        return Ok(bodies);
    }
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let body: Value = serde_json::from_str(line)
            .map_err(|e| CliError::Usage(format!("{shown}:{}: not a score body: {e}", n + 1)))?;
        if body.get("name").and_then(Value::as_str).is_none() || body.get("value").is_none() {
            return Err(CliError::Usage(format!(
                "{shown}:{}: a score body needs `name` and `value`",
                n + 1
            )));
        }
        out.push(body);
    }
    Ok(out)
}

/// `grade push --langfuse FILE|-`.
pub fn push(args: &PushArgs) -> Result<(), CliError> {
    let bodies = read_bodies(&args.langfuse)?;
    let server = Server::from_env(
        "`grade push --langfuse`",
        Duration::from_secs(args.timeout),
        crate::http::Retry {
            attempts: args.attempts,
            backoff: Duration::from_millis(args.backoff_ms),
            max_wait: Duration::from_secs(60),
        },
    )?;
    let said = send(&server, &bodies)?;
    crate::write_stdout(said.as_bytes())
}

/// Sends score bodies; what was done, in a line.
pub fn send(server: &Server, bodies: &[Value]) -> Result<String, CliError> {
    let pushed = push::push_scores(server, bodies)?;
    Ok(format!(
        "pushed {} score{} to {} in {} request{} ({} retr{})\n",
        pushed.scores,
        if pushed.scores == 1 { "" } else { "s" },
        server.host,
        pushed.requests,
        if pushed.requests == 1 { "" } else { "s" },
        pushed.retries,
        if pushed.retries == 1 { "y" } else { "ies" }
    ))
}
