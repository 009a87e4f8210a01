//! Helpers for the unit tests of the compiler, the conditions and evaluation: a small pack
//! around the rules under test, and sessions made of `(domain, operation)` pairs.

use super::{CompiledPack, PackFiles, PackOrigin, Problem, Severity};
use crate::entry::{Entry, Metadata, Outcome, Params, Session};
use crate::eval::GradeOptions;
use crate::result::GradeResult;

/// A pack with selectors `tasks`, `sessions`, `lookups`, `failed`, metric `share` (tasks over
/// sessions) and one dimension `d` (max 100) whose rules follow.
const HEAD: &str = "id: t
version: '1'
name: T
selectors:
  tasks: { domain: tasks }
  sessions: { domain: session }
  lookups: { domain: tasks, operation: [find, show] }
  failed: { success: false }
metrics:
  share: { ratio: { of: tasks, over: sessions } }
dimensions:
  - id: d
    max: 100
    rules:
";

/// The files of a pack: the test pack with `rules`, or `manifest` as written when it
/// starts with `id:`.
pub(crate) fn files(text: &str) -> PackFiles {
    let manifest = if text.starts_with("id:") {
        text.to_owned()
    } else {
        format!("{HEAD}{text}")
    };
    PackFiles {
        origin: PackOrigin::Builtin("t".to_owned()),
        files: [("rubric.yaml".to_owned(), manifest)].into_iter().collect(),
    }
}

pub(crate) fn pack(rules: &str) -> CompiledPack {
    match super::compile_pack(&files(rules)) {
        Ok(pack) => pack,
        Err(err) => panic!("the test pack does not compile: {err}"),
    }
}

pub(crate) fn problems(rules: &str) -> Vec<Problem> {
    super::validate_pack(&files(rules)).problems
}

fn described(problems: Vec<Problem>, severity: Severity) -> Vec<String> {
    problems
        .into_iter()
        .filter(|p| p.severity == severity)
        .map(|p| format!("{}: {}", p.path, p.message))
        .collect()
}

/// The errors, as `path: message`.
pub(crate) fn errors(rules: &str) -> Vec<String> {
    described(problems(rules), Severity::Error)
}

/// The warnings about rules and cases (not about the dimension's range), as `path: message`.
pub(crate) fn warnings(rules: &str) -> Vec<String> {
    let mut found = described(problems(rules), Severity::Warning);
    found.retain(|w| w.contains(".rules["));
    found
}

/// An entry `domain.operation`, at `i` seconds, succeeding unless the operation ends in `!`.
pub(crate) fn entry(i: usize, domain: &str, operation: &str) -> Entry {
    let (operation, success) = match operation.strip_suffix('!') {
        Some(op) => (op, false),
        None => (operation, true),
    };
    Entry {
        timestamp: format!("2026-03-01T00:00:{:02}Z", i % 60).into(),
        instant: 1_772_323_200_000 + i as i64 * 1000,
        session_id: "s".into(),
        domain: domain.into(),
        operation: operation.into(),
        params: Params::new(),
        result: Outcome {
            success,
            exit_code: if success { 0 } else { 1 },
            duration: 0.0,
        },
        metadata: Metadata::with_source("mcp"),
        error: None,
        origin: crate::entry::Origin::UNKNOWN,
    }
}

pub(crate) fn session(ops: &[(&str, &str)]) -> Session {
    Session {
        id: "s".to_owned(),
        entries: ops
            .iter()
            .enumerate()
            .map(|(i, (d, o))| entry(i, d, o))
            .collect(),
        skipped_lines: 0,
    }
}

pub(crate) fn grade(pack: &CompiledPack, ops: &[(&str, &str)]) -> GradeResult {
    let options = GradeOptions {
        now: 0,
        explain: true,
        references: None,
    };
    match pack.grade(&session(ops), &options) {
        Ok(result) => result,
        Err(err) => panic!("grading failed: {err}"),
    }
}

/// The score of dimension `d` of the test pack with `rules` for the session `ops`.
pub(crate) fn grade_rule(rules: &str, ops: &[(&str, &str)]) -> f64 {
    let result = grade(&pack(rules), ops);
    result.dimensions.get("d").map_or(f64::NAN, |d| d.score.0)
}
