//! OpenAI Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (or
//! `.jsonl.zst`), one `{"timestamp", "type", "payload"}` record a line, one session a file.
//!
//! The format is Codex's `RolloutLine`/`RolloutItem` (`codex-rs/protocol/src/protocol.rs`,
//! newest in `codex-rs/history/src/lib.rs`); model items are `ResponseItem`s
//! (`codex-rs/protocol/src/models.rs`). Each step is written twice, as a `response_item`
//! (what the model saw) and as an `event_msg` (what the UI showed): entries come from the
//! `response_item`s, so a call is one entry, and an event adds only what the item lacks (a
//! command's exit code, a patch's failure, the user's own prompt). `docs/sources.md` has the
//! mapping.

use std::collections::{HashMap, HashSet};
use std::io::Read;

use std::path::Path;

use serde_json::{Map, Value};

use super::agent::{content_text, file_stem, json_lines, read_of, session, At, Ended, FileRead};
use super::agent::{AgentFormat, Described};
use super::common::{Place, SessionFilter, SourceError, SourceRead};
use super::format::{Evidence, Sniff};
use super::tool::{arguments, KindRule, KindTable, ToolKind};
use crate::entry::Entry;

/// `metadata.source` of every entry read from a rollout.
pub const SOURCE: &str = "codex";

/// The first bytes of a zstd frame: a `rollout-*.jsonl.zst`.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// The most a compressed rollout may decompress to. A rollout of a day's work is a few
/// MB; a zstd frame of a few KB can claim terabytes, so the cap is what bounds memory.
pub(crate) const MAX_DECOMPRESSED: u64 = 1 << 30;

/// The record types (`type`) of a rollout line, old and new. Only `session_meta`,
/// `response_item`, `event_msg` and `turn_context` are read; the others hold nothing an
/// entry is made of (token counts, a compaction's summary, world state).
const RECORD_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
    "inter_agent_communication",
    "inter_agent_communication_metadata",
    "token_usage_record",
    "world_state",
    "security_risk_score",
    "retained_context",
    "realtime_item",
];

/// The `response_item` types that make no entry: the model's reasoning (often encrypted),
/// Codex's undo snapshots, a compaction's summary, and items Codex itself drops.
const QUIET_ITEMS: &[&str] = &[
    "reasoning",
    "ghost_snapshot",
    "compaction",
    "compaction_summary",
    "other",
];

/// The kind of each of Codex CLI's tools, as `codex-rs/core/src/tools` names them; MCP
/// tools (`mcp__server__tool`) and any tool not named are `other`.
pub(crate) const KINDS: KindTable = KindTable {
    agent: "Codex CLI",
    tools: &[
        ("shell", KindRule::Is(ToolKind::Shell)),
        ("container.exec", KindRule::Is(ToolKind::Shell)),
        ("local_shell", KindRule::Is(ToolKind::Shell)),
        ("exec_command", KindRule::Is(ToolKind::Shell)),
        ("write_stdin", KindRule::Is(ToolKind::Shell)),
        ("apply_patch", KindRule::Is(ToolKind::Edit)),
        ("read_file", KindRule::Is(ToolKind::Read)),
        ("view_image", KindRule::Is(ToolKind::Read)),
        ("list_dir", KindRule::Is(ToolKind::List)),
        ("grep_files", KindRule::Is(ToolKind::Search)),
        ("update_plan", KindRule::Is(ToolKind::Plan)),
        ("web_search", KindRule::Is(ToolKind::Web)),
    ],
};

/// The first words of a tool output by which Codex tells the model a call failed without
/// an exit code (`codex-rs/core/src/tools`: a rejected patch, arguments that do not parse).
const FAILURE_TEXTS: &[&str] = &[
    "patch rejected",
    "failed to parse function arguments",
    "unsupported call",
    "execution error",
    "exec command rejected",
    "apply_patch verification failed",
];

/// Codex CLI rollouts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Codex;

impl AgentFormat for Codex {
    const DESCRIBED: Described = Described {
        name: "codex",
        noun: "a Codex CLI rollout",
        about:
            "A Codex CLI rollout (`rollout-*.jsonl`, `.jsonl.zst`) or a `~/.codex/sessions` folder",
        document_keys: None,
        extensions: &["jsonl", "jsonl.zst"],
    };

    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        match evidence {
            Evidence::Head(head) if head.starts_with(&ZSTD_MAGIC) => Sniff::Certain,
            Evidence::Object(map) if is_record(map) => Sniff::Certain,
            _ => Sniff::No,
        }
    }

    fn read_bytes(
        &self,
        path: &Path,
        bytes: &[u8],
        filter: &SessionFilter,
    ) -> Result<SourceRead, SourceError> {
        if bytes.starts_with(&ZSTD_MAGIC) {
            Ok(read_rollout(
                path,
                &decompress(path, bytes, MAX_DECOMPRESSED)?,
                filter,
            ))
        } else {
            Ok(read_rollout(path, bytes, filter))
        }
    }
}

/// Whether a line is a rollout record: a `type` Codex writes, a `payload`, a `timestamp`.
pub(crate) fn is_record(map: &Map<String, Value>) -> bool {
    map.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| RECORD_TYPES.contains(&t))
        && map.contains_key("payload")
        && map.get("timestamp").is_some_and(Value::is_string)
}

/// The bytes a zstd frame holds, up to `cap`: more is refused, naming the file and the cap.
pub(crate) fn decompress(
    path: &std::path::Path,
    bytes: &[u8],
    cap: u64,
) -> Result<Vec<u8>, SourceError> {
    let error = |message: String| SourceError::Io {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, message),
    };
    let decoder = zstd::stream::read::Decoder::with_buffer(bytes)
        .map_err(|e| error(format!("not a readable zstd file: {e}")))?;
    let mut out = Vec::new();
    decoder
        .take(cap + 1)
        .read_to_end(&mut out)
        .map_err(|e| error(format!("not a readable zstd file: {e}")))?;
    if out.len() as u64 > cap {
        return Err(error(format!(
            "it decompresses to more than {} MiB, the cap on a compressed rollout, so it is not read",
            cap >> 20
        )));
    }
    Ok(out)
}

/// How a call ended, from what the events say of it.
#[derive(Default)]
struct EventEnd {
    exit_code: Option<i64>,
    failed: bool,
    duration: Option<f64>,
}

/// A rollout's text read: one session, unless the filter does not want it.
fn read_rollout(path: &std::path::Path, text: &[u8], filter: &SessionFilter) -> SourceRead {
    let mut file = FileRead::new(SOURCE, path, true);
    let mut records: Vec<(u64, Map<String, Value>)> = Vec::new();
    for (line, parsed) in json_lines(text) {
        match parsed {
            Ok(Value::Object(map)) => records.push((line, map)),
            Ok(other) => file.broken(
                Place::Line(line),
                format!("the line is {}", super::common::not_an_object(&other)),
            ),
            Err(why) => file.broken(Place::Line(line), why),
        }
    }
    // What answers each call: its output item, and the events that end it.
    let mut outputs: HashMap<&str, (u64, &Value)> = HashMap::new();
    let mut ends: HashMap<&str, EventEnd> = HashMap::new();
    let mut prompts = 0usize;
    let mut session_id: Option<String> = None;
    for (line, record) in &records {
        let payload = record.get("payload");
        let kind = payload.and_then(|p| p.get("type")).and_then(Value::as_str);
        let call_id = payload
            .and_then(|p| p.get("call_id"))
            .and_then(Value::as_str);
        match (record.get("type").and_then(Value::as_str), kind, call_id) {
            (Some("session_meta"), _, _) if session_id.is_none() => {
                session_id = payload
                    .and_then(|p| p.get("id"))
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .map(str::to_owned);
            }
            (
                Some("response_item"),
                Some("function_call_output" | "custom_tool_call_output"),
                Some(id),
            ) => {
                if let Some(output) = payload.and_then(|p| p.get("output")) {
                    outputs.entry(id).or_insert((*line, output));
                }
            }
            (Some("event_msg"), Some("exec_command_end"), Some(id)) => {
                let end = ends.entry(id).or_default();
                end.exit_code = payload
                    .and_then(|p| p.get("exit_code"))
                    .and_then(Value::as_i64);
                end.failed |= end.exit_code.is_some_and(|c| c != 0);
                end.duration = payload
                    .and_then(|p| p.get("duration"))
                    .and_then(duration_ms);
            }
            (Some("event_msg"), Some("patch_apply_end"), Some(id)) => {
                let success = payload.and_then(|p| p.get("success"));
                ends.entry(id).or_default().failed |= success == Some(&Value::Bool(false));
            }
            (Some("event_msg"), Some("user_message"), _) => prompts += 1,
            _ => {}
        }
    }
    let id = session_id.unwrap_or_else(|| file_stem(path));
    if !filter.wants(&id) {
        return read_of(Vec::new(), file);
    }
    let mut entries: Vec<Entry> = Vec::new();
    let mut at = At::default();
    let mut seen_calls: HashSet<&str> = HashSet::new();
    let mut cwd: Option<Value> = None;
    let mut model: Option<Value> = None;
    // The model response a call came in: calls of one response share it (they may have
    // run in parallel); an output, a user's message or a new turn starts another.
    let mut response = 0u64;
    let mut bad_times = 0u64;
    for (line, record) in &records {
        let place = Place::Line(*line);
        match record
            .get("timestamp")
            .and_then(Value::as_str)
            .map(At::parse)
        {
            Some(Some(read)) => at = read,
            _ => bad_times += 1,
        }
        let payload = record.get("payload");
        let record_type = record.get("type").and_then(Value::as_str).unwrap_or("");
        let item = payload.and_then(Value::as_object);
        match record_type {
            "session_meta" | "turn_context" => {
                if let Some(p) = item {
                    if let Some(dir) = p.get("cwd").filter(|v| v.is_string()) {
                        cwd = Some(dir.clone());
                    }
                    if let Some(m) = p.get("model").filter(|v| v.is_string()) {
                        model = Some(m.clone());
                    }
                }
                response += 1;
            }
            "event_msg" => {
                let Some(p) = item else { continue };
                if p.get("type").and_then(Value::as_str) == Some("user_message") {
                    let text = p.get("message").and_then(Value::as_str).unwrap_or("");
                    let extra = base(&cwd, &model, None);
                    entries.push(file.message(&id, &at, &place, "user", text.to_owned(), extra));
                    response += 1;
                }
            }
            "response_item" => {
                let Some(p) = item else {
                    file.broken(
                        place,
                        "a `response_item` without an object `payload`".into(),
                    );
                    continue;
                };
                let item_type = p.get("type").and_then(Value::as_str).unwrap_or("");
                match item_type {
                    "message" => {
                        let role = p.get("role").and_then(Value::as_str).unwrap_or("");
                        let text = content_text(p.get("content"));
                        match role {
                            "assistant" if !text.is_empty() => {
                                let extra = base(&cwd, &model, Some(response));
                                entries.push(file.message(
                                    &id,
                                    &at,
                                    &place,
                                    "assistant",
                                    text,
                                    extra,
                                ));
                            }
                            // A rollout with no `user_message` event (older ones) has the
                            // user's prompts only here.
                            "user" if prompts == 0 && !text.is_empty() => {
                                let extra = base(&cwd, &model, None);
                                entries.push(file.message(&id, &at, &place, "user", text, extra));
                                response += 1;
                            }
                            _ => response += u64::from(role == "user"),
                        }
                    }
                    "function_call" | "custom_tool_call" | "local_shell_call" => {
                        let call_id = p.get("call_id").and_then(Value::as_str);
                        if let Some(call) = call_id {
                            // A resumed or forked rollout may repeat its history.
                            if !seen_calls.insert(call) {
                                continue;
                            }
                        }
                        let (name, args) = match item_type {
                            "function_call" => (p.get("name"), p.get("arguments")),
                            "custom_tool_call" => (p.get("name"), p.get("input")),
                            _ => (None, p.get("action")),
                        };
                        let name = match (item_type, name) {
                            ("local_shell_call", _) => "local_shell",
                            (_, Some(Value::String(name))) => name.as_str(),
                            _ => {
                                file.broken(place, format!("a `{item_type}` without a `name`"));
                                continue;
                            }
                        };
                        let (params, odd) = arguments(args);
                        if let Some(odd) = odd {
                            file.warn(
                                place.clone(),
                                format!("`{name}` call: {odd}: it is kept as `params.input`, and rules reading the tool's arguments find none"),
                            );
                        }
                        let mut extra = base(&cwd, &model, Some(response));
                        if let Some(call) = call_id {
                            extra.insert("callId".into(), call.into());
                        }
                        let output = call_id.and_then(|c| outputs.get(c));
                        let end = call_id.and_then(|c| ends.get(c));
                        extra.insert("hasResult".into(), Value::Bool(output.is_some()));
                        let ended = match output {
                            Some((_, output)) => ended_of(output, end),
                            // A session that ended mid-call: kept, and marked by `hasResult`.
                            None => Ended::default(),
                        };
                        entries
                            .push(file.tool(&KINDS, &id, &at, &place, name, params, &ended, extra));
                    }
                    "web_search_call" => {
                        let (params, _) = arguments(p.get("action"));
                        let status = p.get("status").and_then(Value::as_str);
                        let mut extra = base(&cwd, &model, Some(response));
                        extra.insert("hasResult".into(), Value::Bool(true));
                        if let Some(status) = status {
                            extra.insert("status".into(), status.into());
                        }
                        let failed = status == Some("failed");
                        let ended = Ended {
                            failed,
                            error: failed.then(|| "the web search failed".to_owned()),
                            ..Ended::default()
                        };
                        entries.push(file.tool(
                            &KINDS,
                            &id,
                            &at,
                            &place,
                            "web_search",
                            params,
                            &ended,
                            extra,
                        ));
                    }
                    "function_call_output" | "custom_tool_call_output" => response += 1,
                    quiet if QUIET_ITEMS.contains(&quiet) => {}
                    other => file.unknown(place, format!("`response_item` `{other}`")),
                }
            }
            known if RECORD_TYPES.contains(&known) => {}
            other => file.unknown(place, format!("`{other}`")),
        }
    }
    if bad_times > 0 && !entries.is_empty() {
        file.warn(
            Place::File,
            format!("{bad_times} records have no readable `timestamp`: each takes the time of the record before it"),
        );
    }
    read_of(vec![session(&id, entries)], file)
}

/// The metadata every entry of a rollout carries: the working folder and model of its
/// turn, and the model response a call or reply came in.
fn base(cwd: &Option<Value>, model: &Option<Value>, response: Option<u64>) -> Map<String, Value> {
    let mut extra = Map::new();
    if let Some(cwd) = cwd {
        extra.insert("cwd".into(), cwd.clone());
    }
    if let Some(model) = model {
        extra.insert("model".into(), model.clone());
    }
    if let Some(response) = response {
        extra.insert("messageId".into(), format!("response-{response}").into());
    }
    extra
}

/// A Codex duration (`{"secs": 1, "nanos": 5}` or seconds) in milliseconds.
fn duration_ms(value: &Value) -> Option<f64> {
    match value {
        Value::Object(d) => {
            let secs = d.get("secs").and_then(Value::as_f64)?;
            let nanos = d.get("nanos").and_then(Value::as_f64).unwrap_or(0.0);
            Some(secs * 1000.0 + nanos / 1e6)
        }
        other => other.as_f64().map(|s| s * 1000.0),
    }
}

/// How a call ended, from its output (`"Plan updated"`, a JSON text
/// `{"output", "metadata": {"exit_code", "duration_seconds"}}`, an exec's `Process exited
/// with code N`, a list of content items, `{"content", "success"}`) and its events.
fn ended_of(output: &Value, end: Option<&EventEnd>) -> Ended {
    let mut ended = Ended::default();
    let mut text = String::new();
    match output {
        Value::String(s) => {
            text = s.clone();
            if s.starts_with('{') {
                if let Ok((Value::Object(doc), _)) =
                    crate::json::from_slice_lenient::<Value>(s.as_bytes())
                {
                    if let Some(meta) = doc.get("metadata") {
                        ended.exit_code = meta.get("exit_code").and_then(Value::as_i64);
                        if let Some(secs) = meta.get("duration_seconds").and_then(Value::as_f64) {
                            ended.duration = secs * 1000.0;
                        }
                    }
                    if let Some(out) = doc.get("output").and_then(Value::as_str) {
                        text = out.to_owned();
                    }
                }
            }
        }
        Value::Array(_) => text = content_text(Some(output)),
        Value::Object(doc) => {
            text = content_text(doc.get("content"));
            if doc.get("success") == Some(&Value::Bool(false)) {
                ended.failed = true;
            }
        }
        _ => {}
    }
    if ended.exit_code.is_none() {
        ended.exit_code = exit_code_in(&text);
    }
    if let Some(end) = end {
        ended.exit_code = end.exit_code.or(ended.exit_code);
        ended.failed |= end.failed;
        if let Some(ms) = end.duration {
            ended.duration = ms;
        }
    }
    let said_failed = FAILURE_TEXTS
        .iter()
        .any(|t| text.trim_start().starts_with(t));
    ended.failed |= said_failed || ended.exit_code.is_some_and(|c| c != 0);
    if ended.failed {
        ended.error = Some(text);
    }
    ended
}

/// The exit code a shell tool's text output states in its header (`Exit code: 1`,
/// `Process exited with code 1`), among its first lines.
fn exit_code_in(text: &str) -> Option<i64> {
    text.lines().take(6).find_map(|line| {
        let line = line.trim();
        line.strip_prefix("Exit code: ")
            .or_else(|| line.strip_prefix("Process exited with code "))
            .and_then(|code| code.trim().parse().ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn read(text: &str) -> SourceRead {
        read_rollout(Path::new("r.jsonl"), text.as_bytes(), &SessionFilter::All)
    }

    const META: &str = r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w"}}"#;

    #[test]
    fn a_call_is_one_entry_with_its_output_and_the_events_add_only_what_it_lacks() {
        let text = [
            META,
            r#"{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"fix it"}}"#,
            r#"{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]}}"#,
            r#"{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}}"#,
            r#"{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"false\"}","call_id":"c2"}}"#,
            r#"{"timestamp":"2026-01-01T00:00:03Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"a\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.5}}"}}"#,
            r#"{"timestamp":"2026-01-01T00:00:03Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"Chunk ID: x\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\n"}}"#,
            r#"{"timestamp":"2026-01-01T00:00:04Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch","call_id":"c3"}}"#,
            r#"{"timestamp":"2026-01-01T00:00:04Z","type":"event_msg","payload":{"type":"patch_apply_end","call_id":"c3","success":false}}"#,
            r#"{"timestamp":"2026-01-01T00:00:05Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c3","output":"{\"output\":\"bad\",\"metadata\":{\"exit_code\":0}}"}}"#,
            r#"{"timestamp":"2026-01-01T00:00:06Z","type":"response_item","payload":{"type":"function_call","name":"update_plan","arguments":"{}","call_id":"c4"}}"#,
            r#"{"timestamp":"2026-01-01T00:00:07Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}"#,
            r#"{"timestamp":"2026-01-01T00:00:07Z","type":"event_msg","payload":{"type":"agent_message","message":"done"}}"#,
        ]
        .join("\n");
        let read = read(&text);
        assert_eq!(read.sessions.len(), 1);
        let s = &read.sessions[0];
        assert_eq!(s.id, "s1");
        let ops: Vec<(&str, &str, bool)> = s
            .entries
            .iter()
            .map(|e| (e.domain.as_str(), e.operation.as_str(), e.result.success))
            .collect();
        assert_eq!(
            ops,
            [
                ("message", "user", true),
                ("tool", "shell", true),
                ("tool", "exec_command", false),
                ("tool", "apply_patch", false),
                ("tool", "update_plan", true),
                ("message", "assistant", true),
            ]
        );
        let kind = |i: usize| s.entries[i].metadata.get("kind").and_then(|k| k.as_str());
        assert_eq!(kind(1), Some("shell"));
        assert_eq!(kind(3), Some("edit"));
        assert_eq!(kind(4), Some("plan"));
        assert_eq!(s.entries[1].params["command"], serde_json::json!(["ls"]));
        assert_eq!(s.entries[1].result.duration, 500.0);
        assert_eq!(s.entries[2].result.exit_code, 1);
        assert_eq!(s.entries[3].params["input"], "*** Begin Patch");
        // Parallel calls of one response share its id; the next response has another.
        let response = |i: usize| s.entries[i].metadata.get("messageId").map(|m| m.to_json());
        assert_eq!(response(1), response(2));
        assert_ne!(response(2), response(4));
        // Unanswered.
        assert_eq!(
            s.entries[4].metadata.get("hasResult").map(|m| m.to_json()),
            Some(Value::Bool(false))
        );
        assert_eq!(s.skipped_lines, 0);
        assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    }

    #[test]
    fn an_unknown_record_or_item_is_skipped_counted_and_named_once_per_type() {
        let text = [
            META,
            r#"{"timestamp":"2026-01-01T00:00:01Z","type":"future_thing","payload":{}}"#,
            r#"{"timestamp":"2026-01-01T00:00:01Z","type":"future_thing","payload":{}}"#,
            r#"{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"hologram_call"}}"#,
            r#"not json"#,
            r#"{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"reasoning"}}"#,
        ]
        .join("\n");
        let read = read(&text);
        assert_eq!(read.sessions[0].skipped_lines, 4);
        assert_eq!(read.skipped_lines, 4);
        let warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            warnings,
            [
                "r.jsonl:5: skipped: not valid JSON: expected ident (column 2)",
                "r.jsonl:2: skipped: a record of a type this reader does not know, `future_thing` (2 records)",
                "r.jsonl:4: skipped: a record of a type this reader does not know, `response_item` `hologram_call`",
            ]
        );
    }

    #[test]
    fn a_zstd_bomb_is_refused_naming_the_file_and_the_cap() {
        let big = vec![b' '; (2 << 20) + 1];
        let frame = zstd::stream::encode_all(&big[..], 1).unwrap();
        let err = decompress(Path::new("r.jsonl.zst"), &frame, 2 << 20)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "cannot read `r.jsonl.zst`: it decompresses to more than 2 MiB, the cap on a compressed rollout, so it is not read"
        );
        assert_eq!(
            decompress(Path::new("r.jsonl.zst"), &frame, 3 << 20)
                .unwrap()
                .len(),
            big.len()
        );
        let err = decompress(Path::new("r.jsonl.zst"), &frame[..20], 3 << 20)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("cannot read `r.jsonl.zst`: not a readable zstd file"),
            "{err}"
        );
    }

    #[test]
    fn a_rollout_line_is_codex_and_no_other_reader_claims_it() {
        let line: Value = serde_json::from_str(META).unwrap();
        let map = line.as_object().unwrap();
        for format in crate::source::Registry::builtin().formats() {
            let sniff = format.sniff(&Evidence::Object(map));
            let expected = if format.name() == "codex" {
                Sniff::Certain
            } else {
                Sniff::No
            };
            assert_eq!(sniff, expected, "{}", format.name());
        }
    }
}
