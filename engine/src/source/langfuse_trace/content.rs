//! What a trace's inputs and outputs hold: the prompts and replies that become `message`
//! entries (with the `messageId` shared by the calls of one model turn), and JSON texts
//! nested in strings, decoded into params.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::tree::{Highest, Tree};
use super::{DECODE_DEPTH, SOURCE};
use crate::entry::{Entry, MetaRef, Metadata, Outcome, Params};
use crate::time::InstantMs;

/// What a generation read from the user and replied, to become `message` entries once the
/// observations are in time order (a generation's input repeats the conversation before it,
/// so which of its user messages are new depends on the order).
pub(super) struct Talk {
    pub(super) users: Vec<String>,
    pub(super) replies: Vec<String>,
    pub(super) message_id: Option<String>,
}

/// The texts of the messages made from a trace so far.
#[derive(Default)]
pub(super) struct Said {
    pub(super) users: HashSet<String>,
    pub(super) replies: HashSet<String>,
}

pub(super) fn decoded(value: &Value) -> Value {
    decode(value.clone())
}

/// A `message` entry (operation `user` or `assistant`, `params.text`) at `at`'s time, of
/// its trace and observation: the entries a Claude Code transcript has for a prompt and a
/// reply, so that rules reading replies judge a trace as they judge a transcript.
pub(super) fn message(
    at: &Entry,
    operation: &str,
    text: String,
    message_id: Option<&str>,
) -> Entry {
    let mut extra = Map::new();
    for key in ["traceId", "observationId"] {
        if let Some(MetaRef::Json(v)) = at.metadata.get(key) {
            extra.insert(key.into(), v.clone());
        }
    }
    if let Some(id) = message_id {
        extra.insert("messageId".into(), id.into());
    }
    Entry {
        timestamp: at.timestamp.clone(),
        instant: at.instant,
        session_id: at.session_id.clone(),
        domain: "message".into(),
        operation: operation.into(),
        params: Params::from_iter([("text", Value::String(text))]),
        result: Outcome {
            success: true,
            exit_code: 0,
            duration: 0.0,
        },
        metadata: Metadata {
            user_id: at.metadata.user_id.clone(),
            extra,
            ..Metadata::with_source(SOURCE)
        },
        error: None,
        origin: crate::entry::Origin::UNKNOWN,
    }
}

/// The text of a message's content: a string, or its text blocks (`text`, `input_text`,
/// pydantic-ai's `parts` with `content`) joined by a blank line, as a transcript joins a
/// prompt's blocks. Tool calls, tool results and images are no text.
fn content_text(content: Option<&Value>) -> Option<String> {
    let text = match content? {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(block_text)
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => return None,
    };
    Some(text).filter(|t| !t.trim().is_empty())
}

/// The text of one content block: `{"type": "text" | "input_text" | "output_text",
/// "text": …}`, or a part `{"type": "text", "content": …}`.
fn block_text(block: &Value) -> Option<String> {
    let kind = block.get("type").and_then(Value::as_str)?;
    if !matches!(kind, "text" | "input_text" | "output_text") {
        return None;
    }
    block
        .get("text")
        .or_else(|| block.get("content"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// What the user wrote, in a trace's or a generation's input: a text; a message with role
/// `user`; a list of messages (or `{"messages": […]}`), of which the user's; or
/// `{"prompt": "…"}` (the Claude Agent SDK's trace input). Anything else (a function's
/// arguments, a system prompt) is not the user speaking.
pub(super) fn user_texts(input: &Value) -> Vec<String> {
    match input {
        Value::String(s) if !s.trim().is_empty() => vec![s.clone()],
        Value::Array(items) => items.iter().filter_map(user_message).collect(),
        Value::Object(map) => {
            if let Some(Value::Array(items)) = map.get("messages") {
                return items.iter().filter_map(user_message).collect();
            }
            if let Some(text) = user_message(input) {
                return vec![text];
            }
            match map.get("prompt") {
                Some(Value::String(s)) if !s.trim().is_empty() => vec![s.clone()],
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

fn user_message(message: &Value) -> Option<String> {
    if message.get("role").and_then(Value::as_str) != Some("user") {
        return None;
    }
    content_text(message.get("content").or_else(|| message.get("parts")))
}

/// The assistant's replies in a generation's (or the trace's) output, one per text block as
/// a transcript has them: a text; a message with role `assistant` (Anthropic's content
/// blocks, OpenAI's text, pydantic-ai's parts); OpenAI's `choices[].message`; the
/// Responses API's `output[]` messages; a list of messages, of which the assistant's.
pub(super) fn assistant_texts(output: &Value) -> Vec<String> {
    match output {
        Value::String(s) if !s.trim().is_empty() => vec![s.clone()],
        Value::Array(items) => items.iter().flat_map(assistant_message).collect(),
        Value::Object(map) => {
            if let Some(Value::Array(choices)) = map.get("choices") {
                return choices
                    .iter()
                    .filter_map(|c| c.get("message"))
                    .flat_map(assistant_message)
                    .collect();
            }
            if let Some(Value::Array(items)) = map.get("output") {
                return items.iter().flat_map(assistant_message).collect();
            }
            assistant_message(output)
        }
        _ => Vec::new(),
    }
}

fn assistant_message(message: &Value) -> Vec<String> {
    match message.get("role").and_then(Value::as_str) {
        Some("assistant") => {}
        // Anthropic's content blocks without a role are the assistant's; any other role
        // (the user's turn of a history, a tool's) is not a reply.
        None if message.get("content").is_some_and(Value::is_array) => {}
        _ => return Vec::new(),
    }
    match message.get("content").or_else(|| message.get("parts")) {
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.clone()],
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(block_text)
            .filter(|t| !t.trim().is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// The message each generation and tool call belongs to, by observation index. A trace
/// records no API message ids, and the Claude Agent SDK records each block of a message
/// (a text, each tool call) as a generation of its own; so generations are one message
/// while no tool ran between their starts (a generation that started before any tool of
/// the previous one ran cannot have read a result: the calls are independent, and ran
/// together), and a tool call belongs to the message of the last generation that started
/// before it under one of its ancestors (the generation that asked for it). A message is
/// named by its first generation's id. Without this every call stood alone, and calls made
/// together counted as made one after the other (`sequential-lookups`, `failure-streak`).
pub(super) fn message_ids(
    observations: &[Value],
    tree: &Tree<'_>,
    trace_id: &str,
) -> HashMap<usize, String> {
    let start = |o: &Value| {
        o.get("startTime")
            .and_then(Value::as_str)
            .and_then(|t| crate::time::parse_timestamp(t).ok())
    };
    let is = |o: &Value, kind: &str| {
        o.get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.eq_ignore_ascii_case(kind))
    };
    let mut generations: Vec<(InstantMs, usize)> = Vec::new();
    let mut tools: Vec<(InstantMs, usize)> = Vec::new();
    for (i, o) in observations.iter().enumerate() {
        match start(o) {
            Some(at) if is(o, "GENERATION") => generations.push((at, i)),
            Some(at) if is(o, "TOOL") => tools.push((at, i)),
            _ => {}
        }
    }
    generations.sort_unstable();
    tools.sort_unstable();
    let id_of = |i: usize| {
        observations[i]
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(|| format!("{trace_id}:observations[{i}]"), str::to_owned)
    };
    let mut out = HashMap::new();
    let mut current: Option<(InstantMs, String)> = None;
    for &(at, i) in &generations {
        // Tools are sorted: the first that started at or after `previous` tells.
        let joined = current.as_ref().filter(|(previous, _)| {
            let next = tools.partition_point(|&(tool, _)| tool < *previous);
            tools.get(next).is_none_or(|&(tool, _)| tool >= at)
        });
        let id = match joined {
            Some((_, id)) => id.clone(),
            None => id_of(i),
        };
        out.insert(i, id.clone());
        current = Some((at, id));
    }
    let parent = |i: usize| {
        observations[i]
            .get("parentObservationId")
            .and_then(Value::as_str)
    };
    // Tools in start order, each after every generation that started by then: the latest
    // at the top, and the latest under each observation (as a key raised over the places
    // of its subtree), tell the tool's in one look (a scan of the generations per tool was
    // n² for a deep trace).
    let mut under = Highest::new(tree.len());
    let mut top: Option<usize> = None;
    let mut started = 0;
    for &(at, t) in &tools {
        while let Some(&(_, g)) = generations.get(started).filter(|&&(g_at, _)| g_at <= at) {
            match parent(g) {
                None => top = Some(started),
                Some(p) => {
                    if let Some(span) = tree.span(p) {
                        under.raise(span, started);
                    }
                }
            }
            started += 1;
        }
        let under_ancestor = parent(t)
            .and_then(|up| tree.span(up))
            .and_then(|(place, _)| under.at(place));
        if let Some(&(_, g)) = top.max(under_ancestor).and_then(|k| generations.get(k)) {
            if let Some(id) = out.get(&g).cloned() {
                out.insert(t, id);
            }
        }
    }
    out
}

/// A value with JSON texts nested in strings decoded (only strings that look like a JSON
/// object, array or string are tried; anything else is kept as written).
pub(super) fn decode(mut value: Value) -> Value {
    for _ in 0..DECODE_DEPTH {
        let Value::String(text) = &value else { break };
        let trimmed = text.trim_start();
        if !(trimmed.starts_with('{') || trimmed.starts_with('[') || trimmed.starts_with('"')) {
            break;
        }
        match crate::json::from_slice_lenient::<Value>(text.as_bytes()) {
            Ok((inner, lone)) => {
                if lone {
                    NESTED_LONE_SURROGATE.with(|seen| seen.set(true));
                }
                value = inner;
            }
            Err(_) => break,
        }
    }
    value
}

thread_local! {
    /// Whether a JSON text nested in a string of the trace being read held a lone surrogate,
    /// read as U+FFFD (kept as a string, a tool's arguments would have no keys, and every rule
    /// reading one would pass in silence). Set by [`decode`], which the readers of entries
    /// call from deep inside them, and said once per trace by [`super::read_trace`]; a trace is read
    /// on one thread.
    pub(super) static NESTED_LONE_SURROGATE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A tool call's input as params. The Claude Agent SDK's instrumentation records a call's
/// arguments wrapped, `{"input": {"file_path": …}}`: read as they were, every rule that looks
/// at a tool's arguments (`file_path`, `command`) would find none and pass in silence. A
/// wrapper of exactly that shape (one key, `input`, holding an object) is taken off.
pub(super) fn tool_params(input: Option<&Value>) -> Params {
    match input.filter(|v| !v.is_null()).cloned().map(decode) {
        Some(Value::Object(mut map))
            if map.len() == 1 && map.get("input").is_some_and(Value::is_object) =>
        {
            params_of(map.remove("input").as_ref())
        }
        other => params_of(other.as_ref()),
    }
}

/// An input as params: its keys when it is an object, else `{"input": value}`.
pub(super) fn params_of(input: Option<&Value>) -> Params {
    match input.filter(|v| !v.is_null()).cloned().map(decode) {
        None => Params::new(),
        Some(Value::Object(map)) => map.into(),
        Some(other) => Params::from_iter([("input", other)]),
    }
}
