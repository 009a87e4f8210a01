//! Example plugin `shell`: what a YAML rule cannot say about shell commands.
//!
//! - `writes_files` (condition): the command writes files (a redirection, `tee`, `sed -i`,
//!   `cp`, `rm`, …), as opposed to only reading them (`cat`, `grep`, `sed -n`, …). In a
//!   `for_each` rule it judges the current entry; over a session, any command.
//! - `file_writes` (metric): how many commands write files.
//! - `near_repeats` (metric): how many commands repeat the failed command right before them
//!   nearly verbatim (85% alike or more; only messages may come between the two).
//! - `near_repeat` (rule): one point off per such retry, with the pair as evidence.
//!
//! A command is an entry's `params.command` (Claude Code's `Bash`, Gemini CLI's
//! `run_shell_command`); entries without one are not commands. The shell parsing is the
//! SDK's [`grade_plugin::shell`], the one `grade`'s own scripts call: this plugin judges a
//! command as the shipped `coding-agent-v1` pack does.

use grade_plugin::shell;
pub mod similar;

use grade_plugin::{plugin, Outcome, Session};

/// The field every function reads.
const COMMAND: &str = "params.command";

/// How alike two commands must be (1 − edit distance / longer length) to be a retry.
pub const NEAR: f64 = 0.85;

fn command<'a>(e: &grade_plugin::Entry<'a>) -> Option<&'a str> {
    e.field(COMMAND).as_str().filter(|c| !c.trim().is_empty())
}

fn writes_files(session: &Session) -> bool {
    match session.current() {
        Some(e) => command(&e).is_some_and(shell::writes_files),
        None => session
            .entries()
            .any(|e| command(&e).is_some_and(shell::writes_files)),
    }
}

fn file_writes(session: &Session) -> f64 {
    session
        .entries()
        .filter(|e| command(e).is_some_and(shell::writes_files))
        .count() as f64
}

/// Pairs (failed command, the command right after it) whose texts are nearly the same. A
/// tool call in between (a Read, an Edit) means the failure was looked into, so only
/// messages may separate the two.
fn retries(session: &Session) -> Vec<(usize, usize, f64)> {
    let mut out = Vec::new();
    let mut previous: Option<(usize, &str, bool)> = None;
    for e in session.entries() {
        let Some(text) = command(&e) else {
            if e.domain() != "message" {
                previous = None;
            }
            continue;
        };
        // Only a failed command is retried; a repeat of a success is another matter.
        if let Some((at, before, false)) = previous {
            let alike = similar::similarity(before, text);
            if alike >= NEAR {
                out.push((at, e.index(), alike));
            }
        }
        previous = Some((e.index(), text, e.success()));
    }
    out
}

fn near_repeats(session: &Session) -> f64 {
    retries(session).len() as f64
}

fn near_repeat(session: &Session) -> Option<Outcome> {
    let found = retries(session);
    if found.is_empty() {
        return None;
    }
    let mut outcome = Outcome {
        points: -(found.len() as f64),
        ..Outcome::default()
    };
    for (failed, retry, alike) in found {
        outcome.evidence.push(format!(
            "entry {} retried the failed command of entry {} nearly verbatim ({:.0}% alike)",
            retry + 1,
            failed + 1,
            alike * 100.0
        ));
        outcome.entries.extend([failed, retry]);
    }
    Some(outcome)
}

plugin! {
    name: "shell",
    version: env!("CARGO_PKG_VERSION"),
    functions: [
        {
            name: "writes_files",
            doc: "the command writes files (a redirection, tee, sed -i, cp, mv, rm, …); over a session, any command does",
            reads: ["params.command"],
            call: writes_files,
        },
        {
            name: "file_writes",
            doc: "how many commands write files",
            reads: ["params.command"],
            call: file_writes,
        },
        {
            name: "near_repeats",
            doc: "how many commands repeat the failed command right before them nearly verbatim (85% alike or more; only messages between)",
            reads: ["params.command"],
            call: near_repeats,
        },
        {
            name: "near_repeat",
            doc: "one point off for each command that repeats the failed command before it nearly verbatim",
            reads: ["params.command"],
            call: near_repeat,
        },
    ],
}
