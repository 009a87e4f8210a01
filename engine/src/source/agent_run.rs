//! What the readers of recorded agent runs (inspect_ai logs, OpenTelemetry traces, ATIF
//! trajectories) share: an entry built from the few things each of them knows, and the
//! count of records of a type a reader does not know, which are skipped and said.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::common::{Place, SourceWarning};
use super::tool::{KindTable, KIND_KEY};
use crate::entry::{Entry, Metadata, Origin, Outcome, Params};
use crate::time::InstantMs;

/// An entry of session `session` at `timestamp` (read as `instant`).
pub(crate) struct Step<'a> {
    pub session: &'a str,
    pub timestamp: &'a str,
    pub instant: InstantMs,
    /// `metadata.source`: the format's name.
    pub source: &'a str,
}

impl Step<'_> {
    /// A message entry: domain `message`, operation `role`, `params.text`.
    pub fn message(&self, role: &str, text: &str, extra: Map<String, Value>) -> Entry {
        let mut params = Params::new();
        params.insert("text", Value::String(text.to_owned()));
        self.entry("message", role, params, None, 0.0, extra)
    }

    /// A tool call: domain `tool`, operation the tool's name, params its arguments, failed
    /// when `error` is given, `metadata.kind` from the agent's table.
    pub fn tool(
        &self,
        table: &KindTable,
        name: &str,
        arguments: Map<String, Value>,
        error: Option<String>,
        duration_ms: f64,
        mut extra: Map<String, Value>,
    ) -> Entry {
        let kind = table.kind_of(name, &arguments);
        extra.insert(KIND_KEY.into(), Value::String(kind.as_str().to_owned()));
        self.entry(
            "tool",
            name,
            Params::from(arguments),
            error,
            duration_ms,
            extra,
        )
    }

    /// Any other entry.
    pub fn entry(
        &self,
        domain: &str,
        operation: &str,
        params: Params,
        error: Option<String>,
        duration_ms: f64,
        extra: Map<String, Value>,
    ) -> Entry {
        let mut metadata = Metadata::with_source(self.source);
        metadata.extra = extra;
        let success = error.is_none();
        Entry {
            timestamp: self.timestamp.into(),
            instant: self.instant,
            session_id: self.session.into(),
            domain: domain.into(),
            operation: operation.into(),
            params,
            result: Outcome {
                success,
                exit_code: i64::from(!success),
                duration: if duration_ms.is_finite() && duration_ms >= 0.0 {
                    duration_ms
                } else {
                    0.0
                },
            },
            metadata,
            error: error.map(Into::into),
            origin: Origin::UNKNOWN,
        }
    }
}

/// The text of a message's content: a string, or the `text` of its text parts (a list of
/// `{"type": "text", "text": …}`, as OpenAI-style messages and inspect_ai write), joined by a
/// blank line; other parts (images, reasoning) are left out.
pub(crate) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| match part {
                Value::String(text) => Some(text.as_str()),
                Value::Object(part)
                    if part
                        .get("type")
                        .and_then(Value::as_str)
                        .is_none_or(|t| t == "text") =>
                {
                    part.get("text").and_then(Value::as_str)
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}

/// Records of types a reader does not know, counted per type: each is skipped, counted in
/// its session's `skippedLines`, and said once per type in a warning.
#[derive(Default)]
pub(crate) struct Unknown(BTreeMap<String, u64>);

impl Unknown {
    pub fn add(&mut self, kind: &str) {
        *self.0.entry(kind.to_owned()).or_default() += 1;
    }

    /// How many records were skipped, of every type.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// One warning per type, naming what the records are (`events`, `spans`).
    pub fn warnings(self, path: &Path, what: &str) -> Vec<SourceWarning> {
        self.0
            .into_iter()
            .map(|(kind, n)| SourceWarning {
                path: path.to_owned(),
                place: Place::File,
                message: format!(
                    "skipped {n} {what} of type `{kind}`, which this reader does not know (counted in the session's skipped lines)"
                ),
            })
            .collect()
    }
}
