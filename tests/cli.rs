//! The `grade` binary as users and scripts call it: output formats, recording, listing,
//! and a clear one-line error with exit 2 for every kind of bad input.
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

/// Output with the run's own clock and temporary paths made stable for snapshots.
fn stable(text: &str, tmp: Option<&std::path::Path>) -> String {
    let mut text = text.to_owned();
    if let Some(tmp) = tmp {
        text = text.replace(&tmp.display().to_string(), "[TMP]");
    }
    let re_free = text
        .split('\n')
        .map(|line| match line.find("graded 20") {
            Some(at) => format!("{}graded [TIMESTAMP]", &line[..at]),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    re_free
}

#[test]
fn human_report_shows_score_letter_dimensions_evidence_and_flags() {
    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--no-record",
        "session-demo-good",
        "session-demo-sloppy",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    insta::assert_snapshot!("human_report", stable(&stdout(&out), None));
}

/// Issue 48, friction 5: without `--explain`, a dimension that lost points showed no reason
/// under it; its flags came all together at the end. Each flag now shows under the
/// dimension whose rules raised it (as `--explain`'s JSON attributes it), once; only the
/// flags of no dimension (a session with no entries) keep a list at the end.
#[test]
fn each_flag_shows_under_the_dimension_that_raised_it_and_not_again_at_the_end() {
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "--rubric",
            "cleo-v1",
            "--source",
            EXAMPLE,
            "--no-record",
            "--color",
            "never",
        ];
        a.extend_from_slice(extra);
        a
    };
    let out = run(&args(&["session-demo-sloppy"]));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let human = stdout(&out);
    let explained = run(&args(&[
        "--explain",
        "--format",
        "json",
        "session-demo-sloppy",
    ]));
    let json: Value = serde_json::from_str(&stdout(&explained)).expect("json");
    let pack_names = [
        ("sessionDiscipline", "Session discipline"),
        ("discoveryEfficiency", "Discovery efficiency"),
        ("taskHygiene", "Task hygiene"),
        ("errorProtocol", "Error protocol"),
        ("disclosureUse", "Progressive disclosure use"),
    ];
    // Each dimension's block: from its heading to the blank line after it.
    let block = |name: &str| -> Vec<String> {
        let lines: Vec<&str> = human.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no `{name}` in\n{human}"));
        lines[at + 1..]
            .iter()
            .take_while(|l| !l.is_empty())
            .filter_map(|l| l.trim_start().strip_prefix("! "))
            .map(str::to_owned)
            .collect()
    };
    let mut shown = 0;
    for (id, name) in pack_names {
        let raised: Vec<String> = json["explain"][id]
            .as_array()
            .unwrap_or_else(|| panic!("no trace of `{id}`"))
            .iter()
            .flat_map(|t| t["flags"].as_array().cloned().unwrap_or_default())
            .map(|f| f.as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(block(name), raised, "flags under `{name}`:\n{human}");
        let d = &json["dimensions"][id];
        if d["score"].as_f64() < d["max"].as_f64() {
            assert!(
                !raised.is_empty() || !d["evidence"].as_array().is_some_and(Vec::is_empty),
                "`{name}` lost points with no reason under it:\n{human}"
            );
        }
        shown += raised.len();
    }
    assert_eq!(shown, json["flags"].as_array().map_or(0, Vec::len));
    assert!(
        !human.contains("Flags ("),
        "flags repeated at the end:\n{human}"
    );

    // A flag of no dimension is the session's own, listed after the dimensions.
    let out = run(&args(&["--allow-empty", "nobody"]));
    let human = stdout(&out);
    assert!(
        human.ends_with(
            "  Flags (1)\n    ! No audit entries found for session (use --grade flag when starting session)\n"
        ),
        "{human}"
    );
}

#[test]
fn explain_names_the_rule_points_and_entries_in_human_and_json() {
    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--no-record",
        "--explain",
        "session-demo-sloppy",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    insta::assert_snapshot!("human_explain", stable(&stdout(&out), None));

    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--no-record",
        "--explain",
        "--format",
        "json",
        "session-demo-sloppy",
    ]);
    let result: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_valid_grade(&grade_schema(), &result);
    let traces = result["explain"]["errorProtocol"]
        .as_array()
        .expect("errorProtocol traces");
    let recovery = traces
        .iter()
        .find(|t| t["rule"] == "not-found-recovery")
        .expect("rule traced");
    assert_eq!(recovery["points"], -10);
    let ops: Vec<&str> = recovery["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["operation"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["tasks.show", "tasks.update"]);
}

#[test]
fn json_prints_one_object_for_one_session_and_an_array_for_several() {
    let one = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--no-record",
        "--format",
        "json",
        "session-demo-good",
    ]);
    let one: Value = serde_json::from_str(&stdout(&one)).expect("json");
    assert_eq!(one["sessionId"], "session-demo-good");
    assert_eq!(one["totalScore"], 100);
    assert_eq!(one["grade"], "A");
    assert_eq!(one["percent"], 100.0);
    assert_eq!(one["evaluator"], "auto");
    assert_eq!(one["rubric"]["id"], "cleo-v1");

    let two = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--no-record",
        "--format",
        "json",
        "session-demo-sloppy",
        "session-demo-good",
    ]);
    let two: Value = serde_json::from_str(&stdout(&two)).expect("json");
    let ids: Vec<&str> = two
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["session-demo-sloppy", "session-demo-good"]);
    let schema = grade_schema();
    for r in two.as_array().unwrap() {
        assert_valid_grade(&schema, r);
    }
}

#[test]
fn jsonl_keeps_the_order_asked_and_all_grades_every_session() {
    let out = run(&[
        "--rubric",
        "cleo-v2",
        "--source",
        EXAMPLE,
        "--no-record",
        "--format",
        "jsonl",
        "session-demo-sloppy",
        "session-demo-good",
    ]);
    let ids: Vec<String> = json_lines(&stdout(&out))
        .iter()
        .map(|r| r["sessionId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["session-demo-sloppy", "session-demo-good"]);

    let all = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--no-record",
        "--format",
        "jsonl",
        "--all",
    ]);
    let ids: Vec<String> = json_lines(&stdout(&all))
        .iter()
        .map(|r| r["sessionId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        ids,
        ["session-demo-good", "session-demo-sloppy"],
        "order of first appearance"
    );
}

/// Many named sessions are read as `--all` reads the log (streamed, filtered) and graded as
/// they are read whole: the results must be those of `--all`, in the order asked, a session
/// named twice graded twice, one without entries given the empty-session grade (and warned
/// of once), and a typo still refused by name.
#[test]
fn many_named_sessions_grade_as_all_does_in_the_order_asked() {
    let log = fixture("conformance/audit.jsonl");
    let log = log.to_str().unwrap();
    let grade = |extra: &[&str]| {
        let mut args = vec!["--rubric", "cleo-v1", "--source", log, "--no-record"];
        args.extend(["--format", "jsonl"]);
        args.extend(extra);
        run(&args)
    };
    let all = grade(&["--all"]);
    assert_eq!(code(&all), 0, "{}", stderr(&all));
    let key = |r: &Value| {
        let mut r = r.clone();
        r["timestamp"] = Value::Null;
        r.to_string()
    };
    let by_id: std::collections::HashMap<String, String> = json_lines(&stdout(&all))
        .iter()
        .map(|r| (r["sessionId"].as_str().unwrap().to_owned(), key(r)))
        .collect();
    assert!(by_id.len() >= 200, "{}", by_id.len());
    // Every session but the first, last first; the second again; one the log does not hold.
    let mut ids: Vec<&str> = by_id.keys().map(String::as_str).collect();
    ids.sort_unstable();
    let mut asked: Vec<&str> = ids[1..].iter().rev().copied().collect();
    asked.push(ids[1]);
    asked.push("nobody");
    let mut args = vec!["--allow-empty"];
    args.extend(&asked);
    let named = grade(&args);
    assert_eq!(code(&named), 0, "{}", stderr(&named));
    let results = json_lines(&stdout(&named));
    assert_eq!(results.len(), asked.len());
    for (id, result) in asked.iter().zip(&results) {
        assert_eq!(result["sessionId"], *id);
        if *id != "nobody" {
            assert_eq!(key(result), by_id[*id], "{id}");
        }
    }
    assert_eq!(results.last().unwrap()["entryCount"], 0);
    let warned = stderr(&named);
    assert_eq!(
        warned.matches("session `nobody` has no entries").count(),
        1,
        "{warned}"
    );
    // Without `--allow-empty`, the typo is refused, with the ids the log does hold.
    let refused = grade(&asked);
    assert_eq!(code(&refused), 2, "{}", stderr(&refused));
    assert!(stderr(&refused).contains("session `nobody` has no entries"));
    assert!(stdout(&refused).is_empty());
}

/// 100 or more named sessions are rendered on the threads that grade them, fewer after the
/// whole read: the same sessions must print the same either way. Asked in two halves (each
/// under the streamed path's 100), the reports (with `--explain`) and the JSON lines are
/// those of one run asking all of them, the blank lines between reports and the time each
/// was graded aside.
#[test]
fn many_named_sessions_render_as_few_named_sessions_do() {
    let log = fixture("conformance/audit.jsonl");
    let log = log.to_str().unwrap();
    let asked: Vec<String> = std::fs::read_to_string(fixture("conformance/sessions.txt"))
        .unwrap()
        .lines()
        .take(120)
        .map(str::to_owned)
        .collect();
    assert_eq!(asked.len(), 120);
    let grade = |format: &str, names: &[String]| {
        let mut args = vec!["--rubric", "cleo-v1", "--source", log, "--no-record"];
        args.extend(["--allow-empty", "--explain", "--format", format]);
        args.extend(names.iter().map(String::as_str));
        let out = run(&args);
        assert_eq!(code(&out), 0, "{format}: {}", stderr(&out));
        out
    };
    // The time each result was graded, and the blank lines that part one report from the next.
    let kept = |format: &str, text: &str| -> Vec<String> {
        if format == "jsonl" {
            return json_lines(text)
                .into_iter()
                .map(|mut r| {
                    r["timestamp"] = Value::Null;
                    r.to_string()
                })
                .collect();
        }
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split(" · graded ").next().unwrap_or(l).to_owned())
            .collect()
    };
    for format in ["human", "jsonl"] {
        let whole = stdout(&grade(format, &asked));
        let (first, second) = asked.split_at(60);
        let mut halves = stdout(&grade(format, first));
        halves.push_str(&stdout(&grade(format, second)));
        let (whole, halves) = (kept(format, &whole), kept(format, &halves));
        assert_eq!(whole.len(), halves.len(), "{format}");
        for (w, h) in whole.iter().zip(&halves) {
            assert_eq!(w, h, "{format}");
        }
    }
}

#[test]
fn a_session_without_entries_gets_the_zero_result_and_a_warning_with_allow_empty() {
    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--no-record",
        "--allow-empty",
        "--format",
        "json",
        "nobody",
    ]);
    assert_eq!(code(&out), 0);
    assert!(
        stderr(&out).contains("warning: session `nobody` has no entries"),
        "{}",
        stderr(&out)
    );
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(r["totalScore"], 0);
    assert_eq!(r["entryCount"], 0);
    assert_eq!(r["grade"], "F");
    assert_eq!(
        r["flags"],
        serde_json::json!([
            "No audit entries found for session (use --grade flag when starting session)"
        ])
    );
    assert_valid_grade(&grade_schema(), &r);
}

#[test]
fn grades_are_appended_as_whole_lines_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(repo_root().join(EXAMPLE), dir.path().join("audit.jsonl")).unwrap();
    for _ in 0..2 {
        let out = run_in(
            dir.path(),
            &[
                "--rubric",
                "cleo-v1",
                "--source",
                "audit.jsonl",
                "--format",
                "jsonl",
                "session-demo-good",
                "session-demo-sloppy",
            ],
        );
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let recorded = std::fs::read_to_string(dir.path().join(".cleo/metrics/GRADES.jsonl"))
        .expect("default grades file");
    assert!(recorded.ends_with('\n'));
    let lines = json_lines(&recorded);
    assert_eq!(lines.len(), 4);
    let schema = grade_schema();
    for l in &lines {
        assert_valid_grade(&schema, l);
        assert!(l.get("explain").is_none());
    }

    let listed = run_in(
        dir.path(),
        &[
            "--list",
            "--format",
            "json",
            "--session",
            "session-demo-good",
        ],
    );
    assert_eq!(code(&listed), 0, "{}", stderr(&listed));
    let listed: Value = serde_json::from_str(&stdout(&listed)).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2);

    let table = run_in(dir.path(), &["--list"]);
    let text = stdout(&table);
    assert!(text.starts_with("SESSION"), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("session-demo-sloppy"))
            .count(),
        2
    );
    let sloppy: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with("session-demo-sloppy"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        &sloppy[..5],
        ["session-demo-sloppy", "cleo-v1", "1.0.0", "20/100", "20%"]
    );

    let custom = dir.path().join("elsewhere/grades.jsonl");
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            "audit.jsonl",
            "--grades",
            custom.to_str().unwrap(),
            "--format",
            "jsonl",
            "session-demo-good",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        json_lines(&std::fs::read_to_string(&custom).unwrap()).len(),
        1
    );
}

#[test]
fn a_pack_folder_grades_like_the_shipped_pack_with_its_own_digest() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("my-pack");
    std::fs::create_dir(&pack).unwrap();
    let yaml = std::fs::read_to_string(repo_root().join("rubrics/cleo-v1/rubric.yaml")).unwrap();
    std::fs::write(
        pack.join("rubric.yaml"),
        yaml.replace("id: cleo-v1", "id: my-pack"),
    )
    .unwrap();
    let source = repo_root().join(EXAMPLE);
    let args = |rubric: &str| -> Value {
        let out = run(&[
            "--rubric",
            rubric,
            "--source",
            source.to_str().unwrap(),
            "--no-record",
            "--format",
            "json",
            "session-demo-sloppy",
        ]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        serde_json::from_str(&stdout(&out)).unwrap()
    };
    let shipped = args("cleo-v1");
    let mine = args(pack.to_str().unwrap());
    assert_eq!(mine["rubric"]["id"], "my-pack");
    assert_ne!(mine["rubric"]["digest"], shipped["rubric"]["digest"]);
    assert_eq!(mine["dimensions"], shipped["dimensions"]);
    assert_eq!(mine["flags"], shipped["flags"]);
}

#[test]
fn rubric_list_and_show_describe_the_shipped_packs() {
    let out = run(&["rubric", "list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("cleo-v1") && text.contains("cleo-v2"),
        "{text}"
    );
    let show = run(&["rubric", "show", "cleo-v1"]);
    assert_eq!(code(&show), 0);
    let digest_free: String = stdout(&show)
        .lines()
        .filter(|l| !l.starts_with("digest "))
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("rubric_show_cleo_v1", digest_free);
}

/// Every bad input: one line on stderr that names the place, exit 2, nothing on stdout and
/// nothing recorded.
#[test]
fn bad_input_gets_a_one_line_error_naming_the_place_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let good = r#"{"timestamp":"2026-03-01T09:00:00Z","sessionId":"s1","domain":"session","operation":"list","params":{},"result":{"success":true,"exitCode":0,"duration":1},"metadata":{"source":"mcp"}}"#;
    std::fs::write(
        p.join("malformed.jsonl"),
        format!("{good}\n{good}\n{{\"timestamp\": oops}}\n"),
    )
    .unwrap();
    std::fs::write(
        p.join("missing.jsonl"),
        format!("{good}\n{}\n", good.replace(r#""sessionId":"s1","#, "")),
    )
    .unwrap();
    std::fs::write(
        p.join("time.jsonl"),
        format!(
            "{}\n",
            good.replace("2026-03-01T09:00:00Z", "yesterday at noon")
        ),
    )
    .unwrap();
    std::fs::write(p.join("neither.bin"), b"\x89PNG\r\n\x1a\nnot an audit log").unwrap();
    let other = rusqlite::Connection::open(p.join("other.db")).unwrap();
    other
        .execute_batch("CREATE TABLE notes (id integer);")
        .unwrap();
    drop(other);
    let old = rusqlite::Connection::open(p.join("old.db")).unwrap();
    old.execute_batch("CREATE TABLE audit_log (id text PRIMARY KEY, timestamp text NOT NULL, action text NOT NULL, task_id text NOT NULL, actor text, details_json text, before_json text, after_json text);").unwrap();
    drop(old);
    std::fs::write(p.join("ok.jsonl"), format!("{good}\n")).unwrap();
    std::fs::create_dir(p.join("blocker")).unwrap();

    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "malformed line",
            vec!["--rubric", "cleo-v1", "--source", "malformed.jsonl", "s1"],
        ),
        (
            "malformed line, streamed --all",
            vec![
                "--rubric",
                "cleo-v1",
                "--source",
                "malformed.jsonl",
                "--all",
                "--format",
                "jsonl",
                "--no-record",
            ],
        ),
        (
            "missing field",
            vec!["--rubric", "cleo-v1", "--source", "missing.jsonl", "s1"],
        ),
        (
            "bad timestamp",
            vec!["--rubric", "cleo-v1", "--source", "time.jsonl", "s1"],
        ),
        (
            "neither jsonl nor sqlite",
            vec!["--rubric", "cleo-v1", "--source", "neither.bin", "s1"],
        ),
        (
            "database not cleo's",
            vec!["--rubric", "cleo-v1", "--source", "other.db", "s1"],
        ),
        (
            "database without dispatch columns",
            vec!["--rubric", "cleo-v1", "--source", "old.db", "s1"],
        ),
        (
            "source missing",
            vec!["--rubric", "cleo-v1", "--source", "nowhere.jsonl", "s1"],
        ),
        ("no default database", vec!["--rubric", "cleo-v1", "s1"]),
        (
            "unknown rubric",
            vec!["--rubric", "cleo-v9", "--source", "ok.jsonl", "s1"],
        ),
        (
            "grades file not writable",
            vec![
                "--rubric", "cleo-v1", "--source", "ok.jsonl", "--grades", "blocker", "s1",
            ],
        ),
        ("no rubric", vec!["--source", "ok.jsonl", "s1"]),
        (
            "no sessions",
            vec!["--rubric", "cleo-v1", "--source", "ok.jsonl"],
        ),
        (
            "sessions and --all",
            vec!["--rubric", "cleo-v1", "--source", "ok.jsonl", "--all", "s1"],
        ),
        (
            "unknown format",
            vec![
                "--rubric", "cleo-v1", "--source", "ok.jsonl", "--format", "xml", "s1",
            ],
        ),
    ];
    let mut report = String::new();
    for (what, args) in cases {
        let out = run_in(p, &args);
        let err = stderr(&out);
        assert_eq!(
            code(&out),
            2,
            "{what}: expected exit 2, got {}: {err}",
            code(&out)
        );
        assert!(
            stdout(&out).is_empty(),
            "{what}: printed a result: {}",
            stdout(&out)
        );
        if what != "unknown format" {
            assert_eq!(
                err.trim_end().lines().count(),
                1,
                "{what}: not one line: {err}"
            );
        }
        let first = err.lines().next().unwrap_or_default();
        report.push_str(&format!("{what}: {first}\n"));
    }
    assert!(!p.join(".cleo").exists(), "a failed run recorded a grade");
    insta::assert_snapshot!(
        "bad_input_errors",
        common::registry_lists(&stable(&report, Some(p)))
    );
}

/// Grades every session of the shipped example with cleo-v1, recording nothing, in `dir`,
/// with `extra` flags.
fn grade_example_in(dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let example = repo_root().join("examples/cleo-audit.jsonl");
    let mut args = vec!["--rubric", "cleo-v1", "--source", example.to_str().unwrap()];
    args.extend(["--all", "--no-record"]);
    args.extend(extra);
    run_in(dir, &args)
}

/// Thousands of worker threads starve the ones grading (`-j 8192` ran for minutes on two
/// sessions): the count is bounded, and a larger one is a usage error.
#[test]
fn a_thread_count_past_the_bound_is_refused_before_anything_runs() {
    let here = repo_root();
    let refused = grade_example_in(&here, &["-j", "257"]);
    assert_eq!(code(&refused), 2, "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("257 is not in 1..=256"),
        "{}",
        stderr(&refused)
    );
    let most = grade_example_in(&here, &["-j", "256", "--format", "jsonl"]);
    assert_eq!(code(&most), 0, "{}", stderr(&most));
}

/// `GRADE_RUBRIC_PATH=` (or a trailing `:` left by appending to an empty value) and an empty
/// `GRADE_ALLOW_PLUGINS` broke every command with an error about flags nobody gave.
#[test]
fn empty_settings_in_the_environment_are_no_settings() {
    for (name, value) in [
        ("GRADE_RUBRIC_PATH", ""),
        ("GRADE_RUBRIC_PATH", ":"),
        ("GRADE_ALLOW_PLUGINS", ""),
    ] {
        let out = grade_bin()
            .env(name, value)
            .args(["rubric", "list"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{name}={value:?}: {}", stderr(&out));
        assert!(stdout(&out).contains("cleo-v1"), "{name}={value:?}");
    }
    let packs = repo_root().join("tests/packs");
    let out = grade_bin()
        .env("GRADE_RUBRIC_PATH", format!("{}:", packs.display()))
        .args(["rubric", "show", "tutorial"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "a trailing `:`: {}", stderr(&out));
}

/// `--no-record --grades FILE` recorded nothing without a word: one of the two is a mistake.
#[test]
fn no_record_with_a_grades_file_is_refused_not_half_obeyed() {
    let dir = tempfile::tempdir().unwrap();
    let out = grade_example_in(dir.path(), &["--grades", "g.jsonl"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
}

/// `-o -` wrote a file named `-`; `-` is standard output, as it is standard input for
/// `--source`.
#[test]
fn dash_as_the_output_is_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = grade_example_in(dir.path(), &["--format", "jsonl", "-o", "-"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 2);
    assert!(!dir.path().join("-").exists());
}
