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

/// The first result of each tool call, by `tool_use` id, from the user and assistant
/// records; a later one that says otherwise is named (see [`later_result_differs`]).
/// Outcomes are gathered first: a result may be written before the call's other blocks. A
/// result whose record has no readable timestamp still counts (only the call's duration
/// needs the time). A result that cannot be given to a call (it names none, or one
/// no `tool_use` of the file has, or its `is_error` is not a boolean) is skipped with a
/// warning, and its line counts as lost: the grade misses what it says, an error above all.
fn tool_results(
    records: &[Record],
    file_session: &str,
    warn: &mut Warn<'_>,
) -> HashMap<String, ToolResult> {
    // Calls of any record count, even of one skipped for its timestamp: that call was
    // reported already, and its result is no orphan.
    let calls: HashSet<&str> = records
        .iter()
        .filter_map(message_blocks)
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .filter_map(|b| b.get("id").and_then(Value::as_str))
        .collect();
    let mut results: HashMap<String, ToolResult> = HashMap::new();
    for record in records {
        let Some(blocks) = message_blocks(record) else {
            continue;
        };
        let instant = record
            .value
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| parse_timestamp(t).ok());
        let result_type = match record.value.pointer("/toolUseResult/type") {
            Some(Value::String(kind)) => Some(kind.clone()),
            None | Some(Value::Null) => None,
            // A rule tells a Write that created its file from one that changed it by this
            // (`create` / `update`): left out, the Write reads as neither, and must say so.
            Some(other) => {
                let answers = blocks
                    .iter()
                    .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
                if answers {
                    warn.at(
                        record,
                        format!(
                            "field `toolUseResult.type` is {}, not text: it is left out, so whether a `Write` it answers created its file or changed one cannot be told",
                            described(other)
                        ),
                    );
                }
                None
            }
        };
        let session = session_named(&record.value).unwrap_or(file_session);
        for (i, block) in blocks.iter().enumerate() {
            if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                continue;
            }
            let is_error = block.get("is_error");
            let lost = if is_error == Some(&Value::Bool(true)) {
                ", so the error it reports is not graded"
            } else {
                ""
            };
            let id = match block.get("tool_use_id") {
                Some(Value::String(id)) => id.as_str(),
                None | Some(Value::Null) => {
                    warn.skipped(
                        record,
                        session,
                        format!("content block {i} skipped: a `tool_result` without `tool_use_id`{lost}"),
                    );
                    continue;
                }
                // No call's id is anything but text (a call whose id is not is skipped).
                Some(other) => {
                    warn.skipped(
                        record,
                        session,
                        format!(
                            "content block {i} skipped: the `tool_use_id` of a `tool_result` is a JSON {}, not text{lost}",
                            json_kind(other)
                        ),
                    );
                    continue;
                }
            };
            if !calls.contains(id) {
                warn.skipped(
                    record,
                    session,
                    format!("content block {i} skipped: the `tool_result` for `{id}` answers no `tool_use` in the file{lost}"),
                );
                continue;
            }
            // Absent is how Claude Code writes a success; `null` is how a serializer writes
            // an unset optional field.
            let is_error = match is_error {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => {
                    warn.skipped(
                        record,
                        session,
                        format!(
                            "content block {i} skipped: `is_error` of the `tool_result` for `{id}` is {}, not true or false: whether the call failed cannot be told, so the result is not read",
                            described(other)
                        ),
                    );
                    continue;
                }
            };
            let mut odd = Vec::new();
            let text = match block.get("content") {
                Some(Value::Array(items)) => listed_result_text(items, id, &mut odd),
                // Claude Code writes text or a list of blocks; an object (one block not in a
                // list, a converter's) or a number still says something, and read as no
                // text, the error it reports would vanish from the grade.
                Some(other @ (Value::Object(_) | Value::Number(_) | Value::Bool(_))) => {
                    odd.push(format!(
                        "the `content` of the `tool_result` for `{id}` is a JSON {}, not text or blocks: its JSON text is read as the error",
                        json_kind(other)
                    ));
                    other.to_string()
                }
                Some(Value::String(text)) => text.clone(),
                None | Some(Value::Null) => String::new(),
            };
            let result = ToolResult {
                is_error,
                text,
                instant,
                result_type: result_type.clone(),
                line: record.line,
            };
            if let Some(first) = results.get(id) {
                // A resumed session copies a result as it was: a copy says nothing new. One
                // that differs in what is graded is not read, and must not pass in silence.
                if let Some(how) = later_result_differs(first, &result, warn.path) {
                    warn.at(
                        record,
                        format!("content block {i}: a later `tool_result` for `{id}` {how}: the first is read"),
                    );
                }
                continue;
            }
            // A success's text is never graded: nothing of it is lost.
            if is_error {
                for why in odd {
                    warn.at(record, format!("content block {i}: {why}"));
                }
            }
            results.insert(id.to_owned(), result);
        }
    }
    results
}

/// How a `later` result for a call differs from the `first` (in the file `path`) in what a
/// grade reads of it: whether the call failed, the error it reports, whether a `Write`
/// created its file or changed one. `None` when it says the same, as a resumed session's copy does (a
/// success's text is never graded, nor is when the result was written but for a duration).
fn later_result_differs(first: &ToolResult, later: &ToolResult, path: &Path) -> Option<String> {
    let first_at = || format!("{}:{}", path.display(), first.line);
    let outcome = |r: &ToolResult| if r.is_error { "failed" } else { "succeeded" };
    if first.is_error != later.is_error {
        return Some(format!(
            "says the call {}, where the first ({}) says it {}",
            outcome(later),
            first_at(),
            outcome(first)
        ));
    }
    if first.is_error && first.text != later.text {
        return Some(format!(
            "reports another error than the first ({})",
            first_at()
        ));
    }
    if first.result_type != later.result_type {
        let later_type = later.result_type.as_deref().map_or_else(
            || "has no `toolUseResult.type`".to_owned(),
            |kind| format!("has `toolUseResult.type` `{kind}`"),
        );
        let first_type = first
            .result_type
            .as_deref()
            .map_or_else(|| "none".to_owned(), |kind| format!("`{kind}`"));
        return Some(format!(
            "{later_type}, where the first ({}) has {first_type}",
            first_at()
        ));
    }
    None
}

/// The items of a `tool_result`'s `content` list that carry no words: Claude Code writes
/// images (a screenshot), documents and tool references (what `ToolSearch` found) there.
const WORDLESS_ITEMS: &[&str] = &["image", "document", "tool_reference"];

/// The text of a `tool_result`'s `content` list, the result for `id`: its strings and the
/// `text` of its blocks, joined by a line break. Items with no words (`null`, an image, a
/// text block without `text`) are passed over; any other item still says something, and
/// left out, an error it reports would vanish from the grade: its JSON text is read in its
/// place, and why is pushed to `odd`.
fn listed_result_text(items: &[Value], id: &str, odd: &mut Vec<String>) -> String {
    let mut texts: Vec<Cow<'_, str>> = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let item_of = || format!("item {j} of the `content` of the `tool_result` for `{id}`");
        let read = "its JSON text is read as part of the error";
        match item {
            Value::String(text) => texts.push(Cow::Borrowed(text)),
            Value::Null => {}
            Value::Object(block) => match block.get("text") {
                Some(Value::String(text)) => texts.push(Cow::Borrowed(text)),
                None | Some(Value::Null) => {
                    let kind = block.get("type").and_then(Value::as_str);
                    if kind == Some("text") || kind.is_some_and(|k| WORDLESS_ITEMS.contains(&k)) {
                        continue;
                    }
                    odd.push(format!(
                        "{} is an object without `text`, not an image, a document or a tool reference: {read}",
                        item_of()
                    ));
                    texts.push(Cow::Owned(item.to_string()));
                }
                Some(other) => {
                    odd.push(format!(
                        "the `text` of {} is a JSON {}, not text: {read}",
                        item_of(),
                        json_kind(other)
                    ));
                    texts.push(Cow::Owned(other.to_string()));
                }
            },
            other => {
                odd.push(format!(
                    "{} is a JSON {}, not text or a block: {read}",
                    item_of(),
                    json_kind(other)
                ));
                texts.push(Cow::Owned(other.to_string()));
            }
        }
    }
    texts.join("\n")
}

/// The content blocks of a user or assistant record's message, when they are a list.
fn message_blocks(record: &Record) -> Option<&Vec<Value>> {
    let kind = record.value.get("type").and_then(Value::as_str);
    if kind != Some("user") && kind != Some("assistant") {
        return None;
    }
    match record.value.pointer("/message/content") {
        Some(Value::Array(blocks)) => Some(blocks),
        _ => None,
    }
}

/// A record's `isSidechain`: absent or `null` is false (a record of the main agent);
/// anything but a boolean is the value, for a warning (`"true"` or `1` cannot be read
/// as a subagent's without guessing, and read as false it must not pass in silence).
fn sidechain_of(map: &Map<String, Value>) -> Result<bool, &Value> {
    match map.get("isSidechain") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(sidechain)) => Ok(*sidechain),
        Some(other) => Err(other),
    }
}

/// An id Claude Code writes as text (`message.id`, `uuid`, `parentUuid`, `agentId`) as this
/// reader keys and shows it: text as it is, and a number (a converter's) as `number:N`, which
/// still tells one id from another without being taken for the text `N` another line may
/// hold (message `7` and message `"7"` are not known to be one). Nor may the text
/// `"number:7"` be taken for the number: a text that begins as a marked id does (see
/// [`marked`]) is read as `text:` before it, so no two ids written apart read alike, and
/// every id Claude Code writes reads as written. `None` when absent or `null`; any other
/// value tells nothing apart, and is returned for a warning.
fn id_text(value: Option<&Value>) -> Result<Option<Cow<'_, str>>, &Value> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(id)) if marked(id) => Ok(Some(Cow::Owned(format!("{TEXT_MARK}{id}")))),
        Some(Value::String(id)) => Ok(Some(Cow::Borrowed(id))),
        Some(Value::Number(n)) => Ok(Some(Cow::Owned(format!("{NUMBER_MARK}{n}")))),
        Some(other) => Err(other),
    }
}

/// How [`id_text`] begins an id written as a number.
const NUMBER_MARK: &str = "number:";
/// How [`id_text`] begins a text id that would otherwise begin with a mark.
const TEXT_MARK: &str = "text:";
/// How `super::group` begins a record's `uuid` that names its message or its subagent, for
/// want of a `message.id` or `agentId`, when that name is also another's.
pub(super) const UUID_MARK: &str = "uuid:";
/// How `super::group` begins `FILE:LINE`, the place of a record that names its message for
/// want of a `message.id` and a `uuid`, when that name is also another's.
pub(super) const PLACE_MARK: &str = "line:";

/// Whether a text id begins with a mark, and so must be marked as text to be told from the
/// ids [`id_text`] and `super::group` mark: `"number:7"` from the number `7`, `"uuid:7"` from
/// the message named by the `uuid` `7`, and `"text:number:7"` from the text `"number:7"`.
/// Claude Code writes UUIDs and `msg_` ids, never these.
fn marked(id: &str) -> bool {
    [NUMBER_MARK, TEXT_MARK, UUID_MARK, PLACE_MARK]
        .iter()
        .any(|mark| id.starts_with(mark))
}

/// The warning for an id field `key` whose text `id` begins with a mark (see [`marked`]):
/// it is not read as written.
fn marked_text(key: &str, id: &str) -> String {
    format!(
        "`{key}` is the text `{id}`, which begins as this reader marks an id's kind (`{NUMBER_MARK}`, `{TEXT_MARK}`, `{UUID_MARK}` or `{PLACE_MARK}`): it is read as `{TEXT_MARK}{id}`, apart from any id written otherwise"
    )
}

/// What is wrong with a record's `uuid`, by which the copies a resumed session makes of a
/// record are read once, when it is neither text nor absent. A number still tells one record
/// from another, and is read as [`id_text`] shows it; a boolean, list or object tells none
/// apart, and the record stands alone: a copy of it is read again, and the warning says so.
fn odd_uuid(map: &Map<String, Value>) -> Option<String> {
    odd_id(
        map,
        "uuid",
        "so a copy of the record (as a resumed session writes) is still read once",
        "the record is read as one of its own, so a copy of it (as a resumed session writes) is read again",
    )
}

/// What is wrong with a record's `agentId` (the subagent whose record it is, by which rules
/// tell one agent's work from another's), when it is neither text nor absent. A number still
/// tells one agent from another, and is read as [`id_text`] shows it; any other value is read
/// as no `agentId`, so a subagent's record is named by its chain of `parentUuid` links (see
/// [`sidechain_chains`]), which may split one subagent in several or name none.
fn odd_agent_id(map: &Map<String, Value>) -> Option<String> {
    odd_id(
        map,
        "agentId",
        "so the records of that agent still count as one agent's",
        if sidechain_of(map) == Ok(true) {
            "it is read as no `agentId`, so the subagent is named by the first record of its `parentUuid` chain"
        } else {
            "it is read as no `agentId`"
        },
    )
}

/// What is wrong with a subagent record's `parentUuid`, when it names the subagent (a
/// sidechain record without an `agentId`, as older transcripts write them: see
/// [`sidechain_chains`]) and is neither text nor absent. A number still links to the record
/// whose `uuid` is that number, as [`id_text`] shows both; any other value links to nothing,
/// so the record starts a subagent of its own and one subagent is counted as two.
fn odd_parent_uuid(map: &Map<String, Value>) -> Option<String> {
    if sidechain_of(map) != Ok(true) || matches!(id_text(map.get("agentId")), Ok(Some(_))) {
        return None;
    }
    odd_id(
        map,
        "parentUuid",
        "so the record still joins the subagent of the record whose `uuid` is that number",
        "it is read as no parent, so the record starts a subagent of its own",
    )
}

/// The warning for an id field `key` of a record that is neither text nor absent, or text
/// that begins with a mark, as [`id_text`] reads it: a number is read as `number:N`, and
/// `number_then` says what that keeps; any other value tells nothing apart, and
/// `other_then` says what follows.
fn odd_id(
    map: &Map<String, Value>,
    key: &str,
    number_then: &str,
    other_then: &str,
) -> Option<String> {
    match map.get(key)? {
        Value::String(id) if marked(id) => Some(marked_text(key, id)),
        Value::Null | Value::String(_) => None,
        Value::Number(n) => Some(format!(
            "`{key}` is the number `{n}`, not text: it is read as `{NUMBER_MARK}{n}`, {number_then}"
        )),
        other => Some(format!(
            "`{key}` is a JSON {}, not text: {other_then}",
            json_kind(other)
        )),
    }
}

/// What is wrong with an assistant record's `message.id` (the API message id, which the
/// lines Claude Code writes for one message share), when it is neither text nor absent.
/// A number still tells one message from another, and is read as [`id_text`] shows it; a
/// boolean, list or object is no id any writer makes, and grouping by it could join
/// messages that never ran together: the record stands alone.
fn odd_message_id(map: &Map<String, Value>) -> Option<String> {
    if map.get("type").and_then(Value::as_str) != Some("assistant") {
        return None;
    }
    match map.get("message")?.get("id")? {
        Value::String(id) if marked(id) => Some(marked_text("message.id", id)),
        Value::Null | Value::String(_) => None,
        Value::Number(n) => Some(format!(
            "`message.id` is the number `{n}`, not text: it is read as `{NUMBER_MARK}{n}`, so the lines of that message still count as one message, apart from any whose id is the text `{n}`"
        )),
        other => Some(format!(
            "`message.id` is a JSON {}, not text: the record is read as a message of its own, its calls not made together with those of other lines",
            json_kind(other)
        )),
    }
}

/// The id that groups the entries of one API message, and where it comes from: the
/// message's `id` (see [`id_text`]); else the record's `uuid`, else `FILE:LINE`, so that a
/// record without one stands alone (`super::group` tells these from a message's `id`).
fn message_id(
    message: Option<&Map<String, Value>>,
    uuid: Option<&str>,
    file: &str,
    line: u64,
) -> (String, Named) {
    match id_text(message.and_then(|m| m.get("id"))) {
        Ok(Some(id)) => (id.into_owned(), Named::Written),
        _ => match uuid {
            Some(uuid) => (uuid.to_owned(), Named::ByUuid),
            None => (format!("{file}:{line}"), Named::ByPlace),
        },
    }
}

/// Older transcripts keep subagents' lines in the main file without an `agentId`: each run
/// of sidechain lines linked by `parentUuid` is one subagent, named by its first line.
/// Record uuid → the uuid naming its chain.
fn sidechain_chains(usable: &[Usable]) -> HashMap<String, String> {
    let mut chains: HashMap<String, String> = HashMap::new();
    for (record, _, _) in usable {
        let Value::Object(map) = &record.value else {
            continue;
        };
        let sidechain = sidechain_of(map) == Ok(true);
        let Ok(Some(uuid)) = id_text(map.get("uuid")) else {
            continue;
        };
        if !sidechain || matches!(id_text(map.get("agentId")), Ok(Some(_))) {
            continue;
        }
        let chain = id_text(map.get("parentUuid"))
            .ok()
            .flatten()
            .and_then(|parent| chains.get(parent.as_ref()).cloned())
            .unwrap_or_else(|| uuid.clone().into_owned());
        chains.insert(uuid.into_owned(), chain);
    }
    chains
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
