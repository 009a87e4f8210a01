//! Several sources in one run (issue 43): `--source` given more than once, folders and glob
//! patterns of files of any format. Each result names the file it came from; a session id in
//! two files is refused naming both; a run of one file writes what it always wrote.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use std::path::Path;

use common::*;

const EXAMPLE: &str = "examples/cleo-audit.jsonl";
const TRANSCRIPT: &str =
    "rubrics/claude-code-v1/tests/real/claude_code_transcripts/real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";

/// The example log split as a rotation leaves it: one session per file.
fn rotated(dir: &Path) {
    let text = std::fs::read_to_string(repo_root().join(EXAMPLE)).unwrap();
    let (mut good, mut sloppy) = (String::new(), String::new());
    for line in text.lines() {
        let into = if line.contains("session-demo-good") {
            &mut good
        } else {
            &mut sloppy
        };
        into.push_str(line);
        into.push('\n');
    }
    std::fs::write(dir.join("audit.jsonl"), sloppy).unwrap();
    std::fs::write(dir.join("audit-1.jsonl"), good).unwrap();
}

fn grade_jsonl(
    dir: &Path,
    rubric: &str,
    sources: &[&str],
) -> (i32, Vec<serde_json::Value>, String) {
    let mut args = vec!["--rubric", rubric];
    for s in sources {
        args.extend(["--source", s]);
    }
    args.extend(["--all", "--format", "jsonl", "--no-record"]);
    let out = run_in(dir, &args);
    (code(&out), json_lines(&stdout(&out)), stderr(&out))
}

fn sources_of(results: &[serde_json::Value]) -> Vec<(String, String)> {
    results
        .iter()
        .map(|r| {
            (
                r["sessionId"].as_str().unwrap().to_owned(),
                r["source"].as_str().unwrap_or("(none)").to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_folder_of_rotated_cleo_logs_is_graded_not_refused_as_a_claude_code_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    rotated(&dir.path().join("logs"));
    let (code, results, err) = grade_jsonl(dir.path(), "cleo-v1", &["logs"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        sources_of(&results),
        [
            ("session-demo-good".into(), "logs/audit-1.jsonl".into()),
            ("session-demo-sloppy".into(), "logs/audit.jsonl".into()),
        ]
    );
    let schema = grade_schema();
    for r in &results {
        assert_valid_grade(&schema, r);
    }
}

#[test]
fn each_result_of_a_run_of_several_names_its_file_and_grades_as_the_file_alone_does() {
    let dir = tempfile::tempdir().unwrap();
    rotated(dir.path());
    let transcript = repo_root().join(TRANSCRIPT);
    std::fs::copy(&transcript, dir.path().join("t.jsonl")).unwrap();
    // Repeated, and a glob left unexpanded by the shell, give the same sessions.
    let (code, repeated, err) = grade_jsonl(dir.path(), "claude-code-v1", &["t.jsonl", "t.jsonl"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(repeated.len(), 1, "a file named twice is read once");
    let (code, alone, err) = grade_jsonl(dir.path(), "claude-code-v1", &["t.jsonl"]);
    assert_eq!(code, 0, "{err}");
    assert!(alone[0].get("source").is_none(), "one file: no `source`");
    let (code, globbed, err) = grade_jsonl(dir.path(), "cleo-v1", &["audit*.jsonl"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        sources_of(&globbed),
        [
            ("session-demo-good".into(), "audit-1.jsonl".into()),
            ("session-demo-sloppy".into(), "audit.jsonl".into()),
        ]
    );
    // Each session grades as it does read from its file alone, `source` apart.
    for (id, file) in sources_of(&globbed) {
        let (_, single, _) = grade_jsonl(dir.path(), "cleo-v1", &[&file]);
        let mut one = globbed
            .iter()
            .find(|r| r["sessionId"] == id.as_str())
            .unwrap()
            .clone();
        one.as_object_mut().unwrap().remove("source");
        one["timestamp"] = single[0]["timestamp"].clone();
        assert_eq!(one, single[0], "{id}");
    }
}

#[test]
fn a_session_id_in_two_files_is_an_error_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    rotated(dir.path());
    std::fs::copy(
        dir.path().join("audit.jsonl"),
        dir.path().join("copy.jsonl"),
    )
    .unwrap();
    let (code, results, err) = grade_jsonl(dir.path(), "cleo-v1", &["audit.jsonl", "copy.jsonl"]);
    assert_eq!(code, 2, "{err}");
    assert!(results.is_empty());
    assert_eq!(
        err.trim_end(),
        "error[E116]: session `session-demo-sloppy` is in both `audit.jsonl` and `copy.jsonl`: a run of several sources grades each session once (give one of the files, or `--source` each separately)"
    );
}

#[test]
fn a_file_found_in_a_folder_that_no_format_reads_is_skipped_with_a_warning_one_named_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    rotated(dir.path());
    std::fs::write(dir.path().join("notes.json"), "{\"a\": 1}\n").unwrap();
    std::fs::write(dir.path().join("readme.md"), "not a source\n").unwrap();
    let (code, results, err) = grade_jsonl(dir.path(), "cleo-v1", &["."]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(results.len(), 2);
    assert!(
        err.contains("notes.json: skipped: not a source grade can read"),
        "{err}"
    );
    assert!(
        !err.contains("readme.md"),
        "only files a format names are looked at: {err}"
    );
    let (code, _, err) = grade_jsonl(dir.path(), "cleo-v1", &["audit.jsonl", "notes.json"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`notes.json` is not a source grade can read"),
        "{err}"
    );
}

#[test]
fn a_glob_that_matches_nothing_and_standard_input_among_several_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    rotated(dir.path());
    let (code, _, err) = grade_jsonl(dir.path(), "cleo-v1", &["nothing-*.jsonl"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`nothing-*.jsonl` holds no source file (looked for a file or folder the pattern matches)"),
        "{err}"
    );
    let (code, _, err) = grade_jsonl(dir.path(), "cleo-v1", &["audit.jsonl", "-"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`--source -` is read on its own: give it as the only `--source`"),
        "{err}"
    );
}

#[test]
fn a_pack_refuses_a_file_of_a_format_it_does_not_grade_among_several() {
    let dir = tempfile::tempdir().unwrap();
    rotated(dir.path());
    std::fs::copy(repo_root().join(TRANSCRIPT), dir.path().join("t.jsonl")).unwrap();
    let (code, _, err) = grade_jsonl(dir.path(), "cleo-v1", &["."]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("t.jsonl` reads as a Claude Code transcript (`claude-code`), and rubric `cleo-v1` grades only"),
        "{err}"
    );
}
