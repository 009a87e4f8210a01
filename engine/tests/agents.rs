//! The readers of other coding agents' sessions on real files (`tests/fixtures/agents/`):
//! each file's sessions, entries, tool calls and failed calls, checked against a second,
//! independent count of the raw records (`count.py`, whose output is `counts.json`), and
//! the format each file is detected as.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use std::path::{Path, PathBuf};

use grade_engine::{read_source, Registry, SessionFilter};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/agents")
}

/// `counts.json`: file (under the fixtures) → one count object per session.
fn expected() -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(fixtures().join("counts.json")).unwrap();
    match serde_json::from_str(&text).unwrap() {
        Value::Object(map) => map,
        other => panic!("counts.json is {other}"),
    }
}

/// The counts of each session the reader finds in `file`, as `count.py` writes them.
fn counted(file: &Path) -> Vec<Value> {
    let read = read_source(file, None, &SessionFilter::All).unwrap();
    read.sessions
        .iter()
        .map(|s| {
            let tools = s.entries.iter().filter(|e| e.domain == "tool");
            let failures = tools.clone().filter(|e| !e.result.success).count();
            serde_json::json!({
                "entries": s.entries.len(),
                "tool_calls": tools.count(),
                "failures": failures,
            })
        })
        .collect()
}

fn check_format(format: &str) {
    let mut checked = 0;
    for (name, sessions) in expected() {
        let Some(rest) = name.strip_prefix(&format!("{format}/")) else {
            continue;
        };
        let file = fixtures().join(format).join(rest);
        let detected = Registry::builtin()
            .detect(&grade_engine::source::Input::File(&file))
            .unwrap();
        assert_eq!(detected.name(), format, "{name} is detected as {format}");
        assert_eq!(
            Value::Array(counted(&file)),
            sessions,
            "{name}: the reader's counts differ from count.py's"
        );
        checked += 1;
    }
    assert!(checked > 0, "counts.json has no {format} file");
}

#[test]
fn codex_rollouts_read_as_the_independent_count_says() {
    check_format("codex");
}

/// The counts themselves, pinned: a change to `count.py` and the reader together shows here.
#[test]
fn codex_counts_are_pinned() {
    let counts = expected();
    let get = |file: &str| counts[&format!("codex/{file}")].clone();
    assert_eq!(
        get("vct_codex_vscode_0.39.jsonl"),
        serde_json::json!([{"entries": 28, "tool_calls": 18, "failures": 1}])
    );
    assert_eq!(
        get("localpush_redacted_12-54-34_compacted.jsonl"),
        serde_json::json!([{"entries": 665, "tool_calls": 372, "failures": 0}])
    );
}

#[test]
fn gemini_cli_recordings_read_as_the_independent_count_says() {
    check_format("gemini-cli");
}

#[test]
fn openhands_streams_read_as_the_independent_count_says() {
    check_format("openhands");
}

#[test]
fn swe_agent_trajectories_read_as_the_independent_count_says() {
    check_format("swe-agent");
}

/// The other readers' counts, pinned.
#[test]
fn the_other_counts_are_pinned() {
    let counts = expected();
    let get = |file: &str| counts[file].clone();
    assert_eq!(
        get("gemini-cli/vct_session_jsonl_tools.jsonl"),
        serde_json::json!([{"entries": 17, "tool_calls": 12, "failures": 0}])
    );
    // Three instances; the third ends at OpenHands' iteration limit. 21 failed calls in all:
    // 19 commands with a non-zero exit code and 2 calls refused before they ran.
    assert_eq!(
        get("openhands/multi_swe_bench_output.jsonl"),
        serde_json::json!([
            {"entries": 24, "tool_calls": 23, "failures": 5},
            {"entries": 35, "tool_calls": 34, "failures": 3},
            {"entries": 52, "tool_calls": 50, "failures": 13}
        ])
    );
    assert_eq!(
        get("swe-agent/pydicom_1458.traj"),
        serde_json::json!([{"entries": 25, "tool_calls": 12, "failures": 4}])
    );
}

/// Files of the same formats found after the readers were written (other versions and
/// producers), pinned: each is read, and counted, as its format's definition says.
#[test]
fn files_found_later_are_read_with_these_counts() {
    let counts = expected();
    let get = |file: &str| counts[file].clone();
    // The resolver's output: a session per issue, the older flat history (no ids, no
    // `args`), each observation answering the action before it.
    assert_eq!(
        get("openhands/resolver_mock_output.jsonl"),
        serde_json::json!([
            {"entries": 5, "tool_calls": 4, "failures": 0},
            {"entries": 23, "tool_calls": 22, "failures": 0}
        ])
    );
    // State changes and null observations make no entry.
    assert_eq!(
        get("openhands/traj_basic_gui_mode.json"),
        serde_json::json!([{"entries": 6, "tool_calls": 4, "failures": 0}])
    );
    assert_eq!(
        get("openhands/traj_wrong_initial_state.json"),
        serde_json::json!([{"entries": 5, "tool_calls": 4, "failures": 0}])
    );
    // Codex CLI 0.47 (`codex_cli_rs`): apply_patch as `custom_tool_call`, one of which
    // failed its verification; `update_plan` answered by a plain "Plan updated".
    assert_eq!(
        get("codex/yoavf_codex_cli_0.47_pomodoro.jsonl"),
        serde_json::json!([{"entries": 24, "tool_calls": 18, "failures": 1}])
    );
    // The older single-JSON recording with tool calls (2025-10).
    assert_eq!(
        get("gemini-cli/vct_session_legacy_tools_894772f.json"),
        serde_json::json!([{"entries": 9, "tool_calls": 7, "failures": 0}])
    );
    assert_eq!(
        get("gemini-cli/vct_session_legacy_notools_7bc2c73.json"),
        serde_json::json!([{"entries": 12, "tool_calls": 0, "failures": 0}])
    );
    // Text actions of SWE-agent's CTF mode: 2 tracebacks and 3 refused edits.
    assert_eq!(
        get("swe-agent/ctf_crypto_baby_encryption.traj"),
        serde_json::json!([{"entries": 31, "tool_calls": 16, "failures": 5}])
    );
    assert_eq!(
        get("swe-agent/human_thought_humanevalfix_python_0.traj"),
        serde_json::json!([{"entries": 11, "tool_calls": 5, "failures": 0}])
    );
}

/// Every kind a reader gives is one of the ten, and every tool call has one.
#[test]
fn every_tool_call_of_every_real_file_has_a_normalized_kind() {
    let kinds: Vec<&str> = grade_engine::source::ToolKind::ALL
        .iter()
        .map(|k| k.as_str())
        .collect();
    for name in expected().keys() {
        let read = read_source(&fixtures().join(name), None, &SessionFilter::All).unwrap();
        for entry in read.sessions.iter().flat_map(|s| &s.entries) {
            let kind = entry.metadata.get("kind").and_then(|k| k.as_str());
            if entry.domain == "tool" {
                assert!(
                    kind.is_some_and(|k| kinds.contains(&k)),
                    "{name}: {} has kind {kind:?}",
                    entry.operation
                );
            } else {
                assert_eq!(kind, None, "{name}: a message has no kind");
            }
        }
        assert!(read.warnings.is_empty(), "{name}: {:?}", read.warnings);
    }
}
