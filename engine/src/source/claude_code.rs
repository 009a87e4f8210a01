//! Claude Code transcripts: `~/.claude/projects/<project>/<session>.jsonl`, one record per
//! line, or the `{"loglines": [...]}` wrapper of web and API sessions.
//!
//! Each `tool_use` block becomes an entry (domain `tool`, operation the tool's name, params
//! its input) whose outcome comes from the matching `tool_result`; user prompts and the
//! assistant's text become `message` entries (operation `user` / `assistant`, `params.text`).
//! Records that cannot be read are skipped with a warning naming their line, as transcript
//! viewers do; record types this reader does not use (`summary`, `system`, `progress`,
//! `file-history-snapshot`, newer ones) are ignored. `docs/sources.md` has the full mapping.

mod entries;

use std::collections::{hash_map, HashMap, HashSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use super::common::{
    describe_json_error, Input, Place, ReadOptions, SessionFilter, SourceError, SourceRead,
    SourceWarning,
};
use super::format::{Evidence, Sniff, SourceFormat};
use super::tool::{KindRule, KindTable, ToolKind};
use crate::entry::{Entry, Session};
use crate::time::InstantMs;
use entries::{entries_of, FileEntries, PLACE_MARK, UUID_MARK};

/// `metadata.source` of every entry read from a transcript.
pub const SOURCE: &str = "claude-code";

/// The kind of each of Claude Code's tools (`metadata.kind`), as its tool reference names
/// them; MCP tools (`mcp__server__tool`) and any tool not named are `other`.
pub(crate) const KINDS: KindTable = KindTable {
    agent: "Claude Code",
    tools: &[
        ("Read", KindRule::Is(ToolKind::Read)),
        ("NotebookRead", KindRule::Is(ToolKind::Read)),
        ("Edit", KindRule::Is(ToolKind::Edit)),
        ("MultiEdit", KindRule::Is(ToolKind::Edit)),
        ("NotebookEdit", KindRule::Is(ToolKind::Edit)),
        ("Write", KindRule::Is(ToolKind::Write)),
        ("Grep", KindRule::Is(ToolKind::Search)),
        ("Glob", KindRule::Is(ToolKind::Search)),
        ("LS", KindRule::Is(ToolKind::List)),
        ("Bash", KindRule::Is(ToolKind::Shell)),
        ("BashOutput", KindRule::Is(ToolKind::Shell)),
        ("KillShell", KindRule::Is(ToolKind::Shell)),
        ("KillBash", KindRule::Is(ToolKind::Shell)),
        ("TodoWrite", KindRule::Is(ToolKind::Plan)),
        ("TaskCreate", KindRule::Is(ToolKind::Plan)),
        ("TaskUpdate", KindRule::Is(ToolKind::Plan)),
        ("ExitPlanMode", KindRule::Is(ToolKind::Plan)),
        ("WebFetch", KindRule::Is(ToolKind::Web)),
        ("WebSearch", KindRule::Is(ToolKind::Web)),
        ("Task", KindRule::Is(ToolKind::Delegate)),
        ("Agent", KindRule::Is(ToolKind::Delegate)),
    ],
};

/// The record types of a transcript (`type`), as Claude Code's session schema lists them
/// from 2.0 to 2.1.144. Only `user` and `assistant` records make entries; the others are
/// read past. A record of one of these types that carries a `sessionId` is a transcript's,
/// whatever other keys it has (a `queue-operation` has an `operation`, as a CLEO entry does).
pub(crate) const RECORD_TYPES: &[&str] = &[
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "pr-link",
    "agent-name",
    "custom-title",
    "last-prompt",
    "attachment",
    "permission-mode",
    "ai-title",
    "agent-setting",
    "bridge-session",
    "worktree-state",
];

/// Whether `map` is a transcript record beyond doubt: a `type` Claude Code writes, a
/// `sessionId`, and no `domain` (which every CLEO audit entry has).
pub(crate) fn is_record(map: &serde_json::Map<String, Value>) -> bool {
    map.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| RECORD_TYPES.contains(&t))
        && map.get("sessionId").is_some_and(Value::is_string)
        && !map.contains_key("domain")
}

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
    /// When the result's record was written, when it says so readably.
    instant: Option<InstantMs>,
    /// `toolUseResult.type` of the record (`create` / `update` for Write), when present.
    result_type: Option<String>,
    /// Its record's line (or `loglines` item), by which a later result for the call that
    /// says otherwise names it.
    line: u64,
}

/// What makes two entries of a session copies of one (a resumed session copies earlier
/// records). Each kind of thing is keyed apart, and by its parts, not by text joined from
/// them: as `message:{uuid}:{block}`, the message of the record `x:0` and block 0 of the
/// record `x` shared a key, and one of them was dropped.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// A tool call, by its `tool_use` id.
    Call(String),
    /// The message of a whole record (a prompt, or an assistant's text written as a
    /// string), by the record's `uuid`.
    Record(String),
    /// A text block of an assistant record, by the record's `uuid` and the block's index.
    Block(String, usize),
}

/// Where an entry's `messageId` or `agentId` comes from: the record's own, or the name this
/// reader gives a record that has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Named {
    /// The record's `message.id` or `agentId`.
    Written,
    /// The record's `uuid` (a message id), or that of the first record of its subagent's
    /// `parentUuid` chain (an agent's).
    ByUuid,
    /// Where the record is, `FILE:LINE` (a message id of a record without `uuid`).
    ByPlace,
}

/// An entry with what is needed to group and deduplicate it.
struct Pending {
    key: Option<Key>,
    /// Where its `metadata.messageId` comes from, when it has one.
    message_named: Option<Named>,
    /// Where its `metadata.agentId` comes from, when it has one.
    agent_named: Option<Named>,
    /// A tool call whose result was found (in its file): of two copies of a call, the one
    /// with the result is kept.
    resolved: bool,
    /// Where its record is in its file.
    place: Place,
    /// Its record's line (or `loglines` item), by which a warning about it is ordered.
    line: u64,
    entry: Entry,
}

/// Claude Code transcripts: `<session>.jsonl` files, the `{"loglines": [...]}` wrapper, and
/// project folders of them. Sessions are gathered by `sessionId` across files (a subagent's
/// file carries its parent's session id).
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaudeCode;

impl SourceFormat for ClaudeCode {
    fn file_extensions(&self) -> &[&str] {
        &["jsonl"]
    }

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
        if map.get("loglines").is_some_and(Value::is_array) || is_record(map) {
            return Sniff::Certain;
        }
        // A Codex rollout line has a `type` and a `timestamp` too, and a `payload`, which no
        // Claude Code record has.
        // A Gemini CLI message line has a `type`, a `timestamp` and an `id`, and none of a
        // Claude Code record's `uuid`, `sessionId` or `message`.
        if has("payload") || super::gemini::is_message(map) {
            return Sniff::No;
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
        let bytes = input.bytes()?;
        let per_file = vec![file_entries(input.name(), &bytes)];
        let mut warnings = Vec::new();
        Ok(read_of(group(per_file, filter, &mut warnings), warnings))
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
        let mut per_file = Vec::with_capacity(files.len());
        for path in files {
            let input = Input::File(path);
            let bytes = input.bytes()?;
            per_file.push(file_entries(path, &bytes));
        }
        let mut warnings = Vec::new();
        Ok(read_of(group(per_file, filter, &mut warnings), warnings))
    }
}

/// The entries of the file `path` holding `bytes`, with its warnings.
fn file_entries(path: &Path, bytes: &[u8]) -> FileEntries {
    let mut warnings = Vec::new();
    let (records, damaged) = records_of(path, bytes, &mut warnings);
    entries_of(path, records, damaged, warnings)
}

/// The read of `sessions`: the lines they lost are the source's skipped lines, each counted
/// for one session (a transcript's lines name their session, or belong to its file's).
fn read_of(sessions: Vec<Session>, warnings: Vec<SourceWarning>) -> SourceRead {
    SourceRead {
        skipped_lines: sessions.iter().map(|s| s.skipped_lines).sum(),
        sessions,
        warnings,
        ..SourceRead::default()
    }
}

/// The records of a file: its lines, or the items of a `{"loglines": [...]}` document, and
/// how many lines were not JSON (reported and skipped).
fn records_of(
    path: &Path,
    text: &[u8],
    warnings: &mut Vec<(u64, SourceWarning)>,
) -> (Vec<Record>, u64) {
    let first = text.iter().copied().find(|b| !b.is_ascii_whitespace());
    if first == Some(b'{') {
        // A wrapper document (possibly pretty-printed) parses whole; a JSONL file does not
        // unless it holds a single record.
        if let Ok((Value::Object(mut doc), lone)) = crate::json::from_slice_lenient::<Value>(text) {
            if lone {
                warnings.push((
                    1,
                    SourceWarning {
                        path: path.to_owned(),
                        place: Place::File,
                        message: crate::json::LONE_SURROGATE_READ.to_owned(),
                    },
                ));
            }
            if let Some(Value::Array(lines)) = doc.remove("loglines") {
                let records = lines
                    .into_iter()
                    .enumerate()
                    .map(|(i, value)| Record {
                        place: Place::Item(format!("loglines[{i}]")),
                        line: i as u64 + 1,
                        value,
                    })
                    .collect();
                return (records, 0);
            }
        }
    }
    let mut records = Vec::new();
    let mut damaged = 0;
    // A final newline ends the last line rather than starting an empty one (which, being
    // blank, would be skipped anyway).
    let lines: Vec<(u64, &[u8])> = text
        .split(|b| *b == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace))
        .map(|(i, line)| (i as u64 + 1, line))
        .collect();
    // Parsed side by side: a long transcript is often the only file graded, and parsing its
    // lines one by one was a fifth of grading it (`claude-code-v1`, 20,000 tool calls).
    let parsed: Vec<Result<(Value, bool), serde_json::Error>> = lines
        .par_iter()
        .with_min_len(256)
        .map(|(_, line)| crate::json::from_slice_lenient::<Value>(line))
        .collect();
    // Lines read with U+FFFD for a lone surrogate: the first, and how many.
    let mut lone: Option<(u64, u64)> = None;
    for ((line_no, line), parsed) in lines.into_iter().zip(parsed) {
        match parsed {
            Ok((value, replaced)) => {
                if replaced {
                    lone.get_or_insert((line_no, 0)).1 += 1;
                }
                records.push(Record {
                    place: Place::Line(line_no),
                    line: line_no,
                    value,
                });
            }
            Err(err) => {
                damaged += 1;
                warnings.push((
                    line_no,
                    SourceWarning {
                        path: path.to_owned(),
                        place: Place::Line(line_no),
                        message: format!(
                            "skipped: not valid JSON: {}",
                            describe_json_error(&err, line)
                        ),
                    },
                ));
            }
        }
    }
    if let Some((first, lines)) = lone {
        warnings.push((
            first,
            SourceWarning {
                path: path.to_owned(),
                place: Place::Line(first),
                message: crate::json::lone_surrogates_read(lines, "line"),
            },
        ));
    }
    (records, damaged)
}

/// ` (FILE:LINE)`: where an entry's record is, as its metadata says; empty if it does not.
fn where_is(entry: &Entry) -> String {
    use crate::entry::MetaRef;
    match (entry.metadata.get("file"), entry.metadata.get("line")) {
        (Some(MetaRef::Json(Value::String(file))), Some(MetaRef::Json(line))) => {
            format!(" ({file}:{line})")
        }
        _ => String::new(),
    }
}

/// An id of an entry's metadata that this reader may make up for a record without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum IdField {
    /// `messageId`.
    Message,
    /// `agentId`.
    Agent,
}

impl IdField {
    fn key(self) -> &'static str {
        match self {
            IdField::Message => "messageId",
            IdField::Agent => "agentId",
        }
    }
}

/// A name made up for records lacking their own id that names something else too, in one
/// session: the `uuid` `7` of a record without `message.id`, and a message whose `id` is
/// `7`; or an agent named by the first record of its `parentUuid` chain, `u5`, and an
/// `agentId` `u5`. Read as they are, the two would count as one message, or one agent.
type SharedName = (String, IdField, String);

/// The names made up for records of a session lacking their own `message.id` or `agentId`
/// (see [`Named`]) that are also given some other way in that session: another message's
/// `id`, another record's place. Nothing is gathered when no name is made up, as in every
/// transcript Claude Code 2 writes.
fn shared_names(per_file: &[FileEntries]) -> HashSet<SharedName> {
    let pending = || per_file.iter().flat_map(|file| &file.pending);
    let made_up = |named: Option<Named>| named.is_some_and(|n| n != Named::Written);
    if !pending().any(|p| made_up(p.message_named) || made_up(p.agent_named)) {
        return HashSet::new();
    }
    // Per (session, field, name), each way the name was given, one bit each.
    let mut ways: HashMap<(&str, IdField, &str), u8> = HashMap::new();
    for p in pending() {
        for (field, named) in [
            (IdField::Message, p.message_named),
            (IdField::Agent, p.agent_named),
        ] {
            let name = p
                .entry
                .metadata
                .extra
                .get(field.key())
                .and_then(Value::as_str);
            if let (Some(named), Some(name)) = (named, name) {
                *ways.entry((&p.entry.session_id, field, name)).or_default() |= 1 << named as u8;
            }
        }
    }
    ways.into_iter()
        .filter(|(_, ways)| ways.count_ones() > 1)
        .map(|((session, field, name), _)| (session.to_owned(), field, name.to_owned()))
        .collect()
}

/// Renames the made-up ids of `pending` that are `shared` (see [`shared_names`]), as no id
/// written in a record reads (`uuid:7`, `line:t.jsonl:4`: `entries::id_text` reads a written
/// id that begins so otherwise), and says why, once per name in its file (`told`). Called
/// only when some name is shared: it allocates for every id it looks at.
fn rename_shared(
    pending: &mut Pending,
    shared: &HashSet<SharedName>,
    told: &mut HashSet<(IdField, String)>,
) -> Vec<String> {
    let mut why = Vec::new();
    for (field, named) in [
        (IdField::Message, pending.message_named),
        (IdField::Agent, pending.agent_named),
    ] {
        let mark = match named {
            Some(Named::ByUuid) => UUID_MARK,
            Some(Named::ByPlace) => PLACE_MARK,
            None | Some(Named::Written) => continue,
        };
        let extra = &mut pending.entry.metadata.extra;
        let Some(old) = extra.get(field.key()).and_then(Value::as_str) else {
            continue;
        };
        let key = (pending.entry.session_id.to_string(), field, old.to_owned());
        if !shared.contains(&key) {
            continue;
        }
        let (_, _, old) = key;
        let renamed = format!("{mark}{old}");
        extra.insert(field.key().into(), renamed.as_str().into());
        if !told.insert((field, renamed.clone())) {
            continue;
        }
        why.push(match (field, named) {
            (IdField::Agent, _) => format!(
                "the subagent record has no `agentId`, and the `uuid` of the first record of its `parentUuid` chain, `{old}`, which names its subagent instead, is another agent's `agentId` too: its subagent is read as `{renamed}`, so the two do not count as one agent"
            ),
            (IdField::Message, Some(Named::ByPlace)) => format!(
                "the record has no `message.id` or `uuid`, and its place, `{old}`, which names its message instead, is another message's id too: its message is read as `{renamed}`, so the record does not count as part of that message"
            ),
            (IdField::Message, _) => format!(
                "the record has no `message.id`, and its `uuid`, `{old}`, which names its message instead, is another message's id too: its message is read as `{renamed}`, so the record does not count as part of that message"
            ),
        });
    }
    why
}

/// Why the result of `copy`, a copy of the call `id` made `earlier` (a resumed session's, in
/// another file) whose result was found too, is not read, when it differs from the
/// earlier's in what a grade reads of it, as `entries::later_result_differs` says of two
/// results in one file: a copy says the same, and one that does not must not be read past
/// in silence.
fn other_result(id: &str, earlier: &Entry, copy: &Entry) -> Option<String> {
    let at = where_is(earlier);
    let how = if earlier.result.success != copy.result.success {
        let said = |success: bool| if success { "succeeded" } else { "failed" };
        format!(
            "says the call {}, where that of the earlier copy{at} says it {}",
            said(copy.result.success),
            said(earlier.result.success)
        )
    } else if earlier.error != copy.error {
        format!("reports another error than that of the earlier copy{at}")
    } else if earlier.metadata.extra.get("resultType") != copy.metadata.extra.get("resultType") {
        format!("has another `toolUseResult.type` than that of the earlier copy{at}")
    } else {
        return None;
    };
    Some(format!(
        "the result of this copy of `{}` call `{id}` {how}: the earlier is read",
        copy.operation
    ))
}

/// Why `entry`, whose key is that of the `earlier` entry kept, is no copy of it and is
/// skipped.
fn not_a_copy(key: &Key, entry: &Entry, earlier: &Entry) -> String {
    let (op, was, at) = (&entry.operation, &earlier.operation, where_is(earlier));
    match key {
        Key::Call(id) => format!(
            "skipped: `{op}` call `{id}` has the id of an earlier `{was}` call{at} with other input: which of them a result answers cannot be told"
        ),
        Key::Record(uuid) if op != was => format!(
            "skipped: the record's `uuid` `{uuid}` is that of an earlier record{at}, whose message is the `{was}`'s, not the `{op}`'s: which of the two the session holds cannot be told"
        ),
        Key::Record(uuid) => format!(
            "skipped: the record's `uuid` `{uuid}` is that of an earlier record{at}, whose `{was}` message has other text: which of the two the session holds cannot be told"
        ),
        Key::Block(uuid, i) => format!(
            "content block {i} skipped: the record's `uuid` `{uuid}` is that of an earlier record{at}, whose block {i} has other text: which of the two the session holds cannot be told"
        ),
    }
}

/// Gathers entries into sessions (in order of first appearance). An entry seen before in
/// the same session (a resumed session copies earlier records) is kept once: the first copy,
/// unless only a later copy of a tool call has its result (an earlier file ended before the
/// result was written), which then takes the first copy's place. When a session's entries
/// come from several files they are merged by time, file order breaking ties.
/// A session that lost lines (see [`FileEntries::lost`]) counts them in `skipped_lines`,
/// and one whose every line was lost is still there, without entries. A tool call with the
/// id of a kept one but another name or input is no copy: which of the two a result
/// answers cannot be told, so it is skipped with a warning, and its session counts the line
/// (as a message whose record has a kept one's `uuid` but other text is). A copy of a call
/// whose result says otherwise than the kept copy's is named. Names made up for records
/// without `message.id` or `agentId` that are also given another way are marked apart (see
/// [`shared_names`]).
fn group(
    per_file: Vec<FileEntries>,
    filter: &SessionFilter,
    warnings: &mut Vec<SourceWarning>,
) -> Vec<Session> {
    let mut sessions: Vec<Session> = Vec::new();
    let mut index_of: HashMap<String, usize> = HashMap::new();
    // Per session: key -> (index of the kept copy in its entries, whether it has a result).
    let mut seen: Vec<HashMap<Key, (usize, bool)>> = Vec::new();
    let mut files_of: Vec<usize> = Vec::new();
    // The lines (file, place) that lost a call whose id was taken, counted once each.
    let mut conflicted: HashSet<(usize, Place)> = HashSet::new();
    let shared = shared_names(&per_file);
    for (file_index, mut file) in per_file.into_iter().enumerate() {
        // Each step of the reading (lines, tool results, records, entries, the calls here)
        // found its warnings in turn; put together, a file's warnings read in line order,
        // those of one line in the order they were found.
        let mut file_warnings = std::mem::take(&mut file.warnings);
        let mut touched: HashSet<usize> = HashSet::new();
        let mut told = HashSet::new();
        let path = file.path.clone();
        // Names made up for a record are told apart from any other, where they are kept.
        let mut keep = |pending: &mut Pending, file_warnings: &mut Vec<(u64, SourceWarning)>| {
            if shared.is_empty() {
                return;
            }
            for message in rename_shared(pending, &shared, &mut told) {
                file_warnings.push((
                    pending.line,
                    SourceWarning {
                        path: path.clone(),
                        place: pending.place.clone(),
                        message,
                    },
                ));
            }
        };
        let mut slot_of = |id: &str| -> Option<usize> {
            if !filter.wants(id) {
                return None;
            }
            Some(*index_of.entry(id.to_owned()).or_insert_with(|| {
                sessions.push(Session {
                    id: id.to_owned(),
                    ..Session::default()
                });
                seen.push(HashMap::new());
                files_of.push(0);
                sessions.len() - 1
            }))
        };
        let mut slots = Vec::with_capacity(file.pending.len());
        for pending in &file.pending {
            slots.push(slot_of(&pending.entry.session_id));
        }
        let mut lost = Vec::with_capacity(file.lost.len());
        for (id, n) in &file.lost {
            lost.push((slot_of(id), *n));
        }
        for (slot, n) in lost {
            if let Some(slot) = slot {
                sessions[slot].skipped_lines += n;
            }
        }
        for (mut pending, slot) in file.pending.into_iter().zip(slots) {
            let Some(slot) = slot else {
                continue;
            };
            let at = sessions[slot].entries.len();
            if let Some(key) = pending.key.take() {
                match seen[slot].entry(key) {
                    hash_map::Entry::Occupied(mut kept) => {
                        let (index, resolved) = *kept.get();
                        let earlier = &sessions[slot].entries[index];
                        if earlier.operation != pending.entry.operation
                            || earlier.params != pending.entry.params
                        {
                            file_warnings.push((
                                pending.line,
                                SourceWarning {
                                    path: file.path.clone(),
                                    place: pending.place.clone(),
                                    message: not_a_copy(kept.key(), &pending.entry, earlier),
                                },
                            ));
                            if conflicted.insert((file_index, pending.place)) {
                                sessions[slot].skipped_lines += 1;
                            }
                            continue;
                        }
                        let other = match kept.key() {
                            Key::Call(id) if pending.resolved && resolved => {
                                other_result(id, earlier, &pending.entry)
                            }
                            _ => None,
                        };
                        if let Some(message) = other {
                            file_warnings.push((
                                pending.line,
                                SourceWarning {
                                    path: file.path.clone(),
                                    place: pending.place.clone(),
                                    message,
                                },
                            ));
                        }
                        if pending.resolved && !resolved {
                            keep(&mut pending, &mut file_warnings);
                            sessions[slot].entries[index] = pending.entry;
                            kept.insert((index, true));
                            if touched.insert(slot) {
                                files_of[slot] += 1;
                            }
                        }
                        continue;
                    }
                    hash_map::Entry::Vacant(slot_of_key) => {
                        slot_of_key.insert((at, pending.resolved));
                    }
                }
            }
            if touched.insert(slot) {
                files_of[slot] += 1;
            }
            keep(&mut pending, &mut file_warnings);
            sessions[slot].entries.push(pending.entry);
        }
        // A stable sort: warnings of one line keep the order they were found in.
        file_warnings.sort_by_key(|(line, _)| *line);
        warnings.extend(file_warnings.into_iter().map(|(_, warning)| warning));
    }
    for (slot, session) in sessions.iter_mut().enumerate() {
        if files_of[slot] > 1 {
            session.entries.sort_by_key(|e| e.instant);
        }
    }
    sessions
}

#[cfg(test)]
mod tests;
