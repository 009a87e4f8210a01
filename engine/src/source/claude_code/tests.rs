//! The Claude Code reader's unit tests: detection, sessions, tool calls and their results,
//! sidechains and the lines it skips. Kept apart so `claude_code.rs` reads as the reader.

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
    read_paths(&[f.path().to_owned()])
}

fn read_paths(paths: &[PathBuf]) -> SourceRead {
    ClaudeCode
        .read_files(paths, &SessionFilter::All, &ReadOptions::default())
        .unwrap()
}

/// A transcript of `lines` read alone: the read, the file's path as warnings show it, and
/// the warnings as printed.
fn read_alone(lines: &[&str]) -> (SourceRead, String, Vec<String>) {
    let f = transcript(lines);
    let read = read_paths(&[f.path().to_owned()]);
    let shown = read.warnings.iter().map(ToString::to_string).collect();
    (read, f.path().display().to_string(), shown)
}

/// The operations of a session's entries, in order.
fn operations(session: &Session) -> Vec<&str> {
    session
        .entries
        .iter()
        .map(|e| e.operation.as_str())
        .collect()
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
    let read = read_paths(&[main.path().to_owned(), agent.path().to_owned()]);
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    let ops = operations(session);
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
fn a_queue_operation_record_is_claude_code_and_not_a_cleo_entry() {
    let queue = serde_json::json!({"type": "queue-operation", "operation": "dequeue",
            "timestamp": "2025-09-03T00:47:19.000Z", "sessionId": "s1"});
    let Value::Object(queue) = queue else {
        panic!("an object")
    };
    assert_eq!(ClaudeCode.sniff(&Evidence::Object(&queue)), Sniff::Certain);
    assert_eq!(
        super::super::CleoJsonl.sniff(&Evidence::Object(&queue)),
        Sniff::No
    );
    // A CLEO entry stays CLEO's, even one that has a `type`.
    let cleo = serde_json::json!({"timestamp": "2026-03-01T00:00:00Z", "sessionId": "s",
            "domain": "tasks", "operation": "find", "type": "user", "result": {"success": true}});
    let Value::Object(cleo) = cleo else {
        panic!("an object")
    };
    assert_eq!(ClaudeCode.sniff(&Evidence::Object(&cleo)), Sniff::Likely);
    assert_eq!(
        super::super::CleoJsonl.sniff(&Evidence::Object(&cleo)),
        Sniff::Likely
    );
}

#[test]
fn a_copied_call_keeps_the_copy_that_has_its_result() {
    // An earlier file ends before the result; the resumed session's file has it.
    let first = transcript(&[USER, CALLS_2]);
    let resumed = transcript(&[USER, CALLS_2, RESULTS]);
    for files in [[&first, &resumed], [&resumed, &first]] {
        let read = read_paths(&files.map(|f| f.path().to_owned()));
        let [session] = read.sessions.as_slice() else {
            panic!("one session")
        };
        let bash: Vec<_> = session
            .entries
            .iter()
            .filter(|e| e.operation == "Bash")
            .collect();
        assert_eq!(bash.len(), 1, "the copy is kept once");
        assert!(!bash[0].result.success, "the failure of the resumed copy");
        assert_eq!(bash[0].error.as_deref(), Some("exit 1"));
        assert_eq!(session.entries.len(), 2);
    }
}

/// Two copies of a call, each in its file with a result, kept the first file's result
/// without a word when the other's said the call succeeded, or reported another error.
/// The first is still read; the other is named with the earlier copy; a copy whose
/// result says the same (as a resumed session writes) stays silent.
#[test]
fn a_copied_call_whose_result_says_otherwise_is_named_and_the_first_read() {
    const PASSED: &str = r#"{"type":"user","sessionId":"s1","uuid":"u3","timestamp":"2025-09-03T00:00:06Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"ok"}]}}"#;
    const OTHER: &str = r#"{"type":"user","sessionId":"s1","uuid":"u3","timestamp":"2025-09-03T00:00:06Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"exit 2","is_error":true}]}}"#;
    const FAILED: &str = r#"{"type":"user","sessionId":"s1","uuid":"u3","timestamp":"2025-09-03T00:00:06Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"exit 1","is_error":true}]}}"#;
    let first = transcript(&[USER, CALLS_2, FAILED]);
    let copied = transcript(&[USER, CALLS_2, FAILED]);
    let passed = transcript(&[USER, CALLS_2, PASSED]);
    let other = transcript(&[USER, CALLS_2, OTHER]);
    let files = [&first, &copied, &passed, &other];
    let read = read_paths(&files.map(|f| f.path().to_owned()));
    let shown: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    let [_, _, passed, other] = files.map(|f| f.path().display());
    let at = format!("({}:2)", first.path().display());
    assert_eq!(
            shown,
            [
                format!("{passed}:2: the result of this copy of `Bash` call `toolu_2` says the call succeeded, where that of the earlier copy {at} says it failed: the earlier is read"),
                format!("{other}:2: the result of this copy of `Bash` call `toolu_2` reports another error than that of the earlier copy {at}: the earlier is read"),
            ]
        );
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    assert_eq!(operations(session), ["user", "Bash"]);
    assert!(!session.entries[1].result.success);
    assert_eq!(session.entries[1].error.as_deref(), Some("exit 1"));
}

/// Only a copy of a call was meant to be kept once: another call under the same id was
/// dropped without a word, and the session graded as if it had never been made.
#[test]
fn a_tool_id_reused_by_another_call_is_skipped_naming_both_calls() {
    const OTHER: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a3","timestamp":"2025-09-03T00:00:03Z","message":{"id":"msg_2","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Edit","input":{"file_path":"/a.rs"}}]}}"#;
    let f = transcript(&[USER, CALLS_1, CALLS_1, OTHER, CALLS_2, RESULTS]);
    let read = read_paths(&[f.path().to_owned()]);
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    let ops = operations(session);
    assert_eq!(
        ops,
        ["user", "Read", "Bash"],
        "the copy kept once, the other call skipped"
    );
    let path = f.path().display();
    assert_eq!(
            read.warnings,
            [SourceWarning {
                path: f.path().to_owned(),
                place: Place::Line(4),
                message: format!("skipped: `Edit` call `toolu_1` has the id of an earlier `Read` call ({path}:2) with other input: which of them a result answers cannot be told"),
            }]
        );
    assert_eq!((session.skipped_lines, read.skipped_lines), (1, 1));
}

/// The warnings about tool results were found (and printed) before the reader's others,
/// and those about a reused call id after every file's: a file's warnings did not read
/// in line order. Those of one line keep the order they were found in.
/// A record whose `type` is there but not text was said to have none.
#[test]
fn a_record_whose_type_is_not_text_is_skipped_saying_what_it_is() {
    let f = transcript(&[USER, r#"{"type":7,"sessionId":"s1","uuid":"x9"}"#, CALLS_1]);
    let read = read_paths(&[f.path().to_owned()]);
    let shown: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [format!(
            "{}:2: skipped: the record's `type` is a JSON number, not text",
            f.path().display()
        )]
    );
}

/// `"sessionId": 7` was read as no `sessionId`: the record joined its file's session
/// without a word, though it names some other session. It is skipped, as a record
/// whose `type` is not text is; a record holding only tool results loses nothing (a
/// result answers its call by id) and is reported; `null` is an absent `sessionId`.
#[test]
fn a_record_whose_session_id_is_not_text_is_skipped_saying_what_it_is() {
    const CALL: &str = r#"{"type":"assistant","sessionId":7,"uuid":"a2","timestamp":"2025-09-03T00:00:02Z","message":{"id":"msg_2","role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Bash","input":{"command":"false"}}]}}"#;
    const RESULT: &str = r#"{"type":"user","sessionId":[],"uuid":"u3","timestamp":"2025-09-03T00:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"boom","is_error":true}]}}"#;
    const PROMPT: &str = r#"{"type":"user","sessionId":{},"uuid":"u4","timestamp":"2025-09-03T00:00:04Z","message":{"role":"user","content":"try again"}}"#;
    const TEXT: &str = r#"{"type":"assistant","sessionId":true,"uuid":"a5","timestamp":"2025-09-03T00:00:05Z","message":{"id":"msg_5","role":"assistant","content":[{"type":"text","text":"done"}]}}"#;
    const UNSET: &str = r#"{"type":"assistant","sessionId":null,"uuid":"a6","timestamp":"2025-09-03T00:00:06Z","message":{"id":"msg_6","role":"assistant","content":[{"type":"text","text":"really done"}]}}"#;
    const SYSTEM: &str =
        r#"{"type":"system","sessionId":8,"uuid":"x7","timestamp":"2025-09-03T00:00:07Z"}"#;
    let lines = [USER, CALLS_1, CALL, RESULT, PROMPT, TEXT, UNSET, SYSTEM];
    let f = transcript(&lines);
    let text = lines.join("\n");
    let name = Path::new("-");
    let piped = ClaudeCode
        .read(
            &Input::Bytes {
                name,
                bytes: text.as_bytes(),
            },
            &SessionFilter::All,
            &ReadOptions::default(),
        )
        .unwrap();
    for (read, path) in [
        (read_paths(&[f.path().to_owned()]), f.path()),
        (piped, name),
    ] {
        let path = path.display();
        let shown: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
                shown,
                [
                    format!("{path}:3: skipped: the record's `sessionId` is a JSON number, not text"),
                    format!("{path}:4: the record's `sessionId` is a JSON array, not text: its tool results count"),
                    format!("{path}:5: skipped: the record's `sessionId` is a JSON object, not text"),
                    format!("{path}:6: skipped: the record's `sessionId` is a JSON boolean, not text"),
                ]
            );
        let [session] = read.sessions.as_slice() else {
            panic!("one session")
        };
        assert_eq!(session.id, "s1");
        assert_eq!(operations(session), ["user", "Read", "assistant"]);
        assert_eq!(session.entries[2].params["text"], "really done");
        assert!(
            !session.entries[1].result.success,
            "the result still counts"
        );
        assert_eq!((session.skipped_lines, read.skipped_lines), (3, 3));
    }
}

/// A call whose `input` is text, a list or a number was kept as `params.input` without
/// a word, and graded as a call without arguments by every rule reading them.
#[test]
fn a_tool_input_that_is_not_an_object_is_kept_naming_the_call_and_its_kind() {
    const ODD: &str = r#"{"type":"assistant","sessionId":"s1","uuid":"a3","timestamp":"2025-09-03T00:00:03Z","message":{"id":"msg_3","role":"assistant","content":[{"type":"text","text":"editing"},{"type":"tool_use","id":"toolu_3","name":"Edit","input":"{\"file_path\": \"/a.rs\"}"},{"type":"tool_use","id":"toolu_4","name":"Bash","input":["ls"]},{"type":"tool_use","id":"toolu_5","name":"Glob","input":5},{"type":"tool_use","id":"toolu_6","name":"TodoWrite","input":null}]}}"#;
    let (read, path, shown) = read_alone(&[USER, CALLS_1, ODD]);
    let tail = "not an object: it is kept as `params.input`, and rules reading the tool's arguments find none";
    assert_eq!(
            shown,
            [
                format!("{path}:3: content block 1: the `input` of `Edit` call `toolu_3` is a JSON string, {tail}"),
                format!("{path}:3: content block 2: the `input` of `Bash` call `toolu_4` is a JSON array, {tail}"),
                format!("{path}:3: content block 3: the `input` of `Glob` call `toolu_5` is a JSON number, {tail}"),
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
            "assistant",
            "Edit",
            "Bash",
            "Glob",
            "TodoWrite"
        ]
    );
    let params: Vec<String> = session.entries[3..]
        .iter()
        .map(|e| serde_json::to_string(&e.params).unwrap())
        .collect();
    assert_eq!(
        params,
        [
            r#"{"input":"{\"file_path\": \"/a.rs\"}"}"#,
            r#"{"input":["ls"]}"#,
            r#"{"input":5}"#,
            "{}",
        ]
    );
    assert_eq!(read.skipped_lines, 0, "nothing was skipped");
}

mod odd_records;
