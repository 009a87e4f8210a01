//! The policy for odd lines in a JSONL audit log (docs/sources.md, "Odd lines"): unread
//! fields are not type-checked, integral numbers are integers in any spelling, a final
//! line still being written is skipped, and `--skip-bad-lines` skips the rest with a
//! warning each, a count at the end, and a mark on every session that lost a line.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::{json, Value};

fn line(session: &str, second: u32, domain: &str, operation: &str, result: Value) -> String {
    json!({
        "timestamp": format!("2026-03-01T12:00:{second:02}.000Z"),
        "sessionId": session, "domain": domain, "operation": operation, "params": {},
        "result": result, "metadata": {"source": "mcp", "gateway": "cleo_query"}
    })
    .to_string()
}

fn ok() -> Value {
    json!({"success": true, "exitCode": 0, "duration": 5})
}

/// Two sessions, the second with an E_NOT_FOUND (exit code spelled by `exit_code`) that is
/// never followed by a lookup.
fn log(exit_code: &str) -> Vec<String> {
    vec![
        line("a", 1, "session", "list", ok()),
        line("b", 2, "session", "list", ok()),
        line("a", 3, "tasks", "find", ok()),
        line(
            "b",
            4,
            "tasks",
            "show",
            json!({"success": false, "duration": 5}),
        )
        .replace(
            "\"success\":false",
            &format!("\"success\":false,\"exitCode\":{exit_code}"),
        ),
        line("a", 5, "session", "end", ok()),
        line("b", 6, "session", "end", ok()),
    ]
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

struct Run {
    code: i32,
    results: Vec<Value>,
    stderr: String,
}

fn grade(source: &Path, extra: &[&str]) -> Run {
    let source = source.display().to_string();
    let mut args = vec!["--rubric", "cleo-v1", "--source", &source, "--no-record"];
    args.extend_from_slice(&["--format", "jsonl"]);
    args.extend_from_slice(extra);
    let out = run(&args);
    Run {
        code: code(&out),
        results: json_lines(&stdout(&out)),
        stderr: stderr(&out),
    }
}

fn without_timestamp(results: &[Value]) -> Vec<Value> {
    results
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().map(|o| o.remove("timestamp"));
            r
        })
        .collect()
}

/// Graded streamed (`--all`) and read whole (sessions named): the two paths must agree.
fn both_ways(source: &Path, extra: &[&str]) -> Run {
    let mut all = extra.to_vec();
    all.push("--all");
    let streamed = grade(source, &all);
    let mut named = extra.to_vec();
    named.extend_from_slice(&["a", "b"]);
    let whole = grade(source, &named);
    assert_eq!(
        streamed.code, whole.code,
        "{}\n{}",
        streamed.stderr, whole.stderr
    );
    assert_eq!(
        without_timestamp(&streamed.results),
        without_timestamp(&whole.results)
    );
    assert_eq!(streamed.stderr, whole.stderr);
    streamed
}

#[test]
fn fields_no_rule_reads_are_not_type_checked() {
    let dir = tempfile::tempdir().unwrap();
    let clean = write(dir.path(), "clean.jsonl", &(log("4").join("\n") + "\n"));
    let mut odd = log("4");
    odd[0] = odd[0]
        .replace("\"duration\":5", "\"duration\":\"fast\"")
        .replace("\"params\":{}", "\"params\":{},\"error\":{\"code\":7}");
    let odd = write(dir.path(), "odd.jsonl", &(odd.join("\n") + "\n"));
    let (clean, odd) = (both_ways(&clean, &[]), both_ways(&odd, &[]));
    assert_eq!(odd.code, 0, "{}", odd.stderr);
    assert_eq!(
        without_timestamp(&odd.results),
        without_timestamp(&clean.results)
    );
    assert_eq!(odd.stderr, "");

    // A pack that reads durations refuses the same line, naming it and the field.
    let pack = dir.path().join("pack");
    std::fs::create_dir(&pack).unwrap();
    std::fs::write(
        pack.join("rubric.yaml"),
        "id: slow\nversion: 1.0.0\nname: Slow\ndescription: Slow calls\nselectors:\n  slow: { field: result.duration, one_of: [fast] }\ndimensions:\n  - id: speed\n    name: Speed\n    description: No slow calls\n    max: 1\n    rules:\n      - id: none-slow\n        doc: A point when nothing is slow.\n        when: { count: slow, at_most: 0 }\n        points: 1\n        evidence: nothing slow\n",
    )
    .unwrap();
    let out = run(&[
        "--rubric",
        &pack.display().to_string(),
        "--source",
        &dir.path().join("odd.jsonl").display().to_string(),
        "--no-record",
        "--all",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("odd.jsonl:1: field `result.duration` must be a number of milliseconds from -9007199254740991 to 9007199254740991, not a string"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_integral_number_in_any_spelling_is_an_integer() {
    let dir = tempfile::tempdir().unwrap();
    let plain = both_ways(
        &write(dir.path(), "4.jsonl", &(log("4").join("\n") + "\n")),
        &[],
    );
    let b = &plain.results[1];
    assert!(b["flags"].to_string().contains("E_NOT_FOUND"), "{b}");
    for spelling in ["4.0", "4e0", "40e-1", "0.4e1"] {
        let path = write(dir.path(), "x.jsonl", &(log(spelling).join("\n") + "\n"));
        let odd = both_ways(&path, &[]);
        assert_eq!(odd.code, 0, "{spelling}: {}", odd.stderr);
        assert_eq!(
            without_timestamp(&odd.results),
            without_timestamp(&plain.results),
            "{spelling}"
        );
    }
    // 4.5 is no exit code, and exit codes are read by cleo-v1.
    let path = write(dir.path(), "x.jsonl", &(log("4.5").join("\n") + "\n"));
    let bad = grade(&path, &["--all"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr
            .contains("x.jsonl:4: field `result.exitCode` must be an integer, not 4.5"),
        "{}",
        bad.stderr
    );
}

#[test]
fn a_final_line_still_being_written_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = log("4").join("\n") + "\n";
    let whole = both_ways(&write(dir.path(), "whole.jsonl", &text), &[]);
    text.push_str(r#"{"timestamp": "2026-03-01T12:00:07.000Z", "sessionId": "b", "domain": "ta"#);
    let path = write(dir.path(), "growing.jsonl", &text);
    let cut = both_ways(&path, &[]);
    assert_eq!(cut.code, 0, "{}", cut.stderr);
    assert!(
        cut.stderr.contains("growing.jsonl:7: skipped the last line, which has no newline and is not JSON (a log still being written?)"),
        "{}",
        cut.stderr
    );
    assert!(
        cut.stderr.contains("skipped 1 malformed line of"),
        "{}",
        cut.stderr
    );
    // Session `b` lost the line and says so; `a` did not.
    assert_eq!(cut.results[0].get("skippedLines"), None);
    assert_eq!(cut.results[1]["skippedLines"], 1);
    let mut b = cut.results[1].clone();
    b.as_object_mut().unwrap().remove("skippedLines");
    assert_eq!(
        without_timestamp(&[b]),
        without_timestamp(&whole.results[1..])
    );
    assert_valid_grade(&grade_schema(), &cut.results[1]);

    // Valid JSON that is no entry is not a line being written: still an error.
    let path = write(
        dir.path(),
        "odd-end.jsonl",
        &(log("4").join("\n") + "\n{\"x\": 1}"),
    );
    let out = grade(&path, &["--all"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("odd-end.jsonl:7: missing field"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_malformed_line_in_the_middle_is_an_error_that_suggests_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = log("4");
    lines.insert(
        2,
        "{\"timestamp\": \"2026-03-01T12:00:02.500Z\", \"sessionId\": \"a\", oops".to_owned(),
    );
    let path = write(dir.path(), "mid.jsonl", &(lines.join("\n") + "\n"));
    for extra in [&["--all"][..], &["a"]] {
        let out = grade(&path, extra);
        assert_eq!(out.code, 2);
        assert!(out.results.is_empty());
        assert!(out.stderr.starts_with("error[E104]: "), "{}", out.stderr);
        assert!(
            out.stderr.contains("mid.jsonl:3: not valid JSON"),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("`--skip-bad-lines`"), "{}", out.stderr);
    }
}

#[test]
fn skip_bad_lines_warns_for_each_counts_them_and_marks_the_sessions_that_lost_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = log("4");
    // One bad line of `a` (its session readable), one of no readable session, one wrong type.
    lines.insert(
        2,
        "{\"timestamp\": \"2026-03-01T12:00:02.500Z\", \"sessionId\": \"a\", oops".to_owned(),
    );
    lines.insert(4, "not json at all".to_owned());
    lines.push(line("a", 8, "tasks", "find", json!({"success": "yes"})));
    let path = write(dir.path(), "bad.jsonl", &(lines.join("\n") + "\n"));
    let out = both_ways(&path, &["--skip-bad-lines"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let warnings: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(warnings.len(), 4, "{}", out.stderr);
    assert!(warnings[0].contains("bad.jsonl:3: skipped a malformed line: not valid JSON"));
    assert!(warnings[1].contains("bad.jsonl:5: skipped a malformed line: not valid JSON"));
    assert!(warnings[2].contains(
        "bad.jsonl:9: skipped a malformed line: field `result.success` must be a boolean, not a string (column"
    ));
    assert!(
        warnings[3].starts_with("warning: skipped 3 malformed lines of `"),
        "{}",
        out.stderr
    );
    // `a` lost two lines of its own and maybe the unreadable one; `b` maybe that one.
    assert_eq!(out.results[0]["skippedLines"], 3);
    assert_eq!(out.results[1]["skippedLines"], 1);
    let schema = grade_schema();
    for r in &out.results {
        assert_valid_grade(&schema, r);
    }

    // A session asked for that the log does not hold may have lost the unreadable line.
    let missing = grade(&path, &["--skip-bad-lines", "c"]);
    assert_eq!(missing.results[0]["skippedLines"], 1);

    // The human report says so too.
    let human = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        &path.display().to_string(),
        "--no-record",
        "--skip-bad-lines",
        "a",
    ]);
    assert!(
        stdout(&human)
            .contains("3 malformed lines of the source skipped: this grade may miss entries"),
        "{}",
        stdout(&human)
    );
}

#[test]
fn a_session_whose_every_line_was_skipped_is_still_graded_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = log("4");
    lines.push("{\"sessionId\": \"gone\", \"timestamp\": 5}".to_owned());
    let path = write(dir.path(), "gone.jsonl", &(lines.join("\n") + "\n"));
    let out = grade(&path, &["--skip-bad-lines", "--all"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let gone = out
        .results
        .iter()
        .find(|r| r["sessionId"] == "gone")
        .unwrap();
    assert_eq!(gone["entryCount"], 0);
    assert_eq!(gone["skippedLines"], 1);
}

/// A run holds its result lines until the source has read cleanly, past a budget in a
/// temporary file (`cli/src/held.rs`): a bad line found at the end of a long log still
/// prints nothing, whether the lines before it were held in memory or on disk, and a clean
/// log prints the same lines either way.
#[test]
fn a_bad_line_at_the_end_prints_nothing_even_when_the_held_lines_went_to_disk() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (0..400)
        .map(|i| line(&format!("s{i:03}"), i % 60, "session", "list", ok()))
        .collect();
    let clean = write(dir.path(), "clean.jsonl", &(lines.join("\n") + "\n"));
    // Pass 1 reads only session ids; the wrong type is found when the entry is parsed,
    // after every session before it was graded.
    let bad_line = line(
        "s999",
        1,
        "tasks",
        "show",
        json!({"success": false, "exitCode": 4.5, "duration": 5}),
    );
    let bad = write(
        dir.path(),
        "late.jsonl",
        &(lines.join("\n") + "\n" + bad_line.as_str() + "\n"),
    );
    let grade_with_budget = |source: &Path, budget: &str| {
        let out = grade_bin()
            .env("GRADE_HELD_OUTPUT_BUDGET", budget)
            .args([
                "--rubric",
                "cleo-v1",
                "--no-record",
                "--format",
                "jsonl",
                "--all",
            ])
            .arg("--source")
            .arg(source)
            .output()
            .unwrap();
        (code(&out), stdout(&out), stderr(&out))
    };
    let (_, in_memory, _) = grade_with_budget(&clean, "1000000000");
    assert_eq!(json_lines(&in_memory).len(), 400);
    // 0: every line to the temporary file; 2000: the first few lines in memory, the rest not.
    for budget in ["0", "2000"] {
        let (status, out, err) = grade_with_budget(&clean, budget);
        assert_eq!(status, 0, "{err}");
        assert_eq!(
            without_timestamp(&json_lines(&out)),
            without_timestamp(&json_lines(&in_memory)),
            "budget {budget}"
        );
        let (status, out, err) = grade_with_budget(&bad, budget);
        assert_eq!(status, 2, "budget {budget}: {err}");
        assert_eq!(out, "", "budget {budget}: nothing printed");
        assert!(
            err.contains("late.jsonl:401: field `result.exitCode` must be an integer, not 4.5"),
            "{err}"
        );
    }
}

/// Every format of a streamed run (the human report with its summary, the JSON document, and
/// JSON lines with `--fail-under` and a grades file) holds its output, and the lines it
/// records, past the budget on disk rather than holding every result in memory: what it
/// prints and records is the same either way, and a bad line found late prints and records
/// nothing.
#[test]
fn every_format_of_a_streamed_run_prints_and_records_the_same_when_its_output_goes_to_disk() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (0..300)
        .map(|i| {
            let (domain, operation) = if i % 7 == 0 {
                ("tasks", "show")
            } else {
                ("session", "list")
            };
            line(&format!("s{:03}", i % 120), i % 60, domain, operation, ok())
        })
        .collect();
    let clean = write(dir.path(), "clean.jsonl", &(lines.join("\n") + "\n"));
    let bad_line = line(
        "s999",
        1,
        "tasks",
        "show",
        json!({"success": false, "exitCode": 4.5}),
    );
    let bad = write(
        dir.path(),
        "late.jsonl",
        &(lines.join("\n") + "\n" + bad_line.as_str() + "\n"),
    );
    // Grading instants differ between runs; everything else must not.
    let mask = |text: &str| {
        let mut out = text.to_owned();
        for prefix in ["graded ", "\"timestamp\": \"", "\"timestamp\":\""] {
            let mut from = 0;
            while let Some(at) = out[from..].find(prefix) {
                let start = from + at + prefix.len();
                let len = out[start..]
                    .find(|c: char| !(c.is_ascii_digit() || "T:.-Z".contains(c)))
                    .unwrap_or(out.len() - start);
                out.replace_range(start..start + len, "X");
                from = start + 1;
            }
        }
        out
    };
    let run = |source: &Path, budget: &str, args: &[&str], grades: &Path| {
        let out = grade_bin()
            .env("GRADE_HELD_OUTPUT_BUDGET", budget)
            .args(["--rubric", "cleo-v1", "--all", "--color", "never"])
            .args(args)
            .arg("--grades")
            .arg(grades)
            .arg("--source")
            .arg(source)
            .output()
            .unwrap();
        let recorded = std::fs::read_to_string(grades).unwrap_or_default();
        let _ = std::fs::remove_file(grades);
        (
            code(&out),
            mask(&stdout(&out)),
            mask(&recorded),
            stderr(&out),
        )
    };
    let grades = dir.path().join("GRADES.jsonl");
    for args in [
        &["--format", "human"][..],
        &["--format", "json"],
        &["--format", "jsonl", "--fail-under", "0"],
    ] {
        let (status, in_memory, recorded, err) = run(&clean, "1000000000", args, &grades);
        assert_eq!(status, 0, "{args:?}: {err}");
        assert_eq!(recorded.lines().count(), 120, "{args:?}");
        assert!(err.contains("recorded 120 grades"), "{args:?}: {err}");
        for budget in ["0", "3000"] {
            let (status, out, on_disk, err) = run(&clean, budget, args, &grades);
            assert_eq!(status, 0, "{args:?} budget {budget}: {err}");
            assert_eq!(out, in_memory, "{args:?} budget {budget}");
            assert_eq!(on_disk, recorded, "{args:?} budget {budget}");
            let (status, out, on_disk, err) = run(&bad, budget, args, &grades);
            assert_eq!(status, 2, "{args:?} budget {budget}: {err}");
            assert_eq!(out, "", "{args:?} budget {budget}: nothing printed");
            assert_eq!(on_disk, "", "{args:?} budget {budget}: nothing recorded");
            assert!(
                !grades.exists(),
                "{args:?}: a failed run created the grades file"
            );
        }
    }
    let (_, human, _, _) = run(&clean, "0", &["--format", "human"], &grades);
    assert!(
        human.contains("120 sessions graded"),
        "the summary follows the reports: {human}"
    );
}

/// A streamed run (`--all`) renders each result on the thread that graded it, and the one
/// that takes results in order only moves bytes and adds counts; what it prints and records
/// must be what the whole-read path (sessions named) prints and records from the results
/// themselves, in every format, with and without `--explain` (whose grades-file line is
/// not the printed one), with `--fail-under` naming the same sessions.
#[test]
fn a_streamed_run_prints_and_records_what_naming_its_sessions_does_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<String> = (0..40).map(|i| format!("s{i:02}")).collect();
    let lines: Vec<String> = (0..200)
        .map(|i| {
            let (domain, operation) = match i % 5 {
                0 => ("tasks", "show"),
                1 => ("tasks", "find"),
                2 => ("session", "end"),
                _ => ("session", "list"),
            };
            let result = if i % 9 == 0 {
                json!({"success": false, "exitCode": 4, "duration": 5})
            } else {
                ok()
            };
            line(
                &ids[i % ids.len()],
                (i % 60) as u32,
                domain,
                operation,
                result,
            )
        })
        .collect();
    let log = write(dir.path(), "audit.jsonl", &(lines.join("\n") + "\n"));
    let grades = dir.path().join("GRADES.jsonl");
    let mask = |text: &str| {
        let mut out = String::new();
        for line in text.split_inclusive('\n') {
            let masked = match line.find("timestamp\"") {
                Some(_) => {
                    let re_start = line.find("\"timestamp\"").unwrap_or(0);
                    let value = line[re_start..]
                        .find("Z\"")
                        .map_or(line.len(), |end| re_start + end + 2);
                    format!("{}\"timestamp\"X{}", &line[..re_start], &line[value..])
                }
                None if line.contains("· graded ") => line
                    .split("· graded ")
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
                None => line.to_owned(),
            };
            out.push_str(&masked);
        }
        out
    };
    let run = |args: &[&str], named: bool| {
        let mut cmd = grade_bin();
        cmd.args(["--rubric", "cleo-v1", "--color", "never", "--source"])
            .arg(&log)
            .arg("--grades")
            .arg(&grades)
            .args(args);
        if named {
            cmd.args(&ids);
        } else {
            cmd.arg("--all");
        }
        let out = cmd.output().unwrap();
        let recorded = std::fs::read_to_string(&grades).unwrap_or_default();
        let _ = std::fs::remove_file(&grades);
        (
            code(&out),
            mask(&stdout(&out)),
            mask(&recorded),
            stderr(&out),
        )
    };
    for format in ["human", "json", "jsonl"] {
        for extra in [&[][..], &["--explain"], &["--fail-under", "90"]] {
            let args: Vec<&str> = ["--format", format].iter().chain(extra).copied().collect();
            let (code, mut streamed, recorded, err) = run(&args, false);
            let (named_code, named, named_recorded, named_err) = run(&args, true);
            assert_eq!(code, named_code, "{args:?}: {err} / {named_err}");
            assert_eq!(err, named_err, "{args:?}");
            if format == "human" {
                // Only a run over the whole source ends in a summary.
                let summary = streamed.rfind("\n40 sessions graded").unwrap();
                streamed.truncate(summary);
            }
            assert_eq!(streamed, named, "{args:?}");
            assert_eq!(recorded, named_recorded, "{args:?}");
            assert_eq!(recorded.lines().count(), 40, "{args:?}");
        }
    }
}

/// A file saved with UTF-8's byte order mark fails on its first byte; serde_json says only
/// "expected value (column 1)", so every JSON source names the mark instead.
#[test]
fn a_byte_order_mark_is_named_whichever_json_source_starts_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let with_mark = |name: &str, from: &Path| {
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend(std::fs::read(from).unwrap());
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let root = common::repo_root();
    let cleo = with_mark("audit.jsonl", &root.join("examples/cleo-audit.jsonl"));
    let transcript = with_mark(
        "transcript.jsonl",
        &root.join("rubrics/claude-code-v1/tests/real/claude_code_transcripts/real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"),
    );
    let trace = with_mark(
        "trace.json",
        &root.join(
            "rubrics/claude-code-v1/tests/real/langfuse_traces/claude-agent-2025-12-22.trace.json",
        ),
    );
    let named = "starts with a byte order mark (U+FEFF), which JSON does not allow";
    let run = |rubric: &str, source: &Path, extra: &[&str]| {
        let out = grade_bin()
            .args([
                "--rubric",
                rubric,
                "--no-record",
                "--all",
                "--format",
                "jsonl",
            ])
            .args(extra)
            .arg("--source")
            .arg(source)
            .output()
            .unwrap();
        (code(&out), stderr(&out))
    };
    // A CLEO log refuses the line, as any malformed line.
    let (status, err) = run("cleo-v1", &cleo, &[]);
    assert_eq!(status, 2, "{err}");
    assert!(
        err.contains(&format!("audit.jsonl:1: not valid JSON: it {named}")),
        "{err}"
    );
    // A transcript skips it with a warning, as any malformed line, and grades the rest.
    let (status, err) = run("claude-code-v1", &transcript, &[]);
    assert_eq!(status, 0, "{err}");
    assert!(
        err.contains(&format!(
            "transcript.jsonl:1: skipped: not valid JSON: it {named}"
        )),
        "{err}"
    );
    // A trace is one document: detection, and the format when forced, both say why.
    let (status, err) = run("claude-code-v1", &trace, &[]);
    assert_eq!(status, 2, "{err}");
    assert!(
        err.contains(&format!("line 1 is not valid JSON: it {named}")),
        "{err}"
    );
    let (status, err) = run("claude-code-v1", &trace, &["--source-format", "langfuse"]);
    assert_eq!(status, 2, "{err}");
    assert!(
        err.contains(&format!("one JSON document: it {named}")),
        "{err}"
    );
}

/// Windows PowerShell 5 redirects output (`> audit.jsonl`) as UTF-16: serde_json said only
/// "expected value (column 1)", which does not say what to fix.
#[test]
fn a_utf16_source_is_named_as_such_whichever_format_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = common::repo_root();
    let text = std::fs::read_to_string(root.join("examples/cleo-audit.jsonl")).unwrap();
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let marked = dir.path().join("audit.jsonl");
    std::fs::write(&marked, &bytes).unwrap();
    let bare = dir.path().join("bare.jsonl");
    std::fs::write(&bare, &bytes[2..]).unwrap();
    let run = |source: &Path, extra: &[&str]| {
        let out = grade_bin()
            .args(["--rubric", "cleo-v1", "--no-record", "--all"])
            .args(extra)
            .arg("--source")
            .arg(source)
            .output()
            .unwrap();
        (code(&out), stderr(&out))
    };
    let utf16 = "is UTF-16 (its first bytes are the byte order mark `FF FE`), and JSON sources are read as UTF-8 (save the file as UTF-8)";
    let (status, err) = run(&marked, &[]);
    assert_eq!(status, 2, "{err}");
    assert!(
        err.contains(&format!(
            "it has no SQLite header, and line 1 is not valid JSON: it {utf16}"
        )),
        "{err}"
    );
    let (status, err) = run(&marked, &["--source-format", "cleo-jsonl"]);
    assert_eq!(status, 2, "{err}");
    assert!(
        err.contains(&format!("audit.jsonl:1: not valid JSON: it {utf16}")),
        "{err}"
    );
    let (status, err) = run(&bare, &[]);
    assert_eq!(status, 2, "{err}");
    assert!(
        err.contains("line 1 is not valid JSON: it is UTF-16 (a NUL byte is beside its first character), and JSON sources are read as UTF-8"),
        "{err}"
    );
}

/// CLEO's grader reads each line with `JSON.parse`, which keeps the last value of a repeated
/// key: a line naming two sessions is graded in the one it names last, as if it named only
/// that one, and the run says so once, naming the first such line and how many there were.
#[test]
fn a_repeated_session_id_grades_the_entry_in_the_last_named_session_with_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let original = log("4");
    // Line 3 is `a`'s `tasks.find`, moved to `b` by a second `sessionId`; line 5 says
    // `success` twice, the last time as it was.
    let mut repeated = original.clone();
    repeated[2] = repeated[2].replace(r#""sessionId":"a""#, r#""sessionId":"a","sessionId":"b""#);
    repeated[4] = repeated[4].replace(r#""success":true"#, r#""success":false,"success":true"#);
    let mut moved = original.clone();
    moved[2] = line("b", 3, "tasks", "find", ok());
    let original = both_ways(
        &write(dir.path(), "original.jsonl", &(original.join("\n") + "\n")),
        &[],
    );
    let moved = both_ways(
        &write(dir.path(), "moved.jsonl", &(moved.join("\n") + "\n")),
        &[],
    );
    let path = write(dir.path(), "repeated.jsonl", &(repeated.join("\n") + "\n"));
    let out = both_ways(&path, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        without_timestamp(&out.results),
        without_timestamp(&moved.results)
    );
    assert_ne!(
        without_timestamp(&out.results),
        without_timestamp(&original.results)
    );
    let warning = format!(
        "warning: {}:3: key `sessionId` appears more than once; the last value is used, as CLEO's grader does (2 lines)\n",
        path.display()
    );
    assert_eq!(out.stderr, warning);

    // `--skip-bad-lines` still skips a bad line, and only it.
    let mut with_bad = repeated.clone();
    with_bad.insert(5, "not json at all".to_owned());
    let path = write(dir.path(), "with-bad.jsonl", &(with_bad.join("\n") + "\n"));
    let out = both_ways(&path, &["--skip-bad-lines"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.stderr);
    assert!(
        lines[0].ends_with(
            "with-bad.jsonl:6: skipped a malformed line: not valid JSON: expected ident (column 2)"
        ),
        "{}",
        out.stderr
    );
    assert!(
        lines[1].ends_with("with-bad.jsonl:3: key `sessionId` appears more than once; the last value is used, as CLEO's grader does (2 lines)"),
        "{}",
        out.stderr
    );
    assert!(
        lines[2].starts_with("warning: skipped 1 malformed line of `"),
        "{}",
        out.stderr
    );
    let mut results = out.results.clone();
    for r in &mut results {
        assert_eq!(r["skippedLines"], 1, "{r}");
        r.as_object_mut().unwrap().remove("skippedLines");
    }
    assert_eq!(
        without_timestamp(&results),
        without_timestamp(&moved.results)
    );
}

/// Two durations of `1e308` ms (finite, each) add up to infinity: a script summing them
/// printed `total inf ms` and, since every comparison of Rhai's with infinity is false,
/// deducted nothing for a session over its budget, without a word. A duration beyond
/// JavaScript's largest exact integer is no duration: a pack that reads durations refuses
/// the line, naming it; one that does not (`cleo-v1`) grades the log as before.
#[test]
fn a_duration_so_large_that_durations_add_up_to_infinity_is_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("budget");
    std::fs::create_dir(&pack).unwrap();
    std::fs::write(
        pack.join("rubric.yaml"),
        "id: budget\nversion: 1.0.0\nname: Budget\nsources: [cleo-jsonl]\ndimensions:\n  - id: time\n    max: 10\n    start: 10\n    rules:\n      - id: total\n        doc: -5 over a second in all\n        script: total.rhai\n",
    )
    .unwrap();
    std::fs::write(
        pack.join("total.rhai"),
        "let total = 0.0;\nfor e in session.entries { total += e.duration; }\nif total > 1000.0 { #{ points: -5, evidence: `${total} ms in all` } } else { #{ evidence: `${total} ms in all` } }\n",
    )
    .unwrap();
    let source = |name: &str, durations: [&str; 3]| {
        let lines: Vec<String> = durations
            .iter()
            .zip(1..)
            .map(|(d, second)| {
                line("a", second, "tasks", "find", ok())
                    .replace("\"duration\":5", &format!("\"duration\":{d}"))
            })
            .collect();
        write(dir.path(), name, &(lines.join("\n") + "\n"))
    };
    let graded = |source: &Path, extra: &[&str]| {
        let source = source.display().to_string();
        let mut args = vec!["--rubric", "./budget", "--source", &source, "--no-record"];
        args.extend_from_slice(&["--format", "jsonl", "--all"]);
        args.extend_from_slice(extra);
        let out = run_in(dir.path(), &args);
        (code(&out), json_lines(&stdout(&out)), stderr(&out))
    };
    let wanted = "must be a number of milliseconds from -9007199254740991 to 9007199254740991";

    let huge = source("huge.jsonl", ["1e308", "-1e308", "5"]);
    let (status, results, err) = graded(&huge, &[]);
    assert_eq!(status, 2, "{err}");
    assert!(results.is_empty(), "{results:?}");
    assert!(
        err.starts_with(&format!(
            "error[E104]: {}:1: field `result.duration` {wanted}, not 1e+308",
            huge.display()
        )),
        "{err}"
    );
    let (status, results, err) = graded(&huge, &["--skip-bad-lines"]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(results[0]["dimensions"]["time"]["score"], 10);
    assert_eq!(
        results[0]["dimensions"]["time"]["evidence"],
        json!(["5.0 ms in all"])
    );
    assert_eq!(results[0]["skippedLines"], 2);
    for (n, value) in [(1, "1e+308"), (2, "-1e+308")] {
        assert!(
            err.contains(&format!(
                "{}:{n}: skipped a malformed line: field `result.duration` {wanted}, not {value}",
                huge.display()
            )),
            "{err}"
        );
    }
    assert!(!err.contains("inf"), "{err}");

    // The largest duration read adds up without overflowing, and is graded by its size.
    let (status, results, err) = graded(
        &source(
            "largest.jsonl",
            ["9007199254740991", "-9007199254740991", "9007199254740991"],
        ),
        &[],
    );
    assert_eq!((status, err.as_str()), (0, ""));
    assert_eq!(results[0]["dimensions"]["time"]["score"], 5);
    assert_eq!(
        results[0]["dimensions"]["time"]["evidence"],
        json!(["9.007199254740991e15 ms in all"])
    );

    // A pack that reads no durations grades the log as it always has.
    let (run_huge, run_small) = (
        grade(&huge, &["--all"]),
        grade(&source("small.jsonl", ["5", "5", "5"]), &["--all"]),
    );
    assert_eq!((run_huge.code, run_huge.stderr.as_str()), (0, ""));
    assert_eq!(
        without_timestamp(&run_huge.results),
        without_timestamp(&run_small.results)
    );
}

/// A `tasks.db` row whose `details_json` holds no params object stopped every pack's run,
/// even one that reads no params, while the JSONL log of the same entries graded. A row's
/// `details_json` now follows the log's rule for `params`; `cleo-v1`, which reads params,
/// still refuses it naming the row.
#[test]
fn a_details_json_that_holds_no_params_stops_only_a_pack_that_reads_params() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = write(dir.path(), "audit.jsonl", &(log("4").join("\n") + "\n"));
    let clean = dir.path().join("clean.db");
    write_cleo_db(&jsonl, &clean);
    let pack = dir.path().join("plain");
    std::fs::create_dir(&pack).unwrap();
    std::fs::write(
        pack.join("rubric.yaml"),
        "id: plain\nversion: 1.0.0\nname: Plain\ndescription: Lists sessions\nselectors:\n  lists: { domain: session, operation: list }\ndimensions:\n  - id: lists\n    name: Lists\n    description: Lists its session\n    max: 1\n    rules:\n      - id: listed\n        doc: A point for a session.list.\n        when: { count: lists, at_least: 1 }\n        points: 1\n        evidence: listed\n",
    )
    .unwrap();
    let graded = |rubric: &str, db: &Path| {
        let db = db.display().to_string();
        let out = run_in(
            dir.path(),
            &[
                "--rubric",
                rubric,
                "--source",
                &db,
                "--no-record",
                "--format",
                "jsonl",
                "--all",
            ],
        );
        (
            code(&out),
            without_timestamp(&json_lines(&stdout(&out))),
            stderr(&out),
        )
    };
    for (n, details) in ["'[1]'", "'{broken'", "X'7B7D'"].into_iter().enumerate() {
        let odd = dir.path().join(format!("odd{n}.db"));
        std::fs::copy(&clean, &odd).unwrap();
        rusqlite::Connection::open(&odd)
            .unwrap()
            .execute_batch(&format!(
                "UPDATE audit_log SET details_json = {details} WHERE rowid = 3"
            ))
            .unwrap();
        let (status, results, err) = graded("./plain", &odd);
        assert_eq!((status, err.as_str()), (0, ""), "{details}");
        assert_eq!(results, graded("./plain", &clean).1, "{details}");
        assert_eq!(results.len(), 2, "{details}");

        let (status, results, err) = graded("cleo-v1", &odd);
        assert_eq!(status, 2, "{details}: {err}");
        assert!(results.is_empty(), "{details}: {results:?}");
        let why = match details {
            "'[1]'" => "`details_json` holds an array, not a JSON object".to_owned(),
            "'{broken'" => {
                "`details_json` is not JSON: key must be a string at line 1 column 2".to_owned()
            }
            _ => "`details_json` is a BLOB of 2 bytes, not text".to_owned(),
        };
        assert!(
            err.starts_with(&format!(
                "error[E107]: `{}`: audit_log row `{:032x}`: {why}",
                odd.display(),
                3
            )),
            "{details}: {err}"
        );
    }
}

/// A line that is JSON but no object was named in serde's words (`invalid length 0,
/// expected struct RawEntry with 8 elements` for `[]`), and a list of an entry's eight
/// fields in order was read as an entry by one pass and not by the other (`the file changed
/// while it was read`). Each is named for what it is, as format detection names a first
/// line, with the flag and without, streamed and read whole.
#[test]
fn a_line_that_is_json_but_no_object_is_named_for_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let fields = r#"["2026-03-01T12:00:02.500Z","a","tasks","find",{},{"success":false},{},null]"#;
    for (bad, kind) in [
        ("[]", "array"),
        ("[1]", "array"),
        (fields, "array"),
        ("\"x\"", "string"),
        ("5", "number"),
        ("null", "null"),
        ("true", "boolean"),
    ] {
        let mut lines = log("4");
        lines.insert(2, bad.to_owned());
        let path = write(dir.path(), "odd.jsonl", &(lines.join("\n") + "\n"));
        let shown = path.display();
        let what = format!("the line is a JSON {kind}, not an object");
        for extra in [&["--all"][..], &["a"]] {
            let out = grade(&path, extra);
            assert_eq!(out.code, 2, "{bad}");
            assert_eq!(
                out.stderr,
                format!("error[E104]: {shown}:3: {what} (pass `--skip-bad-lines` to skip malformed lines with a warning)\n"),
                "{bad}"
            );
        }
        let out = both_ways(&path, &["--skip-bad-lines"]);
        assert_eq!(out.code, 0, "{bad}: {}", out.stderr);
        assert_eq!(
            out.stderr,
            format!("warning: {shown}:3: skipped a malformed line: {what}\n\
                     warning: skipped 1 malformed line of `{shown}`; the results of their sessions say how many each lost\n"),
            "{bad}"
        );
        assert_eq!(out.results.len(), 2, "{bad}");
    }
}

/// serde_json places an error found just past a newline at column 0 of the next line, so a
/// line cut off inside a string or before its JSON closed said "(column 0)", a place that
/// names nothing; and a pretty-printed document broken at line 41 was reported as its first
/// line, `{`, not being JSON on its own. Each now says where the JSON breaks.
#[test]
fn json_cut_off_at_a_line_end_or_broken_deep_in_a_document_names_where() {
    let dir = tempfile::tempdir().unwrap();
    let lines = log("4");
    let cut_string = lines[2].find("\"domain\"").unwrap() + 3;
    for (name, bad, what) in [
        ("string.jsonl", &lines[2][..cut_string], "control character (\\u0000-\\u001F) found while parsing a string (at the end of the line)"),
        ("object.jsonl", "{\"timestamp\":", "EOF while parsing a value (at the end of the line)"),
    ] {
        let mut text = lines.clone();
        text[2] = bad.to_owned();
        let source = write(dir.path(), name, &(text.join("\n") + "\n"));
        let run = grade(&source, &["--all"]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert_eq!(
            run.stderr,
            format!("error[E104]: {}:3: not valid JSON: {what} (pass `--skip-bad-lines` to skip malformed lines with a warning)\n", source.display())
        );
    }
    let document = |body: &str| format!("{{\n  \"id\": \"t1\",\n  \"observations\": [\n{body}");
    for (name, text, why) in [
        ("key.json", document("    {\"id\": \"o1\", 7: 1}\n  ]\n}\n"), "is not valid JSON at line 4: key must be a string (column 18)"),
        ("string.json", document("    {\"id\": \"o1\n"), "is not valid JSON: control character (\\u0000-\\u001F) found while parsing a string (at the end of line 4)"),
        ("short.json", document("    {\"id\": \"o1\"}\n"), "ends at line 4 before its JSON does"),
    ] {
        let source = write(dir.path(), name, &text);
        let run = grade(&source, &["--all"]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(
            run.stderr.contains(&format!("it has no SQLite header, and line 1 opens a JSON document that {why}\n")),
            "{}",
            run.stderr
        );
    }
}

/// JavaScript writes `\ud83d` alone for a string cut inside a character, and CLEO's grader
/// reads such a line; the log was refused whole as "not a source grade can read" (line 1 was
/// not JSON to serde_json). Now it is graded, U+FFFD in the surrogate's place, with one
/// warning saying what that may change.
#[test]
fn a_lone_surrogate_is_read_as_the_replacement_character_with_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = log("4");
    lines[0] = lines[0].replace("\"params\":{}", r#""params":{"title":"cut \ud83d"}"#);
    lines[3] = lines[3].replace("\"params\":{}", r#""params":{"note":"\udc00"}"#);
    assert!(lines[0].contains(r"\ud83d") && lines[3].contains(r"\udc00"));
    let source = write(dir.path(), "cut.jsonl", &(lines.join("\n") + "\n"));
    let plain = write(dir.path(), "plain.jsonl", &(log("4").join("\n") + "\n"));
    let run = both_ways(&source, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        without_timestamp(&run.results),
        without_timestamp(&grade(&plain, &["--all"]).results)
    );
    assert_eq!(
        run.stderr,
        format!(
            "warning: {}:1: a string holds a lone UTF-16 surrogate (an escape such as `\\ud83d` without its other half, which JavaScript writes for a string cut inside a character); text cannot hold one, so it is read as U+FFFD (\u{fffd}): two texts that differ only there read as equal, and a message that prints one shows U+FFFD (2 lines)\n",
            source.display()
        )
    );
}
