//! Langfuse traces: the UI's `{"trace": …, "observations": […]}` download, or the public
//! API's trace response (`GET /api/public/traces/{id}`: the trace with `observations`).
//!
//! The trace itself becomes a first entry (domain `trace`, operation its name, params its
//! input), then every observation, ordered by start time (parents before children at the
//! same instant): domain the observation type lowercased (`tool`, `generation`, `span`,
//! `agent`, `event`, …), operation its name, params its input. An observation fails when
//! its level is `ERROR`; its status message is then the entry's error. The session is the
//! trace's `sessionId`, else the trace id. A JSON array of such documents (a session's
//! traces, as `--source langfuse:session/ID` fetches them) is read as one source, the
//! traces of a session joined in time order. Prompts and replies (the trace's input and
//! output, generations' inputs and outputs) also become `message` entries, and calls of one
//! model turn share a `messageId`, as in a Claude Code transcript. The API's trace list and
//! session responses are refused: their traces lack observations. `docs/sources.md` has the
//! full mapping.

mod content;
mod tree;

use std::path::Path;

use serde_json::{Map, Value};

use super::common::{
    describe_json_error, described, json_kind, not_an_object, timestamp_field, Input, Place,
    ReadOptions, SessionFilter, SourceError, SourceRead, SourceWarning,
};
use super::format::{Evidence, Sniff, SourceFormat};
use super::lenient::MAX_DURATION_MS;
use crate::entry::{Entry, MetaValue, Metadata, Outcome, Session};
use crate::time::InstantMs;
use content::{
    assistant_texts, decode, decoded, message, message_ids, params_of, tool_params, user_texts,
    Said, Talk, NESTED_LONE_SURROGATE,
};
use tree::Tree;

/// `metadata.source` of every entry read from a trace.
pub const SOURCE: &str = "langfuse";
/// How many times a JSON text nested in a string is decoded (Langfuse stores OpenTelemetry
/// attributes as JSON strings, sometimes twice encoded).
const DECODE_DEPTH: usize = 3;

/// A Langfuse trace: the UI's download or the API's trace response, one JSON document.
#[derive(Debug, Clone, Copy, Default)]
pub struct LangfuseTrace;

impl SourceFormat for LangfuseTrace {
    fn file_extensions(&self) -> &[&str] {
        &["json", "jsonl"]
    }

    fn name(&self) -> &str {
        SOURCE
    }

    fn noun(&self) -> &str {
        "a Langfuse trace"
    }

    fn about(&self) -> &str {
        "A Langfuse trace download or API trace response"
    }

    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        match evidence {
            Evidence::Object(map) if is_trace(map) || refusal(map).is_some() => Sniff::Certain,
            Evidence::Array(items)
                if !items.is_empty()
                    && items.iter().all(|i| i.as_object().is_some_and(is_trace)) =>
            {
                Sniff::Certain
            }
            _ => Sniff::No,
        }
    }

    fn document_keys(&self) -> Option<&str> {
        Some("`trace` and `observations` (Langfuse)")
    }

    fn read(
        &self,
        input: &Input<'_>,
        filter: &SessionFilter,
        _: &ReadOptions,
    ) -> Result<SourceRead, SourceError> {
        let path = input.name();
        let text = input.bytes()?;
        let (doc, lone): (Value, bool) =
            crate::json::from_slice_lenient(&text).map_err(|err| SourceError::BadLine {
                path: path.to_owned(),
                line: err.line() as u64,
                message: format!(
                    "not a Langfuse trace, which is one JSON document: {}",
                    describe_json_error(&err, &text)
                ),
            })?;
        let mut read = match doc {
            // Several traces: a session's, as `--source langfuse:session/ID` fetches them.
            Value::Array(docs) if docs.is_empty() => Err(SourceError::NotLangfuse {
                path: path.to_owned(),
                reason: "it is an empty array, with no trace in it".to_owned(),
            }),
            Value::Array(docs) => LangfuseTrace::read_documents(path, docs, filter),
            Value::Object(map) => match refusal(&map) {
                Some(why) => Err(SourceError::NotLangfuse {
                    path: path.to_owned(),
                    reason: why.to_owned(),
                }),
                None => LangfuseTrace::read_document(path, Value::Object(map), filter),
            },
            doc => LangfuseTrace::read_document(path, doc, filter),
        }?;
        // Said once, whether the document or JSON texts nested in its traces held one.
        let said = |w: &SourceWarning| w.message == crate::json::LONE_SURROGATE_READ;
        let nested = read.warnings.iter().any(said);
        read.warnings.retain(|w| !said(w));
        if lone || nested {
            read.warnings.insert(
                0,
                SourceWarning {
                    path: path.to_owned(),
                    place: Place::File,
                    message: crate::json::LONE_SURROGATE_READ.to_owned(),
                },
            );
        }
        Ok(read)
    }
}

/// Whether `map` is a trace document: the UI's download, or the API's trace response.
fn is_trace(map: &Map<String, Value>) -> bool {
    map.get("observations").is_some_and(Value::is_array)
        && (map.get("trace").is_some_and(Value::is_object) || map.contains_key("id"))
}

/// Why a Langfuse API response that holds traces without their observations is refused,
/// when `map` is one: a page of the trace list names observations by id only, and a session
/// response has its traces without observations. Read as they are, their sessions would
/// have no tool call and no message, and grade as sessions that did nothing.
fn refusal(map: &Map<String, Value>) -> Option<&'static str> {
    if map.get("data").is_some_and(Value::is_array)
        && map
            .get("meta")
            .and_then(Value::as_object)
            .is_some_and(|meta| meta.contains_key("totalItems"))
    {
        return Some("it is a page of a Langfuse API list (`{\"data\": [...], \"meta\": {...}}`, as `GET /api/public/traces` returns), whose traces name their observations by id only: fetch each trace with `GET /api/public/traces/{id}` and pass the response, or a JSON array of those responses (`--source langfuse:trace/ID` fetches one)");
    }
    if map.get("traces").is_some_and(Value::is_array)
        && map.contains_key("id")
        && !map.contains_key("observations")
    {
        return Some("it is a Langfuse session (`GET /api/public/sessions/{id}`), whose traces come without their observations: fetch each trace with `GET /api/public/traces/{id}` and pass a JSON array of the responses, or use `--source langfuse:session/ID`, which does");
    }
    None
}

impl LangfuseTrace {
    /// Reads a trace document already parsed (one fetched from the API, say); `path` is how
    /// messages name it.
    pub fn read_document(
        path: &Path,
        doc: Value,
        filter: &SessionFilter,
    ) -> Result<SourceRead, SourceError> {
        read_trace(path, doc, filter)
    }

    /// Reads several trace documents of one source (the traces of a Langfuse session, as
    /// the API serves them) into sessions: traces of the same session are joined in the
    /// order of their first entry, each keeping the order it has on its own.
    pub fn read_documents(
        path: &Path,
        docs: Vec<Value>,
        filter: &SessionFilter,
    ) -> Result<SourceRead, SourceError> {
        let mut traces = Vec::with_capacity(docs.len());
        let mut warnings = Vec::new();
        let several = docs.len() > 1;
        for (i, doc) in docs.into_iter().enumerate() {
            let read = read_trace(path, doc, filter).map_err(|err| match err {
                SourceError::NotLangfuse { path, reason } if several => SourceError::NotLangfuse {
                    path,
                    reason: format!("item {i} of the array: {reason}"),
                },
                other => other,
            })?;
            warnings.extend(read.warnings);
            traces.extend(read.sessions);
        }
        traces.sort_by_key(|s| s.entries.first().map(|e| e.instant));
        let mut sessions: Vec<Session> = Vec::new();
        for trace in traces {
            match sessions.iter_mut().find(|s| s.id == trace.id) {
                Some(session) => session.entries.extend(trace.entries),
                None => sessions.push(trace),
            }
        }
        Ok(SourceRead {
            sessions,
            warnings,
            ..SourceRead::default()
        })
    }
}

fn read_trace(path: &Path, doc: Value, filter: &SessionFilter) -> Result<SourceRead, SourceError> {
    NESTED_LONE_SURROGATE.with(|seen| seen.set(false));
    let mut read = read_trace_entries(path, doc, filter)?;
    if NESTED_LONE_SURROGATE.with(|seen| seen.replace(false)) {
        read.warnings.push(SourceWarning {
            path: path.to_owned(),
            place: Place::File,
            message: crate::json::LONE_SURROGATE_READ.to_owned(),
        });
    }
    Ok(read)
}

fn read_trace_entries(
    path: &Path,
    doc: Value,
    filter: &SessionFilter,
) -> Result<SourceRead, SourceError> {
    let (trace, observations) = trace_and_observations(path, doc)?;
    let prefix = "observations";
    let not = |reason: String| SourceError::NotLangfuse {
        path: path.to_owned(),
        reason,
    };
    let Some(trace_id) = trace.get("id").and_then(Value::as_str).map(str::to_owned) else {
        return Err(not("the trace has no `id`".to_owned()));
    };
    let session_id = trace
        .get("sessionId")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map_or_else(|| trace_id.clone(), str::to_owned);

    let mut warnings = Vec::new();
    if !filter.wants(&session_id) {
        return Ok(SourceRead {
            warnings,
            ..SourceRead::default()
        });
    }
    let read = TraceRead {
        path,
        trace_id: &trace_id,
        session_id: &session_id,
        user_id: trace
            .get("userId")
            .filter(|v| !v.is_null())
            .cloned()
            .map(MetaValue::from),
    };
    let mut entries = Vec::with_capacity(observations.len() + 1);
    // The texts of the messages made so far: a generation's input repeats the conversation
    // before it, and the trace's output the last reply.
    let mut said = Said::default();
    read.push_trace_entry(&trace, &mut said, &mut entries, &mut warnings);

    // Depth in the observation tree, so a parent starting with its child comes first.
    let links: Vec<(Option<&str>, Option<&str>)> = observations
        .iter()
        .map(|o| {
            let text = |key| o.get(key).and_then(Value::as_str);
            (text("id"), text("parentObservationId"))
        })
        .collect();
    let (tree, cut) = Tree::new(&links);
    for i in cut {
        warnings.push(SourceWarning {
            path: path.to_owned(),
            place: Place::Item(format!("{prefix}[{i}]")),
            message: format!(
                "its `parentObservationId` `{}` leads back to it (a cycle), so it is read as having no parent",
                links[i].1.unwrap_or_default()
            ),
        });
    }

    let message_ids = message_ids(&observations, &tree, &trace_id);
    let mut ordered: Vec<(InstantMs, usize, usize, Entry, Option<Talk>)> =
        Vec::with_capacity(observations.len());
    for (i, observation) in observations.iter().enumerate() {
        let place = Place::Item(format!("{prefix}[{i}]"));
        let mut warn = |message: String| {
            warnings.push(SourceWarning {
                path: path.to_owned(),
                place: place.clone(),
                message,
            })
        };
        let Some((id, entry, talk)) =
            read.observation_entry(observation, message_ids.get(&i).cloned(), &mut warn)
        else {
            continue;
        };
        ordered.push((entry.instant, tree.depth(id), i, entry, talk));
    }
    ordered.sort_by_key(|(instant, depth, i, _, _)| (*instant, *depth, *i));
    in_transcript_order(ordered, &mut said, &mut entries);
    // The trace's output is the last reply; one no generation gave is added at the end.
    if let Some(last) = entries.last().cloned() {
        let output = trace
            .get("output")
            .map(decoded)
            .map(|v| assistant_texts(&v));
        for text in output.unwrap_or_default() {
            if said.replies.insert(text.clone()) {
                entries.push(message(&last, "assistant", text, None));
            }
        }
    }
    Ok(SourceRead {
        sessions: vec![Session {
            id: session_id,
            entries,
            ..Session::default()
        }],
        warnings,
        ..SourceRead::default()
    })
}

/// The trace and its observations, from the UI's download (observations beside the trace,
/// or inside it) or the API's trace response (observations inside).
fn trace_and_observations(
    path: &Path,
    doc: Value,
) -> Result<(Map<String, Value>, Vec<Value>), SourceError> {
    let not = |reason: String| SourceError::NotLangfuse {
        path: path.to_owned(),
        reason,
    };
    let Value::Object(mut doc) = doc else {
        return Err(not(format!("it is {}", not_an_object(&doc))));
    };
    // The download keeps observations beside the trace; the API response inside it.
    let (trace, observations) = match doc.remove("trace") {
        Some(Value::Object(mut trace)) => {
            let observations = match doc.remove("observations") {
                Some(obs) => obs,
                None => trace
                    .remove("observations")
                    .unwrap_or(Value::Array(Vec::new())),
            };
            trace.remove("observations");
            (trace, observations)
        }
        Some(other) => return Err(not(format!("`trace` is {}", not_an_object(&other)))),
        None => {
            let Some(observations) = doc.remove("observations") else {
                return Err(not("it has neither `trace` nor `observations`".to_owned()));
            };
            (doc, observations)
        }
    };
    let Value::Array(observations) = observations else {
        return Err(not(format!(
            "`observations` is a JSON {}, not an array",
            json_kind(&observations)
        )));
    };
    Ok((trace, observations))
}

/// What every entry of one trace shares.
struct TraceRead<'a> {
    path: &'a Path,
    trace_id: &'a str,
    session_id: &'a str,
    user_id: Option<MetaValue>,
}

impl TraceRead<'_> {
    fn warning(&self, message: String) -> SourceWarning {
        SourceWarning {
            path: self.path.to_owned(),
            place: Place::Item("trace".to_owned()),
            message,
        }
    }

    /// The trace's own entry, then the user's messages its input holds; without a readable
    /// `timestamp` only a warning saying the entry is left out.
    fn push_trace_entry(
        &self,
        trace: &Map<String, Value>,
        said: &mut Said,
        entries: &mut Vec<Entry>,
        warnings: &mut Vec<SourceWarning>,
    ) {
        let (text, instant) = match timestamp_field(trace, "timestamp") {
            Ok(Some(found)) => found,
            Err(why) => {
                warnings.push(self.warning(format!("the trace entry is left out: {why}")));
                return;
            }
            Ok(None) => {
                warnings.push(self.warning(
                    "the trace has no `timestamp`; the trace entry is left out".to_owned(),
                ));
                return;
            }
        };
        let mut extra = Map::new();
        extra.insert("traceId".into(), self.trace_id.into());
        for key in ["output", "tags", "release", "version", "environment"] {
            if let Some(v) = trace.get(key).filter(|v| !v.is_null()) {
                extra.insert(key.into(), decode(v.clone()));
            }
        }
        if let Some(v) = trace.get("metadata").filter(|v| !v.is_null()) {
            extra.insert("traceMetadata".into(), decode(v.clone()));
        }
        if let Some(Value::Array(scores)) = trace.get("scores") {
            extra.insert("scores".into(), Value::Array(scores.clone()));
        }
        let duration = latency_ms(trace).unwrap_or_else(|why| {
            warnings.push(self.warning(format!("{why}: the trace's duration is left at 0")));
            0.0
        });
        let first = Entry {
            timestamp: text.into(),
            instant,
            session_id: self.session_id.into(),
            domain: "trace".into(),
            operation: trace
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("trace")
                .into(),
            params: params_of(trace.get("input")),
            result: Outcome {
                success: true,
                exit_code: 0,
                duration,
            },
            metadata: Metadata {
                user_id: self.user_id.clone(),
                extra,
                ..Metadata::with_source(SOURCE)
            },
            error: None,
            origin: crate::entry::Origin::UNKNOWN,
        };
        let users = trace
            .get("input")
            .map(decoded)
            .map(|v| user_texts(&v))
            .unwrap_or_default();
        let messages: Vec<Entry> = users
            .into_iter()
            .filter(|text| said.users.insert(text.clone()))
            .map(|text| message(&first, "user", text, None))
            .collect();
        entries.push(first);
        entries.extend(messages);
    }

    /// An observation's entry, with its `id` (for its depth in the tree) and, for a
    /// generation, the messages it read and wrote; `None`, with a warning, for one that is no
    /// object or has no readable `startTime`.
    fn observation_entry<'o>(
        &self,
        observation: &'o Value,
        message_id: Option<String>,
        warn: &mut dyn FnMut(String),
    ) -> Option<(Option<&'o str>, Entry, Option<Talk>)> {
        let Value::Object(o) = observation else {
            warn(format!(
                "skipped: a JSON {}, not an observation",
                json_kind(observation)
            ));
            return None;
        };
        let (start, instant) = match timestamp_field(o, "startTime") {
            Ok(Some(found)) => found,
            Ok(None) => {
                warn("skipped: the observation has no `startTime`".to_owned());
                return None;
            }
            Err(why) => {
                warn(format!("skipped: {why}"));
                return None;
            }
        };
        let end = match timestamp_field(o, "endTime") {
            Ok(Some((text, end))) if end < instant => {
                warn(format!(
                    "field `endTime` `{text}` is before `startTime` `{start}`: the observation's duration is left at 0"
                ));
                None
            }
            Ok(end) => end.map(|(_, instant)| instant),
            Err(why) => {
                warn(format!("{why}: the observation's duration is left at 0"));
                None
            }
        };
        let kind = o
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("OBSERVATION");
        let id = o.get("id").and_then(Value::as_str);
        let level = level_of(o).unwrap_or_else(|(level, why)| {
            let observation = id.map_or_else(
                || "the observation (it has no `id`)".to_owned(),
                |id| format!("observation `{id}`"),
            );
            warn(format!(
                "{why}: {observation} of trace `{}` {level}",
                self.trace_id
            ));
            level.text()
        });
        let failed = level.eq_ignore_ascii_case("ERROR");
        let status = o
            .get("statusMessage")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());

        let mut extra = Map::new();
        extra.insert("traceId".into(), self.trace_id.into());
        if let Some(id) = id {
            extra.insert("observationId".into(), id.into());
        }
        if let Some(message_id) = &message_id {
            extra.insert("messageId".into(), message_id.as_str().into());
        }
        extra.insert("type".into(), kind.into());
        extra.insert("level".into(), level.into());
        for key in [
            "parentObservationId",
            "statusMessage",
            "model",
            "endTime",
            "completionStartTime",
            "usageDetails",
            "costDetails",
            "environment",
        ] {
            if let Some(v) = o.get(key).filter(|v| !v.is_null()) {
                extra.insert(key.into(), v.clone());
            }
        }
        if let Some(v) = o.get("output").filter(|v| !v.is_null()) {
            extra.insert("output".into(), decode(v.clone()));
        }
        if let Some(v) = o.get("metadata").filter(|v| !v.is_null()) {
            extra.insert("observationMetadata".into(), decode(v.clone()));
        }
        let entry = Entry {
            timestamp: start.into(),
            instant,
            session_id: self.session_id.into(),
            domain: kind.to_lowercase().into(),
            operation: o.get("name").and_then(Value::as_str).unwrap_or(kind).into(),
            params: if kind.eq_ignore_ascii_case("TOOL") {
                tool_params(o.get("input"))
            } else {
                params_of(o.get("input"))
            },
            result: Outcome {
                success: !failed,
                exit_code: i64::from(failed),
                duration: end.map_or(0.0, |e| (e - instant).max(0) as f64),
            },
            metadata: Metadata {
                user_id: self.user_id.clone(),
                extra,
                ..Metadata::with_source(SOURCE)
            },
            error: failed.then(|| status.unwrap_or("level ERROR").into()),
            origin: crate::entry::Origin::UNKNOWN,
        };
        let talk = kind.eq_ignore_ascii_case("GENERATION").then(|| Talk {
            users: o
                .get("input")
                .map(|v| user_texts(&decoded(v)))
                .unwrap_or_default(),
            replies: o
                .get("output")
                .map(|v| assistant_texts(&decoded(v)))
                .unwrap_or_default(),
            message_id,
        });
        Some((id, entry, talk))
    }
}

/// The observations' entries in start order, each generation with the user's new messages
/// just before it (its input repeats the conversation so far) and its replies just after
/// it, as in a transcript.
fn in_transcript_order(
    ordered: Vec<(InstantMs, usize, usize, Entry, Option<Talk>)>,
    said: &mut Said,
    entries: &mut Vec<Entry>,
) {
    for (_, _, _, entry, talk) in ordered {
        let Some(talk) = talk else {
            entries.push(entry);
            continue;
        };
        for text in talk.users {
            if said.users.insert(text.clone()) {
                entries.push(message(&entry, "user", text, None));
            }
        }
        let replies: Vec<Entry> = talk
            .replies
            .into_iter()
            .map(|text| {
                said.replies.insert(text.clone());
                message(&entry, "assistant", text, talk.message_id.as_deref())
            })
            .collect();
        entries.push(entry);
        entries.extend(replies);
    }
}

/// The trace's `latency` (seconds) in milliseconds, 0 when absent; why it is no duration
/// otherwise. A number too large for a float once in milliseconds (`1e308`) would print as
/// `Infinity`, and a negative one would shorten the session's time, each without a word; one
/// beyond a CLEO log's largest duration would add up to infinity with the latency of the
/// session's next trace.
fn latency_ms(trace: &Map<String, Value>) -> Result<f64, String> {
    let latency = match trace.get("latency") {
        None | Some(Value::Null) => return Ok(0.0),
        Some(latency) => latency,
    };
    match latency.as_f64().map(|s| s * 1000.0) {
        Some(ms) if (0.0..=MAX_DURATION_MS).contains(&ms) => Ok(ms),
        _ => Err(format!(
            "field `latency` is {}, not a duration in seconds",
            described(latency)
        )),
    }
}

/// Langfuse's observation levels, as its API writes them (`ObservationLevel` in its OpenAPI
/// spec).
const LEVELS: [&str; 4] = ["DEBUG", "DEFAULT", "WARNING", "ERROR"];

/// The level an observation is read with when its `level` is none of [`LEVELS`].
#[derive(Debug, Clone, Copy, PartialEq)]
enum OddLevel<'o> {
    /// Text outside the enum: kept as written, so a pack reading `metadata.level` sees what
    /// the trace says; it fails when it is `ERROR` in another case.
    Kept(&'o str),
    /// Not text: `DEFAULT`, the API's own default, since nothing says the call failed.
    Default,
}

impl<'o> OddLevel<'o> {
    fn text(self) -> &'o str {
        match self {
            OddLevel::Kept(level) => level,
            OddLevel::Default => "DEFAULT",
        }
    }
}

impl std::fmt::Display for OddLevel<'_> {
    /// What becomes of the observation, after its name in a warning.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OddLevel::Kept(level) if level.eq_ignore_ascii_case("ERROR") => {
                write!(f, "keeps it as written and fails, as at level `ERROR`")
            }
            OddLevel::Kept(_) => write!(f, "keeps it as written and does not fail"),
            OddLevel::Default => write!(f, "is read at level `DEFAULT` and does not fail"),
        }
    }
}

/// An observation's `level`; absent or `null` is `DEFAULT` (the API's own default). One
/// outside Langfuse's enum is answered with the level it is read with and why it is odd: a
/// level taken as `DEFAULT` without a word could hide an `ERROR`.
fn level_of(o: &Map<String, Value>) -> Result<&str, (OddLevel<'_>, String)> {
    let odd = |value: &Value| {
        format!(
            "field `level` is {}, not one of Langfuse's levels ({})",
            described(value),
            LEVELS.map(|l| format!("`{l}`")).join(", ")
        )
    };
    match o.get("level") {
        None | Some(Value::Null) => Ok("DEFAULT"),
        Some(Value::String(level)) if LEVELS.contains(&level.as_str()) => Ok(level),
        Some(value @ Value::String(level)) => Err((OddLevel::Kept(level), odd(value))),
        Some(value) => Err((OddLevel::Default, odd(value))),
    }
}

#[cfg(test)]
mod tests;
