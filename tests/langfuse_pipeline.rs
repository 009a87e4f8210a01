//! The session-quality design end to end against stand-ins on 127.0.0.1: model servers in
//! the Anthropic and OpenAI formats (retries, prose around the JSON, replies without a
//! judgment, token usage, the judgment cache, repeated runs and their agreement), and a
//! Langfuse server serving real traces and recording pushed scores. Nothing here calls a
//! network beyond loopback.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;
use crate::stand_in;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use common::*;
use serde_json::{json, Value};
use stand_in::{serve, Request, Response, Server};

const TRANSCRIPT: &str =
    "rubrics/claude-code-v1/tests/real/claude_code_transcripts/real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";

const DIMENSIONS: [&str; 6] = [
    "goal_achievement",
    "tool_efficiency",
    "process_adherence",
    "context_efficiency",
    "error_handling",
    "output_quality",
];

/// A judgment: categorical dimensions get `category`, numeric ones `number`.
fn judgment(category: f64, number: f64) -> Value {
    let mut out = serde_json::Map::new();
    for name in DIMENSIONS {
        let score = if name == "goal_achievement" || name == "error_handling" {
            json!(category)
        } else {
            json!(number)
        };
        out.insert(
            name.to_owned(),
            json!({"score": score, "evidence": [format!("{name} seen")], "rationale": format!("{name} because")}),
        );
    }
    Value::Object(out)
}

fn anthropic_reply(text: &str, input: u64, output: u64) -> Response {
    Response::json(
        200,
        &json!({
            "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": input, "output_tokens": output}
        }),
    )
}

fn openai_reply(text: &str, input: u64, output: u64) -> Response {
    Response::json(
        200,
        &json!({
            "id": "chatcmpl-test", "object": "chat.completion", "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}
        }),
    )
}

/// A model stand-in that answers the scripted responses in turn, then the last one again.
fn scripted(script: Vec<Response>) -> Server {
    let script = Arc::new(Mutex::new(script));
    serve(move |_| {
        let mut script = script.lock().unwrap();
        if script.len() > 1 {
            script.remove(0)
        } else {
            script[0].clone()
        }
    })
}

/// `grade` with the model and cache variables pointed at the stand-ins and `cache`.
fn grade_with_env(env: &[(&str, &str)], cache: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = grade_bin();
    cmd.current_dir(repo_root())
        .env("XDG_CACHE_HOME", cache)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("LANGFUSE_BASE_URL")
        .env_remove("LANGFUSE_HOST")
        .env_remove("LANGFUSE_PUBLIC_KEY")
        .env_remove("LANGFUSE_SECRET_KEY")
        .env_remove("LANGFUSE_TRACING_ENVIRONMENT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(args).output().unwrap()
}

fn anthropic_env(server: &Server) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", server.url.clone()),
        ("ANTHROPIC_API_KEY", "sk-ant-test".to_owned()),
    ]
}

fn env_refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

fn judge_transcript(
    server_env: &[(&'static str, String)],
    cache: &Path,
    judge: &str,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "--rubric",
        "langfuse-v1",
        "--source",
        TRANSCRIPT,
        "--all",
        "--judge",
        judge,
        "--no-record",
        "--format",
        "json",
    ];
    args.extend(extra);
    grade_with_env(&env_refs(server_env), cache, &args)
}

#[test]
fn an_anthropic_judge_honours_retry_after_reads_prose_and_reports_usage_then_caches() {
    let judged = judgment(2.0, 0.8);
    let server = scripted(vec![
        Response::json(429, &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}))
            .with_header("retry-after", "0"),
        anthropic_reply(
            &format!("Here is my assessment of the session.\n\n{judged}\n\nLet me know if you need more."),
            1200,
            300,
        ),
    ]);
    let cache = tempfile::tempdir().unwrap();
    let env = anthropic_env(&server);
    // The backoff is a minute: only the server's `retry-after: 0` keeps this test quick.
    let out = judge_transcript(
        &env,
        cache.path(),
        "anthropic:claude-test",
        &["--judge-backoff-ms", "60000"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_valid_grade(&grade_schema(), &r);
    assert_eq!(
        r["judge"],
        json!({"model": "anthropic:claude-test", "runs": 1, "replies": 1, "inputTokens": 1200, "outputTokens": 300, "cached": 0})
    );
    assert_eq!(r["dimensions"]["goal_achievement"]["label"], "complete");
    assert_eq!(r["dimensions"]["tool_efficiency"]["score"], 0.8);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the 429 and its retry");
    for request in &requests {
        assert_eq!(request.method, "POST");
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
        assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
        let body = request.json();
        assert_eq!(body["model"], "claude-test");
        assert_eq!(body["max_tokens"], 4096);
        assert_eq!(body["messages"][0]["role"], "user");
        let prompt = body["messages"][0]["content"].as_str().unwrap();
        assert!(
            prompt.contains("# Session Quality Scorer"),
            "the pack's prompt is the user message"
        );
        assert!(prompt.contains("1af7fc5e-8455-4414-9ccd-011d40f70b2a"));
        assert!(
            body.get("temperature").is_none(),
            "langfuse-v1 leaves the temperature to the model"
        );
    }

    // The same command again: answered from the cache, no request made.
    let again = judge_transcript(&env, cache.path(), "anthropic:claude-test", &[]);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    let second: Value = serde_json::from_str(&stdout(&again)).unwrap();
    assert_eq!(server.requests().len(), 2, "a cache hit asks nothing");
    assert_eq!(
        second["judge"],
        json!({"model": "anthropic:claude-test", "runs": 1, "replies": 1, "inputTokens": 0, "outputTokens": 0, "cached": 1})
    );
    assert_eq!(second["totalScore"], r["totalScore"]);
    assert_eq!(second["dimensions"], r["dimensions"]);
    let files: Vec<_> = walk(&cache.path().join("grade/judgments"));
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(
        files
            .iter()
            .all(|f| f.extension().is_some_and(|e| e == "json")),
        "no temporary file is left: {files:?}"
    );

    // `--no-judge-cache` asks again; another model is another key.
    let fresh = judge_transcript(
        &env,
        cache.path(),
        "anthropic:claude-test",
        &["--no-judge-cache"],
    );
    assert_eq!(code(&fresh), 0, "{}", stderr(&fresh));
    assert_eq!(server.requests().len(), 3);
    let other = judge_transcript(&env, cache.path(), "anthropic:claude-other", &[]);
    assert_eq!(code(&other), 0, "{}", stderr(&other));
    assert_eq!(server.requests().len(), 4);
}

#[test]
fn a_judgment_cache_file_that_does_not_read_is_named_in_a_warning_and_asked_again() {
    let judged = judgment(2.0, 0.8).to_string();
    let server = scripted(vec![anthropic_reply(&judged, 100, 50)]);
    let cache = tempfile::tempdir().unwrap();
    let env = anthropic_env(&server);
    let first = judge_transcript(&env, cache.path(), "anthropic:claude-test", &[]);
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    let files = walk(&cache.path().join("grade/judgments"));
    assert_eq!(files.len(), 1, "{files:?}");
    // A file cut short, as a full disk or an interrupted copy leaves it.
    std::fs::write(&files[0], "{\"judge\": \"anthropic:claude-test\", \"judgm").unwrap();
    let again = judge_transcript(&env, cache.path(), "anthropic:claude-test", &[]);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert_eq!(
        stderr(&again),
        format!(
            "warning: judgment cache file `{}` is not a kept judgment (EOF while parsing a string at line 1 column 41); the judge is asked again\n",
            files[0].display()
        )
    );
    assert_eq!(server.requests().len(), 2, "asked again");
    let second: Value = serde_json::from_str(&stdout(&again)).unwrap();
    assert_eq!(second["judge"]["cached"], 0);
    // The new reply took the broken file's place.
    let third = judge_transcript(&env, cache.path(), "anthropic:claude-test", &[]);
    assert_eq!(code(&third), 0, "{}", stderr(&third));
    assert_eq!(stderr(&third), "");
    assert_eq!(server.requests().len(), 2, "answered from the cache");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn an_openai_compatible_judge_retries_a_5xx_and_reads_a_fenced_block() {
    let judged = judgment(3.0, 0.5);
    let server = scripted(vec![
        Response::json(503, &json!({"error": {"message": "overloaded"}})),
        openai_reply(&format!("Scores:\n```json\n{judged}\n```\nDone."), 900, 120),
    ]);
    let cache = tempfile::tempdir().unwrap();
    let env = vec![
        ("OPENAI_BASE_URL", format!("{}/v1/", server.url)),
        ("OPENAI_API_KEY", "sk-openai-test".to_owned()),
    ];
    let out = judge_transcript(
        &env,
        cache.path(),
        "openai:gpt-test",
        &["--judge-backoff-ms", "1"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(r["judge"]["inputTokens"], 900);
    assert_eq!(r["judge"]["outputTokens"], 120);
    assert_eq!(r["dimensions"]["goal_achievement"]["label"], "exceeded");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let last = &requests[1];
    assert_eq!(last.path, "/v1/chat/completions");
    assert_eq!(last.header("authorization"), Some("Bearer sk-openai-test"));
    let body = last.json();
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
    assert_eq!(body["messages"][0]["role"], "user");

    // A compatible server without a key (Ollama, vLLM) needs only OPENAI_BASE_URL.
    let keyless = vec![("OPENAI_BASE_URL", format!("{}/v1", server.url))];
    let out = judge_transcript(&keyless, cache.path(), "openai:llama3:8b", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        server.requests().last().unwrap().header("authorization"),
        None
    );
}

#[test]
fn replies_without_a_valid_judgment_and_refused_keys_are_clear_errors() {
    let two = format!("First {} then {}", judgment(1.0, 0.1), judgment(2.0, 0.2));
    let invalid = judgment(7.0, 0.5).to_string();
    let cases: Vec<(&str, Response, Vec<&str>)> = vec![
        (
            "no JSON",
            anthropic_reply("I cannot score this session, it is too short.", 10, 5),
            vec![
                "judge `anthropic:claude-test` for session `1af7fc5e-8455-4414-9ccd-011d40f70b2a`, chunk 1 of 1",
                "the reply is not JSON and holds no JSON object; it starts with `I cannot score this session, it is too short.`",
            ],
        ),
        (
            "cut short at the output limit",
            Response::json(
                200,
                &json!({
                    "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test",
                    "content": [{"type": "text", "text": "{\"goal_achievement\": {\"score\": 2, \"evid"}],
                    "stop_reason": "max_tokens",
                    "usage": {"input_tokens": 10, "output_tokens": 5}
                }),
            ),
            vec!["the reply's JSON is cut short: it ends before its object closes, as when the judge runs out of output tokens (raise `max_tokens` in the pack's `judge` and grade again); the model said it stopped at its output limit; the reply starts with `{\"goal_achievement\""],
        ),
        (
            "cut short, the model silent about why",
            anthropic_reply("Here it is: ```json\n{\"goal_achievement\": {\"score\": 2,", 10, 5),
            vec!["the reply's JSON is cut short: it ends before its object closes, as when the judge runs out of output tokens (raise `max_tokens` in the pack's `judge` and grade again); it starts with `Here it is:"],
        ),
        (
            "malformed",
            anthropic_reply("{\"goal_achievement\": {\"score\": 2,}}", 10, 5),
            vec!["the reply's JSON is malformed (trailing comma at line 1 column ", "), not cut short: grade again to ask anew, and if the judge keeps writing it, tell it in the pack's prompt to answer with one JSON object; it starts with `{\"goal"],
        ),
        (
            "two objects",
            anthropic_reply(&two, 10, 5),
            vec!["the reply holds 2 JSON objects and no fenced ```json block", "it starts with `First {"],
        ),
        (
            "invalid",
            anthropic_reply(&invalid, 10, 5),
            vec!["`/goal_achievement/score`", "(dimension `goal_achievement`)", "; the reply starts with `{\""],
        ),
        (
            "refused key",
            Response::json(401, &json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})),
            vec!["refused the key (401 Unauthorized: {\"error\":{\"message\":\"invalid x-api-key\"", "check ANTHROPIC_API_KEY"],
        ),
        (
            "a redirect",
            Response::json(307, &json!({})).with_header("location", "http://127.0.0.1:1/elsewhere"),
            vec!["307 Temporary Redirect to `http://127.0.0.1:1/elsewhere` (redirects are not followed)"],
        ),
        (
            "the server's answer cut off on its way",
            Response {
                status: 200,
                headers: vec![("content-type".to_owned(), "application/json".to_owned())],
                body: "{\"id\": \"msg_test\", \"type\": \"message\", \"content\": [{\"type\": \"te".to_owned(),
            },
            vec!["answered with JSON that ends before it closes (EOF while parsing a string at line 1 column ", "): the answer was cut off on its way; grade again: `{\"id\": \"msg_test\""],
        ),
        (
            "server errors to the end",
            Response::json(500, &json!({"error": "boom"})),
            vec!["500 Internal Server Error: {\"error\":\"boom\"} (after 2 attempts)"],
        ),
    ];
    for (what, response, needles) in cases {
        let server = scripted(vec![response]);
        let cache = tempfile::tempdir().unwrap();
        let out = judge_transcript(
            &anthropic_env(&server),
            cache.path(),
            "anthropic:claude-test",
            &["--judge-attempts", "2", "--judge-backoff-ms", "1"],
        );
        assert_eq!(code(&out), 2, "{what}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{what}");
        let err = stderr(&out);
        for needle in needles {
            assert!(err.contains(needle), "{what}: `{needle}` not in {err}");
        }
        assert!(
            walk(cache.path()).is_empty(),
            "{what}: nothing invalid is cached"
        );
    }

    let cache = tempfile::tempdir().unwrap();
    let out = judge_transcript(&[], cache.path(), "anthropic:claude-test", &[]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("`--judge anthropic:claude-test` needs ANTHROPIC_API_KEY"),
        "{}",
        stderr(&out)
    );
    let out = judge_transcript(&[], cache.path(), "openai:gpt-test", &[]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("needs OPENAI_API_KEY"),
        "{}",
        stderr(&out)
    );
    let out = judge_transcript(&[], cache.path(), "gemini:x", &[]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("unknown provider `gemini`"),
        "{}",
        stderr(&out)
    );
}

/// The reference batch: 8 sessions judged 3 times each (`tests/fixtures/agreement/`).
fn reference_case(name: &str) -> Value {
    let text = std::fs::read_to_string(repo_root().join("tests/fixtures/agreement/reference.json"))
        .unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap()
        .clone()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn repeated_runs_give_spread_and_agreement_matching_the_reference_in_order() {
    let numeric = reference_case("numeric-3-runs");
    let categorical = reference_case("categorical-3-runs");
    let sessions: Vec<String> = (1..=8).map(|i| format!("batch-{i}")).collect();
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("audit.jsonl");
    let mut log = String::new();
    for (i, s) in sessions.iter().enumerate() {
        log.push_str(&format!(
            "{{\"timestamp\": \"2026-03-01T10:00:0{i}.000Z\", \"sessionId\": \"{s}\", \"domain\": \"tasks\", \"operation\": \"show\", \"params\": {{}}, \"result\": {{\"success\": true, \"exitCode\": 0, \"duration\": 5}}, \"metadata\": {{\"source\": \"cli\"}}}}\n"
        ));
    }
    std::fs::write(&source, log).unwrap();

    // Each session's n-th request gets run n's values of the reference.
    let counters: Arc<Mutex<HashMap<usize, usize>>> = Arc::default();
    let (num, cat) = (numeric.clone(), categorical.clone());
    let server = serve(move |request: &Request| {
        let prompt = request.json()["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let unit: usize = prompt
            .split("**Session ID**: batch-")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .map(|n: usize| n - 1)
            .unwrap();
        let run = {
            let mut c = counters.lock().unwrap();
            let n = c.entry(unit).or_insert(0);
            *n += 1;
            *n - 1
        };
        let value = |case: &Value| case["runs"][run][unit].as_f64().unwrap();
        anthropic_reply(&judgment(value(&cat), value(&num)).to_string(), 100, 10)
    });
    let agreement = dir.path().join("agreement.json");
    let out = grade_with_env(
        &env_refs(&anthropic_env(&server)),
        dir.path(),
        &[
            "--rubric",
            "langfuse-v1",
            "--source",
            source.to_str().unwrap(),
            "--all",
            "--judge",
            "anthropic:claude-test",
            "--judge-runs",
            "3",
            "--judge-jobs",
            "4",
            "--agreement",
            agreement.to_str().unwrap(),
            "--no-record",
            "--format",
            "jsonl",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(server.requests().len(), 24);
    let results = json_lines(&stdout(&out));
    let order: Vec<&str> = results
        .iter()
        .map(|r| r["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(
        order, sessions,
        "results keep the source's order whatever order the replies came in"
    );
    let schema = grade_schema();
    for (unit, r) in results.iter().enumerate() {
        assert_valid_grade(&schema, r);
        assert_eq!(r["judge"]["runs"], 3);
        assert_eq!(r["judge"]["replies"], 3);
        assert_eq!(r["judge"]["inputTokens"], 300);
        for (dimension, case) in [
            ("tool_efficiency", &numeric),
            ("goal_achievement", &categorical),
        ] {
            let want = &case["spread"][unit];
            let got = &r["dimensions"][dimension]["spread"];
            for key in ["min", "max", "sd"] {
                assert!(
                    close(got[key].as_f64().unwrap(), want[key].as_f64().unwrap()),
                    "session {unit} {dimension}.spread.{key}: {got} vs {want}"
                );
            }
        }
        let runs: Vec<f64> = (0..3)
            .map(|run| numeric["runs"][run][unit].as_f64().unwrap())
            .collect();
        let mean = runs.iter().sum::<f64>() / 3.0;
        assert!(
            close(
                r["dimensions"]["tool_efficiency"]["score"]
                    .as_f64()
                    .unwrap(),
                mean
            ),
            "numeric: the mean of the runs"
        );
        let mut cats: Vec<f64> = (0..3)
            .map(|run| categorical["runs"][run][unit].as_f64().unwrap())
            .collect();
        cats.sort_by(f64::total_cmp);
        assert_eq!(
            r["dimensions"]["goal_achievement"]["score"]
                .as_f64()
                .unwrap(),
            cats[1],
            "categorical: the median"
        );
    }
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&agreement).unwrap()).unwrap();
    assert_eq!(report["runs"], 3);
    assert_eq!(report["sessions"], 8);
    for d in report["dimensions"].as_array().unwrap() {
        let (metric, case) =
            if d["dimension"] == "goal_achievement" || d["dimension"] == "error_handling" {
                ("ordinal", &categorical)
            } else {
                ("interval", &numeric)
            };
        assert_eq!(d["metric"], metric);
        assert!(
            close(
                d["alpha"].as_f64().unwrap(),
                case["alpha"].as_f64().unwrap()
            ),
            "{}: {} vs {}",
            d["dimension"],
            d["alpha"],
            case["alpha"]
        );
    }
    assert!(
        stderr(&out)
            .contains("agreement of 3 runs of judge `anthropic:claude-test` over 8 sessions"),
        "{}",
        stderr(&out)
    );

    // A second run asks nothing: every run of every chunk is cached under its own key.
    let again = grade_with_env(
        &env_refs(&anthropic_env(&server)),
        dir.path(),
        &[
            "--rubric",
            "langfuse-v1",
            "--source",
            source.to_str().unwrap(),
            "--all",
            "--judge",
            "anthropic:claude-test",
            "--judge-runs",
            "3",
            "--no-record",
            "--format",
            "jsonl",
        ],
    );
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert_eq!(server.requests().len(), 24);
    assert_eq!(json_lines(&stdout(&again))[0]["judge"]["cached"], 3);
}

// ---------------------------------------------------------------------------------------
// Langfuse: a stand-in serving the real trace downloads through v4 and v3, and recording
// pushed scores.

const TRACES: [&str; 3] = [
    "claude-agent-2025-12-22.trace.json",
    "openai-agents-2025-09-30.trace.json",
    "pydantic-ai-tools-2025-12-04.trace.json",
];
const SESSION: &str = "demo-session";
/// `pk-lf-test:sk-lf-test`
const AUTH: &str = "Basic cGstbGYtdGVzdDpzay1sZi10ZXN0";

/// The real trace downloads, each put into the session `demo-session` (the downloads
/// belong to no session; that one field is the only change).
fn trace_downloads() -> Vec<Value> {
    TRACES
        .iter()
        .map(|name| {
            let path = repo_root()
                .join("rubrics/claude-code-v1/tests/real/langfuse_traces")
                .join(name);
            let mut doc: Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            doc["trace"]["sessionId"] = json!(SESSION);
            doc
        })
        .collect()
}

/// Langfuse's schema `name`, resolvable against the whole OpenAPI document, with
/// OpenAPI's `nullable: true` written as JSON Schema says it (a validator ignores it).
fn openapi_validator(name: &str) -> jsonschema::Validator {
    let text =
        std::fs::read_to_string(repo_root().join("tests/fixtures/langfuse/openapi.yml")).unwrap();
    let mut doc: Value = serde_yaml::from_str(&text).unwrap();
    allow_nulls(&mut doc["components"]);
    let schema =
        json!({"$ref": format!("#/components/schemas/{name}"), "components": doc["components"]});
    jsonschema::validator_for(&schema).unwrap()
}

fn allow_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for v in map.values_mut() {
                allow_nulls(v);
            }
            if map.remove("nullable") == Some(json!(true)) {
                if let Some(Value::String(t)) = map.get("type").cloned() {
                    map.insert("type".into(), json!([t, "null"]));
                    if let Some(Value::Array(e)) = map.get_mut("enum") {
                        e.push(Value::Null);
                    }
                } else if let Some(r) = map.remove("$ref") {
                    map.insert("anyOf".into(), json!([{"$ref": r}, {"type": "null"}]));
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(allow_nulls),
        _ => {}
    }
}

fn schema_errors(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

/// An observation of a download as `GET /api/public/v2/observations` serves it: inputs
/// and outputs as raw strings, the model as `providedModelName`, trace context alongside.
fn observation_v2(o: &Value, trace: &Value) -> Value {
    let raw = |v: Option<&Value>| match v {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(s)) => json!(s),
        Some(other) => json!(other.to_string()),
    };
    let mut out = serde_json::Map::new();
    for key in [
        "id",
        "traceId",
        "startTime",
        "endTime",
        "projectId",
        "parentObservationId",
        "type",
        "name",
        "level",
        "statusMessage",
        "version",
        "environment",
        "completionStartTime",
        "createdAt",
        "updatedAt",
        "metadata",
        "internalModelId",
        "modelParameters",
        "usageDetails",
        "costDetails",
        "totalCost",
        "usagePricingTierName",
        "promptId",
        "promptName",
        "promptVersion",
        "latency",
        "timeToFirstToken",
    ] {
        out.insert(key.to_owned(), o.get(key).cloned().unwrap_or(Value::Null));
    }
    out.insert("input".into(), raw(o.get("input")));
    out.insert("output".into(), raw(o.get("output")));
    out.insert(
        "providedModelName".into(),
        o.get("model").cloned().unwrap_or(Value::Null),
    );
    out.insert(
        "isRootObservation".into(),
        json!(o["parentObservationId"].is_null()),
    );
    out.insert("sessionId".into(), trace["sessionId"].clone());
    out.insert("userId".into(), trace["userId"].clone());
    out.insert("traceName".into(), trace["name"].clone());
    out.insert("tags".into(), trace["tags"].clone());
    out.insert("release".into(), trace["release"].clone());
    for key in ["modelId", "inputPrice", "outputPrice", "totalPrice"] {
        out.insert(key.into(), Value::Null);
    }
    Value::Object(out)
}

#[derive(Clone, Copy, PartialEq)]
enum Api {
    V4,
    V3,
}

/// A Langfuse stand-in. `v4` picks whether `GET /api/public/v2/observations` exists;
/// `first` answers the first request instead (a 429, a 403…); `push` answers score
/// batches (a status and body), else 202 `{}` with every score kept by id (so re-sent
/// scores replace the earlier ones, as Langfuse updates them).
struct Langfuse {
    server: Server,
    scores: Arc<Mutex<Vec<Value>>>,
    problems: Arc<Mutex<Vec<String>>>,
}

fn langfuse(api: Api, first: Option<Response>, push: Option<Response>) -> Langfuse {
    let downloads = trace_downloads();
    let scores: Arc<Mutex<Vec<Value>>> = Arc::default();
    let problems: Arc<Mutex<Vec<String>>> = Arc::default();
    let first = Mutex::new(first);
    let (kept, probs) = (Arc::clone(&scores), Arc::clone(&problems));
    let page_schema = openapi_validator("ObservationsV2Response");
    let score_schema = openapi_validator("CreateScoreRequest");
    let server = serve(move |request: &Request| {
        if let Some(response) = first.lock().unwrap().take() {
            return response;
        }
        if request.header("authorization") != Some(AUTH) {
            return Response::json(401, &json!({"message": "Invalid credentials"}));
        }
        let path = request.path.as_str();
        if request.method == "POST" && path == "/api/public/scores" {
            let body = request.json();
            let items = match &body {
                Value::Array(items) => items.clone(),
                one => vec![one.clone()],
            };
            for item in &items {
                probs
                    .lock()
                    .unwrap()
                    .extend(schema_errors(&score_schema, item));
            }
            if let Some(response) = &push {
                return response.clone();
            }
            let mut kept = kept.lock().unwrap();
            for item in items {
                kept.retain(|s| s["id"] != item["id"]);
                kept.push(item);
            }
            return Response::json(202, &json!({}));
        }
        if path == "/api/public/v2/observations" {
            if api == Api::V3 {
                return Response::json(404, &json!({"message": "Not found"}));
            }
            let mut all: Vec<Value> = Vec::new();
            for d in &downloads {
                let wanted = match (request.param("sessionId"), request.param("traceId")) {
                    (Some(s), _) => d["trace"]["sessionId"] == s,
                    (_, Some(t)) => d["trace"]["id"] == t,
                    _ => true,
                };
                if wanted {
                    all.extend(
                        d["observations"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|o| observation_v2(o, &d["trace"])),
                    );
                }
            }
            if !request
                .param("fields")
                .unwrap_or_default()
                .split(',')
                .any(|f| f == "io")
            {
                probs
                    .lock()
                    .unwrap()
                    .push("observations asked without the `io` fields".into());
            }
            // Pages of at most 4, so every read goes through the cursor.
            let limit: usize = request
                .param("limit")
                .and_then(|l| l.parse().ok())
                .unwrap_or(50)
                .min(4);
            let start: usize = request
                .param("cursor")
                .and_then(|c| c.strip_prefix("page-"))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            let end = (start + limit).min(all.len());
            let mut meta = serde_json::Map::new();
            if end < all.len() {
                meta.insert("cursor".into(), json!(format!("page-{end}")));
            }
            let page = json!({"data": all[start.min(end)..end], "meta": meta});
            probs
                .lock()
                .unwrap()
                .extend(schema_errors(&page_schema, &page));
            return Response::json(200, &page);
        }
        if let Some(id) = path.strip_prefix("/api/public/sessions/") {
            let traces: Vec<Value> = downloads
                .iter()
                .filter(|d| d["trace"]["sessionId"] == id)
                .map(|d| {
                    let mut t = d["trace"].clone();
                    t.as_object_mut().unwrap().remove("observations");
                    t
                })
                .collect();
            if traces.is_empty() {
                return Response::json(404, &json!({"message": "Session not found"}));
            }
            return Response::json(
                200,
                &json!({"id": id, "createdAt": "2025-12-22T10:46:21.000Z", "projectId": "p", "environment": "default", "traces": traces}),
            );
        }
        if let Some(id) = path.strip_prefix("/api/public/traces/") {
            return match downloads.iter().find(|d| d["trace"]["id"] == id) {
                // The API's trace: the trace with its observations inside.
                Some(d) => {
                    let mut t = d["trace"].clone();
                    t["observations"] = d["observations"].clone();
                    Response::json(200, &t)
                }
                None => Response::json(404, &json!({"message": "Trace not found"})),
            };
        }
        Response::json(404, &json!({"message": format!("no route {path}")}))
    });
    Langfuse {
        server,
        scores,
        problems,
    }
}

fn langfuse_env(lf: &Langfuse) -> Vec<(&'static str, String)> {
    vec![
        ("LANGFUSE_BASE_URL", lf.server.url.clone()),
        // The SDK reads LANGFUSE_BASE_URL first; a wrong LANGFUSE_HOST must not matter.
        ("LANGFUSE_HOST", "http://127.0.0.1:1".to_owned()),
        ("LANGFUSE_PUBLIC_KEY", "pk-lf-test".to_owned()),
        ("LANGFUSE_SECRET_KEY", "sk-lf-test".to_owned()),
    ]
}

/// The scorer prompts of a source, as JSON.
fn prompts(
    env: &[(&'static str, String)],
    cache: &Path,
    source: &str,
) -> (i32, String, Vec<Value>) {
    let out = grade_with_env(
        &env_refs(env),
        cache,
        &[
            "--rubric",
            "langfuse-v1",
            "--source",
            source,
            "--all",
            "--print-prompt",
            "--format",
            "json",
        ],
    );
    let parsed = serde_json::from_str(&stdout(&out)).unwrap_or_default();
    (code(&out), stderr(&out), parsed)
}

/// The session summary lines of a prompt (one per entry).
fn summary_lines(prompt: &Value) -> Vec<String> {
    prompt["prompt"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('#') && l.as_bytes().get(1).is_some_and(u8::is_ascii_digit))
        .map(|l| l.split_once(' ').unwrap().1.to_owned())
        .collect()
}

#[test]
fn a_trace_read_from_the_api_has_the_entries_of_its_download() {
    let dir = tempfile::tempdir().unwrap();
    let v3 = langfuse(Api::V3, None, None);
    let v4 = langfuse(Api::V4, None, None);
    for doc in trace_downloads() {
        let file = dir.path().join("trace.json");
        std::fs::write(&file, doc.to_string()).unwrap();
        let (c, err, from_file) = prompts(&[], dir.path(), file.to_str().unwrap());
        assert_eq!(c, 0, "{err}");
        let id = doc["trace"]["id"].as_str().unwrap();
        let source = format!("langfuse:trace/{id}");

        let (c, err, from_v3) = prompts(&langfuse_env(&v3), dir.path(), &source);
        assert_eq!(c, 0, "{err}");
        assert_eq!(
            from_v3, from_file,
            "v3: the prompt of trace {id} is that of its download"
        );

        let (c, err, from_v4) = prompts(&langfuse_env(&v4), dir.path(), &source);
        assert_eq!(c, 0, "{err}");
        let (file_lines, v4_lines) = (summary_lines(&from_file[0]), summary_lines(&from_v4[0]));
        assert_eq!(v4_lines.len(), file_lines.len(), "{v4_lines:#?}");
        // v4 keeps no trace record: the trace starts with its first observation. Every
        // observation's entry is the download's.
        assert_eq!(v4_lines[1..], file_lines[1..], "v4: trace {id}");
        let op = |l: &str| l.split(' ').nth(1).unwrap().to_owned();
        assert_eq!(
            op(&v4_lines[0]),
            op(&file_lines[0]),
            "the trace entry keeps its name"
        );
    }
    assert_eq!(*v3.problems.lock().unwrap(), Vec::<String>::new());
    assert_eq!(
        *v4.problems.lock().unwrap(),
        Vec::<String>::new(),
        "the v4 pages follow Langfuse's schema"
    );
    let pages = v4
        .server
        .requests()
        .iter()
        .filter(|r| r.path == "/api/public/v2/observations")
        .count();
    assert!(
        pages >= 3 + 12 / 4,
        "every page behind the cursor was read: {pages}"
    );
}

#[test]
fn a_session_read_from_the_api_joins_its_traces_in_time_order_through_v4_and_v3() {
    let dir = tempfile::tempdir().unwrap();
    let downloads = trace_downloads();
    let entries: usize = downloads
        .iter()
        .map(|d| d["observations"].as_array().unwrap().len() + 1)
        .sum::<usize>()
        // The prompts and replies of the three traces (1 + 2, 1 + 1, 3 + 2), as messages.
        + 10;
    let mut seen = Vec::new();
    for api in [Api::V4, Api::V3] {
        let lf = langfuse(api, None, None);
        let (c, err, got) = prompts(
            &langfuse_env(&lf),
            dir.path(),
            &format!("langfuse:session/{SESSION}"),
        );
        assert_eq!(c, 0, "{err}");
        assert_eq!(got.len(), 1);
        let text = got[0]["prompt"].as_str().unwrap();
        assert!(text.contains(&format!("- **Session ID**: {SESSION}")));
        assert!(text.contains("- **Trace Count**: 3"), "{text}");
        let lines = summary_lines(&got[0]);
        assert_eq!(lines.len(), entries);
        let traces: Vec<&String> = lines.iter().filter(|l| l.contains(" trace.")).collect();
        assert_eq!(traces.len(), 3);
        for (line, name) in
            traces
                .iter()
                .zip(["Agent workflow", "joke-generator", "claude.conversation"])
        {
            assert!(
                line.contains(&format!(" trace.{name} ")),
                "traces in the order they started: {traces:?}"
            );
        }
        seen.push(
            lines
                .iter()
                .filter(|l| !l.contains(" trace."))
                .cloned()
                .collect::<Vec<_>>(),
        );
        assert_eq!(*lf.problems.lock().unwrap(), Vec::<String>::new());
    }
    assert_eq!(
        seen[0], seen[1],
        "v4 and v3 give the same observation entries"
    );
}

#[test]
fn reading_from_langfuse_fails_clearly_naming_the_id_and_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let lf = langfuse(Api::V4, None, None);
    let host = lf.server.url.clone();
    let mut wrong_keys = langfuse_env(&lf);
    wrong_keys[3].1 = "sk-lf-wrong".to_owned();
    let (c, err, _) = prompts(&wrong_keys, dir.path(), "langfuse:session/demo-session");
    assert_eq!(c, 2);
    assert!(err.contains(&format!("cannot read session `demo-session` from Langfuse at `{host}`: Langfuse at `{host}` refused the keys (401 Unauthorized")), "{err}");

    let forbidden = langfuse(
        Api::V4,
        Some(Response::json(403, &json!({"message": "Forbidden"}))),
        None,
    );
    let (c, err, _) = prompts(&langfuse_env(&forbidden), dir.path(), "langfuse:trace/abc");
    assert_eq!(c, 2);
    assert!(
        err.contains("cannot read trace `abc`")
            && err.contains("403 Forbidden")
            && err.contains("another project"),
        "{err}"
    );

    let (c, err, _) = prompts(&langfuse_env(&lf), dir.path(), "langfuse:session/nobody");
    assert_eq!(c, 2);
    assert!(err.contains(&format!("cannot read session `nobody` from Langfuse at `{host}`: the server has no observations for that session")), "{err}");

    let v3 = langfuse(Api::V3, None, None);
    let (c, err, _) = prompts(&langfuse_env(&v3), dir.path(), "langfuse:session/nobody");
    assert_eq!(c, 2);
    assert!(
        err.contains("cannot read session `nobody`")
            && err.contains("the server has no such session (404 Not Found)"),
        "{err}"
    );
    let (c, err, _) = prompts(&langfuse_env(&v3), dir.path(), "langfuse:trace/nothing");
    assert_eq!(c, 2);
    assert!(
        err.contains("cannot read trace `nothing`")
            && err.contains("no such trace (404 Not Found)"),
        "{err}"
    );

    // A 429 is waited out (as long as `retry-after` says) and the read goes on.
    let busy = langfuse(
        Api::V4,
        Some(
            Response::json(429, &json!({"message": "rate limited"}))
                .with_header("retry-after", "0"),
        ),
        None,
    );
    let (c, err, got) = prompts(
        &langfuse_env(&busy),
        dir.path(),
        "langfuse:session/demo-session",
    );
    assert_eq!(c, 0, "{err}");
    assert_eq!(got.len(), 1);

    let (c, err, _) = prompts(&[], dir.path(), "langfuse:session/demo-session");
    assert_eq!(c, 2);
    assert!(err.contains("`--source langfuse:session/demo-session` needs LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY"), "{err}");
    let (c, err, _) = prompts(&[], dir.path(), "langfuse:span/x");
    assert_eq!(c, 2);
    assert!(
        err.contains("a Langfuse source is `langfuse:session/ID` or `langfuse:trace/ID`"),
        "{err}"
    );
}

fn pipeline(env: &[(&'static str, String)], cache: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "--rubric",
        "langfuse-v1",
        "--source",
        "langfuse:session/demo-session",
        "--all",
        "--judge",
        "anthropic:claude-test",
        "--push",
        "langfuse",
        "--no-record",
        "--format",
        "json",
    ];
    args.extend(extra);
    grade_with_env(&env_refs(env), cache, &args)
}

#[test]
fn one_command_fetches_judges_and_pushes_seven_scores_and_a_rerun_updates_them() {
    let cache = tempfile::tempdir().unwrap();
    let lf = langfuse(Api::V4, None, None);
    let model = scripted(vec![anthropic_reply(
        &judgment(2.0, 0.8).to_string(),
        5000,
        400,
    )]);
    let mut env = langfuse_env(&lf);
    env.extend(anthropic_env(&model));

    let out = pipeline(&env, cache.path(), &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_valid_grade(&grade_schema(), &result);
    assert_eq!(result["sessionId"], SESSION);
    assert_eq!(result["judge"]["inputTokens"], 5000);
    assert!(
        stderr(&out).contains(&format!(
            "pushed 7 scores to {} in 1 request (0 retries)",
            lf.server.url
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(model.requests().len(), 1);
    assert_eq!(
        *lf.problems.lock().unwrap(),
        Vec::<String>::new(),
        "every score follows Langfuse's schema"
    );
    let first = lf.scores.lock().unwrap().clone();
    let names: Vec<&str> = first.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [DIMENSIONS.as_slice(), &["overall_quality"]].concat()
    );
    let first_trace = "fee618f96dc31e0ca38b2f7b26eb8b29"; // the session's first trace (openai-agents)
    for s in &first {
        assert_eq!(
            s["traceId"], first_trace,
            "the design's seven scores on the first trace"
        );
        assert!(s.get("sessionId").is_none());
        assert_eq!(
            s["environment"], "default",
            "the trace's environment, as the SDK sends a span's"
        );
        assert_eq!(
            s["timestamp"], "2025-09-30T09:03:59.962Z",
            "dated at the session's start"
        );
        assert!(s["id"].as_str().unwrap().len() == 36);
    }
    assert_eq!(first[0]["value"], "complete");
    assert_eq!(first[0]["dataType"], "CATEGORICAL");
    let overall = first[6]["value"].as_f64().unwrap();
    assert!((overall - result["totalScore"].as_f64().unwrap()).abs() < 1e-12);

    // The same command again: the judgment comes from the cache and the same seven scores
    // (same ids, same timestamps) are sent, so Langfuse updates them.
    let again = pipeline(&env, cache.path(), &[]);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert_eq!(
        model.requests().len(),
        1,
        "a cache hit asks the model nothing"
    );
    let second: Value = serde_json::from_str(&stdout(&again)).unwrap();
    assert_eq!(second["judge"]["cached"], 1);
    let after = lf.scores.lock().unwrap().clone();
    assert_eq!(after.len(), 7, "no score was added");
    assert_eq!(after, first, "the same bodies: same ids and timestamps");
    let pushes = lf
        .server
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(pushes, 2);
}

#[test]
fn rejected_and_redirected_pushes_fail_naming_the_scores() {
    let cache = tempfile::tempdir().unwrap();
    let model = scripted(vec![anthropic_reply(
        &judgment(1.0, 0.4).to_string(),
        10,
        10,
    )]);
    let rejecting = langfuse(
        Api::V4,
        None,
        Some(Response::json(
            207,
            &json!({"accepted": 6, "rejected": 1, "errors": [{"index": 4, "message": "Score value 4 is not a category of config `error_handling`"}]}),
        )),
    );
    let mut env = langfuse_env(&rejecting);
    env.extend(anthropic_env(&model));
    let out = pipeline(&env, cache.path(), &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "Langfuse at `{}` rejected 1 of 7 scores: `error_handling` (id `",
            rejecting.server.url
        )),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("Score value 4 is not a category"),
        "{}",
        stderr(&out)
    );
    assert!(
        !stdout(&out).is_empty(),
        "the results are printed before the push"
    );

    let moved = langfuse(
        Api::V4,
        None,
        Some(
            Response::json(308, &json!({}))
                .with_header("location", "https://eu.example.com/api/public/scores"),
        ),
    );
    let mut env = langfuse_env(&moved);
    env.extend(anthropic_env(&model));
    let out = pipeline(&env, cache.path(), &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("answered with a redirect, 308 Permanent Redirect to `https://eu.example.com/api/public/scores` (redirects are not followed)"),
        "{}",
        stderr(&out)
    );
}

/// A JSON array of traces was refused by detection ("a JSON array, not an object") unless
/// `--source-format langfuse` was given; the API's trace list and session responses, which
/// hold traces without their observations, read as "none of the keys of a known record".
#[test]
fn an_array_of_traces_is_read_and_api_responses_without_observations_are_refused_saying_what_to_do()
{
    let dir = tempfile::tempdir().unwrap();
    let mut downloads = trace_downloads();
    for d in &mut downloads {
        d["trace"]["sessionId"] = Value::Null;
    }
    let one_line = dir.path().join("traces.json");
    std::fs::write(&one_line, Value::Array(downloads.clone()).to_string()).unwrap();
    let pretty = dir.path().join("pretty.json");
    std::fs::write(
        &pretty,
        serde_json::to_string_pretty(&Value::Array(downloads.clone())).unwrap(),
    )
    .unwrap();
    for file in [&one_line, &pretty] {
        let out = run(&[
            "--rubric",
            "claude-code-v1",
            "--source",
            file.to_str().unwrap(),
            "--all",
            "--format",
            "jsonl",
            "--no-record",
        ]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let ids: Vec<String> = json_lines(&stdout(&out))
            .iter()
            .map(|r| r["sessionId"].as_str().unwrap().to_owned())
            .collect();
        let mut expected: Vec<String> = downloads
            .iter()
            .map(|d| d["trace"]["id"].as_str().unwrap().to_owned())
            .collect();
        expected.sort();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(sorted, expected, "each trace without a session is one");
    }

    let page = dir.path().join("list.json");
    let traces: Vec<Value> = downloads.iter().map(|d| d["trace"].clone()).collect();
    std::fs::write(
        &page,
        json!({"data": traces, "meta": {"page": 1, "limit": 50, "totalItems": 3, "totalPages": 1}})
            .to_string(),
    )
    .unwrap();
    let session = dir.path().join("session.json");
    std::fs::write(
        &session,
        json!({"id": "s1", "createdAt": "2025-12-22T10:46:15.528Z", "projectId": "p", "traces": traces}).to_string(),
    )
    .unwrap();
    for (file, why) in [
        (&page, "it is a page of a Langfuse API list (`{\"data\": [...], \"meta\": {...}}`, as `GET /api/public/traces` returns), whose traces name their observations by id only: fetch each trace with `GET /api/public/traces/{id}` and pass the response, or a JSON array of those responses (`--source langfuse:trace/ID` fetches one)"),
        (&session, "it is a Langfuse session (`GET /api/public/sessions/{id}`), whose traces come without their observations: fetch each trace with `GET /api/public/traces/{id}` and pass a JSON array of the responses, or use `--source langfuse:session/ID`, which does"),
    ] {
        let out = run(&["--rubric", "claude-code-v1", "--source", file.to_str().unwrap(), "--all"]);
        assert_eq!(code(&out), 2);
        assert_eq!(
            stderr(&out),
            format!("error[E111]: `{}` is not a Langfuse trace: {why}\n", file.display())
        );
    }
}

/// A 429 whose `retry-after` or `retry-after-ms` is beyond any duration (`1e300`), NaN or
/// negative made `Duration::from_secs_f64` panic (exit 101) in `grade push` and in the
/// built-in judges, before the attempt count was even looked at. (Issue 41, defect 4.)
#[test]
fn a_retry_after_beyond_any_duration_nan_or_negative_fails_cleanly_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let bodies = dir.path().join("scores.jsonl");
    std::fs::write(
        &bodies,
        "{\"id\":\"a\",\"traceId\":\"t\",\"name\":\"goal_achievement\",\"value\":1}\n",
    )
    .unwrap();
    let cases = [
        ("retry-after", "1e300"),
        ("retry-after-ms", "1e308"),
        ("retry-after", "NaN"),
        ("retry-after", "-3"),
        ("retry-after-ms", "-1e308"),
    ];
    for (header, value) in cases {
        let busy = serve(move |_| {
            Response::json(429, &json!({"message": "slow down"})).with_header(header, value)
        });
        let env = [
            ("LANGFUSE_HOST", busy.url.clone()),
            ("LANGFUSE_PUBLIC_KEY", "pk-lf-test".to_owned()),
            ("LANGFUSE_SECRET_KEY", "sk-lf-test".to_owned()),
        ];
        let push = grade_with_env(
            &env_refs(&env),
            dir.path(),
            &[
                "push",
                "--langfuse",
                bodies.to_str().unwrap(),
                "--attempts",
                "1",
            ],
        );
        assert_eq!(code(&push), 2, "push, {header}: {value}: {}", stderr(&push));
        assert!(
            stderr(&push).contains("429 Too Many Requests"),
            "push, {header}: {value}: {}",
            stderr(&push)
        );
        assert!(!stderr(&push).contains("panicked"), "{}", stderr(&push));

        let judge = judge_transcript(
            &anthropic_env(&busy),
            dir.path(),
            "anthropic:claude-test",
            &["--judge-attempts", "1"],
        );
        assert_eq!(
            code(&judge),
            2,
            "judge, {header}: {value}: {}",
            stderr(&judge)
        );
        assert!(
            stderr(&judge).contains("429 Too Many Requests"),
            "judge, {header}: {value}: {}",
            stderr(&judge)
        );
        assert!(!stderr(&judge).contains("panicked"), "{}", stderr(&judge));
    }
}

/// `http://127.0.0.1:PORT` with `user:secret@` put after the scheme.
fn with_userinfo(url: &str, userinfo: &str) -> String {
    url.replacen("://", &format!("://{userinfo}@"), 1)
}

/// A base URL carrying credentials (`http://user:secret@host`, as some proxies want) was
/// printed verbatim in errors and in `pushed N scores to …`. (Issue 41, defect 14.)
#[test]
fn credentials_in_base_urls_are_redacted_in_every_error_and_report() {
    const SECRET: &str = "hunter2-secret";
    let cache = tempfile::tempdir().unwrap();
    let no_secret = |out: &std::process::Output, what: &str| {
        let all = format!("{}{}", stdout(out), stderr(out));
        assert!(!all.contains(SECRET), "{what} shows the secret: {all}");
    };

    // A push that succeeds names the server without its userinfo.
    let lf = langfuse(Api::V4, None, None);
    let model = scripted(vec![anthropic_reply(&judgment(2.0, 0.8).to_string(), 5, 4)]);
    let mut env = langfuse_env(&lf);
    env[0].1 = with_userinfo(&lf.server.url, &format!("lf-user:{SECRET}"));
    env.push((
        "ANTHROPIC_BASE_URL",
        with_userinfo(&model.url, &format!("me:{SECRET}")),
    ));
    env.push(("ANTHROPIC_API_KEY", "sk-ant-test".to_owned()));
    let out = pipeline(&env, cache.path(), &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let shown = lf.server.url.replacen("://", "://***@", 1);
    assert!(
        stderr(&out).contains(&format!("pushed 7 scores to {shown} in 1 request")),
        "{}",
        stderr(&out)
    );
    no_secret(&out, "a push");

    // Refused keys, a server that errs, and no server at all.
    let refusing = serve(|_| Response::json(401, &json!({"message": "Invalid credentials"})));
    let failing = serve(|_| {
        Response::json(500, &json!({"error": {"message": "boom"}})).with_header("retry-after", "0")
    });
    let nowhere = "http://127.0.0.1:1".to_owned();
    let dir = tempfile::tempdir().unwrap();
    let bodies = dir.path().join("scores.jsonl");
    std::fs::write(
        &bodies,
        "{\"id\":\"a\",\"traceId\":\"t\",\"name\":\"goal_achievement\",\"value\":1}\n",
    )
    .unwrap();
    for base in [&refusing.url, &failing.url, &nowhere] {
        let url = with_userinfo(base, &format!("u:{SECRET}"));
        for var in ["LANGFUSE_HOST", "LANGFUSE_BASE_URL"] {
            let env = [
                (var, url.clone()),
                ("LANGFUSE_PUBLIC_KEY", "pk-lf-test".to_owned()),
                ("LANGFUSE_SECRET_KEY", "sk-lf-test".to_owned()),
            ];
            let push = grade_with_env(
                &env_refs(&env),
                cache.path(),
                &[
                    "push",
                    "--langfuse",
                    bodies.to_str().unwrap(),
                    "--attempts",
                    "1",
                ],
            );
            assert_eq!(code(&push), 2, "{}", stderr(&push));
            assert!(
                stderr(&push).contains("***@127.0.0.1:"),
                "{}",
                stderr(&push)
            );
            no_secret(&push, &format!("push to {var}={base}"));
            if var == "LANGFUSE_HOST" {
                // The same server and messages: read once.
                continue;
            }
            let read = grade_with_env(
                &env_refs(&env),
                cache.path(),
                &[
                    "--rubric",
                    "claude-code-v1",
                    "--source",
                    "langfuse:trace/t",
                    "--all",
                    "--no-record",
                ],
            );
            assert_eq!(code(&read), 2, "{}", stderr(&read));
            assert!(
                stderr(&read).contains("***@127.0.0.1:"),
                "{}",
                stderr(&read)
            );
            no_secret(&read, &format!("a read from {var}={base}"));
        }
        for (var, judge) in [
            ("ANTHROPIC_BASE_URL", "anthropic:claude-test"),
            ("OPENAI_BASE_URL", "openai:gpt-test"),
        ] {
            let env = vec![
                (var, url.clone()),
                ("ANTHROPIC_API_KEY", "sk-ant-test".to_owned()),
                ("OPENAI_API_KEY", "sk-openai-test".to_owned()),
            ];
            let out = judge_transcript(&env, cache.path(), judge, &["--judge-attempts", "1"]);
            assert_eq!(code(&out), 2, "{}", stderr(&out));
            assert!(stderr(&out).contains("***@127.0.0.1:"), "{}", stderr(&out));
            no_secret(&out, &format!("a judge at {var}={base}"));
        }
    }

    // An address that is no URL at all is refused, without its credentials.
    let env = [
        ("LANGFUSE_HOST", format!("u:{SECRET}@langfuse.example.com")),
        ("LANGFUSE_PUBLIC_KEY", "pk-lf-test".to_owned()),
        ("LANGFUSE_SECRET_KEY", "sk-lf-test".to_owned()),
    ];
    let push = grade_with_env(
        &env_refs(&env),
        cache.path(),
        &["push", "--langfuse", bodies.to_str().unwrap()],
    );
    assert_eq!(code(&push), 2, "{}", stderr(&push));
    assert!(
        stderr(&push).contains("`***@langfuse.example.com` is not an http:// or https:// address"),
        "{}",
        stderr(&push)
    );
    no_secret(&push, "a malformed LANGFUSE_HOST");
}

/// The judgment cache key named the provider and model but not the server, so the same
/// model name on two `OPENAI_BASE_URL` servers shared replies: the second server was never
/// asked. (Issue 41, defect 15.)
#[test]
fn the_judgment_cache_keeps_replies_of_two_servers_with_one_model_name_apart() {
    let cache = tempfile::tempdir().unwrap();
    let first = scripted(vec![openai_reply(&judgment(3.0, 0.9).to_string(), 10, 10)]);
    let second = scripted(vec![openai_reply(&judgment(0.0, 0.1).to_string(), 10, 10)]);
    let ask = |server: &Server| {
        let env = vec![("OPENAI_BASE_URL", format!("{}/v1", server.url))];
        let out = judge_transcript(&env, cache.path(), "openai:llama3", &[]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        serde_json::from_str::<Value>(&stdout(&out)).unwrap()
    };
    let a = ask(&first);
    let b = ask(&second);
    assert_eq!(first.requests().len(), 1);
    assert_eq!(
        second.requests().len(),
        1,
        "the second server is asked, not the cache"
    );
    assert_eq!(b["judge"]["cached"], 0);
    assert_ne!(
        a["dimensions"]["goal_achievement"]["label"],
        b["dimensions"]["goal_achievement"]["label"]
    );
    // Each server's reply is still kept for itself.
    let again = ask(&first);
    assert_eq!(again["judge"]["cached"], 1);
    assert_eq!(first.requests().len(), 1);
    assert_eq!(again["dimensions"], a["dimensions"]);
}

/// Score ids were derived from the session, rubric digest and score name only, so grading
/// `langfuse:trace/A` and then `langfuse:trace/B` of one session sent the same ids with
/// another `traceId`, and Langfuse's upsert moved A's scores to B. (Issue 41, defect 21.)
#[test]
fn two_traces_of_one_session_pushed_in_turn_keep_both_sets_of_scores() {
    let cache = tempfile::tempdir().unwrap();
    let lf = langfuse(Api::V4, None, None);
    let model = scripted(vec![anthropic_reply(&judgment(2.0, 0.8).to_string(), 5, 4)]);
    let mut env = langfuse_env(&lf);
    env.extend(anthropic_env(&model));
    let traces: Vec<String> = trace_downloads()
        .iter()
        .take(2)
        .map(|d| d["trace"]["id"].as_str().unwrap().to_owned())
        .collect();
    let push = |trace: &str| {
        let source = format!("langfuse:trace/{trace}");
        let out = grade_with_env(
            &env_refs(&env),
            cache.path(),
            &[
                "--rubric",
                "langfuse-v1",
                "--source",
                &source,
                "--all",
                "--judge",
                "anthropic:claude-test",
                "--push",
                "langfuse",
                "--no-record",
                "--format",
                "json",
            ],
        );
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(
            result["sessionId"], SESSION,
            "both traces are of one session"
        );
    };
    push(&traces[0]);
    let first = lf.scores.lock().unwrap().clone();
    assert_eq!(first.len(), 7);
    push(&traces[1]);
    let both = lf.scores.lock().unwrap().clone();
    let on = |trace: &str| -> Vec<Value> {
        both.iter()
            .filter(|s| s["traceId"] == trace)
            .cloned()
            .collect()
    };
    assert_eq!(both.len(), 14, "{both:#?}");
    assert_eq!(
        on(&traces[0]),
        first,
        "the first trace keeps its scores as they were"
    );
    assert_eq!(on(&traces[1]).len(), 7);

    // Pushing the same grading again overwrites its own scores and nothing else.
    push(&traces[0]);
    let again = lf.scores.lock().unwrap().clone();
    assert_eq!(again.len(), 14, "{again:#?}");
    let mut ids: Vec<&str> = again.iter().map(|s| s["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 14);
}

/// `--source langfuse:session/ID` kept every page a server handed out: 10,000 pages of 9 MB
/// took 3.3 GB, and at the 10,000th page the read stopped in silence, grading what it had.
/// A read is capped in pages and bytes, and reaching a cap is an error naming the session
/// and the cap. (Issue 41, defect 9.)
#[test]
fn a_langfuse_server_that_pages_without_end_is_stopped_at_a_cap_naming_the_session() {
    let cache = tempfile::tempdir().unwrap();
    let pad = "x".repeat(10_000);
    let endless = serve(move |request: &Request| {
        let n: usize = request
            .param("cursor")
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let observation = json!({
            "id": format!("o{n}"), "traceId": "t", "type": "SPAN", "name": "step",
            "startTime": "2025-01-01T00:00:00.000Z", "input": pad,
        });
        Response::json(
            200,
            &json!({"data": [observation], "meta": {"cursor": (n + 1).to_string()}}),
        )
    });
    let read = |caps: &[(&'static str, &str)]| {
        let mut env = vec![
            ("LANGFUSE_BASE_URL", endless.url.clone()),
            ("LANGFUSE_PUBLIC_KEY", "pk-lf-test".to_owned()),
            ("LANGFUSE_SECRET_KEY", "sk-lf-test".to_owned()),
        ];
        env.extend(caps.iter().map(|(k, v)| (*k, (*v).to_owned())));
        grade_with_env(
            &env_refs(&env),
            cache.path(),
            &[
                "--rubric",
                "claude-code-v1",
                "--source",
                "langfuse:session/endless",
                "--all",
                "--no-record",
            ],
        )
    };
    let before = endless.requests().len();
    let out = read(&[("GRADE_LANGFUSE_MAX_BYTES", "100000")]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim_end(),
        format!(
            "error[E213]: cannot read session `endless` from Langfuse at `{}`: the server sent more than 100000 bytes for it, the most one read takes (`GRADE_LANGFUSE_MAX_BYTES` sets it)",
            endless.url
        )
    );
    let asked = endless.requests().len() - before;
    assert!(
        (10..=11).contains(&asked),
        "{asked} pages of 10 kB were read"
    );

    let before = endless.requests().len();
    let out = read(&[("GRADE_LANGFUSE_MAX_PAGES", "5")]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot read session `endless` from Langfuse at `")
            && stderr(&out).contains(
                "the server had more than 5 pages for it, the most one read takes (`GRADE_LANGFUSE_MAX_PAGES` sets it)"
            ),
        "{}",
        stderr(&out)
    );
    assert_eq!(endless.requests().len() - before, 5);

    // A cap that is no number is refused, not ignored.
    let out = read(&[("GRADE_LANGFUSE_MAX_PAGES", "lots")]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`GRADE_LANGFUSE_MAX_PAGES` must be a number of pages, not `lots`"),
        "{}",
        stderr(&out)
    );
}
