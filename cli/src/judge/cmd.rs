//! `--judge-cmd`: asks an external program (an LLM client, a script) for a judgment.
//!
//! The command runs once per chunk of the session (and per run) with that chunk's scorer
//! prompt on stdin and prints a judgment on stdout.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use grade_engine::judgment::quote_start;

/// Runs `sh -c cmd` with `input` on stdin; its stdout, or why it failed.
///
/// The judge runs in a process group of its own, so that at the deadline the whole group is
/// killed: a child it left behind (`cat; (sleep 60 &)`) would otherwise keep its output pipe
/// open and hold the run long past `--judge-timeout`.
pub fn run(cmd: &str, input: &str, timeout: Duration) -> Result<String, String> {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start it: {e}"))?;
    // Writing and reading on separate threads: a judge that answers before reading all of
    // a long prompt must not deadlock on a full pipe.
    let mut stdin = child.stdin.take().ok_or("its stdin is not available")?;
    let input = input.to_owned();
    std::thread::spawn(move || {
        // A judge may exit without reading everything; that is its business.
        let _ = stdin.write_all(input.as_bytes());
    });
    let (sender, pipes) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().ok_or("its stdout is not available")?;
    let stderr = child.stderr.take().ok_or("its stderr is not available")?;
    for (is_stdout, mut pipe) in [
        (true, Box::new(stdout) as Box<dyn Read + Send>),
        (false, Box::new(stderr)),
    ] {
        let sender = sender.clone();
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = pipe.read_to_end(&mut out);
            let _ = sender.send((is_stdout, out));
        });
    }
    drop(sender);
    // Validated at the command line; a deadline past the end of time is no deadline.
    let deadline = Instant::now().checked_add(timeout);
    let timed_out = |left_behind: bool| {
        let why = if left_behind {
            "it exited but left a process holding its output open"
        } else {
            "no answer"
        };
        format!("{why} within {} s (`--judge-timeout`)", timeout.as_secs())
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if deadline.is_some_and(|d| Instant::now() >= d) => {
                kill_group(&mut child);
                return Err(timed_out(false));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => {
                kill_group(&mut child);
                return Err(format!("cannot wait for it: {e}"));
            }
        }
    };
    let (mut out, mut err) = (None, None);
    while out.is_none() || err.is_none() {
        let received = match deadline {
            Some(d) => pipes.recv_timeout(d.saturating_duration_since(Instant::now())),
            None => pipes
                .recv()
                .map_err(|_| std::sync::mpsc::RecvTimeoutError::Disconnected),
        };
        match received {
            Ok((true, bytes)) => out = Some(bytes),
            Ok((false, bytes)) => err = Some(bytes),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                // The readers are left to end when the killed group's pipes close.
                kill_group(&mut child);
                return Err(timed_out(true));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let out = String::from_utf8_lossy(&out.unwrap_or_default()).into_owned();
    let err = String::from_utf8_lossy(&err.unwrap_or_default()).into_owned();
    if !status.success() {
        let said = if err.trim().is_empty() { &out } else { &err };
        let said = if said.trim().is_empty() {
            "it printed nothing".to_owned()
        } else {
            format!("it said `{}`", quote_start(said, 200))
        };
        return Err(format!("it {}; {said}", ended(status)));
    }
    Ok(out)
}

/// How a judge that failed ended, in words: the standard library's own `exit status: 3`
/// reads as a Rust value inside a sentence.
fn ended(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with code {code}");
    }
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return format!("was killed by signal {signal}");
    }
    format!("ended with {status}")
}

/// Kills the judge and everything it started in its process group, and reaps the judge.
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let pid = rustix::process::Pid::from_child(child);
        // The group may already be gone: nothing is left to stop then.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}
