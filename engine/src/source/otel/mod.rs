//! OpenTelemetry traces of agents, as the GenAI semantic conventions describe them
//! (`invoke_agent`, `execute_tool` and inference spans such as `chat`): OTLP JSON as the
//! Collector's file exporter writes it, Grafana Tempo's and Jaeger's trace exports, and
//! any-agent's `AgentTrace` (`shapes.rs` reads each into the same spans).
//!
//! A session is a trace, or the `gen_ai.conversation.id` (`session.id`) its spans carry,
//! which may join several traces. An agent, tool or inference span is an entry, in start
//! order; an inference span inside another (a framework's `call_llm` around the client
//! library's `openai.chat`) is one model call and one entry, the outer. Every other span
//! (HTTP, queues, databases) is skipped and counted in its session's `skippedLines`. A span
//! with status `ERROR` is a failed entry. The conventions: `docs/gen-ai/gen-ai-agent-spans.md`
//! and `gen-ai-spans.md` of open-telemetry/semantic-conventions.

mod shapes;

use std::collections::hash_map::Entry::{Occupied, Vacant};

use rustc_hash::FxHashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::agent::{AgentFormat, Described};
use super::agent_run::{Step, Unknown};
use super::common::{
    describe_json_error, Place, SessionFilter, SourceError, SourceRead, SourceWarning,
};
use super::format::{Evidence, Sniff};
use super::tool::{arguments, KindRule, KindTable, ToolKind};
use crate::entry::{Params, Session};
use shapes::{Shape, Span};

/// `metadata.source` of every entry read from a trace, and the format's name.
pub const SOURCE: &str = "otel";

/// The most bytes one trace document may have: a line of an OTLP file, or a whole Jaeger,
/// Tempo or any-agent export. A span attribute past it (a prompt with a video inlined, a
/// runaway tool output) is refused with the file and the cap, rather than read into memory
/// several times over.
pub(crate) const MAX_DOCUMENT: u64 = 256 << 20;

/// How far up its parents a span is followed: a trace deeper than this is not an agent's,
/// and a cycle of parents (a broken export) ends here.
const MAX_DEPTH: usize = 512;

/// Tool kinds of tools seen in agents' traces, by name; an agent's own tools are `other`.
pub(crate) static KINDS: KindTable = KindTable {
    agent: "OpenTelemetry traces",
    tools: &[
        ("read_file", KindRule::Is(ToolKind::Read)),
        ("read_text_file", KindRule::Is(ToolKind::Read)),
        ("read_multiple_files", KindRule::Is(ToolKind::Read)),
        ("edit_file", KindRule::Is(ToolKind::Edit)),
        ("replace", KindRule::Is(ToolKind::Edit)),
        ("apply_patch", KindRule::Is(ToolKind::Edit)),
        ("write_file", KindRule::Is(ToolKind::Write)),
        ("create_file", KindRule::Is(ToolKind::Write)),
        ("search_files", KindRule::Is(ToolKind::Search)),
        ("search_file_content", KindRule::Is(ToolKind::Search)),
        ("grep", KindRule::Is(ToolKind::Search)),
        ("glob", KindRule::Is(ToolKind::Search)),
        ("list_directory", KindRule::Is(ToolKind::List)),
        ("list_dir", KindRule::Is(ToolKind::List)),
        ("directory_tree", KindRule::Is(ToolKind::List)),
        ("bash", KindRule::Is(ToolKind::Shell)),
        ("shell", KindRule::Is(ToolKind::Shell)),
        ("run_shell_command", KindRule::Is(ToolKind::Shell)),
        ("execute_command", KindRule::Is(ToolKind::Shell)),
        ("exec_command", KindRule::Is(ToolKind::Shell)),
        ("update_plan", KindRule::Is(ToolKind::Plan)),
        ("write_todos", KindRule::Is(ToolKind::Plan)),
        ("google_search", KindRule::Is(ToolKind::Web)),
        ("web_search", KindRule::Is(ToolKind::Web)),
        ("search_web", KindRule::Is(ToolKind::Web)),
        ("visit_webpage", KindRule::Is(ToolKind::Web)),
        ("load_web_page", KindRule::Is(ToolKind::Web)),
        ("web_fetch", KindRule::Is(ToolKind::Web)),
        ("transfer_to_agent", KindRule::Is(ToolKind::Delegate)),
    ],
};

/// An OpenTelemetry trace export: OTLP JSON, Tempo, Jaeger or any-agent.
#[derive(Debug, Clone, Copy, Default)]
pub struct Otel;

impl AgentFormat for Otel {
    const DESCRIBED: Described = Described {
        name: SOURCE,
        noun: "an OpenTelemetry trace",
        about: "OpenTelemetry GenAI spans (OTLP JSON, Jaeger or Tempo export, any-agent trace)",
        document_keys: Some(
            "`resourceSpans`, `batches`, `data[].spans` or `spans` (OpenTelemetry)",
        ),
        extensions: &["json", "jsonl"],
    };

    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        match evidence {
            Evidence::Object(map) if Shape::of(map).is_some() => Sniff::Certain,
            _ => Sniff::No,
        }
    }

    fn read_bytes(
        &self,
        path: &Path,
        bytes: &[u8],
        filter: &SessionFilter,
    ) -> Result<SourceRead, SourceError> {
        read_capped(path, bytes, filter, MAX_DOCUMENT)
    }
}

fn format_error(path: &Path, message: String) -> SourceError {
    SourceError::Format {
        path: path.to_owned(),
        message,
    }
}

/// A document longer than `cap`, refused.
fn too_large(path: &Path, what: &str, len: usize, cap: u64) -> SourceError {
    format_error(
        path,
        format!(
            "{what} is {}, more than {}, the cap on one trace document: not read (a span attribute this large is refused)",
            bytes_phrase(len as u64),
            bytes_phrase(cap)
        ),
    )
}

fn bytes_phrase(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / f64::from(1u32 << 30)),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1u32 << 20)),
        n => format!("{n} bytes"),
    }
}

/// Reads the sessions of a trace file's `bytes`: one document per line (the Collector's
/// file exporter), or the whole file one document (a Jaeger or Tempo download, pretty
/// printed). A document past `cap` bytes is refused.
pub(crate) fn read_capped(
    path: &Path,
    bytes: &[u8],
    filter: &SessionFilter,
    cap: u64,
) -> Result<SourceRead, SourceError> {
    let mut file = FileSpans::new(path);
    let mut lines = bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace));
    let first = lines.next();
    let one_per_line = match (first, lines.next()) {
        (Some((_, line)), Some(_)) => {
            line.len() as u64 <= cap
                && crate::json::from_slice_lenient::<serde::de::IgnoredAny>(line).is_ok()
        }
        _ => false,
    };
    if one_per_line {
        for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let n = i as u64 + 1;
            if line.len() as u64 > cap {
                return Err(too_large(path, &format!("line {n}"), line.len(), cap));
            }
            file.line(n, line);
        }
    } else {
        if bytes.len() as u64 > cap {
            return Err(too_large(path, "the document", bytes.len(), cap));
        }
        let doc = crate::json::from_slice_lenient::<Value>(bytes)
            .map_err(|err| {
                format_error(
                    path,
                    format!(
                        "an OpenTelemetry trace export is JSON, one document or one a line, and this is not valid JSON: {}",
                        describe_json_error(&err, bytes)
                    ),
                )
            })?
            .0;
        let shape = match &doc {
            Value::Object(map) => Shape::of(map),
            _ => None,
        };
        match (shape, doc) {
            (Some(shape), Value::Object(map)) => {
                file.spans
                    .extend(shapes::spans(shape, map, bytes, &Place::File));
            }
            _ => {
                return Err(format_error(
                    path,
                    "is not an OpenTelemetry trace export: it has no `resourceSpans`, `batches`, `data[].spans` or `spans` of a trace".to_owned(),
                ))
            }
        }
    }
    Ok(file.finish(filter))
}

/// The spans of one file, as its documents are read.
struct FileSpans<'p> {
    path: &'p Path,
    spans: Vec<Span>,
    warnings: Vec<SourceWarning>,
    /// Lines that are no trace document, skipped.
    broken: u64,
}

/// What a span is to a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// `invoke_agent`, `create_agent`, `invoke_workflow`.
    Agent,
    /// `execute_tool`.
    Tool,
    /// A model call: `chat`, `generate_content`, `text_completion`, `call_llm`.
    Inference,
    /// A GenAI operation this reader makes no entry of (`embeddings`, `retrieval`, one of a
    /// later convention): skipped and counted in its session's `skippedLines`.
    Unknown,
    /// Anything else: HTTP, queues, a framework's own steps. It makes no entry, as an HTTP
    /// request is no step of the agent's; how many there were is said once per file.
    Other,
}

/// The operations of the GenAI conventions (`gen_ai.operation.name`) and the non-standard
/// names frameworks give the same spans (Google ADK's and any-agent's `call_llm`).
fn role_of_operation(op: &str) -> Option<Role> {
    Some(match op {
        "invoke_agent" | "create_agent" | "invoke_workflow" => Role::Agent,
        "execute_tool" => Role::Tool,
        "chat" | "generate_content" | "text_completion" | "call_llm" => Role::Inference,
        _ => return None,
    })
}

/// A span's role and the operation its entry names.
fn role(span: &Span) -> (Role, String) {
    let attr = |key: &str| span.attrs.get(key).and_then(Value::as_str);
    if let Some(op) = attr("gen_ai.operation.name") {
        return match role_of_operation(op) {
            Some(role) => (role, op.to_owned()),
            // `embeddings`, `retrieval`, an operation of a later convention.
            None => (Role::Unknown, op.to_owned()),
        };
    }
    // The span name starts with the operation (`execute_tool get_weather`, `call_llm`).
    let word = span.name.split(' ').next().unwrap_or("");
    if let Some(role) = role_of_operation(word) {
        return (role, word.to_owned());
    }
    // OpenInference (Arize Phoenix) and OpenLLMetry (`openai.chat` with `gen_ai.system`).
    match attr("openinference.span.kind") {
        Some("LLM") => return (Role::Inference, "chat".to_owned()),
        Some("TOOL") => return (Role::Tool, "execute_tool".to_owned()),
        Some("AGENT") => return (Role::Agent, "invoke_agent".to_owned()),
        _ => {}
    }
    if span.attrs.contains_key("gen_ai.system") {
        let request = attr("llm.request.type").or_else(|| span.name.rsplit('.').next());
        match request {
            Some("chat") => return (Role::Inference, "chat".to_owned()),
            Some("completion") => return (Role::Inference, "text_completion".to_owned()),
            _ => {}
        }
    }
    (Role::Other, String::new())
}

impl<'p> FileSpans<'p> {
    fn new(path: &'p Path) -> Self {
        FileSpans {
            path,
            spans: Vec::new(),
            warnings: Vec::new(),
            broken: 0,
        }
    }

    fn warn(&mut self, place: Place, message: String) {
        self.warnings.push(SourceWarning {
            path: self.path.to_owned(),
            place,
            message,
        });
    }

    /// One line of an OTLP file: a document, or a line skipped with a warning.
    fn line(&mut self, n: u64, line: &[u8]) {
        let why = match crate::json::from_slice_lenient::<Value>(line) {
            Ok((Value::Object(map), _)) => match Shape::of(&map) {
                Some(shape) => {
                    let spans = shapes::spans(shape, map, line, &Place::Line(n));
                    self.spans.extend(spans);
                    return;
                }
                None => "a JSON object with no `resourceSpans`, `batches`, `data[].spans` or `spans` of a trace".to_owned(),
            },
            Ok((other, _)) => format!("{}, not a trace document", super::common::json_kind(&other)),
            Err(err) => format!("not valid JSON: {}", describe_json_error(&err, line)),
        };
        self.broken += 1;
        self.warn(Place::Line(n), format!("skipped: {why}"));
    }

    /// The sessions of the spans read.
    fn finish(mut self, filter: &SessionFilter) -> SourceRead {
        let spans = std::mem::take(&mut self.spans);
        // Each span by its trace and id; a span written twice (two exports of one trace in a
        // file) counts once, as it was first written.
        let mut index: FxHashMap<(&str, &str), usize> = FxHashMap::default();
        let mut twice = vec![false; spans.len()];
        for (i, s) in spans.iter().enumerate() {
            if s.id.is_empty() {
                continue;
            }
            match index.entry((s.trace.as_str(), s.id.as_str())) {
                Occupied(_) => twice[i] = true,
                Vacant(at) => {
                    at.insert(i);
                }
            }
        }
        let written_twice = twice.iter().filter(|t| **t).count();
        if written_twice > 0 {
            self.warn(
                Place::File,
                format!("{written_twice} spans are written twice (the same trace and span id): each is read once"),
            );
        }
        let parent: Vec<Option<usize>> = spans
            .iter()
            .map(|s| {
                let p = s.parent.as_deref()?;
                index.get(&(s.trace.as_str(), p)).copied()
            })
            .collect();
        let roles: Vec<(Role, String)> = spans.iter().map(role).collect();
        // The first ancestor (within MAX_DEPTH) for which `hit` says something.
        let up = |mut i: usize, hit: &dyn Fn(usize) -> Option<usize>| {
            for _ in 0..MAX_DEPTH {
                i = parent[i]?;
                if let Some(found) = hit(i) {
                    return Some(found);
                }
            }
            None
        };
        let conversation: Vec<Option<String>> = spans.iter().map(conversation_of).collect();
        let mut trace_conversation: FxHashMap<&str, &str> = FxHashMap::default();
        for (span, conv) in spans.iter().zip(&conversation) {
            if let Some(conv) = conv {
                trace_conversation
                    .entry(span.trace.as_str())
                    .or_insert(conv);
            }
        }
        let stem = super::agent::file_stem(self.path);
        let session_of = |i: usize| -> String {
            if let Some(conv) = &conversation[i] {
                return conv.clone();
            }
            let inherited = up(i, &|a| conversation[a].as_ref().map(|_| a));
            if let Some(a) = inherited {
                return conversation[a].clone().unwrap_or_default();
            }
            let trace = spans[i].trace.as_str();
            match trace_conversation.get(trace) {
                Some(conv) => (*conv).to_owned(),
                None if trace.is_empty() => stem.clone(),
                None => trace.to_owned(),
            }
        };
        // Sessions in the order of their first span's start.
        let mut order: Vec<usize> = (0..spans.len()).collect();
        order.sort_by_key(|&i| spans[i].start.unwrap_or(0));
        // Each session's entries (spans), and its spans of unknown operations.
        let mut sessions: Vec<(String, Vec<usize>, u64)> = Vec::new();
        let mut unknown = Unknown::default();
        let mut other = 0u64;
        let mut by_id: FxHashMap<String, usize> = FxHashMap::default();
        let mut untimed = 0;
        for &i in &order {
            if twice[i] {
                continue;
            }
            let (role, _) = &roles[i];
            let nested = *role == Role::Inference
                && up(i, &|a| (roles[a].0 != Role::Other).then_some(a))
                    .is_some_and(|a| roles[a].0 == Role::Inference);
            if nested {
                continue;
            }
            if *role == Role::Other {
                other += 1;
                continue;
            }
            let id = session_of(i);
            let at = *by_id.entry(id.clone()).or_insert_with(|| {
                sessions.push((id, Vec::new(), 0));
                sessions.len() - 1
            });
            if *role == Role::Unknown {
                unknown.add(&roles[i].1);
                sessions[at].2 += 1;
            } else {
                untimed += u64::from(spans[i].start.is_none());
                sessions[at].1.push(i);
            }
        }
        if untimed > 0 {
            self.warn(
                Place::File,
                format!("{untimed} agent, tool or model spans have no start time: each is placed at 1970-01-01T00:00:00Z, before the others"),
            );
        }
        let mut read = SourceRead::default();
        for (id, entries, skipped) in sessions {
            if !filter.wants(&id) {
                continue;
            }
            let mut session = Session {
                id,
                entries: Vec::with_capacity(entries.len()),
                skipped_lines: skipped,
            };
            for i in entries {
                let entry = self.entry(&session.id, &spans[i], &roles[i].1, roles[i].0);
                session.entries.push(entry);
            }
            read.sessions.push(session);
        }
        if other > 0 {
            let (noun, verb, make) = if other == 1 {
                ("span", "is", "makes")
            } else {
                ("spans", "are", "make")
            };
            self.warn(
                Place::File,
                format!("{other} {noun} {verb} no agent, tool or model call (HTTP, queues, databases, a framework's own steps) and {make} no entry"),
            );
        }
        read.skipped_lines = self.broken + unknown.total();
        self.warnings.extend(unknown.warnings(self.path, "spans"));
        read.skipped_unattributed = self.broken;
        read.warnings = self.warnings;
        read
    }

    /// The entry of an agent, tool or inference span.
    fn entry(
        &mut self,
        session: &str,
        span: &Span,
        operation: &str,
        role: Role,
    ) -> crate::entry::Entry {
        let start = span.start.unwrap_or(0);
        let instant = start.div_euclid(1_000_000);
        let timestamp = crate::time::format_iso_millis(instant);
        let step = Step {
            session,
            timestamp: &timestamp,
            instant,
            source: SOURCE,
        };
        let duration = match span.end {
            Some(end) if end >= start => (end - start) as f64 / 1e6,
            _ => 0.0,
        };
        let attr = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| span.attrs.get(*k).filter(|v| !v.is_null()))
        };
        let mut extra = Map::new();
        extra.insert("traceId".into(), span.trace.clone().into());
        extra.insert("spanId".into(), span.id.clone().into());
        extra.insert("spanName".into(), span.name.clone().into());
        if let Some(service) = &span.service {
            extra.insert("service".into(), service.clone().into());
        }
        // A tool's result: MCP's `CallToolResult` says `isError` (Google ADK writes it whole).
        let result = (role == Role::Tool)
            .then(|| {
                attr(&[
                    "gen_ai.tool.call.result",
                    "gen_ai.output",
                    "gcp.vertex.agent.tool_response",
                    "output.value",
                ])
            })
            .flatten();
        let reported = result.and_then(reported_error);
        // `error.type` is set exactly when the operation ended in an error (the conventions).
        let error_type = attr(&["error.type"]).map(plain).filter(|t| !t.is_empty());
        let error = (span.failed || error_type.is_some() || reported.is_some()).then(|| {
            span.error
                .clone()
                .or(error_type)
                .or(reported)
                .unwrap_or_else(|| "the span's status is ERROR".to_owned())
        });
        match role {
            Role::Tool => {
                let name = attr(&["gen_ai.tool.name", "tool.name"])
                    .map(plain)
                    .or_else(|| span.name.strip_prefix("execute_tool ").map(str::to_owned))
                    .unwrap_or_else(|| span.name.clone());
                let args = attr(&[
                    "gen_ai.tool.call.arguments",
                    "gen_ai.tool.args",
                    "gcp.vertex.agent.tool_call_args",
                    "input.value",
                ]);
                let (args, note) = arguments(args);
                if let Some(note) = note {
                    self.warn(span.place.clone(), format!("the call of `{name}`: {note}"));
                }
                if let Some(id) = attr(&["gen_ai.tool.call.id"]) {
                    extra.insert("toolCallId".into(), plain(id).into());
                }
                extra.insert("hasResult".into(), Value::Bool(result.is_some()));
                step.tool(&KINDS, &name, args, error, duration, extra)
            }
            Role::Agent => {
                let mut params = Params::new();
                for (key, attrs) in [
                    ("name", &["gen_ai.agent.name", "agent.name"][..]),
                    ("id", &["gen_ai.agent.id"]),
                ] {
                    if let Some(value) = attr(attrs) {
                        params.insert(key, value.clone());
                    }
                }
                step.entry("agent", operation, params, error, duration, extra)
            }
            Role::Inference | Role::Unknown | Role::Other => {
                let mut params = Params::new();
                for (key, attrs) in [
                    (
                        "model",
                        &[
                            "gen_ai.request.model",
                            "gen_ai.response.model",
                            "llm.model_name",
                        ][..],
                    ),
                    ("provider", &["gen_ai.provider.name", "gen_ai.system"]),
                    (
                        "inputTokens",
                        &["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"],
                    ),
                    (
                        "outputTokens",
                        &[
                            "gen_ai.usage.output_tokens",
                            "gen_ai.usage.completion_tokens",
                        ],
                    ),
                    ("finishReasons", &["gen_ai.response.finish_reasons"]),
                ] {
                    if let Some(value) = attr(attrs) {
                        params.insert(key, value.clone());
                    }
                }
                step.entry("generation", operation, params, error, duration, extra)
            }
        }
    }
}

/// A value as text: a string as it is, anything else as JSON.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The text of a tool result that reports a failure as MCP does (`{"isError": true,
/// "content": [{"type": "text", "text": …}]}`, an object or a JSON text holding one).
fn reported_error(result: &Value) -> Option<String> {
    let parsed;
    let result = match result {
        Value::String(text) if text.trim_start().starts_with('{') => {
            parsed = crate::json::from_slice_lenient::<Value>(text.as_bytes())
                .ok()?
                .0;
            &parsed
        }
        other => other,
    };
    if result.get("isError").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let text = super::agent_run::content_text(result.get("content"));
    Some(if text.trim().is_empty() {
        "the tool reported an error (`isError`)".to_owned()
    } else {
        text
    })
}

/// The conversation a span names: `gen_ai.conversation.id`, else `session.id`.
fn conversation_of(span: &Span) -> Option<String> {
    ["gen_ai.conversation.id", "session.id"]
        .iter()
        .find_map(|k| match span.attrs.get(*k)? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
}

#[cfg(test)]
mod tests;
