//! The trace documents people have, each read into the same [`Span`]s: OTLP JSON (the
//! Collector's file exporter, one `{"resourceSpans": …}` document a line; Grafana Tempo's
//! `{"batches": …}` with the legacy `instrumentationLibrarySpans` and ids perhaps in
//! base64), Jaeger's query API (`{"data": [{"traceID", "spans", "processes"}]}`, µs times,
//! tags, parents in `references`), and any-agent's `AgentTrace` (`{"spans": [...]}` with a
//! flat attribute object and ids as integers).
//!
//! The definitions: `opentelemetry/proto/trace/v1/trace.proto` and its JSON mapping (ids
//! hex, times nanosecond strings, `AnyValue` attributes); `model/json/model.proto` and the
//! query service of jaegertracing/jaeger; `src/any_agent/tracing/agent_trace.py` and
//! `otel_types.py` of mozilla-ai/any-agent.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::super::common::Place;

/// One span, whatever document it came from.
#[derive(Debug)]
pub(super) struct Span {
    /// The trace id, lowercase hex where the document's id could be read as one.
    pub trace: String,
    pub id: String,
    pub parent: Option<String>,
    pub name: String,
    /// Start and end, in nanoseconds since the epoch; `None` when the document has none.
    pub start: Option<i64>,
    pub end: Option<i64>,
    /// Attributes (Jaeger's tags), keys as written, values as plain JSON.
    pub attrs: Map<String, Value>,
    /// The span ended in an error (status `ERROR`, Jaeger's `error` tag).
    pub failed: bool,
    /// Why, when the document says: the status message, else an exception event's.
    pub error: Option<String>,
    /// The service that wrote it (`service.name` of its resource, Jaeger's process).
    pub service: Option<String>,
    /// Where it is, for warnings.
    pub place: Place,
}

/// The shape of a trace document, told by its top-level keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// `resourceSpans` (the Collector, OTLP/HTTP JSON), or Tempo's v2 `{"trace": {…}}`.
    Otlp,
    /// Tempo's `batches`.
    Tempo,
    /// Jaeger's `data[]` of traces with `spans` and `traceID`.
    Jaeger,
    /// any-agent's `AgentTrace`.
    AnyAgent,
}

impl Shape {
    /// The shape of a top-level object, if it is a trace document.
    pub fn of(map: &Map<String, Value>) -> Option<Shape> {
        if map.get("resourceSpans").is_some_and(Value::is_array)
            || map
                .get("trace")
                .and_then(|t| t.get("resourceSpans"))
                .is_some_and(Value::is_array)
        {
            return Some(Shape::Otlp);
        }
        let first = |key: &str| {
            map.get(key)
                .and_then(Value::as_array)
                .and_then(|items| items.first())
                .and_then(Value::as_object)
        };
        if let Some(batch) = first("batches") {
            if ["instrumentationLibrarySpans", "scopeSpans", "resource"]
                .iter()
                .any(|k| batch.contains_key(*k))
            {
                return Some(Shape::Tempo);
            }
        }
        if let Some(trace) = first("data") {
            if trace.contains_key("traceID") && trace.get("spans").is_some_and(Value::is_array) {
                return Some(Shape::Jaeger);
            }
        }
        if let Some(span) = first("spans") {
            if span
                .get("context")
                .is_some_and(|c| c.get("span_id").is_some())
                && span.contains_key("name")
            {
                return Some(Shape::AnyAgent);
            }
        }
        None
    }
}

/// Reads the spans of a document of `shape`; `base` places them (a line, or the file).
/// `bytes` is the document's text, for the ids JSON numbers cannot hold exactly.
pub(super) fn spans(
    shape: Shape,
    doc: Map<String, Value>,
    bytes: &[u8],
    base: &Place,
) -> Vec<Span> {
    let mut out = Vec::new();
    match shape {
        Shape::Otlp | Shape::Tempo => otlp(doc, base, &mut out),
        Shape::Jaeger => jaeger(doc, base, &mut out),
        Shape::AnyAgent => any_agent(doc, bytes, base, &mut out),
    }
    out
}

/// Where item `path` of a document at `base` is: its line (a line holds one document), or
/// the path itself.
fn place(base: &Place, path: impl FnOnce() -> String) -> Place {
    match base {
        Place::Line(line) => Place::Line(*line),
        _ => Place::Item(path()),
    }
}

fn take_array(map: &mut Map<String, Value>, key: &str) -> Vec<Value> {
    match map.remove(key) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    }
}

fn take_object(value: Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

fn text(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn otlp(mut doc: Map<String, Value>, base: &Place, out: &mut Vec<Span>) {
    let (key, mut resources) = match doc.remove("trace").and_then(take_object) {
        Some(mut trace) => (
            "trace.resourceSpans",
            take_array(&mut trace, "resourceSpans"),
        ),
        None if doc.contains_key("batches") => ("batches", take_array(&mut doc, "batches")),
        None => ("resourceSpans", take_array(&mut doc, "resourceSpans")),
    };
    for (r, resource) in resources.drain(..).enumerate() {
        let Some(mut resource) = take_object(resource) else {
            continue;
        };
        let service = resource
            .get_mut("resource")
            .and_then(|r| r.get_mut("attributes"))
            .map(|a| otlp_attributes(std::mem::take(a)))
            .and_then(|attrs| text(&attrs, "service.name"));
        for scopes_key in ["scopeSpans", "instrumentationLibrarySpans"] {
            for (s, scope) in take_array(&mut resource, scopes_key)
                .into_iter()
                .enumerate()
            {
                let Some(mut scope) = take_object(scope) else {
                    continue;
                };
                for (i, span) in take_array(&mut scope, "spans").into_iter().enumerate() {
                    let Some(span) = take_object(span) else {
                        continue;
                    };
                    let at = place(base, || format!("{key}[{r}].{scopes_key}[{s}].spans[{i}]"));
                    out.push(otlp_span(span, service.clone(), at));
                }
            }
        }
    }
}

fn otlp_span(mut span: Map<String, Value>, service: Option<String>, place: Place) -> Span {
    let attrs = otlp_attributes(span.remove("attributes").unwrap_or_default());
    let status = span.get("status");
    let code = status.and_then(|s| s.get("code"));
    let failed = match code {
        Some(Value::Number(n)) => n.as_u64() == Some(2),
        Some(Value::String(s)) => s == "STATUS_CODE_ERROR" || s == "ERROR",
        _ => false,
    };
    let error = status
        .and_then(|s| s.get("message"))
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
        .or_else(|| {
            exception(span.get("events"), |event| {
                event.get("attributes").cloned().map(otlp_attributes)
            })
        });
    Span {
        trace: id(span.get("traceId"), 32),
        id: id(span.get("spanId"), 16),
        parent: Some(id(span.get("parentSpanId"), 16)).filter(|p| !p.is_empty()),
        name: text(&span, "name").unwrap_or_default(),
        start: nanos(span.get("startTimeUnixNano")),
        end: nanos(span.get("endTimeUnixNano")),
        attrs,
        failed,
        error,
        service,
        place,
    }
}

/// The message of the first `exception` event of `events`, whose attributes `attrs` reads.
fn exception(
    events: Option<&Value>,
    attrs: impl Fn(&Value) -> Option<Map<String, Value>>,
) -> Option<String> {
    events?.as_array()?.iter().find_map(|event| {
        let attrs = attrs(event)?;
        let named = event.get("name").and_then(Value::as_str) == Some("exception")
            || attrs.contains_key("exception.message");
        named.then(|| text(&attrs, "exception.message"))?
    })
}

/// OTLP's `[{key, value: {stringValue: …}}]` as a plain object.
fn otlp_attributes(list: Value) -> Map<String, Value> {
    key_values(list, any_value)
}

/// A list of `{key, value}` objects as one object, each value read by `read`; items
/// without a string `key` are passed over.
fn key_values(list: Value, read: fn(Value) -> Value) -> Map<String, Value> {
    let Value::Array(items) = list else {
        return Map::new();
    };
    let mut out = Map::with_capacity(items.len());
    for item in items {
        let Value::Object(mut item) = item else {
            continue;
        };
        if let Some(Value::String(key)) = item.remove("key") {
            out.insert(key, read(item.remove("value").unwrap_or_default()));
        }
    }
    out
}

/// An OTLP `AnyValue` as plain JSON: `{"intValue": "3"}` is 3, `{"arrayValue": {"values":
/// […]}}` a list, `{"kvlistValue": …}` an object; bytes stay their base64 text.
fn any_value(value: Value) -> Value {
    let Value::Object(map) = value else {
        return value;
    };
    let Some((kind, inner)) = map.into_iter().next() else {
        return Value::Null;
    };
    match (kind.as_str(), inner) {
        ("intValue", Value::String(s)) => s.parse::<i64>().map_or(Value::String(s), Value::from),
        ("doubleValue", Value::String(s)) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::String(s), Value::Number),
        ("arrayValue", inner) => Value::Array(
            match inner.get("values") {
                Some(Value::Array(values)) => values.clone(),
                _ => Vec::new(),
            }
            .into_iter()
            .map(any_value)
            .collect(),
        ),
        ("kvlistValue", inner) => Value::Object(otlp_attributes(
            inner.get("values").cloned().unwrap_or_default(),
        )),
        (_, inner) => inner,
    }
}

fn jaeger(mut doc: Map<String, Value>, base: &Place, out: &mut Vec<Span>) {
    for (t, trace) in take_array(&mut doc, "data").into_iter().enumerate() {
        let Some(mut trace) = take_object(trace) else {
            continue;
        };
        let processes = trace
            .remove("processes")
            .and_then(take_object)
            .unwrap_or_default();
        let trace_id = id(trace.get("traceID"), 32);
        for (i, span) in take_array(&mut trace, "spans").into_iter().enumerate() {
            let Some(mut span) = take_object(span) else {
                continue;
            };
            let attrs = jaeger_tags(span.remove("tags").unwrap_or_default());
            let failed = matches!(attrs.get("error"), Some(Value::Bool(true)))
                || attrs.get("error").and_then(Value::as_str) == Some("true")
                || attrs.get("otel.status_code").and_then(Value::as_str) == Some("ERROR");
            let error = text(&attrs, "otel.status_description").or_else(|| {
                exception(span.get("logs"), |log| {
                    log.get("fields").cloned().map(jaeger_tags)
                })
            });
            let references = span.get("references").and_then(Value::as_array);
            let parent = references
                .and_then(|refs| {
                    refs.iter()
                        .find(|r| r.get("refType").and_then(Value::as_str) == Some("CHILD_OF"))
                        .or_else(|| refs.first())
                })
                .and_then(|r| r.get("spanID"))
                .or_else(|| span.get("parentSpanID"))
                .map(|p| id(Some(p), 16))
                .filter(|p| !p.is_empty());
            let start = micros(span.get("startTime"));
            let end = match (start, micros(span.get("duration"))) {
                (Some(start), Some(duration)) => start.checked_add(duration),
                _ => None,
            };
            let service = span
                .get("processID")
                .and_then(Value::as_str)
                .and_then(|p| processes.get(p))
                .or_else(|| span.get("process"))
                .and_then(|p| p.get("serviceName"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            let span_trace = Some(id(span.get("traceID"), 32)).filter(|t| !t.is_empty());
            out.push(Span {
                trace: span_trace.unwrap_or_else(|| trace_id.clone()),
                id: id(span.get("spanID"), 16),
                parent,
                name: text(&span, "operationName").unwrap_or_default(),
                start,
                end,
                attrs,
                failed,
                error,
                service,
                place: place(base, || format!("data[{t}].spans[{i}]")),
            });
        }
    }
}

/// Jaeger's `[{key, type, value}]` tags (or a log's fields) as a plain object.
fn jaeger_tags(list: Value) -> Map<String, Value> {
    key_values(list, |value| value)
}

/// The ids of any-agent's spans, read exactly: they are integers of up to 128 bits, which
/// a JSON number read as `f64` rounds.
#[derive(Deserialize)]
struct ExactTrace {
    spans: Vec<ExactSpan>,
}

#[derive(Deserialize)]
struct ExactSpan {
    #[serde(default)]
    context: Option<ExactContext>,
    #[serde(default)]
    parent: Option<ExactContext>,
}

#[derive(Deserialize)]
struct ExactContext {
    #[serde(default, deserialize_with = "exact")]
    trace_id: Option<u128>,
    #[serde(default, deserialize_with = "exact")]
    span_id: Option<u128>,
}

fn exact<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u128>, D::Error> {
    Option::<u128>::deserialize(d)
}

fn any_agent(mut doc: Map<String, Value>, bytes: &[u8], base: &Place, out: &mut Vec<Span>) {
    // Where the ids are not all integers, they are read as the document has them.
    let exact = serde_json::from_slice::<ExactTrace>(bytes).ok();
    let hex = |id: Option<u128>, width: usize| id.map(|id| format!("{id:0width$x}"));
    for (i, span) in take_array(&mut doc, "spans").into_iter().enumerate() {
        let Some(mut span) = take_object(span) else {
            continue;
        };
        let ids = exact.as_ref().and_then(|e| e.spans.get(i));
        let context = span.remove("context").unwrap_or_default();
        let parent_ctx = span.remove("parent").unwrap_or_default();
        let trace = ids
            .and_then(|s| hex(s.context.as_ref()?.trace_id, 32))
            .unwrap_or_else(|| id(context.get("trace_id"), 32));
        let span_id = ids
            .and_then(|s| hex(s.context.as_ref()?.span_id, 16))
            .unwrap_or_else(|| id(context.get("span_id"), 16));
        let parent = ids
            .and_then(|s| hex(s.parent.as_ref()?.span_id, 16))
            .or_else(|| parent_ctx.get("span_id").map(|p| id(Some(p), 16)))
            .filter(|p| !p.is_empty());
        let attrs = span
            .remove("attributes")
            .and_then(take_object)
            .unwrap_or_default();
        let status = span.get("status");
        let failed = status
            .and_then(|s| s.get("status_code"))
            .and_then(Value::as_str)
            .is_some_and(|c| c.eq_ignore_ascii_case("error"));
        let error = status
            .and_then(|s| s.get("description"))
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty())
            .map(str::to_owned)
            .or_else(|| {
                exception(span.get("events"), |event| {
                    event.get("attributes").and_then(Value::as_object).cloned()
                })
            });
        let service = span
            .get("resource")
            .and_then(|r| r.get("attributes"))
            .and_then(|a| a.get("service.name"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        out.push(Span {
            trace,
            id: span_id,
            parent,
            name: text(&span, "name").unwrap_or_default(),
            start: nanos(span.get("start_time")),
            end: nanos(span.get("end_time")),
            attrs,
            failed,
            error,
            service,
            place: place(base, || format!("spans[{i}]")),
        });
    }
}

/// A time in nanoseconds: a JSON number or a decimal string (OTLP JSON writes 64-bit
/// integers as strings).
fn nanos(value: Option<&Value>) -> Option<i64> {
    match value? {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && f.abs() < 9.2e18)
                .map(|f| f as i64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A time in microseconds (Jaeger's), as nanoseconds.
fn micros(value: Option<&Value>) -> Option<i64> {
    nanos(value)?.checked_mul(1_000)
}

/// A trace or span id as lowercase hex: hex as it is, base64 (Tempo's older exports, the
/// protobuf JSON of bytes) decoded, an integer (any-agent's) in `width` hex digits; any
/// other text as it is; empty when there is none.
pub(super) fn id(value: Option<&Value>, width: usize) -> String {
    match value {
        Some(Value::String(s)) => {
            if s.bytes().all(|b| b.is_ascii_hexdigit()) {
                return s.to_ascii_lowercase();
            }
            match base64(s) {
                Some(bytes) if bytes.len() == 8 || bytes.len() == 16 => {
                    bytes.iter().map(|b| format!("{b:02x}")).collect()
                }
                _ => s.clone(),
            }
        }
        Some(Value::Number(n)) => match n.as_u64() {
            Some(n) => format!("{n:0width$x}"),
            None => n.to_string(),
        },
        _ => String::new(),
    }
}

/// Standard base64 (with or without padding), or `None` when `text` is not that.
fn base64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in text.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_hex_whether_written_hex_base64_or_as_integers() {
        assert_eq!(id(Some(&json!("ABCDEF0123456789")), 16), "abcdef0123456789");
        // Tempo's protobuf JSON: the 16 bytes of a trace id in base64.
        assert_eq!(
            id(Some(&json!("3VR1gDGasDEs7gfx3vUNrQ==")), 32),
            "dd547580319ab0312cee07f1def50dad"
        );
        assert_eq!(id(Some(&json!("IbNSPWUx0PQ=")), 16), "21b3523d6531d0f4");
        assert_eq!(id(Some(&json!(255)), 16), "00000000000000ff");
        assert_eq!(id(Some(&json!("not an id!")), 16), "not an id!");
        assert_eq!(id(None, 16), "");
    }

    #[test]
    fn otlp_values_read_as_plain_json() {
        let attrs = otlp_attributes(json!([
            {"key": "s", "value": {"stringValue": "x"}},
            {"key": "i", "value": {"intValue": "42"}},
            {"key": "big", "value": {"intValue": "99999999999999999999"}},
            {"key": "d", "value": {"doubleValue": 1.5}},
            {"key": "nan", "value": {"doubleValue": "NaN"}},
            {"key": "b", "value": {"boolValue": true}},
            {"key": "a", "value": {"arrayValue": {"values": [{"stringValue": "p"}, {"intValue": 3}]}}},
            {"key": "kv", "value": {"kvlistValue": {"values": [{"key": "k", "value": {"boolValue": false}}]}}},
            {"key": "empty", "value": {}},
            {"value": {"stringValue": "no key"}},
            "junk"
        ]));
        assert_eq!(
            Value::Object(attrs),
            json!({"s": "x", "i": 42, "big": "99999999999999999999", "d": 1.5, "nan": "NaN",
                   "b": true, "a": ["p", 3], "kv": {"k": false}, "empty": null})
        );
    }

    #[test]
    fn any_agent_ids_past_64_bits_are_read_exactly() {
        let text = r#"{"spans": [{"name": "x", "context": {"trace_id": 100927429609276267646756448943279827607, "span_id": 9295669169508793927}, "parent": null, "attributes": {}}]}"#;
        let Value::Object(doc) = serde_json::from_str(text).unwrap() else {
            unreachable!()
        };
        assert_eq!(Shape::of(&doc), Some(Shape::AnyAgent));
        let spans = spans(Shape::AnyAgent, doc, text.as_bytes(), &Place::File);
        assert_eq!(spans[0].trace, "4bedea77bb33b9c5f280371eae21ea97");
        assert_eq!(spans[0].id, format!("{:016x}", 9295669169508793927u64));
        assert_eq!(spans[0].parent, None);
    }
}
