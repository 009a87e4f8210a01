//! From the records of one transcript file to its entries, in named steps: the records that
//! can be used, the tool results by call id, the subagent chains of older transcripts, then
//! each record's entries (a user prompt, or an assistant's text and tool calls).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::{Map, Value};

use super::{Key, Named, Pending, Record, ToolResult, SOURCE};
use crate::entry::{Entry, Metadata, Outcome, Text};
use crate::source::common::{described, json_kind, not_an_object, timestamp_field, SourceWarning};
use crate::time::{parse_timestamp, InstantMs};

mod ids;
mod results;

use ids::*;
pub(super) use ids::{PLACE_MARK, UUID_MARK};
use results::*;

/// A record with a readable message, its instant and its timestamp as written.
type Usable = (Record, InstantMs, String);

/// Warnings about the file being read, and the records that lost something by session.
struct Warn<'w> {
    path: &'w Path,
    /// Each with the line (or `loglines` item) it is about: the steps that find them take
    /// the file in turn, and the file's warnings are put back in line order (`super::group`).
    warnings: Vec<(u64, SourceWarning)>,
    /// The lines (or `loglines` items) that lost a record or a block, counted once each.
    lost_lines: HashSet<u64>,
    /// Per session, how many of them were its own.
    lost: Vec<(String, u64)>,
}

impl Warn<'_> {
    /// A warning that loses nothing (a result read without its timestamp).
    fn at(&mut self, record: &Record, message: String) {
        self.warnings.push((
            record.line,
            SourceWarning {
                path: self.path.to_owned(),
                place: record.place.clone(),
                message,
            },
        ));
    }

    /// A warning about something skipped in `record` of `session`: the session's grade may
    /// miss it, and says so (once per line).
    fn skipped(&mut self, record: &Record, session: &str, message: String) {
        self.at(record, message);
        if self.lost_lines.insert(record.line) {
            match self.lost.iter_mut().find(|(s, _)| s == session) {
                Some((_, n)) => *n += 1,
                None => self.lost.push((session.to_owned(), 1)),
            }
        }
    }
}

/// The entries of one file and what it lost.
pub(super) struct FileEntries {
    /// The file.
    pub(super) path: std::path::PathBuf,
    pub(super) pending: Vec<Pending>,
    /// Per session, the lines of the file that were skipped in whole or part: lines that
    /// are not JSON count for the file's session.
    pub(super) lost: Vec<(String, u64)>,
    /// The file's warnings, each with its line, in the order they were found.
    pub(super) warnings: Vec<(u64, SourceWarning)>,
}

/// The entries of one file, in record order, with tool outcomes filled in. `damaged` is the
/// number of lines of the file that were not JSON, which `warnings` (the file's so far)
/// report.
pub(super) fn entries_of(
    path: &Path,
    records: Vec<Record>,
    damaged: u64,
    warnings: Vec<(u64, SourceWarning)>,
) -> FileEntries {
    let mut warn = Warn {
        path,
        warnings,
        lost_lines: HashSet::new(),
        lost: Vec::new(),
    };
    let file = FileContext {
        session: file_session(path, &records),
        text: path.display().to_string(),
    };
    if damaged > 0 {
        warn.lost.push((file.session.clone(), damaged));
    }
    // Results first, from every record: a result's record without a usable timestamp still
    // tells whether the call failed.
    let results = tool_results(&records, &file.session, &mut warn);
    let usable = usable_records(records, &file.session, &mut warn);
    let chains = sidechain_chains(&usable);
    let mut out = Vec::new();
    for (record, instant, timestamp) in &usable {
        let Value::Object(map) = &record.value else {
            continue;
        };
        if let Err(value) = sidechain_of(map) {
            warn.at(
                record,
                format!(
                    "field `isSidechain` is {}, not true or false: the record is read as the main agent's, not a subagent's",
                    described(value)
                ),
            );
        }
        // `""` names no session, so reading the record as its file's session's cannot put it
        // in another session's name, as a `sessionId` that is not text could; but Claude Code
        // never writes it, and the session a grade names must not be chosen in silence.
        if map.get("sessionId").and_then(Value::as_str) == Some("") {
            warn.at(
                record,
                format!(
                    "the record's `sessionId` is empty: it is read as its file's session, `{}`",
                    file.session
                ),
            );
        }
        if let Some(why) = odd_uuid(map) {
            warn.at(record, why);
        }
        if let Some(why) = odd_agent_id(map) {
            warn.at(record, why);
        }
        if let Some(why) = odd_parent_uuid(map) {
            warn.at(record, why);
        }
        if let Some(why) = odd_message_id(map) {
            warn.at(record, why);
        }
        let context = RecordContext::new(&file, &chains, record, map, *instant, timestamp);
        record_entries(&context, &results, &mut warn, &mut out);
    }
    FileEntries {
        path: path.to_owned(),
        pending: out,
        lost: warn.lost,
        warnings: warn.warnings,
    }
}

/// What every record of the file shares.
struct FileContext {
    /// The session of records without a `sessionId`: the file's first one, or its name.
    session: String,
    /// The file, as entries name it (`metadata.file`).
    text: String,
}

/// The session id of the file's first record that has one; else the file's name.
fn file_session(path: &Path, records: &[Record]) -> String {
    records
        .iter()
        .find_map(|r| session_named(&r.value).map(str::to_owned))
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string())
        })
}

/// The session a record names by its `sessionId`, when it names one: absent, `null`, text
/// that is empty, and values that are not text name none (the last are skipped, see
/// [`usable_record`]).
fn session_named(record: &Value) -> Option<&str> {
    record
        .get("sessionId")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
}

/// The user and assistant records with a readable message, timestamp and session; the
/// others are skipped with a warning, and records of other types silently. A record that
/// holds only tool results and lacks a readable timestamp or session loses nothing (its
/// results were read): it is reported, not counted as skipped.
fn usable_records(records: Vec<Record>, file_session: &str, warn: &mut Warn<'_>) -> Vec<Usable> {
    let mut usable = Vec::with_capacity(records.len());
    for record in records {
        match usable_record(&record) {
            Ok(Some((instant, timestamp))) => usable.push((record, instant, timestamp)),
            Ok(None) => {}
            Err(Unusable::NoTime(why)) if only_results(&record.value) => warn.at(
                &record,
                format!("{why}: its tool results count, without a duration"),
            ),
            // A result answers its call by id, whatever session its own record names.
            Err(Unusable::NoSession(why)) if only_results(&record.value) => {
                warn.at(&record, format!("{why}: its tool results count"));
            }
            Err(
                Unusable::NoTime(message)
                | Unusable::NoSession(message)
                | Unusable::Broken(message),
            ) => {
                let session = session_named(&record.value)
                    .unwrap_or(file_session)
                    .to_owned();
                warn.skipped(&record, &session, format!("skipped: {message}"));
            }
        }
    }
    usable
}

/// Why a record is not usable.
#[derive(Debug, PartialEq)]
enum Unusable {
    /// Its timestamp is missing or unreadable; the rest may be.
    NoTime(String),
    /// Its `sessionId` is there but not text; the rest may be.
    NoSession(String),
    /// Anything else.
    Broken(String),
}

/// Whether a record's message is nothing but (at least one) tool results.
fn only_results(record: &Value) -> bool {
    match record.pointer("/message/content") {
        Some(Value::Array(blocks)) => {
            !blocks.is_empty()
                && blocks
                    .iter()
                    .all(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        }
        _ => false,
    }
}

/// A record's instant and timestamp when it is usable; `None` for a type this reader does
/// not use; why it was skipped otherwise.
fn usable_record(record: &Record) -> Result<Option<(InstantMs, String)>, Unusable> {
    use Unusable::Broken;
    let Value::Object(map) = &record.value else {
        return Err(Broken(format!(
            "a JSON {}, not a transcript record",
            json_kind(&record.value)
        )));
    };
    let kind = match map.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        None | Some(Value::Null) => return Err(Broken("the record has no `type`".to_owned())),
        Some(other) => {
            return Err(Broken(format!(
                "the record's `type` is a JSON {}, not text",
                json_kind(other)
            )))
        }
    };
    if kind != "user" && kind != "assistant" {
        return Ok(None);
    }
    let Some(message) = map.get("message") else {
        return Err(Broken(format!("the `{kind}` record has no `message`")));
    };
    let Some(message) = message.as_object() else {
        return Err(Broken(format!("`message` is {}", not_an_object(message))));
    };
    match message.get("content") {
        Some(Value::String(_) | Value::Array(_)) => {}
        Some(other) => {
            return Err(Broken(format!(
                "`message.content` is a JSON {}, not text or blocks",
                json_kind(other)
            )))
        }
        None => return Err(Broken("`message` has no `content`".to_owned())),
    }
    let (timestamp, instant) = match timestamp_field(map, "timestamp") {
        Ok(Some(read)) => read,
        Ok(None) => return Err(Unusable::NoTime("the record has no `timestamp`".to_owned())),
        Err(why) => return Err(Unusable::NoTime(why)),
    };
    // Absent (the `loglines` wrapper writes none) or `null` (an unset optional field), the
    // record is its file's session's. Any other value names a session that cannot be read:
    // read into the file's session, the record could be graded in another session's name
    // without a trace in the result, where skipped it counts as a line the grade may miss.
    match map.get("sessionId") {
        None | Some(Value::Null | Value::String(_)) => Ok(Some((instant, timestamp.to_owned()))),
        Some(other) => Err(Unusable::NoSession(format!(
            "the record's `sessionId` is a JSON {}, not text",
            json_kind(other)
        ))),
    }
}

/// What every entry of one record shares.
struct RecordContext<'a> {
    record: &'a Record,
    map: &'a Map<String, Value>,
    file_text: &'a str,
    instant: InstantMs,
    timestamp: &'a str,
    session_id: String,
    /// The record's `uuid` (see [`id_text`]).
    uuid: Option<Cow<'a, str>>,
    message: Option<&'a Map<String, Value>>,
    model: Option<&'a str>,
    message_id: String,
    message_named: Named,
    /// The subagent whose record it is (its `agentId`, else its chain's name), and where
    /// that name comes from.
    agent: Option<(Cow<'a, str>, Named)>,
    sidechain: bool,
}

impl<'a> RecordContext<'a> {
    fn new(
        file: &'a FileContext,
        chains: &'a HashMap<String, String>,
        record: &'a Record,
        map: &'a Map<String, Value>,
        instant: InstantMs,
        timestamp: &'a str,
    ) -> Self {
        // Records without a `sessionId` (or with `null` or `""`) belong to the file's
        // session; one that names a session other than by text was not usable.
        let session_id =
            session_named(&record.value).map_or_else(|| file.session.clone(), str::to_owned);
        let uuid = id_text(map.get("uuid")).ok().flatten();
        let message = map.get("message").and_then(Value::as_object);
        let model = message.and_then(|m| m.get("model")).and_then(Value::as_str);
        // Lines without a message id (older and synthetic transcripts) stand for themselves.
        let (message_id, message_named) =
            message_id(message, uuid.as_deref(), &file.text, record.line);
        let sidechain = sidechain_of(map).unwrap_or(false);
        let agent = match id_text(map.get("agentId")) {
            Ok(Some(agent)) => Some((agent, Named::Written)),
            _ => uuid
                .as_deref()
                .and_then(|u| chains.get(u))
                .map(|chain| (Cow::Borrowed(chain.as_str()), Named::ByUuid)),
        };
        RecordContext {
            record,
            map,
            file_text: &file.text,
            instant,
            timestamp,
            session_id,
            uuid,
            message,
            model,
            message_id,
            message_named,
            agent,
            sidechain,
        }
    }

    /// `entry`, made from this record, with what `super::group` needs: its `key`, whether it
    /// is a call whose result was found, and where its ids come from.
    fn pending(&self, key: Option<Key>, resolved: bool, entry: Entry) -> Pending {
        let message_named = entry
            .metadata
            .extra
            .contains_key("messageId")
            .then_some(self.message_named);
        Pending {
            key,
            message_named,
            agent_named: self.agent.as_ref().map(|(_, named)| *named),
            resolved,
            place: self.record.place.clone(),
            line: self.record.line,
            entry,
        }
    }

    /// The metadata every entry of the record carries: sidechain, agent, uuid, cwd, place.
    fn base(&self) -> Map<String, Value> {
        let mut extra = Map::new();
        extra.insert("isSidechain".into(), Value::Bool(self.sidechain));
        if let Some((agent, _)) = &self.agent {
            extra.insert("agentId".into(), agent.as_ref().into());
        }
        if let Some(uuid) = &self.uuid {
            extra.insert("uuid".into(), uuid.as_ref().into());
        }
        if let Some(cwd) = self.map.get("cwd").and_then(Value::as_str) {
            extra.insert("cwd".into(), cwd.into());
        }
        extra.insert("file".into(), self.file_text.into());
        extra.insert("line".into(), self.record.line.into());
        extra
    }

    /// [`RecordContext::base`] with the assistant message's id and model.
    fn assistant_base(&self) -> Map<String, Value> {
        let mut extra = self.base();
        extra.insert("messageId".into(), self.message_id.as_str().into());
        if let Some(model) = self.model {
            extra.insert("model".into(), model.into());
        }
        extra
    }

    fn entry(
        &self,
        domain: &str,
        operation: &str,
        params: Map<String, Value>,
        extra: Map<String, Value>,
        outcome: Outcome,
        error: Option<String>,
    ) -> Entry {
        Entry {
            timestamp: self.timestamp.into(),
            instant: self.instant,
            session_id: self.session_id.as_str().into(),
            domain: domain.into(),
            operation: operation.into(),
            params: params.into(),
            result: outcome,
            metadata: Metadata {
                extra,
                ..Metadata::with_source(SOURCE)
            },
            error: error.map(Text::from),
            origin: crate::entry::Origin::UNKNOWN,
        }
    }

    /// A `message` entry whose `params.text` is `text`.
    fn message_entry(&self, operation: &str, text: Value, extra: Map<String, Value>) -> Entry {
        let mut params = Map::new();
        params.insert("text".into(), text);
        self.entry("message", operation, params, extra, ok(), None)
    }
}

fn ok() -> Outcome {
    Outcome {
        success: true,
        exit_code: 0,
        duration: 0.0,
    }
}

/// The entries of one usable record, appended to `out`.
fn record_entries(
    context: &RecordContext<'_>,
    results: &HashMap<String, ToolResult>,
    warn: &mut Warn<'_>,
    out: &mut Vec<Pending>,
) {
    let kind = context
        .map
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let content = context.message.and_then(|m| m.get("content"));
    if kind == "user" {
        if let Some(pending) = user_entry(context, content, warn) {
            out.push(pending);
        }
        return;
    }
    // An assistant record: text and tool calls, in block order.
    let blocks: &[Value] = match content {
        Some(Value::Array(blocks)) => blocks,
        Some(Value::String(s)) if !s.trim().is_empty() => {
            out.push(context.pending(
                context.uuid.as_ref().map(|u| Key::Record(u.to_string())),
                false,
                context.message_entry(
                    "assistant",
                    Value::String(s.clone()),
                    context.assistant_base(),
                ),
            ));
            return;
        }
        _ => return,
    };
    for (i, block) in blocks.iter().enumerate() {
        let Value::Object(b) = block else {
            warn.skipped(
                context.record,
                &context.session_id,
                format!("content block {i} skipped: {}", not_an_object(block)),
            );
            continue;
        };
        match b.get("type").and_then(Value::as_str) {
            Some("text") => {
                let Some(text) = block_text(context, b, i, warn).filter(|t| !t.trim().is_empty())
                else {
                    continue;
                };
                out.push(context.pending(
                    context.uuid.as_ref().map(|u| Key::Block(u.to_string(), i)),
                    false,
                    context.message_entry("assistant", text.into(), context.assistant_base()),
                ));
            }
            Some("tool_use") => {
                if let Some(pending) = tool_call(context, b, i, results, warn) {
                    out.push(pending);
                }
            }
            // Thinking, server-side tools, images and newer blocks carry no tool call.
            _ => {}
        }
    }
}

/// The `text` of text block `i`: absent or `null` is none, as blank text is; a value that is
/// not text is skipped with a warning, as what the agent or the user wrote is lost.
fn block_text<'b>(
    context: &RecordContext<'_>,
    block: &'b Map<String, Value>,
    i: usize,
    warn: &mut Warn<'_>,
) -> Option<&'b str> {
    match block.get("text")? {
        Value::String(text) => Some(text),
        Value::Null => None,
        other => {
            warn.skipped(
                context.record,
                &context.session_id,
                format!(
                    "content block {i} skipped: the `text` of a `text` block is a JSON {}, not text",
                    json_kind(other)
                ),
            );
            None
        }
    }
}

/// A user record's prompt: its text, or its text blocks joined; nothing when blank.
fn user_entry(
    context: &RecordContext<'_>,
    content: Option<&Value>,
    warn: &mut Warn<'_>,
) -> Option<Pending> {
    let text = match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let mut texts = Vec::new();
            for (i, block) in blocks.iter().enumerate() {
                match block {
                    Value::Object(b) => {
                        if b.get("type").and_then(Value::as_str) == Some("text") {
                            if let Some(t) = block_text(context, b, i, warn) {
                                texts.push(t);
                            }
                        }
                    }
                    other => warn.skipped(
                        context.record,
                        &context.session_id,
                        format!("content block {i} skipped: {}", not_an_object(other)),
                    ),
                }
            }
            texts.join("\n\n")
        }
        _ => String::new(),
    };
    if text.trim().is_empty() {
        return None;
    }
    let mut extra = context.base();
    for flag in ["isMeta", "isCompactSummary"] {
        match context.map.get(flag) {
            Some(Value::Bool(v)) => {
                extra.insert(flag.into(), Value::Bool(*v));
            }
            None | Some(Value::Null) => {}
            // Rules take a prompt without the flag for the user speaking (after a failure,
            // say): one that cannot be read as true must not pass as theirs in silence.
            Some(other) => warn.at(
                context.record,
                format!(
                    "field `{flag}` is {}, not true or false: the prompt is read as the user's, not as Claude Code's",
                    described(other)
                ),
            ),
        }
    }
    Some(context.pending(
        context.uuid.as_ref().map(|u| Key::Record(u.to_string())),
        false,
        context.message_entry("user", Value::String(text), extra),
    ))
}

/// A `tool_use` block's `id` and `name`, or why the call cannot be read.
fn call_id_and_name(block: &Map<String, Value>) -> Result<(&str, &str), String> {
    let absent = || "a `tool_use` without `id` or `name`".to_owned();
    let id = match block.get("id") {
        Some(Value::String(id)) => id,
        None | Some(Value::Null) => return Err(absent()),
        Some(other) => {
            return Err(format!(
                "the `id` of a `tool_use` is a JSON {}, not text",
                json_kind(other)
            ))
        }
    };
    match block.get("name") {
        Some(Value::String(name)) => Ok((id, name)),
        None | Some(Value::Null) => Err(absent()),
        Some(other) => Err(format!(
            "the `name` of `tool_use` `{id}` is a JSON {}, not text",
            json_kind(other)
        )),
    }
}

/// A `tool_use` block: an entry named by the tool, with its input as params and the outcome
/// of its result (a call without result succeeds, and says so in `metadata.hasResult`).
fn tool_call(
    context: &RecordContext<'_>,
    block: &Map<String, Value>,
    i: usize,
    results: &HashMap<String, ToolResult>,
    warn: &mut Warn<'_>,
) -> Option<Pending> {
    let unreadable = call_id_and_name(block);
    let (id, name) = match unreadable {
        Ok(read) => read,
        Err(why) => {
            warn.skipped(
                context.record,
                &context.session_id,
                format!("content block {i} skipped: {why}"),
            );
            return None;
        }
    };
    let params = match block.get("input") {
        Some(Value::Object(input)) => input.clone(),
        None | Some(Value::Null) => Map::new(),
        // Kept, so that the call still counts and its value can be read, but named: a rule
        // reading one of the tool's arguments (`params.file_path`) finds none, and a grade
        // that misses them must not pass in silence.
        Some(other) => {
            warn.at(
                context.record,
                format!(
                    "content block {i}: the `input` of `{name}` call `{id}` is a JSON {}, not an object: it is kept as `params.input`, and rules reading the tool's arguments find none",
                    json_kind(other)
                ),
            );
            let mut wrapped = Map::new();
            wrapped.insert("input".into(), other.clone());
            wrapped
        }
    };
    let mut extra = context.assistant_base();
    extra.insert("toolUseId".into(), id.into());
    extra.insert(
        super::super::tool::KIND_KEY.into(),
        super::KINDS.kind_of(name, &params).as_str().into(),
    );
    let resolved = results.contains_key(id);
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
                    duration: r
                        .instant
                        .map_or(0.0, |at| (at - context.instant).max(0) as f64),
                },
                r.is_error.then(|| r.text.clone()),
            )
        }
        None => {
            extra.insert("hasResult".into(), Value::Bool(false));
            (ok(), None)
        }
    };
    Some(context.pending(
        Some(Key::Call(id.to_owned())),
        resolved,
        context.entry("tool", name, params, extra, outcome, error),
    ))
}

#[cfg(test)]
mod tests;
