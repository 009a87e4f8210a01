//! What `grade rubric validate` reports: the pack compiled with every problem collected, the
//! static checks, and a dry run in which every script grades a small made-up session once, so
//! a script that fails or ends with the wrong type of value is reported before a real session
//! meets it.
//!
//! The dry run grades, so this module sits above the evaluator; the compiler
//! ([`crate::pack::compile`]) runs it at the right step when it is handed [`dry_run`].
//! [`validate_pack`] and [`validate_pack_with`] keep their public paths in [`crate::pack`].

use serde_json::{Map, Value};

use crate::entry::{Entry, Metadata, Outcome, Params, Session};
use crate::eval::{EvalError, GradeOptions};
use crate::native::PluginPolicy;
use crate::pack::compile::validate;
use crate::pack::{CompiledPack, PackFiles, Problem, Severity, Validation};

/// Compiles a pack and runs the static checks: everything `grade rubric validate` reports.
pub fn validate_pack(files: &PackFiles) -> Validation {
    validate_pack_with(files, PluginPolicy::default())
}

/// [`validate_pack`], loading the pack's plugins if `policy` allows it. Every script also
/// grades a made-up session once, as `grade rubric validate` reports; loading a pack to
/// grade does not.
pub fn validate_pack_with(files: &PackFiles, policy: PluginPolicy) -> Validation {
    validate(files, policy, Some(dry_run))
}

/// A problem for each script that fails on a session of two calls (one succeeding, one
/// failing) in each domain and operation the pack's selectors name, or of two generic calls
/// when they name none. Scripts must grade any session; one that fails here fails on some
/// real one too.
///
/// Grading stops at the first rule that fails; to report every failing script in one run,
/// each failing rule is taken out and the session graded again, and the rules are put back
/// in their places at the end (nothing refers to a rule by its position).
pub(crate) fn dry_run(pack: &mut CompiledPack, files: &PackFiles) -> Vec<Problem> {
    let Some(host) = pack.scripts.as_ref() else {
        return Vec::new();
    };
    // Beside the run, which finds only what its made-up session reaches: each script read
    // against the API it can call.
    let mut problems: Vec<Problem> = host
        .api_misuses()
        .into_iter()
        .map(|(file, misuse)| Problem {
            severity: Severity::Warning,
            code: crate::pack::codes::Code::ScriptApi,
            file: files.display_path(file),
            path: String::new(),
            line: misuse.line,
            column: misuse.column,
            message: misuse.message,
        })
        .collect();
    let session = Session {
        id: "validate-dry-run".to_owned(),
        entries: made_up_entries(pack),
        skipped_lines: 0,
    };
    let mut taken_out = Vec::new();
    while let Err(EvalError::Script { rule, message, .. }) =
        pack.grade(&session, &GradeOptions::default())
    {
        let at = pack
            .dimensions
            .iter()
            .enumerate()
            .find_map(|(d, dim)| dim.rules.iter().position(|r| r.id == rule).map(|r| (d, r)));
        let (file, line) = place_of(&message);
        problems.push(Problem {
            severity: Severity::Error,
            code: crate::pack::codes::Code::ScriptDryRun,
            file: file
                .map(|f| files.display_path(f))
                .unwrap_or_else(|| files.display_path(crate::pack::compile::MANIFEST)),
            path: match (file, at) {
                (None, Some((d, r))) => pack.dimensions[d].rules[r].path.clone(),
                _ => String::new(),
            },
            line,
            column: None,
            message: format!(
                "rule `{rule}` fails on a made-up session of {} calls: {}",
                session.entries.len(),
                strip_place(&message)
            ),
        });
        // A failure that is no rule's (a script metric) cannot be taken out: it is reported once.
        let Some((d, r)) = at else {
            break;
        };
        taken_out.push((d, r, pack.dimensions[d].rules.remove(r)));
    }
    for (d, r, rule) in taken_out.into_iter().rev() {
        pack.dimensions[d].rules.insert(r, rule);
    }
    problems
}

/// `FILE.rhai` and its line at the start of a script's message (`check.rhai:4: …`).
fn place_of(message: &str) -> (Option<&str>, Option<usize>) {
    let Some((head, _)) = message.split_once(": ") else {
        return (None, None);
    };
    match head.rsplit_once(':') {
        Some((file, line)) if file.ends_with(".rhai") => (Some(file), line.parse().ok()),
        _ if head.ends_with(".rhai") => (Some(head), None),
        _ => (None, None),
    }
}

fn strip_place(message: &str) -> &str {
    match place_of(message) {
        (Some(_), _) => message.split_once(": ").map_or(message, |(_, rest)| rest),
        _ => message,
    }
}

fn made_up_entries(pack: &CompiledPack) -> Vec<Entry> {
    let (domains, operations) = pack.vocabulary.names();
    let domains = if domains.is_empty() {
        vec!["tool".to_owned()]
    } else {
        domains
    };
    let operations = if operations.is_empty() {
        vec!["call".to_owned()]
    } else {
        operations
    };
    let kinds: Vec<(&String, &String)> = domains
        .iter()
        .flat_map(|d| operations.iter().map(move |o| (d, o)))
        .take(32)
        .collect();
    let mut out = Vec::new();
    for (i, (domain, operation)) in kinds.iter().enumerate() {
        for success in [true, false] {
            let n = out.len();
            out.push(Entry {
                timestamp: format!("2026-01-01T00:00:{:02}.000Z", n % 60).into(),
                instant: 1_767_225_600_000 + n as i64 * 1000,
                session_id: "validate-dry-run".into(),
                domain: domain.as_str().into(),
                operation: operation.as_str().into(),
                params: Params::new(),
                result: Outcome {
                    success,
                    exit_code: if success { 0 } else { 1 },
                    duration: 0.0,
                },
                metadata: Metadata::from_map(Map::<String, Value>::new(), "validate"),
                error: (!success).then(|| format!("made-up failure {i}").into()),
                origin: crate::entry::Origin::UNKNOWN,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::testing::files;

    #[test]
    fn a_script_that_fails_on_the_made_up_session_is_an_error_at_its_line_only_in_validation() {
        let mut files = files("      - { id: r, doc: d, script: r.rhai }\n");
        files.files.insert(
            "r.rhai".to_owned(),
            "let n = session.count(\"tasks\");\nthrow \"boom\";\n".to_owned(),
        );
        let validation = validate_pack(&files);
        assert!(
            validation.pack.is_none(),
            "a failing dry run makes the pack invalid"
        );
        let [problem] = validation.problems.as_slice() else {
            panic!("one problem expected: {:?}", validation.problems);
        };
        assert_eq!(problem.code, crate::pack::codes::Code::ScriptDryRun);
        assert_eq!(problem.file, "rubrics/t/r.rhai");
        assert_eq!(problem.line, Some(2));
        // Two calls (one failing) for each domain × operation the selectors name: `tasks`
        // and `session` × `find` and `show`.
        assert_eq!(
            problem.message,
            "rule `r` fails on a made-up session of 8 calls: runtime error: boom"
        );
        // Loading a pack to grade runs no dry run.
        assert!(crate::pack::compile_pack(&files).is_ok());
    }

    /// Grading stops at the first failing rule: validation reported one script, and the
    /// author found the next only after mending it.
    #[test]
    fn every_script_that_fails_the_dry_run_is_reported_in_one_validation() {
        let mut files = files(
            "      - { id: r1, doc: d, script: a.rhai }\n      - { id: ok, doc: d, script: ok.rhai }\n      - { id: r2, doc: d, script: b.rhai }\n",
        );
        files
            .files
            .insert("a.rhai".to_owned(), "throw \"first\";\n".to_owned());
        files
            .files
            .insert("ok.rhai".to_owned(), "let n = 1;\n".to_owned());
        files.files.insert(
            "b.rhai".to_owned(),
            "let n = 0;\nthrow \"second\";\n".to_owned(),
        );
        let validation = validate_pack(&files);
        let places: Vec<(&str, Option<usize>)> = validation
            .problems
            .iter()
            .map(|p| (p.file.as_str(), p.line))
            .collect();
        assert_eq!(
            places,
            [("rubrics/t/a.rhai", Some(1)), ("rubrics/t/b.rhai", Some(2))],
            "{:?}",
            validation.problems
        );
        assert!(validation.problems[1]
            .message
            .starts_with("rule `r2` fails"));
    }
}
