//! OpenHands event streams: a JSON list of events (a saved trajectory), one event a line,
//! or the evaluation output JSONL, whose every line is one instance with its `history` of
//! events (one session per instance, named by `instance_id`), or the resolver's output JSONL
//! (`openhands/resolver/resolver_output.py`: one `issue` a line with its `history`, a session
//! named `owner/repo#number`).
//!
//! Older histories (the resolver's, written before events kept their ids) are flat: an
//! action's arguments are its own fields (no `args`), an observation's extras too (no
//! `extras`), and there is no `id`, `source` or `cause`. An observation there answers the
//! latest action before it still unanswered, and the history's first message is the user's
//! task.
//!
//! The format is OpenHands' V0 event model (`openhands/events/serialization/event.py`): an
//! event is an action (`action`, `args`) or an observation (`observation`, `content`,
//! `extras`), and an observation names the action it answers by `cause` (the action's `id`).
//! `tool_call_metadata` holds the LLM's tool call (`function_name`, `tool_call_id`, and the
//! model response whose `tool_calls` carry the call's arguments). `docs/sources.md` has the
//! mapping.

use std::collections::HashMap;

use std::path::Path;

use serde_json::{Map, Value};

use super::agent::{file_stem, json_lines, session, At, Ended, FileRead};
use super::agent::{AgentFormat, Described};
use super::common::{Place, SessionFilter, SourceError, SourceRead};
use super::format::{Evidence, Sniff};
use super::tool::{KindRule, KindTable, ToolKind};
use crate::entry::{Entry, Session};

/// `metadata.source` of every entry read from OpenHands.
pub const SOURCE: &str = "openhands";

/// The kind of OpenHands' tools, by the LLM's function name (`openhands/agenthub/
/// codeact_agent/tools`) or, for an action made without one, by the action
/// (`openhands/events/action`); any other is `other`.
pub(crate) const KINDS: KindTable = KindTable {
    agent: "OpenHands",
    tools: &[
        ("execute_bash", KindRule::Is(ToolKind::Shell)),
        ("execute_ipython_cell", KindRule::Is(ToolKind::Shell)),
        (
            "str_replace_editor",
            KindRule::ByArg {
                key: "command",
                cases: &[("view", ToolKind::Read), ("create", ToolKind::Write)],
                otherwise: ToolKind::Edit,
            },
        ),
        ("edit_file", KindRule::Is(ToolKind::Edit)),
        ("task_tracker", KindRule::Is(ToolKind::Plan)),
        ("browser", KindRule::Is(ToolKind::Web)),
        ("web_read", KindRule::Is(ToolKind::Web)),
        ("fetch", KindRule::Is(ToolKind::Web)),
        (
            "delegate_to_browsing_agent",
            KindRule::Is(ToolKind::Delegate),
        ),
        ("run", KindRule::Is(ToolKind::Shell)),
        ("run_ipython", KindRule::Is(ToolKind::Shell)),
        ("read", KindRule::Is(ToolKind::Read)),
        ("edit", KindRule::Is(ToolKind::Edit)),
        ("write", KindRule::Is(ToolKind::Write)),
        ("browse", KindRule::Is(ToolKind::Web)),
        ("browse_interactive", KindRule::Is(ToolKind::Web)),
        ("delegate", KindRule::Is(ToolKind::Delegate)),
    ],
};

/// Actions that are no tool call: messages (entries of their own), the system prompt, the
/// runtime's recall of context, and state changes.
const NOT_CALLS: &[&str] = &["message", "system", "recall", "change_agent_state", "null"];

/// OpenHands event streams and evaluation output.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenHands;

impl AgentFormat for OpenHands {
    const DESCRIBED: Described = Described {
        name: SOURCE,
        noun: "an OpenHands event stream",
        about: "An OpenHands event stream (a JSON list of events) or evaluation output JSONL",
        document_keys: None,
        extensions: &["json", "jsonl"],
    };

    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        match evidence {
            Evidence::Object(map) if is_instance(map) || is_event(map) => Sniff::Certain,
            Evidence::Array(items) => match items.first() {
                Some(Value::Object(first)) if is_event(first) => Sniff::Certain,
                _ => Sniff::No,
            },
            _ => Sniff::No,
        }
    }

    fn read_bytes(
        &self,
        path: &Path,
        bytes: &[u8],
        filter: &SessionFilter,
    ) -> Result<SourceRead, SourceError> {
        Ok(read_events(path, bytes, filter))
    }
}

/// An evaluation output line (an `instance_id`) or a resolver output line (an `issue`
/// object), with a `history` of events.
fn is_instance(map: &Map<String, Value>) -> bool {
    instance_id(map).is_some() && map.get("history").is_some_and(Value::is_array)
}

/// The session id of an instance: its `instance_id`, or the resolver's issue as
/// `owner/repo#number`.
fn instance_id(map: &Map<String, Value>) -> Option<String> {
    if let Some(id) = map.get("instance_id").and_then(Value::as_str) {
        return Some(id.to_owned());
    }
    let issue = map.get("issue")?.as_object()?;
    let text = |key: &str| match issue.get(key) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let number = text("number")?;
    Some(match (text("owner"), text("repo")) {
        (Some(owner), Some(repo)) => format!("{owner}/{repo}#{number}"),
        _ => format!("#{number}"),
    })
}

/// Whether an event is of the older flat shape: no `id` and no `args`/`extras`.
fn is_flat(event: &Map<String, Value>) -> bool {
    !event.contains_key("id") && !event.contains_key("args") && !event.contains_key("extras")
}

/// The fields of a flat action that are no argument of its tool.
const FLAT_NOT_ARGS: &[&str] = &[
    "action",
    "thought",
    "action_risk",
    "is_confirmed",
    "keep_prompt",
    "images_urls",
    "wait_for_response",
    "kernel_init_code",
    "security_risk",
    "timestamp",
    "source",
    "message",
];

/// An event: an `id`, a `source`, and an `action` or an `observation`.
fn is_event(map: &Map<String, Value>) -> bool {
    map.contains_key("id")
        && map.get("source").is_some_and(Value::is_string)
        && (map.get("action").is_some_and(Value::is_string)
            || map.get("observation").is_some_and(Value::is_string))
}

fn read_events(path: &std::path::Path, text: &[u8], filter: &SessionFilter) -> SourceRead {
    let first = text.iter().copied().find(|b| !b.is_ascii_whitespace());
    // A saved trajectory: one JSON list of events.
    if first == Some(b'[') {
        if let Ok((Value::Array(events), _)) = crate::json::from_slice_lenient::<Value>(text) {
            let mut file = FileRead::new(SOURCE, path, false);
            let id = file_stem(path);
            let mut sessions = Vec::new();
            if filter.wants(&id) {
                let places = (0..events.len()).map(|i| Place::Item(format!("[{i}]")));
                let entries = entries_of(&mut file, &id, places.zip(events.iter()));
                sessions.push(with_skipped(session(&id, entries), file.skipped));
            }
            return finish(sessions, file);
        }
    }
    // JSONL: instances of an evaluation, or events one a line.
    let mut file = FileRead::new(SOURCE, path, true);
    let mut sessions = Vec::new();
    let mut events: Vec<(Place, Value)> = Vec::new();
    for (line, parsed) in json_lines(text) {
        let place = Place::Line(line);
        match parsed {
            Ok(Value::Object(map)) if is_instance(&map) => {
                let id = instance_id(&map).unwrap_or_default();
                if !filter.wants(&id) {
                    continue;
                }
                let before = file.skipped;
                let history = match map.get("history") {
                    Some(Value::Array(history)) => history.as_slice(),
                    _ => &[],
                };
                let places =
                    (0..history.len()).map(|i| Place::Item(format!("line {line}: history[{i}]")));
                let mut entries = entries_of(&mut file, &id, places.zip(history.iter()));
                // The run's own end, such as an iteration limit reached.
                if let Some(error) = map.get("error").and_then(Value::as_str) {
                    let mut extra = Map::new();
                    extra.insert("instanceError".into(), Value::Bool(true));
                    let at = entries.last().map(|e: &Entry| At {
                        text: e.timestamp.clone(),
                        instant: e.instant,
                    });
                    let mut entry = file.message(
                        &id,
                        &at.unwrap_or_default(),
                        &place,
                        "error",
                        error.to_owned(),
                        extra,
                    );
                    entry.result.success = false;
                    entry.result.exit_code = 1;
                    entry.error = Some(error.into());
                    entries.push(entry);
                }
                let lost = file.skipped - before;
                sessions.push(with_skipped(session(&id, entries), lost));
            }
            Ok(Value::Object(map)) if is_event(&map) => events.push((place, Value::Object(map))),
            Ok(Value::Object(_)) => file.unknown(
                place,
                "a line that is neither an instance nor an event".into(),
            ),
            Ok(other) => file.broken(
                place,
                format!("the line is {}", super::common::not_an_object(&other)),
            ),
            Err(why) => file.broken(place, why),
        }
    }
    if !events.is_empty() {
        let id = file_stem(path);
        if filter.wants(&id) {
            let entries = entries_of(
                &mut file,
                &id,
                events.iter().map(|(place, event)| (place.clone(), event)),
            );
            sessions.push(session(&id, entries));
        }
    }
    // A broken line of a JSONL file may have been any session's.
    let skipped = file.skipped;
    if !events.is_empty() || sessions.len() == 1 {
        for s in &mut sessions {
            s.skipped_lines = s.skipped_lines.max(skipped);
        }
    }
    finish(sessions, file)
}

fn with_skipped(mut session: Session, skipped: u64) -> Session {
    session.skipped_lines += skipped;
    session
}

fn finish(sessions: Vec<Session>, file: FileRead) -> SourceRead {
    SourceRead {
        skipped_lines: file.skipped,
        sessions,
        warnings: file.finish(),
        ..SourceRead::default()
    }
}

/// The answer of an action: the observation whose `cause` is its id.
struct Observation<'e> {
    kind: &'e str,
    event: &'e Map<String, Value>,
}

/// The entries of one stream of events.
fn entries_of<'e>(
    file: &mut FileRead,
    session_id: &str,
    events: impl Iterator<Item = (Place, &'e Value)>,
) -> Vec<Entry> {
    let events: Vec<(Place, &Map<String, Value>)> = events
        .filter_map(|(place, event)| match event {
            Value::Object(map) => Some((place, map)),
            _ => {
                file.broken(place, "the event is not a JSON object".into());
                None
            }
        })
        .collect();
    let mut answers: HashMap<String, Observation<'_>> = HashMap::new();
    // A flat event's answer is keyed by its position, written `@i`.
    let mut flat_open: Vec<usize> = Vec::new();
    let mut flat_answered: std::collections::HashSet<usize> = std::collections::HashSet::new();
    for (i, (_, event)) in events.iter().enumerate() {
        if is_flat(event) {
            match event.get("action").and_then(Value::as_str) {
                Some(action) if action != "message" && !NOT_CALLS.contains(&action) => {
                    flat_open.push(i);
                }
                _ => {}
            }
            if let (Some(kind), Some(at)) = (
                event.get("observation").and_then(Value::as_str),
                flat_open.pop(),
            ) {
                flat_answered.insert(i);
                answers.insert(format!("@{at}"), Observation { kind, event });
            }
            continue;
        }
        let (Some(kind), Some(cause)) = (
            event.get("observation").and_then(Value::as_str),
            event.get("cause").filter(|c| !c.is_null()),
        ) else {
            continue;
        };
        answers
            .entry(cause.to_string())
            .or_insert(Observation { kind, event });
    }
    let mut said_task = false;
    let mut entries = Vec::new();
    for (i, (place, event)) in events.iter().enumerate() {
        let at = event
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(At::parse)
            .unwrap_or_default();
        let source = event.get("source").and_then(Value::as_str).unwrap_or("");
        let mut extra = Map::new();
        if let Some(id) = event.get("id").filter(|v| !v.is_null()) {
            extra.insert("eventId".into(), id.clone());
        }
        if let Some(action) = event.get("action").and_then(Value::as_str) {
            match action {
                "message" => {
                    let text = event
                        .get("args")
                        .and_then(|a| a.get("content"))
                        .or_else(|| event.get("message"))
                        .or_else(|| event.get("content").filter(|_| is_flat(event)))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    // A flat history has no `source`: its first message is the task.
                    let from_user =
                        source == "user" || (source.is_empty() && is_flat(event) && !said_task);
                    said_task = true;
                    let role = if from_user { "user" } else { "assistant" };
                    entries.push(file.message(session_id, &at, place, role, text, extra));
                }
                quiet if NOT_CALLS.contains(&quiet) => {}
                _ => {
                    let answer = if is_flat(event) {
                        answers.get(&format!("@{i}"))
                    } else {
                        event.get("id").and_then(|id| answers.get(&id.to_string()))
                    };
                    entries.push(tool_call(
                        file, session_id, &at, place, event, action, answer, extra,
                    ));
                }
            }
            continue;
        }
        match event.get("observation").and_then(Value::as_str) {
            // An error no action caused: the agent's call was refused before it became
            // an action (an argument the tool does not take). It is a failed call.
            Some("error")
                if event.get("cause").is_none_or(Value::is_null) && !flat_answered.contains(&i) =>
            {
                let text = observation_text(event);
                extra.insert("uncaused".into(), Value::Bool(true));
                let ended = Ended {
                    failed: true,
                    error: Some(text),
                    ..Ended::default()
                };
                entries.push(file.tool(
                    &KINDS,
                    session_id,
                    &at,
                    place,
                    "error",
                    Map::new(),
                    &ended,
                    extra,
                ));
            }
            Some(_) => {}
            None => file.unknown(
                place.clone(),
                "an event with neither `action` nor `observation`".into(),
            ),
        }
    }
    entries
}

/// An action made by a tool: named by the LLM's function when it has one, with the
/// function's arguments as written; else by the action, with its `args`.
#[allow(
    clippy::too_many_arguments,
    reason = "each argument is a different part of the event the tool entry is built from"
)]
fn tool_call(
    file: &mut FileRead,
    session_id: &str,
    at: &At,
    place: &Place,
    event: &Map<String, Value>,
    action: &str,
    answer: Option<&Observation<'_>>,
    mut extra: Map<String, Value>,
) -> Entry {
    let metadata = event.get("tool_call_metadata").filter(|m| m.is_object());
    let function = metadata
        .and_then(|m| m.get("function_name"))
        .and_then(Value::as_str);
    let call_id = metadata
        .and_then(|m| m.get("tool_call_id"))
        .and_then(Value::as_str);
    let written = call_id.and_then(|id| call_arguments(metadata, id));
    let flat_args = is_flat(event).then(|| {
        Value::Object(
            event
                .iter()
                .filter(|(k, _)| !FLAT_NOT_ARGS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    });
    let (params, odd) = match written {
        Some(arguments) => super::tool::arguments(Some(arguments)),
        None => super::tool::arguments(event.get("args").or(flat_args.as_ref())),
    };
    let name = function.unwrap_or(action);
    if let Some(odd) = odd {
        file.warn(
            place.clone(),
            format!("`{name}` call: {odd}: it is kept as `params.input`, and rules reading the tool's arguments find none"),
        );
    }
    extra.insert("action".into(), action.into());
    if let Some(id) = call_id {
        extra.insert("callId".into(), id.into());
    }
    extra.insert("hasResult".into(), Value::Bool(answer.is_some()));
    let ended = match answer {
        Some(answer) => ended_of(answer),
        None => Ended::default(),
    };
    file.tool(&KINDS, session_id, at, place, name, params, &ended, extra)
}

/// The arguments the LLM wrote for call `id`: the `tool_calls` item of the model response
/// in `tool_call_metadata` with that id.
fn call_arguments<'m>(metadata: Option<&'m Value>, id: &str) -> Option<&'m Value> {
    let choices = metadata?
        .get("model_response")?
        .get("choices")?
        .as_array()?;
    choices.iter().find_map(|choice| {
        let calls = choice.get("message")?.get("tool_calls")?.as_array()?;
        calls
            .iter()
            .find(|call| call.get("id").and_then(Value::as_str) == Some(id))?
            .get("function")?
            .get("arguments")
    })
}

/// How an action ended, from its observation: an `error` observation fails it, and so does
/// a command's non-zero exit code (`extras.metadata.exit_code`, older `extras.exit_code`).
fn ended_of(answer: &Observation<'_>) -> Ended {
    let extras = answer.event.get("extras");
    let exit_code = extras
        .and_then(|x| x.get("metadata"))
        .and_then(|m| m.get("exit_code"))
        .or_else(|| extras.and_then(|x| x.get("exit_code")))
        .or_else(|| {
            answer
                .event
                .get("exit_code")
                .filter(|_| is_flat(answer.event))
        })
        .and_then(Value::as_i64);
    // -1 is a command still running when its timeout came (no exit code yet).
    let nonzero = exit_code.is_some_and(|c| c != 0 && c != -1);
    let failed = answer.kind == "error" || nonzero;
    Ended {
        failed,
        exit_code: exit_code.filter(|_| nonzero).or(failed.then_some(1)),
        duration: 0.0,
        error: failed.then(|| observation_text(answer.event)),
    }
}

fn observation_text(event: &Map<String, Value>) -> String {
    event
        .get("content")
        .or_else(|| event.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn actions_are_calls_answered_by_their_caused_observation() {
        let events = serde_json::json!([
            {"id": 0, "timestamp": "2025-01-01T00:00:00", "source": "user", "action": "message", "args": {"content": "go"}},
            {"id": 1, "timestamp": "2025-01-01T00:00:01", "source": "agent", "action": "run", "args": {"command": "false"},
             "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": "t1", "model_response": {"choices": [{"message": {"tool_calls": [{"id": "t1", "function": {"name": "execute_bash", "arguments": "{\"command\": \"false\"}"}}]}}]}}},
            {"id": 2, "timestamp": "2025-01-01T00:00:02", "source": "agent", "observation": "run", "cause": 1, "content": "", "extras": {"metadata": {"exit_code": 1}}},
            {"id": 3, "timestamp": "2025-01-01T00:00:03", "source": "agent", "action": "read", "args": {"path": "/a"},
             "tool_call_metadata": {"function_name": "str_replace_editor", "tool_call_id": "t2", "model_response": {"choices": [{"message": {"tool_calls": [{"id": "t2", "function": {"arguments": "{\"command\": \"view\", \"path\": \"/a\"}"}}]}}]}}},
            {"id": 4, "timestamp": "2025-01-01T00:00:04", "source": "agent", "observation": "read", "cause": 3, "content": "x"},
            {"id": 5, "timestamp": "2025-01-01T00:00:05", "source": "agent", "observation": "error", "content": "Parameter 'command' is bad"},
            {"id": 6, "timestamp": "2025-01-01T00:00:06", "source": "agent", "action": "finish", "args": {}}
        ]);
        let text = serde_json::to_vec(&events).unwrap();
        let read = read_events(Path::new("t.json"), &text, &SessionFilter::All);
        let s = &read.sessions[0];
        assert_eq!(s.id, "t");
        let ops: Vec<(&str, &str, bool, Option<&str>)> = s
            .entries
            .iter()
            .map(|e| {
                (
                    e.domain.as_str(),
                    e.operation.as_str(),
                    e.result.success,
                    e.metadata.get("kind").and_then(|k| k.as_str()),
                )
            })
            .collect();
        assert_eq!(
            ops,
            [
                ("message", "user", true, None),
                ("tool", "execute_bash", false, Some("shell")),
                ("tool", "str_replace_editor", true, Some("read")),
                ("tool", "error", false, Some("other")),
                ("tool", "finish", true, Some("other")),
            ]
        );
        assert_eq!(s.entries[1].result.exit_code, 1);
        assert_eq!(s.entries[2].params["command"], "view");
        assert_eq!(
            s.entries[3].error.as_deref(),
            Some("Parameter 'command' is bad")
        );
        assert_eq!(s.skipped_lines, 0);
    }

    #[test]
    fn each_instance_of_an_evaluation_is_a_session_and_its_error_fails_it() {
        let lines = [
            r#"{"instance_id": "a", "history": [{"id": 0, "timestamp": "2025-01-01T00:00:00", "source": "user", "action": "message", "args": {"content": "go"}}], "error": null}"#,
            r#"{"instance_id": "b", "history": [{"id": 0, "timestamp": "2025-01-01T00:00:00", "source": "user", "action": "message", "args": {"content": "go"}}, {"id": 1, "source": "agent", "hologram": 1}], "error": "RuntimeError: limit"}"#,
        ]
        .join("\n");
        let read = read_events(Path::new("o.jsonl"), lines.as_bytes(), &SessionFilter::All);
        let ids: Vec<&str> = read.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(read.sessions[0].entries.len(), 1);
        assert_eq!(read.sessions[0].skipped_lines, 0);
        let b = &read.sessions[1];
        assert_eq!(b.skipped_lines, 1);
        assert_eq!(b.entries.last().map(|e| e.result.success), Some(false));
        assert_eq!(
            b.entries.last().map(|e| e.operation.as_str()),
            Some("error")
        );
    }
}
