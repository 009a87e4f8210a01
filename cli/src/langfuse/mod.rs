//! Langfuse: `grade push` and `--push langfuse`, which send score bodies (made by the
//! engine's `sink::langfuse`) to a Langfuse server, and `--source langfuse:session/ID`,
//! which reads a session from one.

pub mod fetch;
pub mod push;
pub mod scores;
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
        .map_err(|source| CliError::Io {
            path: path.to_owned(),
            source,
        })?
        .ok_or_else(|| crate::input::missing("config ids file", path))?;
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
        .map_err(|source| match source.kind() {
            // Its content, not access to it, is what is wrong.
            std::io::ErrorKind::InvalidData => {
                CliError::Usage(format!("cannot read `{}`: {source}", path.display()))
            }
            _ => CliError::Io {
                path: path.to_owned(),
                source,
            },
        })?
        .ok_or_else(|| crate::input::missing("file of score bodies", path))?;
    let shown = if path.as_os_str() == "-" {
        "stdin".to_owned()
    } else {
        path.display().to_string()
    };
    if text.trim_start().starts_with('[') {
        let bodies: Vec<Value> = serde_json::from_str(&text).map_err(|e| {
            CliError::Usage(format!("{shown}: not a JSON array of score bodies: {e}"))
        })?;
        let problems: Vec<String> = bodies
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                body_problem(b).map(|p| format!("{shown}: item {i} of the array: {p}"))
            })
            .collect();
        return all_or_problems(bodies, problems);
    }
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(body) => match body_problem(&body) {
                Some(p) => problems.push(format!("{shown}:{}: {p}", n + 1)),
                None => out.push(body),
            },
            Err(e) => problems.push(format!("{shown}:{}: not a score body: {e}", n + 1)),
        }
    }
    all_or_problems(out, problems)
}

/// What keeps a value from being a score body Langfuse takes, if anything.
fn body_problem(body: &Value) -> Option<&'static str> {
    let named = body.get("name").and_then(Value::as_str).is_some();
    (!named || body.get("value").is_none()).then_some("a score body needs `name` and `value`")
}

/// The bodies, or every problem found in them at once: nothing is sent from a file that is
/// partly wrong, and its author mends it in one go.
fn all_or_problems(bodies: Vec<Value>, problems: Vec<String>) -> Result<Vec<Value>, CliError> {
    const SHOWN: usize = 20;
    match problems.len() {
        0 => Ok(bodies),
        1 => Err(CliError::Usage(problems[0].clone())),
        n => {
            let mut message = format!("{n} score bodies cannot be sent, nothing was pushed:");
            for p in problems.iter().take(SHOWN) {
                message.push_str("\n  ");
                message.push_str(p);
            }
            if n > SHOWN {
                message.push_str(&format!("\n  … and {} more", n - SHOWN));
            }
            Err(CliError::Usage(message))
        }
    }
}

/// `grade push --langfuse FILE|-`.
pub fn push(args: &PushArgs) -> Result<(), CliError> {
    let bodies = read_bodies(&args.langfuse)?;
    if bodies.is_empty() {
        // Nothing to send is not a failure (a batch with no new sessions), but it is said.
        // `-` is what was typed, not what was read: a grading run names it `<stdin>` too.
        let shown = if args.langfuse.as_os_str() == "-" {
            "<stdin>".to_owned()
        } else {
            args.langfuse.display().to_string()
        };
        eprintln!("warning: `{shown}` holds no score bodies: nothing was pushed");
        return Ok(());
    }
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
