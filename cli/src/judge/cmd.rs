//! `--judge-cmd`: asks an external program (an LLM client, a script) for a judgment.
//!
//! The command runs once per chunk of the session (and per run) with that chunk's scorer
//! prompt on stdin and prints a judgment on stdout.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use grade_engine::judgment::quote_start;

/// Runs `sh -c cmd` with `input` on stdin; its stdout, or why it failed.
pub fn run(cmd: &str, input: &str, timeout: Duration) -> Result<String, String> {
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
