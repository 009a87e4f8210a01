//! Gemini CLI chat recordings: `~/.gemini/tmp/<project>/chats/session-*.jsonl` (a metadata
//! line, then one message a line, with `{"$set": …}` updates and `{"$rewindTo": id}`
//! truncations), and the older single JSON object `session-*.json` (`messages[]`).
//!
//! The format is gemini-cli's `ConversationRecord`/`MessageRecord`/`ToolCallRecord`
//! (`packages/core/src/services/chatRecordingTypes.ts`), written by
//! `chatRecordingService.ts`. The JSONL file is an upsert log: a message id written again
//! replaces the earlier write where it stood (the last write wins: the one with the tool
//! calls' results), `$rewindTo` removes that message and every later one (an unknown id
//! removes them all), and a `$set` holding `messages` replaces the list. Tool calls are
//! nested in `gemini` messages. `docs/sources.md` has the mapping.

use indexmap::IndexMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::agent::{content_text, file_stem, json_lines, read_of, session, At, Ended, FileRead};
use super::agent::{AgentFormat, Described};
use super::common::{Place, SessionFilter, SourceError, SourceRead};
use super::format::{Evidence, Sniff};
use super::tool::{KindRule, KindTable, ToolKind};

/// `metadata.source` of every entry read from a chat recording.
pub const SOURCE: &str = "gemini-cli";

/// The message types (`type`) of a recording; only `user` and `gemini` make entries.
const MESSAGE_TYPES: &[&str] = &["user", "gemini", "info", "error", "warning"];

/// The kind of each of Gemini CLI's built-in tools (`packages/core/src/tools`); MCP tools and
/// any tool not named are `other`.
pub(crate) const KINDS: KindTable = KindTable {
    agent: "Gemini CLI",
    tools: &[
        ("read_file", KindRule::Is(ToolKind::Read)),
        ("read_many_files", KindRule::Is(ToolKind::Read)),
        ("replace", KindRule::Is(ToolKind::Edit)),
        ("edit", KindRule::Is(ToolKind::Edit)),
        ("write_file", KindRule::Is(ToolKind::Write)),
        ("glob", KindRule::Is(ToolKind::Search)),
        ("search_file_content", KindRule::Is(ToolKind::Search)),
        ("grep_search", KindRule::Is(ToolKind::Search)),
        ("list_directory", KindRule::Is(ToolKind::List)),
        ("run_shell_command", KindRule::Is(ToolKind::Shell)),
        ("write_todos", KindRule::Is(ToolKind::Plan)),
        ("google_web_search", KindRule::Is(ToolKind::Web)),
        ("web_fetch", KindRule::Is(ToolKind::Web)),
        ("delegate_to_agent", KindRule::Is(ToolKind::Delegate)),
        ("codebase_investigator", KindRule::Is(ToolKind::Delegate)),
    ],
};

/// Gemini CLI chat recordings.
#[derive(Debug, Clone, Copy, Default)]
pub struct GeminiCli;

impl AgentFormat for GeminiCli {
    const DESCRIBED: Described = Described {
        name: SOURCE,
        noun: "a Gemini CLI chat recording",
        about: "A Gemini CLI chat recording (`session-*.jsonl`, or the older `session-*.json`)",
        document_keys: Some("`sessionId`, `projectHash` and `messages` (Gemini CLI)"),
        extensions: &["jsonl", "json"],
    };

    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        match evidence {
            Evidence::Object(map) if is_metadata(map) || is_update(map) || is_message(map) => {
                Sniff::Certain
            }
            _ => Sniff::No,
        }
    }

    fn read_bytes(
        &self,
        path: &Path,
        bytes: &[u8],
        filter: &SessionFilter,
    ) -> Result<SourceRead, SourceError> {
        Ok(read_recording(path, bytes, filter))
    }
}

/// A recording's first line (or the whole older file): `sessionId`, `projectHash`,
/// `startTime`.
fn is_metadata(map: &Map<String, Value>) -> bool {
    map.get("sessionId").is_some_and(Value::is_string)
        && map.get("projectHash").is_some_and(Value::is_string)
        && map.contains_key("startTime")
        && !map.contains_key("type")
}

/// A `{"$set": {…}}` or `{"$rewindTo": id}` line, which only a JSONL recording has.
fn is_update(map: &Map<String, Value>) -> bool {
    map.len() == 1 && (map.contains_key("$set") || map.contains_key("$rewindTo"))
}

/// A message line: an `id`, a `type` of a recording's message, a `timestamp`, and none of
/// a Claude Code record's `uuid`, `sessionId` or `message`.
pub(crate) fn is_message(map: &Map<String, Value>) -> bool {
    map.get("id").is_some_and(Value::is_string)
        && map
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| MESSAGE_TYPES.contains(&t))
        && map.get("timestamp").is_some_and(Value::is_string)
        && map.contains_key("content")
        && !map.contains_key("uuid")
        && !map.contains_key("sessionId")
        && !map.contains_key("message")
}

/// The messages of a recording as it stands after every update, in order, each with the
/// place of its last write.
type Messages = IndexMap<String, (Place, Map<String, Value>)>;

fn read_recording(path: &std::path::Path, text: &[u8], filter: &SessionFilter) -> SourceRead {
    let mut file = FileRead::new(SOURCE, path, true);
    let mut messages: Messages = IndexMap::new();
    let mut session_id: Option<String> = None;
    let first = text.iter().copied().find(|b| !b.is_ascii_whitespace());
    // The older format: one JSON object, possibly pretty-printed, holding `messages`.
    let whole = match first {
        Some(b'{') => match crate::json::from_slice_lenient::<Value>(text) {
            Ok((Value::Object(doc), _)) if doc.get("messages").is_some_and(Value::is_array) => {
                Some(doc)
            }
            _ => None,
        },
        _ => None,
    };
    if let Some(mut doc) = whole {
        file = FileRead::new(SOURCE, path, false);
        session_id = doc
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(Value::Array(items)) = doc.remove("messages") {
            for (i, item) in items.into_iter().enumerate() {
                let place = Place::Item(format!("messages[{i}]"));
                upsert(&mut file, &mut messages, place, item);
            }
        }
    } else {
        for (line, parsed) in json_lines(text) {
            let place = Place::Line(line);
            let record = match parsed {
                Ok(Value::Object(map)) => map,
                Ok(other) => {
                    let why = format!("the line is {}", super::common::not_an_object(&other));
                    file.broken(place, why);
                    continue;
                }
                Err(why) => {
                    file.broken(place, why);
                    continue;
                }
            };
            if is_metadata(&record) {
                if session_id.is_none() {
                    session_id = record
                        .get("sessionId")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                }
                continue;
            }
            if let Some(target) = record.get("$rewindTo") {
                // gemini-cli removes the message and all after it; an id it does not hold
                // removes them all.
                let at = target
                    .as_str()
                    .and_then(|id| messages.get_index_of(id))
                    .unwrap_or(0);
                messages.truncate(at);
                continue;
            }
            if let Some(set) = record.get("$set") {
                if let Some(Value::Array(items)) = set.get("messages") {
                    messages.clear();
                    for (i, item) in items.iter().enumerate() {
                        let item_place = Place::Item(format!("line {line}: messages[{i}]"));
                        upsert(&mut file, &mut messages, item_place, item.clone());
                    }
                }
                continue;
            }
            upsert(&mut file, &mut messages, place, Value::Object(record));
        }
    }
    let id = session_id
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| file_stem(path));
    if !filter.wants(&id) {
        return read_of(Vec::new(), file);
    }
    let mut entries = Vec::new();
    for (place, message) in messages.values() {
        let at = message
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(At::parse)
            .unwrap_or_default();
        let mut extra = Map::new();
        if let Some(id) = message.get("id").filter(|v| v.is_string()) {
            extra.insert("messageId".into(), id.clone());
        }
        if let Some(model) = message.get("model").filter(|v| v.is_string()) {
            extra.insert("model".into(), model.clone());
        }
        match message.get("type").and_then(Value::as_str) {
            Some("user") => {
                let text = content_text(message.get("content"));
                entries.push(file.message(&id, &at, place, "user", text, extra));
            }
            Some("gemini") => {
                let text = content_text(message.get("content"));
                if !text.is_empty() {
                    entries.push(file.message(&id, &at, place, "assistant", text, extra.clone()));
                }
                let calls = match message.get("toolCalls") {
                    Some(Value::Array(calls)) => calls.as_slice(),
                    _ => &[],
                };
                for call in calls {
                    if let Some(entry) = tool_call(&mut file, &id, &at, place, call, &extra) {
                        entries.push(entry);
                    }
                }
            }
            // `info`, `error` and `warning` are the CLI's own notes, not the agent's.
            _ => {}
        }
    }
    read_of(vec![session(&id, entries)], file)
}

/// Puts a message where its id stands (a rewrite replaces it in place), or skips what is
/// no message.
fn upsert(file: &mut FileRead, messages: &mut Messages, place: Place, item: Value) {
    let Value::Object(message) = item else {
        file.broken(place, "the message is not a JSON object".into());
        return;
    };
    let kind = message.get("type").and_then(Value::as_str);
    if !kind.is_some_and(|k| MESSAGE_TYPES.contains(&k)) {
        let what = match message.get("type") {
            Some(Value::String(t)) => format!("message type `{t}`"),
            _ => "a line without a message `type`".to_owned(),
        };
        file.unknown(place, what);
        return;
    }
    let Some(id) = message.get("id").and_then(Value::as_str).map(str::to_owned) else {
        file.broken(place, "a message without a text `id`".into());
        return;
    };
    messages.insert(id, (place, message));
}

/// A `toolCalls[]` item: the tool's name, its `args`, and failed when its `status` is
/// `error`.
fn tool_call(
    file: &mut FileRead,
    session_id: &str,
    at: &At,
    place: &Place,
    call: &Value,
    message: &Map<String, Value>,
) -> Option<crate::entry::Entry> {
    let Some(name) = call.get("name").and_then(Value::as_str) else {
        file.broken(place.clone(), "a tool call without a `name`".into());
        return None;
    };
    let (params, odd) = super::tool::arguments(call.get("args"));
    if let Some(odd) = odd {
        file.warn(
            place.clone(),
            format!("`{name}` call: {odd}: it is kept as `params.input`, and rules reading the tool's arguments find none"),
        );
    }
    let at = call
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(At::parse)
        .unwrap_or_else(|| at.clone());
    let status = call.get("status").and_then(Value::as_str);
    let failed = status == Some("error");
    let mut extra = message.clone();
    if let Some(id) = call.get("id").filter(|v| v.is_string()) {
        extra.insert("callId".into(), id.clone());
    }
    if let Some(status) = status {
        extra.insert("status".into(), status.into());
    }
    extra.insert(
        "hasResult".into(),
        Value::Bool(call.get("result").is_some()),
    );
    let ended = Ended {
        failed,
        error: failed.then(|| error_text(call)),
        ..Ended::default()
    };
    Some(file.tool(&KINDS, session_id, &at, place, name, params, &ended, extra))
}

/// What a failed call says went wrong: its `functionResponse`'s `error` or `output`, else
/// the `resultDisplay` the CLI showed.
fn error_text(call: &Value) -> String {
    let responses = call.get("result").and_then(Value::as_array);
    let from_result = responses.into_iter().flatten().find_map(|part| {
        let response = part.get("functionResponse")?.get("response")?;
        response
            .get("error")
            .or_else(|| response.get("output"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    from_result
        .or_else(|| {
            call.get("resultDisplay")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "the tool call failed".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn read(text: &str) -> SourceRead {
        read_recording(Path::new("s.jsonl"), text.as_bytes(), &SessionFilter::All)
    }

    const META: &str = r#"{"sessionId":"g1","projectHash":"h","startTime":"2026-01-01T00:00:00Z","lastUpdated":"2026-01-01T00:00:00Z"}"#;

    #[test]
    fn a_rewritten_message_wins_in_place_and_a_rewound_one_is_gone() {
        let text = [
            META,
            r#"{"id":"u1","timestamp":"2026-01-01T00:00:01Z","type":"user","content":[{"text":"go"}]}"#,
            r#"{"id":"m1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":""}"#,
            r#"{"$set":{"lastUpdated":"2026-01-01T00:00:02Z"}}"#,
            r#"{"id":"u2","timestamp":"2026-01-01T00:00:03Z","type":"user","content":"later"}"#,
            r#"{"id":"m1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"ok","toolCalls":[{"id":"c1","name":"read_file","args":{"file_path":"a"},"status":"success","result":[]},{"id":"c2","name":"run_shell_command","args":{"command":"false"},"status":"error","result":[{"functionResponse":{"response":{"error":"exit 1"}}}]}]}"#,
            r#"{"id":"u3","timestamp":"2026-01-01T00:00:04Z","type":"user","content":"undo me"}"#,
            r#"{"id":"m3","timestamp":"2026-01-01T00:00:05Z","type":"gemini","content":"gone"}"#,
            r#"{"$rewindTo":"u3"}"#,
            r#"{"id":"i1","timestamp":"2026-01-01T00:00:06Z","type":"info","content":"note"}"#,
        ]
        .join("\n");
        let read = read(&text);
        let s = &read.sessions[0];
        assert_eq!(s.id, "g1");
        let ops: Vec<(&str, &str, bool)> = s
            .entries
            .iter()
            .map(|e| (e.domain.as_str(), e.operation.as_str(), e.result.success))
            .collect();
        assert_eq!(
            ops,
            [
                ("message", "user", true),
                ("message", "assistant", true),
                ("tool", "read_file", true),
                ("tool", "run_shell_command", false),
                ("message", "user", true),
            ]
        );
        assert_eq!(s.entries[3].error.as_deref(), Some("exit 1"));
        let kind = |i: usize| s.entries[i].metadata.get("kind").and_then(|k| k.as_str());
        assert_eq!((kind(2), kind(3)), (Some("read"), Some("shell")));
        assert_eq!(s.skipped_lines, 0);
    }

    #[test]
    fn an_unknown_message_type_is_skipped_and_counted() {
        let text = [
            META,
            r#"{"id":"x","timestamp":"2026-01-01T00:00:01Z","type":"hologram","content":""}"#,
            r#"[1]"#,
        ]
        .join("\n");
        let read = read(&text);
        assert_eq!(read.sessions[0].skipped_lines, 2);
        let warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            warnings,
            [
                "s.jsonl:3: skipped: the line is a JSON array, not an object",
                "s.jsonl:2: skipped: a record of a type this reader does not know, message type `hologram`",
            ]
        );
    }

    #[test]
    fn a_message_line_is_gemini_and_no_other_reader_claims_it() {
        let line: Value = serde_json::from_str(
            r#"{"id":"u1","timestamp":"2026-01-01T00:00:01Z","type":"user","content":"go"}"#,
        )
        .unwrap();
        for format in crate::source::Registry::builtin().formats() {
            let sniff = format.sniff(&Evidence::Object(line.as_object().unwrap()));
            let expected = if format.name() == SOURCE {
                Sniff::Certain
            } else {
                Sniff::No
            };
            assert_eq!(sniff, expected, "{}", format.name());
        }
    }
}
