use super::*;
use crate::entry::Entry;
use serde_json::json;

fn read(text: &str) -> SourceRead {
    read_capped(
        Path::new("t.jsonl"),
        text.as_bytes(),
        &SessionFilter::All,
        MAX_DOCUMENT,
    )
    .unwrap()
}

fn attr(key: &str, value: Value) -> Value {
    let value = match value {
        Value::String(s) => json!({ "stringValue": s }),
        Value::Number(n) => json!({ "intValue": n.to_string() }),
        Value::Bool(b) => json!({ "boolValue": b }),
        other => other,
    };
    json!({ "key": key, "value": value })
}

/// An OTLP span: `(trace, id, parent, name, start second, attributes, status code)`.
fn span(
    trace: &str,
    id: &str,
    parent: &str,
    name: &str,
    start: i64,
    attrs: &[(&str, Value)],
    code: u64,
) -> Value {
    json!({
        "traceId": trace, "spanId": id, "parentSpanId": parent, "name": name,
        "startTimeUnixNano": (start * 1_000_000_000).to_string(),
        "endTimeUnixNano": (start * 1_000_000_000 + 250_000_000).to_string(),
        "attributes": attrs.iter().map(|(k, v)| attr(k, v.clone())).collect::<Vec<_>>(),
        "status": {"code": code, "message": if code == 2 { "boom" } else { "" }},
    })
}

/// One line of the Collector's file exporter holding `spans`.
fn line(service: &str, spans: Vec<Value>) -> String {
    json!({"resourceSpans": [{
        "resource": {"attributes": [attr("service.name", json!(service))]},
        "scopeSpans": [{"scope": {"name": "s"}, "spans": spans}],
    }]})
    .to_string()
}

fn meta(entry: &Entry, key: &str) -> Option<Value> {
    entry.metadata.get(key).map(|v| v.to_json())
}

fn ops(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .map(|e| format!("{}.{}", e.domain, e.operation))
        .collect()
}

const T1: &str = "0af7651916cd43dd8448eb211c80319c";
const T2: &str = "1bf7651916cd43dd8448eb211c80319c";

#[test]
fn genai_spans_are_entries_in_start_order_other_spans_are_counted_and_unknown_operations_skipped() {
    let first = line(
        "agent",
        vec![
            // Written out of order, as exporters batch them.
            span(
                T1,
                "b000000000000002",
                "a000000000000001",
                "execute_tool get_weather",
                3,
                &[
                    ("gen_ai.operation.name", json!("execute_tool")),
                    ("gen_ai.tool.name", json!("get_weather")),
                    ("gen_ai.tool.call.id", json!("call_1")),
                    ("gen_ai.tool.call.arguments", json!("{\"city\": \"Paris\"}")),
                    ("gen_ai.tool.call.result", json!("rainy")),
                ],
                0,
            ),
            span(
                T1,
                "a000000000000001",
                "",
                "invoke_agent weather",
                1,
                &[
                    ("gen_ai.operation.name", json!("invoke_agent")),
                    ("gen_ai.agent.name", json!("weather")),
                    ("gen_ai.conversation.id", json!("conv-1")),
                ],
                0,
            ),
            span(
                T1,
                "c000000000000003",
                "a000000000000001",
                "chat gpt-4o",
                2,
                &[
                    ("gen_ai.operation.name", json!("chat")),
                    ("gen_ai.request.model", json!("gpt-4o")),
                    ("gen_ai.usage.input_tokens", json!(12)),
                ],
                0,
            ),
            span(
                T1,
                "d000000000000004",
                "c000000000000003",
                "POST",
                2,
                &[("http.request.method", json!("POST"))],
                0,
            ),
            span(
                T1,
                "f000000000000006",
                "a000000000000001",
                "embeddings e5",
                2,
                &[("gen_ai.operation.name", json!("embeddings"))],
                0,
            ),
        ],
    );
    // The next turn: another trace of the same conversation, with a tool that failed.
    let second = line(
        "agent",
        vec![span(
            T2,
            "e000000000000005",
            "",
            "execute_tool read_file",
            5,
            &[
                ("gen_ai.operation.name", json!("execute_tool")),
                ("gen_ai.tool.name", json!("read_file")),
                (
                    "gen_ai.tool.call.arguments",
                    json!({"kvlistValue": {"values": [attr("path", json!("/a"))]}}),
                ),
                ("gen_ai.conversation.id", json!("conv-1")),
            ],
            2,
        )],
    );
    let read = read(&format!("{first}\n\n{second}\n"));
    assert_eq!(read.sessions.len(), 1, "{:?}", read.sessions);
    let session = &read.sessions[0];
    assert_eq!(session.id, "conv-1");
    assert_eq!(
        ops(&session.entries),
        [
            "agent.invoke_agent",
            "generation.chat",
            "tool.get_weather",
            "tool.read_file"
        ]
    );
    assert_eq!(session.skipped_lines, 1, "the embeddings span");
    assert_eq!(read.skipped_lines, 1);
    let [agent, chat, tool, failed] = &session.entries[..] else {
        unreachable!()
    };
    assert_eq!(agent.params.get("name"), Some(&json!("weather")));
    assert_eq!(agent.timestamp, "1970-01-01T00:00:01.000Z");
    assert_eq!(agent.result.duration, 250.0);
    assert_eq!(chat.params.get("model"), Some(&json!("gpt-4o")));
    assert_eq!(chat.params.get("inputTokens"), Some(&json!(12)));
    assert_eq!(tool.params.get("city"), Some(&json!("Paris")));
    assert_eq!(meta(tool, "toolCallId"), Some(json!("call_1")));
    assert_eq!(meta(tool, "hasResult"), Some(json!(true)));
    assert_eq!(meta(tool, "kind"), Some(json!("other")));
    assert_eq!(meta(tool, "service"), Some(json!("agent")));
    assert_eq!(meta(tool, "traceId"), Some(json!(T1)));
    assert!(tool.result.success);
    assert_eq!(failed.params.get("path"), Some(&json!("/a")));
    assert_eq!(meta(failed, "kind"), Some(json!("read")));
    assert!(!failed.result.success);
    assert_eq!(failed.error.as_deref(), Some("boom"));
    let warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "t.jsonl: 1 span is no agent, tool or model call (HTTP, queues, databases, a framework's own steps) and makes no entry",
            "t.jsonl: skipped 1 spans of type `embeddings`, which this reader does not know (counted in the session's skipped lines)"
        ]
    );
}

#[test]
fn a_trace_without_a_conversation_is_its_own_session_and_one_of_http_only_is_none() {
    let agent = line(
        "a",
        vec![span(
            T1,
            "a000000000000001",
            "",
            "invoke_agent",
            1,
            &[("gen_ai.operation.name", json!("invoke_agent"))],
            0,
        )],
    );
    let http = line(
        "a",
        vec![
            span(T2, "b000000000000001", "", "GET /", 0, &[], 2),
            span(
                T2,
                "b000000000000002",
                "b000000000000001",
                "SELECT",
                0,
                &[],
                0,
            ),
        ],
    );
    let read = read(&format!("{http}\n{agent}\n"));
    let ids: Vec<&str> = read.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, [T1]);
    assert_eq!(read.skipped_lines, 0);
    let warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        ["t.jsonl: 2 spans are no agent, tool or model call (HTTP, queues, databases, a framework's own steps) and make no entry"]
    );
}

/// Google ADK's `call_llm` holds the `generate_content` span of its model call, which holds
/// the client library's `openai.chat`: one call, one entry.
#[test]
fn inference_spans_inside_one_model_call_are_one_entry() {
    let text = line(
        "a",
        vec![
            span(
                T1,
                "a000000000000001",
                "",
                "invoke_agent",
                1,
                &[("gen_ai.operation.name", json!("invoke_agent"))],
                0,
            ),
            span(
                T1,
                "b000000000000002",
                "a000000000000001",
                "call_llm",
                2,
                &[("gen_ai.system", json!("gcp.vertex.agent"))],
                0,
            ),
            span(
                T1,
                "c000000000000003",
                "b000000000000002",
                "generate_content gpt",
                2,
                &[("gen_ai.operation.name", json!("generate_content"))],
                0,
            ),
            span(
                T1,
                "d000000000000004",
                "c000000000000003",
                "POST",
                2,
                &[],
                0,
            ),
            span(
                T1,
                "e000000000000005",
                "d000000000000004",
                "openai.chat",
                2,
                &[
                    ("gen_ai.system", json!("openai")),
                    ("llm.request.type", json!("chat")),
                ],
                0,
            ),
            // A tool run inside the call, and a sub-agent's model call inside the tool: its own.
            span(
                T1,
                "f000000000000006",
                "c000000000000003",
                "execute_tool ask",
                3,
                &[("gen_ai.operation.name", json!("execute_tool"))],
                0,
            ),
            span(
                T1,
                "0000000000000007",
                "f000000000000006",
                "chat",
                4,
                &[("gen_ai.operation.name", json!("chat"))],
                0,
            ),
        ],
    );
    let read = read(&text);
    let session = &read.sessions[0];
    assert_eq!(
        ops(&session.entries),
        [
            "agent.invoke_agent",
            "generation.call_llm",
            "tool.ask",
            "generation.chat"
        ]
    );
    assert_eq!(
        session.skipped_lines, 0,
        "the nested model spans are the call"
    );
}

#[test]
fn a_line_that_is_no_trace_document_is_skipped_and_said() {
    let good = line(
        "a",
        vec![span(T1, "a000000000000001", "", "chat", 1, &[], 0)],
    );
    let read = read(&format!("{good}\n{{\"x\": 1}}\n{{broken\n"));
    assert_eq!(read.sessions.len(), 1);
    assert_eq!(read.skipped_lines, 2);
    let warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("t.jsonl:2: skipped: a JSON object with no `resourceSpans`"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].starts_with("t.jsonl:3: skipped: not valid JSON"),
        "{warnings:?}"
    );
}

/// A 1 GB attribute is refused by the cap on a document, naming the file and the cap; a
/// small cap stands in for the real one.
#[test]
fn a_document_past_the_cap_is_refused_naming_the_file_and_the_cap() {
    let big = "x".repeat(3 << 20);
    let text = line(
        "a",
        vec![span(
            T1,
            "a000000000000001",
            "",
            "chat",
            1,
            &[("gen_ai.input.messages", json!(big))],
            0,
        )],
    );
    let two = format!("{}\n{text}\n", line("a", vec![]));
    let err = read_capped(
        Path::new("t.jsonl"),
        two.as_bytes(),
        &SessionFilter::All,
        2 << 20,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "`t.jsonl`: line 2 is 3.0 MiB, more than 2 MiB, the cap on one trace document: not read (a span attribute this large is refused)"
    );
    let err = read_capped(
        Path::new("t.json"),
        text.as_bytes(),
        &SessionFilter::All,
        2 << 20,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("`t.json`: the document is 3.0 MiB, more than 2 MiB"),
        "{err}"
    );
    assert_eq!(MAX_DOCUMENT, 256 << 20);
}

#[test]
fn jaeger_and_tempo_exports_read_as_otlp_does() {
    let jaeger = json!({"data": [{
        "traceID": T1,
        "spans": [
            {"traceID": T1, "spanID": "a000000000000001", "operationName": "invoke_agent helper",
             "references": [], "startTime": 1_000_000, "duration": 500,
             "tags": [{"key": "gen_ai.operation.name", "type": "string", "value": "invoke_agent"}],
             "processID": "p1"},
            {"traceID": T1, "spanID": "b000000000000002", "operationName": "execute_tool bash",
             "references": [{"refType": "CHILD_OF", "traceID": T1, "spanID": "a000000000000001"}],
             "startTime": 1_000_100, "duration": 10,
             "tags": [{"key": "gen_ai.tool.name", "type": "string", "value": "bash"},
                      {"key": "error", "type": "bool", "value": true},
                      {"key": "otel.status_description", "type": "string", "value": "exit 1"}],
             "processID": "p1"}
        ],
        "processes": {"p1": {"serviceName": "helper", "tags": []}}
    }]});
    let jaeger = read(&serde_json::to_string_pretty(&jaeger).unwrap());
    let session = &jaeger.sessions[0];
    assert_eq!(session.id, T1);
    assert_eq!(ops(&session.entries), ["agent.invoke_agent", "tool.bash"]);
    let tool = &session.entries[1];
    assert_eq!(tool.result.duration, 0.01);
    assert_eq!(tool.error.as_deref(), Some("exit 1"));
    assert_eq!(meta(tool, "kind"), Some(json!("shell")));
    assert_eq!(meta(tool, "service"), Some(json!("helper")));
    assert_eq!(tool.timestamp, "1970-01-01T00:00:01.000Z");

    // Tempo: `batches`, the legacy `instrumentationLibrarySpans`, base64 ids, numeric times.
    let tempo = json!({"batches": [{
        "resource": {"attributes": []},
        "instrumentationLibrarySpans": [{"instrumentationLibrary": {"name": "x"}, "spans": [
            {"traceId": "3VR1gDGasDEs7gfx3vUNrQ==", "spanId": "IbNSPWUx0PQ=", "name": "chat m",
             "kind": "SPAN_KIND_CLIENT", "startTimeUnixNano": 1_777_555_053_780_274_700u64,
             "endTimeUnixNano": 1_777_555_053_781_172_000u64,
             "attributes": [attr("gen_ai.operation.name", json!("chat"))],
             "status": {"code": "STATUS_CODE_ERROR"}}
        ]}]
    }]});
    let tempo = read(&tempo.to_string());
    let session = &tempo.sessions[0];
    assert_eq!(session.id, "dd547580319ab0312cee07f1def50dad");
    assert_eq!(
        meta(&session.entries[0], "spanId"),
        Some(json!("21b3523d6531d0f4"))
    );
    assert!(!session.entries[0].result.success);
    assert_eq!(session.entries[0].timestamp, "2026-04-30T13:17:33.780Z");
}

#[test]
fn a_trace_shape_is_this_readers_and_no_other_claims_it() {
    let docs = [
        json!({"resourceSpans": []}),
        json!({"trace": {"resourceSpans": []}}),
        json!({"batches": [{"resource": {}, "scopeSpans": []}]}),
        json!({"data": [{"traceID": "t", "spans": []}]}),
        json!({"spans": [{"name": "x", "context": {"span_id": 1}}]}),
    ];
    for doc in &docs {
        let map = doc.as_object().unwrap();
        for format in crate::source::Registry::builtin().formats() {
            let expected = if format.name() == SOURCE {
                Sniff::Certain
            } else {
                Sniff::No
            };
            assert_eq!(
                format.sniff(&Evidence::Object(map)),
                expected,
                "{} on {doc}",
                format.name()
            );
        }
    }
    // Near misses: a Langfuse list page, a bare `spans` list, an empty `data`.
    for doc in [
        json!({"data": [], "meta": {"totalItems": 0}}),
        json!({"data": [{"id": "t", "spans": []}]}),
        json!({"spans": [{"name": "x"}]}),
        json!({"batches": [1]}),
    ] {
        assert_eq!(
            AgentFormat::sniff(&Otel, &Evidence::Object(doc.as_object().unwrap())),
            Sniff::No,
            "{doc}"
        );
    }
}

#[test]
fn no_input_panics_the_reader() {
    for text in [
        "{\"resourceSpans\": [1, {\"scopeSpans\": [null, {\"spans\": [1, {}]}]}]}",
        "{\"data\": [{\"traceID\": 5, \"spans\": [{\"references\": 3, \"startTime\": 9e30, \"duration\": -1}]}]}",
        "{\"spans\": [{\"name\": 1, \"context\": {\"span_id\": \"x\", \"trace_id\": []}, \"start_time\": \"soon\"}]}",
        // A cycle of parents.
        &line("a", vec![
            span(T1, "a000000000000001", "b000000000000002", "chat", 1, &[], 0),
            span(T1, "b000000000000002", "a000000000000001", "chat", 1, &[], 0),
        ]),
    ] {
        let _ = read_capped(Path::new("t"), text.as_bytes(), &SessionFilter::All, MAX_DOCUMENT);
    }
}

#[test]
fn a_tool_fails_by_its_status_its_error_type_or_an_mcp_result_that_says_is_error() {
    let tool = |id: &str, extra: (&str, Value), code: u64| {
        span(
            T1,
            id,
            "",
            "execute_tool t",
            1,
            &[("gen_ai.operation.name", json!("execute_tool")), extra],
            code,
        )
    };
    let text = line(
        "a",
        vec![
            tool("a000000000000001", ("gen_ai.tool.call.result", json!("{}")), 2),
            tool("a000000000000002", ("error.type", json!("timeout")), 0),
            tool(
                "a000000000000003",
                ("gcp.vertex.agent.tool_response", json!("{\"content\": [{\"type\": \"text\", \"text\": \"no such release\"}], \"isError\": true}")),
                0,
            ),
            tool("a000000000000004", ("gen_ai.tool.call.result", json!("{\"isError\": false}")), 0),
            tool("a000000000000005", ("gen_ai.tool.call.result", json!({"kvlistValue": {"values": [attr("isError", json!(true))]}})), 1),
        ],
    );
    let read = read(&text);
    let outcomes: Vec<(bool, Option<&str>)> = read.sessions[0]
        .entries
        .iter()
        .map(|e| (e.result.success, e.error.as_deref()))
        .collect();
    assert_eq!(
        outcomes,
        [
            (false, Some("boom")),
            (false, Some("timeout")),
            (false, Some("no such release")),
            (true, None),
            (false, Some("the tool reported an error (`isError`)")),
        ]
    );
}

#[test]
fn a_span_written_twice_is_read_once_and_said() {
    let text = line(
        "a",
        vec![span(T1, "a000000000000001", "", "chat", 1, &[], 0)],
    );
    let read = read(&format!("{text}\n{text}\n"));
    assert_eq!(read.sessions[0].entries.len(), 1);
    let warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        ["t.jsonl: 1 spans are written twice (the same trace and span id): each is read once"]
    );
}
