//! The session-quality design end to end against stand-ins on 127.0.0.1: model servers in
//! the Anthropic and OpenAI formats (retries, prose around the JSON, replies without a
//! judgment, token usage, the judgment cache, repeated runs and their agreement), and a
//! Langfuse server serving real traces and recording pushed scores. Nothing here calls a
//! network beyond loopback.

mod common;
mod stand_in;

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
        assert!(request.header("anthropic-version").is_some());
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
