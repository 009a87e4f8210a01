//! Boundary cases where CLEO's own grader, run side by side, is the reference: the same
//! session named twice, numbers in texts, and `cleo-v2`'s lead role.

mod common;

use common::*;
use serde_json::Value;

const EXAMPLE: &str = "examples/cleo-audit.jsonl";

fn grade_jsonl(args: &[&str]) -> (Vec<Value>, String) {
    let mut all = vec!["--no-record", "--format", "jsonl"];
    all.extend_from_slice(args);
    let out = run(&all);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    (json_lines(&stdout(&out)), stderr(&out))
}

/// Drops the run's clock, so two results of one session compare equal.
fn without_timestamp(mut v: Value) -> Value {
    v.as_object_mut().map(|o| o.remove("timestamp"));
    v
}

#[test]
fn a_session_named_twice_gets_its_grade_each_time() {
    let (once, _) = grade_jsonl(&["--rubric", "cleo-v1", "--source", EXAMPLE, "session-demo-good"]);
    let (results, warnings) = grade_jsonl(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "session-demo-good",
        "session-demo-sloppy",
        "session-demo-good",
    ]);
    assert_eq!(results.len(), 3);
    let good = without_timestamp(once[0].clone());
    assert_eq!(without_timestamp(results[0].clone()), good);
    assert_eq!(without_timestamp(results[2].clone()), good);
    assert_eq!(results[1]["sessionId"], "session-demo-sloppy");
    assert!(!warnings.contains("no entries"), "{warnings}");
}

#[test]
fn a_session_named_twice_gets_its_grade_each_time_from_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    write_cleo_db(&repo_root().join(EXAMPLE), &db);
    let db = db.display().to_string();
    let (results, warnings) = grade_jsonl(&[
        "--rubric",
        "cleo-v2",
        "--source",
        &db,
        "session-demo-sloppy",
        "session-demo-sloppy",
    ]);
    assert_eq!(results.len(), 2);
    assert_eq!(
        without_timestamp(results[0].clone()),
        without_timestamp(results[1].clone())
    );
    assert!(results[1]["entryCount"].as_u64() > Some(0));
    assert!(!warnings.contains("no entries"), "{warnings}");
}
