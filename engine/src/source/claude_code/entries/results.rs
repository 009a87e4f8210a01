//! Tool results by call id: gathered before the entries are made, since a result may be
//! written before the call's other blocks, and a later result that disagrees is named.

use super::*;

/// The first result of each tool call, by `tool_use` id, from the user and assistant
/// records; a later one that says otherwise is named (see [`later_result_differs`]).
/// Outcomes are gathered first: a result may be written before the call's other blocks. A
/// result whose record has no readable timestamp still counts (only the call's duration
/// needs the time). A result that cannot be given to a call (it names none, or one
/// no `tool_use` of the file has, or its `is_error` is not a boolean) is skipped with a
/// warning, and its line counts as lost: the grade misses what it says, an error above all.
pub(super) fn tool_results(
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
pub(super) fn later_result_differs(
    first: &ToolResult,
    later: &ToolResult,
    path: &Path,
) -> Option<String> {
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
pub(super) const WORDLESS_ITEMS: &[&str] = &["image", "document", "tool_reference"];

/// The text of a `tool_result`'s `content` list, the result for `id`: its strings and the
/// `text` of its blocks, joined by a line break. Items with no words (`null`, an image, a
/// text block without `text`) are passed over; any other item still says something, and
/// left out, an error it reports would vanish from the grade: its JSON text is read in its
/// place, and why is pushed to `odd`.
pub(super) fn listed_result_text(items: &[Value], id: &str, odd: &mut Vec<String>) -> String {
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
