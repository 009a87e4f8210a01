//! inspect_ai eval logs: the `.eval` zip (`header.json`, `samples/<id>_epoch_<n>.json`,
//! summaries) and the single-document `.json` log (`samples[]` inline). One session per
//! sample and epoch.
//!
//! A sample's tool calls are read from its `tool` events, once: the same calls are in its
//! messages too (the assistant's `tool_calls`, the `tool` replies). A sample without events
//! (logs written with events left out) has its calls read from its messages instead. A tool
//! call fails when its event (or its `tool` message) carries an `error`. The definition is
//! `inspect_ai/log/_log.py` (EvalLog, EvalSample), `log/_recorders/eval.py` (the zip layout),
//! `event/_tool.py` (ToolEvent) and `tool/_tool_call.py` (ToolCallError).

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value};

use super::agent::{AgentFormat, Described};
use super::agent_run::{content_text, Step, Unknown};
use super::common::{
    describe_json_error, Place, SessionFilter, SourceError, SourceRead, SourceWarning,
};
use super::format::{Evidence, Sniff};
use super::tool::{arguments, KindRule, KindTable, ToolKind};
use crate::entry::{Entry, Params, Session};

/// `metadata.source` of every entry read from an inspect_ai log, and the format's name.
pub const SOURCE: &str = "inspect-ai";

/// The most bytes one member of an `.eval` zip may unpack to. A sample of a long agent run
/// with screenshots is tens of MB; a member past this is refused as a zip bomb.
pub(crate) const MEMBER_CAP: u64 = 1 << 30;
/// The most bytes all members of an `.eval` zip may unpack to, together.
pub(crate) const TOTAL_CAP: u64 = 8 << 30;

/// The event types inspect_ai writes that make no entry here (`inspect_ai/event/*.py`).
const QUIET_EVENTS: &[&str] = &[
    "sample_init",
    "sample_limit",
    "sandbox",
    "state",
    "store",
    "approval",
    "input",
    "score",
    "score_edit",
    "logger",
    "info",
    "span_begin",
    "span_end",
    "step",
    "subtask",
    "compaction",
];

/// Tool kinds of inspect_ai's standard tools (`inspect_ai/tool/_tools/`).
pub(crate) static KINDS: KindTable = KindTable {
    agent: "inspect_ai",
    tools: &[
        ("bash", KindRule::Is(ToolKind::Shell)),
        ("bash_session", KindRule::Is(ToolKind::Shell)),
        ("python", KindRule::Is(ToolKind::Shell)),
        (
            "text_editor",
            KindRule::ByArg {
                key: "command",
                cases: &[
                    ("view", ToolKind::Read),
                    ("create", ToolKind::Write),
                    ("str_replace", ToolKind::Edit),
                    ("insert", ToolKind::Edit),
                    ("undo_edit", ToolKind::Edit),
                ],
                otherwise: ToolKind::Other,
            },
        ),
        ("web_search", KindRule::Is(ToolKind::Web)),
        ("web_browser_go", KindRule::Is(ToolKind::Web)),
        ("web_browser_click", KindRule::Is(ToolKind::Web)),
        ("web_browser_scroll", KindRule::Is(ToolKind::Web)),
        ("web_browser_type", KindRule::Is(ToolKind::Web)),
        ("web_browser_type_submit", KindRule::Is(ToolKind::Web)),
        ("web_browser_back", KindRule::Is(ToolKind::Web)),
        ("web_browser_forward", KindRule::Is(ToolKind::Web)),
        ("web_browser_refresh", KindRule::Is(ToolKind::Web)),
        ("update_plan", KindRule::Is(ToolKind::Plan)),
        ("todo_write", KindRule::Is(ToolKind::Plan)),
        ("think", KindRule::Is(ToolKind::Other)),
        ("submit", KindRule::Is(ToolKind::Other)),
    ],
};

/// An inspect_ai eval log: `.eval` (a zip) or `.json`.
#[derive(Debug, Clone, Copy, Default)]
pub struct InspectAi;

impl AgentFormat for InspectAi {
    const DESCRIBED: Described = Described {
        name: SOURCE,
        noun: "an inspect_ai eval log",
        about: "An inspect_ai eval log (`.eval` zip or `.json`)",
        document_keys: Some("`version` and `eval` (inspect_ai)"),
        extensions: &["eval", "json"],
    };

    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        match evidence {
            // A zip: the only zipped format grade reads.
            Evidence::Head(head) if head.starts_with(b"PK\x03\x04") => Sniff::Certain,
            Evidence::Object(map) if is_json_log(map) => Sniff::Certain,
            _ => Sniff::No,
        }
    }

    fn read_bytes(
        &self,
        path: &Path,
        bytes: &[u8],
        filter: &SessionFilter,
    ) -> Result<SourceRead, SourceError> {
        if bytes.starts_with(b"PK\x03\x04") {
            read_eval_zip(path, bytes, filter, MEMBER_CAP, TOTAL_CAP)
        } else {
            read_json_log(path, bytes, filter)
        }
    }
}

/// Whether a JSON document is an inspect_ai log: a numeric `version` and an `eval` object
/// naming its task.
fn is_json_log(map: &Map<String, Value>) -> bool {
    map.get("version").is_some_and(Value::is_number)
        && map
            .get("eval")
            .and_then(Value::as_object)
            .is_some_and(|eval| eval.contains_key("task") && eval.contains_key("model"))
}

fn format_error(path: &Path, message: String) -> SourceError {
    SourceError::Format {
        path: path.to_owned(),
        message,
    }
}

fn parse_json(path: &Path, what: &str, bytes: &[u8]) -> Result<Value, SourceError> {
    crate::json::from_slice_lenient::<Value>(bytes)
        .map(|(value, _)| value)
        .map_err(|err| {
            format_error(
                path,
                format!(
                    "{what} is not valid JSON: {}",
                    describe_json_error(&err, bytes)
                ),
            )
        })
}

fn read_json_log(
    path: &Path,
    bytes: &[u8],
    filter: &SessionFilter,
) -> Result<SourceRead, SourceError> {
    let doc = parse_json(path, "the log", bytes)?;
    let Value::Object(mut log) = doc else {
        return Err(format_error(
            path,
            "is not an inspect_ai log: it is not a JSON object".to_owned(),
        ));
    };
    if !is_json_log(&log) {
        return Err(format_error(
            path,
            "is not an inspect_ai log: it has no numeric `version` and `eval` object with `task` and `model`".to_owned(),
        ));
    }
    let eval = log.remove("eval").unwrap_or_default();
    let samples = match log.remove("samples") {
        Some(Value::Array(samples)) => samples,
        None | Some(Value::Null) => Vec::new(),
        Some(other) => {
            return Err(format_error(
                path,
                format!(
                    "`samples` is {}, not a list",
                    super::common::json_kind(&other)
                ),
            ))
        }
    };
    let mut reader = LogReader::new(path, &eval);
    for (i, sample) in samples.into_iter().enumerate() {
        reader.sample(&format!("samples[{i}]"), sample, filter);
    }
    Ok(reader.finish())
}

/// Reads an `.eval` zip, refusing a member that unpacks past `member_cap` bytes or members
/// that together pass `total_cap` (a zip bomb) with an error naming the file and the cap.
pub(crate) fn read_eval_zip(
    path: &Path,
    bytes: &[u8],
    filter: &SessionFilter,
    member_cap: u64,
    total_cap: u64,
) -> Result<SourceRead, SourceError> {
    let bad_zip = |e: zip::result::ZipError| {
        format_error(
            path,
            format!("is not an inspect_ai `.eval` log: not a zip grade can read ({e})"),
        )
    };
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(bad_zip)?;
    let mut unpacked = 0u64;
    let mut member = |archive: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>,
                      name: &str|
     -> Result<Option<Vec<u8>>, SourceError> {
        let mut file = match archive.by_name(name) {
            Ok(file) => file,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(bad_zip(e)),
        };
        let cap = member_cap.min(total_cap.saturating_sub(unpacked));
        let refused = || {
            format_error(
                path,
                format!(
                    "member `{name}` unpacks to more than {} (the cap on {}): refused as a zip bomb",
                    bytes_phrase(cap),
                    if cap == member_cap {
                        "one member of an `.eval` log"
                    } else {
                        "all members of an `.eval` log together"
                    }
                ),
            )
        };
        // The size a zip declares can lie; the bytes read are counted too.
        if file.size() > cap {
            return Err(refused());
        }
        let mut out = Vec::with_capacity(file.size() as usize);
        (&mut file)
            .take(cap + 1)
            .read_to_end(&mut out)
            .map_err(|e| format_error(path, format!("member `{name}` cannot be unpacked: {e}")))?;
        if out.len() as u64 > cap {
            return Err(refused());
        }
        unpacked += out.len() as u64;
        Ok(Some(out))
    };
    // The header, or the journal's start record of a log still being written.
    let header = match member(&mut archive, "header.json")? {
        Some(bytes) => parse_json(path, "`header.json`", &bytes)?,
        None => match member(&mut archive, "_journal/start.json")? {
            Some(bytes) => parse_json(path, "`_journal/start.json`", &bytes)?,
            None => {
                return Err(format_error(
                    path,
                    "is a zip without `header.json`: not an inspect_ai `.eval` log".to_owned(),
                ))
            }
        },
    };
    let eval = header.get("eval").cloned().unwrap_or_default();
    let mut names: Vec<(SampleKey, String)> = archive
        .file_names()
        .filter_map(|name| sample_key(name).map(|key| (key, name.to_owned())))
        .collect();
    names.sort();
    let mut reader = LogReader::new(path, &eval);
    for (_, name) in names {
        let Some(bytes) = member(&mut archive, &name)? else {
            continue;
        };
        let sample = parse_json(path, &format!("`{name}`"), &bytes)?;
        reader.sample(&name, sample, filter);
    }
    Ok(reader.finish())
}

fn bytes_phrase(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n => format!("{n} bytes"),
    }
}

/// How samples sort: by sample id (numbers as numbers), then epoch.
type SampleKey = (u64, String, u64);

/// The key of a `samples/<id>_epoch_<n>.json` member, `None` for any other member.
fn sample_key(name: &str) -> Option<SampleKey> {
    let stem = name.strip_prefix("samples/")?.strip_suffix(".json")?;
    let (id, epoch) = stem.rsplit_once("_epoch_")?;
    let epoch = epoch.parse().ok()?;
    Some((id.parse().unwrap_or(u64::MAX), id.to_owned(), epoch))
}

/// Reads the samples of one log into sessions.
struct LogReader<'p> {
    path: &'p Path,
    /// What a session id starts with: the eval's `task_id`, else its `run_id`, else the file
    /// name, so that samples of two logs are not one session.
    prefix: String,
    /// When the eval was created: the time of entries read from messages, which have none.
    created: String,
    sessions: Vec<Session>,
    warnings: Vec<SourceWarning>,
    unknown: Unknown,
}

impl<'p> LogReader<'p> {
    fn new(path: &'p Path, eval: &Value) -> Self {
        let text = |key: &str| eval.get(key).and_then(Value::as_str).map(str::to_owned);
        let prefix = text("task_id")
            .or_else(|| text("run_id"))
            .unwrap_or_else(|| {
                path.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
        LogReader {
            path,
            prefix,
            created: text("created").unwrap_or_default(),
            sessions: Vec::new(),
            warnings: Vec::new(),
            unknown: Unknown::default(),
        }
    }

    fn warn(&mut self, place: &str, message: String) {
        self.warnings.push(SourceWarning {
            path: self.path.to_owned(),
            place: Place::Item(place.to_owned()),
            message,
        });
    }

    fn sample(&mut self, place: &str, sample: Value, filter: &SessionFilter) {
        let Value::Object(sample) = sample else {
            self.warn(place, "skipped: the sample is not a JSON object".to_owned());
            return;
        };
        let id = match sample.get("id") {
            Some(Value::String(id)) => id.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => {
                self.warn(place, "skipped: the sample has no `id`".to_owned());
                return;
            }
        };
        let epoch = sample.get("epoch").and_then(Value::as_u64).unwrap_or(1);
        let session_id = format!("{}/{id}/{epoch}", self.prefix);
        if !filter.wants(&session_id) {
            return;
        }
        let mut base = Map::new();
        base.insert("sampleId".into(), Value::String(id));
        base.insert("epoch".into(), epoch.into());
        let mut session = Session {
            id: session_id,
            ..Session::default()
        };
        // Logs of inspect_ai before 0.3.50 or so keep the events in `transcript.events`.
        let events = sample
            .get("events")
            .or_else(|| sample.get("transcript").and_then(|t| t.get("events")))
            .and_then(Value::as_array);
        let before = self.unknown_total();
        match events.filter(|events| !events.is_empty()) {
            Some(events) => self.read_events(&mut session, &sample, events, &base, place),
            None => self.read_messages(&mut session, &sample, &base, place),
        }
        if let Some(error) = sample.get("error").filter(|e| !e.is_null()) {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            let (timestamp, instant) = session
                .entries
                .last()
                .map(|e| (e.timestamp.to_string(), e.instant))
                .unwrap_or_else(|| self.created_time());
            let step = self.step(&session.id, &timestamp, instant);
            session.entries.push(step.entry(
                "sample",
                "error",
                Params::new(),
                Some(message),
                0.0,
                base.clone(),
            ));
        }
        session.skipped_lines += self.unknown_total() - before;
        self.sessions.push(session);
    }

    fn unknown_total(&self) -> u64 {
        self.unknown.total()
    }

    fn created_time(&self) -> (String, i64) {
        let instant = crate::time::parse_timestamp(&self.created).unwrap_or(0);
        (self.created.clone(), instant)
    }

    fn step<'a>(&self, session: &'a str, timestamp: &'a str, instant: i64) -> Step<'a> {
        Step {
            session,
            timestamp,
            instant,
            source: SOURCE,
        }
    }

    fn read_events(
        &mut self,
        session: &mut Session,
        sample: &Map<String, Value>,
        events: &[Value],
        base: &Map<String, Value>,
        place: &str,
    ) {
        let mut said_input = false;
        for (i, event) in events.iter().enumerate() {
            let Some(kind) = event.get("event").and_then(Value::as_str) else {
                self.unknown.add("(none)");
                continue;
            };
            let Some(timestamp) = event.get("timestamp").and_then(Value::as_str) else {
                self.warn(
                    &format!("{place}: events[{i}]"),
                    "skipped: the event has no `timestamp`".to_owned(),
                );
                session.skipped_lines += 1;
                continue;
            };
            let instant = match crate::time::parse_timestamp(timestamp) {
                Ok(instant) => instant,
                Err(e) => {
                    self.warn(
                        &format!("{place}: events[{i}]"),
                        format!(
                            "skipped: `timestamp` `{timestamp}` is not a timestamp: {}",
                            e.reason
                        ),
                    );
                    session.skipped_lines += 1;
                    continue;
                }
            };
            let step = self.step(&session.id, timestamp, instant);
            match kind {
                "sample_init" if !said_input => {
                    said_input = true;
                    let text = attached(sample, input_text(sample.get("input")));
                    if !text.is_empty() {
                        session
                            .entries
                            .push(step.message("user", &text, base.clone()));
                    }
                }
                "model" => {
                    let message = event
                        .get("output")
                        .and_then(|o| o.get("choices"))
                        .and_then(|c| c.get(0))
                        .and_then(|c| c.get("message"));
                    let text =
                        attached(sample, content_text(message.and_then(|m| m.get("content"))));
                    let mut extra = base.clone();
                    if let Some(model) = event.get("model").filter(|m| m.is_string()) {
                        extra.insert("model".into(), model.clone());
                    }
                    let error = event.get("error").filter(|e| !e.is_null()).map(error_text);
                    if error.is_some() {
                        session.entries.push(step.entry(
                            "model",
                            "error",
                            Params::new(),
                            error,
                            0.0,
                            extra,
                        ));
                    } else if !text.trim().is_empty() {
                        session
                            .entries
                            .push(step.message("assistant", &text, extra));
                    }
                }
                "tool" => {
                    let name = event.get("function").and_then(Value::as_str).unwrap_or("");
                    let (args, note) = arguments(event.get("arguments"));
                    if let Some(note) = note {
                        self.warn(
                            &format!("{place}: events[{i}]"),
                            format!("the call of `{name}`: {note}"),
                        );
                    }
                    let error = event.get("error").filter(|e| !e.is_null()).map(error_text);
                    let mut extra = base.clone();
                    if let Some(id) = event.get("id").filter(|v| v.is_string()) {
                        extra.insert("toolCallId".into(), id.clone());
                    }
                    let duration = event
                        .get("working_time")
                        .and_then(Value::as_f64)
                        .map_or(0.0, |s| s * 1000.0);
                    session
                        .entries
                        .push(step.tool(&KINDS, name, args, error, duration, extra));
                }
                "error" => {
                    let error = event.get("error").map(error_text);
                    session.entries.push(step.entry(
                        "sample",
                        "error",
                        Params::new(),
                        error.or_else(|| Some("error".to_owned())),
                        0.0,
                        base.clone(),
                    ));
                }
                known if QUIET_EVENTS.contains(&known) => {}
                other => self.unknown.add(other),
            }
        }
        // Events are written as they end; a tool event's time is when it started.
        session.entries.sort_by_key(|e| e.instant);
    }

    fn read_messages(
        &mut self,
        session: &mut Session,
        sample: &Map<String, Value>,
        base: &Map<String, Value>,
        place: &str,
    ) {
        let (timestamp, instant) = self.created_time();
        let step = self.step(&session.id, &timestamp, instant);
        let Some(messages) = sample.get("messages").and_then(Value::as_array) else {
            return;
        };
        // Each call's entry, by its id, for the `tool` message that answers it.
        let mut calls: HashMap<String, usize> = HashMap::new();
        let mut notes = Vec::new();
        for (i, message) in messages.iter().enumerate() {
            let role = message.get("role").and_then(Value::as_str).unwrap_or("");
            match role {
                "user" | "assistant" => {
                    let text = attached(sample, content_text(message.get("content")));
                    if !text.trim().is_empty() {
                        session
                            .entries
                            .push(step.message(role, &text, base.clone()));
                    }
                    let tool_calls = message.get("tool_calls").and_then(Value::as_array);
                    for call in tool_calls.into_iter().flatten() {
                        let name = call.get("function").and_then(Value::as_str).unwrap_or("");
                        let (args, note) = arguments(call.get("arguments"));
                        if let Some(note) = note {
                            notes.push((i, format!("the call of `{name}`: {note}")));
                        }
                        let mut extra = base.clone();
                        if let Some(id) = call.get("id").and_then(Value::as_str) {
                            extra.insert("toolCallId".into(), Value::String(id.to_owned()));
                            calls.insert(id.to_owned(), session.entries.len());
                        }
                        session
                            .entries
                            .push(step.tool(&KINDS, name, args, None, 0.0, extra));
                    }
                }
                "tool" => {
                    let error = message
                        .get("error")
                        .filter(|e| !e.is_null())
                        .map(error_text);
                    let id = message.get("tool_call_id").and_then(Value::as_str);
                    match id.and_then(|id| calls.remove(id)) {
                        Some(at) => {
                            if let Some(error) = error {
                                let entry: &mut Entry = &mut session.entries[at];
                                entry.result.success = false;
                                entry.result.exit_code = 1;
                                entry.error = Some(error.into());
                            }
                        }
                        // A reply whose call is not in the messages (a log written with
                        // the assistant's turns left out): the call is the reply's.
                        None => {
                            let name = message
                                .get("function")
                                .and_then(Value::as_str)
                                .unwrap_or("");
                            let mut extra = base.clone();
                            if let Some(id) = id {
                                extra.insert("toolCallId".into(), Value::String(id.to_owned()));
                            }
                            session.entries.push(step.tool(
                                &KINDS,
                                name,
                                Map::new(),
                                error,
                                0.0,
                                extra,
                            ));
                        }
                    }
                }
                // The system prompt is the harness's, not the agent's doing.
                "system" => {}
                other => self.unknown.add(&format!("message role {other}")),
            }
        }
        for (i, note) in notes {
            self.warn(&format!("{place}: messages[{i}]"), note);
        }
    }

    fn finish(mut self) -> SourceRead {
        let mut warnings = std::mem::take(&mut self.warnings);
        warnings.extend(std::mem::take(&mut self.unknown).warnings(self.path, "events"));
        SourceRead {
            sessions: self.sessions,
            warnings,
            skipped_lines: 0,
            skipped_unattributed: 0,
        }
    }
}

/// A text the log keeps once among the sample's `attachments` (`attachment://<hash>`, as
/// inspect_ai writes long texts), looked up; any other text as it is.
fn attached(sample: &Map<String, Value>, text: String) -> String {
    // `tc://` and `transcript.content` are the older logs' names for the same store.
    let (key, store) = match (
        text.strip_prefix("attachment://"),
        text.strip_prefix("tc://"),
    ) {
        (Some(key), _) => (key, sample.get("attachments")),
        (None, Some(key)) => (key, sample.get("transcript").and_then(|t| t.get("content"))),
        (None, None) => return text,
    };
    store
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
        .map_or(text.clone(), str::to_owned)
}

/// The text of a sample's `input`: a string, or its messages' texts.
fn input_text(input: Option<&Value>) -> String {
    match input {
        Some(Value::Array(messages)) => messages
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) != Some("system"))
            .map(|m| content_text(m.get("content")))
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        other => content_text(other),
    }
}

/// A `ToolCallError` (`{"type": "timeout", "message": …}`) or any error value, as text.
fn error_text(error: &Value) -> String {
    match error {
        Value::String(text) => text.clone(),
        Value::Object(map) => {
            let kind = map.get("type").and_then(Value::as_str);
            let message = map.get("message").and_then(Value::as_str);
            match (kind, message) {
                (Some(kind), Some(message)) => format!("{kind}: {message}"),
                (Some(text), None) | (None, Some(text)) => text.to_owned(),
                (None, None) => error.to_string(),
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn zip_of(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, bytes) in members {
            out.start_file(*name, options).unwrap();
            out.write_all(bytes).unwrap();
        }
        out.finish().unwrap().into_inner()
    }

    const HEADER: &[u8] =
        br#"{"version": 2, "eval": {"task": "t", "task_id": "T", "model": "m", "created": "2026-01-01T00:00:00+00:00"}}"#;

    #[test]
    fn a_zip_bomb_is_refused_naming_the_file_the_member_and_the_cap() {
        let zeros = vec![b' '; 1 << 20];
        let bomb = zip_of(&[("header.json", HEADER), ("samples/1_epoch_1.json", &zeros)]);
        assert!(bomb.len() < 20_000, "1 MiB of spaces packs small");
        let path = Path::new("bomb.eval");
        let err = read_eval_zip(path, &bomb, &SessionFilter::All, 1 << 16, 1 << 30)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "`bomb.eval`: member `samples/1_epoch_1.json` unpacks to more than 65536 bytes (the cap on one member of an `.eval` log): refused as a zip bomb"
        );
        let err = read_eval_zip(path, &bomb, &SessionFilter::All, 1 << 30, 1 << 19)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("(the cap on all members of an `.eval` log together)"),
            "{err}"
        );
    }

    #[test]
    fn an_event_of_a_type_it_does_not_know_is_skipped_counted_and_said() {
        let sample = br#"{"id": 1, "epoch": 2, "input": "hi", "events": [
            {"event": "sample_init", "timestamp": "2026-01-01T00:00:01Z"},
            {"event": "telepathy", "timestamp": "2026-01-01T00:00:02Z"},
            {"event": "tool", "timestamp": "2026-01-01T00:00:03Z", "function": "bash", "arguments": "{\"cmd\": \"ls\"}", "error": {"type": "timeout", "message": "slow"}}
        ]}"#;
        let log = zip_of(&[("header.json", HEADER), ("samples/1_epoch_2.json", sample)]);
        let read = read_eval_zip(
            Path::new("a.eval"),
            &log,
            &SessionFilter::All,
            MEMBER_CAP,
            TOTAL_CAP,
        )
        .unwrap();
        let session = &read.sessions[0];
        assert_eq!(session.id, "T/1/2");
        assert_eq!(session.skipped_lines, 1);
        assert_eq!(
            read.warnings[0].to_string(),
            "a.eval: skipped 1 events of type `telepathy`, which this reader does not know (counted in the session's skipped lines)"
        );
        let call = &session.entries[1];
        assert_eq!(
            (call.domain.as_str(), call.operation.as_str()),
            ("tool", "bash")
        );
        assert_eq!(call.params.get("cmd"), Some(&Value::from("ls")));
        assert!(!call.result.success);
        assert_eq!(call.error.as_deref(), Some("timeout: slow"));
        assert_eq!(
            call.metadata.get("kind").map(|k| k.to_json()),
            Some(Value::from("shell"))
        );
    }

    #[test]
    fn a_zip_that_is_not_an_eval_log_says_so() {
        let other = zip_of(&[("readme.txt", b"hi")]);
        let err = read_eval_zip(
            Path::new("x.eval"),
            &other,
            &SessionFilter::All,
            MEMBER_CAP,
            TOTAL_CAP,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "`x.eval`: is a zip without `header.json`: not an inspect_ai `.eval` log"
        );
    }
}
