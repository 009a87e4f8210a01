//! Functions that fail on purpose, for the host's tests, and `duplicate_titles`, the native
//! twin of a declarative metric, for the measurement in `docs/performance.md`.

use std::collections::HashSet;

use grade_plugin::{plugin, Outcome, Session};

/// Panics for sessions whose id contains `panic`; otherwise one point.
#[expect(clippy::panic, reason = "the host's test of a plugin that panics")]
fn panics(session: &Session) -> Outcome {
    if session.id().contains("panic") {
        panic!("boom in session {}", session.id());
    }
    Outcome {
        points: 1.0,
        ..Outcome::default()
    }
}

/// Fails (without panicking) for sessions whose id contains `fail`.
fn fails(session: &Session) -> Result<bool, String> {
    if session.id().contains("fail") {
        return Err(format!("cannot judge session `{}`", session.id()));
    }
    Ok(true)
}

/// Reads a field it did not declare: the SDK turns that into an error naming the field.
fn undeclared(session: &Session) -> f64 {
    session
        .entries()
        .filter(|e| !e.field("params.title").is_missing())
        .count() as f64
}

/// `duplicates: {of: {domain: tasks, operation: add, success: true}, key: params.title,
/// normalize: [lowercase, trim]}` (cleo-v1's metric), written natively.
fn duplicate_titles(session: &Session) -> f64 {
    let mut seen = HashSet::new();
    let mut total = 0usize;
    for e in session.entries() {
        if e.domain() != "tasks" || e.operation() != "add" || !e.success() {
            continue;
        }
        let Some(title) = e.field("params.title").as_str() else {
            continue;
        };
        let key = title.trim().to_lowercase();
        if key.is_empty() {
            continue;
        }
        total += 1;
        seen.insert(key);
    }
    (total - seen.len()) as f64
}

/// The same as a rule: one point off per repeated title; no outcome when none repeats (the
/// twin of `when: {metric, at_least: 1}` with `points: {metric, times: -1}`).
fn duplicate_titles_rule(session: &Session) -> Option<Outcome> {
    let repeats = duplicate_titles(session);
    (repeats > 0.0).then(|| Outcome {
        points: -repeats,
        ..Outcome::default()
    })
}

plugin! {
    name: "faulty",
    version: "0.0.1",
    functions: [
        { name: "panics", doc: "panics for sessions whose id contains `panic`", reads: [], call: panics },
        { name: "fails", doc: "fails for sessions whose id contains `fail`", reads: [], call: fails },
        { name: "undeclared", doc: "reads a field it did not declare", reads: [], call: undeclared },
        { name: "duplicate_titles", doc: "successful tasks.add entries repeating an earlier title (lowercased, trimmed)", reads: ["params.title"], call: duplicate_titles },
        { name: "duplicate_titles_rule", doc: "one point off per successful tasks.add repeating an earlier title", reads: ["params.title"], call: duplicate_titles_rule },
    ],
}
