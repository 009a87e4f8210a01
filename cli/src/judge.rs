//! `--judge-cmd`: asks an external program (an LLM client, a script) for a judgment.
//!
//! The command runs once per chunk of the session with that chunk's scorer prompt on stdin
//! and prints a judgment on stdout: a bare JSON object, or one inside a fenced ```json
//! block. The replies of all chunks are aggregated like a `--judgment` array.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use grade_engine::judgment::{extract_json, parse_judgment, quote_start, Judgment};
use grade_engine::{CompiledPack, Session};

use crate::error::CliError;

pub fn judge(
    pack: &CompiledPack,
    session: &Session,
    cmd: &str,
    timeout: Duration,
) -> Result<Judgment, CliError> {
    let judge = pack.judge.as_ref().ok_or_else(|| {
        CliError::Usage(format!(
            "rubric `{}` has no judged dimensions, so there is nothing to ask a judge",
            pack.id
        ))
    })?;
    let prompts = grade_engine::prompt::render_prompts(pack, judge, session);
    let total = prompts.len();
    let mut replies = Vec::with_capacity(total);
    for (i, prompt) in prompts.iter().enumerate() {
        let place = format!(
            "judge `{cmd}` for session `{}`, chunk {} of {total}",
            session.id,
            i + 1
        );
        let reply =
            run(cmd, prompt, timeout).map_err(|why| CliError::Judge(format!("{place}: {why}")))?;
        let json = extract_json(&reply);
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| {
            CliError::Judge(format!(
                "{place}: the reply is not JSON ({e}); it starts with `{}`",
                quote_start(&reply, 120)
            ))
        })?;
        replies.push(value);
    }
    let text = serde_json::Value::Array(replies).to_string();
    parse_judgment(
        &text,
        &format!("judge `{cmd}` for session `{}`", session.id),
        pack,
    )
    .map_err(|e| CliError::Judge(e.to_string()))
}

/// Runs `sh -c cmd` with `input` on stdin; its stdout, or why it failed.
fn run(cmd: &str, input: &str, timeout: Duration) -> Result<String, String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start it: {e}"))?;
    // Writing and reading on separate threads: a judge that answers before reading all of
    // a long prompt must not deadlock on a full pipe.
    let mut stdin = child.stdin.take().ok_or("its stdin is not available")?;
    let input = input.to_owned();
    let writer = std::thread::spawn(move || {
        // A judge may exit without reading everything; that is its business.
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut stdout = child.stdout.take().ok_or("its stdout is not available")?;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let mut stderr = child.stderr.take().ok_or("its stderr is not available")?;
    let err_reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stderr.read_to_end(&mut out);
        out
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "no answer within {} s (`--judge-timeout`)",
                    timeout.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("cannot wait for it: {e}")),
        }
    };
    let _ = writer.join();
    let out = String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned();
    let err = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
    if !status.success() {
        let said = if err.trim().is_empty() { &out } else { &err };
        return Err(format!(
            "it exited with {status}; it said `{}`",
            quote_start(said, 200)
        ));
    }
    Ok(out)
}
