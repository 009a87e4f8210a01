//! `--judge-cmd`: asks an external program (an LLM client, a script) for a judgment.
//!
//! The command runs once per chunk of the session (and per run) with that chunk's scorer
//! prompt on stdin and prints a judgment on stdout.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use grade_engine::judgment::quote_start;

/// What a reader of one of the judge's pipes ends with: all it printed, or the news that it
/// printed more than the cap (what was read is dropped).
type Printed = Option<Vec<u8>>;

/// Runs `sh -c cmd` with `input` on stdin; its stdout, or why it failed.
///
/// The judge runs in a process group of its own, so that at the deadline the whole group is
/// killed: a child it left behind (`cat; (sleep 60 &)`) would otherwise keep its output pipe
/// open and hold the run long past `--judge-timeout`. Its stdout and its stderr are each
/// read up to `max_output` bytes: past that the group is killed at once (`cat /dev/zero`
/// took 2.6 GB in 4 s), rather than at the deadline.
pub fn run(cmd: &str, input: &str, timeout: Duration, max_output: u64) -> Result<String, String> {
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
            let _ = (&mut pipe).take(max_output + 1).read_to_end(&mut out);
            let printed: Printed = (out.len() as u64 <= max_output).then_some(out);
            // Closing the pipe here makes a judge still writing fail at once.
            drop(pipe);
            let _ = sender.send((is_stdout, printed));
        });
    }
    let too_much = |is_stdout: bool| {
        format!(
            "it printed more than {} MiB on {} (`--judge-max-output`), and was stopped",
            max_output >> 20,
            if is_stdout { "stdout" } else { "stderr" }
        )
    };
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
    let (mut out, mut err) = (None, None);
    let status = loop {
        // A pipe past its cap stops the judge now: it may never exit on its own.
        while let Ok((is_stdout, printed)) = pipes.try_recv() {
            let Some(bytes) = printed else {
                kill_group(&mut child);
                return Err(too_much(is_stdout));
            };
            *(if is_stdout { &mut out } else { &mut err }) = Some(bytes);
        }
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
    while out.is_none() || err.is_none() {
        let received = match deadline {
            Some(d) => pipes.recv_timeout(d.saturating_duration_since(Instant::now())),
            None => pipes
                .recv()
                .map_err(|_| std::sync::mpsc::RecvTimeoutError::Disconnected),
        };
        match received {
            Ok((is_stdout, None)) => {
                kill_group(&mut child);
                return Err(too_much(is_stdout));
            }
            Ok((true, bytes)) => out = bytes,
            Ok((false, bytes)) => err = bytes,
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
