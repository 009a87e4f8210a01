//! Boundary cases where CLEO's own grader, run side by side, is the reference: the same
//! session named twice, numbers in texts, and `cleo-v2`'s lead role.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

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

fn add_line(session: &str, at: &str, success: bool, params: Value) -> String {
    serde_json::json!({
        "timestamp": at, "sessionId": session, "domain": "tasks", "operation": "add",
        "params": params, "result": {"success": success, "exitCode": if success { 0 } else { 6 }, "duration": 5},
        "metadata": {"source": "mcp", "gateway": "cleo_query"}
    })
    .to_string()
}

/// CLEO's grader calls `.trim()` on a successful `tasks.add`'s description and
/// `.toLowerCase()` on its title, and throws a `TypeError` on any other kind of value, so the
/// session gets no grade: `grade` gives none either, names the entry, field and value, and
/// grades the other sessions (exit 1). Entries CLEO does not read there (a failed add, another
/// operation) are not read either.
#[test]
fn a_description_or_title_that_is_not_text_leaves_the_session_not_graded_naming_the_entry() {
    let lines = [
        add_line(
            "ok",
            "2026-03-01T12:00:01Z",
            true,
            serde_json::json!({"title": "x", "description": "d"}),
        ),
        add_line(
            "desc",
            "2026-03-01T12:00:02Z",
            true,
            serde_json::json!({"title": "x", "description": 7}),
        ),
        add_line(
            "title",
            "2026-03-01T12:00:03Z",
            true,
            serde_json::json!({"title": 3, "description": "d"}),
        ),
        add_line(
            "unread",
            "2026-03-01T12:00:04Z",
            false,
            serde_json::json!({"title": 3, "description": true}),
        ),
        entry(
            "unread",
            "2026-03-01T12:00:05Z",
            "tasks",
            "find",
            serde_json::json!({"title": [], "description": {"a": 1}}),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let log = log.display().to_string();
    for pack in ["cleo-v1", "cleo-v2"] {
        let expected = format!(
            "error[E040]: rubric `{pack}` cannot grade session `desc`: `blank` of selector `task_added_without_description` tests text, and `params.description` of the entry at `audit.jsonl:2` is a number (`7`)\n\
             error[E040]: rubric `{pack}` cannot grade session `title`: `normalize` of metric `duplicate_titles` reads text, and `params.title` of the entry at `audit.jsonl:3` is a number (`3`)\n"
        );
        let named = run(&[
            "--rubric",
            pack,
            "--source",
            &log,
            "--no-record",
            "--format",
            "jsonl",
            "ok",
            "desc",
            "title",
            "unread",
        ]);
        assert_eq!(code(&named), 1, "{pack}: {}", stderr(&named));
        assert_eq!(
            stderr(&named),
            format!("{expected}error[E202]: 2 of 4 sessions could not be graded\n"),
            "{pack}"
        );
        let graded: Vec<Value> = json_lines(&stdout(&named))
            .into_iter()
            .map(|r| r["sessionId"].clone())
            .collect();
        assert_eq!(graded, ["ok", "unread"], "{pack}");
        // Every way of grading a whole log says the same.
        for format in ["jsonl", "json", "human"] {
            let all = run(&[
                "--rubric",
                pack,
                "--source",
                &log,
                "--no-record",
                "--format",
                format,
                "--all",
            ]);
            assert_eq!(code(&all), 1, "{pack} {format}: {}", stderr(&all));
            let err = stderr(&all);
            assert!(
                err.starts_with(&expected) && err.contains("2 of 4 sessions could not be graded"),
                "{pack} {format}: {err}"
            );
            assert!(stdout(&all).contains("unread"), "{pack} {format}");
            assert!(!stdout(&all).contains("\"desc\""), "{pack} {format}");
        }
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

/// A deliberate difference (README, "Where grade differs from CLEO's grader"): CLEO's grader
/// reads `result.success` by JavaScript truthiness (`"false"` is a success); `grade` refuses
/// a line whose `success` is not a boolean, naming it, rather than guess.
#[test]
fn a_success_that_is_not_a_boolean_is_refused_where_cleo_reads_its_truthiness() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    for (success, kind) in [("1", "1"), ("\"false\"", "a string"), ("null", "null")] {
        let good = entry("s", "2026-03-01T12:00:00Z", "session", "list", Value::Null);
        let odd = good.replacen("\"success\":true", &format!("\"success\":{success}"), 1);
        std::fs::write(&log, format!("{good}\n{odd}\n")).unwrap();
        let log = log.display().to_string();
        for pack in ["cleo-v1", "cleo-v2"] {
            let out = run(&["--rubric", pack, "--source", &log, "--no-record", "s"]);
            assert_eq!(code(&out), 2, "{}", stderr(&out));
            assert_eq!(stdout(&out), "");
            let field = format!("\"success\":{success}");
            // serde names the column just past the value.
            let column = odd.find(&field).unwrap() + field.len() + 1;
            assert_eq!(
                stderr(&out),
                format!("error[E104]: {log}:2: field `result.success` must be a boolean, not {kind} (column {column}) (pass `--skip-bad-lines` to skip malformed lines with a warning)\n"),
            );
        }
    }
}

/// Where `task_id` and `success` have no type (so SQLite keeps `7` an integer and `1.0` a
/// real), CLEO's reader hands its grader the number 7 and `1.0 === 1`, a success: its flag
/// names `taskId: 7`. `grade` refused the row (`task_id` is the integer `7`, not text).
#[test]
fn a_database_number_in_task_id_or_success_is_read_as_cleos_reader_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TABLE audit_log (id text PRIMARY KEY, timestamp text NOT NULL, \
             action text NOT NULL, task_id NOT NULL, actor text, details_json text, \
             before_json text, after_json text, domain text, operation text, session_id text, \
             request_id text, duration_ms integer, success, source text, gateway text, \
             error_message text); \
             INSERT INTO audit_log (id, timestamp, action, task_id, details_json, domain, \
             operation, session_id, success, source) VALUES ('r1', '2026-03-01T12:00:00.000Z', \
             'add', 7, '{\"title\":\"a\"}', 'tasks', 'add', 's', 1.0, 'mcp')",
        )
        .unwrap();
    let db = db.display().to_string();
    for pack in ["cleo-v1", "cleo-v2"] {
        let (results, warnings) = grade_jsonl(&["--rubric", pack, "--source", &db, "s"]);
        assert_eq!(warnings, "", "{pack}");
        let flags = results[0]["flags"].to_string();
        assert!(
            flags.contains("\"tasks.add without description (taskId: 7)\""),
            "{pack}: {flags}"
        );
    }
}

/// CLEO's reader orders a session's rows by the text of `timestamp`, `grade` by instant: the
/// example's `session-demo-sloppy` mixes spellings, so the two orders differ, and the run
/// said nothing of it. It now says so once, whole or streamed; its grade is unchanged.
#[test]
fn a_database_session_out_of_timestamp_text_order_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    write_cleo_db(&repo_root().join(EXAMPLE), &db);
    let db = db.display().to_string();
    let warning = format!(
        "warning: {db}: session `session-demo-sloppy`: its rows are graded in order of instant \
         (`2026-03-01T11:00:13.000+02:00` before `2026-03-01 09:00:25`), but CLEO's reader \
         orders them by the text of `timestamp`, so CLEO's own grade of it may differ\n"
    );
    let (log, _) = grade_jsonl(&["--rubric", "cleo-v1", "--source", EXAMPLE, "--all"]);
    for sessions in [
        vec!["--all"],
        vec!["session-demo-sloppy", "session-demo-good"],
    ] {
        let mut args = vec!["--rubric", "cleo-v1", "--source", &db];
        args.extend_from_slice(&sessions);
        let (results, warnings) = grade_jsonl(&args);
        assert_eq!(warnings, warning, "{sessions:?}");
        let sloppy = results
            .iter()
            .find(|r| r["sessionId"] == "session-demo-sloppy")
            .unwrap();
        let from_log = log
            .iter()
            .find(|r| r["sessionId"] == "session-demo-sloppy")
            .unwrap();
        assert_eq!(
            without_timestamp(sloppy.clone())["totalScore"],
            without_timestamp(from_log.clone())["totalScore"]
        );
    }
    let (_, warnings) = grade_jsonl(&["--rubric", "cleo-v1", "--source", &db, "session-demo-good"]);
    assert_eq!(warnings, "");
}
