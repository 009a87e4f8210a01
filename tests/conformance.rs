//! The shipped CLEO packs against what CLEO's own grader gives, session for session and
//! string for string (the corpus is a copy of `../shared/conformance`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use common::*;
use serde_json::Value;

fn corpus(file: &str) -> std::path::PathBuf {
    fixture(&format!("conformance/{file}"))
}

fn session_ids() -> Vec<String> {
    std::fs::read_to_string(corpus("sessions.txt"))
        .expect("sessions.txt exists")
        .lines()
        .map(str::to_owned)
        .filter(|l| !l.is_empty())
        .collect()
}

fn expected(file: &str) -> Vec<Value> {
    json_lines(&std::fs::read_to_string(corpus(file)).expect("expected file exists"))
}

fn grade_corpus(pack: &str, source: &std::path::Path) -> Vec<Value> {
    let out = grade_sessions(pack, source, &session_ids());
    assert_eq!(code(&out), 0, "grade failed: {}", stderr(&out));
    json_lines(&stdout(&out))
}

/// `grade` of the sessions `ids` of `source` as the reference's check runs it.
fn grade_sessions(pack: &str, source: &std::path::Path, ids: &[String]) -> std::process::Output {
    let source = source.to_str().expect("utf-8 path");
    let mut args = vec![
        "--rubric",
        pack,
        "--source",
        source,
        "--format",
        "jsonl",
        "--no-record",
        // The corpus names sessions without entries on purpose: CLEO grades them zero.
        "--allow-empty",
    ];
    args.extend(ids.iter().map(String::as_str));
    run(&args)
}

fn assert_conforms(pack: &str, source: &std::path::Path, expected_file: &str) {
    let actual = grade_corpus(pack, source);
    let expected = expected(expected_file);
    assert_eq!(expected.len(), 301);
    let problems = compare_with_expected(&expected, &actual);
    assert!(
        problems.is_empty(),
        "{} of 301 sessions differ from CLEO's grader, first ones:\n{}",
        problems.len(),
        problems
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    let schema = grade_schema();
    for r in &actual {
        assert_valid_grade(&schema, r);
    }
}

#[test]
fn cleo_v1_matches_the_reference_grader_on_every_corpus_session() {
    assert_conforms("cleo-v1", &corpus("audit.jsonl"), "cleo-v1.expected.jsonl");
}

#[test]
fn cleo_v2_matches_the_reference_grader_on_every_corpus_session() {
    assert_conforms("cleo-v2", &corpus("audit.jsonl"), "cleo-v2.expected.jsonl");
}

#[test]
fn cleo_v1_from_a_cleo_database_matches_the_reference_database_results() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("tasks.db");
    write_cleo_db(&corpus("audit.jsonl"), &db);
    assert_conforms("cleo-v1", &db, "cleo-v1.sqlite.expected.jsonl");
}

#[test]
fn a_database_is_read_from_the_default_place_without_source() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join(".cleo")).expect("mkdir");
    write_cleo_db(&corpus("audit.jsonl"), &dir.path().join(".cleo/tasks.db"));
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--format",
            "jsonl",
            "--no-record",
            "session-7-00001",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let results = json_lines(&stdout(&out));
    let expected: Vec<Value> = expected("cleo-v1.sqlite.expected.jsonl")
        .into_iter()
        .filter(|r| r["sessionId"] == "session-7-00001")
        .collect();
    assert_eq!(
        compare_with_expected(&expected, &results),
        Vec::<String>::new()
    );
}

/// Both packs on sessions full of odd values, against CLEO's grader run unchanged on the
/// same log (`tests/fixtures/odd-sessions`): the sessions it grades match it, and the ones it
/// throws on are each reported not graded (E040), with no result, while the rest are graded.
#[test]
fn cleo_packs_match_cleo_grader_on_odd_sessions_and_refuse_the_ones_it_throws_on() {
    let dir = fixture("odd-sessions");
    let ids: Vec<String> = std::fs::read_to_string(dir.join("sessions.txt"))
        .expect("sessions.txt exists")
        .lines()
        .map(str::to_owned)
        .collect();
    let log = dir.join("audit.jsonl");
    for pack in ["cleo-v1", "cleo-v2"] {
        let expected = json_lines(
            &std::fs::read_to_string(dir.join(format!("{pack}.expected.jsonl")))
                .expect("expected file exists"),
        );
        assert_eq!(expected.len(), ids.len());
        let (throws, graded): (Vec<Value>, Vec<Value>) = expected
            .into_iter()
            .partition(|r| r.get("throws").is_some());
        assert!(!throws.is_empty() && graded.len() > 150);
        let out = grade_sessions(pack, &log, &ids);
        assert_eq!(code(&out), 1, "{}", stderr(&out));
        let actual = json_lines(&stdout(&out));
        assert_eq!(actual.len(), graded.len());
        assert_eq!(
            compare_with_expected(&graded, &actual),
            Vec::<String>::new()
        );
        let errors = stderr(&out);
        let refused: Vec<&str> = errors
            .lines()
            .filter(|l| l.starts_with("error[E040]: "))
            .filter_map(|l| l.split("cannot grade session `").nth(1))
            .filter_map(|rest| rest.split('`').next())
            .collect();
        let thrown: Vec<&str> = throws
            .iter()
            .filter_map(|r| r["sessionId"].as_str())
            .collect();
        assert_eq!(refused, thrown, "{pack}");
    }
}
