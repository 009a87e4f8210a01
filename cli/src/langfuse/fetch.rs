//! `--source langfuse:session/ID` and `--source langfuse:trace/ID`: a session or trace
//! read from the Langfuse API, made into the documents a downloaded trace file holds and
//! read by the engine's Langfuse reader, so the entries are those of the download.
//!
//! Langfuse v4 (Cloud, and self-hosted servers on the v4 data model) serves observations
//! through `GET /api/public/v2/observations`, filtered by `sessionId` or `traceId`, a page
//! of up to 1000 at a time behind a cursor, with the `io` field group for inputs and
//! outputs. Each trace is then rebuilt from its observations: its id, its name (the
//! trace name, else the root observation's), its start (the earliest observation's), the
//! session and user, its environment, tags and release, and the root observation's input
//! and output. A server without that endpoint (a v3 server answers 404) is read through
//! the v3 endpoints instead: `GET /api/public/sessions/{id}` for the session's traces,
//! `GET /api/public/traces/{id}` for each trace with its observations.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use grade_engine::source::{Input, Registry};
use grade_engine::{ReadOptions, SessionFilter, SourceRead};
use serde_json::{Map, Value};

use super::server::Server;
use crate::error::CliError;
use crate::http::{Failure, Reply};

/// Observations per page, the endpoint's maximum.
const PAGE: usize = 1000;
/// The field groups asked for: everything the trace reader maps to entries.
const FIELDS: &str = "core,basic,time,io,metadata,model,usage,trace_context";
/// Answers (pages, sessions, traces) read at most for one source, so a server that keeps
/// answering with a cursor cannot keep the read going forever (`GRADE_LANGFUSE_MAX_PAGES`).
const MAX_PAGES: usize = 10_000;
/// Bytes of answers read at most for one source: everything read is held until the source
/// is whole, and a server that sent 9 MB pages without end took 3.3 GB in 30 s
/// (`GRADE_LANGFUSE_MAX_BYTES`).
const MAX_BYTES: usize = 1 << 30;

/// How much one read of a remote source may take from the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub pages: usize,
    pub bytes: usize,
}

impl Caps {
    /// The defaults, or what `GRADE_LANGFUSE_MAX_PAGES` and `GRADE_LANGFUSE_MAX_BYTES` say.
    pub fn from_env() -> Result<Caps, CliError> {
        Ok(Caps {
            pages: crate::input::cap_from_env("GRADE_LANGFUSE_MAX_PAGES", MAX_PAGES, "pages")?,
            bytes: crate::input::cap_from_env("GRADE_LANGFUSE_MAX_BYTES", MAX_BYTES, "bytes")?,
        })
    }
}

/// What a read has taken so far, against its [`Caps`].
struct Meter {
    caps: Caps,
    pages: usize,
    bytes: usize,
}

impl Meter {
    fn new(caps: Caps) -> Meter {
        Meter {
            caps,
            pages: 0,
            bytes: 0,
        }
    }

    /// `GET`s one answer, counting it; past a cap, the read stops with a failure that names
    /// the cap and how to raise it.
    fn get(&mut self, server: &Server, path_and_query: &str) -> Result<Reply, Failure> {
        if self.pages >= self.caps.pages {
            return Err(capped(format!(
                "the server had more than {} pages for it, the most one read takes (`GRADE_LANGFUSE_MAX_PAGES` sets it)",
                self.caps.pages
            )));
        }
        let reply = server.get(path_and_query)?;
        self.pages += 1;
        self.bytes = self.bytes.saturating_add(reply.body.len());
        if self.bytes > self.caps.bytes {
            return Err(capped(format!(
                "the server sent more than {} for it, the most one read takes (`GRADE_LANGFUSE_MAX_BYTES` sets it)",
                bytes_shown(self.caps.bytes)
            )));
        }
        Ok(reply)
    }
}

fn capped(message: String) -> Failure {
    Failure::Transport {
        message,
        attempts: 1,
    }
}

/// A byte count in the largest unit it is a whole number of.
fn bytes_shown(n: usize) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n => format!("{n} bytes"),
    }
}

/// What to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Remote {
    Session(String),
    Trace(String),
}

impl Remote {
    /// `langfuse:session/ID` or `langfuse:trace/ID`; `None` for a source that is not
    /// `langfuse:…` at all, an error for one that is but is malformed.
    pub fn parse(source: &str) -> Option<Result<Remote, CliError>> {
        let rest = source.strip_prefix("langfuse:")?;
        let parsed = match rest.split_once('/') {
            Some(("session", id)) if !id.is_empty() => Ok(Remote::Session(id.to_owned())),
            Some(("trace", id)) if !id.is_empty() => Ok(Remote::Trace(id.to_owned())),
            _ => Err(CliError::Usage(format!(
                "source `{source}`: a Langfuse source is `langfuse:session/ID` or `langfuse:trace/ID`"
            ))),
        };
        Some(parsed)
    }

    fn kind(&self) -> &'static str {
        match self {
            Remote::Session(_) => "session",
            Remote::Trace(_) => "trace",
        }
    }

    fn id(&self) -> &str {
        match self {
            Remote::Session(id) | Remote::Trace(id) => id,
        }
    }

    /// How the source is named in messages and warnings.
    pub fn shown(&self) -> String {
        format!("langfuse:{}/{}", self.kind(), self.id())
    }
}

/// Reads the sessions of a remote source.
pub fn read(
    remote: &Remote,
    server: &Server,
    filter: &SessionFilter,
    options: &ReadOptions,
    caps: Caps,
) -> Result<SourceRead, CliError> {
    let mut meter = Meter::new(caps);
    let failed = |why: String| {
        CliError::Remote(format!(
            "cannot read {} `{}` from Langfuse at `{}`: {why}",
            remote.kind(),
            remote.id(),
            server.host
        ))
    };
    let explain = |failure: Failure| -> CliError {
        if let Some(problem) = server.access_problem(&failure) {
            return failed(problem);
        }
        failed(failure.describe())
    };
    let docs = match observations_v4(remote, server, &mut meter) {
        Ok(observations) => {
            if observations.is_empty() {
                return Err(failed(format!(
                    "the server has no observations for that {} (is the id right, and are the keys of its project?)",
                    remote.kind()
                )));
            }
            traces_from_observations(observations)
        }
        // No v4 endpoint: a v3 server.
        Err(Failure::Status {
            status: 404 | 405 | 501,
            ..
        }) => documents_v3(remote, server, &mut meter).map_err(|f| match f {
            Failure::Status { status: 404, .. } => failed(format!(
                "the server has no such {} (404 Not Found)",
                remote.kind()
            )),
            other => explain(other),
        })?,
        Err(failure) => return Err(explain(failure)),
    };
    // Read as the registry's Langfuse format reads an array of trace downloads.
    let origin = PathBuf::from(remote.shown());
    let bytes = serde_json::to_vec(&Value::Array(docs)).map_err(CliError::Json)?;
    let format = Registry::builtin().get(LANGFUSE_FORMAT).ok_or_else(|| {
        CliError::Usage(format!(
            "the `{LANGFUSE_FORMAT}` source format is not registered"
        ))
    })?;
    let input = Input::Bytes {
        name: &origin,
        bytes: &bytes,
    };
    Registry::builtin()
        .read(&input, Some(format.as_ref()), filter, options)
        .map_err(CliError::Source)
}

/// The registry name of the format Langfuse documents are read as.
pub const LANGFUSE_FORMAT: &str = "langfuse";

/// Every observation of the source through the v4 endpoint, all pages.
fn observations_v4(
    remote: &Remote,
    server: &Server,
    meter: &mut Meter,
) -> Result<Vec<Value>, Failure> {
    let filter = match remote {
        Remote::Session(id) => format!("sessionId={}", encode(id)),
        Remote::Trace(id) => format!("traceId={}", encode(id)),
    };
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    loop {
        let mut query = format!(
            "/api/public/v2/observations?{filter}&fields={}&limit={PAGE}",
            encode(FIELDS)
        );
        if let Some(c) = &cursor {
            query.push_str(&format!("&cursor={}", encode(c)));
        }
        let reply = meter.get(server, &query)?;
        let page: Value =
            serde_json::from_str(&reply.body).map_err(|e| not_api(&reply.body, &e))?;
        let Some(data) = page.get("data").and_then(Value::as_array) else {
            return Err(not_api(&reply.body, "it has no `data` array"));
        };
        out.extend(data.iter().cloned());
        cursor = page
            .pointer("/meta/cursor")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .map(str::to_owned);
        match &cursor {
            None => return Ok(out),
            // A cursor seen before would read the same pages again.
            Some(c) if !seen.insert(c.clone()) => return Ok(out),
            Some(_) if data.is_empty() => return Ok(out),
            Some(_) => {}
        }
    }
}

/// An answer that is not what the API serves, as a failure to report.
pub(crate) fn not_api(body: &str, why: impl std::fmt::Display) -> Failure {
    Failure::Transport {
        message: format!(
            "the answer is not an API response ({why}): `{}`",
            grade_engine::judgment::quote_start(body, 120)
        ),
        attempts: 1,
    }
}

/// The trace documents of v4 observations: one `{trace, observations}` per trace id, in
/// the order the traces start.
fn traces_from_observations(observations: Vec<Value>) -> Vec<Value> {
    let mut by_trace: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for o in observations {
        let trace = o
            .get("traceId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        by_trace.entry(trace).or_default().push(observation_v1(o));
    }
    by_trace
        .into_iter()
        .map(|(trace_id, observations)| {
            let trace = trace_of(&trace_id, &observations);
            serde_json::json!({"trace": trace, "observations": observations})
        })
        .collect()
}

/// A v2 observation under the names a trace download uses.
fn observation_v1(mut o: Value) -> Value {
    if let Value::Object(map) = &mut o {
        if let Some(model) = map.remove("providedModelName") {
            map.entry("model").or_insert(model);
        }
    }
    o
}

/// The trace record rebuilt from its observations.
fn trace_of(trace_id: &str, observations: &[Value]) -> Value {
    let text = |o: &Value, key: &str| o.get(key).and_then(Value::as_str).map(str::to_owned);
    let ids: HashSet<&str> = observations
        .iter()
        .filter_map(|o| o.get("id").and_then(Value::as_str))
        .collect();
    // The root: marked so, else without a parent among these observations; the earliest.
    let start = |o: &&Value| text(o, "startTime").unwrap_or_default();
    let root = observations
        .iter()
        .filter(|o| {
            o.get("isRootObservation").and_then(Value::as_bool) == Some(true)
                || o.get("parentObservationId")
                    .and_then(Value::as_str)
                    .is_none_or(|p| !ids.contains(p))
        })
        .min_by_key(start)
        .or_else(|| observations.iter().min_by_key(start));
    let mut trace = Map::new();
    trace.insert("id".into(), trace_id.into());
    let first = |key: &str| {
        observations
            .iter()
            .find_map(|o| o.get(key).filter(|v| !v.is_null()).cloned())
    };
    if let Some(root) = root {
        let name = first("traceName").or_else(|| root.get("name").cloned());
        if let Some(name) = name {
            trace.insert("name".into(), name);
        }
        if let Some(t) = observations
            .iter()
            .filter_map(|o| text(o, "startTime"))
            .min_by(|a, b| {
                let at = grade_engine::time::parse_timestamp(a).ok();
                let bt = grade_engine::time::parse_timestamp(b).ok();
                at.cmp(&bt)
            })
        {
            trace.insert("timestamp".into(), t.into());
        }
        for key in ["input", "output", "environment"] {
            if let Some(v) = root.get(key).filter(|v| !v.is_null()) {
                trace.insert(key.into(), v.clone());
            }
        }
    }
    for key in ["sessionId", "userId", "tags", "release"] {
        if let Some(v) = first(key) {
            trace.insert(key.into(), v);
        }
    }
    let instants: Vec<(i64, i64)> = observations
        .iter()
        .filter_map(|o| {
            let s = grade_engine::time::parse_timestamp(&text(o, "startTime")?).ok()?;
            let e = text(o, "endTime")
                .and_then(|e| grade_engine::time::parse_timestamp(&e).ok())
                .unwrap_or(s);
            Some((s, e))
        })
        .collect();
    if let (Some(s), Some(e)) = (
        instants.iter().map(|(s, _)| *s).min(),
        instants.iter().map(|(_, e)| *e).max(),
    ) {
        trace.insert(
            "latency".into(),
            serde_json::json!((e - s).max(0) as f64 / 1000.0),
        );
    }
    Value::Object(trace)
}

/// The trace documents through the v3 endpoints.
fn documents_v3(
    remote: &Remote,
    server: &Server,
    meter: &mut Meter,
) -> Result<Vec<Value>, Failure> {
    let trace_ids = match remote {
        Remote::Trace(id) => vec![id.clone()],
        Remote::Session(id) => {
            let reply = meter.get(server, &format!("/api/public/sessions/{}", encode(id)))?;
            let session: Value =
                serde_json::from_str(&reply.body).map_err(|e| not_api(&reply.body, &e))?;
            let Some(traces) = session.get("traces").and_then(Value::as_array) else {
                return Err(not_api(&reply.body, "it has no `traces` array"));
            };
            traces
                .iter()
                .filter_map(|t| t.get("id").and_then(Value::as_str).map(str::to_owned))
                .collect()
        }
    };
    let mut docs = Vec::with_capacity(trace_ids.len());
    for id in trace_ids {
        let reply = meter.get(server, &format!("/api/public/traces/{}", encode(&id)))?;
        let doc: Value = serde_json::from_str(&reply.body).map_err(|e| not_api(&reply.body, &e))?;
        docs.push(doc);
    }
    Ok(docs)
}

/// A path segment or query component, percent-encoded (RFC 3986 unreserved kept).
pub(crate) fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_name_a_session_or_a_trace() {
        assert_eq!(
            Remote::parse("langfuse:session/chat 7").map(Result::ok),
            Some(Some(Remote::Session("chat 7".to_owned())))
        );
        assert_eq!(
            Remote::parse("langfuse:trace/abc").map(Result::ok),
            Some(Some(Remote::Trace("abc".to_owned())))
        );
        assert!(Remote::parse("audit.jsonl").is_none());
        for bad in ["langfuse:", "langfuse:session/", "langfuse:span/x"] {
            assert!(matches!(Remote::parse(bad), Some(Err(_))), "{bad}");
        }
        assert_eq!(encode("chat 7/ü"), "chat%207%2F%C3%BC");
    }

    #[test]
    fn a_trace_is_rebuilt_from_its_observations() {
        let observations = vec![
            serde_json::json!({"id": "c", "traceId": "t", "parentObservationId": "r", "startTime": "2025-01-01T00:00:02.000Z", "endTime": "2025-01-01T00:00:03.000Z", "type": "TOOL", "name": "x", "providedModelName": "m"}),
            serde_json::json!({"id": "r", "traceId": "t", "parentObservationId": null, "startTime": "2025-01-01T00:00:01.000Z", "endTime": "2025-01-01T00:00:04.500Z", "type": "SPAN", "name": "root", "input": "{\"q\": 1}", "output": "done", "environment": "prod", "sessionId": "s", "traceName": "my trace", "tags": ["a"]}),
        ];
        let docs = traces_from_observations(observations);
        assert_eq!(docs.len(), 1);
        let trace = &docs[0]["trace"];
        assert_eq!(trace["id"], "t");
        assert_eq!(trace["name"], "my trace");
        assert_eq!(trace["timestamp"], "2025-01-01T00:00:01.000Z");
        assert_eq!(trace["input"], "{\"q\": 1}");
        assert_eq!(trace["sessionId"], "s");
        assert_eq!(trace["environment"], "prod");
        assert_eq!(trace["latency"], 3.5);
        assert_eq!(docs[0]["observations"][0]["model"], "m");
    }
}
