//! Unit tests of how transcript records become entries (tool calls, results, failures).

use super::*;
use crate::source::common::Place;

fn record(line: u64, value: Value) -> Record {
    Record {
        place: Place::Line(line),
        line,
        value,
    }
}

#[test]
fn records_other_than_user_and_assistant_are_ignored_and_broken_ones_say_why() {
    let summary = record(1, serde_json::json!({"type": "summary"}));
    assert_eq!(usable_record(&summary), Ok(None));
    let no_time = record(
        2,
        serde_json::json!({"type": "user", "message": {"content": "hi"}}),
    );
    assert_eq!(
        usable_record(&no_time),
        Err(Unusable::NoTime("the record has no `timestamp`".to_owned()))
    );
    let blocks = record(
        3,
        serde_json::json!({"type": "user", "message": {"content": 3}}),
    );
    assert_eq!(
        usable_record(&blocks),
        Err(Unusable::Broken(
            "`message.content` is a JSON number, not text or blocks".to_owned()
        ))
    );
}

#[test]
fn sidechain_lines_without_an_agent_chain_to_their_first_line() {
    let line = |uuid: &str, parent: Option<&str>| {
        (
            record(
                1,
                serde_json::json!({"isSidechain": true, "uuid": uuid, "parentUuid": parent}),
            ),
            0,
            String::new(),
        )
    };
    let usable = [line("a", None), line("b", Some("a")), line("c", Some("x"))];
    let chains = sidechain_chains(&usable);
    assert_eq!(chains["b"], "a");
    assert_eq!(chains["c"], "c");
}

/// The first result of a call is its outcome; a later one that says otherwise is named
/// (see `a_later_result_for_a_call_is_named_with_the_first_when_it_says_otherwise`).
#[test]
fn the_first_result_of_a_call_is_its_outcome() {
    let result = |line: u64, is_error: bool| {
        record(
            line,
            serde_json::json!({"type": "user", "timestamp": "1970-01-01T00:00:00.005Z", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "is_error": is_error, "content": "out"}
            ]}}),
        )
    };
    let mut warn = warn_into();
    let results = tool_results(
        &[call(0, "t1"), result(1, true), result(2, false)],
        "s",
        &mut warn,
    );
    assert_eq!(
            warn.warnings
                .iter()
                .map(|(_, w)| w.to_string())
                .collect::<Vec<_>>(),
            ["t.jsonl:2: content block 0: a later `tool_result` for `t1` says the call succeeded, where the first (t.jsonl:1) says it failed: the first is read"]
        );
    assert!(results["t1"].is_error);
    assert_eq!(
        (results["t1"].text.as_str(), results["t1"].instant),
        ("out", Some(5))
    );
}

/// An assistant record at `line` holding one call, `id`.
fn call(line: u64, id: &str) -> Record {
    record(
        line,
        serde_json::json!({"type": "assistant", "sessionId": "s", "timestamp": "1970-01-01T00:00:00Z",
                "message": {"content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {}}]}}),
    )
}

/// A user record at `line` holding `block`, a result.
fn result_block(line: u64, block: Value) -> Record {
    record(
        line,
        serde_json::json!({"type": "user", "sessionId": "s", "timestamp": "1970-01-01T00:00:01Z",
                "message": {"content": [{"type": "text", "text": "see"}, block]}}),
    )
}

fn warn_into() -> Warn<'static> {
    Warn {
        path: Path::new("t.jsonl"),
        warnings: Vec::new(),
        lost_lines: HashSet::new(),
        lost: Vec::new(),
    }
}

/// A result the file has no call for was dropped without a word, even one reporting an
/// error: the agent's failure vanished from the grade.
#[test]
fn a_result_for_no_call_of_the_file_is_skipped_naming_its_line_and_id() {
    let mut warn = warn_into();
    let results = tool_results(
        &[
            call(1, "t1"),
            result_block(
                2,
                serde_json::json!({"type": "tool_result", "tool_use_id": "t9", "is_error": true, "content": "exit 1"}),
            ),
            result_block(
                3,
                serde_json::json!({"type": "tool_result", "tool_use_id": "t8", "content": "ok"}),
            ),
            result_block(
                4,
                serde_json::json!({"type": "tool_result", "content": "ok"}),
            ),
            result_block(
                5,
                serde_json::json!({"type": "tool_result", "tool_use_id": "t1", "content": "ok"}),
            ),
        ],
        "s",
        &mut warn,
    );
    assert_eq!(warn.lost, [("s".to_owned(), 3)]);
    assert_eq!(results.keys().collect::<Vec<_>>(), ["t1"]);
    assert_eq!(
            warn.warnings
                .iter()
                .map(|(_, w)| w.to_string())
                .collect::<Vec<_>>(),
            [
                "t.jsonl:2: content block 1 skipped: the `tool_result` for `t9` answers no `tool_use` in the file, so the error it reports is not graded",
                "t.jsonl:3: content block 1 skipped: the `tool_result` for `t8` answers no `tool_use` in the file",
                "t.jsonl:4: content block 1 skipped: a `tool_result` without `tool_use_id`",
            ]
        );
}

/// `"is_error": "true"` was read as false: a failed call counted as a success.
#[test]
fn an_is_error_that_is_not_a_boolean_skips_the_result_naming_it() {
    let mut warn = warn_into();
    let bad = [
        serde_json::json!("true"),
        serde_json::json!(1),
        serde_json::json!({"value": true}),
    ];
    let mut records = Vec::new();
    for (n, is_error) in bad.iter().enumerate() {
        let id = format!("t{n}");
        records.push(call(1, &id));
        records.push(result_block(
                2 + n as u64,
                serde_json::json!({"type": "tool_result", "tool_use_id": id, "is_error": is_error, "content": "x"}),
            ));
    }
    // Absent and `null` are a success, as an unset optional field.
    records.push(call(1, "ok1"));
    records.push(result_block(
            9,
            serde_json::json!({"type": "tool_result", "tool_use_id": "ok1", "is_error": null, "content": "x"}),
        ));
    let results = tool_results(&records, "s", &mut warn);
    assert_eq!(warn.lost, [("s".to_owned(), 3)]);
    assert_eq!(results.keys().collect::<Vec<_>>(), ["ok1"]);
    assert!(!results["ok1"].is_error);
    let tail =
        "not true or false: whether the call failed cannot be told, so the result is not read";
    assert_eq!(
            warn.warnings
                .iter()
                .map(|(_, w)| w.to_string())
                .collect::<Vec<_>>(),
            [
                format!("t.jsonl:2: content block 1 skipped: `is_error` of the `tool_result` for `t0` is the string `\"true\"`, {tail}"),
                format!("t.jsonl:3: content block 1 skipped: `is_error` of the `tool_result` for `t1` is the number `1`, {tail}"),
                format!("t.jsonl:4: content block 1 skipped: `is_error` of the `tool_result` for `t2` is a JSON object, {tail}"),
            ]
        );
}

/// `"toolUseResult": {"type": 1}` was read as no type, without a word: a Write that
/// overwrote a file read as neither creating nor changing it. It is still left out
/// (nothing but `create` or `update` says which), and named; `null` is an unset field.
#[test]
fn a_result_type_that_is_not_text_is_named_and_left_out() {
    let mut records = Vec::new();
    for (n, kind) in [
        serde_json::json!(1),
        serde_json::json!({"kind": "update"}),
        Value::Null,
        serde_json::json!("update"),
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("t{n}");
        records.push(call(1, &id));
        let mut result = result_block(
            2 + n as u64,
            serde_json::json!({"type": "tool_result", "tool_use_id": id, "content": "ok"}),
        );
        result.value["toolUseResult"] = serde_json::json!({"type": kind});
        records.push(result);
    }
    let mut warn = warn_into();
    let results = tool_results(&records, "s", &mut warn);
    let types: Vec<Option<&str>> = (0..4)
        .map(|n| results[&format!("t{n}")].result_type.as_deref())
        .collect();
    assert_eq!(types, [None, None, None, Some("update")]);
    let tail = "not text: it is left out, so whether a `Write` it answers created its file or changed one cannot be told";
    assert_eq!(
        warn.warnings
            .iter()
            .map(|(_, w)| w.to_string())
            .collect::<Vec<_>>(),
        [
            format!("t.jsonl:2: field `toolUseResult.type` is the number `1`, {tail}"),
            format!("t.jsonl:3: field `toolUseResult.type` is a JSON object, {tail}"),
        ]
    );
    assert!(warn.lost.is_empty(), "nothing was skipped");
}

/// A failed result whose `content` was an object (one block outside a list) or a number
/// gave its call an empty error, without a word: its JSON text is the error, and named.
#[test]
fn a_result_content_that_is_not_text_or_blocks_is_read_as_its_json_text() {
    let content = [
        serde_json::json!({"type": "text", "text": "denied"}),
        serde_json::json!(127),
    ];
    let mut records = Vec::new();
    for (n, content) in content.iter().enumerate() {
        let id = format!("t{n}");
        records.push(call(1, &id));
        records.push(result_block(
                2 + n as u64,
                serde_json::json!({"type": "tool_result", "tool_use_id": id, "is_error": true, "content": content}),
            ));
    }
    // A success's text is never graded: nothing to report.
    records.push(call(1, "ok"));
    records.push(result_block(
        9,
        serde_json::json!({"type": "tool_result", "tool_use_id": "ok", "content": {"n": 1}}),
    ));
    let mut warn = warn_into();
    let results = tool_results(&records, "s", &mut warn);
    assert_eq!(
        [results["t0"].text.as_str(), results["t1"].text.as_str()],
        [r#"{"text":"denied","type":"text"}"#, "127"]
    );
    let tail = "not text or blocks: its JSON text is read as the error";
    assert_eq!(
            warn.warnings
                .iter()
                .map(|(_, w)| w.to_string())
                .collect::<Vec<_>>(),
            [
                format!("t.jsonl:2: content block 1: the `content` of the `tool_result` for `t0` is a JSON object, {tail}"),
                format!("t.jsonl:3: content block 1: the `content` of the `tool_result` for `t1` is a JSON number, {tail}"),
            ]
        );
    assert!(warn.lost.is_empty(), "nothing was skipped");
}

/// A failed result's `content` list lost, without a word, every item that was neither
/// text nor a block with text: a number, a list, a text block whose `text` was not text,
/// an object of no kind Claude Code writes. Each is read as its JSON text, in its place,
/// and named; items with no words (`null`, an image, a document, a tool reference, a text
/// block without `text`) are passed over, as before, since nothing of the error is lost.
#[test]
fn a_result_content_item_that_is_not_text_is_read_as_its_json_text() {
    let items = serde_json::json!([
        "exit 1",
        127,
        {"type": "text", "text": ["denied"]},
        null,
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}},
        {"type": "document", "source": {}},
        {"type": "tool_reference", "tool_name": "Grep"},
        {"type": "text"},
        {"type": "text", "text": null},
        {"type": "error", "message": "was rejected"},
        {"uri": "file:///p/a.rs"},
        [true],
        {"type": "text", "text": "done"},
    ]);
    let records = [
        call(1, "t"),
        result_block(
            2,
            serde_json::json!({"type": "tool_result", "tool_use_id": "t", "is_error": true, "content": items}),
        ),
        // A success's text is never graded: nothing to report.
        call(3, "ok"),
        result_block(
            4,
            serde_json::json!({"type": "tool_result", "tool_use_id": "ok", "content": [7, {"text": 8}]}),
        ),
    ];
    let mut warn = warn_into();
    let results = tool_results(&records, "s", &mut warn);
    assert_eq!(
            results["t"].text,
            "exit 1\n127\n[\"denied\"]\n{\"message\":\"was rejected\",\"type\":\"error\"}\n{\"uri\":\"file:///p/a.rs\"}\n[true]\ndone"
        );
    let item = |j: u32| format!("item {j} of the `content` of the `tool_result` for `t`");
    let read = "its JSON text is read as part of the error";
    assert_eq!(
            warn.warnings
                .iter()
                .map(|(_, w)| w.to_string())
                .collect::<Vec<_>>(),
            [
                format!("t.jsonl:2: content block 1: {} is a JSON number, not text or a block: {read}", item(1)),
                format!("t.jsonl:2: content block 1: the `text` of {} is a JSON array, not text: {read}", item(2)),
                format!("t.jsonl:2: content block 1: {} is an object without `text`, not an image, a document or a tool reference: {read}", item(9)),
                format!("t.jsonl:2: content block 1: {} is an object without `text`, not an image, a document or a tool reference: {read}", item(10)),
                format!("t.jsonl:2: content block 1: {} is a JSON array, not text or a block: {read}", item(11)),
            ]
        );
    assert!(warn.lost.is_empty(), "nothing was skipped");
}

/// A later `tool_result` for a call that already had one was read past without a word,
/// even when it said the call failed where the first said it succeeded. The first is
/// still read; one that differs in what is graded (whether the call failed, the error,
/// `toolUseResult.type`) is named with both lines. A copy, as a resumed session writes,
/// stays silent, and so does another success's text, which is never graded; a copy's
/// odd content is reported once, for the first.
#[test]
fn a_later_result_for_a_call_is_named_with_the_first_when_it_says_otherwise() {
    let result = |line: u64, id: &str, is_error: bool, content: Value| {
        result_block(
            line,
            serde_json::json!({"type": "tool_result", "tool_use_id": id, "is_error": is_error, "content": content}),
        )
    };
    let typed = |line: u64, id: &str, kind: Option<&str>| {
        let mut r = result(line, id, false, "ok".into());
        if let Some(kind) = kind {
            r.value["toolUseResult"] = serde_json::json!({"type": kind});
        }
        r
    };
    let records = [
        call(1, "fails"),
        call(2, "works"),
        call(3, "write"),
        result(4, "fails", true, serde_json::json!([1, "exit 1"])),
        result(5, "works", false, "ok".into()),
        typed(6, "write", Some("create")),
        // A resumed session's copies, and another success's text: nothing to say.
        result(7, "fails", true, serde_json::json!([1, "exit 1"])),
        result(8, "works", false, "all good".into()),
        typed(9, "write", Some("create")),
        result(10, "fails", false, "ok".into()),
        result(11, "works", true, "denied".into()),
        result(12, "fails", true, "exit 2".into()),
        typed(13, "write", Some("update")),
        typed(14, "write", None),
    ];
    let mut warn = warn_into();
    let results = tool_results(&records, "s", &mut warn);
    assert!(results["fails"].is_error);
    assert_eq!(results["fails"].text, "1\nexit 1");
    assert!(!results["works"].is_error);
    assert_eq!(results["write"].result_type.as_deref(), Some("create"));
    let later = |id: &str| format!("content block 1: a later `tool_result` for `{id}`");
    assert_eq!(
            warn.warnings
                .iter()
                .map(|(_, w)| w.to_string())
                .collect::<Vec<_>>(),
            [
                "t.jsonl:4: content block 1: item 0 of the `content` of the `tool_result` for `fails` is a JSON number, not text or a block: its JSON text is read as part of the error".to_owned(),
                format!("t.jsonl:10: {} says the call succeeded, where the first (t.jsonl:4) says it failed: the first is read", later("fails")),
                format!("t.jsonl:11: {} says the call failed, where the first (t.jsonl:5) says it succeeded: the first is read", later("works")),
                format!("t.jsonl:12: {} reports another error than the first (t.jsonl:4): the first is read", later("fails")),
                format!("t.jsonl:13: {} has `toolUseResult.type` `update`, where the first (t.jsonl:6) has `create`: the first is read", later("write")),
                format!("t.jsonl:14: {} has no `toolUseResult.type`, where the first (t.jsonl:6) has `create`: the first is read", later("write")),
            ]
        );
    assert!(warn.lost.is_empty(), "nothing was skipped");
}

#[test]
fn a_result_without_timestamp_still_fails_its_call() {
    let call = serde_json::json!({"type": "assistant", "sessionId": "s", "uuid": "a", "timestamp": "2025-09-03T00:00:01Z",
            "message": {"id": "m", "content": [{"type": "tool_use", "id": "t1", "name": "Write", "input": {}}]}});
    let result = serde_json::json!({"type": "user", "sessionId": "s", "uuid": "b",
            "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": "denied"}]}});
    let prompt = serde_json::json!({"type": "user", "sessionId": "s", "uuid": "c", "message": {"content": "go on"}});
    let file = entries_of(
        Path::new("t.jsonl"),
        vec![record(1, call), record(2, result), record(3, prompt)],
        1,
        Vec::new(),
    );
    let [call] = file.pending.as_slice() else {
        panic!("one entry: {}", file.pending.len())
    };
    assert!(!call.entry.result.success);
    assert_eq!(call.entry.result.duration, 0.0);
    assert_eq!(call.entry.error.as_deref(), Some("denied"));
    // The result's record lost nothing; the prompt's did, and so did a line not JSON.
    assert_eq!(file.lost, [("s".to_owned(), 2)]);
    let messages: Vec<_> = file
        .warnings
        .iter()
        .map(|(_, w)| w.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "the record has no `timestamp`: its tool results count, without a duration",
            "skipped: the record has no `timestamp`"
        ]
    );
}
