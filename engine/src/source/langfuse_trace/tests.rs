//! Unit tests of the Langfuse trace reader: observations to entries, order and the
//! shapes of exports it accepts or refuses.

use super::*;
use crate::entry::MetaRef;
use std::io::Write as _;

/// The Claude Agent SDK wraps a tool call's arguments in `{"input": {...}}`; read as
/// written, rules looking for `file_path` or `command` found none and passed.
#[test]
fn a_tool_input_wrapped_by_the_agent_sdk_is_read_as_the_call_s_arguments() {
    let read = read(
            r#"{"trace": {"id": "t1", "name": "run", "timestamp": "2025-12-22T10:00:00.000Z"},
                "observations": [
                 {"id": "a", "type": "TOOL", "name": "Bash", "startTime": "2025-12-22T10:00:01.000Z", "input": "{\"input\":{\"command\":\"cat /etc/hosts\"}}"},
                 {"id": "b", "type": "TOOL", "name": "Other", "startTime": "2025-12-22T10:00:02.000Z", "input": {"input": "text", "n": 1}},
                 {"id": "c", "type": "SPAN", "name": "s", "startTime": "2025-12-22T10:00:03.000Z", "input": {"input": {"x": 1}}}]}"#,
        )
        .unwrap();
    let entries = &read.sessions[0].entries;
    assert_eq!(entries[1].params["command"], "cat /etc/hosts");
    assert_eq!(
        entries[2].params["input"], "text",
        "not the wrapper's shape"
    );
    assert_eq!(
        entries[3].params["input"]["x"], 1,
        "only tool calls are unwrapped"
    );
}

fn read(text: &str) -> Result<SourceRead, SourceError> {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    LangfuseTrace.read(
        &Input::File(f.path()),
        &SessionFilter::All,
        &ReadOptions::default(),
    )
}

#[test]
fn an_array_of_traces_joins_each_session_in_time_order() {
    let read = read(
            r#"[{"id": "late", "sessionId": "s", "name": "second", "timestamp": "2025-12-04T15:00:00Z", "observations": [{"type": "EVENT", "name": "b", "startTime": "2025-12-04T15:00:01Z"}]},
                {"trace": {"id": "early", "sessionId": "s", "name": "first", "timestamp": "2025-12-04T14:00:00Z"}, "observations": [{"type": "EVENT", "name": "a", "startTime": "2025-12-04T14:00:01Z"}]},
                {"id": "alone", "name": "other", "timestamp": "2025-12-04T13:00:00Z", "observations": []}]"#,
        )
        .unwrap();
    let ids: Vec<&str> = read.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["alone", "s"]);
    let ops: Vec<String> = read.sessions[1]
        .entries
        .iter()
        .map(|e| format!("{}.{}", e.domain, e.operation))
        .collect();
    assert_eq!(ops, ["trace.first", "event.a", "trace.second", "event.b"]);
}

/// A trace whose texts were cut inside a character (`\ud83d` alone, as JavaScript
/// writes it) was refused whole as "not a Langfuse trace".
#[test]
fn a_lone_surrogate_is_read_as_the_replacement_character_with_a_warning() {
    let read = read(
            r#"{"id": "t", "name": "run \ud83d", "timestamp": "2025-12-04T13:00:00Z", "observations": [{"type": "TOOL", "name": "cut\udc00", "startTime": "2025-12-04T13:00:01Z"}]}"#,
        )
        .unwrap();
    assert_eq!(
        warned(&read),
        [format!("File: {}", crate::json::LONE_SURROGATE_READ)]
    );
    let ops: Vec<String> = read.sessions[0]
        .entries
        .iter()
        .map(|e| format!("{}.{}", e.domain, e.operation))
        .collect();
    assert_eq!(ops, ["trace.run \u{fffd}", "tool.cut\u{fffd}"]);
}

/// A tool's arguments recorded as a JSON text (as the SDKs record them) that holds a lone
/// surrogate stayed a string: the call had no `file_path`, and a rule reading it passed
/// in silence. Said once for the source, however many traces held one.
#[test]
fn a_lone_surrogate_in_nested_json_is_read_as_the_replacement_character_once() {
    let trace = |id: &str| {
        format!(
            r#"{{"id": "{id}", "sessionId": "s", "timestamp": "2025-12-04T13:00:00Z", "observations": [{{"type": "TOOL", "name": "Read", "startTime": "2025-12-04T13:00:01Z", "input": "{{\"file_path\": \"a\\ud83d.rs\"}}"}}]}}"#
        )
    };
    for doc in [trace("t1"), format!("[{}, {}]", trace("t1"), trace("t2"))] {
        let read = read(&doc).unwrap();
        assert_eq!(
            warned(&read),
            [format!("File: {}", crate::json::LONE_SURROGATE_READ)],
            "{doc}"
        );
        let tool = read.sessions[0]
            .entries
            .iter()
            .find(|e| e.domain == "tool")
            .unwrap();
        assert_eq!(
            tool.params.get("file_path"),
            Some(&Value::from("a\u{fffd}.rs")),
            "{doc}"
        );
    }
}

/// The messages of `read`'s warnings, without the file they name.
fn warned(read: &SourceRead) -> Vec<String> {
    read.warnings
        .iter()
        .map(|w| format!("{:?}: {}", w.place, w.message))
        .collect()
}

/// `"latency": 1e308` made a duration of infinity (printed `Infinity`), and a negative
/// or textual one passed or fell to 0 without a word.
#[test]
fn a_latency_that_is_no_duration_is_reported_and_left_at_0() {
    let trace = |latency: &str| {
        read(&format!(
                r#"{{"trace": {{"id": "t1", "timestamp": "2025-12-04T14:51:22.000Z", "latency": {latency}}}, "observations": []}}"#
            ))
            .unwrap()
    };
    for (latency, shown) in [
        ("1e308", "the number `1e+308`"),
        ("-5", "the number `-5`"),
        (r#""3""#, r#"the string `"3"`"#),
        ("{}", "a JSON object"),
    ] {
        let read = trace(latency);
        assert_eq!(
            read.sessions[0].entries[0].result.duration, 0.0,
            "{latency}"
        );
        assert_eq!(
            warned(&read),
            [format!(
                r#"Item("trace"): field `latency` is {shown}, not a duration in seconds: the trace's duration is left at 0"#
            )]
        );
    }
    for (latency, ms) in [("null", 0.0), ("0", 0.0), ("7.36", 7360.0)] {
        let read = trace(latency);
        assert!(read.warnings.is_empty(), "{latency}: {:?}", read.warnings);
        assert_eq!(read.sessions[0].entries[0].result.duration, ms, "{latency}");
    }
}

/// A `level` that was not text (`3`, `true`, `{}`) was read as `DEFAULT` without a word,
/// which could hide an `ERROR`, and text outside Langfuse's enum passed silently.
#[test]
fn a_level_outside_langfuses_enum_is_reported_naming_the_trace_observation_and_value() {
    let observation = |level: &str| {
        read(&format!(
                r#"{{"trace": {{"id": "t1", "timestamp": "2025-12-04T14:51:22.000Z"}}, "observations": [
                     {{"id": "o1", "type": "TOOL", "name": "get_weather", "startTime": "2025-12-04T14:51:23.000Z", "level": {level}}}]}}"#
            ))
            .unwrap()
    };
    let levels = "not one of Langfuse's levels (`DEBUG`, `DEFAULT`, `WARNING`, `ERROR`)";
    for (level, shown, read_as, success, becomes) in [
        (
            "3",
            "the number `3`",
            "DEFAULT",
            true,
            "is read at level `DEFAULT` and does not fail",
        ),
        (
            "true",
            "a JSON boolean",
            "DEFAULT",
            true,
            "is read at level `DEFAULT` and does not fail",
        ),
        (
            r#"{"name": "ERROR"}"#,
            "a JSON object",
            "DEFAULT",
            true,
            "is read at level `DEFAULT` and does not fail",
        ),
        (
            r#"["ERROR"]"#,
            "a JSON array",
            "DEFAULT",
            true,
            "is read at level `DEFAULT` and does not fail",
        ),
        (
            r#""FATAL""#,
            r#"the string `"FATAL"`"#,
            "FATAL",
            true,
            "keeps it as written and does not fail",
        ),
        (
            r#""error""#,
            r#"the string `"error"`"#,
            "error",
            false,
            "keeps it as written and fails, as at level `ERROR`",
        ),
    ] {
        let read = observation(level);
        let entry = &read.sessions[0].entries[1];
        assert_eq!(entry.result.success, success, "{level}");
        assert_eq!(
            entry.metadata.get("level"),
            Some(MetaRef::Json(&Value::from(read_as))),
            "{level}"
        );
        assert_eq!(
            warned(&read),
            [format!(
                r#"Item("observations[0]"): field `level` is {shown}, {levels}: observation `o1` of trace `t1` {becomes}"#
            )]
        );
    }
    for (level, read_as, success) in [
        ("null", "DEFAULT", true),
        (r#""DEBUG""#, "DEBUG", true),
        (r#""WARNING""#, "WARNING", true),
        (r#""ERROR""#, "ERROR", false),
    ] {
        let read = observation(level);
        assert!(read.warnings.is_empty(), "{level}: {:?}", read.warnings);
        let entry = &read.sessions[0].entries[1];
        assert_eq!(entry.result.success, success, "{level}");
        assert_eq!(
            entry.metadata.get("level"),
            Some(MetaRef::Json(&Value::from(read_as))),
            "{level}"
        );
    }
    // Absent, and an observation without an id named by what it lacks.
    let read = read(
        r#"{"trace": {"id": "t1", "timestamp": "2025-12-04T14:51:22.000Z"}, "observations": [
                 {"id": "o1", "type": "SPAN", "startTime": "2025-12-04T14:51:23.000Z"},
                 {"type": "SPAN", "startTime": "2025-12-04T14:51:24.000Z", "level": 0}]}"#,
    )
    .unwrap();
    assert_eq!(
        warned(&read),
        [format!(
            r#"Item("observations[1]"): field `level` is the number `0`, {levels}: the observation (it has no `id`) of trace `t1` is read at level `DEFAULT` and does not fail"#
        )]
    );
}

/// Two traces of a session with a latency of `1e305` seconds (finite, each, in
/// milliseconds) had durations adding up to infinity, as two CLEO durations of `1e308`
/// did: a latency beyond a CLEO log's largest duration is reported, as one that is none.
#[test]
fn latencies_too_large_to_add_up_are_reported_and_left_at_0() {
    let trace = |id: &str, second: u32, latency: &str| {
        format!(
            r#"{{"trace": {{"id": "{id}", "sessionId": "s", "timestamp": "2025-12-04T14:51:{second:02}.000Z", "latency": {latency}}}, "observations": []}}"#
        )
    };
    let read = read(&format!(
        "[{}, {}, {}]",
        trace("t1", 1, "1e305"),
        trace("t2", 2, "9007199254741"),
        trace("t3", 3, "9007199254740")
    ))
    .unwrap();
    let durations: Vec<f64> = read.sessions[0]
        .entries
        .iter()
        .map(|e| e.result.duration)
        .collect();
    assert_eq!(durations, [0.0, 0.0, 9_007_199_254_740_000.0]);
    assert_eq!(
        warned(&read),
        [
            r#"Item("trace"): field `latency` is the number `1e+305`, not a duration in seconds: the trace's duration is left at 0"#,
            r#"Item("trace"): field `latency` is the number `9007199254741`, not a duration in seconds: the trace's duration is left at 0"#,
        ]
    );
}

/// An observation that ended before it started was given a duration of 0 without a word.
#[test]
fn an_end_before_the_start_is_reported_naming_the_observation_and_both_times() {
    let read = read(
            r#"{"trace": {"id": "t1", "timestamp": "2025-12-04T14:51:22.000Z"}, "observations": [
                 {"id": "o1", "type": "TOOL", "name": "get_weather", "startTime": "2025-12-04T14:51:23.000Z", "endTime": "2025-12-04T14:51:22.250Z"}]}"#,
        )
        .unwrap();
    assert_eq!(read.sessions[0].entries[1].result.duration, 0.0);
    assert_eq!(
            warned(&read),
            ["Item(\"observations[0]\"): field `endTime` `2025-12-04T14:51:22.250Z` is before `startTime` `2025-12-04T14:51:23.000Z`: the observation's duration is left at 0"]
        );
}

#[test]
fn observations_become_entries_in_start_order() {
    let read = read(
            r#"{"trace": {"id": "t1", "name": "run", "timestamp": "2025-12-04T14:51:22.000Z", "sessionId": null, "input": "\"{\\\"q\\\": 1}\""},
               "observations": [
                 {"id": "c", "type": "TOOL", "name": "get_weather", "parentObservationId": "p", "startTime": "2025-12-04T14:51:23.000Z", "endTime": "2025-12-04T14:51:23.250Z", "input": "{\"city\": \"Berlin\"}", "output": "sunny", "level": "DEFAULT"},
                 {"id": "p", "type": "SPAN", "name": "running 1 tool", "startTime": "2025-12-04T14:51:23.000Z", "level": "DEFAULT"},
                 {"id": "e", "type": "GENERATION", "name": "chat", "startTime": "2025-12-04T14:51:24.000Z", "level": "ERROR", "statusMessage": "rate limited", "input": [{"role": "user"}]},
                 "junk"
               ]}"#,
        )
        .unwrap();
    let [session] = read.sessions.as_slice() else {
        panic!("one session")
    };
    assert_eq!(session.id, "t1", "no sessionId: the trace id");
    let ops: Vec<_> = session
        .entries
        .iter()
        .map(|e| format!("{}.{}", e.domain, e.operation))
        .collect();
    assert_eq!(
        ops,
        [
            "trace.run",
            "span.running 1 tool",
            "tool.get_weather",
            "generation.chat"
        ]
    );
    assert_eq!(
        session.entries[0].params["q"], 1,
        "twice-encoded input decoded"
    );
    let tool = &session.entries[2];
    assert_eq!(tool.params["city"], "Berlin");
    assert_eq!(tool.result.duration, 250.0);
    assert_eq!(
        tool.metadata.get("output"),
        Some(MetaRef::Json(&Value::from("sunny")))
    );
    let failed = &session.entries[3];
    assert!(!failed.result.success);
    assert_eq!(failed.error.as_deref(), Some("rate limited"));
    assert!(failed.params["input"].is_array());
    assert_eq!(read.warnings.len(), 1);
    assert!(
        read.warnings[0].to_string().contains("`observations[3]`"),
        "{}",
        read.warnings[0]
    );
}

/// Each observation's depth and each tool's generation were found by walking up its
/// parents: n² steps for a chain of n, and a trace of 50,000 ran for minutes.
#[test]
fn a_trace_nested_as_deep_as_it_is_long_puts_each_tool_in_its_generation_s_message() {
    let n = 50_000;
    let observations: Vec<Value> = (0..n)
        .map(|i| {
            serde_json::json!({
                "id": format!("o{i}"),
                "type": if i % 2 == 0 { "GENERATION" } else { "TOOL" },
                "name": "step",
                "parentObservationId": (i > 0).then(|| format!("o{}", i - 1)),
                "startTime": crate::time::format_iso_millis(1_765_000_000_000 + i),
            })
        })
        .collect();
    let doc = serde_json::json!({"trace": {"id": "t", "timestamp": "2025-12-06T05:46:40Z"},
            "observations": observations});
    let read = read(&doc.to_string()).unwrap();
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    let entries = &read.sessions[0].entries;
    assert_eq!(entries.len(), 50_001);
    for (i, e) in entries[1..].iter().enumerate() {
        let generation = format!("o{}", i - i % 2);
        assert_eq!(
            e.metadata.get("messageId"),
            Some(MetaRef::Json(&Value::from(generation))),
            "observation {i}"
        );
    }
}

#[test]
fn a_cycle_of_parents_is_reported_and_cut_at_its_first_observation() {
    let read = read(
            r#"{"trace": {"id": "t", "timestamp": "2025-12-04T14:51:00Z"}, "observations": [
                {"id": "a", "type": "TOOL", "name": "Bash", "parentObservationId": "b", "startTime": "2025-12-04T14:51:01Z"},
                {"id": "b", "type": "SPAN", "name": "s", "parentObservationId": "a", "startTime": "2025-12-04T14:51:01Z"},
                {"id": "g", "type": "GENERATION", "name": "chat", "startTime": "2025-12-04T14:51:00.500Z"}]}"#,
        )
        .unwrap();
    let warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 1);
    assert!(
            warnings[0].ends_with(": `observations[0]`: its `parentObservationId` `b` leads back to it (a cycle), so it is read as having no parent"),
            "{}",
            warnings[0]
        );
    let ops: Vec<_> = read.sessions[0]
        .entries
        .iter()
        .map(|e| e.operation.as_str())
        .collect();
    assert_eq!(
        ops,
        ["trace", "chat", "Bash", "s"],
        "`a` before its child `b`"
    );
    assert_eq!(
        read.sessions[0].entries[2].metadata.get("messageId"),
        Some(MetaRef::Json(&Value::from("g"))),
        "the call of the generation at the top"
    );
}

#[test]
fn the_api_response_and_a_session_id_are_read() {
    let read = read(r#"{"id": "t2", "sessionId": "chat-7", "timestamp": "2025-12-04T14:51:22Z", "observations": [{"type": "EVENT", "name": "e", "startTime": "2025-12-04T14:51:22Z"}]}"#).unwrap();
    assert_eq!(read.sessions[0].id, "chat-7");
    assert_eq!(read.sessions[0].entries.len(), 2);
}

#[test]
fn what_is_not_a_trace_is_an_error() {
    for text in [
        "[]",
        r#"{"a": 1}"#,
        r#"{"trace": {"timestamp": "2025-12-04T14:51:22Z"}, "observations": []}"#,
        r#"{"trace": {"id": "x"}, "observations": {}}"#,
    ] {
        let err = read(text).unwrap_err().to_string();
        assert!(err.contains("is not a Langfuse trace"), "{err}");
    }
    let err = read("{\n  \"trace\": ,\n}").unwrap_err().to_string();
    assert!(
        err.contains(":2: not a Langfuse trace, which is one JSON document: expected value"),
        "{err}"
    );
}
