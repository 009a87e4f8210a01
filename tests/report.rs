//! `grade report` and `--html FILE` on a grading run: the page is self-contained, carries the
//! results, escapes every text, and works in a browser (headless Chromium: the text is
//! there, the console stays silent, a row opens).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use std::path::Path;

use common::*;
use serde_json::{json, Value};

const CORPUS: &str = "tests/fixtures/conformance/audit.jsonl";

/// Texts a log controls, made to break out of the page if any were written as markup.
const ATTACK_ID: &str = "</script><img src=x onerror=\"document.title='pwned'\">'\"s1";
const ATTACK_FLAG: &str = "<img src=x onerror=alert(1)> flagged at #3 & \"quoted\"";
const ATTACK_EVIDENCE: &str = "</script><script>document.title='pwned'</script> <b>bold</b>";

/// A result as `grade --explain --format jsonl` prints it, with attacker-controlled texts.
fn attack_result(id: &str, score: f64, timestamp: &str) -> Value {
    json!({
        "sessionId": id,
        "totalScore": score,
        "maxScore": 40,
        "dimensions": {
            "a<b>": {"score": score.min(20.0), "max": 20, "evidence": [ATTACK_EVIDENCE]},
            "c": {"score": 0, "max": 20, "evidence": ["no task to judge"], "notApplicable": true}
        },
        "flags": [ATTACK_FLAG],
        "timestamp": timestamp,
        "entryCount": 3,
        "evaluator": "grade-engine 0.1.0",
        "rubric": {"id": "x<script>", "version": "1\"", "digest": "sha256:00"},
        "percent": score * 2.5,
        "grade": if score >= 30.0 { "A" } else { "<F>" },
        "explain": {
            "a<b>": [{
                "rule": "r</script>",
                "points": -5,
                "flags": [ATTACK_FLAG],
                "entries": [{"position": 3, "timestamp": "t", "operation": "<op>", "file": "/logs/a<b>.jsonl", "line": 42}]
            }],
            "c": [{"rule": "c-rule", "points": 0}]
        }
    })
}

fn write_lines(path: &Path, values: &[Value]) {
    let text: String = values.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(path, text).expect("the results are written");
}

/// The JSON embedded in a page.
fn embedded(html: &str) -> Value {
    embedded_json(html, "page-data")
}

/// A refusal: exit 2, saying `what`.
fn assert_refused(out: &std::process::Output, what: &str) {
    assert_eq!(code(out), 2);
    assert!(stderr(out).contains(what), "{}", stderr(out));
}

/// Grades the corpus with cleo-v1 and `extra` flags, writing the page; the printed results
/// and the page's data.
fn graded_with_page(extra: &[&str]) -> (Vec<Value>, Value) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let page = dir.path().join("run.html");
    let page_arg = page.to_string_lossy().into_owned();
    let mut args = vec!["--html", &page_arg, "--all", "--no-record"];
    args.extend([
        "--format", "jsonl", "--rubric", "cleo-v1", "--source", CORPUS,
    ]);
    args.extend_from_slice(extra);
    let out = run(&args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).expect("the page was written");
    assert_self_contained(&html);
    let data = embedded(&html);
    assert_eq!(data["explained"], true);
    // Every row opens its rule trace.
    for row in data["sessions"].as_array().expect("sessions") {
        let detail: Value = serde_json::from_str(row[12].as_str().expect("a detail")).unwrap();
        assert!(detail["x"].is_array(), "a row without its trace: {row}");
    }
    (json_lines(&stdout(&out)), data)
}

#[test]
fn a_report_escapes_every_text_the_results_carry() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let results = dir.path().join("r.jsonl");
    write_lines(
        &results,
        &[attack_result(ATTACK_ID, 35.0, "2026-11-20T10:00:00.000Z")],
    );
    let page = dir.path().join("page.html");
    let title = "<img src=x onerror=alert(1)>";
    let args = ["report", "r.jsonl", "--html", "page.html", "--title", title];
    let out = run_in(dir.path(), &args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).expect("the page was written");
    // The raw texts appear nowhere as markup: `<` inside the data is `\u003c`, and the
    // title is escaped.
    assert_self_contained(&html);
    assert!(!html.contains("</script><"), "a text closed a script");
    assert!(html.contains("<title>grade report: &lt;img src=x onerror=alert(1)&gt;</title>"));
    let data = embedded(&html);
    assert_eq!(data["sessions"][0][0], ATTACK_ID);
    let strings: Vec<&str> = data["strings"]
        .as_array()
        .expect("strings")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for text in [ATTACK_FLAG, ATTACK_EVIDENCE, "r</script>", "<op>", "<F>"] {
        assert_eq!(
            strings.contains(&text),
            text != "<F>",
            "`{text}` is carried as it is (a letter no standing grade has is not)"
        );
    }
    assert_eq!(data["rubrics"][0]["id"], "x<script>");
    assert_eq!(data["rubrics"][0]["dimensions"][0]["id"], "a<b>");
}

#[test]
fn a_report_figures_each_rubric_over_the_last_grade_of_each_session() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let history = dir.path().join("GRADES.jsonl");
    // s1 graded twice (30, then 35 points of 40), s2 once (10); a session with nothing to
    // grade (max 0, `percent: null`) counts as a session and in no mean.
    let mut empty = attack_result("empty", 0.0, "2026-11-22T10:00:00.000Z");
    empty["maxScore"] = json!(0);
    empty["percent"] = Value::Null;
    empty["dimensions"] = json!({});
    empty.as_object_mut().map(|o| o.remove("grade"));
    write_lines(
        &history,
        &[
            attack_result("s1", 30.0, "2026-11-20T10:00:00.000Z"),
            attack_result("s2", 10.0, "2026-11-20T10:00:00.000Z"),
            attack_result("s1", 35.0, "2026-11-22T10:00:00.000Z"),
            empty,
        ],
    );
    let out = run_in(
        dir.path(),
        &["report", "GRADES.jsonl", "--html", "page.html"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let data = embedded(&std::fs::read_to_string(dir.path().join("page.html")).unwrap());
    assert_eq!(data["history"], true);
    assert_eq!(data["sessions"].as_array().map(Vec::len), Some(4));
    let stats = &data["rubrics"][0]["stats"];
    assert_eq!(stats["sessions"], 3);
    assert_eq!(stats["graded"], 2);
    // (87.5 + 25) / 2; population sd 31.25; the median of two is their mean.
    assert_eq!(stats["mean"], 56.25);
    assert_eq!(stats["sd"], 31.25);
    assert_eq!(stats["median"], 56.25);
    assert_eq!(stats["histogram"], json!([0, 0, 1, 0, 0, 0, 0, 0, 1, 0]));
    // Letters in the order first seen (no pack at hand): A, then <F>.
    assert_eq!(data["rubrics"][0]["letters"], json!(["A", "<F>"]));
    assert_eq!(stats["letters"], json!([1, 1]));
    // Dimension `a<b>`: 20 and 10 points where it applied; the empty session has none.
    let a = &stats["dimensions"][0];
    assert_eq!(a["n"], 2);
    assert_eq!(a["notApplicable"], 1);
    assert_eq!(a["mean"], 15.0);
    assert_eq!(a["five"], json!([10.0, 12.5, 15.0, 17.5, 20.0]));
    assert_eq!(a["full"], 1);
    // The one flag's shape (its number read as N), raised once in each of three sessions.
    let shape = stats["flags"][0][0].as_u64().unwrap() as usize;
    assert_eq!(
        data["shapes"][shape],
        "<img src=x onerror=alert(N)> flagged at #N & \"quoted\""
    );
    assert_eq!(stats["flags"][0], json!([shape, 3, 3]));
    // Two runs: the trend has a point for each, the mean of every graded result of each
    // (75 and 25, then 87.5; the session with nothing to grade is in no mean).
    let trend = &data["trend"];
    assert_eq!(trend["bucket"], "run");
    assert_eq!(trend["lines"][0]["points"], json!([[50.0, 2], [87.5, 1]]));
}

#[test]
fn a_grading_run_writes_its_page_with_each_rules_trace_and_prints_none() {
    let (printed, data) = graded_with_page(&[]);
    assert!(!printed.is_empty());
    assert!(
        printed.iter().all(|r| r.get("explain").is_none()),
        "the output keeps no trace without `--explain`"
    );
    assert_eq!(
        data["sessions"].as_array().map(Vec::len),
        Some(printed.len())
    );
    assert_eq!(data["rubrics"][0]["name"], "CLEO session grade");
    assert_eq!(
        data["rubrics"][0]["letters"],
        json!(["A", "B", "C", "D", "F"])
    );
    // The page's figures are the run's: its mean is the mean of the printed percents.
    let mean = printed
        .iter()
        .map(|r| r["percent"].as_f64().unwrap())
        .sum::<f64>()
        / printed.len() as f64;
    let page_mean = data["rubrics"][0]["stats"]["mean"].as_f64().unwrap();
    assert!((mean - page_mean).abs() < 1e-9, "{mean} vs {page_mean}");
}

#[test]
fn a_page_keeps_each_rules_trace_when_the_output_keeps_it_too() {
    let (printed, _) = graded_with_page(&["--explain"]);
    assert!(printed.iter().all(|r| r.get("explain").is_some()));
}

#[test]
fn html_on_standard_output_is_refused_beside_the_results() {
    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        CORPUS,
        "--all",
        "--no-record",
        "--html",
        "-",
    ]);
    assert_refused(&out, "`--html -` would mix the page with the results");
}

#[test]
fn a_report_of_nothing_says_which_files_held_nothing() {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::write(dir.path().join("empty.jsonl"), "").unwrap();
    let out = run_in(dir.path(), &["report", "empty.jsonl", "--html", "p.html"]);
    assert_refused(&out, "no results to report: `empty.jsonl` held none");
    let out = run_in(dir.path(), &["report", "--html", "p.html"]);
    assert_refused(
        &out,
        "results file `.cleo/metrics/GRADES.jsonl` does not exist",
    );
    assert!(!dir.path().join("p.html").exists());
}

#[test]
fn the_page_opens_in_chromium_with_a_silent_console_and_a_row_opens() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut results: Vec<Value> = (0..300)
        .map(|i| {
            attack_result(
                &format!("session-{i:04}"),
                f64::from(i % 41),
                "2026-11-20T10:00:00.000Z",
            )
        })
        .collect();
    results.push(attack_result(ATTACK_ID, 33.0, "2026-11-21T10:00:00.000Z"));
    write_lines(&dir.path().join("r.jsonl"), &results);
    let out = run_in(dir.path(), &["report", "r.jsonl", "--html", "page.html"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let page = dir.path().join("page.html");
    // The attack's session opened from the page's address, as a click on its row opens it.
    let hash = format!(
        "session={}",
        ATTACK_ID
            .bytes()
            .map(|b| format!("%{b:02X}"))
            .collect::<String>()
    );
    let (dom, console) = open_in_chromium(&page, &hash);
    assert!(console.is_empty(), "the console spoke: {console:#?}");
    assert!(dom.contains("data-ready="), "the script ran to its end");
    // The figures are drawn.
    assert!(dom.contains("Most frequent flags"));
    assert!(dom.contains("mean score"));
    // Lazily: the table holds the rows in sight, not all 301.
    let rows = dom.matches("class=\"vgrid vrow").count();
    assert!(rows > 5 && rows < 100, "{rows} rows in the page");
    // The row opened: its dimensions, evidence, flags and trace, every text as text.
    let detail = &dom[dom.find("id=\"detail\"").expect("the detail")..];
    assert!(!detail.starts_with("id=\"detail\" hidden"));
    assert!(detail.contains("&lt;/script&gt;&lt;img src=x onerror="));
    assert!(detail.contains("&lt;/script&gt;&lt;script&gt;document.title='pwned'"));
    assert!(detail.contains("Rule trace"));
    assert!(detail.contains("r&lt;/script&gt;"));
    assert!(detail.contains("#3 &lt;op&gt; (a&lt;b&gt;.jsonl:42)"));
    // The letter says what it stands on: one of the two dimensions did not apply.
    assert!(detail.contains("grade A on 1 of 2 dimensions"), "{detail}");
    assert!(!dom.contains("<img"), "a text became an element");
    assert!(!dom.contains("pwned</title>"));
}

#[test]
fn a_report_reads_a_json_document_and_cleos_own_grades() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("r.json").to_string_lossy().into_owned();
    let mut args = vec!["--format", "json", "-o", &json, "--all", "--no-record"];
    args.extend(["--source", CORPUS, "--rubric", "cleo-v2"]);
    let out = run(&args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // CLEO's own grader writes no rubric and no percent: the rubric is named after the file.
    let cleos = common::fixture("conformance/cleo-v1.expected.jsonl");
    let cleos_arg = cleos.to_string_lossy().into_owned();
    let page = dir.path().join("p.html");
    let page_arg = page.to_string_lossy().into_owned();
    let out = run(&["report", &json, &cleos_arg, "--html", &page_arg]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let data = embedded(&std::fs::read_to_string(&page).unwrap());
    assert_eq!(data["rubrics"][0]["id"], "cleo-v2");
    assert_eq!(data["rubrics"][1]["id"], "cleo-v1.expected");
    assert_eq!(data["rubrics"].as_array().map(Vec::len), Some(2));
    assert_eq!(data["explained"], false);
    let expected = json_lines(&std::fs::read_to_string(&cleos).unwrap()).len();
    assert_eq!(data["rubrics"][1]["stats"]["sessions"], expected);
}
