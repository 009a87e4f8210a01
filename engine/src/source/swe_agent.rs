//! SWE-agent trajectories: one `.traj` JSON object per run, with `trajectory[]` (each step
//! an `action` the agent ran and the `observation` it got) and `history[]` (the chat: the
//! task, the agent's replies, and in function-calling runs their `tool_calls` and `tool`
//! results). Older runs act in text (`open file.py`, `edit 1:3`, a shell command); newer
//! ones call functions. One file is one session, named by the file.
//!
//! The format is SWE-agent's `TrajectoryStep`/`HistoryItem` (`sweagent/types.py`), written by
//! `save_trajectory` (`sweagent/agent/agents.py`). SWE-agent records no timestamps and no
//! exit codes: entries keep the file's order, and a call fails when its observation is one
//! of the tool's own error messages (see `FAILURE_TEXTS`). `docs/sources.md` has the mapping.

use std::path::Path;

use serde_json::{Map, Value};

use super::agent::{file_stem, session, At, Ended, FileRead};
use super::agent::{AgentFormat, Described};
use super::common::{Place, SessionFilter, SourceError, SourceRead};
use super::format::{Evidence, Sniff};
use super::tool::{KindRule, KindTable, ToolKind};

/// `metadata.source` of every entry read from a trajectory.
pub const SOURCE: &str = "swe-agent";

/// The kind of SWE-agent's commands (`tools/*/config.yaml` of its tool bundles); a text
/// action whose first word is none of them is a shell command (`bash`).
pub(crate) const KINDS: KindTable = KindTable {
    agent: "SWE-agent",
    tools: &[
        ("open", KindRule::Is(ToolKind::Read)),
        ("goto", KindRule::Is(ToolKind::Read)),
        ("scroll_up", KindRule::Is(ToolKind::Read)),
        ("scroll_down", KindRule::Is(ToolKind::Read)),
        ("filemap", KindRule::Is(ToolKind::Read)),
        ("edit", KindRule::Is(ToolKind::Edit)),
        ("insert", KindRule::Is(ToolKind::Edit)),
        ("create", KindRule::Is(ToolKind::Write)),
        ("search_dir", KindRule::Is(ToolKind::Search)),
        ("search_file", KindRule::Is(ToolKind::Search)),
        ("find_file", KindRule::Is(ToolKind::Search)),
        (
            "str_replace_editor",
            KindRule::ByArg {
                key: "command",
                cases: &[("view", ToolKind::Read), ("create", ToolKind::Write)],
                otherwise: ToolKind::Edit,
            },
        ),
        ("bash", KindRule::Is(ToolKind::Shell)),
    ],
};

/// The first words of an observation by which SWE-agent's tools (and the shell) say a
/// command failed: SWE-agent records no exit code.
const FAILURE_TEXTS: &[&str] = &[
    "Your proposed edit has introduced new syntax error",
    "Usage: ",
    "Error: ",
    "ERROR: ",
    "bash: ",
    "/bin/bash: ",
    "Traceback (most recent call last)",
];

/// SWE-agent trajectories.
#[derive(Debug, Clone, Copy, Default)]
pub struct SweAgent;

impl AgentFormat for SweAgent {
    const DESCRIBED: Described = Described {
        name: SOURCE,
        noun: "a SWE-agent trajectory",
        about: "A SWE-agent trajectory (`*.traj`)",
        document_keys: Some("`trajectory` or `history` (SWE-agent)"),
        extensions: &["traj"],
    };

    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        match evidence {
            Evidence::Object(map) if is_trajectory(map) => Sniff::Certain,
            _ => Sniff::No,
        }
    }

    fn read_bytes(
        &self,
        name: &Path,
        bytes: &[u8],
        filter: &SessionFilter,
    ) -> Result<SourceRead, SourceError> {
        let doc = match crate::json::from_slice_lenient::<Value>(bytes) {
            Ok((Value::Object(doc), _)) if is_trajectory(&doc) => doc,
            Ok((other, _)) => {
                return Err(SourceError::Format {
                    path: name.to_owned(),
                    message: format!(
                        "is not a SWE-agent trajectory: it is {}",
                        match other {
                            Value::Object(_) =>
                                "a JSON object without `trajectory` or `history`".to_owned(),
                            other => super::common::not_an_object(&other),
                        }
                    ),
                })
            }
            Err(err) => {
                return Err(SourceError::Format {
                    path: name.to_owned(),
                    message: format!(
                        "is not valid JSON: {}",
                        super::common::describe_json_error(&err, bytes)
                    ),
                })
            }
        };
        Ok(read_trajectory(name, &doc, filter))
    }
}

/// A trajectory: a `trajectory` list of steps with `action`s, or a `history` list of chat
/// messages with `role`s.
fn is_trajectory(map: &Map<String, Value>) -> bool {
    let first = |key: &str| {
        map.get(key)
            .and_then(Value::as_array)
            .and_then(|items| items.first())
    };
    let steps = map.get("trajectory").is_some_and(Value::is_array)
        && first("trajectory").is_none_or(|s| s.get("action").is_some());
    let history = map.get("history").is_some_and(Value::is_array)
        && first("history").is_some_and(|m| m.get("role").is_some_and(Value::is_string));
    (steps || history) && !map.contains_key("instance_id")
}

/// One action the agent ran, with what it saw.
struct Step<'t> {
    place: Place,
    action: &'t str,
    observation: Option<&'t str>,
    thought: Option<&'t str>,
    /// Seconds, as SWE-agent measured the action.
    seconds: Option<f64>,
}

fn read_trajectory(
    path: &std::path::Path,
    doc: &Map<String, Value>,
    filter: &SessionFilter,
) -> SourceRead {
    let mut file = FileRead::new(SOURCE, path, false);
    let id = file_stem(path);
    if !filter.wants(&id) {
        return super::agent::read_of(Vec::new(), file);
    }
    let empty = Vec::new();
    let history = doc
        .get("history")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let steps_written = doc
        .get("trajectory")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    // The agent's own messages (demonstrations shown to it are not its work).
    let chat: Vec<(usize, &Map<String, Value>)> = history
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.as_object().map(|m| (i, m)))
        .filter(|(_, m)| !is_demo(m))
        .collect();
    let mut steps: Vec<Step<'_>> = Vec::new();
    if steps_written.is_empty() {
        // Only a history: each assistant action, answered by the message after it.
        for (n, (i, message)) in chat.iter().enumerate() {
            if message.get("role").and_then(Value::as_str) != Some("assistant") {
                continue;
            }
            let Some(action) = message.get("action").and_then(Value::as_str) else {
                continue;
            };
            let answer = chat
                .get(n + 1)
                .filter(|(_, next)| next.get("role").and_then(Value::as_str) != Some("assistant"))
                .and_then(|(_, next)| next.get("content").and_then(Value::as_str));
            steps.push(Step {
                place: Place::Item(format!("history[{i}]")),
                action,
                observation: answer,
                thought: message.get("thought").and_then(Value::as_str),
                seconds: None,
            });
        }
    } else {
        for (i, step) in steps_written.iter().enumerate() {
            let place = Place::Item(format!("trajectory[{i}]"));
            let Some(action) = step.get("action").and_then(Value::as_str) else {
                file.broken(place, "a step without a text `action`".into());
                continue;
            };
            steps.push(Step {
                place,
                action,
                observation: step.get("observation").and_then(Value::as_str),
                thought: step.get("thought").and_then(Value::as_str),
                seconds: match step.get("execution_time") {
                    Some(Value::Number(n)) => n.as_f64(),
                    Some(Value::String(s)) => s.parse().ok(),
                    _ => None,
                },
            });
        }
    }
    // The function calls of the history, in order: a step whose action is the next one's
    // takes its name and arguments.
    let calls: Vec<(&str, &Value)> = chat
        .iter()
        .filter(|(_, m)| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .filter_map(|(_, m)| {
            let action = m.get("action").and_then(Value::as_str)?;
            let first = m.get("tool_calls")?.as_array()?.first()?;
            Some((action, first))
        })
        .collect();
    let mut next_call = 0;
    let at = At::default();
    let mut entries = Vec::new();
    // The task: the user's messages before the agent's first reply.
    for (i, message) in &chat {
        match message.get("role").and_then(Value::as_str) {
            Some("assistant") => break,
            Some("user") => {
                let text = super::agent::content_text(message.get("content"));
                let place = Place::Item(format!("history[{i}]"));
                entries.push(file.message(&id, &at, &place, "user", text, Map::new()));
            }
            _ => {}
        }
    }
    for step in &steps {
        if let Some(thought) = step.thought.filter(|t| !t.trim().is_empty()) {
            entries.push(file.message(
                &id,
                &at,
                &step.place,
                "assistant",
                thought.to_owned(),
                Map::new(),
            ));
        }
        let found = calls[next_call.min(calls.len())..]
            .iter()
            .position(|(action, _)| action.trim() == step.action.trim());
        let call = found.map(|k| {
            next_call += k + 1;
            calls[next_call - 1].1
        });
        let (name, params) = match call {
            Some(call) => {
                let function = call.get("function");
                let name = function
                    .and_then(|f| f.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("bash");
                let (params, _) = super::tool::arguments(function.and_then(|f| f.get("arguments")));
                (name.to_owned(), params)
            }
            None => text_action(step.action),
        };
        let mut extra = Map::new();
        extra.insert("action".into(), step.action.into());
        extra.insert("hasResult".into(), Value::Bool(step.observation.is_some()));
        let failure = step.observation.and_then(failure_of);
        let ended = Ended {
            failed: failure.is_some(),
            exit_code: None,
            duration: step.seconds.map_or(0.0, |s| s * 1000.0),
            error: failure,
        };
        entries.push(file.tool(&KINDS, &id, &at, &step.place, &name, params, &ended, extra));
    }
    super::agent::read_of(vec![session(&id, entries)], file)
}

/// A demonstration shown to the agent (`is_demo`), not its own work.
fn is_demo(message: &Map<String, Value>) -> bool {
    match message.get("is_demo") {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    }
}

/// A text action: the command its first word names, with the whole action as
/// `params.command`; a first word SWE-agent has no command for is a shell command, `bash`.
fn text_action(action: &str) -> (String, Map<String, Value>) {
    let word = action.split_whitespace().next().unwrap_or("");
    let known = KINDS.tools.iter().any(|(name, _)| *name == word);
    let name = if known { word } else { "bash" };
    let mut params = Map::new();
    params.insert("command".into(), action.trim().into());
    (name.to_owned(), params)
}

/// The error an observation states, when it is one of the failure texts.
fn failure_of(observation: &str) -> Option<String> {
    let text = observation.trim_start();
    let first_line = text.lines().next().unwrap_or("");
    let failed = FAILURE_TEXTS.iter().any(|t| text.starts_with(t))
        || first_line.ends_with(": command not found")
        || first_line.ends_with(": No such file or directory");
    failed.then(|| observation.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn text_actions_are_commands_or_shell_and_errors_fail_them() {
        let doc = serde_json::json!({
            "trajectory": [
                {"action": "open a.py", "observation": "[File: a.py]", "thought": "look", "execution_time": 0.5},
                {"action": "ls -la\n", "observation": "ls: cannot access 'x': No such file or directory", "thought": ""},
                {"action": "edit 1:1\nx\nend_of_edit", "observation": "Your proposed edit has introduced new syntax error(s).", "thought": "fix"}
            ],
            "history": [
                {"role": "system", "content": "s"},
                {"role": "user", "content": "demo", "is_demo": true},
                {"role": "user", "content": "the task"},
                {"role": "assistant", "content": "look", "action": "open a.py"}
            ]
        });
        let read = read_trajectory(
            Path::new("x.traj"),
            doc.as_object().unwrap(),
            &SessionFilter::All,
        );
        let s = &read.sessions[0];
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
                ("message", "assistant", true, None),
                ("tool", "open", true, Some("read")),
                ("tool", "bash", false, Some("shell")),
                ("message", "assistant", true, None),
                ("tool", "edit", false, Some("edit")),
            ]
        );
        assert_eq!(s.entries[2].result.duration, 500.0);
        assert_eq!(s.entries[3].params["command"], "ls -la");
    }

    #[test]
    fn function_calls_take_their_name_and_arguments() {
        let doc = serde_json::json!({
            "history": [
                {"role": "user", "content": "task"},
                {"role": "assistant", "content": "t", "thought": "t", "action": "find_file a.py",
                 "tool_calls": [{"function": {"name": "find_file", "arguments": "{\"file_name\":\"a.py\"}"}, "id": "c1"}]},
                {"role": "tool", "content": "Found 1 matches", "tool_call_ids": ["c1"]}
            ]
        });
        let read = read_trajectory(
            Path::new("y.traj"),
            doc.as_object().unwrap(),
            &SessionFilter::All,
        );
        let s = &read.sessions[0];
        let tool = &s.entries[2];
        assert_eq!(tool.operation, "find_file");
        assert_eq!(tool.params["file_name"], "a.py");
        assert!(tool.result.success);
        assert_eq!(s.id, "y");
    }
}
