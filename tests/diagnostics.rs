//! Diagnostics with stable codes: `grade rubric explain`, codes in `validate`'s human and JSON
//! reports, and `allow` silencing a warning by its code.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use common::*;
use serde_json::Value;

/// A copy of the `suspicious` fixture pack (four warnings) with `extra` appended to its
/// `rubric.yaml`.
fn suspicious_with(extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let text = std::fs::read_to_string(fixture("packs/suspicious/rubric.yaml"))
        .expect("the suspicious pack");
    std::fs::write(dir.path().join("rubric.yaml"), format!("{text}{extra}"))
        .expect("rubric.yaml written");
    dir
}

fn codes_of(report: &Value) -> Vec<String> {
    report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| {
            p["code"]
                .as_str()
                .expect("every problem has a code")
                .to_owned()
        })
        .collect()
}

#[test]
fn explain_prints_what_a_code_means() {
    let out = run(&["rubric", "explain", "E012"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    insta::assert_snapshot!("explain_e012", stdout(&out));
    // By name, and in any case.
    let by_name = run(&["rubric", "explain", "unknown-selector"]);
    assert_eq!(stdout(&by_name), stdout(&out));
    let lower = run(&["rubric", "explain", "w103"]);
    assert!(
        stdout(&lower).starts_with("W103 no-outcome (warning)"),
        "{}",
        stdout(&lower)
    );
}

#[test]
fn explain_of_a_session_error_says_the_pack_stays_valid() {
    let out = run(&["rubric", "explain", "not-text"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(
            "E040 not-text (error): a session where a test of text meets a value that is not text, or a message prints one JavaScript cannot print\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with(
            "It is an error of one session, not of the pack: the pack stays valid, and the other\n\
             sessions of a run are graded.\n"
        ),
        "{text}"
    );
    assert!(!text.contains("makes the pack invalid"), "{text}");
}

#[test]
fn explain_without_a_code_lists_every_code() {
    let out = run(&["rubric", "explain"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 36, "{lines:?}");
    assert!(lines[0].starts_with("E001 yaml"), "{}", lines[0]);
    assert!(lines
        .iter()
        .any(|l| l.starts_with("W107 never-reaches-max")));
}

#[test]
fn explain_an_unknown_code_is_a_usage_error_with_close_matches() {
    let out = run(&["rubric", "explain", "E12"]);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "");
    insta::assert_snapshot!("explain_unknown_code", stderr(&out));
    let far = run(&["rubric", "explain", "nothing-like-it"]);
    assert_eq!(code(&far), 2);
    assert!(
        stderr(&far).contains("`grade rubric explain` lists every code"),
        "{}",
        stderr(&far)
    );
}

#[test]
fn validate_json_carries_each_problems_code() {
    let out = run(&[
        "rubric",
        "validate",
        "tests/fixtures/packs/broken-references",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 1);
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(
        codes_of(&report),
        ["E015", "E012", "E012", "E022", "E022", "E022", "E022", "E019", "E013", "E020"]
    );
    let warnings = run(&[
        "rubric",
        "validate",
        "tests/fixtures/packs/suspicious",
        "--format",
        "json",
    ]);
    let report: Value = serde_json::from_str(&stdout(&warnings)).expect("JSON");
    assert_eq!(codes_of(&report), ["W106", "W102", "W104", "W107"]);
}

#[test]
fn allow_silences_a_warning_by_its_code() {
    let pack = suspicious_with("allow: [W104, w107]\n");
    let out = run(&[
        "rubric",
        "validate",
        pack.path().to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(codes_of(&report), ["W106", "W102"]);
    assert_eq!(report["warnings"], 2);
}

#[test]
fn allow_refuses_errors_and_unknown_codes() {
    let pack = suspicious_with("allow: [E012, W130, W999]\n");
    let out = run(&["rubric", "validate", pack.path().to_str().expect("utf-8")]);
    assert_eq!(code(&out), 1);
    let text = stdout(&out).replace(pack.path().to_str().expect("utf-8"), "PACK");
    insta::assert_snapshot!("allow_refuses_errors_and_unknown_codes", text);
}

/// An empty `rubric.yaml` (or one of comments only) said "missing field `id`", sending its
/// author after one key: it is its own problem, naming what a pack needs.
#[test]
fn an_empty_manifest_is_named_empty_not_missing_its_id() {
    for text in ["", "# a pack to come\n\n---\n"] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("rubric.yaml"), text).unwrap();
        let out = run(&[
            "rubric",
            "validate",
            dir.path().to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(code(&out), 1, "{}", stderr(&out));
        let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(codes_of(&report), ["E006"], "{text:?}");
        let message = report["problems"][0]["message"].as_str().unwrap();
        assert!(
            message.starts_with("`rubric.yaml` is empty: a pack needs at least `id`, `version`, `name` and `dimensions`"),
            "{message}"
        );
    }
}

/// Every code of the registry has a fixture under `tests/fixtures/codes/<CODE>/` that raises
/// it, and a snapshot of what the user reads there, as ruff keeps one per rule: a new code
/// comes with both, and a changed message is seen in review. A fixture with a
/// `session.jsonl` raises its code while grading that session (E040 and the session errors
/// after it); the others when the pack is validated. A folder no code owns is an error too.
#[test]
fn every_code_has_a_fixture_that_raises_it() {
    let root = fixture("codes");
    let ids: Vec<&str> = grade_engine::pack::codes::ALL
        .iter()
        .map(|c| c.info().id)
        .collect();
    let mut folders: Vec<String> = std::fs::read_dir(&root)
        .expect("tests/fixtures/codes")
        .map(|e| e.expect("a folder entry"))
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let owned: Vec<&String> = folders
        .iter()
        .filter(|f| !ids.contains(&f.as_str()))
        .collect();
    assert!(owned.is_empty(), "fixtures of no code: {owned:?}");
    for id in ids {
        let rel = format!("tests/fixtures/codes/{id}");
        assert!(root.join(id).is_dir(), "{id} has no fixture folder `{rel}`");
        let session = format!("{rel}/session.jsonl");
        let (out, seen) = if repo_root().join(&session).is_file() {
            let out = run(&[
                "--rubric",
                &rel,
                "--source",
                &session,
                "--all",
                "--no-record",
            ]);
            assert_eq!(code(&out), 1, "{id}: a session not graded fails the run");
            let seen = stderr(&out);
            (out, seen)
        } else {
            let json = run(&["rubric", "validate", &rel, "--format", "json"]);
            let codes = match serde_json::from_str::<Value>(&stdout(&json)) {
                Ok(report) => codes_of(&report),
                // A folder that is no pack is refused before it is validated.
                Err(_) => vec![],
            };
            let out = run(&["rubric", "validate", &rel]);
            let text = format!("{}{}", stdout(&out), stderr(&out));
            assert!(
                codes.iter().any(|c| c == id) || text.contains(&format!("[{id}]")),
                "{id} is not raised by its fixture: {codes:?}\n{text}"
            );
            (out, text)
        };
        // An error refuses the pack or fails the run; a warning lets it work.
        assert_eq!(
            code(&out) != 0,
            id.starts_with('E'),
            "{id}: exit {}",
            code(&out)
        );
        assert!(seen.contains(id), "{id} is not shown to the user:\n{seen}");
        insta::assert_snapshot!(format!("code_{id}"), seen);
    }
}
