//! The six-dimension session-quality pack: judgments (single and chunked) against the
//! design's formula computed by hand, refusal of every kind of invalid judgment, the scorer
//! prompt and a judge command end to end, and the Langfuse bodies and push, checked against
//! Langfuse's own OpenAPI schemas (a copy in `tests/fixtures/langfuse/`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use common::*;
use serde_json::{json, Value};

const TRANSCRIPT: &str =
    "rubrics/claude-code-v1/tests/real/claude_code_transcripts/real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";
const SMALL_BUDGET: &str = "tests/fixtures/packs/langfuse-small-budget";
const JUDGE: &str = "tests/fixtures/judge/judge.sh";

fn dims(scores: [Value; 6]) -> Value {
    let names = [
        "goal_achievement",
        "tool_efficiency",
        "process_adherence",
        "context_efficiency",
        "error_handling",
        "output_quality",
    ];
    let mut out = serde_json::Map::new();
    for (name, score) in names.iter().zip(scores) {
        out.insert(
            (*name).to_owned(),
            json!({"score": score, "evidence": [format!("{name} evidence")], "rationale": format!("{name} rationale")}),
        );
    }
    Value::Object(out)
}

fn write_judgment(dir: &std::path::Path, name: &str, value: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

fn grade_json(args: &[&str]) -> Value {
    let out = run(args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("json result")
}

/// A complete, valid judgment; its overall is 0.735.
fn typical() -> Value {
    dims([
        json!(2),
        json!(0.8),
        json!(0.7),
        json!(0.6),
        json!(3),
        json!(0.9),
    ])
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn a_single_judgment_gives_the_designs_weighted_overall() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_judgment(dir.path(), "j.json", &typical());
    let r = grade_json(&[
        "--rubric",
        "langfuse-v1",
        "--judgment",
        &file,
        "--no-record",
        "--format",
        "json",
        "session-x",
    ]);
    // By hand: 2/3·0.30 + 0.8·0.20 + 0.7·0.20 + 0.6·0.15 + 3/3·0.10 + 0.9·0.05
    let expected =
        2.0 / 3.0 * 0.30 + 0.8 * 0.20 + 0.7 * 0.20 + 0.6 * 0.15 + 1.0 * 0.10 + 0.9 * 0.05;
    assert!(
        close(r["totalScore"].as_f64().unwrap(), expected),
        "{} vs {expected}",
        r["totalScore"]
    );
    assert!(close(expected, 0.735));
    assert_eq!(r["maxScore"], 1);
    assert_eq!(r["percent"], 73.5);
    assert_eq!(r["grade"], "C");
    assert_eq!(
        r["entryCount"], 0,
        "no source: the grade rests on the judgment alone"
    );
    let goal = &r["dimensions"]["goal_achievement"];
    assert_eq!(goal["score"], 2);
    assert_eq!(goal["label"], "complete");
    assert!(close(goal["normalized"].as_f64().unwrap(), 2.0 / 3.0));
    assert_eq!(goal["weight"], 0.3);
    assert_eq!(goal["rationale"], "goal_achievement rationale");
    assert_eq!(goal["evidence"], json!(["goal_achievement evidence"]));
    assert_eq!(r["dimensions"]["error_handling"]["label"], "prevented");
    assert_valid_grade(&grade_schema(), &r);
}

#[test]
fn chunked_judgments_average_numbers_and_keep_the_last_category() {
    let dir = tempfile::tempdir().unwrap();
    let first = dims([
        json!(1),
        json!(0.6),
        json!(0.5),
        json!(0.4),
        json!(1),
        json!(0.5),
    ]);
    let last = dims([
        json!(3),
        json!(1.0),
        json!(0.9),
        json!(0.8),
        json!(2),
        json!(0.7),
    ]);
    let file = write_judgment(dir.path(), "chunks.json", &json!([first, last]));
    let r = grade_json(&[
        "--rubric",
        "langfuse-v1",
        "--judgment",
        &file,
        "--no-record",
        "--format",
        "json",
        "session-x",
    ]);
    // Numeric: mean over chunks; categorical: the last chunk's.
    let expected = 3.0 / 3.0 * 0.30
        + (0.6 + 1.0) / 2.0 * 0.20
        + (0.5 + 0.9) / 2.0 * 0.20
        + (0.4 + 0.8) / 2.0 * 0.15
        + 2.0 / 3.0 * 0.10
        + (0.5 + 0.7) / 2.0 * 0.05;
    assert!(
        close(r["totalScore"].as_f64().unwrap(), expected),
        "{} vs {expected}",
        r["totalScore"]
    );
    assert!((expected - 0.786_666_666_666_666_7).abs() < 1e-12);
    assert_eq!(r["dimensions"]["goal_achievement"]["label"], "exceeded");
    assert_eq!(r["dimensions"]["error_handling"]["label"], "recovered");
    assert_eq!(
        r["dimensions"]["tool_efficiency"]["rationale"],
        "Average across 2 chunks"
    );
    assert_eq!(
        r["dimensions"]["tool_efficiency"]["evidence"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_valid_grade(&grade_schema(), &r);
}

#[test]
fn each_invalid_judgment_is_refused_naming_the_pointer_and_dimension() {
    let dir = tempfile::tempdir().unwrap();
    let good = typical();
    let with = |pointer: &str, value: Value| {
        let mut v = good.clone();
        *v.pointer_mut(pointer).unwrap() = value;
        v
    };
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("output_quality");
    let mut unknown = good.clone();
    unknown["vibes"] = json!({"score": 1, "evidence": [], "rationale": "x"});
    let cases: Vec<(&str, String, &[&str])> = vec![
        (
            "categorical 2.5",
            with("/goal_achievement/score", json!(2.5)).to_string(),
            &[
                "`/goal_achievement/score`",
                "2.5",
                "dimension `goal_achievement`",
            ],
        ),
        (
            "numeric 1.3",
            with("/tool_efficiency/score", json!(1.3)).to_string(),
            &[
                "`/tool_efficiency/score`",
                "1.3",
                "dimension `tool_efficiency`",
            ],
        ),
        (
            "numeric -0.1",
            with("/process_adherence/score", json!(-0.1)).to_string(),
            &[
                "`/process_adherence/score`",
                "-0.1",
                "dimension `process_adherence`",
            ],
        ),
        (
            "score as a string",
            with("/context_efficiency/score", json!("0.6")).to_string(),
            &[
                "`/context_efficiency/score`",
                "\"0.6\" is not of type \"number\"",
                "dimension `context_efficiency`",
            ],
        ),
        (
            "missing dimension",
            missing.to_string(),
            &[
                "\"output_quality\" is missing",
                "dimension `output_quality`",
            ],
        ),
        (
            "unknown dimension",
            unknown.to_string(),
            &["`vibes` is not a dimension of rubric `langfuse-v1`"],
        ),
        (
            "invalid JSON",
            "{\"goal_achievement\": {\"score\": 2,".to_owned(),
            &[
                "is not JSON",
                "it starts with `{\"goal_achievement\": {\"score\": 2,`",
            ],
        ),
        (
            "a chunk that is wrong",
            json!([good.clone(), with("/error_handling/score", json!(4))]).to_string(),
            &["`/1/error_handling/score`", "dimension `error_handling`"],
        ),
        ("an empty array", "[]".to_owned(), &["not an empty array"]),
        ("a bare number", "3".to_owned(), &["not a number"]),
    ];
    for (what, text, needles) in cases {
        let path = dir.path().join("bad.json");
        std::fs::write(&path, &text).unwrap();
        let out = run(&[
            "--rubric",
            "langfuse-v1",
            "--judgment",
            path.to_str().unwrap(),
            "--no-record",
            "s",
        ]);
        assert_eq!(code(&out), 2, "{what}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{what}: printed a result");
        let err = stderr(&out);
        assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
        for needle in needles {
            assert!(err.contains(needle), "{what}: `{needle}` not in: {err}");
        }
    }
}

#[test]
fn the_judgment_schema_file_is_the_one_the_pack_derives() {
    let out = run(&["rubric", "judgment-schema", "langfuse-v1"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let derived: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("schemas/judgment.schema.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(derived, file, "schemas/judgment.schema.json drifted from the pack: regenerate it with `grade rubric judgment-schema langfuse-v1`");
    let validator = jsonschema::validator_for(&file).unwrap();
    assert!(validator.is_valid(&typical()));
    assert!(!validator.is_valid(&dims([
        json!(2.5),
        json!(0.8),
        json!(0.7),
        json!(0.6),
        json!(3),
        json!(0.9)
    ])));
}

#[test]
fn the_scorer_prompt_is_rendered_from_a_real_transcript_and_chunked_past_the_budget() {
    let out = run(&[
        "--rubric",
        "langfuse-v1",
        "--source",
        TRANSCRIPT,
        "--all",
        "--print-prompt",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(
        text.matches("===== session `1af7fc5e-8455-4414-9ccd-011d40f70b2a`, prompt")
            .count(),
        1
    );
    assert!(text.contains("- **Chunk**: 1 of 1"), "{text}");
    assert!(
        text.contains("init is analyzing your codebase"),
        "the first user message is the task context"
    );
    assert!(
        text.contains("tool.Write FAILED"),
        "the summary shows the failed write"
    );
    assert!(
        text.contains("\"goal_achievement\": { \"score\": 0 | 1 | 2 | 3"),
        "the output format comes from the pack"
    );
    assert!(!text.contains("{{"), "every placeholder is filled");

    let out = run(&[
        "--rubric",
        SMALL_BUDGET,
        "--source",
        TRANSCRIPT,
        "--all",
        "--print-prompt",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let prompts: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        prompts.len() > 1,
        "a session over the budget is cut into chunks"
    );
    let n = prompts.len();
    for (i, p) in prompts.iter().enumerate() {
        assert_eq!(p["chunk"], i + 1);
        assert_eq!(p["chunks"], n);
        assert!(p["prompt"]
            .as_str()
            .unwrap()
            .contains(&format!("- **Chunk**: {} of {n}", i + 1)));
    }
    assert!(prompts[1]["prompt"]
        .as_str()
        .unwrap()
        .contains("See chunk 1"));
    // Every entry is in exactly one chunk.
    let lines: usize = prompts
        .iter()
        .map(|p| {
            p["prompt"]
                .as_str()
                .unwrap()
                .lines()
                .filter(|l| {
                    l.starts_with('#') && l.as_bytes().get(1).is_some_and(u8::is_ascii_digit)
                })
                .count()
        })
        .sum();
    assert_eq!(lines, 17);
}

#[test]
fn a_judge_command_scores_every_chunk_and_the_chunks_aggregate() {
    let r = grade_json(&[
        "--rubric",
        SMALL_BUDGET,
        "--source",
        TRANSCRIPT,
        "--all",
        "--judge-cmd",
        JUDGE,
        "--no-record",
        "--format",
        "json",
    ]);
    let chunks = {
        let out = run(&[
            "--rubric",
            SMALL_BUDGET,
            "--source",
            TRANSCRIPT,
            "--all",
            "--print-prompt",
            "--format",
            "json",
        ]);
        serde_json::from_str::<Vec<Value>>(&stdout(&out))
            .unwrap()
            .len() as f64
    };
    // The judge answers chunk 1 low and every later chunk high (the later ones in a fenced block).
    let mean = |first: f64, rest: f64| (first + rest * (chunks - 1.0)) / chunks;
    let expected = 3.0 / 3.0 * 0.30
        + mean(0.6, 1.0) * 0.20
        + mean(0.5, 0.9) * 0.20
        + mean(0.4, 0.8) * 0.15
        + 2.0 / 3.0 * 0.10
        + mean(0.5, 0.7) * 0.05;
    assert!(
        close(r["totalScore"].as_f64().unwrap(), expected),
        "{} vs {expected}",
        r["totalScore"]
    );
    assert_eq!(r["entryCount"], 17);
    assert_valid_grade(&grade_schema(), &r);

    let one = grade_json(&[
        "--rubric",
        "langfuse-v1",
        "--source",
        TRANSCRIPT,
        "--all",
        "--judge-cmd",
        JUDGE,
        "--no-record",
        "--format",
        "json",
    ]);
    assert!(close(
        one["totalScore"].as_f64().unwrap(),
        1.0 / 3.0 * 0.30 + 0.6 * 0.20 + 0.5 * 0.20 + 0.4 * 0.15 + 1.0 / 3.0 * 0.10 + 0.5 * 0.05
    ));
}

#[test]
fn a_judge_that_fails_is_an_error_quoting_what_came_back() {
    let cases = [
        (
            "fail",
            vec![],
            "exited with code 3; it said `model overloaded, try later`",
        ),
        ("garbage", vec![], "the reply is not JSON"),
        ("invalid", vec![], "dimension `goal_achievement`"),
        ("slow", vec!["--judge-timeout", "1"], "no answer within 1 s"),
    ];
    for (mode, extra, needle) in cases {
        let mut args = vec![
            "--rubric",
            "langfuse-v1",
            "--source",
            TRANSCRIPT,
            "--all",
            "--judge-cmd",
            JUDGE,
            "--no-record",
        ];
        args.extend(extra);
        let out = common::grade_bin()
            .current_dir(repo_root())
            .env("JUDGE_MODE", mode)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(code(&out), 2, "{mode}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(needle), "{mode}: `{needle}` not in {err}");
        if mode == "garbage" {
            assert!(
                err.contains("it starts with `I think this session was pretty good overall!`"),
                "{err}"
            );
        }
    }
}

/// Langfuse's request schema `name`, resolvable against the whole OpenAPI document.
fn openapi_validator(name: &str) -> jsonschema::Validator {
    let text =
        std::fs::read_to_string(repo_root().join("tests/fixtures/langfuse/openapi.yml")).unwrap();
    let doc: Value = serde_yaml::from_str(&text).unwrap();
    let schema =
        json!({"$ref": format!("#/components/schemas/{name}"), "components": doc["components"]});
    jsonschema::validator_for(&schema).unwrap()
}

fn assert_openapi_valid(validator: &jsonschema::Validator, body: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(body)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{body} violates Langfuse's schema: {errors:?}"
    );
}

#[test]
fn score_config_bodies_follow_langfuses_schema() {
    let out = run(&["rubric", "score-configs", "langfuse-v1", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let configs: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = configs
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "goal_achievement",
            "tool_efficiency",
            "process_adherence",
            "context_efficiency",
            "error_handling",
            "output_quality",
            "overall_quality"
        ]
    );
    let validator = openapi_validator("CreateScoreConfigRequest");
    for c in &configs {
        assert_openapi_valid(&validator, c);
    }
    assert_eq!(
        configs[0]["categories"],
        json!([{"label": "failed", "value": 0}, {"label": "partial", "value": 1}, {"label": "complete", "value": 2}, {"label": "exceeded", "value": 3}])
    );
    assert_eq!(
        configs[6],
        json!({"name": "overall_quality", "dataType": "NUMERIC", "minValue": 0, "maxValue": 1, "description": "Weighted aggregate of all dimensions"})
    );
    let refused = run(&["rubric", "score-configs", "cleo-v1"]);
    assert_eq!(code(&refused), 2);
}

fn emitted(extra: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let file = write_judgment(dir.path(), "j.json", &typical());
    let mut args = vec![
        "--rubric",
        "langfuse-v1",
        "--judgment",
        file.as_str(),
        "--no-record",
        "--emit",
        "langfuse",
        "session-x",
    ];
    args.extend(extra);
    let out = run(&args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    json_lines(&stdout(&out))
}

#[test]
fn score_bodies_follow_langfuses_schema_and_rerun_to_the_same_ids() {
    let bodies = emitted(&[]);
    assert_eq!(bodies.len(), 7);
    let validator = openapi_validator("CreateScoreRequest");
    assert!(
        !validator.is_valid(&json!({"name": "x"})),
        "the schema is really applied (a score needs a value)"
    );
    assert!(!validator.is_valid(&json!({"name": "x", "value": {"a": 1}})));
    for b in &bodies {
        assert_openapi_valid(&validator, b);
        assert_eq!(b["sessionId"], "session-x");
    }
    assert_eq!(bodies[0]["name"], "goal_achievement");
    assert_eq!(
        bodies[0]["value"], "complete",
        "a categorical value is sent as its label"
    );
    assert_eq!(bodies[0]["dataType"], "CATEGORICAL");
    assert_eq!(bodies[0]["comment"], "goal_achievement rationale");
    assert_eq!(bodies[1]["value"], 0.8);
    assert_eq!(bodies[6]["name"], "overall_quality");
    assert!(close(bodies[6]["value"].as_f64().unwrap(), 0.735));
    let again = emitted(&[]);
    let ids: Vec<&Value> = bodies.iter().map(|b| &b["id"]).collect();
    assert_eq!(
        ids,
        again.iter().map(|b| &b["id"]).collect::<Vec<_>>(),
        "a re-run overwrites instead of duplicating"
    );

    let dir = tempfile::tempdir().unwrap();
    let configs = dir.path().join("configs.json");
    std::fs::write(
        &configs,
        r#"{"goal_achievement": "cfg-goal", "overall_quality": "cfg-overall"}"#,
    )
    .unwrap();
    let with_ids = emitted(&["--config-ids", configs.to_str().unwrap()]);
    assert_eq!(with_ids[0]["configId"], "cfg-goal");
    assert!(with_ids[1].get("configId").is_none());
    assert_eq!(with_ids[6]["configId"], "cfg-overall");
}

#[test]
fn scores_of_a_langfuse_trace_attach_to_the_trace() {
    let trace =
        "rubrics/claude-code-v1/tests/real/langfuse_traces/openai-agents-2025-09-30.trace.json";
    let dir = tempfile::tempdir().unwrap();
    let file = write_judgment(dir.path(), "j.json", &typical());
    let listed = run(&[
        "--rubric",
        "claude-code-v1",
        "--source",
        trace,
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ]);
    let id = json_lines(&stdout(&listed))[0]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = run(&[
        "--rubric",
        "langfuse-v1",
        "--source",
        trace,
        "--judgment",
        file.as_str(),
        "--no-record",
        "--emit",
        "langfuse",
        &id,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let bodies = json_lines(&stdout(&out));
    assert_eq!(bodies.len(), 7);
    assert!(
        bodies
            .iter()
            .all(|b| b["traceId"].is_string() && b.get("sessionId").is_none()),
        "{bodies:?}"
    );
}

/// A stand-in Langfuse: checks each request's auth and body against the OpenAPI schema,
/// records it, and answers with the next scripted status (then 200s).
struct FakeLangfuse {
    url: String,
    received: Arc<Mutex<Vec<Value>>>,
    problems: Arc<Mutex<Vec<String>>>,
}

fn fake_langfuse(script: Vec<u16>) -> FakeLangfuse {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let received = Arc::new(Mutex::new(Vec::new()));
    let problems = Arc::new(Mutex::new(Vec::new()));
    let script = Arc::new(Mutex::new(script.into_iter()));
    let (rec, probs) = (Arc::clone(&received), Arc::clone(&problems));
    std::thread::spawn(move || {
        let validator = openapi_validator("CreateScoreRequest");
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut writer = stream;
            loop {
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                    break;
                }
                let mut length = 0;
                let mut auth = String::new();
                loop {
                    let mut header = String::new();
                    reader.read_line(&mut header).unwrap();
                    let header = header.trim_end();
                    if header.is_empty() {
                        break;
                    }
                    let (name, value) = header.split_once(':').unwrap();
                    match name.to_ascii_lowercase().as_str() {
                        "content-length" => length = value.trim().parse().unwrap(),
                        "authorization" => auth = value.trim().to_owned(),
                        _ => {}
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                let status = script.lock().unwrap().next().unwrap_or(200);
                if !request_line.starts_with("POST /api/public/scores ") {
                    probs
                        .lock()
                        .unwrap()
                        .push(format!("unexpected request {request_line:?}"));
                }
                // pk-lf-test:sk-lf-test
                if auth != "Basic cGstbGYtdGVzdDpzay1sZi10ZXN0" {
                    probs.lock().unwrap().push(format!("bad auth {auth:?}"));
                }
                match serde_json::from_slice::<Value>(&body) {
                    Ok(json) => {
                        // The SDK sends a batch (an array); an older client one score.
                        let scores = match json {
                            Value::Array(items) => items,
                            one => vec![one],
                        };
                        for score in scores {
                            for e in validator.iter_errors(&score) {
                                probs
                                    .lock()
                                    .unwrap()
                                    .push(format!("{e} at {}", e.instance_path));
                            }
                            if status == 200 {
                                rec.lock().unwrap().push(score);
                            }
                        }
                    }
                    Err(e) => probs.lock().unwrap().push(format!("body is not JSON: {e}")),
                }
                let (reason, extra) = match status {
                    200 => ("OK", ""),
                    429 => ("Too Many Requests", "Retry-After: 0\r\n"),
                    401 => ("Unauthorized", ""),
                    400 => ("Bad Request", ""),
                    _ => ("Service Unavailable", ""),
                };
                let payload = if status == 400 {
                    r#"{"message":"Invalid score value"}"#
                } else {
                    "{}"
                };
                let response = format!(
                    "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{payload}",
                    payload.len()
                );
                if writer.write_all(response.as_bytes()).is_err() {
                    break;
                }
            }
        }
    });
    FakeLangfuse {
        url,
        received,
        problems,
    }
}

fn push(server: &FakeLangfuse, bodies: &std::path::Path) -> std::process::Output {
    common::grade_bin()
        .current_dir(repo_root())
        .env("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
        .env("LANGFUSE_SECRET_KEY", "sk-lf-test")
        .env("LANGFUSE_HOST", &server.url)
        .args([
            "push",
            "--langfuse",
            bodies.to_str().unwrap(),
            "--backoff-ms",
            "5",
        ])
        .output()
        .unwrap()
}

fn bodies_file(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("scores.jsonl");
    let text: String = emitted(&[]).iter().map(|b| format!("{b}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn push_sends_every_score_and_retries_429_and_5xx() {
    let dir = tempfile::tempdir().unwrap();
    let file = bodies_file(dir.path());
    let server = fake_langfuse(vec![429, 503, 200]);
    let out = push(&server, &file);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("pushed 7 scores to http://127.0.0.1:"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("in 1 request (2 retries)"),
        "the seven scores go in one batch, as the SDK sends them: {}",
        stdout(&out)
    );
    assert_eq!(*server.problems.lock().unwrap(), Vec::<String>::new());
    let received = server.received.lock().unwrap();
    let names: Vec<&str> = received
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 7);
    assert_eq!(names[6], "overall_quality");
    assert_eq!(received[0]["value"], "complete");
}

#[test]
fn push_stops_with_a_clear_error_on_401_400_and_missing_keys() {
    let dir = tempfile::tempdir().unwrap();
    let file = bodies_file(dir.path());

    let server = fake_langfuse(vec![401]);
    let out = push(&server, &file);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("refused the keys (401 Unauthorized"),
        "{}",
        stderr(&out)
    );

    // A batch answered 400 is sent again one score at a time (an older server); the score
    // refused then is named.
    let server = fake_langfuse(vec![400, 400]);
    let out = push(&server, &file);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("refused score `goal_achievement` (id `"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("400 Bad Request: {\"message\":\"Invalid score value\"}"),
        "{}",
        stderr(&out)
    );

    let server = fake_langfuse(vec![503, 503, 503, 503]);
    let out = push(&server, &file);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("503 Service Unavailable: {} (after 4 attempts)"),
        "{}",
        stderr(&out)
    );

    let out = common::grade_bin()
        .env_remove("LANGFUSE_PUBLIC_KEY")
        .env_remove("LANGFUSE_SECRET_KEY")
        .args(["push", "--langfuse", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("needs LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY"),
        "{}",
        stderr(&out)
    );
}

/// What `grade push` is given is checked before anything is sent: every bad line at once,
/// text that is not UTF-8 named so, no zero attempts, an address that cannot be one refused
/// at once (it was "unreachable" four times), and an empty file said to push nothing.
#[test]
fn push_checks_its_input_and_its_settings_before_sending_anything() {
    let dir = tempfile::tempdir().unwrap();
    let push_with = |file: &std::path::Path, extra: &[&str], url: &str| {
        common::grade_bin()
            .env("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
            .env("LANGFUSE_SECRET_KEY", "sk-lf-test")
            .env("LANGFUSE_BASE_URL", url)
            .args([
                "push",
                "--langfuse",
                file.to_str().unwrap(),
                "--backoff-ms",
                "5",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let file = dir.path().join("scores.jsonl");
    std::fs::write(
        &file,
        "{\"name\":\"a\",\"value\":1}\nnot json\n{\"value\":2}\n{\"name\":\"b\"}\n",
    )
    .unwrap();
    let out = push_with(&file, &[], "http://127.0.0.1:9");
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains("3 score bodies cannot be sent, nothing was pushed:")
            && err.contains("scores.jsonl:2: not a score body")
            && err.contains("scores.jsonl:3: a score body needs `name` and `value`")
            && err.contains("scores.jsonl:4: a score body needs `name` and `value`"),
        "{err}"
    );

    std::fs::write(&file, b"{\"name\":\"a\",\"value\":\"\xff\"}\n").unwrap();
    let out = push_with(&file, &[], "http://127.0.0.1:9");
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("cannot read `")
            && stderr(&out).contains("scores.jsonl`: it is not UTF-8 text (byte 22 is not UTF-8)"),
        "{}",
        stderr(&out)
    );

    let good = bodies_file(dir.path());
    let out = push_with(&good, &["--attempts", "0"], "http://127.0.0.1:9");
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let out = push_with(&good, &[], "localhost:3000");
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out)
            .contains("LANGFUSE_BASE_URL `localhost:3000` is not an http:// or https:// address"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("attempts"), "{}", stderr(&out));

    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let out = push_with(&empty, &[], "http://127.0.0.1:9");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("holds no score bodies: nothing was pushed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn every_real_transcript_and_trace_renders_a_scorer_prompt() {
    let real = repo_root().join("rubrics/claude-code-v1/tests/real");
    let mut files = Vec::new();
    let mut stack = vec![real];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                stack.push(path);
            } else if (name.ends_with(".jsonl") || name.ends_with(".json"))
                && !name.contains(".expected.")
            {
                files.push(path);
            }
        }
    }
    assert!(files.len() >= 10, "{files:?}");
    for file in files {
        let out = run(&[
            "--rubric",
            "langfuse-v1",
            "--source",
            file.to_str().unwrap(),
            "--all",
            "--print-prompt",
            "--format",
            "json",
        ]);
        assert_eq!(code(&out), 0, "{}: {}", file.display(), stderr(&out));
        let prompts: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
        assert!(!prompts.is_empty(), "{}", file.display());
        for p in &prompts {
            let text = p["prompt"].as_str().unwrap();
            assert!(
                !text.contains("{{"),
                "{}: unfilled placeholder",
                file.display()
            );
        }
    }
}

#[test]
fn weights_that_do_not_sum_to_one_are_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("lopsided");
    std::fs::create_dir(&pack).unwrap();
    let yaml =
        std::fs::read_to_string(repo_root().join("rubrics/langfuse-v1/rubric.yaml")).unwrap();
    std::fs::write(
        pack.join("rubric.yaml"),
        yaml.replace("weight: 0.30", "weight: 0.40"),
    )
    .unwrap();
    std::fs::copy(
        repo_root().join("rubrics/langfuse-v1/scorer.prompt.md"),
        pack.join("scorer.prompt.md"),
    )
    .unwrap();
    let out = run(&["rubric", "validate", pack.to_str().unwrap()]);
    assert_eq!(
        code(&out),
        0,
        "a warning keeps the pack valid: {}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("warning[W101]: the weights sum to 1.1, not 1"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_judged_pack_without_a_judgment_is_a_usage_error() {
    let out = run(&[
        "--rubric",
        "langfuse-v1",
        "--source",
        TRANSCRIPT,
        "--all",
        "--no-record",
    ]);
    assert_eq!(code(&out), 2);
    assert!(stdout(&out).is_empty());
    assert!(
        stderr(&out)
            .contains("give `--judgment FILE`, `--judge PROVIDER:MODEL` or `--judge-cmd CMD`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_human_report_of_a_weighted_pack_shows_labels_weights_and_rationales() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_judgment(dir.path(), "j.json", &typical());
    let out = run(&[
        "--rubric",
        "langfuse-v1",
        "--judgment",
        &file,
        "--no-record",
        "session-x",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    insta::assert_snapshot!(
        "weighted_human_report",
        common::without_grading_time(&stdout(&out))
    );

    let show = run(&["rubric", "show", "langfuse-v1"]);
    let shown_text = stdout(&show);
    let shown: Vec<&str> = shown_text
        .lines()
        .filter(|l| !l.starts_with("digest "))
        .collect();
    insta::assert_snapshot!("rubric_show_langfuse_v1", shown.join("\n"));
}

/// A dimension the session gave nothing to judge has no score: sent as a NUMERIC 0, it
/// pulled every Langfuse average of the dimension down, with nothing to tell it apart.
#[test]
fn score_bodies_leave_out_the_dimensions_that_did_not_apply() {
    let transcript = common::repo_root().join(
        "rubrics/claude-code-v1/tests/real/claude_code_transcripts/synthetic/simonw__tests/sample_session.jsonl",
    );
    let source = transcript.to_str().unwrap();
    let grade = |extra: &[&str]| {
        let mut args = vec!["--rubric", "claude-code-v1", "--source", source, "--all"];
        args.extend(["--no-record"]);
        args.extend(extra);
        run(&args)
    };
    let graded = grade(&["--format", "json"]);
    assert_eq!(code(&graded), 0, "{}", stderr(&graded));
    let result: Value = serde_json::from_str(&stdout(&graded)).unwrap();
    let dimensions = result["dimensions"].as_object().unwrap();
    let mut applied: Vec<&String> = dimensions
        .iter()
        .filter(|(_, d)| d["notApplicable"] != true)
        .map(|(id, _)| id)
        .collect();
    assert!(
        applied.len() < dimensions.len(),
        "a dimension did not apply"
    );
    applied.sort();
    let emitted = grade(&["--emit", "langfuse"]);
    assert_eq!(code(&emitted), 0, "{}", stderr(&emitted));
    let mut names: Vec<String> = json_lines(&stdout(&emitted))
        .iter()
        .map(|b| b["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    assert_eq!(names.iter().collect::<Vec<_>>(), applied);
}

/// `--print-prompt` on a Claude Agent SDK trace showed no task ("the source records no user
/// message") and none of the replies: the generations' outputs and the trace's request were
/// left out of the summary. It now shows them, and it is the very text a judge command
/// reads on its stdin.
#[test]
fn the_printed_prompt_of_a_trace_shows_its_request_and_replies_and_is_what_the_judge_reads() {
    let trace =
        "rubrics/claude-code-v1/tests/real/langfuse_traces/claude-agent-2025-12-22.trace.json";
    let out = run(&[
        "--rubric",
        "langfuse-v1",
        "--source",
        trace,
        "--all",
        "--print-prompt",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let printed = stdout(&out);
    let (header, prompt) = printed.split_once('\n').unwrap();
    assert_eq!(
        header,
        "===== session `097f1d8982fa909b8cffb14a166ec272`, prompt 1 of 1 ====="
    );
    insta::assert_snapshot!("agent_sdk_trace_prompt", prompt);

    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.txt");
    let judge = dir.path().join("judge.sh");
    std::fs::write(
        &judge,
        format!(
            "#!/bin/sh\ncat > '{}'\nexec '{}' < /dev/null\n",
            seen.display(),
            repo_root().join(JUDGE).display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&judge, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = run(&[
        "--rubric",
        "langfuse-v1",
        "--source",
        trace,
        "--all",
        "--judge-cmd",
        judge.to_str().unwrap(),
        "--no-record",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), prompt);
}
