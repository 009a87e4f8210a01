//! ATIF, the agent trajectory interchange format (harbor's RFC 0001, versions 1.0 to 1.7):
//! one JSON document per trajectory, `{schema_version, session_id, agent, steps[]}`, each
//! step from the `user`, the `agent` or the `system`, an agent step with its `tool_calls`
//! and the `observation` whose `results` answer them by `source_call_id`.
//!
//! Producers deviate, and a reader that refused them would grade nothing: `schema_version`
//! `1.4` without its `ATIF-v` prefix, `step_id` a string, `agent.model` for `model_name`,
//! tool calls as `{id, name}`, and a call's result as a later `system` step of its own
//! (`observation.result.success`). Each is read as the spec's shape would be.
//!
//! OpenAgents also streams a trajectory as JSONL (`*.atif.jsonl`): a first line with
//! `__header__: true` and the document's fields but `steps`, then one step a line. It is read
//! as the document those lines make; a line that is no step object is skipped and counted.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::agent::{AgentFormat, Described};
use super::agent_run::{content_text, Step, Unknown};
use super::common::{
    describe_json_error, Place, SessionFilter, SourceError, SourceRead, SourceWarning,
};
use super::format::{Evidence, Sniff};
use super::tool::{arguments, KindTable};
use crate::entry::{Entry, Session};

/// `metadata.source` of every entry read from a trajectory, and the format's name.
pub const SOURCE: &str = "atif";

/// ATIF carries each agent's own tool names; the producers seen (Terminal-Bench runs of
/// Claude Code, OpenAgents' runners) name Claude Code's tools, whose table serves.
fn kinds() -> &'static KindTable {
    &super::claude_code::KINDS
}

/// An ATIF trajectory.
#[derive(Debug, Clone, Copy, Default)]
pub struct Atif;

impl AgentFormat for Atif {
    const DESCRIBED: Described = Described {
        name: SOURCE,
        noun: "an ATIF trajectory",
        about: "An ATIF agent trajectory (harbor RFC 0001)",
        document_keys: Some("`schema_version` and `steps` (ATIF)"),
        extensions: &["json", "jsonl"],
    };

    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        match evidence {
            Evidence::Object(map) if is_trajectory(map) || is_stream_header(map) => Sniff::Certain,
            _ => Sniff::No,
        }
    }

    fn read_bytes(
        &self,
        path: &Path,
        bytes: &[u8],
        filter: &SessionFilter,
    ) -> Result<SourceRead, SourceError> {
        if let Some(read) = read_stream(path, bytes, filter) {
            return Ok(read);
        }
        let (doc, _) =
            crate::json::from_slice_lenient::<Value>(bytes).map_err(|err| SourceError::Format {
                path: path.to_owned(),
                message: format!(
                    "an ATIF trajectory is one JSON document, and this is not valid JSON: {}",
                    describe_json_error(&err, bytes)
                ),
            })?;
        match doc {
            Value::Object(map) if is_trajectory(&map) => Ok(read_trajectory(path, &map, filter)),
            _ => Err(SourceError::Format {
                path: path.to_owned(),
                message: "is not an ATIF trajectory: it has no `schema_version` and `steps` list"
                    .to_owned(),
            }),
        }
    }
}

/// Whether a document is a trajectory: a `schema_version` (`ATIF-v1.4`, or a bare `1.4` as
/// some producers write) and a `steps` list.
fn is_trajectory(map: &Map<String, Value>) -> bool {
    map.get("steps").is_some_and(Value::is_array)
        && map
            .get("schema_version")
            .and_then(Value::as_str)
            .is_some_and(|v| {
                v.starts_with("ATIF-v") || v.chars().next().is_some_and(|c| c.is_ascii_digit())
            })
}

/// The first line of a streamed trajectory: `__header__` true and an ATIF `schema_version`.
fn is_stream_header(map: &Map<String, Value>) -> bool {
    map.get("__header__").and_then(Value::as_bool) == Some(true)
        && map
            .get("schema_version")
            .and_then(Value::as_str)
            .is_some_and(|v| v.starts_with("ATIF-v"))
}

/// A streamed trajectory (a header line, then one step a line) read as its document; `None`
/// when the first line is no stream header.
fn read_stream(path: &Path, bytes: &[u8], filter: &SessionFilter) -> Option<SourceRead> {
    let mut lines = bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.trim_ascii().is_empty());
    let (_, first) = lines.next()?;
    let Ok(Value::Object(mut doc)) = serde_json::from_slice::<Value>(first) else {
        return None;
    };
    if !is_stream_header(&doc) {
        return None;
    }
    doc.remove("__header__");
    let mut steps = Vec::new();
    let mut skipped = Vec::new();
    for (i, line) in lines {
        match serde_json::from_slice::<Value>(line) {
            Ok(step @ Value::Object(_)) => steps.push(step),
            Ok(_) => skipped.push(((i + 1) as u64, "the line is not a JSON object".to_owned())),
            Err(e) => skipped.push(((i + 1) as u64, format!("the line is not valid JSON: {e}"))),
        }
    }
    doc.insert("steps".into(), Value::Array(steps));
    let mut read = read_trajectory(path, &doc, filter);
    for session in &mut read.sessions {
        session.skipped_lines += skipped.len() as u64;
    }
    read.skipped_lines += skipped.len() as u64;
    read.warnings
        .extend(skipped.into_iter().map(|(line, message)| SourceWarning {
            path: path.to_owned(),
            place: Place::Line(line),
            message: format!("skipped: {message}"),
        }));
    Some(read)
}

/// A call's id, name and arguments, as the spec (`tool_call_id`, `function_name`) or a
/// producer (`id`, `name`) writes them.
fn call_parts(call: &Value) -> (Option<&str>, &str, Option<&Value>) {
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| call.get(*k).and_then(Value::as_str))
    };
    (
        text(&["tool_call_id", "id"]),
        text(&["function_name", "name"]).unwrap_or(""),
        call.get("arguments").or_else(|| call.get("input")),
    )
}

/// Why a result says its call failed, if it does: `result.success` false (with its
/// `error`), or a content object with `success`/`passed` false, `is_error` true or an
/// `error`.
fn failure(result: &Value) -> Option<String> {
    let said = |obj: &Value| -> Option<String> {
        let obj = obj.as_object()?;
        let failed = obj.get("success").and_then(Value::as_bool) == Some(false)
            || obj.get("passed").and_then(Value::as_bool) == Some(false)
            || obj.get("is_error").and_then(Value::as_bool) == Some(true);
        let error = obj
            .get("error")
            .filter(|e| !e.is_null() && *e != &Value::Bool(false));
        if !failed && error.is_none() {
            return None;
        }
        Some(match error {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => obj
                .get("output")
                .and_then(Value::as_str)
                .unwrap_or("failed")
                .to_owned(),
        })
    };
    result
        .get("result")
        .and_then(said)
        .or_else(|| result.get("content").and_then(said))
        .or_else(|| said(result))
}

fn read_trajectory(path: &Path, doc: &Map<String, Value>, filter: &SessionFilter) -> SourceRead {
    let text = |key: &str| doc.get(key).and_then(Value::as_str).map(str::to_owned);
    let id = text("session_id")
        .or_else(|| text("trajectory_id"))
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    let mut warnings = Vec::new();
    if !filter.wants(&id) {
        return SourceRead::default();
    }
    let steps = doc
        .get("steps")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut session = Session {
        id: id.clone(),
        ..Session::default()
    };
    let mut unknown = Unknown::default();
    // Each call's entry, by its id, for the result that answers it.
    let mut calls: HashMap<String, usize> = HashMap::new();
    // Results that came before their call (a producer writing them as system steps).
    let mut early: HashMap<String, String> = HashMap::new();
    let mut last_time: Option<(String, i64)> = None;
    for (i, step) in steps.iter().enumerate() {
        let place = format!("steps[{i}]");
        let Some(step) = step.as_object() else {
            unknown.add("(not an object)");
            continue;
        };
        let time = step.get("timestamp").and_then(Value::as_str).and_then(|t| {
            crate::time::parse_timestamp(t)
                .ok()
                .map(|i| (t.to_owned(), i))
        });
        let (timestamp, instant) = match time.or_else(|| last_time.clone()) {
            Some(time) => time,
            None => ("1970-01-01T00:00:00.000Z".to_owned(), 0),
        };
        last_time = Some((timestamp.clone(), instant));
        let at = Step {
            session: &id,
            timestamp: &timestamp,
            instant,
            source: SOURCE,
        };
        let mut base = Map::new();
        if let Some(step_id) = step.get("step_id").filter(|v| !v.is_null()) {
            base.insert("stepId".into(), step_id.clone());
        }
        let message = content_text(step.get("message"));
        let source = step.get("source").and_then(Value::as_str).unwrap_or("");
        match source {
            "user" | "agent" => {
                if !message.trim().is_empty() {
                    let role = if source == "user" {
                        "user"
                    } else {
                        "assistant"
                    };
                    let mut extra = base.clone();
                    if let Some(model) = step.get("model_name").filter(|m| m.is_string()) {
                        extra.insert("model".into(), model.clone());
                    }
                    session.entries.push(at.message(role, &message, extra));
                }
                for call in step
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let (call_id, name, args) = call_parts(call);
                    let (args, note) = arguments(args);
                    if let Some(note) = note {
                        warnings.push(SourceWarning {
                            path: path.to_owned(),
                            place: Place::Item(place.clone()),
                            message: format!("the call of `{name}`: {note}"),
                        });
                    }
                    let mut extra = base.clone();
                    let error = call_id.and_then(|c| early.remove(c));
                    if let Some(call_id) = call_id {
                        extra.insert("toolCallId".into(), Value::String(call_id.to_owned()));
                        calls.insert(call_id.to_owned(), session.entries.len());
                    }
                    session
                        .entries
                        .push(at.tool(kinds(), name, args, error, 0.0, extra));
                }
                answer(step, &mut session.entries, &calls, &mut early);
            }
            "system" => {
                // A producer's result step: `Tool result for <id>` with `observation.result`.
                let observation = step.get("observation");
                let result_of = message
                    .strip_prefix("Tool result for ")
                    .map(str::trim)
                    .filter(|id| !id.is_empty());
                match (result_of, observation) {
                    (Some(call_id), Some(observation)) => {
                        let failed = failure(observation);
                        match calls.get(call_id) {
                            Some(&at) => fail(&mut session.entries[at], failed),
                            None => {
                                if let Some(error) = failed {
                                    early.insert(call_id.to_owned(), error);
                                }
                            }
                        }
                    }
                    _ => answer(step, &mut session.entries, &calls, &mut early),
                }
            }
            other => unknown.add(&format!("step source {other}")),
        }
    }
    session.skipped_lines += unknown.total();
    warnings.extend(unknown.warnings(path, "steps"));
    SourceRead {
        sessions: vec![session],
        warnings,
        skipped_lines: 0,
        skipped_unattributed: 0,
    }
}

/// The results of a step's `observation` answer the calls they name.
fn answer(
    step: &Map<String, Value>,
    entries: &mut [Entry],
    calls: &HashMap<String, usize>,
    early: &mut HashMap<String, String>,
) {
    let results = step
        .get("observation")
        .and_then(|o| o.get("results"))
        .and_then(Value::as_array);
    for result in results.into_iter().flatten() {
        let Some(call_id) = result.get("source_call_id").and_then(Value::as_str) else {
            continue;
        };
        let failed = failure(result);
        match calls.get(call_id) {
            Some(&at) => fail(&mut entries[at], failed),
            None => {
                if let Some(error) = failed {
                    early.insert(call_id.to_owned(), error);
                }
            }
        }
    }
}

fn fail(entry: &mut Entry, error: Option<String>) {
    if let Some(error) = error {
        entry.result.success = false;
        entry.result.exit_code = 1;
        entry.error = Some(error.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streamed_trajectory_reads_as_its_document_and_counts_a_broken_line() {
        let text = concat!(
            r#"{"__header__":true,"schema_version":"ATIF-v1.4","session_id":"s","agent":{"name":"a"}}"#,
            "\n",
            r#"{"step_id":1,"timestamp":"2025-12-05T08:00:00Z","source":"user","message":"go"}"#,
            "\n{not json\n",
            r#"{"step_id":2,"timestamp":"2025-12-05T08:00:01Z","source":"agent","message":"done"}"#,
            "\n"
        );
        let read = Atif
            .read_bytes(
                Path::new("t.atif.jsonl"),
                text.as_bytes(),
                &SessionFilter::All,
            )
            .unwrap();
        assert_eq!(read.sessions.len(), 1);
        assert_eq!(read.sessions[0].id, "s");
        assert_eq!(read.sessions[0].entries.len(), 2);
        assert_eq!(read.sessions[0].skipped_lines, 1);
        assert_eq!(read.warnings.len(), 1);
        assert!(matches!(read.warnings[0].place, Place::Line(3)));
    }
}
