//! The Claude Code and Langfuse sources and the `claude-code-v1` pack, through the `grade`
//! binary, on the fixtures in `rubrics/claude-code-v1/tests/`: real transcripts and traces
//! (copied with their attribution, `real/SOURCES.md`) and one hand-made session per rule.
//!
//! The fixtures are the pack's own tests: `grade rubric test claude-code-v1` compares each
//! with its `.expected.jsonl`. After a deliberate change to the pack or a source, rewrite
//! them with `grade rubric test rubrics/claude-code-v1 --update` and review the diff.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use grade_engine::entry::MetaRef;
use grade_engine::{read_source, SessionFilter};
use serde_json::Value;

const PACK: &str = "claude-code-v1";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixtures_dir() -> PathBuf {
    repo().join("rubrics/claude-code-v1/tests")
}

fn grade(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_grade"))
        .args(args)
        .output()
        .expect("the grade binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every fixture: transcripts (`*.jsonl`, the `{loglines}` `*.json`) and traces (`*.trace.json`).
fn fixtures() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for item in std::fs::read_dir(dir).expect("fixture folder is readable") {
            let path = item.expect("fixture folder entry").path();
            if path.is_dir() {
                walk(&path, out);
                continue;
            }
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let is_fixture = (name.ends_with(".jsonl") || name.ends_with(".json"))
                && !name.ends_with(".expected.jsonl");
            if is_fixture {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&fixtures_dir(), &mut out);
    out.sort();
    assert!(out.len() >= 17, "fixtures went missing: {out:?}");
    out
}

fn relative(path: &Path) -> String {
    path.strip_prefix(fixtures_dir())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The results as a list, without the grading time.
fn results_of(mut value: Value) -> Vec<Value> {
    let mut list = match value.take() {
        Value::Array(items) => items,
        one => vec![one],
    };
    for result in &mut list {
        if let Some(map) = result.as_object_mut() {
            map.remove("timestamp");
        }
    }
    list
}

fn graded(fixture: &Path) -> Vec<Value> {
    let source = fixture.to_str().expect("UTF-8 path");
    let out = grade(&[
        "--rubric",
        PACK,
        "--source",
        source,
        "--all",
        "--explain",
        "--format",
        "json",
        "--no-record",
    ]);
    assert!(
        out.status.success(),
        "{}: {}",
        relative(fixture),
        text(&out.stderr)
    );
    results_of(serde_json::from_slice(&out.stdout).expect("JSON output"))
}

#[test]
fn every_fixture_grades_as_expected_with_every_rule_firing() {
    let out = grade(&[
        "rubric",
        "test",
        PACK,
        "--coverage",
        "--min-coverage",
        "100",
    ]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).ends_with(" passed, 0 failed\n"),
        "{}",
        text(&out.stdout)
    );
}

/// The rule ids of the pack, from `grade rubric show`.
fn pack_rules() -> BTreeSet<String> {
    let out = grade(&["rubric", "show", PACK, "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    shown["dimensions"]
        .as_array()
        .expect("dimensions")
        .iter()
        .flat_map(|d| d["rules"].as_array().expect("rules").iter())
        .map(|r| r["id"].as_str().expect("rule id").to_owned())
        .collect()
}

/// Per rule id, the traces it left in the results of a fixture.
fn traces(results: &[Value]) -> BTreeMap<String, Vec<Value>> {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for result in results {
        for rules in result["explain"]
            .as_object()
            .expect("--explain output")
            .values()
        {
            for trace in rules.as_array().expect("rule traces") {
                let id = trace["rule"].as_str().expect("rule id").to_owned();
                out.entry(id).or_default().push(trace.clone());
            }
        }
    }
    out
}

fn fired(trace: &Value) -> bool {
    trace["points"].as_f64().is_some_and(|p| p != 0.0)
        || trace.get("flags").is_some()
        || trace.get("evidence").is_some()
}

#[test]
fn every_rule_fires_on_some_fixture_and_each_rule_fixture_flags_its_rule() {
    let rules = pack_rules();
    let mut fired_somewhere = BTreeSet::new();
    for fixture in fixtures() {
        for (rule, list) in traces(&graded(&fixture)) {
            if list.iter().any(fired) {
                fired_somewhere.insert(rule);
            }
        }
    }
    let silent: Vec<_> = rules.difference(&fired_somewhere).collect();
    assert!(
        silent.is_empty(),
        "rules that fire on no fixture: {silent:?}"
    );

    // The hand-made fixtures exist to make these rules take points or flag.
    let by_fixture = [
        ("read_before_edit.jsonl", &["read-before-edit"][..]),
        ("repeated_reads.jsonl", &["repeated-reads"][..]),
        ("bash_file_work.jsonl", &["bash-file-work"][..]),
        (
            "sequential_lookups.jsonl",
            &["sequential-lookups", "parallel-used"][..],
        ),
        ("no_plan.jsonl", &["plan-multi-step-work"][..]),
        (
            "error_recovery.jsonl",
            &[
                "blind-retry",
                "failure-streak",
                "changed-approach",
                "plan-kept-current",
            ][..],
        ),
    ];
    for (name, wanted) in by_fixture {
        let found = traces(&graded(&fixtures_dir().join("rules").join(name)));
        for rule in wanted {
            let list = found.get(*rule).map(Vec::as_slice).unwrap_or_default();
            let flagged = list
                .iter()
                .any(|t| t.get("flags").is_some() || t.get("evidence").is_some());
            assert!(flagged, "{name}: rule `{rule}` did not fire: {list:?}");
        }
    }
}

/// The transcripts among the fixtures, with their records as parsed JSON (the `loglines`
/// of a wrapper; lines that are not JSON are left out).
fn transcripts() -> Vec<(PathBuf, Vec<Value>)> {
    fixtures()
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".trace.json"))
        .map(|path| {
            let body = std::fs::read_to_string(&path).expect("readable");
            let records = match serde_json::from_str::<Value>(&body) {
                Ok(Value::Object(mut doc)) if doc.contains_key("loglines") => {
                    match doc.remove("loglines") {
                        Some(Value::Array(lines)) => lines,
                        _ => Vec::new(),
                    }
                }
                _ => body
                    .lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect(),
            };
            (path, records)
        })
        .collect()
}

#[test]
fn every_tool_use_block_is_an_entry_and_parallel_calls_share_a_message_id() {
    for (path, records) in transcripts() {
        // Counted from the raw JSON, independently of the reader: tool_use id → message id.
        let mut blocks: HashMap<String, Option<String>> = HashMap::new();
        let mut block_count = 0;
        for record in &records {
            let Some(content) = record.pointer("/message/content").and_then(Value::as_array) else {
                continue;
            };
            for block in content.iter().filter(|b| b["type"] == "tool_use") {
                block_count += 1;
                let message_id = record
                    .pointer("/message/id")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                blocks.insert(
                    block["id"].as_str().expect("tool_use id").to_owned(),
                    message_id,
                );
            }
        }
        let read = read_source(&path, None, &SessionFilter::All).expect("the transcript reads");
        let calls: Vec<_> = read
            .sessions
            .iter()
            .flat_map(|s| &s.entries)
            .filter(|e| e.domain == "tool")
            .collect();
        assert_eq!(
            calls.len(),
            block_count,
            "{}: one entry per tool_use block",
            relative(&path)
        );
        for call in calls {
            let id = call
                .metadata
                .get("toolUseId")
                .and_then(MetaRef::as_str)
                .expect("toolUseId");
            let message_id = call
                .metadata
                .get("messageId")
                .and_then(MetaRef::as_str)
                .expect("messageId");
            if let Some(Some(raw)) = blocks.get(id) {
                assert_eq!(
                    message_id,
                    raw,
                    "{}: `{id}` keeps its message id",
                    relative(&path)
                );
            }
        }
    }

    // The recorded session: one message spread over five lines holds five parallel calls.
    let real = fixtures_dir()
        .join("real/claude_code_transcripts/real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    let read = read_source(&real, None, &SessionFilter::All).expect("reads");
    let parallel: Vec<_> = read.sessions[0]
        .entries
        .iter()
        .filter(|e| {
            e.metadata.get("messageId")
                == Some(MetaRef::Json(&Value::from("msg_018mu4atNCkxSiLt7VVQquTL")))
                && e.domain == "tool"
        })
        .map(|e| e.operation.as_str())
        .collect();
    assert_eq!(parallel, ["Bash", "Glob", "Glob", "Glob", "Glob"]);
    let write = read.sessions[0]
        .entries
        .iter()
        .find(|e| e.operation == "Write")
        .expect("a Write");
    assert!(!write.result.success);
    assert!(
        write
            .error
            .as_deref()
            .is_some_and(|e| e.contains("haven't granted")),
        "{:?}",
        write.error
    );
}

#[test]
fn sidechains_are_marked() {
    let agent = fixtures_dir().join("real/claude_code_transcripts/synthetic/d-kimuson__sample-project/agent-test-hash-123.jsonl");
    let read = read_source(&agent, None, &SessionFilter::All).expect("reads");
    let entries = &read.sessions[0].entries;
    assert!(!entries.is_empty());
    assert!(entries
        .iter()
        .all(|e| e.metadata.get("isSidechain") == Some(MetaRef::Json(&Value::Bool(true)))));

    let mixed = fixtures_dir().join("rules/read_before_edit.jsonl");
    let read = read_source(&mixed, None, &SessionFilter::All).expect("reads");
    let marked: Vec<_> = read.sessions[0]
        .entries
        .iter()
        .filter(|e| e.metadata.get("isSidechain") == Some(MetaRef::Json(&Value::Bool(true))))
        .map(|e| {
            (
                e.operation.as_str(),
                e.metadata.get("agentId").map(MetaRef::to_json),
            )
        })
        .collect();
    assert_eq!(marked, [("Read", Some(Value::from("a1b2c3")))]);
}

#[test]
fn malformed_lines_are_reported_and_skipped() {
    let edge = fixtures_dir()
        .join("real/claude_code_transcripts/synthetic/daaain__test_data/edge_cases.jsonl");
    let out = grade(&[
        "--rubric",
        PACK,
        "--source",
        edge.to_str().expect("UTF-8"),
        "--all",
        "--format",
        "json",
        "--no-record",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    for line in [10, 11, 13, 14, 15, 16] {
        assert!(
            stderr.contains(&format!("edge_cases.jsonl:{line}: skipped")),
            "line {line} is not reported:\n{stderr}"
        );
    }
    assert!(
        stderr.lines().all(|l| l.starts_with("warning: ")),
        "{stderr}"
    );
}

#[test]
fn a_project_folder_grades_its_sessions_together() {
    let folder = fixtures_dir().join("real/claude_code_transcripts/synthetic/daaain__test_data");
    let read = read_source(&folder, None, &SessionFilter::All).expect("the folder reads");
    let ids: Vec<_> = read.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "edge_cases",
            "todowrite_session",
            "test_session",
            "session_b"
        ]
    );
    // edge_cases.jsonl holds a copy of a todowrite_session call: it is counted once.
    let todo = read
        .sessions
        .iter()
        .find(|s| s.id == "todowrite_session")
        .expect("session");
    assert_eq!(
        todo.entries
            .iter()
            .filter(|e| e.operation == "TodoWrite")
            .count(),
        3
    );

    let out = grade(&[
        "--rubric",
        PACK,
        "--source",
        folder.to_str().expect("UTF-8"),
        "--all",
        "--format",
        "jsonl",
        "--no-record",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 4);
    let out = grade(&[
        "--rubric",
        PACK,
        "--source",
        folder.to_str().expect("UTF-8"),
        "--format",
        "jsonl",
        "--no-record",
        "session_b",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(result["sessionId"], "session_b");
}

#[test]
fn every_real_trace_reads_as_one_session() {
    // The user's messages and the assistant's replies each trace holds, read by eye.
    for (name, users, replies) in [
        ("claude-agent-2025-12-22", 1, 2),
        ("openai-agents-2025-09-30", 1, 1),
        ("pydantic-ai-tools-2025-12-04", 3, 2),
    ] {
        let path = fixtures_dir().join(format!("real/langfuse_traces/{name}.trace.json"));
        let raw: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("JSON");
        let read = read_source(&path, None, &SessionFilter::All).expect("the trace reads");
        assert!(read.warnings.is_empty(), "{name}: {:?}", read.warnings);
        let [session] = read.sessions.as_slice() else {
            panic!("{name}: one session")
        };
        assert_eq!(
            session.id,
            raw["trace"]["id"].as_str().expect("trace id"),
            "{name}: no sessionId, so the trace id"
        );
        let observations = raw["observations"].as_array().expect("observations");
        let count = |domain: &str, operation: &str| {
            session
                .entries
                .iter()
                .filter(|e| {
                    e.domain == domain && (operation.is_empty() || e.operation == operation)
                })
                .count()
        };
        assert_eq!(
            session.entries.len() - count("message", ""),
            observations.len() + 1,
            "{name}: the trace and each observation"
        );
        assert_eq!(
            (count("message", "user"), count("message", "assistant")),
            (users, replies),
            "{name}"
        );
        let tools = observations.iter().filter(|o| o["type"] == "TOOL").count();
        assert_eq!(
            session
                .entries
                .iter()
                .filter(|e| e.domain == "tool")
                .count(),
            tools,
            "{name}"
        );
    }
}

#[test]
fn formats_are_detected_forced_or_refused() {
    let dir = fixtures_dir().join("real");
    let transcript =
        dir.join("claude_code_transcripts/synthetic/simonw__tests/sample_session.jsonl");
    let chatml = repo().join("tests/fixtures/not-a-source/claude-agent-2025-12-22.chatml.json");

    let out = grade(&[
        "--rubric",
        PACK,
        "--source",
        chatml.to_str().expect("UTF-8"),
        "--all",
        "--no-record",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        crate::common::registry_lists(&stderr).contains("(tried [TRIED FORMATS])"),
        "{stderr}"
    );

    let out = grade(&[
        "--rubric",
        PACK,
        "--source",
        transcript.to_str().expect("UTF-8"),
        "--source-format",
        "langfuse",
        "--all",
        "--no-record",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("sample_session.jsonl:2: not a Langfuse trace"),
        "{}",
        text(&out.stderr)
    );

    let out = grade(&[
        "--rubric",
        PACK,
        "--source",
        transcript.to_str().expect("UTF-8"),
        "--source-format",
        "claude-code",
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let read = read_source(
        &transcript,
        Some(&grade_engine::source::ClaudeCode),
        &SessionFilter::All,
    )
    .expect("forced");
    assert_eq!(read.sessions[0].id, "test-session-id");
}

/// cleo-v1 once graded a transcript 50/100 D (a CLEO session that never used CLEO) without a
/// word: a pack that lists its `sources` refuses every other format, with exit 2, before
/// grading, whether the format was detected, asked for, or a folder's.
#[test]
fn a_cleo_pack_refuses_a_transcript_instead_of_grading_it_as_a_session_without_cleo() {
    let real = fixtures_dir()
        .join("real/claude_code_transcripts/real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    let real = real.to_str().expect("UTF-8");
    let folder = fixtures_dir().join("real/claude_code_transcripts/synthetic/simonw__tests");
    let refused = |args: &[&str], source: &str| {
        let out = grade(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}: nothing is graded");
        let expected = format!(
            "error[E117]: `{source}` reads as a Claude Code transcript (`claude-code`), and rubric `cleo-v1` grades only `cleo-db` and `cleo-jsonl` sources (the built-in rubrics `claude-code-v1` and `coding-agent-v1` grade it)\n"
        );
        assert_eq!(text(&out.stderr), expected, "{args:?}");
    };
    let all = [
        "--rubric",
        "cleo-v1",
        "--source",
        real,
        "--all",
        "--no-record",
    ];
    refused(&all, real);
    refused(&[&all[..], &["--format", "jsonl"]].concat(), real);
    refused(
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            real,
            "--no-record",
            "1af7fc5e-8455-4414-9ccd-011d40f70b2a",
        ],
        real,
    );
    refused(
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            folder.to_str().expect("UTF-8"),
            "--all",
            "--no-record",
        ],
        // A folder's files are each read in their own format: the error names the file.
        folder.join("sample_session.jsonl").to_str().expect("UTF-8"),
    );
    // A CLEO log forced to read as a transcript is refused the same way.
    let example = repo().join("examples/cleo-audit.jsonl");
    let example = example.to_str().expect("UTF-8");
    refused(
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            example,
            "--source-format",
            "claude-code",
            "--all",
            "--no-record",
        ],
        example,
    );
    // And the other way round: the tool-discipline pack does not grade a CLEO log.
    let out = grade(&["--rubric", "claude-code-v1", "--source", example, "--all"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!("error[E117]: `{example}` reads as a CLEO audit log (`cleo-jsonl`), and rubric `claude-code-v1` grades only `claude-code` and `langfuse` sources (the built-in rubrics `cleo-v1` and `cleo-v2` grade it)\n")
    );
}

/// A long session stays within the script operation budget: no rule may be quadratic in
/// the number of calls.
#[test]
fn a_long_session_grades_within_the_script_budget() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("long.jsonl");
    let mut body = String::new();
    for i in 0..2500u32 {
        let file = format!("/w/src/f{}.py", (i * 7919) % 300);
        let (name, input) = match i % 10 {
            0..=3 => ("Read", serde_json::json!({ "file_path": file })),
            4 | 5 => (
                "Edit",
                serde_json::json!({ "file_path": file, "old_string": "a", "new_string": "b" }),
            ),
            6..=8 => (
                "Bash",
                serde_json::json!({ "command": format!("python -m pytest {file} && cat {file}") }),
            ),
            _ => ("Grep", serde_json::json!({ "pattern": format!("x{i}") })),
        };
        let timestamp = format!(
            "2025-10-01T{:02}:{:02}:{:02}.000Z",
            i / 3600,
            (i / 60) % 60,
            i % 60
        );
        let call = serde_json::json!({"type": "assistant", "sessionId": "long", "uuid": format!("a{i}"), "timestamp": timestamp, "cwd": "/w",
            "message": {"id": format!("m{i}"), "role": "assistant", "content": [{"type": "tool_use", "id": format!("t{i}"), "name": name, "input": input}]}});
        let result = serde_json::json!({"type": "user", "sessionId": "long", "uuid": format!("r{i}"), "timestamp": timestamp, "cwd": "/w",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": "ok", "is_error": i % 13 == 0}]}});
        body.push_str(&format!("{call}\n{result}\n"));
    }
    std::fs::write(&path, body).expect("writable");
    let out = grade(&[
        "--rubric",
        PACK,
        "--source",
        path.to_str().expect("UTF-8"),
        "--all",
        "--format",
        "json",
        "--no-record",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// Writes `records` as the lines of `dir/name`, returning its path as text.
fn write_transcript(dir: &Path, name: &str, records: &[Value]) -> String {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("folder is creatable");
    }
    let body: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&path, body).expect("writable");
    path.to_str().expect("UTF-8 path").to_owned()
}

/// The JSON results of grading `source` (file or folder) with `--all`, and stderr.
fn graded_all(source: &str) -> (Vec<Value>, String) {
    let out = grade(&[
        "--rubric",
        PACK,
        "--source",
        source,
        "--all",
        "--format",
        "json",
        "--no-record",
    ]);
    assert!(out.status.success(), "{source}: {}", text(&out.stderr));
    (
        results_of(serde_json::from_slice(&out.stdout).expect("JSON output")),
        text(&out.stderr),
    )
}

fn real_transcript() -> PathBuf {
    fixtures_dir()
        .join("real/claude_code_transcripts/real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")
}

/// A record of a made-up session `s1`: `n` orders it (uuid, timestamp second).
fn record(n: u32, kind: &str, content: Value) -> Value {
    let mut r = serde_json::json!({"type": kind, "sessionId": "s1", "uuid": format!("u{n}"),
        "timestamp": format!("2025-09-03T00:{:02}:{:02}Z", n / 60, n % 60), "cwd": "/p",
        "message": {"role": kind, "content": content}});
    if kind == "assistant" {
        r["message"]["id"] = format!("msg_{n}").into();
    }
    r
}

fn tool_use(id: &str, name: &str, input: Value) -> Value {
    serde_json::json!([{"type": "tool_use", "id": id, "name": name, "input": input}])
}

fn tool_result(id: &str, content: &str, is_error: bool) -> Value {
    serde_json::json!([{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": is_error}])
}

/// Claude Code 2.x starts a transcript with a `queue-operation` record, which has an
/// `operation` key as CLEO audit entries do: it is still a transcript, alone or in a folder.
#[test]
fn a_transcript_starting_with_a_queue_operation_reads_as_claude_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    let real = std::fs::read_to_string(real_transcript()).expect("fixture");
    let queue = serde_json::json!({"type": "queue-operation", "operation": "dequeue",
        "timestamp": "2025-09-03T00:47:19.000Z", "sessionId": "1af7fc5e-8455-4414-9ccd-011d40f70b2a"});
    let plain = graded_all(real_transcript().to_str().expect("UTF-8")).0;
    std::fs::create_dir_all(dir.path().join("proj")).expect("folder");
    for name in ["q.jsonl", "proj/q.jsonl"] {
        std::fs::write(dir.path().join(name), format!("{queue}\n{real}")).expect("writable");
    }
    let file = dir.path().join("q.jsonl");
    let folder = dir.path().join("proj");
    for source in [&file, &folder] {
        let (results, stderr) = graded_all(source.to_str().expect("UTF-8"));
        assert!(!stderr.contains("cleo"), "{stderr}");
        assert_eq!(results.len(), 1, "{stderr}");
        assert_eq!(results[0]["percent"], plain[0]["percent"]);
        assert_eq!(results[0]["dimensions"], plain[0]["dimensions"]);
    }
    // Other record types of the schema are read past the same way, and `--source-format
    // cleo-jsonl` still reads what the user forces.
    let mut lines = vec![queue.clone()];
    for kind in [
        "pr-link",
        "agent-name",
        "custom-title",
        "last-prompt",
        "permission-mode",
        "ai-title",
        "agent-setting",
        "bridge-session",
        "worktree-state",
        "attachment",
        "progress",
    ] {
        lines.push(serde_json::json!({"type": kind, "sessionId": "s1", "timestamp": "2025-09-03T00:00:00Z"}));
    }
    lines.push(record(1, "user", "hi".into()));
    let odd = write_transcript(dir.path(), "odd.jsonl", &lines);
    let (results, stderr) = graded_all(&odd);
    assert_eq!(results.len(), 1);
    assert!(stderr.is_empty(), "{stderr}");
}

/// A project folder holding a truncated copy of a session beside the full transcript (a
/// resumed session copies earlier records) grades as the full transcript: the copy of a
/// call that has its failed result wins over the earlier copy without one.
#[test]
fn a_copied_call_without_result_does_not_hide_the_failure_of_its_later_copy() {
    let dir = tempfile::tempdir().expect("temp dir");
    let real = std::fs::read_to_string(real_transcript()).expect("fixture");
    let head: String = real.lines().take(25).map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.path().join("a-first.jsonl"), head).expect("writable");
    std::fs::write(dir.path().join("b-resumed.jsonl"), &real).expect("writable");
    let (folder, _) = graded_all(dir.path().to_str().expect("UTF-8"));
    let (alone, _) = graded_all(real_transcript().to_str().expect("UTF-8"));
    assert_eq!(folder[0]["percent"], alone[0]["percent"]);
    assert_eq!(folder[0]["dimensions"], alone[0]["dimensions"]);
    assert_eq!(folder[0]["grade"], "B");
}

/// The flags of the one session graded from `records`, and its error-recovery dimension.
fn graded_records(records: &[Value]) -> Value {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_transcript(dir.path(), "t.jsonl", records);
    let (mut results, stderr) = graded_all(&path);
    assert_eq!(results.len(), 1, "{stderr}");
    results.remove(0)
}

fn flags_of(result: &Value) -> Vec<String> {
    result["flags"]
        .as_array()
        .expect("flags")
        .iter()
        .map(|f| f.as_str().expect("a flag is text").to_owned())
        .collect()
}

/// One session as Claude Code's transcript records it and as the Claude Agent SDK's
/// Langfuse instrumentation does (its shapes: each block of a message a generation of its
/// own, tool arguments wrapped in `{"input": …}`, outputs as JSON text, observations not in
/// time order): two Reads made together, a Write refused, a reply that says so.
fn same_session_twice(dir: &Path) -> (String, String) {
    let prompt = "Put the greeting of /p/b.txt into /p/a.txt";
    let first = "I'll read both files first.";
    let last = "I couldn't write /p/a.txt: permission to write was not granted.";
    let refused =
        "Claude requested permissions to write to /p/a.txt, but you haven't granted it yet.";
    let at = |s: &str| format!("2025-12-22T10:00:{s}Z");
    let line = |kind: &str, uuid: &str, t: &str, message: Value| serde_json::json!({"type": kind, "sessionId": "same", "uuid": uuid, "timestamp": at(t), "message": message});
    let call = |id: &str, name: &str, input: Value| serde_json::json!({"type": "tool_use", "id": id, "name": name, "input": input});
    let result = |id: &str, text: &str, error: bool| serde_json::json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": text, "is_error": error}]});
    let a = serde_json::json!({"file_path": "/p/a.txt"});
    let b = serde_json::json!({"file_path": "/p/b.txt"});
    let write = serde_json::json!({"file_path": "/p/a.txt", "content": "hello world"});
    let transcript = write_transcript(
        dir,
        "same.jsonl",
        &[
            line(
                "user",
                "u1",
                "00.000",
                serde_json::json!({"role": "user", "content": prompt}),
            ),
            line(
                "assistant",
                "a1",
                "00.100",
                serde_json::json!({"id": "msg_1", "role": "assistant", "content": [{"type": "text", "text": first}]}),
            ),
            line(
                "assistant",
                "a2",
                "01.000",
                serde_json::json!({"id": "msg_1", "role": "assistant", "content": [call("toolu_1", "Read", a.clone())]}),
            ),
            line(
                "assistant",
                "a3",
                "01.500",
                serde_json::json!({"id": "msg_1", "role": "assistant", "content": [call("toolu_2", "Read", b.clone())]}),
            ),
            line("user", "u2", "02.050", result("toolu_1", "hello", false)),
            line("user", "u3", "02.150", result("toolu_2", "world", false)),
            line(
                "assistant",
                "a4",
                "03.000",
                serde_json::json!({"id": "msg_2", "role": "assistant", "content": [call("toolu_3", "Write", write.clone())]}),
            ),
            line("user", "u4", "04.050", result("toolu_3", refused, true)),
            line(
                "assistant",
                "a5",
                "05.000",
                serde_json::json!({"id": "msg_3", "role": "assistant", "content": [{"type": "text", "text": last}]}),
            ),
        ],
    );
    let reply =
        |content: Value| serde_json::json!({"content": content, "role": "assistant"}).to_string();
    let obs = |id: &str, kind: &str, name: &str, start: &str, end: &str| {
        serde_json::json!({"id": id, "traceId": "t-same", "type": kind, "name": name, "parentObservationId": "root",
            "startTime": at(start), "endTime": at(end), "level": "DEFAULT"})
    };
    let mut observations = vec![
        obs("t2", "TOOL", "Read", "02.100", "02.150"),
        obs("t1", "TOOL", "Read", "02.000", "02.050"),
        obs(
            "g1",
            "GENERATION",
            "claude.assistant.turn",
            "00.100",
            "01.000",
        ),
        obs(
            "g2",
            "GENERATION",
            "claude.assistant.turn",
            "01.000",
            "01.500",
        ),
        obs(
            "g3",
            "GENERATION",
            "claude.assistant.turn",
            "01.500",
            "02.000",
        ),
        obs("t3", "TOOL", "Write", "04.000", "04.050"),
        obs(
            "g4",
            "GENERATION",
            "claude.assistant.turn",
            "03.000",
            "04.000",
        ),
        obs(
            "g5",
            "GENERATION",
            "claude.assistant.turn",
            "05.000",
            "05.500",
        ),
    ];
    let mut root = obs("root", "SPAN", "claude.conversation", "00.000", "05.500");
    root.as_object_mut()
        .expect("object")
        .remove("parentObservationId");
    observations.push(root);
    for o in &mut observations {
        let id = o["id"].as_str().expect("id").to_owned();
        let (input, output) = match id.as_str() {
            "g1" => (
                serde_json::json!({"content": prompt, "role": "user"}).to_string(),
                reply(serde_json::json!([{"type": "text", "text": first}])),
            ),
            "g2" => (
                r#"{"content":"role"}"#.to_owned(),
                reply(serde_json::json!([call("toolu_1", "Read", a.clone())])),
            ),
            "g3" => (
                r#"{"content":"role"}"#.to_owned(),
                reply(serde_json::json!([call("toolu_2", "Read", b.clone())])),
            ),
            "g4" => (
                r#"{"content":"role"}"#.to_owned(),
                reply(serde_json::json!([call("toolu_3", "Write", write.clone())])),
            ),
            "g5" => (
                r#"{"content":"role"}"#.to_owned(),
                reply(serde_json::json!([{"type": "text", "text": last}])),
            ),
            "t1" => (
                serde_json::json!({"input": a}).to_string(),
                r#"{"content":[{"type":"text","text":"hello"}]}"#.to_owned(),
            ),
            "t2" => (
                serde_json::json!({"input": b}).to_string(),
                r#"{"content":[{"type":"text","text":"world"}]}"#.to_owned(),
            ),
            "t3" => (
                serde_json::json!({"input": write}).to_string(),
                String::new(),
            ),
            _ => (
                serde_json::json!({"prompt": prompt}).to_string(),
                reply(serde_json::json!([{"type": "text", "text": last}])),
            ),
        };
        o["input"] = input.into();
        if !output.is_empty() {
            o["output"] = output.into();
        }
        if id == "t3" {
            o["level"] = "ERROR".into();
            o["statusMessage"] = refused.into();
        }
    }
    let trace = serde_json::json!({
        "trace": {"id": "t-same", "name": "claude.conversation", "timestamp": at("00.000"), "sessionId": "same",
                  "input": serde_json::json!({"prompt": prompt, "system": "You fix files."}).to_string(),
                  "output": reply(serde_json::json!([{"type": "text", "text": last}]))},
        "observations": observations,
    });
    let trace_path = dir.join("same.trace.json");
    std::fs::write(&trace_path, trace.to_string()).expect("writable");
    (transcript, trace_path.to_str().expect("UTF-8").to_owned())
}

/// A result's scores, flags and evidence with entry places (`#12`) left out: a trace has
/// entries a transcript has not (the trace, its spans and generations).
fn verdicts(result: &Value) -> Value {
    let unplaced = |text: &Value| {
        let text = text.as_str().unwrap_or_default();
        let mut out = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            out.push(c);
            if c == '#' {
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
                // A transcript's place adds its line and call id: `#7 (t.jsonl:7, toolu_3)`.
                if text[text.len() - chars.clone().map(char::len_utf8).sum::<usize>()..]
                    .starts_with(" (")
                {
                    for skipped in chars.by_ref() {
                        if skipped == ')' {
                            break;
                        }
                    }
                }
            }
        }
        Value::from(out)
    };
    let mut dims = serde_json::Map::new();
    for (id, d) in result["dimensions"].as_object().expect("dimensions") {
        let evidence: Vec<Value> = d["evidence"]
            .as_array()
            .expect("evidence")
            .iter()
            .map(unplaced)
            .collect();
        dims.insert(id.clone(), serde_json::json!({"score": d["score"], "notApplicable": d["notApplicable"], "evidence": evidence}));
    }
    let flags: Vec<Value> = result["flags"]
        .as_array()
        .expect("flags")
        .iter()
        .map(unplaced)
        .collect();
    serde_json::json!({"totalScore": result["totalScore"], "dimensions": dims, "flags": flags})
}

/// A Langfuse trace of the Claude Agent SDK is graded as the transcript of the same session.
/// Its replies were not entries, so a reply owning up to a failure went unseen and the
/// failure counted as left behind (−5); its calls had no message, so two Reads made
/// together counted as made one after the other (−5).
#[test]
fn a_claude_agent_sdk_trace_is_graded_as_the_transcript_of_the_same_session() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (transcript, trace) = same_session_twice(dir.path());
    let (from_transcript, stderr) = graded_all(&transcript);
    assert!(stderr.is_empty(), "{stderr}");
    let (from_trace, stderr) = graded_all(&trace);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(verdicts(&from_trace[0]), verdicts(&from_transcript[0]));
    let verdict = verdicts(&from_trace[0]);
    assert_eq!(verdict["totalScore"], 80, "{verdict:#}");
    assert_eq!(verdict["flags"], serde_json::json!([]), "{verdict:#}");
    assert_eq!(
        verdict["dimensions"]["errorRecovery"]["evidence"],
        serde_json::json!(["Write failed at # and was not tried again; the reply said so"])
    );
    assert_eq!(
        verdict["dimensions"]["parallelCalls"]["evidence"],
        serde_json::json!(["1 message made several tool calls at once (up to 2)"]),
    );

    // The entries a rule reads: the same messages and calls, in the same order.
    let kinds = |path: &str| -> Vec<String> {
        let read = read_source(Path::new(path), None, &SessionFilter::All).expect("reads");
        read.sessions[0]
            .entries
            .iter()
            .filter(|e| e.domain == "message" || e.domain == "tool")
            .map(|e| {
                let text = e
                    .params
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let message = match e.metadata.get("messageId") {
                    Some(MetaRef::Json(Value::String(id))) => id.clone(),
                    _ => String::new(),
                };
                format!(
                    "{}.{} {text} {}",
                    e.domain,
                    e.operation,
                    !message.is_empty()
                )
            })
            .collect()
    };
    assert_eq!(kinds(&trace)[1..], kinds(&transcript)[1..]);
    assert_eq!(
        kinds(&trace)[0],
        "message.user Put the greeting of /p/b.txt into /p/a.txt false"
    );
}

/// A timestamp written as a number (epoch seconds or milliseconds, which it does not say)
/// was "no `timestamp`" in a transcript and "no `startTime`" in a trace: both sources now
/// name the place, the field and the value, and neither guesses the unit.
#[test]
fn a_timestamp_written_as_a_number_is_reported_with_its_place_field_and_value_in_both_sources() {
    let dir = tempfile::tempdir().expect("temp dir");
    let real = std::fs::read_to_string(real_transcript()).expect("fixture");
    let mut records: Vec<Value> = real
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    // Line 3 is the assistant's first reply.
    records[2]["timestamp"] = Value::from(1_756_860_441_540_u64);
    let path = write_transcript(dir.path(), "epoch.jsonl", &records);
    let (results, stderr) = graded_all(&path);
    assert_eq!(results[0]["skippedLines"], 1, "{stderr}");
    assert!(
        stderr.contains("epoch.jsonl:3: skipped: field `timestamp` is the number `1756860441540`, not a timestamp: it does not say whether it counts seconds or milliseconds since 1970, so it is not read (write ISO-8601 like `2026-03-01T12:00:00Z`)"),
        "{stderr}"
    );
    assert!(!stderr.contains("no `timestamp`"), "{stderr}");

    let trace_path = fixtures_dir().join("real/langfuse_traces/claude-agent-2025-12-22.trace.json");
    let mut trace: Value =
        serde_json::from_str(&std::fs::read_to_string(trace_path).expect("readable"))
            .expect("JSON");
    trace["trace"]["timestamp"] = Value::from(1_766_400_375_528_u64);
    trace["observations"][0]["startTime"] = Value::from(1_766_400_379.155);
    trace["observations"][1]["endTime"] = Value::from(1_766_400_382_849_u64);
    let path = dir.path().join("epoch.trace.json");
    std::fs::write(&path, trace.to_string()).expect("writable");
    let (_, stderr) = graded_all(path.to_str().expect("UTF-8"));
    for expected in [
        "epoch.trace.json: `trace`: the trace entry is left out: field `timestamp` is the number `1766400375528`, not a timestamp",
        "epoch.trace.json: `observations[0]`: skipped: field `startTime` is the number `1766400379.155`, not a timestamp",
        "epoch.trace.json: `observations[1]`: field `endTime` is the number `1766400382849`, not a timestamp: it does not say whether it counts seconds or milliseconds since 1970, so it is not read (write ISO-8601 like `2026-03-01T12:00:00Z`): the observation's duration is left at 0",
    ] {
        assert!(stderr.contains(expected), "{expected}\n{stderr}");
    }
    assert!(!stderr.contains("no `startTime`"), "{stderr}");
}

/// A tool result whose record has no `timestamp` still fails its call (the timestamp only
/// gives the duration); a line lost at the end of a transcript still being written is
/// counted in the result, as a CLEO log's skipped lines are.
#[test]
fn a_tool_result_without_timestamp_keeps_its_failure_and_lost_lines_are_counted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let real = std::fs::read_to_string(real_transcript()).expect("fixture");
    let mut records: Vec<Value> = real
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    // Line 26 holds the failed Write's tool_result.
    records[25]
        .as_object_mut()
        .expect("a record")
        .remove("timestamp");
    let path = write_transcript(dir.path(), "nots.jsonl", &records);
    let (results, stderr) = graded_all(&path);
    let (alone, _) = graded_all(real_transcript().to_str().expect("UTF-8"));
    assert_eq!(results[0]["dimensions"], alone[0]["dimensions"], "{stderr}");
    assert_eq!(results[0]["grade"], "B");
    assert!(results[0].get("skippedLines").is_none(), "nothing was lost");
    assert!(
        stderr.contains("nots.jsonl:26: the record has no `timestamp`: its tool results count"),
        "{stderr}"
    );

    // A damaged last line: the session says it lost it, in JSON and in the report.
    let mut body = std::fs::read_to_string(&path).expect("written");
    body.push_str(r#"{"type":"user","sessionId":"1af7fc5e-8455-4414-9ccd-011d40f70b2a","mess"#);
    std::fs::write(&path, body).expect("writable");
    let (results, stderr) = graded_all(&path);
    assert_eq!(results[0]["skippedLines"], 1, "{stderr}");
    assert!(stderr.contains("skipped 1 malformed line of"), "{stderr}");
    let out = grade(&["--rubric", PACK, "--source", &path, "--all", "--no-record"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout)
            .contains("! 1 malformed line of the source skipped: this grade may miss entries"),
        "{}",
        text(&out.stdout)
    );
}

/// A tool input of an odd shape (`edits` as text, numbers where paths belong) is graded as it
/// stands: no rule script may fail on it and leave the session without a grade.
#[test]
fn a_malformed_tool_input_does_not_make_a_session_ungradable() {
    let inputs = [
        (
            "MultiEdit",
            serde_json::json!({"file_path": "/p/q.py", "edits": "[{\"old_string\":\"a\"}]"}),
        ),
        (
            "MultiEdit",
            serde_json::json!({"file_path": "/p/q.py", "edits": [5]}),
        ),
        (
            "MultiEdit",
            serde_json::json!({"file_path": "/p/q.py", "edits": [{"old_string": 5}]}),
        ),
        (
            "MultiEdit",
            serde_json::json!({"file_path": "/p/q.py", "edits": {"old_string": ""}}),
        ),
        (
            "Edit",
            serde_json::json!({"file_path": 5, "old_string": [1], "new_string": {}}),
        ),
        (
            "Write",
            serde_json::json!({"file_path": ["/p/a"], "content": 3}),
        ),
        (
            "NotebookEdit",
            serde_json::json!({"notebook_path": {"a": 1}}),
        ),
        (
            "Read",
            serde_json::json!({"file_path": "/p/q.py", "offset": {"x": 1}, "limit": [2]}),
        ),
        (
            "Read",
            serde_json::json!({"file_path": "/p/q.py", "offset": {"x": 1}, "limit": [2]}),
        ),
        ("Bash", serde_json::json!({"command": 5, "description": []})),
        ("Bash", serde_json::json!({"command": ["ls"]})),
        ("Grep", serde_json::json!({"pattern": {"a": 1}, "path": 4})),
        ("Glob", serde_json::json!({"pattern": [1]})),
        ("TodoWrite", serde_json::json!({"todos": "none"})),
        ("Task", serde_json::json!("just text")),
    ];
    let mut records = vec![record(1, "user", "go".into())];
    for (i, (name, input)) in inputs.iter().enumerate() {
        let n = 2 * i as u32 + 2;
        let id = format!("t{i}");
        records.push(record(n, "assistant", tool_use(&id, name, input.clone())));
        records.push(record(
            n + 1,
            "user",
            tool_result(&id, "InputValidationError", i % 2 == 0),
        ));
    }
    let result = graded_records(&records);
    assert!(result["percent"].is_number(), "{result}");
}

/// A Read again after a Task subagent edited the file is no repeated read; a real repeat
/// names its first read once (`#2`, not `##2`).
#[test]
fn a_subagent_edit_changes_the_file_for_the_main_agent() {
    let side = |mut r: Value| {
        r["isSidechain"] = true.into();
        r["agentId"] = "ag1".into();
        r
    };
    let read = serde_json::json!({"file_path": "/p/a.py"});
    let records = [
        record(1, "user", "refactor a.py".into()),
        record(2, "assistant", tool_use("t1", "Read", read.clone())),
        record(3, "user", tool_result("t1", "ok", false)),
        record(
            4,
            "assistant",
            tool_use("t2", "Task", serde_json::json!({"prompt": "edit a.py"})),
        ),
        side(record(
            5,
            "assistant",
            tool_use(
                "s1",
                "Edit",
                serde_json::json!({"file_path": "/p/a.py", "old_string": "", "new_string": "new"}),
            ),
        )),
        side(record(6, "user", tool_result("s1", "ok", false))),
        record(7, "user", tool_result("t2", "ok", false)),
        record(8, "assistant", tool_use("t3", "Read", read.clone())),
        record(9, "user", tool_result("t3", "ok", false)),
        record(10, "assistant", tool_use("t4", "Read", read)),
        record(11, "user", tool_result("t4", "ok", false)),
    ];
    let flags = flags_of(&graded_records(&records));
    let again: Vec<_> = flags.iter().filter(|f| f.contains("read again")).collect();
    assert_eq!(again.len(), 1, "{flags:?}");
    assert!(
        again[0].contains("read again at #6 (") && again[0].contains("since its read at #5 ("),
        "{}",
        again[0]
    );
}

/// A compaction summary or a meta record is Claude Code writing, not the user answering a
/// failure: a failure followed only by one and a reply claiming success is left behind.
#[test]
fn a_compaction_summary_is_not_the_user_speaking_after_a_failure() {
    for flag in ["isCompactSummary", "isMeta"] {
        let mut summary = record(
            4,
            "user",
            "This session is being continued from a previous conversation. Summary: ...".into(),
        );
        summary[flag] = true.into();
        let records = [
            record(1, "user", "fix the build".into()),
            record(
                2,
                "assistant",
                tool_use("t1", "Bash", serde_json::json!({"command": "cargo build"})),
            ),
            record(3, "user", tool_result("t1", "error[E0425]", true)),
            summary,
            record(
                5,
                "assistant",
                serde_json::json!([{"type": "text", "text": "All done, the build is fixed."}]),
            ),
        ];
        let result = graded_records(&records);
        assert_eq!(
            result["dimensions"]["errorRecovery"]["score"], 15,
            "{flag}: {result}"
        );
        assert!(
            flags_of(&result)
                .iter()
                .any(|f| f.contains("no reply mentioned the failure")),
            "{flag}: {result}"
        );
    }
    // Nor does it break a run of sequential lookups.
    let mut summary = record(4, "user", "Summary: ...".into());
    summary["isCompactSummary"] = true.into();
    let records = [
        record(1, "user", "look around".into()),
        record(
            2,
            "assistant",
            tool_use("r1", "Read", serde_json::json!({"file_path": "/p/a"})),
        ),
        record(3, "user", tool_result("r1", "a", false)),
        summary,
        record(
            5,
            "assistant",
            tool_use("r2", "Read", serde_json::json!({"file_path": "/p/b"})),
        ),
        record(6, "user", tool_result("r2", "b", false)),
    ];
    let result = graded_records(&records);
    assert_eq!(
        result["dimensions"]["parallelCalls"]["score"], 15,
        "{result}"
    );
}

/// Calls made together in one assistant message ran in parallel: a failed Edit of one file
/// is not "called again with a changed input" by the Edit of another file beside it, and
/// three parallel Reads that fail are not three failures in a row.
#[test]
fn calls_of_one_message_are_not_each_others_retries() {
    let mut records = vec![record(1, "user", "update both files".into())];
    let same_message = |n: u32, id: &str, name: &str, input: Value, message: &str| {
        let mut r = record(n, "assistant", tool_use(id, name, input));
        r["message"]["id"] = message.into();
        r
    };
    records.push(same_message(
        2,
        "e1",
        "Edit",
        serde_json::json!({"file_path": "/p/a.py", "old_string": "x", "new_string": "y"}),
        "m2",
    ));
    records.push(same_message(
        3,
        "e2",
        "Edit",
        serde_json::json!({"file_path": "/p/b.py", "old_string": "x", "new_string": "y"}),
        "m2",
    ));
    records.push(record(4, "user", serde_json::json!([
        {"type": "tool_result", "tool_use_id": "e1", "content": "String to replace not found in file.", "is_error": true},
        {"type": "tool_result", "tool_use_id": "e2", "content": "ok"}])));
    records.push(record(
        5,
        "assistant",
        serde_json::json!([{"type": "text", "text": "Updated both files."}]),
    ));
    let result = graded_records(&records);
    let recovery = &result["dimensions"]["errorRecovery"];
    assert!(
        !recovery["evidence"].to_string().contains("changed input"),
        "{recovery}"
    );
    assert_eq!(
        recovery["score"], 15,
        "the failure was left behind: {result}"
    );

    let mut records = vec![record(1, "user", "read them".into())];
    for (i, file) in ["/p/x", "/p/y", "/p/z"].iter().enumerate() {
        records.push(same_message(
            2 + i as u32,
            &format!("r{i}"),
            "Read",
            serde_json::json!({"file_path": file}),
            "m2",
        ));
    }
    records.push(record(5, "user", serde_json::json!([
        {"type": "tool_result", "tool_use_id": "r0", "content": "File does not exist.", "is_error": true},
        {"type": "tool_result", "tool_use_id": "r1", "content": "File does not exist.", "is_error": true},
        {"type": "tool_result", "tool_use_id": "r2", "content": "File does not exist.", "is_error": true}])));
    records.push(record(6, "assistant", serde_json::json!([{"type": "text", "text": "Could not read them: none of the files exist."}])));
    let result = graded_records(&records);
    assert!(
        !flags_of(&result).iter().any(|f| f.contains("in a row")),
        "{result}"
    );
    assert_eq!(
        result["dimensions"]["errorRecovery"]["score"], 20,
        "{result}"
    );
}

/// Commands that only look like file work: a here-document piped into a command, and a
/// separator inside quotes.
#[test]
fn a_heredoc_piped_into_a_command_and_a_quoted_separator_are_not_file_work() {
    for command in [
        "cat <<EOF | kubectl apply -f -\napiVersion: v1\nEOF",
        "echo \"step one; cat the result\"",
        "git commit -m 'fix: a && b; ls'",
    ] {
        let records = [
            record(1, "user", "go".into()),
            record(
                2,
                "assistant",
                tool_use("t1", "Bash", serde_json::json!({"command": command})),
            ),
            record(3, "user", tool_result("t1", "ok", false)),
        ];
        let result = graded_records(&records);
        assert_eq!(
            result["dimensions"]["dedicatedTools"]["score"], 20,
            "{command}: {result}"
        );
    }
    // Outside quotes the steps are still told apart.
    let records = [
        record(1, "user", "go".into()),
        record(
            2,
            "assistant",
            tool_use(
                "t1",
                "Bash",
                serde_json::json!({"command": "echo \"a;b\" && cat x.py; grep -r y ."}),
            ),
        ),
        record(3, "user", tool_result("t1", "ok", false)),
    ];
    let flags = flags_of(&graded_records(&records));
    assert!(
        flags.iter().any(|f| f.contains("use Read, Grep")),
        "{flags:?}"
    );
}

/// A path read as `./a.py` in `/p` (or `/p/src/../a.py`, or with a trailing slash on the
/// `cwd`) is the `/p/a.py` edited after it.
#[test]
fn read_before_edit_normalises_paths() {
    for (cwd, read) in [
        ("/p", "./a.py"),
        ("/p/", "a.py"),
        ("/p", "/p/src/../a.py"),
        ("/p", "/p//a.py"),
    ] {
        let mut records = vec![
            record(
                1,
                "assistant",
                tool_use("t1", "Read", serde_json::json!({"file_path": read})),
            ),
            record(2, "user", tool_result("t1", "x", false)),
            record(
                3,
                "assistant",
                tool_use(
                    "t2",
                    "Edit",
                    serde_json::json!({"file_path": "/p/a.py", "old_string": "x", "new_string": "y"}),
                ),
            ),
        ];
        for r in &mut records {
            r["cwd"] = cwd.into();
        }
        let result = graded_records(&records);
        assert_eq!(
            result["dimensions"]["readBeforeEdit"]["score"], 20,
            "{cwd} {read}: {result}"
        );
    }
}

/// A folder source does not follow a link out of the folder, and says which folders it did
/// not read (a link, one deeper than three levels) instead of grading fewer sessions quietly.
#[cfg(unix)]
#[test]
fn a_folder_source_does_not_follow_links_and_warns_about_deeper_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let proj = dir.path().join("proj");
    write_transcript(&proj, "s1.jsonl", &[record(1, "user", "hi".into())]);
    let mut other = record(1, "user", "elsewhere".into());
    other["sessionId"] = "other".into();
    write_transcript(dir.path(), "other/o.jsonl", &[other]);
    let mut deep = record(1, "user", "deep".into());
    deep["sessionId"] = "deep".into();
    write_transcript(&proj, "a/b/c/d/deep.jsonl", &[deep]);
    std::os::unix::fs::symlink("..", proj.join("up")).expect("a link");
    let (results, stderr) = graded_all(proj.to_str().expect("UTF-8"));
    let ids: Vec<_> = results.iter().map(|r| r["sessionId"].clone()).collect();
    assert_eq!(ids, ["s1"], "{stderr}");
    assert!(
        stderr.contains("up: skipped: a link to a folder"),
        "{stderr}"
    );
    assert!(stderr.contains("out of the folder"), "{stderr}");
    assert!(
        stderr.contains("d: skipped: a folder deeper than 3 levels, with 1 ")
            && stderr.contains("`*.jsonl`, `*.jsonl.zst` or `*.traj` file in it"),
        "{stderr}"
    );
}

/// The output and the one JSON result of grading the transcript `records` written as `name`.
fn graded_with_stderr(name: &str, records: &[Value]) -> (Output, Value) {
    let dir = tempfile::tempdir().expect("temp dir");
    write_transcript(dir.path(), name, records);
    // Run in the folder so that messages name the file as given.
    let out = Command::new(env!("CARGO_BIN_EXE_grade"))
        .args([
            "--rubric",
            PACK,
            "--source",
            name,
            "--all",
            "--format",
            "json",
            "--no-record",
        ])
        .current_dir(dir.path())
        .output()
        .expect("the grade binary runs");
    let results = results_of(serde_json::from_slice(&out.stdout).expect("JSON output"));
    let [result] = results.as_slice() else {
        panic!("one session: {}", text(&out.stderr))
    };
    (out, result.clone())
}

/// A `tool_result` whose `tool_use_id` no call of the transcript has was read past without a
/// word, even with `is_error: true`: an error the agent hit vanished from its grade.
#[test]
fn a_tool_result_answering_no_call_is_reported_with_its_line_and_id_and_counted_as_lost() {
    let records = [
        record(1, "user", "fix the bug".into()),
        record(
            2,
            "assistant",
            tool_use(
                "toolu_1",
                "Read",
                serde_json::json!({"file_path": "/p/a.rs"}),
            ),
        ),
        record(3, "user", tool_result("toolu_1", "fn main() {}", false)),
        record(4, "user", tool_result("toolu_9", "exit 1", true)),
    ];
    let (out, result) = graded_with_stderr("orphan.jsonl", &records);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: orphan.jsonl:4: content block 0 skipped: the `tool_result` for `toolu_9` answers no `tool_use` in the file, so the error it reports is not graded\n\
         warning: skipped 1 malformed line of `orphan.jsonl`; the results of their sessions say how many each lost\n"
    );
    assert_eq!(result["skippedLines"], 1);
}

/// A prompt to run the tests, the Bash call `toolu_1` running them, and `result`, line 3.
fn test_run(result: Value) -> Vec<Value> {
    vec![
        record(1, "user", "run the tests".into()),
        record(
            2,
            "assistant",
            tool_use(
                "toolu_1",
                "Bash",
                serde_json::json!({"command": "cargo test"}),
            ),
        ),
        result,
    ]
}

/// `"is_error": "true"` (or `1`, or an object) was read as false: a failed call graded as a
/// success. The result is not read, with a warning naming the line, the call and the value.
#[test]
fn an_is_error_that_is_not_a_boolean_is_reported_and_not_read_as_success() {
    let mut result_line = record(3, "user", tool_result("toolu_1", "exit 1", false));
    result_line["message"]["content"][0]["is_error"] = "true".into();
    let records = test_run(result_line);
    let (out, result) = graded_with_stderr("iserr.jsonl", &records);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: iserr.jsonl:3: content block 0 skipped: `is_error` of the `tool_result` for `toolu_1` is the string `\"true\"`, not true or false: whether the call failed cannot be told, so the result is not read\n\
         warning: skipped 1 malformed line of `iserr.jsonl`; the results of their sessions say how many each lost\n"
    );
    assert_eq!(result["skippedLines"], 1);

    // `null` is an unset optional field, as an absent one: a success, without a word.
    let mut records = records;
    records[2]["message"]["content"][0]["is_error"] = Value::Null;
    let (out, result) = graded_with_stderr("null.jsonl", &records);
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (Some(0), String::new())
    );
    assert!(result.get("skippedLines").is_none(), "{result}");
}

/// A trace's `latency` of `1e308` seconds became a duration of infinity, which a pack reading
/// durations printed as `Infinity`; a negative latency passed as it was, and an observation
/// ending before it started got 0 without a word. Each is now named, and its duration is 0.
#[test]
fn a_trace_latency_or_end_time_that_is_no_duration_is_reported_and_left_at_0() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("durations")).expect("folder");
    std::fs::write(
        dir.path().join("durations/rubric.yaml"),
        r#"id: durations
version: 0.1.0
name: Shows durations
sources: [langfuse]
dimensions:
  - id: d
    max: 10
    start: 10
    rules:
      - id: show
        doc: shows each duration
        for_each: { domain: tool }
        evidence: "{entry.operation} took {entry.result.duration} ms"
      - id: show-trace
        doc: shows the trace's duration
        for_each: { domain: trace }
        evidence: "the trace took {entry.result.duration} ms"
"#,
    )
    .expect("writable");
    for (latency, shown) in [("1e308", "the number `1e+308`"), ("-5", "the number `-5`")] {
        std::fs::write(
            dir.path().join("t.json"),
            format!(
                r#"{{"trace": {{"id": "t1", "timestamp": "2025-12-04T14:51:22.000Z", "latency": {latency}}}, "observations": [
                 {{"id": "o1", "type": "TOOL", "name": "late", "startTime": "2025-12-04T14:51:23.000Z", "endTime": "2025-12-04T14:51:22.250Z"}},
                 {{"id": "o2", "type": "TOOL", "name": "fine", "startTime": "2025-12-04T14:51:24.000Z", "endTime": "2025-12-04T14:51:24.250Z"}}]}}"#
            ),
        )
        .expect("writable");
        let out = Command::new(env!("CARGO_BIN_EXE_grade"))
            .args([
                "--rubric",
                "./durations",
                "--source",
                "t.json",
                "--all",
                "--format",
                "json",
                "--no-record",
            ])
            .current_dir(dir.path())
            .output()
            .expect("the grade binary runs");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr),
            format!(
                "warning: t.json: `trace`: field `latency` is {shown}, not a duration in seconds: the trace's duration is left at 0\n\
                 warning: t.json: `observations[0]`: field `endTime` `2025-12-04T14:51:22.250Z` is before `startTime` `2025-12-04T14:51:23.000Z`: the observation's duration is left at 0\n"
            )
        );
        let results = results_of(serde_json::from_slice(&out.stdout).expect("JSON output"));
        assert_eq!(
            results[0]["dimensions"]["d"]["evidence"],
            serde_json::json!(["late took 0 ms", "fine took 250 ms", "the trace took 0 ms"]),
            "{latency}"
        );
    }
}

/// `"isSidechain": "true"` (or `1`) was read as false without a word: a subagent's calls
/// judged as the main agent's. It is still read as false, now with a warning naming the line
/// and the value; absent and `null` stay false without one.
#[test]
fn an_is_sidechain_that_is_not_a_boolean_is_reported_naming_the_line_and_value() {
    let mut records = test_run(record(3, "user", tool_result("toolu_1", "ok", false)));
    records[0]["isSidechain"] = 1.into();
    records[1]["isSidechain"] = "true".into();
    let (out, result) = graded_with_stderr("side.jsonl", &records);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: side.jsonl:1: field `isSidechain` is the number `1`, not true or false: the record is read as the main agent's, not a subagent's\n\
         warning: side.jsonl:2: field `isSidechain` is the string `\"true\"`, not true or false: the record is read as the main agent's, not a subagent's\n"
    );
    assert!(result.get("skippedLines").is_none(), "{result}");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_transcript(dir.path(), "side.jsonl", &records);
    let read = read_source(Path::new(&path), None, &SessionFilter::All).expect("reads");
    let sidechains: Vec<_> = read.sessions[0]
        .entries
        .iter()
        .map(|e| (e.operation.as_str(), e.metadata.get("isSidechain")))
        .collect();
    let main = Some(MetaRef::Json(&Value::Bool(false)));
    assert_eq!(sidechains, [("user", main), ("Bash", main)]);

    // `null` is an unset optional field, as an absent one: the main agent's, without a word.
    records[0]["isSidechain"] = Value::Null;
    records[1]
        .as_object_mut()
        .expect("a record")
        .remove("isSidechain");
    let (out, _) = graded_with_stderr("null.jsonl", &records);
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (Some(0), String::new())
    );
}

/// The real transcripts write `isSidechain` as a boolean on every record: none is reported.
#[test]
fn no_real_transcript_is_warned_about_its_is_sidechain() {
    let mut read_any = 0;
    for path in fixtures() {
        let real = path.components().any(|c| c.as_os_str() == "real");
        if !real || path.to_string_lossy().ends_with(".trace.json") {
            continue;
        }
        let read = read_source(&path, None, &SessionFilter::All).expect("reads");
        let odd: Vec<String> = read
            .warnings
            .iter()
            .map(ToString::to_string)
            .filter(|w| w.contains("isSidechain"))
            .collect();
        assert!(odd.is_empty(), "{}: {odd:?}", path.display());
        read_any += 1;
    }
    assert!(read_any >= 7, "{read_any} transcripts");
}

/// A record whose `sessionId` was a number (or a list, an object, `true`) joined its file's
/// session without a word, though it names another session. It is skipped and counted as a
/// line the session may miss, as a record whose `type` is not text is; a record holding only
/// tool results still gives them (a result answers its call by id), and `null` is absent.
#[test]
fn a_record_whose_session_id_is_not_text_is_skipped_naming_its_line_and_kind() {
    let mut records = test_run(record(3, "user", tool_result("toolu_1", "exit 1", true)));
    records.extend([
        record(
            4,
            "assistant",
            tool_use(
                "toolu_2",
                "Bash",
                serde_json::json!({"command": "cargo test"}),
            ),
        ),
        record(5, "user", "try once more".into()),
        record(6, "user", "and again".into()),
        record(7, "user", "thanks".into()),
    ]);
    records[2]["sessionId"] = serde_json::json!([]);
    records[3]["sessionId"] = 7.into();
    records[4]["sessionId"] = serde_json::json!({});
    records[5]["sessionId"] = true.into();
    records[6]["sessionId"] = Value::Null;
    let (out, result) = graded_with_stderr("sid.jsonl", &records);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: sid.jsonl:3: the record's `sessionId` is a JSON array, not text: its tool results count\n\
         warning: sid.jsonl:4: skipped: the record's `sessionId` is a JSON number, not text\n\
         warning: sid.jsonl:5: skipped: the record's `sessionId` is a JSON object, not text\n\
         warning: sid.jsonl:6: skipped: the record's `sessionId` is a JSON boolean, not text\n\
         warning: skipped 3 malformed lines of `sid.jsonl`; the results of their sessions say how many each lost\n"
    );
    assert_eq!(result["sessionId"], "s1");
    assert_eq!(result["skippedLines"], 3);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_transcript(dir.path(), "sid.jsonl", &records);
    let read = read_source(Path::new(&path), None, &SessionFilter::All).expect("reads");
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    let entries: Vec<_> = session
        .entries
        .iter()
        .map(|e| (e.operation.as_str(), e.result.success))
        .collect();
    assert_eq!(
        entries,
        [("user", true), ("Bash", false), ("user", true)],
        "the failed call keeps its result; the skipped call and prompts are gone"
    );
    assert_eq!(session.entries[2].params["text"], "thanks");
}

/// A call whose `input` was text (a converter's stringified JSON), a list or a number was kept
/// as `params.input` without a word: read-before-edit saw an Edit of no file. It is still
/// kept, and named with its line, tool, id and the kind of value.
#[test]
fn a_tool_input_that_is_not_an_object_is_reported_naming_the_call() {
    let records = [
        record(1, "user", "fix it".into()),
        record(
            2,
            "assistant",
            tool_use(
                "toolu_1",
                "Edit",
                "{\"file_path\": \"/p/a.rs\", \"old_string\": \"a\", \"new_string\": \"b\"}".into(),
            ),
        ),
        record(3, "user", tool_result("toolu_1", "ok", false)),
    ];
    let (out, result) = graded_with_stderr("input.jsonl", &records);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: input.jsonl:2: content block 0: the `input` of `Edit` call `toolu_1` is a JSON string, not an object: it is kept as `params.input`, and rules reading the tool's arguments find none\n"
    );
    assert!(result.get("skippedLines").is_none(), "{result}");
}

/// Two Reads Claude Code wrote on two lines of one message, `id` being the message's id,
/// their results, and a reply.
fn two_reads_of_one_message(id: Value) -> Vec<Value> {
    let mut records = vec![record(1, "user", "read both".into())];
    for (n, file) in [(2, "/p/a.rs"), (3, "/p/b.rs")] {
        let mut call = record(
            n,
            "assistant",
            tool_use(
                &format!("r{n}"),
                "Read",
                serde_json::json!({"file_path": file}),
            ),
        );
        call["message"]["id"] = id.clone();
        records.push(call);
    }
    records.push(record(
        4,
        "user",
        serde_json::json!([
        {"type": "tool_result", "tool_use_id": "r2", "content": "a"},
        {"type": "tool_result", "tool_use_id": "r3", "content": "b"}]),
    ));
    records.push(record(
        5,
        "assistant",
        serde_json::json!([{"type": "text", "text": "Both read."}]),
    ));
    records
}

/// A message whose `id` was a number (a converter's) no longer joined its two lines: its
/// two Reads counted as lookups one after the other (parallelCalls 20 -> 15) without a
/// word. The number is read as `number:7`, so the grade is that of the same message with a
/// text id, and a warning names each line.
#[test]
fn a_message_id_written_as_a_number_keeps_its_calls_parallel_and_says_so() {
    let (out, texted) = graded_with_stderr("text.jsonl", &two_reads_of_one_message("m2".into()));
    assert_eq!(text(&out.stderr), "");
    let (out, numbered) = graded_with_stderr("num.jsonl", &two_reads_of_one_message(7.into()));
    assert_eq!(out.status.code(), Some(0));
    let number = "`message.id` is the number `7`, not text: it is read as `number:7`, so the lines of that message still count as one message, apart from any whose id is the text `7`";
    assert_eq!(
        text(&out.stderr),
        format!("warning: num.jsonl:2: {number}\nwarning: num.jsonl:3: {number}\n")
    );
    assert_eq!(numbered["dimensions"]["parallelCalls"]["score"], 20);
    assert_eq!(numbered["dimensions"], texted["dimensions"]);
    assert_eq!(numbered["percent"], texted["percent"]);
    // A boolean tells no message from another: each line is a message of its own, and says so.
    let (out, flagged) = graded_with_stderr("flag.jsonl", &two_reads_of_one_message(true.into()));
    let alone = "`message.id` is a JSON boolean, not text: the record is read as a message of its own, its calls not made together with those of other lines";
    assert_eq!(
        text(&out.stderr),
        format!("warning: flag.jsonl:2: {alone}\nwarning: flag.jsonl:3: {alone}\n")
    );
    assert_eq!(flagged["dimensions"]["parallelCalls"]["score"], 15);
}

/// A message id `7` and a message id `"7"` were both read as `7`: two messages of one session,
/// made one after the other with a result between them, counted as one message whose calls
/// ran together (parallelCalls 20 without a word). The number is `number:7`, apart.
#[test]
fn a_number_message_id_is_not_the_message_with_the_same_id_as_text() {
    let mut records = two_reads_of_one_message(7.into());
    records[2]["message"]["id"] = "7".into();
    let (out, result) = graded_with_stderr("mixed.jsonl", &records);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: mixed.jsonl:2: `message.id` is the number `7`, not text: it is read as `number:7`, so the lines of that message still count as one message, apart from any whose id is the text `7`\n"
    );
    let (_, apart) = graded_with_stderr("apart.jsonl", &two_reads_of_one_message(true.into()));
    assert_eq!(result["dimensions"]["parallelCalls"]["score"], 15);
    assert_eq!(result["dimensions"], apart["dimensions"]);
}

/// A failed test run, the reply, and a resumed session's copy of the prompt, every record's
/// `uuid` being `uuid` (each its own, but the copy's that of the prompt).
fn a_resumed_prompt_after_a_failure(uuid: impl Fn(u32) -> Value) -> Vec<Value> {
    let mut records = test_run(record(3, "user", tool_result("toolu_1", "exit 1", true)));
    let mut copy = records[0].clone();
    copy["timestamp"] = "2025-09-03T00:00:04Z".into();
    records.push(copy);
    records.push(record(
        5,
        "assistant",
        serde_json::json!([{"type": "text", "text": "Done."}]),
    ));
    for (n, r) in records.iter_mut().enumerate() {
        let line = if n == 3 { 1 } else { n as u32 + 1 };
        r["uuid"] = uuid(line);
    }
    records
}

/// A prompt whose `uuid` was a number was read twice when a resumed session copied it: the
/// copy passed for the user speaking after the failure (errorRecovery 20 instead of 15),
/// without a word. A number is read as `number:N`, so the copy is read once, as with a text
/// uuid, with a warning per line; a list leaves each copy on its own, and says so.
#[test]
fn a_uuid_written_as_a_number_still_reads_a_copied_prompt_once_and_says_so() {
    let (_, texted) = graded_with_stderr(
        "text.jsonl",
        &a_resumed_prompt_after_a_failure(|n| format!("u{n}").into()),
    );
    assert_eq!(texted["dimensions"]["errorRecovery"]["score"], 15);
    let (out, numbered) =
        graded_with_stderr("num.jsonl", &a_resumed_prompt_after_a_failure(|n| n.into()));
    assert_eq!(out.status.code(), Some(0));
    let number = |line: u32, n: u32| {
        format!("warning: num.jsonl:{line}: `uuid` is the number `{n}`, not text: it is read as `number:{n}`, so a copy of the record (as a resumed session writes) is still read once\n")
    };
    assert_eq!(
        text(&out.stderr),
        [
            number(1, 1),
            number(2, 2),
            number(3, 3),
            number(4, 1),
            number(5, 5)
        ]
        .concat()
    );
    assert_eq!(numbered["dimensions"], texted["dimensions"]);
    assert_eq!(numbered["percent"], texted["percent"]);
    let (out, listed) = graded_with_stderr(
        "list.jsonl",
        &a_resumed_prompt_after_a_failure(|n| serde_json::json!([n])),
    );
    let list = |line: u32| {
        format!("warning: list.jsonl:{line}: `uuid` is a JSON array, not text: the record is read as one of its own, so a copy of it (as a resumed session writes) is read again\n")
    };
    assert_eq!(
        text(&out.stderr),
        [list(1), list(2), list(3), list(4), list(5)].concat()
    );
    assert_eq!(listed["dimensions"]["errorRecovery"]["score"], 20);
}

/// A subagent that reads a file, then (after a `progress` record, which makes no entry)
/// edits it, every record's `agentId` being `agent`.
fn a_subagent_reads_then_edits(agent: Value) -> Vec<Value> {
    let mut records = vec![
        record(1, "user", "fix b.rs".into()),
        record(
            2,
            "assistant",
            tool_use(
                "toolu_1",
                "Read",
                serde_json::json!({"file_path": "/p/b.rs"}),
            ),
        ),
        record(3, "user", tool_result("toolu_1", "fn b() {}", false)),
        serde_json::json!({"type": "progress", "sessionId": "s1", "uuid": "p4",
            "timestamp": "2025-09-03T00:00:04Z"}),
        record(
            5,
            "assistant",
            tool_use(
                "toolu_2",
                "Edit",
                serde_json::json!({"file_path": "/p/b.rs", "old_string": "b", "new_string": "c"}),
            ),
        ),
        record(6, "user", tool_result("toolu_2", "ok", false)),
    ];
    let parents = [
        Value::Null,
        "u2".into(),
        "u3".into(),
        "p4".into(),
        "u5".into(),
    ];
    for (r, parent) in records[1..].iter_mut().zip(parents) {
        r["isSidechain"] = true.into();
        r["agentId"] = agent.clone();
        r["parentUuid"] = parent;
    }
    records
}

/// A subagent whose `agentId` was a number was named by its chain of `parentUuid` links, which
/// the `progress` record between its Read and its Edit breaks: the Edit passed for another
/// agent's, made without reading the file (readBeforeEdit 15 instead of 20), without a word.
/// A number is read as `number:N`, so the grade is that of a text id, with a warning per line;
/// a boolean is read as no `agentId`, and says so.
#[test]
fn an_agent_id_written_as_a_number_still_names_its_agent_and_says_so() {
    let (out, texted) = graded_with_stderr("text.jsonl", &a_subagent_reads_then_edits("a7".into()));
    assert_eq!(text(&out.stderr), "");
    assert_eq!(texted["dimensions"]["readBeforeEdit"]["score"], 20);
    let (out, numbered) = graded_with_stderr("num.jsonl", &a_subagent_reads_then_edits(7.into()));
    assert_eq!(out.status.code(), Some(0));
    let number = |line: u32| {
        format!("warning: num.jsonl:{line}: `agentId` is the number `7`, not text: it is read as `number:7`, so the records of that agent still count as one agent's\n")
    };
    assert_eq!(
        text(&out.stderr),
        [number(2), number(3), number(5), number(6)].concat()
    );
    assert_eq!(numbered["dimensions"], texted["dimensions"]);
    let (out, flagged) =
        graded_with_stderr("flag.jsonl", &a_subagent_reads_then_edits(true.into()));
    let flag = |line: u32| {
        format!("warning: flag.jsonl:{line}: `agentId` is a JSON boolean, not text: it is read as no `agentId`, so the subagent is named by the first record of its `parentUuid` chain\n")
    };
    assert_eq!(
        text(&out.stderr),
        [flag(2), flag(3), flag(5), flag(6)].concat()
    );
    assert_eq!(flagged["dimensions"]["readBeforeEdit"]["score"], 15);
}

/// The text `"number:7"` was read as the number `7` is, as one id, without a word: two
/// messages' Reads counted as made together (parallelCalls 20 instead of 15), a prompt whose
/// `uuid` was `"number:1"` as a copy of the prompt whose `uuid` was `1` (errorRecovery 15
/// instead of 20), an Edit of agent `"number:7"` as agent `7`'s, after its Read
/// (readBeforeEdit 20 instead of 15). The text is read as `text:number:7`, apart, and named.
#[test]
fn a_text_id_spelled_as_a_number_is_read_is_not_that_number_in_the_grade() {
    let marked = |file: &str, line: u32, key: &str, id: &str| {
        format!("warning: {file}:{line}: `{key}` is the text `{id}`, which begins as this reader marks an id's kind (`number:`, `text:`, `uuid:` or `line:`): it is read as `text:{id}`, apart from any id written otherwise\n")
    };
    let mut records = two_reads_of_one_message(7.into());
    records[2]["message"]["id"] = "number:7".into();
    let (out, messages) = graded_with_stderr("msg.jsonl", &records);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        format!(
            "warning: msg.jsonl:2: `message.id` is the number `7`, not text: it is read as `number:7`, so the lines of that message still count as one message, apart from any whose id is the text `7`\n{}",
            marked("msg.jsonl", 3, "message.id", "number:7")
        )
    );
    assert_eq!(messages["dimensions"]["parallelCalls"]["score"], 15);

    let mut records = a_resumed_prompt_after_a_failure(|n| n.into());
    records[3]["uuid"] = "number:1".into();
    let (out, prompts) = graded_with_stderr("uuid.jsonl", &records);
    let number = |line: u32| {
        format!("warning: uuid.jsonl:{line}: `uuid` is the number `{line}`, not text: it is read as `number:{line}`, so a copy of the record (as a resumed session writes) is still read once\n")
    };
    assert_eq!(
        text(&out.stderr),
        [
            number(1),
            number(2),
            number(3),
            marked("uuid.jsonl", 4, "uuid", "number:1"),
            number(5)
        ]
        .concat()
    );
    assert_eq!(prompts["dimensions"]["errorRecovery"]["score"], 20);

    let mut records = a_subagent_reads_then_edits(7.into());
    for r in &mut records[4..] {
        r["agentId"] = "number:7".into();
    }
    let (out, agents) = graded_with_stderr("agent.jsonl", &records);
    let number = |line: u32| {
        format!("warning: agent.jsonl:{line}: `agentId` is the number `7`, not text: it is read as `number:7`, so the records of that agent still count as one agent's\n")
    };
    assert_eq!(
        text(&out.stderr),
        [
            number(2),
            number(3),
            marked("agent.jsonl", 5, "agentId", "number:7"),
            marked("agent.jsonl", 6, "agentId", "number:7")
        ]
        .concat()
    );
    assert_eq!(agents["dimensions"]["readBeforeEdit"]["score"], 15);
}

/// A failed test run, a reply from the record `x`, and the user's prompt from the record
/// `prompt`: the user speaks after the failure.
fn a_prompt_after_a_reply_from_x(prompt: &str) -> Vec<Value> {
    let mut records = test_run(record(3, "user", tool_result("toolu_1", "exit 1", true)));
    let mut reply = record(
        4,
        "assistant",
        serde_json::json!([{"type": "text", "text": "Done."}]),
    );
    reply["uuid"] = "x".into();
    let mut asked = record(5, "user", "the tests failed, fix them".into());
    asked["uuid"] = prompt.into();
    records.extend([reply, asked]);
    records
}

/// The prompt of the record `x:0` was keyed as block 0 of the record `x`, the reply before
/// it: it was skipped as a call "with the id of an earlier `assistant` call", its line counted
/// as lost, and the user speaking after the failure went unseen (errorRecovery 15 instead of
/// 20). Keyed by their parts, the two are apart: the grade is that of any other prompt.
#[test]
fn a_prompt_whose_uuid_reads_like_a_block_of_the_reply_before_it_is_still_read() {
    let (out, apart) = graded_with_stderr("t.jsonl", &a_prompt_after_a_reply_from_x("y"));
    assert_eq!(text(&out.stderr), "");
    assert_eq!(apart["dimensions"]["errorRecovery"]["score"], 20);
    let (out, like) = graded_with_stderr("t.jsonl", &a_prompt_after_a_reply_from_x("x:0"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stderr), "");
    assert_eq!(like["dimensions"], apart["dimensions"]);
    assert_eq!(like["percent"], apart["percent"]);
}

/// Two Reads of two messages, a result between them; the second's record has no
/// `message.id` and its `uuid` is `uuid`.
fn a_read_without_message_id_after_message_7(uuid: &str) -> Vec<Value> {
    let mut records = two_reads_of_one_message("7".into());
    records[2]["uuid"] = uuid.into();
    if let Some(message) = records[2]["message"].as_object_mut() {
        message.remove("id");
    }
    records
}

/// A record without `message.id` is named by its `uuid`: the `uuid` `7` named the message
/// whose id is `7`, and its Read counted as made together with that message's
/// (parallelCalls 20 instead of 15), without a word. It is read as `uuid:7`, apart, and
/// named; a `uuid` that is no message's id is shown as it was, without a word.
#[test]
fn a_record_without_message_id_is_not_the_message_its_uuid_spells() {
    let (out, apart) =
        graded_with_stderr("u.jsonl", &a_read_without_message_id_after_message_7("u3"));
    assert_eq!(text(&out.stderr), "");
    assert_eq!(apart["dimensions"]["parallelCalls"]["score"], 15);
    let (out, spelled) = graded_with_stderr(
        "seven.jsonl",
        &a_read_without_message_id_after_message_7("7"),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: seven.jsonl:3: the record has no `message.id`, and its `uuid`, `7`, which names its message instead, is another message's id too: its message is read as `uuid:7`, so the record does not count as part of that message\n"
    );
    assert_eq!(spelled["dimensions"], apart["dimensions"]);
}

/// A subagent that reads `/p/b.rs` with the `agentId` `u5`, then a subagent Claude Code 1.0
/// wrote without one, named by the first record of its `parentUuid` chain, `head`, that
/// edits the file.
fn an_edit_by_a_chained_subagent_headed(head: &str) -> Vec<Value> {
    let mut records = a_subagent_reads_then_edits("u5".into());
    for r in &mut records[4..] {
        if let Some(map) = r.as_object_mut() {
            map.remove("agentId");
        }
    }
    records[4]["uuid"] = head.into();
    records[4]["parentUuid"] = Value::Null;
    records[5]["parentUuid"] = head.into();
    records
}

/// An older subagent is named by the `uuid` of the first record of its chain: one whose
/// first record was `u5` counted as the agent `u5`, its Edit as made after that agent's Read
/// (readBeforeEdit 20 instead of 15), without a word. It is read as `uuid:u5`, apart, and
/// named once.
#[test]
fn a_subagent_named_by_its_first_record_is_not_the_agent_of_that_id_in_the_grade() {
    let (out, apart) = graded_with_stderr("u9.jsonl", &an_edit_by_a_chained_subagent_headed("u9"));
    assert_eq!(text(&out.stderr), "");
    assert_eq!(apart["dimensions"]["readBeforeEdit"]["score"], 15);
    let (out, named) = graded_with_stderr("u5.jsonl", &an_edit_by_a_chained_subagent_headed("u5"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: u5.jsonl:5: the subagent record has no `agentId`, and the `uuid` of the first record of its `parentUuid` chain, `u5`, which names its subagent instead, is another agent's `agentId` too: its subagent is read as `uuid:u5`, so the two do not count as one agent\n"
    );
    assert_eq!(named["dimensions"], apart["dimensions"]);
}

/// A failed test run whose call `toolu_1` has a second result, `later`, line 4.
fn a_test_run_answered_twice(later: Value) -> Vec<Value> {
    let mut records = test_run(record(3, "user", tool_result("toolu_1", "exit 1", true)));
    records.push(record(4, "user", later));
    records.push(record(
        5,
        "assistant",
        serde_json::json!([{"type": "text", "text": "Done."}]),
    ));
    records
}

/// A second `tool_result` for a call was read past without a word, even one saying the call
/// succeeded where the first said it failed. The first is still read (errorRecovery 15: a
/// failure left behind), and one that says otherwise is named with both lines; a copy of the
/// first, as a resumed session writes, says nothing new and stays silent.
#[test]
fn a_later_result_that_says_otherwise_is_named_and_the_first_read() {
    let (out, copied) = graded_with_stderr(
        "copy.jsonl",
        &a_test_run_answered_twice(tool_result("toolu_1", "exit 1", true)),
    );
    assert_eq!(text(&out.stderr), "");
    assert_eq!(copied["dimensions"]["errorRecovery"]["score"], 15);
    let (out, passed) = graded_with_stderr(
        "pass.jsonl",
        &a_test_run_answered_twice(tool_result("toolu_1", "ok", false)),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: pass.jsonl:4: content block 0: a later `tool_result` for `toolu_1` says the call succeeded, where the first (pass.jsonl:3) says it failed: the first is read\n"
    );
    assert_eq!(passed["dimensions"], copied["dimensions"]);
    let (out, other) = graded_with_stderr(
        "other.jsonl",
        &a_test_run_answered_twice(tool_result("toolu_1", "exit 101", true)),
    );
    assert_eq!(
        text(&out.stderr),
        "warning: other.jsonl:4: content block 0: a later `tool_result` for `toolu_1` reports another error than the first (other.jsonl:3): the first is read\n"
    );
    assert_eq!(other["dimensions"], copied["dimensions"]);
}

/// A Write over a file never read, whose result record's `toolUseResult.type` is `kind`.
fn an_unread_file_overwritten(kind: Value) -> Vec<Value> {
    let mut result = record(3, "user", tool_result("toolu_1", "ok", false));
    result["toolUseResult"] = serde_json::json!({"type": kind, "filePath": "/p/a.rs"});
    vec![
        record(1, "user", "rewrite a.rs".into()),
        record(
            2,
            "assistant",
            tool_use(
                "toolu_1",
                "Write",
                serde_json::json!({"file_path": "/p/a.rs", "content": "fn a() {}"}),
            ),
        ),
        result,
        record(
            4,
            "assistant",
            serde_json::json!([{"type": "text", "text": "Rewritten."}]),
        ),
    ]
}

/// `toolUseResult.type` written as a number was read as none, without a word: a Write that
/// overwrote an unread file passed for one that created it (readBeforeEdit 20 instead of 15).
/// Nothing but `update` says it changed a file, so it still counts as none, with a warning.
#[test]
fn a_result_type_that_is_not_text_is_reported_naming_the_line() {
    let (_, updated) =
        graded_with_stderr("update.jsonl", &an_unread_file_overwritten("update".into()));
    assert_eq!(updated["dimensions"]["readBeforeEdit"]["score"], 15);
    let (out, numbered) = graded_with_stderr("num.jsonl", &an_unread_file_overwritten(2.into()));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: num.jsonl:3: field `toolUseResult.type` is the number `2`, not text: it is left out, so whether a `Write` it answers created its file or changed one cannot be told\n"
    );
    assert_eq!(numbered["dimensions"]["readBeforeEdit"]["score"], 20);
    assert!(numbered.get("skippedLines").is_none(), "{numbered}");
}

/// A session whose `Bash` call the user refused, the refusal's `tool_result` `content` being
/// `content`, and the assistant's answer after it.
fn refused_call(content: Value) -> Vec<Value> {
    let mut result = record(3, "user", tool_result("toolu_1", "", true));
    result["message"]["content"][0]["content"] = content;
    vec![
        record(1, "user", "rename it".into()),
        record(
            2,
            "assistant",
            tool_use("toolu_1", "Bash", serde_json::json!({"command": "mv a b"})),
        ),
        result,
        record(
            4,
            "assistant",
            serde_json::json!([{"type": "text", "text": "OK."}]),
        ),
    ]
}

/// A refused call whose result `content` was one block outside a list gave the call an empty
/// error: the refusal read as a failure the agent left behind (errorRecovery 15 instead of
/// 20), without a word. The object's JSON text is the error, so the refusal is seen, and named.
#[test]
fn a_failed_result_whose_content_is_an_object_keeps_its_text_as_the_error() {
    let refusal = "The user doesn't want to proceed with this tool use.";
    let (_, texted) = graded_with_stderr("text.jsonl", &refused_call(refusal.into()));
    assert_eq!(texted["dimensions"]["errorRecovery"]["score"], 20);
    let (out, object) = graded_with_stderr(
        "obj.jsonl",
        &refused_call(serde_json::json!({"type": "text", "text": refusal})),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: obj.jsonl:3: content block 0: the `content` of the `tool_result` for `toolu_1` is a JSON object, not text or blocks: its JSON text is read as the error\n"
    );
    assert_eq!(object["dimensions"]["errorRecovery"]["score"], 20);
    assert_eq!(object["percent"], texted["percent"]);
}

/// A refused call whose result `content` was a list holding a text block whose `text` was a
/// list (a converter's) gave the call an empty error: the refusal read as a failure the agent
/// left behind (errorRecovery 15 instead of 20), without a word. The `text`'s JSON text is
/// read in its place, so the refusal is seen, and named; an image beside it says nothing.
#[test]
fn a_failed_result_whose_content_lists_a_text_that_is_not_text_keeps_it_in_the_error() {
    let refusal = "The user doesn't want to proceed with this tool use.";
    let image = serde_json::json!({"type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "AA"}});
    let (out, texted) = graded_with_stderr(
        "text.jsonl",
        &refused_call(serde_json::json!([image, {"type": "text", "text": refusal}])),
    );
    assert_eq!(text(&out.stderr), "");
    assert_eq!(texted["dimensions"]["errorRecovery"]["score"], 20);
    let (out, listed) = graded_with_stderr(
        "list.jsonl",
        &refused_call(serde_json::json!([image, {"type": "text", "text": [refusal]}, 1])),
    );
    assert_eq!(out.status.code(), Some(0));
    let item = |j: u32| format!("item {j} of the `content` of the `tool_result` for `toolu_1`");
    assert_eq!(
        text(&out.stderr),
        format!(
            "warning: list.jsonl:3: content block 0: the `text` of {} is a JSON array, not text: its JSON text is read as part of the error\n\
             warning: list.jsonl:3: content block 0: {} is a JSON number, not text or a block: its JSON text is read as part of the error\n",
            item(1),
            item(2)
        )
    );
    assert_eq!(listed["dimensions"]["errorRecovery"]["score"], 20);
    assert_eq!(listed["percent"], texted["percent"]);
}

/// `"sessionId": ""` graded as a session named `""`, without a word. It names no session:
/// the record is its file's session's, and a warning names the line and that session.
#[test]
fn an_empty_session_id_grades_in_the_files_session_saying_so() {
    let mut whole = test_run(record(3, "user", tool_result("toolu_1", "exit 1", true)));
    whole.push(record(4, "user", "thanks".into()));
    let mut records = whole.clone();
    records[1]["sessionId"] = "".into();
    records[3]["sessionId"] = "".into();
    let (out, result) = graded_with_stderr("empty.jsonl", &records);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: empty.jsonl:2: the record's `sessionId` is empty: it is read as its file's session, `s1`\n\
         warning: empty.jsonl:4: the record's `sessionId` is empty: it is read as its file's session, `s1`\n"
    );
    assert_eq!(result["sessionId"], "s1");
    assert!(result.get("skippedLines").is_none(), "{result}");
    let (_, whole) = graded_with_stderr("empty.jsonl", &whole);
    assert_eq!(result["dimensions"], whole["dimensions"]);
    assert_eq!(result["percent"], whole["percent"]);
}

/// A `text` block whose `text` was not text was dropped without a word: a prompt or a reply
/// the grade never saw. It is reported naming the block and the kind, and its line counted.
#[test]
fn a_text_block_whose_text_is_not_text_is_reported_and_its_line_counted() {
    let mut records = test_run(record(3, "user", tool_result("toolu_1", "exit 1", true)));
    records.push(record(
        4,
        "assistant",
        serde_json::json!([{"type": "text", "text": {"value": "The tests fail: exit 1."}}]),
    ));
    records[0]["message"]["content"] = serde_json::json!([{"type": "text", "text": 42}]);
    let (out, result) = graded_with_stderr("text.jsonl", &records);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: text.jsonl:1: content block 0 skipped: the `text` of a `text` block is a JSON number, not text\n\
         warning: text.jsonl:4: content block 0 skipped: the `text` of a `text` block is a JSON object, not text\n\
         warning: skipped 2 malformed lines of `text.jsonl`; the results of their sessions say how many each lost\n"
    );
    assert_eq!(result["skippedLines"], 2);
}

/// A call whose `id` was a number was reported as a call "without `id` or `name`", and a
/// result whose `tool_use_id` was a number as one "without `tool_use_id`": both fields are
/// there, and the warnings now say what they hold.
#[test]
fn a_call_or_result_id_written_as_a_number_is_reported_as_such() {
    let mut records = test_run(record(3, "user", tool_result("toolu_1", "exit 1", true)));
    records[1]["message"]["content"][0]["id"] = 1.into();
    records[2]["message"]["content"][0]["tool_use_id"] = 1.into();
    let (out, result) = graded_with_stderr("ids.jsonl", &records);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "warning: ids.jsonl:2: content block 0 skipped: the `id` of a `tool_use` is a JSON number, not text\n\
         warning: ids.jsonl:3: content block 0 skipped: the `tool_use_id` of a `tool_result` is a JSON number, not text, so the error it reports is not graded\n\
         warning: skipped 2 malformed lines of `ids.jsonl`; the results of their sessions say how many each lost\n"
    );
    assert_eq!(result["skippedLines"], 2);
}

/// `"isCompactSummary": "true"` (or `"isMeta": 1`) was read as no flag without a word: the
/// summary Claude Code wrote after a failure passed for the user speaking, and the failure
/// for one the user took up (errorRecovery 20 instead of 15). The prompt is still read as
/// the user's, since the value cannot be read as true without a guess, but a warning names
/// the line, the field and the value.
#[test]
fn a_prompt_flag_that_is_not_a_boolean_is_reported_naming_the_line_and_value() {
    for (flag, value, shown) in [
        (
            "isCompactSummary",
            Value::from("true"),
            "the string `\"true\"`",
        ),
        ("isMeta", Value::from(1), "the number `1`"),
    ] {
        let mut records = test_run(record(3, "user", tool_result("toolu_1", "exit 1", true)));
        let mut summary = record(4, "user", "Summary: the tests were run.".into());
        summary[flag] = value;
        records.push(summary);
        let (out, result) = graded_with_stderr("flag.jsonl", &records);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            text(&out.stderr),
            format!("warning: flag.jsonl:4: field `{flag}` is {shown}, not true or false: the prompt is read as the user's, not as Claude Code's\n")
        );
        assert_eq!(
            result["dimensions"]["errorRecovery"]["score"], 20,
            "{result}"
        );
        assert!(result.get("skippedLines").is_none(), "{result}");
    }
}
