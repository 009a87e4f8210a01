//! Judge panels: several judges (`--judge`, `--judge-cmd`, repeated) score every chunk, and
//! each judged dimension's score is theirs combined (`panel:` in the pack's `judge`, or
//! `--panel`). Checked against `tests/fixtures/panel/reference.json` (numpy for the
//! combined scores, the `krippendorff` package for the inter-judge alpha) on the
//! calibration batch judged by three stand-in judges; two built-in judges against the
//! stand-in model server grade, cache per judge and report what each cost; `calibrate`
//! compares the panel and each of its judges with people.
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

/// langfuse-v1's judged dimensions, as the reference names them.
fn dimensions() -> Vec<String> {
    reference()["a,b"]["alpha"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

fn sessions() -> PathBuf {
    fixture("calibrate/sessions.jsonl")
}

fn reference() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("panel/reference.json")).unwrap())
        .unwrap()
}

/// The judge command answering from `file` (`a.txt`, `b.txt`, `c.txt`), as run from the
/// repository's root.
fn judge(file: &str) -> String {
    format!("tests/fixtures/panel/judge.sh {file}")
}

/// Each judge's judgments: judge → session → dimension → score.
fn judged(file: &str) -> Value {
    let text = std::fs::read_to_string(fixture("panel").join(file)).unwrap();
    let mut out = serde_json::Map::new();
    for line in text.lines() {
        let (session, judgment) = line.split_once(' ').unwrap();
        let judgment: Value = serde_json::from_str(judgment).unwrap();
        let scores: serde_json::Map<String, Value> = dimensions()
            .iter()
            .map(|d| (d.clone(), judgment[d]["score"].clone()))
            .collect();
        out.insert(session.to_owned(), Value::Object(scores));
    }
    Value::Object(out)
}

fn close(what: &str, got: f64, want: f64) {
    assert!((got - want).abs() < 1e-9, "{what}: {got} vs {want}");
}

/// Runs `grade` over the batch with `rubric` and a panel of judge commands (`a.txt`…),
/// then `extra`.
fn grade_with(rubric: &str, files: &[&str], extra: &[&str]) -> std::process::Output {
    let sessions = sessions();
    let mut args: Vec<String> = [
        "--rubric",
        rubric,
        "--source",
        sessions.to_str().unwrap(),
        "--no-record",
    ]
    .map(str::to_owned)
    .to_vec();
    for file in files {
        args.extend(["--judge-cmd".to_owned(), judge(file)]);
    }
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&args)
}

/// Grades the batch with a panel of judge commands; the results and stderr.
fn grade_panel(files: &[&str], extra: &[&str]) -> (Vec<Value>, String) {
    let mut args = vec!["--all", "--format", "jsonl"];
    args.extend_from_slice(extra);
    let out = grade_with("langfuse-v1", files, &args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    (common::json_lines(&stdout(&out)), stderr(&out))
}

#[test]
fn a_panel_combines_each_dimension_as_the_reference_says_and_keeps_every_judges_score() {
    let reference = reference();
    let schema = common::grade_schema();
    for files in [&["a.txt", "b.txt"][..], &["a.txt", "b.txt", "c.txt"]] {
        let panel = files
            .iter()
            .map(|f| f.trim_end_matches(".txt"))
            .collect::<Vec<_>>()
            .join(",");
        let own: Vec<Value> = files.iter().map(|f| judged(f)).collect();
        for how in ["mean", "median", "min", "max"] {
            let (results, _) = grade_panel(files, &["--panel", how]);
            assert_eq!(results.len(), 12);
            for r in &results {
                common::assert_valid_grade(&schema, r);
                let session = r["sessionId"].as_str().unwrap();
                assert_eq!(r.get("judge"), None, "a panel's cost is per judge");
                assert_eq!(r["panel"]["combine"], how);
                let names: Vec<&str> = r["panel"]["judges"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|j| j["model"].as_str().unwrap())
                    .collect();
                let want: Vec<String> = files.iter().map(|f| judge(f)).collect();
                assert_eq!(names, want);
                for j in r["panel"]["judges"].as_array().unwrap() {
                    assert_eq!(
                        (&j["runs"], &j["replies"], &j["inputTokens"]),
                        (&json!(1), &json!(1), &json!(0))
                    );
                }
                for d in &dimensions() {
                    let dim = &r["dimensions"][d];
                    let want = reference[&panel]["scores"][d][how][session]
                        .as_f64()
                        .unwrap();
                    close(
                        &format!("{panel} {how} {session} {d}"),
                        dim["score"].as_f64().unwrap(),
                        want,
                    );
                    let members = dim["panel"].as_array().unwrap();
                    assert_eq!(members.len(), files.len());
                    let scores: Vec<f64> = members
                        .iter()
                        .map(|m| m["score"].as_f64().unwrap())
                        .collect();
                    for (i, m) in members.iter().enumerate() {
                        assert_eq!(m["judge"], judge(files[i]));
                        assert_eq!(
                            m["score"].as_f64(),
                            own[i][session][d].as_f64(),
                            "{session} {d}"
                        );
                    }
                    let lo = scores.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    assert_eq!(
                        (dim["spread"]["min"].as_f64(), dim["spread"]["max"].as_f64()),
                        (Some(lo), Some(hi))
                    );
                    // The words beside the score are those of a judge that gave (nearest) it.
                    let speaker = members
                        .iter()
                        .find(|m| m["rationale"] == dim["rationale"])
                        .expect("the rationale is a judge's");
                    let nearest = scores
                        .iter()
                        .map(|s| (s - want).abs())
                        .fold(f64::INFINITY, f64::min);
                    assert!(
                        (speaker["score"].as_f64().unwrap() - want).abs() <= nearest + 1e-9,
                        "{session} {d}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_inter_judge_alpha_is_the_krippendorff_packages_and_each_judges_runs_are_kept() {
    let reference = reference();
    let dir = tempfile::tempdir().unwrap();
    let agreement = dir.path().join("agreement.json");
    let (results, err) = grade_panel(
        &["a.txt", "b.txt", "c.txt"],
        &[
            "--judge-runs",
            "2",
            "--agreement",
            agreement.to_str().unwrap(),
        ],
    );
    // Each judge asked twice per session: its runs agree (the stand-ins are deterministic),
    // and its entry in the panel says so.
    for r in &results {
        for j in r["panel"]["judges"].as_array().unwrap() {
            assert_eq!((&j["runs"], &j["replies"]), (&json!(2), &json!(2)));
        }
        for d in &dimensions() {
            for m in r["dimensions"][d]["panel"].as_array().unwrap() {
                assert_eq!(m["spread"]["sd"], json!(0.0), "{m}");
            }
        }
    }
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&agreement).unwrap()).unwrap();
    assert_eq!(doc["combine"], "mean");
    assert_eq!(doc["sessions"], 12);
    assert_eq!(doc["runs"], 2);
    assert_eq!(
        doc["judges"],
        json!([judge("a.txt"), judge("b.txt"), judge("c.txt")])
    );
    for a in doc["dimensions"].as_array().unwrap() {
        let d = a["dimension"].as_str().unwrap();
        close(
            d,
            a["alpha"].as_f64().unwrap(),
            reference["a,b,c"]["alpha"][d].as_f64().unwrap(),
        );
        assert_eq!(a["sessions"], 12);
    }
    let runs = doc["runAgreement"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for r in runs {
        for a in r["dimensions"].as_array().unwrap() {
            assert_eq!(a["alpha"], json!(1.0), "{r}");
        }
    }
    // On stderr, as the runs' agreement is printed: each judge's runs, then the panel.
    assert_eq!(
        err.matches("agreement of 2 runs of judge").count(),
        3,
        "{err}"
    );
    let panel = &err[err
        .find("agreement among the panel's 3 judges")
        .expect(&err)..];
    for d in &dimensions() {
        let alpha = reference["a,b,c"]["alpha"][d].as_f64().unwrap();
        let line = panel
            .lines()
            .find(|l| l.trim_start().starts_with(d))
            .unwrap();
        assert!(line.ends_with(&format!("{alpha:.3}")), "{line}");
    }
}

/// The pack's `panel:` decides unless `--panel` is given.
#[test]
fn the_packs_panel_setting_combines_unless_the_flag_overrides_it() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("strict");
    std::fs::create_dir(&pack).unwrap();
    for file in ["rubric.yaml", "scorer.prompt.md"] {
        let mut text =
            std::fs::read_to_string(common::repo_root().join("rubrics/langfuse-v1").join(file))
                .unwrap();
        if file == "rubric.yaml" {
            text = text.replacen("judge:\n", "judge:\n  panel: min\n", 1);
            assert!(text.contains("panel: min"));
        }
        std::fs::write(pack.join(file), text).unwrap();
    }
    let shown = run(&["rubric", "show", pack.to_str().unwrap()]);
    assert!(
        stdout(&shown).contains("a panel of judges combines by `min`"),
        "{}",
        stdout(&shown)
    );
    let reference = reference();
    for (flag, how) in [(None, "min"), (Some("max"), "max")] {
        let mut args = vec!["--all", "--format", "jsonl"];
        if let Some(flag) = flag {
            args.extend(["--panel", flag]);
        }
        let out = grade_with(pack.to_str().unwrap(), &["a.txt", "b.txt"], &args);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        for r in common::json_lines(&stdout(&out)) {
            assert_eq!(r["panel"]["combine"], how);
            let session = r["sessionId"].as_str().unwrap();
            for d in &dimensions() {
                close(
                    &format!("{how} {session} {d}"),
                    r["dimensions"][d]["score"].as_f64().unwrap(),
                    reference["a,b"]["scores"][d][how][session]
                        .as_f64()
                        .unwrap(),
                );
            }
        }
    }
}

#[test]
fn panel_human_report() {
    let out = grade_with(
        "langfuse-v1",
        &["a.txt", "b.txt", "c.txt"],
        &["--panel", "median", "cal-01"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "one session: no agreement to report");
    insta::assert_snapshot!(
        "panel_human_report",
        common::without_grading_time(&stdout(&out))
    );
}

#[test]
fn a_panel_is_refused_when_it_would_mean_nothing() {
    let sessions = sessions();
    let sessions = sessions.to_str().unwrap();
    let a = judge("a.txt");
    let base = ["--rubric", "langfuse-v1", "--source", sessions, "--all"];
    let refused = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let out = run(&args);
        assert_eq!(code(&out), 2, "{extra:?}: {}", stdout(&out));
        stderr(&out)
    };
    assert_eq!(
        refused(&["--judge-cmd", &a, "--judge-cmd", &a]),
        format!("error[E201]: judge `{a}` is given twice: a panel's judges differ (another model, or the same one with `,temperature=T`)\n")
    );
    assert!(refused(&["--judge-cmd", &a, "--panel", "max"]).contains(
        "`--panel` combines the scores of a panel of judges, and fewer than two are asked"
    ));
    assert!(refused(&["--judge", "openai:m,top_p=1"])
        .contains("unknown option `top_p=1`; a judge takes `,temperature=T` and `,max_tokens=N`"));
    assert!(
        refused(&["--judge-cmd", &a, "--agreement", "x.json"]).contains(
            "`--agreement` reports how repeated runs or a panel's judges agree: give `--judge-runs 2` or more, or a second judge"
        )
    );
}

/// Answers each session's scorer prompt, on the Messages API and on Chat Completions, with
/// the judgment the judge's model (or temperature) stands for: model `judge-a` (or any
/// model at a temperature below 0.5) answers from `a.txt`, the others from `b.txt`.
fn model_server() -> stand_in::Server {
    let judgments = |file: &str| -> Value {
        let text = std::fs::read_to_string(fixture("panel").join(file)).unwrap();
        let mut out = serde_json::Map::new();
        for line in text.lines() {
            let (session, judgment) = line.split_once(' ').unwrap();
            out.insert(session.to_owned(), serde_json::from_str(judgment).unwrap());
        }
        Value::Object(out)
    };
    let (a, b) = (judgments("a.txt"), judgments("b.txt"));
    serve(move |request: &Request| {
        let body = request.json();
        let prompt = body["messages"][0]["content"].as_str().unwrap_or_default();
        let session = prompt
            .lines()
            .find_map(|l| l.strip_prefix("- **Session ID**: "))
            .unwrap_or_default()
            .trim();
        let first =
            body["model"] == "judge-a" || body["temperature"].as_f64().is_some_and(|t| t < 0.5);
        let text = if first { &a } else { &b }[session].to_string();
        if request.path == "/v1/messages" {
            Response::json(
                200,
                &json!({"id": "msg_test", "type": "message", "role": "assistant", "model": body["model"],
                        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                        "usage": {"input_tokens": 900, "output_tokens": 150}}),
            )
        } else {
            Response::json(
                200,
                &json!({"id": "chatcmpl-test", "object": "chat.completion", "model": body["model"],
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 1000, "completion_tokens": 200}}),
            )
        }
    })
}

fn grade_models(server: &stand_in::Server, cache: &Path, judges: &[&str]) -> std::process::Output {
    let sessions = sessions();
    let mut args = vec![
        "--rubric".to_owned(),
        "langfuse-v1".to_owned(),
        "--source".to_owned(),
        sessions.display().to_string(),
        "--all".to_owned(),
        "--format".to_owned(),
        "jsonl".to_owned(),
        "--no-record".to_owned(),
        "--judge-jobs".to_owned(),
        "4".to_owned(),
    ];
    for j in judges {
        args.extend(["--judge".to_owned(), j.to_string()]);
    }
    grade_bin()
        .current_dir(common::repo_root())
        .env("ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url))
        .env("OPENAI_API_KEY", "sk-test")
        .env("XDG_CACHE_HOME", cache)
        .args(&args)
        .output()
        .unwrap()
}

#[test]
fn a_panel_of_two_built_in_judges_grades_caches_per_judge_and_reports_alpha() {
    let server = model_server();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let reference = reference();
    let judges = ["anthropic:judge-a", "openai:judge-b"];
    let out = grade_models(&server, &cache, &judges);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 24, "each judge asked once per session");
    assert_eq!(
        requests.iter().filter(|r| r.path == "/v1/messages").count(),
        12
    );
    let results = common::json_lines(&stdout(&out));
    assert_eq!(results.len(), 12);
    let schema = common::grade_schema();
    for r in &results {
        common::assert_valid_grade(&schema, r);
        assert_eq!(
            r["panel"],
            json!({"combine": "mean", "judges": [
                {"model": "anthropic:judge-a", "runs": 1, "replies": 1, "inputTokens": 900, "outputTokens": 150, "cached": 0},
                {"model": "openai:judge-b", "runs": 1, "replies": 1, "inputTokens": 1000, "outputTokens": 200, "cached": 0},
            ]})
        );
        let session = r["sessionId"].as_str().unwrap();
        for d in &dimensions() {
            close(
                &format!("{session} {d}"),
                r["dimensions"][d]["score"].as_f64().unwrap(),
                reference["a,b"]["scores"][d]["mean"][session]
                    .as_f64()
                    .unwrap(),
            );
        }
    }
    let err = stderr(&out);
    assert!(
        err.contains("agreement among the panel's 2 judges (`anthropic:judge-a`, `openai:judge-b`) over 12 sessions"),
        "{err}"
    );
    for d in &dimensions() {
        let alpha = reference["a,b"]["alpha"][d].as_f64().unwrap();
        assert!(err.contains(&format!("{alpha:.3}\n")), "{d}: {err}");
    }

    // Again: every reply comes from each judge's own cache entries, and costs nothing.
    let again = grade_models(&server, &cache, &judges);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert_eq!(server.requests().len(), 24, "nothing asked the second time");
    for (first, second) in results.iter().zip(common::json_lines(&stdout(&again))) {
        for j in second["panel"]["judges"].as_array().unwrap() {
            assert_eq!(
                (&j["cached"], &j["inputTokens"], &j["outputTokens"]),
                (&json!(1), &json!(0), &json!(0))
            );
        }
        assert_eq!(first["dimensions"], second["dimensions"]);
    }

    // One model at two temperatures is two judges: each asked with its own temperature,
    // each kept apart in the cache (neither is the plain model's entry above).
    let warm = [
        "openai:judge-c,temperature=0.2",
        "openai:judge-c,temperature=0.9",
    ];
    let out = grade_models(&server, &cache, &warm);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let asked: Vec<f64> = server.requests()[24..]
        .iter()
        .map(|r| r.json()["temperature"].as_f64().unwrap())
        .collect();
    assert_eq!(asked.len(), 24);
    assert_eq!(asked.iter().filter(|t| **t == 0.2).count(), 12);
    for r in common::json_lines(&stdout(&out)) {
        let names: Vec<&Value> = r["panel"]["judges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| &j["model"])
            .collect();
        assert_eq!(names, warm);
        let session = r["sessionId"].as_str().unwrap();
        close(
            session,
            r["dimensions"]["output_quality"]["score"].as_f64().unwrap(),
            reference["a,b"]["scores"]["output_quality"]["mean"][session]
                .as_f64()
                .unwrap(),
        );
    }
}

/// `calibrate` reads a panel's results as the panel and each of its judges.
#[test]
fn calibrate_compares_the_panel_and_each_judge_with_people() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (judge("a.txt"), judge("b.txt"));
    let results = dir.path().join("panel.jsonl");
    let out = grade_with(
        "langfuse-v1",
        &["a.txt", "b.txt"],
        &[
            "--all",
            "--format",
            "jsonl",
            "-o",
            results.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let labels = fixture("calibrate/labels.jsonl");
    let out = run(&[
        "calibrate",
        "--rubric",
        "langfuse-v1",
        "--results",
        results.to_str().unwrap(),
        "--labels",
        labels.to_str().unwrap(),
        "--format",
        "json",
        "--resamples",
        "100",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = report["judges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["judge"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["panel", a.as_str(), b.as_str()]);
    // Judge `a` is the calibration batch's own judge: its figures are the reference's.
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("calibrate/expected.json")).unwrap())
            .unwrap();
    let goal = report["judges"][1]["dimensions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["dimension"] == "goal_achievement")
        .unwrap();
    close(
        "kappa quadratic of judge a",
        goal["categorical"]["kappaQuadratic"]["value"]
            .as_f64()
            .unwrap(),
        expected["goal_achievement"]["kappaQuadratic"]
            .as_f64()
            .unwrap(),
    );
}
