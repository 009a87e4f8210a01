//! `grade calibrate` end to end: a batch graded by a stand-in judge against three
//! annotators' labels reproduces the figures of scikit-learn, SciPy and `krippendorff`
//! (`tests/fixtures/calibrate/make_fixture.py`); the JSON against its schema; the gate's exit
//! codes; bad labels counted and named; the HTML report escaped; labels from the Langfuse
//! stand-in through the v4 endpoint and the v3 fallback.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;
use crate::stand_in;

use std::path::{Path, PathBuf};

use common::{code, fixture, grade_bin, run, stderr, stdout};
use serde_json::{json, Value};
use stand_in::{serve, Request, Response};

fn fixtures() -> PathBuf {
    fixture("calibrate")
}

/// The batch graded by the stand-in judge, as `grade … --format jsonl` writes it.
fn results(dir: &Path) -> PathBuf {
    let judge = fixtures().join("judge.sh");
    let sessions = fixtures().join("sessions.jsonl");
    let out = run(&[
        "--rubric",
        "langfuse-v1",
        "--source",
        sessions.to_str().unwrap(),
        "--all",
        "--judge-cmd",
        judge.to_str().unwrap(),
        "--format",
        "jsonl",
        "--no-record",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let path = dir.join("results.jsonl");
    std::fs::write(&path, out.stdout).unwrap();
    path
}

fn calibrate(args: &[&str]) -> std::process::Output {
    let mut all = vec!["calibrate", "--rubric", "langfuse-v1"];
    all.extend_from_slice(args);
    run(&all)
}

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(common::repo_root().join("schemas/calibration.schema.json"))
        .unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

fn assert_valid(report: &Value) {
    let errors: Vec<String> = schema()
        .iter_errors(report)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

fn close(name: &str, got: &Value, want: &Value) {
    match (got.as_f64(), want.as_f64()) {
        (Some(g), Some(w)) => assert!((g - w).abs() < 1e-9, "{name}: {g} vs {w}"),
        _ => assert_eq!(got, want, "{name}"),
    }
}

fn check_against_reference(judge: &Value) {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("expected.json")).unwrap())
            .unwrap();
    let dims = judge["dimensions"].as_array().unwrap();
    assert_eq!(
        dims.len(),
        6,
        "the aggregate is not labelled, so not compared"
    );
    for d in dims {
        let id = d["dimension"].as_str().unwrap();
        let want = &expected[id];
        assert_eq!(d["pairs"], want["n"], "{id}");
        assert_eq!(d["sessions"], want["sessions"], "{id}");
        close(&format!("{id} mae"), &d["mae"], &want["mae"]);
        close(&format!("{id} bias"), &d["bias"], &want["bias"]);
        let level = d["metric"].as_str().unwrap();
        close(
            &format!("{id} alpha"),
            &d["alpha"]["value"],
            &want["alphaAll"][level],
        );
        close(
            &format!("{id} alpha annotators"),
            &d["alphaAnnotators"]["value"],
            &want["alphaAnnotators"][level],
        );
        if let Some(c) = d.get("categorical") {
            close(&format!("{id} kappa"), &c["kappa"]["value"], &want["kappa"]);
            close(
                &format!("{id} kappa quadratic"),
                &c["kappaQuadratic"]["value"],
                &want["kappaQuadratic"],
            );
            assert_eq!(c["confusion"]["matrix"], want["confusion"], "{id}");
            close(&format!("{id} exact"), &c["exact"], &want["exact"]);
            close(
                &format!("{id} within one"),
                &c["withinOne"],
                &want["withinOne"],
            );
        } else {
            close(
                &format!("{id} pearson"),
                &d["numeric"]["pearson"]["value"],
                &want["pearson"],
            );
            close(
                &format!("{id} spearman"),
                &d["numeric"]["spearman"]["value"],
                &want["spearman"],
            );
        }
    }
}

#[test]
fn calibrate_reproduces_the_reference_figures_from_results_and_from_judgments() {
    let dir = tempfile::tempdir().unwrap();
    let results = results(dir.path());
    let labels = fixtures().join("labels.jsonl");
    let judgments = fixtures().join("judgments.json");
    let out = calibrate(&[
        "--results",
        &format!("graded={}", results.display()),
        "--judgments",
        &format!("asked={}", judgments.display()),
        "--labels",
        labels.to_str().unwrap(),
        "--format",
        "json",
        "--resamples",
        "300",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "every label pairs");
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_valid(&report);
    assert_eq!(report["annotators"], json!(["ana", "ben", "cy"]));
    assert_eq!(report["labels"], 32);
    let judges = report["judges"].as_array().unwrap();
    assert_eq!(judges.len(), 2);
    assert_eq!(judges[0]["judge"], "graded");
    assert_eq!(judges[1]["judge"], "asked");
    for judge in judges {
        check_against_reference(judge);
    }
    // Each interval holds its figure, and the disagreements carry the judge's words.
    for d in judges[0]["dimensions"].as_array().unwrap() {
        let alpha = &d["alpha"];
        let (v, lo, hi) = (
            alpha["value"].as_f64().unwrap(),
            alpha["interval"]["low"].as_f64().unwrap(),
            alpha["interval"]["high"].as_f64().unwrap(),
        );
        assert!(
            lo <= v && v <= hi,
            "{}: {v} not in [{lo}, {hi}]",
            d["dimension"]
        );
    }
    let first = &report["disagreements"][0];
    assert_eq!(first["sessionId"], "cal-12");
    assert_eq!(first["dimension"], "goal_achievement");
    assert_eq!(
        first["rationale"],
        "The judge's reason for goal_achievement in cal-12."
    );
    assert_eq!(report["gate"], json!({"passed": true, "failures": []}));
}

#[test]
fn calibrate_human_report() {
    let dir = tempfile::tempdir().unwrap();
    let results = results(dir.path());
    let labels = fixtures().join("labels.jsonl");
    let out = calibrate(&[
        "--results",
        &format!("stand-in={}", results.display()),
        "--labels",
        labels.to_str().unwrap(),
        "--resamples",
        "500",
        "--top",
        "3",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    insta::assert_snapshot!("calibrate_human", stdout(&out));
}

#[test]
fn the_gate_names_the_dimensions_below_it_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let results = results(dir.path());
    let results = results.to_str().unwrap();
    let labels = fixtures().join("labels.jsonl");
    let labels = labels.to_str().unwrap();
    let base = [
        "--results",
        results,
        "--labels",
        labels,
        "--resamples",
        "50",
    ];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        calibrate(&args)
    };
    // goal_achievement's quadratic κ is 0.771, error_handling's 0.909.
    let out = with(&["--min-kappa", "0.8"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error[E202]: calibration below the gate: `goal_achievement`: quadratic κ 0.771 is below 0.8\n"
    );
    assert!(stdout(&out).contains("below the gate:"));
    let out = with(&["--min-kappa", "error_handling=0.9", "--min-alpha", "0.65"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = with(&["--min-alpha", "0.8", "--format", "json"]);
    assert_eq!(code(&out), 1);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        report["gate"]["failures"],
        json!([
            "`goal_achievement`: α 0.689 is below 0.8",
            "`process_adherence`: α 0.789 is below 0.8"
        ])
    );
    for (flag, value, message) in [
        ("--min-kappa", "tool_efficiency=0.5", "`--min-kappa tool_efficiency=0.5`: `tool_efficiency` is numeric and has no κ; gate it with `--min-alpha tool_efficiency=X`"),
        ("--min-alpha", "nope=0.5", "`--min-alpha nope=0.5`: rubric `langfuse-v1` judges no dimension `nope`"),
        ("--min-kappa", "2", "`--min-kappa 2`: the least value is a number from -1 to 1"),
    ] {
        let out = with(&[flag, value]);
        assert_eq!(code(&out), 2, "{value}");
        assert!(stderr(&out).contains(message), "{}", stderr(&out));
    }
}

#[test]
fn labels_that_cannot_pair_are_counted_and_named_and_a_file_that_is_not_labels_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let results = results(dir.path());
    let results = results.to_str().unwrap();
    let labels = dir.path().join("labels.jsonl");
    std::fs::write(
        &labels,
        [
            r#"{"sessionId":"cal-01","annotator":"ana","scores":{"goal_achievement":"failed","helpfulness":3}}"#,
            r#"{"sessionId":"cal-01","annotator":"ana","scores":{"goal_achievement":2}}"#,
            r#"{"sessionId":"cal-02","annotator":"ana","scores":{"goal_achievement":"brilliant","tool_efficiency":1.5}}"#,
            r#"{"sessionId":"cal-03","annotator":"ana","scores":{"goal_achievement":1}}"#,
            r#"{"sessionId":"nobody-graded","annotator":"ana","scores":{"goal_achievement":1}}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let out = calibrate(&[
        "--results",
        results,
        "--labels",
        labels.to_str().unwrap(),
        "--resamples",
        "20",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let warnings = stderr(&out);
    for line in [
        "warning: sessions labelled that have no result: their labels pair with nothing (1): `nobody-graded`\n",
        "warning: results that no usable label scores: they are left out of the figures (10): `cal-02`, `cal-04`",
        "warning: scores of dimensions rubric `langfuse-v1` does not judge: `helpfulness` (1) (1): `helpfulness`\n",
        "warning: scores that are not one of the dimension's categories, or outside its range: left out (2): `cal-02/ana/goal_achievement = \"brilliant\"`, `cal-02/ana/tool_efficiency = 1.5`\n",
        "warning: a second score by the same annotator for the same session and dimension: the first is kept (1): `cal-01/ana/goal_achievement (",
    ] {
        assert!(warnings.contains(line), "{line}\nin\n{warnings}");
    }
    assert!(stdout(&out).contains("goal_achievement (categorical, 2 pairs over 2 sessions)"));

    // A results file given as labels is refused at its first line, naming it.
    let out = calibrate(&["--results", results, "--labels", results]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with(&format!(
            "error[E201]: {results}:1: not a label (`dimensions` is not a field of a label"
        )),
        "{}",
        stderr(&out)
    );
    // Labels without results to compare are a usage error, not an empty report.
    let out = calibrate(&["--labels", labels.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("give the judge's results"));
    // Results of another pack are refused.
    let other = dir.path().join("cleo.jsonl");
    let cleo = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        "examples/cleo-audit.jsonl",
        "--all",
        "--format",
        "jsonl",
        "--no-record",
    ]);
    std::fs::write(&other, cleo.stdout).unwrap();
    let out = calibrate(&[
        "--results",
        other.to_str().unwrap(),
        "--labels",
        labels.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("was graded with rubric `cleo-v1`, not `langfuse-v1`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_html_report_is_self_contained_and_escapes_every_text() {
    let dir = tempfile::tempdir().unwrap();
    let results = results(dir.path());
    let labels = dir.path().join("labels.jsonl");
    let mut text = std::fs::read_to_string(fixtures().join("labels.jsonl")).unwrap();
    text = text.replace("\"ana\"", "\"<script>alert('ana')</script>\"");
    std::fs::write(&labels, text).unwrap();
    let html = dir.path().join("report.html");
    let out = calibrate(&[
        "--results",
        &format!("<b>judge</b>={}", results.display()),
        "--labels",
        labels.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "--resamples",
        "50",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("<script"),
        "no script, and no annotator's text as markup"
    );
    assert!(page.contains("&lt;script&gt;alert('ana')&lt;/script&gt;"));
    assert!(page.contains("Judge <code>&lt;b&gt;judge&lt;/b&gt;</code>"));
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "no network"
    );
    assert_eq!(page.matches("<svg").count(), 6, "a scatter per dimension");
    assert_eq!(
        page.matches("class=\"matrix\"").count(),
        2,
        "a confusion matrix per categorical dimension"
    );
}

/// A Langfuse server with annotation scores: the v4 endpoint (`/api/public/v3/scores`),
/// or only the v3 server's (`/api/public/v2/scores`) when `v4` is false. Scores on traces
/// belong to the session the trace endpoint names.
fn langfuse(v4: bool) -> stand_in::Server {
    let labels = std::fs::read_to_string(fixtures().join("labels.jsonl")).unwrap();
    let mut scores = Vec::new();
    for (i, line) in labels.lines().enumerate() {
        let label: Value = serde_json::from_str(line).unwrap();
        for (name, value) in label["scores"].as_object().unwrap() {
            let session = label["sessionId"].as_str().unwrap();
            // Every other label is on the session's trace, the rest on the session.
            let on_trace = i % 2 == 0;
            scores.push(json!({
                "id": format!("score-{}", scores.len()),
                "name": name,
                "value": value,
                "session": session,
                "onTrace": on_trace,
                "author": label["annotator"],
            }));
        }
    }
    // An API score (the judge's own, pushed) is not a label and is filtered out by source.
    serve(move |request: &Request| {
        let source = request.param("source");
        if request.path.starts_with("/api/public/traces/") {
            let trace = request.path.trim_start_matches("/api/public/traces/");
            let session = trace.trim_start_matches("trace-of-");
            return Response::json(
                200,
                &json!({"id": trace, "sessionId": session, "observations": []}),
            );
        }
        if source != Some("ANNOTATION") {
            return Response::json(400, &json!({"message": "source missing"}));
        }
        let limit: usize = request
            .param("limit")
            .and_then(|l| l.parse().ok())
            .unwrap_or(50);
        let body = |s: &Value, v4: bool| {
            let categorical = s["value"].is_string();
            let session = s["session"].as_str().unwrap();
            let trace = format!("trace-of-{session}");
            if v4 {
                let subject = if s["onTrace"] == true {
                    json!({"kind": "trace", "id": trace})
                } else {
                    json!({"kind": "session", "id": session})
                };
                json!({"id": s["id"], "name": s["name"], "value": s["value"], "dataType": if categorical {"CATEGORICAL"} else {"NUMERIC"}, "source": "ANNOTATION", "subject": subject, "authorUserId": s["author"]})
            } else {
                let (trace_id, session_id) = if s["onTrace"] == true {
                    (json!(trace), Value::Null)
                } else {
                    (Value::Null, json!(session))
                };
                let (value, string) = if categorical {
                    (json!(0), s["value"].clone())
                } else {
                    (s["value"].clone(), Value::Null)
                };
                json!({"id": s["id"], "name": s["name"], "value": value, "stringValue": string, "dataType": if categorical {"CATEGORICAL"} else {"NUMERIC"}, "source": "ANNOTATION", "traceId": trace_id, "sessionId": session_id, "authorUserId": s["author"]})
            }
        };
        match (request.path.as_str(), v4) {
            ("/api/public/v3/scores", true) => {
                let start: usize = request
                    .param("cursor")
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
                let page: Vec<Value> = scores
                    .iter()
                    .skip(start)
                    .take(limit)
                    .map(|s| body(s, true))
                    .collect();
                let next = start + limit;
                let meta = if next < scores.len() {
                    json!({"limit": limit, "cursor": next.to_string()})
                } else {
                    json!({"limit": limit})
                };
                Response::json(200, &json!({"data": page, "meta": meta}))
            }
            ("/api/public/v2/scores", false) => {
                let page: usize = request
                    .param("page")
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(1);
                let data: Vec<Value> = scores
                    .iter()
                    .skip((page - 1) * limit)
                    .take(limit)
                    .map(|s| body(s, false))
                    .collect();
                let total = scores.len().div_ceil(limit);
                Response::json(
                    200,
                    &json!({"data": data, "meta": {"page": page, "limit": limit, "totalItems": scores.len(), "totalPages": total}}),
                )
            }
            _ => Response::json(404, &json!({"message": "not found"})),
        }
    })
}

#[test]
fn labels_from_langfuse_annotation_scores_match_the_file_through_v4_and_the_v3_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let results = results(dir.path());
    let labels = fixtures().join("labels.jsonl");
    let from_file = calibrate(&[
        "--results",
        results.to_str().unwrap(),
        "--labels",
        labels.to_str().unwrap(),
        "--format",
        "json",
        "--resamples",
        "100",
    ]);
    let from_file: Value = serde_json::from_str(&stdout(&from_file)).unwrap();
    for v4 in [true, false] {
        let server = langfuse(v4);
        let out = grade_bin()
            .current_dir(common::repo_root())
            .env("LANGFUSE_BASE_URL", &server.url)
            .env("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
            .env("LANGFUSE_SECRET_KEY", "sk-lf-test")
            .args([
                "calibrate",
                "--rubric",
                "langfuse-v1",
                "--results",
                results.to_str().unwrap(),
                "--labels",
                "langfuse",
                "--format",
                "json",
                "--resamples",
                "100",
            ])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "v4 {v4}: {}", stderr(&out));
        let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
        // One score a dimension, not a line a session: more labels, the same pairs and figures.
        assert_eq!(report["labels"], 160, "v4 {v4}");
        assert_eq!(report["judges"], from_file["judges"], "v4 {v4}");
        let requests = server.requests();
        let asked: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
        if v4 {
            assert!(asked.iter().all(|p| *p != "/api/public/v2/scores"));
            assert!(requests
                .iter()
                .any(|r| r.param("fields") == Some("subject,annotation")));
        } else {
            assert_eq!(asked[0], "/api/public/v3/scores", "v4 asked first");
        }
        // Each trace's session is asked once.
        let traces = asked
            .iter()
            .filter(|p| p.starts_with("/api/public/traces/"))
            .count();
        assert_eq!(traces, 6, "v4 {v4}: {asked:?}");
    }
}

/// A model stand-in (OpenAI Chat Completions) that answers each session's scorer prompt
/// with that session's judgment from the committed batch.
fn model() -> stand_in::Server {
    let judgments: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("judgments.json")).unwrap())
            .unwrap();
    serve(move |request: &Request| {
        let prompt = request.json()["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let session = prompt
            .lines()
            .find_map(|l| l.strip_prefix("- **Session ID**: "))
            .unwrap_or_default()
            .trim();
        Response::json(
            200,
            &json!({
                "id": "chatcmpl-test", "object": "chat.completion", "model": "judge-model",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": judgments[session].to_string()}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}
            }),
        )
    })
}

/// The commands of the Phase 3 walk in `docs/judging.md`, as written.
fn walk_commands() -> Vec<Vec<String>> {
    let doc = std::fs::read_to_string(common::repo_root().join("docs/judging.md")).unwrap();
    let after = &doc[doc.find("### The Phase 3 walk").expect("the walk")..];
    let start = after.find("```sh\n").expect("a sh block") + "```sh\n".len();
    let block = &after[start..];
    block[..block.find("```").expect("the block ends")]
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect()
}

#[test]
fn the_phase_3_walk_in_the_docs_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixtures().join("sessions.jsonl"),
        dir.path().join("sessions.jsonl"),
    )
    .unwrap();
    let judge = model();
    let lf = langfuse(true);
    let commands = walk_commands();
    assert_eq!(commands.len(), 3);
    let mut outputs = Vec::new();
    for command in &commands {
        assert_eq!(command[0], "grade", "{command:?}");
        let out = grade_bin()
            .current_dir(dir.path())
            .env("OPENAI_BASE_URL", format!("{}/v1", judge.url))
            .env("OPENAI_API_KEY", "sk-test")
            .env("LANGFUSE_BASE_URL", &lf.url)
            .env("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
            .env("LANGFUSE_SECRET_KEY", "sk-lf-test")
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .args(&command[1..])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{command:?}: {}", stderr(&out));
        outputs.push(out);
    }
    // 1: every session judged by the model, what it cost on each result.
    let results = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
    let results: Vec<Value> = common::json_lines(&results);
    assert_eq!(results.len(), 12);
    assert_eq!(results[0]["judge"]["model"], "openai:judge-model");
    assert_eq!(judge.requests().len(), 12);
    // 2: the report names the judge by its model, and the page is written.
    let report = stdout(&outputs[1]);
    assert!(report.contains("judge `openai:judge-model`"), "{report}");
    assert!(report.contains("κ quadratic     0.771 ["), "{report}");
    assert!(dir.path().join("calibration.html").exists());
    // 3: the gate passes, in the JSON written.
    let gated: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("calibration.json")).unwrap(),
    )
    .unwrap();
    assert_valid(&gated);
    assert_eq!(gated["gate"]["passed"], true);
    // Step 1 again asks the model nothing: its replies are cached.
    let again = grade_bin()
        .current_dir(dir.path())
        .env("OPENAI_BASE_URL", format!("{}/v1", judge.url))
        .env("OPENAI_API_KEY", "sk-test")
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .args(&commands[0][1..])
        .output()
        .unwrap();
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert_eq!(judge.requests().len(), 12);
}
