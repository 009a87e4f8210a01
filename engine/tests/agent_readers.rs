//! The readers of recorded agent runs (issue 43) on real files copied into
//! `tests/fixtures/agents/<format>/`: each file's format is detected by content, and each
//! session's tool calls and failed tool calls are the counts a small script beside the
//! files (`count.py`, run over the raw files with Python's own zip and JSON, not this
//! reader) wrote to `counts.json`. Entry counts are pinned here.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use grade_engine::source::{detect_format, read_source};
use grade_engine::SessionFilter;
use serde_json::Value;

fn fixtures(format: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/agents")
        .join(format)
}

/// `file session` → (tool calls, failed tool calls), and entries and skipped lines per
/// file, as the reader reads the files named `names` of `format`.
struct Read {
    counts: BTreeMap<String, (u64, u64)>,
    entries: BTreeMap<String, usize>,
    skipped: u64,
}

fn read_all(dir: &str, format: &str, names: &[&str]) -> Read {
    let dir = fixtures(dir);
    let mut read = Read {
        counts: BTreeMap::new(),
        entries: BTreeMap::new(),
        skipped: 0,
    };
    for name in names {
        let path = dir.join(name);
        assert_eq!(
            detect_format(&path).unwrap().name(),
            format,
            "{name} is detected by content"
        );
        let source = read_source(&path, None, &SessionFilter::All).unwrap();
        let mut entries = 0;
        for session in &source.sessions {
            let tools: Vec<_> = session
                .entries
                .iter()
                .filter(|e| e.domain == "tool")
                .collect();
            let failed = tools.iter().filter(|e| !e.result.success).count();
            read.counts.insert(
                format!("{name} {}", session.id),
                (tools.len() as u64, failed as u64),
            );
            entries += session.entries.len();
            read.skipped += session.skipped_lines;
            // Every tool call has a normalized kind.
            for tool in tools {
                assert!(
                    tool.metadata.get("kind").is_some(),
                    "{name}: {} has no kind",
                    tool.operation
                );
            }
        }
        read.entries.insert((*name).to_owned(), entries);
    }
    read
}

/// The counts the script wrote.
fn script_counts(format: &str) -> BTreeMap<String, (u64, u64)> {
    let text = std::fs::read_to_string(fixtures(format).join("counts.json")).unwrap();
    let counts: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap();
    counts
        .into_iter()
        .map(|(k, v)| {
            (
                k,
                (
                    v["tools"].as_u64().unwrap(),
                    v["failures"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

#[test]
fn inspect_ai_logs_read_one_session_per_sample_and_epoch_with_the_scripts_tool_counts() {
    let names = [
        "browser.json",
        "images_transcript.json",
        "input_task_steps.eval",
        "message_deduplication.eval",
        "mmlu_summary_choices.eval",
        "popularity_unscored.eval",
        "read_sample.eval",
        "streaming_two_epochs.eval",
        "tool_call_error.json",
    ];
    let read = read_all("inspect_ai", "inspect-ai", &names);
    assert_eq!(read.counts, script_counts("inspect_ai"));
    let entries: Vec<(&str, usize)> = read.entries.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        entries,
        [
            // The input, 4 browser calls, and the one reply of the model with text (the
            // other 4 only call a tool).
            ("browser.json", 6),
            // inspect_ai 0.3.41 (2024): the events under `transcript`; the input and the
            // reply, at the times of their events.
            ("images_transcript.json", 2),
            ("input_task_steps.eval", 3),
            // Log version 3 with its `message_pool`: the input, 5 tool events (each once,
            // though each is in the messages too) and 6 model replies with text.
            ("message_deduplication.eval", 12),
            // `span_begin`/`span_end` events: the input and one reply.
            ("mmlu_summary_choices.eval", 2),
            // 10 samples: each its input and one reply.
            ("popularity_unscored.eval", 20),
            ("read_sample.eval", 2),
            // Two samples by two epochs: four sessions, each its input and one reply.
            ("streaming_two_epochs.eval", 8),
            // 11 tool replies, each a failed call (the log keeps no assistant turn).
            ("tool_call_error.json", 11),
        ]
    );
    assert_eq!(read.skipped, 0);
}

#[test]
fn atif_trajectories_read_as_the_spec_and_as_real_producers_deviate_with_the_scripts_counts() {
    let names = [
        "openagents_orchestrator_ebphxk_stream.atif.jsonl",
        "openagents_orchestrator_ew8gut.atif.json",
        "openagents_orchestrator_x8251x.atif.json",
        "openagents_qa_runner_login_trace_v1.7.json",
        "openagents_tbench_regex_log_claude_code_v1.4nonstd.json",
    ];
    let read = read_all("atif", "atif", &names);
    assert_eq!(read.counts, script_counts("atif"));
    let entries: Vec<(&str, usize)> = read.entries.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        entries,
        [
            // Streamed as JSONL (a header line, one step a line), read as the document:
            // one agent step with text, its 10 system steps no entry.
            ("openagents_orchestrator_ebphxk_stream.atif.jsonl", 1),
            // One agent step with text; its system steps (task selection, verification
            // runs of the orchestrator itself) make no entry.
            ("openagents_orchestrator_ew8gut.atif.json", 1),
            // Another run of the same orchestrator: one agent step with text.
            ("openagents_orchestrator_x8251x.atif.json", 1),
            // The prompt, and 6 agent steps each with its text and one call.
            ("openagents_qa_runner_login_trace_v1.7.json", 13),
            // The prompt, 3 replies and 5 calls; results are system steps of their own,
            // 2 of them failures (`EACCES` on `mkdir /app`, `sudo` without a terminal).
            ("openagents_tbench_regex_log_claude_code_v1.4nonstd.json", 9),
        ]
    );
    assert_eq!(read.skipped, 0);
}

#[test]
fn otel_traces_of_jaeger_tempo_and_any_agent_read_as_the_scripts_counts() {
    let names = [
        "agentevals_jaeger_helm_agent.json",
        "agentevals_tempo_export_kagent.json",
        "anyagent_LANGCHAIN_trace.json",
        "anyagent_OPENAI_trace.json",
        "anyagent_SMOLAGENTS_trace.json",
    ];
    let read = read_all("otel", "otel", &names);
    assert_eq!(read.counts, script_counts("otel"));
    let entries: Vec<(&str, usize)> = read.entries.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        entries,
        [
            // invoke_agent, two call_llm (each holding the client's `openai.chat`: one call)
            // and the one execute_tool; 90 HTTP and a2a queue spans make no entry.
            ("agentevals_jaeger_helm_agent.json", 4),
            // The same agent behind kagent's controller: its own invoke_agent span too, and
            // `call_llm` > `generate_content` > `openai.chat` is one call each time.
            ("agentevals_tempo_export_kagent.json", 5),
            // invoke_agent, four call_llm and two execute_tool (LangChain's agent).
            ("anyagent_LANGCHAIN_trace.json", 7),
            // invoke_agent, three call_llm and two execute_tool.
            ("anyagent_OPENAI_trace.json", 6),
            // invoke_agent, three call_llm and three execute_tool (smolagents).
            ("anyagent_SMOLAGENTS_trace.json", 7),
        ]
    );
    // The script's entries, skipped spans and other spans, not only its tool counts.
    let text = std::fs::read_to_string(fixtures("otel").join("counts.json")).unwrap();
    let counts: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap();
    for name in names {
        let source = read_source(&fixtures("otel").join(name), None, &SessionFilter::All).unwrap();
        let other: u64 = counts
            .iter()
            .filter(|(key, _)| key.starts_with(&format!("{name} ")))
            .map(|(_, c)| c["other"].as_u64().unwrap())
            .sum();
        let warnings: Vec<String> = source.warnings.iter().map(|w| w.message.clone()).collect();
        let said = format!("{other} spans are no agent, tool or model call (HTTP, queues, databases, a framework's own steps) and make no entry");
        let expected = if other == 0 { vec![] } else { vec![said] };
        assert_eq!(warnings, expected, "{name}");
        for session in &source.sessions {
            let want = &counts[&format!("{name} {}", session.id)];
            assert_eq!(
                (session.entries.len() as u64, session.skipped_lines),
                (
                    want["entries"].as_u64().unwrap(),
                    want["skipped"].as_u64().unwrap()
                ),
                "{name} {}",
                session.id
            );
        }
    }
    assert_eq!(read.skipped, 0);
}
