//! The Claude Code reader's tests of records whose values are not what the format says: ids
//! that are not text (`messageId`, `uuid`, `parentUuid`, `agentId`, a call's or result's
//! id) or that read alike, an empty `sessionId`, a text block that is no text, a lone
//! surrogate; each is named in a warning, and those warnings come in file and line order.

use super::*;

/// The `messageId` of each entry of `session`, in order.
fn message_ids(session: &Session) -> Vec<Option<&str>> {
    texts_of(session, "messageId")
}

/// The metadata `key` of each entry of `session` when it is text, in order.
fn texts_of<'s>(session: &'s Session, key: &str) -> Vec<Option<&'s str>> {
    session
        .entries
        .iter()
        .map(|e| match e.metadata.get(key) {
            Some(MetaRef::Json(Value::String(id))) => Some(id.as_str()),
            _ => None,
        })
        .collect()
}

/// `"id": 7` in a message was read as no id: the two lines Claude Code wrote for one
/// message no longer shared it, and their calls stopped counting as made together,
/// without a word. A number is read as `number:7`, so its lines still share it without
/// joining a message whose id is the text `"7"`; a boolean (or a list, an object) tells
/// no message from another, and its record stands alone; both are named.
#[test]
fn a_message_id_that_is_not_text_is_named_and_a_number_still_groups_its_lines() {
    const FIRST: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a2","timestamp":"2025-09-03T00:00:02Z","message":{"id":7,"role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"/b.rs"}}]}}"#;
    const SECOND: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a3","timestamp":"2025-09-03T00:00:03Z","message":{"id":7,"role":"assistant","content":[{"type":"tool_use","id":"toolu_3","name":"Read","input":{"file_path":"/c.rs"}}]}}"#;
    const FLAG: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a4","timestamp":"2025-09-03T00:00:04Z","message":{"id":true,"role":"assistant","content":[{"type":"tool_use","id":"toolu_4","name":"Read","input":{"file_path":"/d.rs"}}]}}"#;
    const UNSET: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a5","timestamp":"2025-09-03T00:00:05Z","message":{"id":null,"role":"assistant","content":[{"type":"text","text":"read"}]}}"#;
    const TEXT: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a6","timestamp":"2025-09-03T00:00:06Z","message":{"id":"7","role":"assistant","content":[{"type":"tool_use","id":"toolu_6","name":"Read","input":{"file_path":"/e.rs"}}]}}"#;
    let (read, path, shown) = read_alone(&[USER, CALLS_1, FIRST, SECOND, FLAG, UNSET, TEXT]);
    let number = "`message.id` is the number `7`, not text: it is read as `number:7`, so the lines of that message still count as one message, apart from any whose id is the text `7`";
    assert_eq!(
            shown,
            [
                format!("{path}:3: {number}"),
                format!("{path}:4: {number}"),
                format!("{path}:5: `message.id` is a JSON boolean, not text: the record is read as a message of its own, its calls not made together with those of other lines"),
            ]
        );
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    assert_eq!(
        message_ids(session),
        [
            None,
            Some("msg_1"),
            Some("number:7"),
            Some("number:7"),
            Some("a4"),
            Some("a5"),
            Some("7")
        ]
    );
    assert_eq!(read.skipped_lines, 0, "nothing was skipped");
}

/// A `uuid` that was a number (or a list, an object, a boolean) was read as none, without
/// a word: a resumed session's copy of the record was read twice, and an older
/// transcript's subagent lines no longer chained into one agent. A number is read as
/// `number:N` (apart from the text `"N"`); any other value leaves the record on its own.
#[test]
fn a_uuid_that_is_not_text_is_named_and_a_number_still_reads_a_copy_once() {
    const PROMPT: &str = r#"{"type":"user","sessionId":"s1","uuid":7,"timestamp":"2025-09-03T00:00:01Z","message":{"role":"user","content":"go on"}}"#;
    const TEXT: &str = r#"{"type":"user","sessionId":"s1","uuid":"7","timestamp":"2025-09-03T00:00:02Z","message":{"role":"user","content":"go on"}}"#;
    const LIST: &str = r#"{"type":"user","sessionId":"s1","uuid":[7],"timestamp":"2025-09-03T00:00:03Z","message":{"role":"user","content":"and on"}}"#;
    const AGENT_1: &str = r#"{"type":"assistant","sessionId":"s1","uuid":8,"parentUuid":null,"isSidechain":true,"timestamp":"2025-09-03T00:00:04Z","message":{"role":"assistant","content":[{"type":"text","text":"looking"}]}}"#;
    const AGENT_2: &str = r#"{"type":"assistant","sessionId":"s1","uuid":9,"parentUuid":8,"isSidechain":true,"timestamp":"2025-09-03T00:00:05Z","message":{"role":"assistant","content":[{"type":"text","text":"found"}]}}"#;
    let (read, path, shown) =
        read_alone(&[USER, PROMPT, PROMPT, TEXT, LIST, LIST, AGENT_1, AGENT_2]);
    let number = |line: u8, n: u8| {
        format!("{path}:{line}: `uuid` is the number `{n}`, not text: it is read as `number:{n}`, so a copy of the record (as a resumed session writes) is still read once")
    };
    let list = |n: u8| {
        format!("{path}:{n}: `uuid` is a JSON array, not text: the record is read as one of its own, so a copy of it (as a resumed session writes) is read again")
    };
    assert_eq!(
            shown,
            [
                number(2, 7),
                number(3, 7),
                list(5),
                list(6),
                number(7, 8),
                number(8, 9),
                format!("{path}:8: `parentUuid` is the number `8`, not text: it is read as `number:8`, so the record still joins the subagent of the record whose `uuid` is that number"),
            ]
        );
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    let texts: Vec<&Value> = session.entries.iter().map(|e| &e.params["text"]).collect();
    assert_eq!(
        texts,
        [
            "fix the bug",
            "go on",
            "go on",
            "and on",
            "and on",
            "looking",
            "found"
        ],
        "the copy of `7` read once, `\"7\"` apart, each copy of `[7]` read"
    );
    let meta = |i: usize, key: &str| match session.entries[i].metadata.get(key) {
        Some(MetaRef::Json(Value::String(text))) => Some(text.as_str()),
        _ => None,
    };
    assert_eq!(
        [meta(1, "uuid"), meta(2, "uuid"), meta(3, "uuid")],
        [Some("number:7"), Some("7"), None]
    );
    // The subagent's lines chain by their number uuids into one agent.
    assert_eq!(
        [meta(5, "agentId"), meta(6, "agentId")],
        [Some("number:8"), Some("number:8")]
    );
    assert_eq!(read.skipped_lines, 0, "nothing was skipped");
}

/// A subagent record of an older transcript (no `agentId`) whose `parentUuid` was a
/// boolean, a list or an object was read as having no parent, without a word: it started
/// a subagent of its own, and one subagent was counted as two. It is named; a number still
/// links to the record whose `uuid` is that number.
#[test]
fn a_parent_uuid_that_is_not_text_is_named_and_a_number_still_links_its_record() {
    let side = |line: u8, uuid: &str, parent: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"s1","uuid":{uuid},"parentUuid":{parent},"isSidechain":true,"timestamp":"2025-09-03T00:00:0{line}Z","message":{{"role":"assistant","content":[{{"type":"text","text":"step {line}"}}]}}}}"#
        )
    };
    let lines = [
            side(2, r#""b2""#, "null"),
            side(3, r#""b3""#, r#""b2""#),
            side(4, r#""b4""#, "true"),
            side(5, "7", r#""b4""#),
            side(6, r#""b6""#, "7"),
            // The main agent's records never read `parentUuid`: nothing to say.
            r#"{"type":"user","sessionId":"s1","uuid":"u7","parentUuid":[1],"timestamp":"2025-09-03T00:00:07Z","message":{"role":"user","content":"thanks"}}"#.to_owned(),
        ];
    let mut all = vec![USER];
    all.extend(lines.iter().map(String::as_str));
    let (read, path, shown) = read_alone(&all);
    assert_eq!(
            shown,
            [
                format!("{path}:4: `parentUuid` is a JSON boolean, not text: it is read as no parent, so the record starts a subagent of its own"),
                format!("{path}:5: `uuid` is the number `7`, not text: it is read as `number:7`, so a copy of the record (as a resumed session writes) is still read once"),
                format!("{path}:6: `parentUuid` is the number `7`, not text: it is read as `number:7`, so the record still joins the subagent of the record whose `uuid` is that number"),
            ]
        );
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    assert_eq!(
        texts_of(session, "agentId"),
        [
            None,
            Some("b2"),
            Some("b2"),
            Some("b4"),
            Some("b4"),
            Some("b4"),
            None
        ]
    );
    assert_eq!(read.skipped_lines, 0, "nothing was skipped");
}

/// An `agentId` that was a number (or a boolean, a list, an object) was read as none,
/// without a word: the subagent was named by its chain of `parentUuid` links instead, which
/// a record between them that makes no entry breaks. A number is read as `number:N` (apart
/// from the text `"N"`); any other value is named and read as no `agentId`.
#[test]
fn an_agent_id_that_is_not_text_is_named_and_a_number_still_names_its_agent() {
    let side = |line: u8, agent: &str, parent: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"s1","uuid":"b{line}","parentUuid":{parent},"isSidechain":true,"agentId":{agent},"timestamp":"2025-09-03T00:00:0{line}Z","message":{{"role":"assistant","content":[{{"type":"text","text":"step {line}"}}]}}}}"#
        )
    };
    let lines = [
            side(2, "7", "null"),
            side(3, "7", r#""gone""#),
            side(4, r#""7""#, "null"),
            side(5, "true", "null"),
            side(6, "true", r#""b5""#),
            r#"{"type":"user","sessionId":"s1","uuid":"u7","agentId":["x"],"timestamp":"2025-09-03T00:00:07Z","message":{"role":"user","content":"thanks"}}"#.to_owned(),
        ];
    let mut all = vec![USER];
    all.extend(lines.iter().map(String::as_str));
    let (read, path, shown) = read_alone(&all);
    let number = "`agentId` is the number `7`, not text: it is read as `number:7`, so the records of that agent still count as one agent's";
    let flag = "`agentId` is a JSON boolean, not text: it is read as no `agentId`, so the subagent is named by the first record of its `parentUuid` chain";
    assert_eq!(
        shown,
        [
            format!("{path}:2: {number}"),
            format!("{path}:3: {number}"),
            format!("{path}:5: {flag}"),
            format!("{path}:6: {flag}"),
            format!("{path}:7: `agentId` is a JSON array, not text: it is read as no `agentId`"),
        ]
    );
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    assert_eq!(
        texts_of(session, "agentId"),
        [
            None,
            Some("number:7"),
            Some("number:7"),
            Some("7"),
            Some("b5"),
            Some("b5"),
            None
        ]
    );
    assert_eq!(read.skipped_lines, 0, "nothing was skipped");
}

/// A number id is read as `number:7`, and the text `"number:7"` was read as written: the
/// two were one id, without a word, for every kind of id (two messages' calls made
/// together, a prompt read as a copy of another, two subagents one agent). A text that
/// begins with a mark is read as `text:` before it, and named; `"text:number:7"` too, so
/// it is not taken for the text `"number:7"`.
#[test]
fn a_text_id_spelled_as_a_number_is_read_stays_apart_from_that_number_for_each_id_kind() {
    let read_call = |line: u8, id: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"s1","uuid":"a{line}","timestamp":"2025-09-03T00:00:{line:02}Z","message":{{"id":{id},"role":"assistant","content":[{{"type":"tool_use","id":"toolu_{line}","name":"Read","input":{{"file_path":"/{line}.rs"}}}}]}}}}"#
        )
    };
    let prompt = |line: u8, uuid: &str| {
        format!(
            r#"{{"type":"user","sessionId":"s1","uuid":{uuid},"timestamp":"2025-09-03T00:00:{line:02}Z","message":{{"role":"user","content":"go on"}}}}"#
        )
    };
    let side = |line: u8, uuid: &str, parent: &str, agent: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"s1","uuid":{uuid},"parentUuid":{parent},"isSidechain":true{agent},"timestamp":"2025-09-03T00:00:{line:02}Z","message":{{"role":"assistant","content":[{{"type":"text","text":"step {line}"}}]}}}}"#
        )
    };
    let lines = [
        read_call(2, "7"),
        read_call(3, r#""number:7""#),
        prompt(4, "7"),
        prompt(5, r#""number:7""#),
        side(6, "8", "null", ""),
        side(7, r#""b7""#, r#""number:8""#, ""),
        side(8, r#""b8""#, "null", r#","agentId":9"#),
        side(9, r#""b9""#, "null", r#","agentId":"number:9""#),
        read_call(10, r#""text:number:7""#),
    ];
    let mut all = vec![USER];
    all.extend(lines.iter().map(String::as_str));
    let (read, path, shown) = read_alone(&all);
    let marked = |line: u8, key: &str, id: &str| {
        format!("{path}:{line}: `{key}` is the text `{id}`, which begins as this reader marks an id's kind (`number:`, `text:`, `uuid:` or `line:`): it is read as `text:{id}`, apart from any id written otherwise")
    };
    assert_eq!(
            shown,
            [
                format!("{path}:2: `message.id` is the number `7`, not text: it is read as `number:7`, so the lines of that message still count as one message, apart from any whose id is the text `7`"),
                marked(3, "message.id", "number:7"),
                format!("{path}:4: `uuid` is the number `7`, not text: it is read as `number:7`, so a copy of the record (as a resumed session writes) is still read once"),
                marked(5, "uuid", "number:7"),
                format!("{path}:6: `uuid` is the number `8`, not text: it is read as `number:8`, so a copy of the record (as a resumed session writes) is still read once"),
                marked(7, "parentUuid", "number:8"),
                format!("{path}:8: `agentId` is the number `9`, not text: it is read as `number:9`, so the records of that agent still count as one agent's"),
                marked(9, "agentId", "number:9"),
                marked(10, "message.id", "text:number:7"),
            ]
        );
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    assert_eq!(
        operations(session),
        [
            "user",
            "Read",
            "Read",
            "user",
            "user",
            "assistant",
            "assistant",
            "assistant",
            "assistant",
            "Read"
        ],
        "the prompt of `\"number:7\"` is no copy of that of `7`"
    );
    assert_eq!(
        message_ids(session),
        [
            None,
            Some("number:7"),
            Some("text:number:7"),
            None,
            None,
            Some("number:8"),
            Some("b7"),
            Some("b8"),
            Some("b9"),
            Some("text:text:number:7"),
        ]
    );
    assert_eq!(
        texts_of(session, "uuid")[3..5],
        [Some("number:7"), Some("text:number:7")]
    );
    // `b7`'s parent is no record of the file: it starts a subagent of its own.
    assert_eq!(
        texts_of(session, "agentId")[5..9],
        [
            Some("number:8"),
            Some("b7"),
            Some("number:9"),
            Some("text:number:9")
        ]
    );
    assert_eq!(read.skipped_lines, 0, "nothing was skipped");
}

/// Text read as the transcript file `name`, so that warnings and `FILE:LINE` name it.
fn read_named(name: &str, lines: &[&str]) -> SourceRead {
    let text = lines.join("\n");
    ClaudeCode
        .read(
            &Input::Bytes {
                name: Path::new(name),
                bytes: text.as_bytes(),
            },
            &SessionFilter::All,
            &ReadOptions::default(),
        )
        .unwrap()
}

/// A record at second `line` of `kind` whose `uuid` is `uuid`, its content `content`.
fn with_uuid(line: u8, kind: &str, uuid: &str, content: &str) -> String {
    format!(
        r#"{{"type":"{kind}","sessionId":"s1","uuid":"{uuid}","timestamp":"2025-09-03T00:00:{line:02}Z","message":{{"role":"{kind}","content":{content}}}}}"#
    )
}

/// A record's message was keyed `message:{uuid}` and its block `i` `message:{uuid}:{i}`,
/// so the record `x:0` and block 0 of the record `x` shared a key: with the same text one
/// was dropped without a word, with another kind of message it was skipped as a call
/// "with the id of an earlier call". Keyed by their parts, they are apart; a record whose
/// `uuid` is an earlier one's but whose message is not is still skipped, as a message.
#[test]
fn a_record_uuid_that_reads_like_a_block_of_another_is_no_copy_of_that_block() {
    let block = with_uuid(1, "assistant", "x", r#"[{"type":"text","text":"Done."}]"#);
    let whole = with_uuid(2, "assistant", "x:0", r#""Done.""#);
    let prompt = with_uuid(3, "user", "x:0:0", r#""thanks""#);
    let copy = with_uuid(4, "assistant", "x", r#"[{"type":"text","text":"Done."}]"#);
    let read = read_named("t.jsonl", &[&block, &whole, &prompt, &copy]);
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    assert_eq!(operations(session), ["assistant", "assistant", "user"]);
    assert_eq!(
        texts_of(session, "uuid"),
        [Some("x"), Some("x:0"), Some("x:0:0")]
    );

    let other_text = with_uuid(
        5,
        "assistant",
        "x",
        r#"[{"type":"text","text":"Not done."}]"#,
    );
    let other_kind = with_uuid(6, "user", "x:0", r#""Done.""#);
    let other_prompt = with_uuid(7, "user", "x:0:0", r#""no thanks""#);
    let read = read_named(
        "t.jsonl",
        &[
            &block,
            &whole,
            &prompt,
            &other_text,
            &other_kind,
            &other_prompt,
        ],
    );
    let shown: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
            shown,
            [
                "t.jsonl:4: content block 0 skipped: the record's `uuid` `x` is that of an earlier record (t.jsonl:1), whose block 0 has other text: which of the two the session holds cannot be told",
                "t.jsonl:5: skipped: the record's `uuid` `x:0` is that of an earlier record (t.jsonl:2), whose message is the `assistant`'s, not the `user`'s: which of the two the session holds cannot be told",
                "t.jsonl:6: skipped: the record's `uuid` `x:0:0` is that of an earlier record (t.jsonl:3), whose `user` message has other text: which of the two the session holds cannot be told",
            ]
        );
    assert_eq!(
        operations(&read.sessions[0]),
        ["assistant", "assistant", "user"]
    );
    assert_eq!(read.skipped_lines, 3);
}

/// An assistant record without `message.id` is named by its `uuid`, else by `FILE:LINE`,
/// which could be another line's message id: the record `7` joined the message `7`, its
/// call counted as made together with that message's, without a word. Such a name that is
/// also given another way in the session is read marked (`uuid:7`, `line:t.jsonl:5`),
/// as no written id reads, and named once per file; one given only one way is shown as
/// it was, as in every transcript where no two names meet.
#[test]
fn a_message_named_for_want_of_an_id_is_not_the_message_of_that_id() {
    let read_call = |line: u8, id: &str, uuid: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"s1"{uuid},"timestamp":"2025-09-03T00:00:{line:02}Z","message":{{{id}"role":"assistant","content":[{{"type":"tool_use","id":"toolu_{line}","name":"Read","input":{{"file_path":"/{line}.rs"}}}},{{"type":"tool_use","id":"toolu_{line}b","name":"Read","input":{{"file_path":"/{line}b.rs"}}}}]}}}}"#
        )
    };
    let lines = [
        read_call(1, r#""id":"7","#, r#","uuid":"a1""#),
        read_call(2, "", r#","uuid":"7""#),
        read_call(3, r#""id":"t.jsonl:4","#, r#","uuid":"a3""#),
        read_call(4, "", ""),
        read_call(5, "", r#","uuid":"t.jsonl:6""#),
        read_call(6, "", ""),
        // Named only by its `uuid`, or only by its place: shown as it is.
        read_call(7, "", r#","uuid":"a7""#),
        read_call(8, "", ""),
        // A written id that begins as a mark is read as text: `uuid:7` is no record's.
        read_call(9, r#""id":"uuid:7","#, r#","uuid":"a9""#),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let read = read_named("t.jsonl", &lines);
    let shown: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    let by_uuid = |line: u8, name: &str| {
        format!("t.jsonl:{line}: the record has no `message.id`, and its `uuid`, `{name}`, which names its message instead, is another message's id too: its message is read as `uuid:{name}`, so the record does not count as part of that message")
    };
    let by_place = |line: u8| {
        format!("t.jsonl:{line}: the record has no `message.id` or `uuid`, and its place, `t.jsonl:{line}`, which names its message instead, is another message's id too: its message is read as `line:t.jsonl:{line}`, so the record does not count as part of that message")
    };
    assert_eq!(
            shown,
            [
                by_uuid(2, "7"),
                by_place(4),
                by_uuid(5, "t.jsonl:6"),
                by_place(6),
                "t.jsonl:9: `message.id` is the text `uuid:7`, which begins as this reader marks an id's kind (`number:`, `text:`, `uuid:` or `line:`): it is read as `text:uuid:7`, apart from any id written otherwise".to_owned(),
            ]
        );
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    let ids = message_ids(session);
    let each = |id| [Some(id), Some(id)];
    assert_eq!(
        ids,
        [
            each("7"),
            each("uuid:7"),
            each("t.jsonl:4"),
            each("line:t.jsonl:4"),
            each("uuid:t.jsonl:6"),
            each("line:t.jsonl:6"),
            each("a7"),
            each("t.jsonl:8"),
            each("text:uuid:7"),
        ]
        .concat()
    );
    assert_eq!(read.skipped_lines, 0, "nothing was skipped");
}

/// A subagent Claude Code 1.0 wrote without `agentId` is named by the `uuid` of the first
/// record of its `parentUuid` chain, which could be another subagent's `agentId`, in the
/// same file or another of the session: the two counted as one agent, without a word.
/// The chain's name is then read as `uuid:u5`, and named once per file.
#[test]
fn a_subagent_named_by_its_first_record_is_not_the_agent_with_that_id() {
    let side = |line: u8, uuid: &str, parent: &str, agent: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"s1","uuid":"{uuid}","parentUuid":{parent},"isSidechain":true{agent},"timestamp":"2025-09-03T00:00:{line:02}Z","message":{{"id":"m{line}","role":"assistant","content":[{{"type":"text","text":"step {line}"}}]}}}}"#
        )
    };
    let main = transcript(&[
        USER,
        &side(2, "b2", "null", r#","agentId":"u5""#),
        &side(3, "u5", "null", ""),
        &side(4, "b4", r#""u5""#, ""),
        &side(5, "b5", "null", ""),
    ]);
    let agent = transcript(&[&side(6, "c6", "null", r#","agentId":"b5""#)]);
    let read = read_paths(&[main.path().to_owned(), agent.path().to_owned()]);
    let shown: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    let chain = |line: u8, name: &str| {
        format!("{}:{line}: the subagent record has no `agentId`, and the `uuid` of the first record of its `parentUuid` chain, `{name}`, which names its subagent instead, is another agent's `agentId` too: its subagent is read as `uuid:{name}`, so the two do not count as one agent", main.path().display())
    };
    assert_eq!(shown, [chain(3, "u5"), chain(5, "b5")]);
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    assert_eq!(
        texts_of(session, "agentId"),
        [
            None,
            Some("u5"),
            Some("uuid:u5"),
            Some("uuid:u5"),
            Some("uuid:b5"),
            Some("b5")
        ]
    );
}

/// `"sessionId": ""` became a session named `""`, without a word. It names no session:
/// the record is its file's session's, as with `null`, and a warning says so.
#[test]
fn an_empty_session_id_is_read_as_the_files_session_saying_so() {
    const EMPTY: &str = r#"{"type":"assistant","sessionId":"","uuid":"a2","timestamp":"2025-09-03T00:00:02Z","message":{"id":"msg_2","role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Bash","input":{"command":"false"}}]}}"#;
    const RESULT: &str = r#"{"type":"user","sessionId":"","uuid":"u3","timestamp":"2025-09-03T00:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"boom","is_error":true}]}}"#;
    const FIRST: &str = r#"{"type":"user","sessionId":"","uuid":"u0","timestamp":"2025-09-03T00:00:00Z","message":{"role":"user","content":"go"}}"#;
    // The file's session is its first `sessionId` that names one.
    let (read, path, shown) = read_alone(&[FIRST, USER, EMPTY, RESULT]);
    let empty = "the record's `sessionId` is empty: it is read as its file's session, `s1`";
    assert_eq!(
            shown,
            [
                format!("{path}:1: {empty}"),
                format!("{path}:3: {empty}"),
                format!("{path}:4: content block 0 skipped: the `tool_result` for `toolu_9` answers no `tool_use` in the file, so the error it reports is not graded"),
                format!("{path}:4: {empty}"),
            ]
        );
    let [session] = read.sessions.as_slice() else {
        panic!(
            "one session: {:?}",
            read.sessions.iter().map(|s| &s.id).collect::<Vec<_>>()
        )
    };
    assert_eq!(session.id, "s1");
    assert_eq!(operations(session), ["user", "user", "Bash"]);
    assert_eq!(session.skipped_lines, 1, "the result's line, in `s1`");
    // A file whose every `sessionId` is empty is named by the file.
    let f = transcript(&[FIRST]);
    let read = read_paths(&[f.path().to_owned()]);
    let stem = f.path().file_stem().unwrap().to_string_lossy().into_owned();
    assert_eq!(read.sessions[0].id, stem);
    assert_eq!(
        read.warnings[0].message,
        format!("the record's `sessionId` is empty: it is read as its file's session, `{stem}`")
    );
}

/// A `text` block whose `text` was a number (or a list, an object, a boolean) was
/// dropped without a word, in a prompt and in the assistant's reply: it is skipped
/// naming the block and counted as lost; the record's other text is kept.
#[test]
fn a_text_block_whose_text_is_not_text_is_skipped_naming_the_block() {
    const PROMPT: &str = r#"{"type":"user","sessionId":"s1","uuid":"u2","timestamp":"2025-09-03T00:00:02Z","message":{"role":"user","content":[{"type":"text","text":["fix it"]},{"type":"text","text":"please"},{"type":"text","text":null}]}}"#;
    const REPLY: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a3","timestamp":"2025-09-03T00:00:03Z","message":{"id":"msg_3","role":"assistant","content":[{"type":"text","text":5},{"type":"text"},{"type":"text","text":"done"}]}}"#;
    let (read, path, shown) = read_alone(&[USER, PROMPT, REPLY]);
    assert_eq!(
            shown,
            [
                format!("{path}:2: content block 0 skipped: the `text` of a `text` block is a JSON array, not text"),
                format!("{path}:3: content block 0 skipped: the `text` of a `text` block is a JSON number, not text"),
            ]
        );
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    let texts: Vec<&Value> = session.entries.iter().map(|e| &e.params["text"]).collect();
    assert_eq!(texts, ["fix the bug", "please", "done"]);
    assert_eq!((session.skipped_lines, read.skipped_lines), (2, 2));
}

/// `"id": 7` in a call, or `"tool_use_id": 7` in a result, was reported as a call
/// "without `id` or `name`" or a result "without `tool_use_id`": the field is there,
/// and the warning says what it is.
#[test]
fn a_call_or_result_id_that_is_not_text_is_named_for_what_it_is() {
    const CALLS: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a2","timestamp":"2025-09-03T00:00:02Z","message":{"id":"msg_2","role":"assistant","content":[{"type":"tool_use","id":7,"name":"Bash","input":{}},{"type":"tool_use","id":"toolu_3","name":["Bash"],"input":{}},{"type":"tool_use","name":"Bash","input":{}}]}}"#;
    const RESULTS: &str = r#"{"type":"user","sessionId":"s1","uuid":"u3","timestamp":"2025-09-03T00:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":7,"content":"boom","is_error":true},{"type":"tool_result","tool_use_id":{},"content":"ok"},{"type":"tool_result","content":"boom","is_error":true},{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}}"#;
    let (read, path, shown) = read_alone(&[USER, CALLS_1, CALLS, RESULTS]);
    assert_eq!(
            shown,
            [
                format!("{path}:3: content block 0 skipped: the `id` of a `tool_use` is a JSON number, not text"),
                format!("{path}:3: content block 1 skipped: the `name` of `tool_use` `toolu_3` is a JSON array, not text"),
                format!("{path}:3: content block 2 skipped: a `tool_use` without `id` or `name`"),
                format!("{path}:4: content block 0 skipped: the `tool_use_id` of a `tool_result` is a JSON number, not text, so the error it reports is not graded"),
                format!("{path}:4: content block 1 skipped: the `tool_use_id` of a `tool_result` is a JSON object, not text"),
                format!("{path}:4: content block 2 skipped: a `tool_result` without `tool_use_id`, so the error it reports is not graded"),
            ]
        );
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    assert_eq!(operations(session), ["user", "Read"]);
    assert!(session.entries[1].result.success);
    assert_eq!(read.skipped_lines, 2);
}

#[test]
fn a_files_warnings_come_in_line_order_results_among_the_others() {
    const ORPHAN: &str = r#"{"type":"user","sessionId":"s1","uuid":"u4","timestamp":"2025-09-03T00:00:04Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"exit 1","is_error":true}]}}"#;
    const NO_TYPE: &str = r#"{"sessionId":"s1","uuid":"x5"}"#;
    const BAD_BLOCK: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a6","timestamp":"2025-09-03T00:00:06Z","message":{"id":"msg_6","role":"assistant","content":[7]}}"#;
    const ORPHAN_NO_TIME: &str = r#"{"type":"user","sessionId":"s1","uuid":"u7","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_8","content":"ok"}]}}"#;
    const OTHER: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a8","timestamp":"2025-09-03T00:00:08Z","message":{"id":"msg_8","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Edit","input":{"file_path":"/a.rs"}}]}}"#;
    let (_, path, shown) = read_alone(&[
        USER,
        CALLS_1,
        "{not json",
        ORPHAN,
        NO_TYPE,
        BAD_BLOCK,
        ORPHAN_NO_TIME,
        OTHER,
    ]);
    assert_eq!(
            shown,
            [
                format!("{path}:3: skipped: not valid JSON: key must be a string (column 2)"),
                format!("{path}:4: content block 0 skipped: the `tool_result` for `toolu_9` answers no `tool_use` in the file, so the error it reports is not graded"),
                format!("{path}:5: skipped: the record has no `type`"),
                format!("{path}:6: content block 0 skipped: a JSON number, not an object"),
                format!("{path}:7: content block 0 skipped: the `tool_result` for `toolu_8` answers no `tool_use` in the file"),
                format!("{path}:7: the record has no `timestamp`: its tool results count, without a duration"),
                format!("{path}:8: skipped: `Edit` call `toolu_1` has the id of an earlier `Read` call ({path}:2) with other input: which of them a result answers cannot be told"),
            ]
        );
}

/// A tool output cut inside a character holds a lone surrogate (`\ud83d`), which
/// serde_json refused: the whole line, a user turn or a tool result, was skipped.
#[test]
fn a_line_with_a_lone_surrogate_is_read_with_the_replacement_character() {
    let cut = USER.replace("fix the bug", "fix the bug \\ud83d");
    let cut_too = CALLS_1.replace("/a.rs", "/a\\udc00.rs");
    let f = transcript(&[&cut, &cut_too]);
    let read = read_paths(&[f.path().to_owned()]);
    let path = f.path().display();
    let shown: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [format!(
            "{path}:1: {} (2 lines)",
            crate::json::LONE_SURROGATE_READ
        )]
    );
    assert_eq!(read.skipped_lines, 0);
    let entries = &read.sessions[0].entries;
    assert_eq!(entries.len(), 2);
    assert_eq!(
        entries[1].params.get("file_path"),
        Some(&serde_json::Value::from("/a\u{fffd}.rs"))
    );
}

/// Each file's warnings come together, in line order, in the order the files were read.
#[test]
fn warnings_of_several_files_come_file_by_file() {
    const OTHER: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a3","timestamp":"2025-09-03T00:00:03Z","message":{"id":"msg_2","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Edit","input":{"file_path":"/a.rs"}}]}}"#;
    let first = transcript(&[USER, CALLS_1, OTHER, "{not json"]);
    let second = transcript(&["[]", USER]);
    let read = read_paths(&[first.path().to_owned(), second.path().to_owned()]);
    let places: Vec<(PathBuf, Place)> = read
        .warnings
        .iter()
        .map(|w| (w.path.clone(), w.place.clone()))
        .collect();
    assert_eq!(
        places,
        [
            (first.path().to_owned(), Place::Line(3)),
            (first.path().to_owned(), Place::Line(4)),
            (second.path().to_owned(), Place::Line(1)),
        ]
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
    let read = read_paths(&[f.path().to_owned()]);
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
