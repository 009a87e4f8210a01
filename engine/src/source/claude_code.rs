//! Claude Code transcripts: `~/.claude/projects/<project>/<session>.jsonl`, one record per
//! line, or the `{"loglines": [...]}` wrapper of web and API sessions.
//!
//! Each `tool_use` block becomes an entry (domain `tool`, operation the tool's name, params
//! its input) whose outcome comes from the matching `tool_result`; user prompts and the
//! assistant's text become `message` entries (operation `user` / `assistant`, `params.text`).
//! Records that cannot be read are skipped with a warning naming their line, as transcript
//! viewers do; record types this reader does not use (`summary`, `system`, `progress`,
//! `file-history-snapshot`, newer ones) are ignored. `docs/sources.md` has the full mapping.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::common::{
    describe_json_error, json_kind, Input, Place, ReadOptions, SessionFilter, SourceError,
    SourceRead, SourceWarning,
};
use super::format::{Evidence, Sniff, SourceFormat};
use crate::entry::{Entry, Metadata, Outcome, Session, Text};
use crate::time::{parse_timestamp, InstantMs};

/// `metadata.source` of every entry read from a transcript.
pub const SOURCE: &str = "claude-code";

/// One record of a transcript with where it was found.
struct Record {
    place: Place,
    /// 1-based line, or 1-based index in `loglines`.
    line: u64,
    value: Value,
}

/// The result of a tool call, keyed by the `tool_use` id it answers.
struct ToolResult {
    is_error: bool,
    text: String,
    instant: InstantMs,
    /// `toolUseResult.type` of the record (`create` / `update` for Write), when present.
    result_type: Option<String>,
}

/// An entry with what is needed to group and deduplicate it.
struct Pending {
    /// Tool calls by `tool_use` id, messages by record uuid and block.
    key: Option<String>,
    entry: Entry,
}

/// Claude Code transcripts: `<session>.jsonl` files, the `{"loglines": [...]}` wrapper, and
/// project folders of them. Sessions are gathered by `sessionId` across files (a subagent's
/// file carries its parent's session id).
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaudeCode;

impl SourceFormat for ClaudeCode {
    fn name(&self) -> &str {
        SOURCE
    }

    fn noun(&self) -> &str {
        "a Claude Code transcript"
    }

    fn about(&self) -> &str {
        "A Claude Code transcript, `{\"loglines\": [...]}` file or project folder"
    }

    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        let Evidence::Object(map) = evidence else {
            return Sniff::No;
        };
        let has = |key: &str| map.contains_key(key);
        if map.get("loglines").is_some_and(Value::is_array) {
            return Sniff::Certain;
        }
        let typed = map.get("type").is_some_and(Value::is_string);
        if has("parentUuid")
            || has("leafUuid")
            || has("isSidechain")
            || (typed && (has("message") || has("uuid") || has("sessionId") || has("timestamp")))
        {
            return Sniff::Likely;
        }
        Sniff::No
    }

    fn document_keys(&self) -> Option<&str> {
        Some("`loglines` (Claude Code)")
    }

    fn read(
        &self,
        input: &Input<'_>,
        filter: &SessionFilter,
        _: &ReadOptions,
    ) -> Result<SourceRead, SourceError> {
        let mut warnings = Vec::new();
        let bytes = input.bytes()?;
        let records = records_of(input.name(), &bytes, &mut warnings);
        let per_file = vec![entries_of(input.name(), records, &mut warnings)];
        Ok(SourceRead {
            sessions: group(per_file, filter),
            warnings,
            ..SourceRead::default()
        })
    }

    fn folder_extension(&self) -> Option<&str> {
        Some("jsonl")
    }

    fn read_files(
        &self,
        files: &[PathBuf],
        filter: &SessionFilter,
        _: &ReadOptions,
    ) -> Result<SourceRead, SourceError> {
        let mut warnings = Vec::new();
        let mut per_file = Vec::with_capacity(files.len());
        for path in files {
            let input = Input::File(path);
            let bytes = input.bytes()?;
            let records = records_of(path, &bytes, &mut warnings);
            per_file.push(entries_of(path, records, &mut warnings));
        }
        Ok(SourceRead {
            sessions: group(per_file, filter),
            warnings,
            ..SourceRead::default()
        })
    }
}

/// The records of a file: its lines, or the items of a `{"loglines": [...]}` document.
/// Lines that are not JSON are reported and skipped.
fn records_of(path: &Path, text: &[u8], warnings: &mut Vec<SourceWarning>) -> Vec<Record> {
    let first = text.iter().copied().find(|b| !b.is_ascii_whitespace());
    if first == Some(b'{') {
        // A wrapper document (possibly pretty-printed) parses whole; a JSONL file does not
        // unless it holds a single record.
        if let Ok(Value::Object(mut doc)) = serde_json::from_slice::<Value>(text) {
            if let Some(Value::Array(lines)) = doc.remove("loglines") {
                return lines
                    .into_iter()
                    .enumerate()
                    .map(|(i, value)| Record {
                        place: Place::Item(format!("loglines[{i}]")),
                        line: i as u64 + 1,
                        value,
                    })
                    .collect();
            }
        }
    }
    let mut records = Vec::new();
    // A final newline ends the last line rather than starting an empty one (which, being
    // blank, would be skipped anyway).
    for (i, line) in text.split(|b| *b == b'\n').enumerate() {
        let line_no = i as u64 + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(value) => records.push(Record {
                place: Place::Line(line_no),
                line: line_no,
                value,
            }),
            Err(err) => warnings.push(SourceWarning {
                path: path.to_owned(),
                place: Place::Line(line_no),
                message: format!("skipped: not valid JSON: {}", describe_json_error(&err)),
            }),
        }
    }
    records
}

/// The entries of one file, in record order, with tool outcomes filled in.
fn entries_of(
    path: &Path,
    records: Vec<Record>,
    warnings: &mut Vec<SourceWarning>,
) -> Vec<Pending> {
    let mut warn = |place: &Place, message: String| {
        warnings.push(SourceWarning {
            path: path.to_owned(),
            place: place.clone(),
            message,
        })
    };
    let file_session = records
        .iter()
        .find_map(|r| {
            r.value
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string())
        });
    let file_text = path.display().to_string();

    // Only user and assistant records with a readable message are used.
    let mut usable: Vec<(Record, InstantMs, String)> = Vec::with_capacity(records.len());
    for record in records {
        let Value::Object(map) = &record.value else {
            warn(
                &record.place,
                format!(
                    "skipped: a JSON {}, not a transcript record",
                    json_kind(&record.value)
                ),
            );
            continue;
        };
        let Some(kind) = map.get("type").and_then(Value::as_str) else {
            warn(
                &record.place,
                "skipped: the record has no `type`".to_owned(),
            );
            continue;
        };
        if kind != "user" && kind != "assistant" {
            continue;
        }
        let Some(message) = map.get("message") else {
            warn(
                &record.place,
                format!("skipped: the `{kind}` record has no `message`"),
            );
            continue;
        };
        let Some(message) = message.as_object() else {
            warn(
                &record.place,
                format!(
                    "skipped: `message` is a JSON {}, not an object",
                    json_kind(message)
                ),
            );
            continue;
        };
        match message.get("content") {
            Some(Value::String(_) | Value::Array(_)) => {}
            Some(other) => {
                warn(
                    &record.place,
                    format!(
                        "skipped: `message.content` is a JSON {}, not text or blocks",
                        json_kind(other)
                    ),
                );
                continue;
            }
            None => {
                warn(
                    &record.place,
                    "skipped: `message` has no `content`".to_owned(),
                );
                continue;
            }
        }
        let Some(timestamp) = map
            .get("timestamp")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            warn(
                &record.place,
                "skipped: the record has no `timestamp`".to_owned(),
            );
            continue;
        };
        let instant = match parse_timestamp(&timestamp) {
            Ok(instant) => instant,
            Err(err) => {
                warn(&record.place, format!("skipped: field `timestamp`: {err}"));
                continue;
            }
        };
        usable.push((record, instant, timestamp));
    }

    // Outcomes first: a result may be written before the call's other blocks.
    let mut results: HashMap<String, ToolResult> = HashMap::new();
    for (record, instant, _) in &usable {
        let Some(Value::Array(blocks)) = record.value.pointer("/message/content") else {
            continue;
        };
        let result_type = record
            .value
            .pointer("/toolUseResult/type")
            .and_then(Value::as_str)
            .map(str::to_owned);
        for block in blocks {
            if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                continue;
            }
            let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else {
                continue;
            };
            results.entry(id.to_owned()).or_insert_with(|| ToolResult {
                is_error: block
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                text: result_text(block.get("content")),
                instant: *instant,
                result_type: result_type.clone(),
            });
        }
    }

    // Older transcripts keep subagents' lines in the main file without an `agentId`: each
    // run of sidechain lines linked by `parentUuid` is one subagent, named by its first line.
    let mut chains: HashMap<String, String> = HashMap::new();
    for (record, _, _) in &usable {
        let Value::Object(map) = &record.value else {
            continue;
        };
        let sidechain = map.get("isSidechain").and_then(Value::as_bool) == Some(true);
        let Some(uuid) = map.get("uuid").and_then(Value::as_str) else {
            continue;
        };
        if !sidechain || map.get("agentId").and_then(Value::as_str).is_some() {
            continue;
        }
        let chain = map
            .get("parentUuid")
            .and_then(Value::as_str)
            .and_then(|parent| chains.get(parent).cloned())
            .unwrap_or_else(|| uuid.to_owned());
        chains.insert(uuid.to_owned(), chain);
    }

    let mut out = Vec::new();
    for (record, instant, timestamp) in usable {
        let map = match &record.value {
            Value::Object(map) => map,
            _ => continue,
        };
        let kind = map.get("type").and_then(Value::as_str).unwrap_or_default();
        // Records without a `sessionId` belong to the file's session.
        let session_id = map
            .get("sessionId")
            .and_then(Value::as_str)
            .map_or_else(|| file_session.clone(), str::to_owned);
        let uuid = map.get("uuid").and_then(Value::as_str);
        let message = map.get("message").and_then(Value::as_object);
        let model = message.and_then(|m| m.get("model")).and_then(Value::as_str);
        // Lines without a message id (older and synthetic transcripts) stand for themselves.
        let message_id = message
            .and_then(|m| m.get("id"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| uuid.map(str::to_owned))
            .unwrap_or_else(|| format!("{file_text}:{}", record.line));
        let sidechain = map
            .get("isSidechain")
            .and_then(Value::as_bool)
            .unwrap_or(false);

        let base = |extra: &mut Map<String, Value>| {
            extra.insert("isSidechain".into(), Value::Bool(sidechain));
            if let Some(agent) = map.get("agentId").and_then(Value::as_str) {
                extra.insert("agentId".into(), agent.into());
            } else if let Some(chain) = uuid.and_then(|u| chains.get(u)) {
                extra.insert("agentId".into(), chain.as_str().into());
            }
            if let Some(uuid) = uuid {
                extra.insert("uuid".into(), uuid.into());
            }
            if let Some(cwd) = map.get("cwd").and_then(Value::as_str) {
                extra.insert("cwd".into(), cwd.into());
            }
            extra.insert("file".into(), file_text.as_str().into());
            extra.insert("line".into(), record.line.into());
        };
        let make = |domain: &str,
                    operation: &str,
                    params: Map<String, Value>,
                    extra: Map<String, Value>,
                    outcome: Outcome,
                    error: Option<String>| Entry {
            timestamp: timestamp.as_str().into(),
            instant,
            session_id: session_id.as_str().into(),
            domain: domain.into(),
            operation: operation.into(),
            params: params.into(),
            result: outcome,
            metadata: Metadata {
                extra,
                ..Metadata::with_source(SOURCE)
            },
            error: error.map(Text::from),
        };
        let ok = Outcome {
            success: true,
            exit_code: 0,
            duration: 0.0,
        };

        let content = message.and_then(|m| m.get("content"));
        if kind == "user" {
            let text = match content {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(blocks)) => {
                    let mut texts = Vec::new();
                    for (i, block) in blocks.iter().enumerate() {
                        match block {
                            Value::Object(b) => {
                                if b.get("type").and_then(Value::as_str) == Some("text") {
                                    if let Some(t) = b.get("text").and_then(Value::as_str) {
                                        texts.push(t);
                                    }
                                }
                            }
                            other => warn(
                                &record.place,
                                format!(
                                    "content block {i} skipped: a JSON {}, not an object",
                                    json_kind(other)
                                ),
                            ),
                        }
                    }
                    texts.join("\n\n")
                }
                _ => String::new(),
            };
            if text.trim().is_empty() {
                continue;
            }
            let mut params = Map::new();
            params.insert("text".into(), Value::String(text));
            let mut extra = Map::new();
            base(&mut extra);
            for flag in ["isMeta", "isCompactSummary"] {
                if let Some(v) = map.get(flag).and_then(Value::as_bool) {
                    extra.insert(flag.into(), Value::Bool(v));
                }
            }
            out.push(Pending {
                key: uuid.map(|u| format!("message:{u}")),
                entry: make("message", "user", params, extra, ok.clone(), None),
            });
            continue;
        }

        // An assistant record: text and tool calls, in block order.
        let blocks: &[Value] = match content {
            Some(Value::Array(blocks)) => blocks,
            Some(Value::String(s)) if !s.trim().is_empty() => {
                let mut params = Map::new();
                params.insert("text".into(), Value::String(s.clone()));
                let mut extra = Map::new();
                base(&mut extra);
                extra.insert("messageId".into(), message_id.as_str().into());
                if let Some(model) = model {
                    extra.insert("model".into(), model.into());
                }
                out.push(Pending {
                    key: uuid.map(|u| format!("message:{u}")),
                    entry: make("message", "assistant", params, extra, ok.clone(), None),
                });
                continue;
            }
            _ => continue,
        };
        for (i, block) in blocks.iter().enumerate() {
            let Value::Object(b) = block else {
                warn(
                    &record.place,
                    format!(
                        "content block {i} skipped: a JSON {}, not an object",
                        json_kind(block)
                    ),
                );
                continue;
            };
            let mut extra = Map::new();
            base(&mut extra);
            extra.insert("messageId".into(), message_id.as_str().into());
            if let Some(model) = model {
                extra.insert("model".into(), model.into());
            }
            match b.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let Some(text) = b
                        .get("text")
                        .and_then(Value::as_str)
                        .filter(|t| !t.trim().is_empty())
                    else {
                        continue;
                    };
                    let mut params = Map::new();
                    params.insert("text".into(), text.into());
                    out.push(Pending {
                        key: uuid.map(|u| format!("message:{u}:{i}")),
                        entry: make("message", "assistant", params, extra, ok.clone(), None),
                    });
                }
                Some("tool_use") => {
                    let (Some(id), Some(name)) = (
                        b.get("id").and_then(Value::as_str),
                        b.get("name").and_then(Value::as_str),
                    ) else {
                        warn(
                            &record.place,
                            format!(
                                "content block {i} skipped: a `tool_use` without `id` or `name`"
                            ),
                        );
                        continue;
                    };
                    let params = match b.get("input") {
                        Some(Value::Object(input)) => input.clone(),
                        None | Some(Value::Null) => Map::new(),
                        Some(other) => {
                            let mut wrapped = Map::new();
                            wrapped.insert("input".into(), other.clone());
                            wrapped
                        }
                    };
                    extra.insert("toolUseId".into(), id.into());
                    let (outcome, error) = match results.get(id) {
                        Some(r) => {
                            extra.insert("hasResult".into(), Value::Bool(true));
                            if let Some(t) = &r.result_type {
                                extra.insert("resultType".into(), t.as_str().into());
                            }
                            (
                                Outcome {
                                    success: !r.is_error,
                                    exit_code: i64::from(r.is_error),
                                    duration: (r.instant - instant).max(0) as f64,
                                },
                                r.is_error.then(|| r.text.clone()),
                            )
                        }
                        None => {
                            extra.insert("hasResult".into(), Value::Bool(false));
                            (ok.clone(), None)
                        }
                    };
                    out.push(Pending {
                        key: Some(format!("tool:{id}")),
                        entry: make("tool", name, params, extra, outcome, error),
                    });
                }
                // Thinking, server-side tools, images and newer blocks carry no tool call.
                _ => {}
            }
        }
    }
    out
}

/// The text of a `tool_result`'s content: a string, or its text blocks joined.
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => o.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Gathers entries into sessions (in order of first appearance). An entry seen before in
/// the same session (a resumed session copies earlier records) is kept once. When a
/// session's entries come from several files they are merged by time, file order breaking ties.
fn group(per_file: Vec<Vec<Pending>>, filter: &SessionFilter) -> Vec<Session> {
    let mut sessions: Vec<Session> = Vec::new();
    let mut index_of: HashMap<String, usize> = HashMap::new();
    let mut seen: Vec<HashSet<String>> = Vec::new();
    let mut files_of: Vec<usize> = Vec::new();
    for file in per_file {
        let mut touched: HashSet<usize> = HashSet::new();
        for pending in file {
            let id = pending.entry.session_id.to_string();
            if !filter.wants(&id) {
                continue;
            }
            let slot = *index_of.entry(id.clone()).or_insert_with(|| {
                sessions.push(Session {
                    id: id.clone(),
                    ..Session::default()
                });
                seen.push(HashSet::new());
                files_of.push(0);
                sessions.len() - 1
            });
            if let Some(key) = pending.key {
                if !seen[slot].insert(key) {
                    continue;
                }
            }
            if touched.insert(slot) {
                files_of[slot] += 1;
            }
            sessions[slot].entries.push(pending.entry);
        }
    }
    for (slot, session) in sessions.iter_mut().enumerate() {
        if files_of[slot] > 1 {
            session.entries.sort_by_key(|e| e.instant);
        }
    }
    sessions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::MetaRef;
    use std::io::Write as _;

    fn transcript(lines: &[&str]) -> tempfile::NamedTempFile {
        let mut f = tempfile::Builder::new()
            .suffix(".jsonl")
            .tempfile()
            .unwrap();
        for line in lines {
            writeln!(f, "{line}").unwrap();
        }
        f
    }

    fn read(lines: &[&str]) -> SourceRead {
        let f = transcript(lines);
        ClaudeCode
            .read_files(
                &[f.path().to_owned()],
                &SessionFilter::All,
                &ReadOptions::default(),
            )
            .unwrap()
    }

    const USER: &str = r#"{"type":"user","sessionId":"s1","uuid":"u1","timestamp":"2025-09-03T00:00:00Z","message":{"role":"user","content":"fix the bug"}}"#;
    const CALLS_1: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a1","timestamp":"2025-09-03T00:00:01Z","isSidechain":false,"message":{"id":"msg_1","model":"claude-x","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/a.rs"}}]}}"#;
    const CALLS_2: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a2","timestamp":"2025-09-03T00:00:02Z","message":{"id":"msg_1","model":"claude-x","role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Bash","input":{"command":"false"}}]}}"#;
    const RESULTS: &str = r#"{"type":"user","sessionId":"s1","uuid":"u2","timestamp":"2025-09-03T00:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"exit 1","is_error":true},{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"fn main() {}"}]}]}}"#;

    #[test]
    fn tool_calls_become_entries_with_their_outcome() {
        let read = read(&[USER, CALLS_1, CALLS_2, RESULTS]);
        assert!(read.warnings.is_empty(), "{:?}", read.warnings);
        let [session] = read.sessions.as_slice() else {
            panic!("one session")
        };
        assert_eq!(session.id, "s1");
        let ops: Vec<_> = session
            .entries
            .iter()
            .map(|e| format!("{}.{}", e.domain, e.operation))
            .collect();
        assert_eq!(ops, ["message.user", "tool.Read", "tool.Bash"]);
        let read_call = &session.entries[1];
        assert_eq!(read_call.params["file_path"], "/a.rs");
        assert!(read_call.result.success);
        assert_eq!(read_call.result.duration, 4000.0);
        assert_eq!(
            read_call.metadata.get("model"),
            Some(MetaRef::Json(&Value::from("claude-x")))
        );
        assert_eq!(
            read_call.metadata.get("toolUseId"),
            Some(MetaRef::Json(&Value::from("toolu_1")))
        );
        let bash = &session.entries[2];
        assert!(!bash.result.success);
        assert_eq!(bash.result.exit_code, 1);
        assert_eq!(bash.error.as_deref(), Some("exit 1"));
        // One message over two lines: the calls share the message id, so they ran in parallel.
        assert_eq!(
            read_call.metadata.get("messageId"),
            bash.metadata.get("messageId")
        );
        assert_eq!(session.entries[0].params["text"], "fix the bug");
    }

    #[test]
    fn bad_records_are_skipped_with_their_line() {
        let read = read(&[
            USER,
            "not json",
            "42",
            r#"{"silly":"this"}"#,
            r#"{"type":"user","sessionId":"s1","message":"error"}"#,
            r#"{"type":"summary","summary":"s","leafUuid":"u1"}"#,
            r#"{"type":"file-history-snapshot","messageId":"x","snapshot":{}}"#,
            CALLS_1,
        ]);
        let lines: Vec<_> = read.warnings.iter().map(|w| w.place.clone()).collect();
        assert_eq!(
            lines,
            [
                Place::Line(2),
                Place::Line(3),
                Place::Line(4),
                Place::Line(5)
            ]
        );
        assert!(
            read.warnings[0]
                .to_string()
                .contains(":2: skipped: not valid JSON"),
            "{}",
            read.warnings[0]
        );
        assert_eq!(read.sessions[0].entries.len(), 2);
    }

    #[test]
    fn sidechains_are_marked_and_sessions_gathered_across_files() {
        let main = transcript(&[USER, CALLS_1]);
        let agent = transcript(&[
            r#"{"type":"assistant","sessionId":"s1","isSidechain":true,"agentId":"ag","uuid":"b1","timestamp":"2025-09-03T00:00:00.500Z","message":{"id":"msg_9","role":"assistant","content":[{"type":"tool_use","id":"toolu_9","name":"Grep","input":{"pattern":"x"}}]}}"#,
            // A copy of a main-session record, as a resumed session writes it.
            CALLS_1,
        ]);
        let read = ClaudeCode
            .read_files(
                &[main.path().to_owned(), agent.path().to_owned()],
                &SessionFilter::All,
                &ReadOptions::default(),
            )
            .unwrap();
        let [session] = read.sessions.as_slice() else {
            panic!("one session")
        };
        let ops: Vec<_> = session
            .entries
            .iter()
            .map(|e| e.operation.as_str())
            .collect();
        assert_eq!(
            ops,
            ["user", "Grep", "Read"],
            "merged by time, the copy kept once"
        );
        assert_eq!(
            session.entries[1].metadata.get("isSidechain"),
            Some(MetaRef::Json(&Value::Bool(true)))
        );
        assert_eq!(
            session.entries[2].metadata.get("isSidechain"),
            Some(MetaRef::Json(&Value::Bool(false)))
        );
    }

    #[test]
    fn the_loglines_wrapper_is_read_and_named_by_the_file() {
        let mut f = tempfile::Builder::new()
            .prefix("web")
            .suffix(".json")
            .tempfile()
            .unwrap();
        write!(
            f,
            "{{\n  \"loglines\": [\n    {{\"type\": \"user\", \"timestamp\": \"2025-12-24T10:00:00Z\", \"message\": {{\"role\": \"user\", \"content\": \"hi\"}}}},\n    7\n  ]\n}}\n"
        )
        .unwrap();
        let read = ClaudeCode
            .read_files(
                &[f.path().to_owned()],
                &SessionFilter::All,
                &ReadOptions::default(),
            )
            .unwrap();
        let stem = f.path().file_stem().unwrap().to_string_lossy().into_owned();
        assert_eq!(read.sessions[0].id, stem);
        assert_eq!(read.warnings.len(), 1);
        assert_eq!(read.warnings[0].place, Place::Item("loglines[1]".into()));
    }

    #[test]
    fn a_call_without_result_succeeds_and_says_so() {
        let read = read(&[CALLS_1]);
        let e = &read.sessions[0].entries[0];
        assert!(e.result.success);
        assert_eq!(
            e.metadata.get("hasResult"),
            Some(MetaRef::Json(&Value::Bool(false)))
        );
    }
}
