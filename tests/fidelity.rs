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
    let (once, _) = grade_jsonl(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "session-demo-good",
    ]);
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

fn entry(session: &str, at: &str, domain: &str, operation: &str, params: Value) -> String {
    serde_json::json!({
        "timestamp": at, "sessionId": session, "domain": domain, "operation": operation,
        "params": params, "result": {"success": true, "exitCode": 0, "duration": 5},
        "metadata": {"source": "mcp", "gateway": "cleo_query"}
    })
    .to_string()
}

fn grade_lines(pack: &str, lines: &[String], sessions: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let log = log.display().to_string();
    let mut args = vec!["--rubric", pack, "--source", &log];
    args.extend_from_slice(sessions);
    grade_jsonl(&args).0
}

fn evidence(result: &Value, dimension: &str) -> Vec<String> {
    let mut texts: Vec<String> = result["dimensions"][dimension]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect();
    texts.extend(
        result["flags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_owned()),
    );
    texts
}

/// A deliberate difference (README, "Where grade differs from CLEO's grader"): V8 cannot
/// parse a comma fraction or a leap second, so CLEO compares NaN and calls the list late;
/// both are ISO-8601, and `grade` reads them as the instants they name.
#[test]
fn iso_timestamps_v8_cannot_parse_are_read_as_the_instants_they_name() {
    let lines = [
        entry(
            "comma",
            "2026-03-01T12:00:00,5Z",
            "session",
            "list",
            Value::Null,
        ),
        entry(
            "comma",
            "2026-03-01T12:00:00.600Z",
            "tasks",
            "find",
            Value::Null,
        ),
        entry(
            "leap",
            "2026-12-31T23:59:60Z",
            "session",
            "list",
            Value::Null,
        ),
        entry(
            "leap",
            "2027-01-01T00:00:00.000Z",
            "tasks",
            "find",
            Value::Null,
        ),
        entry(
            "leap-late",
            "2026-12-31T23:59:60.5Z",
            "session",
            "list",
            Value::Null,
        ),
        entry(
            "leap-late",
            "2027-01-01T00:00:00.400Z",
            "tasks",
            "find",
            Value::Null,
        ),
    ];
    for pack in ["cleo-v1", "cleo-v2"] {
        let results = grade_lines(pack, &lines, &["comma", "leap", "leap-late"]);
        for (result, before) in results.iter().zip([true, true, false]) {
            let texts = evidence(result, "sessionDiscipline");
            assert_eq!(
                texts.contains(&"session.list called before first task op".to_owned()),
                before,
                "{pack} {}: {texts:?}",
                result["sessionId"]
            );
        }
    }
}

/// A deliberate difference: CLEO's grader calls `.trim()` on a description and
/// `.toLowerCase()` on a title and throws on any other type, losing the whole grade.
/// `grade` grades them: a description is missing when it is falsy (0, false, null) or a
/// blank string, so any other number, array or object counts as given; a title is compared
/// as JavaScript's `String(title)` spells it (7 and "7" are the same title).
#[test]
fn descriptions_and_titles_that_are_not_strings_are_graded_as_javascript_values() {
    let add = |at: &str, params: Value| entry("s", at, "tasks", "add", params);
    let lines = [
        add(
            "2026-03-01T12:00:01Z",
            serde_json::json!({"title": 7, "description": 42}),
        ),
        add(
            "2026-03-01T12:00:02Z",
            serde_json::json!({"title": "7 ", "description": ["why"]}),
        ),
        add(
            "2026-03-01T12:00:03Z",
            serde_json::json!({"title": {"a": 1}, "description": {"a": 1}}),
        ),
        add(
            "2026-03-01T12:00:04Z",
            serde_json::json!({"title": "[object Object]", "description": 0}),
        ),
        add(
            "2026-03-01T12:00:05Z",
            serde_json::json!({"title": ["Fix", "it"], "description": false}),
        ),
        add(
            "2026-03-01T12:00:06Z",
            serde_json::json!({"title": "fix,it", "description": true}),
        ),
    ];
    for pack in ["cleo-v1", "cleo-v2"] {
        let result = &grade_lines(pack, &lines, &["s"])[0];
        let flags: Vec<&str> = result["flags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        let undescribed = flags
            .iter()
            .filter(|f| f.starts_with("tasks.add without description"))
            .count();
        assert_eq!(undescribed, 2, "{pack}: {flags:?}");
        assert!(
            evidence(result, "errorProtocol")
                .contains(&"3 potentially duplicate task create(s) detected".to_owned()),
            "{pack}: {result}"
        );
    }
}

fn with_role(line: String, role: Value) -> String {
    let mut v: Value = serde_json::from_str(&line).unwrap();
    v["metadata"]["role"] = role;
    v.to_string()
}

/// CLEO's newest grader takes the session's role from the first entry whose `metadata.role`
/// is a string (`typeof role === 'string'`): an empty role is still the role (not a lead),
/// and a number is no role at all, so a later `lead` decides.
#[test]
fn cleo_v2_role_is_the_first_metadata_role_that_is_a_string() {
    let session = |id: &str, first_role: Value| {
        vec![
            with_role(
                entry(id, "2026-03-01T12:00:01Z", "session", "list", Value::Null),
                first_role,
            ),
            with_role(
                entry(id, "2026-03-01T12:00:02Z", "tasks", "complete", Value::Null),
                Value::from("lead"),
            ),
        ]
    };
    let bypass = "lead-self-implementation-bypass";
    for (id, first_role, flagged) in [
        ("empty-then-lead", Value::from(""), false),
        ("number-then-lead", Value::from(5), true),
        ("zero-then-lead", Value::from(0), true),
        ("null-then-lead", Value::Null, true),
        ("true-then-lead", Value::from(true), true),
        ("worker-then-lead", Value::from("worker"), false),
        ("lead", Value::from("lead"), true),
    ] {
        let results = grade_lines("cleo-v2", &session(id, first_role), &[id]);
        let flags = results[0]["flags"].to_string();
        assert_eq!(flags.contains(bypass), flagged, "{id}: {flags}");
    }
}
