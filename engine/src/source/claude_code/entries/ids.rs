//! The ids of transcript records (uuids, agent and message ids, sidechain chains) and how
//! an id that is no string is marked so it cannot pass for one.

use super::*;

/// The content blocks of a user or assistant record's message, when they are a list.
pub(super) fn message_blocks(record: &Record) -> Option<&Vec<Value>> {
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
pub(super) fn sidechain_of(map: &Map<String, Value>) -> Result<bool, &Value> {
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
pub(super) fn id_text(value: Option<&Value>) -> Result<Option<Cow<'_, str>>, &Value> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(id)) if marked(id) => Ok(Some(Cow::Owned(format!("{TEXT_MARK}{id}")))),
        Some(Value::String(id)) => Ok(Some(Cow::Borrowed(id))),
        Some(Value::Number(n)) => Ok(Some(Cow::Owned(format!("{NUMBER_MARK}{n}")))),
        Some(other) => Err(other),
    }
}

/// How [`id_text`] begins an id written as a number.
pub(super) const NUMBER_MARK: &str = "number:";
/// How [`id_text`] begins a text id that would otherwise begin with a mark.
pub(super) const TEXT_MARK: &str = "text:";
/// How `super::group` begins a record's `uuid` that names its message or its subagent, for
/// want of a `message.id` or `agentId`, when that name is also another's.
pub(in super::super) const UUID_MARK: &str = "uuid:";
/// How `super::group` begins `FILE:LINE`, the place of a record that names its message for
/// want of a `message.id` and a `uuid`, when that name is also another's.
pub(in super::super) const PLACE_MARK: &str = "line:";

/// Whether a text id begins with a mark, and so must be marked as text to be told from the
/// ids [`id_text`] and `super::group` mark: `"number:7"` from the number `7`, `"uuid:7"` from
/// the message named by the `uuid` `7`, and `"text:number:7"` from the text `"number:7"`.
/// Claude Code writes UUIDs and `msg_` ids, never these.
pub(super) fn marked(id: &str) -> bool {
    [NUMBER_MARK, TEXT_MARK, UUID_MARK, PLACE_MARK]
        .iter()
        .any(|mark| id.starts_with(mark))
}

/// The warning for an id field `key` whose text `id` begins with a mark (see [`marked`]):
/// it is not read as written.
pub(super) fn marked_text(key: &str, id: &str) -> String {
    format!(
        "`{key}` is the text `{id}`, which begins as this reader marks an id's kind (`{NUMBER_MARK}`, `{TEXT_MARK}`, `{UUID_MARK}` or `{PLACE_MARK}`): it is read as `{TEXT_MARK}{id}`, apart from any id written otherwise"
    )
}

/// What is wrong with a record's `uuid`, by which the copies a resumed session makes of a
/// record are read once, when it is neither text nor absent. A number still tells one record
/// from another, and is read as [`id_text`] shows it; a boolean, list or object tells none
/// apart, and the record stands alone: a copy of it is read again, and the warning says so.
pub(super) fn odd_uuid(map: &Map<String, Value>) -> Option<String> {
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
pub(super) fn odd_agent_id(map: &Map<String, Value>) -> Option<String> {
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
pub(super) fn odd_parent_uuid(map: &Map<String, Value>) -> Option<String> {
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
pub(super) fn odd_id(
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
pub(super) fn odd_message_id(map: &Map<String, Value>) -> Option<String> {
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
pub(super) fn message_id(
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
pub(super) fn sidechain_chains(usable: &[Usable]) -> HashMap<String, String> {
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
