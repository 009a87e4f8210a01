//! Reference trajectories: the tool calls a session should have made, which the trajectory
//! metrics of a pack (`trajectory_match`, `tool_f1`, …) compare the session's calls with.
//!
//! A reference file is JSON Lines, one session a line, in either of two shapes:
//!
//! ```text
//! {"sessionId": "s1", "toolCalls": [{"name": "Read", "args": {"file_path": "a.rs"}}]}
//! {"sessionId": "s2", "messages": [{"role": "assistant", "tool_calls": [
//!     {"type": "function", "function": {"name": "Read", "arguments": "{\"file_path\": \"a.rs\"}"}}]}]}
//! ```
//!
//! The second is the OpenAI-style message list `agentevals` takes: the calls of every message
//! in order, `function.arguments` a JSON text of an object (LangChain's `{"name", "args"}`
//! calls are taken too); messages without calls (the user's, the tools' results) are skipped.
//! A line with `"toolCalls": []` says the session should have made no call at all, which is
//! not the same as a session with no line: that one has no reference, and its trajectory
//! metrics do not apply.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// One tool call: its name and its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool's name (`Read`, `Bash`); for an entry of a session, its `operation`.
    pub name: String,
    /// The arguments, a JSON object; for an entry of a session, its `params`.
    pub args: Map<String, Value>,
}

/// The tool calls of one session, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trajectory {
    /// The calls, in the order they were (or should have been) made.
    pub calls: Vec<ToolCall>,
}

/// The reference trajectories of a file, by session id.
#[derive(Debug, Clone, Default)]
pub struct References {
    by_session: HashMap<String, Trajectory>,
}

/// The largest reference file read: references are written by people or exported by a
/// harness, one short line a session.
pub const MAX_REFERENCE_FILE: u64 = 256 << 20;

/// Why a reference file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReferenceError {
    /// The file could not be read.
    #[error("cannot read reference file `{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_REFERENCE_FILE`].
    #[error("reference file `{}` is larger than {} MiB", path.display(), MAX_REFERENCE_FILE >> 20)]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// Lines of the file are not reference trajectories (every one found).
    #[error("reference file `{file}` is invalid: {}", problems.iter().map(|(line, m)| format!("line {line}: {m}")).collect::<Vec<_>>().join("; "))]
    Invalid {
        /// The file, as given.
        file: String,
        /// The 1-based line and what is wrong there.
        problems: Vec<(usize, String)>,
    },
}

/// The most problems of a file reported: past them, the file is not a reference file.
const MAX_PROBLEMS: usize = 20;

impl References {
    /// Reads a reference file (see the module's documentation for its lines).
    pub fn read(path: &Path) -> Result<References, ReferenceError> {
        let io = |source| ReferenceError::Io {
            path: path.to_owned(),
            source,
        };
        let len = std::fs::metadata(path).map_err(io)?.len();
        if len > MAX_REFERENCE_FILE {
            return Err(ReferenceError::TooLarge {
                path: path.to_owned(),
            });
        }
        let bytes = std::fs::read(path).map_err(io)?;
        let text = String::from_utf8_lossy(&bytes);
        References::parse(&text, &path.display().to_string())
    }

    /// Reads the lines of a reference file; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<References, ReferenceError> {
        let mut by_session: HashMap<String, (usize, Trajectory)> = HashMap::new();
        let mut problems = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || problems.len() >= MAX_PROBLEMS {
                continue;
            }
            let parsed = serde_json::from_str::<Value>(line)
                .map_err(|e| {
                    format!(
                        "not JSON ({})",
                        crate::entry::lowercase_first(&e.to_string())
                    )
                })
                .and_then(|value| read_line(&value));
            match parsed {
                Ok((Some(session), trajectory)) => {
                    if let Some((first, _)) = by_session.get(&session) {
                        problems.push((
                            n + 1,
                            format!("session `{session}` already has a reference (line {first})"),
                        ));
                    } else {
                        by_session.insert(session, (n + 1, trajectory));
                    }
                }
                Ok((None, _)) => problems.push((n + 1, "a line needs a `sessionId`".to_owned())),
                Err(message) => problems.push((n + 1, message)),
            }
        }
        if !problems.is_empty() {
            return Err(ReferenceError::Invalid {
                file: file.to_owned(),
                problems,
            });
        }
        Ok(References {
            by_session: by_session.into_iter().map(|(k, (_, t))| (k, t)).collect(),
        })
    }

    /// The reference of a session, if the file has one.
    pub fn get(&self, session: &str) -> Option<&Trajectory> {
        self.by_session.get(session)
    }

    /// How many sessions have a reference.
    pub fn len(&self) -> usize {
        self.by_session.len()
    }

    /// Whether no session has a reference.
    pub fn is_empty(&self) -> bool {
        self.by_session.is_empty()
    }

    /// A set of references of the sessions given.
    pub fn from_sessions(sessions: impl IntoIterator<Item = (String, Trajectory)>) -> References {
        References {
            by_session: sessions.into_iter().collect(),
        }
    }
}

/// One line of a reference file: its `sessionId`, if it has one, and its calls.
pub fn read_line(value: &Value) -> Result<(Option<String>, Trajectory), String> {
    let Value::Object(line) = value else {
        return Err(format!("a line is a JSON object, not {}", kind(value)));
    };
    let session = match line.get("sessionId") {
        None => None,
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(other) => {
            return Err(format!(
                "`sessionId` is a text that is not empty, not {}",
                kind(other)
            ))
        }
    };
    let calls =
        match (line.get("toolCalls"), line.get("messages")) {
            (Some(calls), None) => tool_calls(calls)?,
            (None, Some(messages)) => message_calls(messages)?,
            (Some(_), Some(_)) => {
                return Err("a line has `toolCalls` or `messages`, not both".to_owned());
            }
            (None, None) => return Err(
                "a line needs `toolCalls` (`[{\"name\", \"args\"}]`) or OpenAI-style `messages`"
                    .to_owned(),
            ),
        };
    Ok((session, Trajectory { calls }))
}

fn tool_calls(calls: &Value) -> Result<Vec<ToolCall>, String> {
    let Value::Array(calls) = calls else {
        return Err(format!("`toolCalls` is a list, not {}", kind(calls)));
    };
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| named_call(call, &format!("toolCalls[{i}]")))
        .collect()
}

/// A call written `{"name": …, "args": {…}}` (args may be left out).
fn named_call(call: &Value, at: &str) -> Result<ToolCall, String> {
    let Value::Object(call) = call else {
        return Err(format!("`{at}` is an object, not {}", kind(call)));
    };
    let name = name_of(call.get("name"), &format!("{at}.name"))?;
    let args = match call.get("args") {
        None => Map::new(),
        Some(Value::Object(args)) => args.clone(),
        Some(other) => return Err(format!("`{at}.args` is an object, not {}", kind(other))),
    };
    Ok(ToolCall { name, args })
}

fn name_of(name: Option<&Value>, at: &str) -> Result<String, String> {
    match name {
        Some(Value::String(name)) if !name.is_empty() => Ok(name.clone()),
        Some(other) => Err(format!(
            "`{at}` is a text that is not empty, not {}",
            kind(other)
        )),
        None => Err(format!("`{at}` is missing")),
    }
}

fn message_calls(messages: &Value) -> Result<Vec<ToolCall>, String> {
    let Value::Array(messages) = messages else {
        return Err(format!("`messages` is a list, not {}", kind(messages)));
    };
    let mut out = Vec::new();
    for (m, message) in messages.iter().enumerate() {
        let Value::Object(message) = message else {
            return Err(format!(
                "`messages[{m}]` is an object, not {}",
                kind(message)
            ));
        };
        let calls = match message.get("tool_calls") {
            None | Some(Value::Null) => continue,
            Some(Value::Array(calls)) => calls,
            Some(other) => {
                return Err(format!(
                    "`messages[{m}].tool_calls` is a list, not {}",
                    kind(other)
                ))
            }
        };
        for (c, call) in calls.iter().enumerate() {
            let at = format!("messages[{m}].tool_calls[{c}]");
            let Some(function) = call.get("function") else {
                out.push(named_call(call, &at)?);
                continue;
            };
            let Value::Object(function) = function else {
                return Err(format!(
                    "`{at}.function` is an object, not {}",
                    kind(function)
                ));
            };
            let name = name_of(function.get("name"), &format!("{at}.function.name"))?;
            let args = match function.get("arguments") {
                Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                    Ok(Value::Object(args)) => args,
                    Ok(other) => {
                        return Err(format!(
                            "`{at}.function.arguments` holds {}, not a JSON object",
                            kind(&other)
                        ))
                    }
                    Err(e) => {
                        return Err(format!(
                            "`{at}.function.arguments` is not JSON ({})",
                            crate::entry::lowercase_first(&e.to_string())
                        ))
                    }
                },
                // What a client that already parsed them sends.
                Some(Value::Object(args)) => args.clone(),
                None => Map::new(),
                Some(other) => {
                    return Err(format!(
                        "`{at}.function.arguments` is a JSON text of an object, not {}",
                        kind(other)
                    ))
                }
            };
            out.push(ToolCall { name, args });
        }
    }
    Ok(out)
}

fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        other => crate::entry::json_kind(other).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<(usize, String)> {
        match References::parse(text, "refs.jsonl") {
            Err(ReferenceError::Invalid { problems, .. }) => problems,
            other => panic!("expected problems, got {other:?}"),
        }
    }

    #[test]
    fn both_shapes_read_to_the_same_calls() {
        let text = r#"{"sessionId":"a","toolCalls":[{"name":"Read","args":{"p":1}},{"name":"Bash"}]}

{"sessionId":"b","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"Read","arguments":"{\"p\": 1}"}},{"name":"Bash","args":{}}]},{"role":"tool","content":"ok","tool_call_id":"1"}]}
{"sessionId":"c","toolCalls":[]}
"#;
        let refs = References::parse(text, "refs.jsonl").expect("valid");
        assert_eq!(refs.len(), 3);
        assert_eq!(refs.get("a"), refs.get("b"));
        let a = refs.get("a").expect("a");
        assert_eq!(a.calls[0].name, "Read");
        assert_eq!(a.calls[0].args["p"], 1);
        assert_eq!(a.calls[1].args.len(), 0);
        assert_eq!(refs.get("c").map(|t| t.calls.len()), Some(0));
        assert_eq!(refs.get("d"), None);
    }

    #[test]
    fn every_bad_line_is_named_at_once() {
        let text = "{\"sessionId\":\"a\",\"toolCalls\":[]}\nnope\n[1]\n{\"sessionId\":\"a\",\"toolCalls\":[]}\n{\"toolCalls\":[]}\n{\"sessionId\":\"b\"}\n{\"sessionId\":\"c\",\"toolCalls\":[{\"name\":\"x\",\"args\":[]}]}\n{\"sessionId\":\"d\",\"messages\":[{\"tool_calls\":[{\"function\":{\"name\":\"x\",\"arguments\":\"[1]\"}}]}]}\n{\"sessionId\":\"e\",\"messages\":[{\"tool_calls\":[{\"function\":{\"name\":\"x\",\"arguments\":\"{\"}}]}]}\n";
        let found = problems(text);
        let lines: Vec<usize> = found.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [2, 3, 4, 5, 6, 7, 8, 9], "{found:?}");
        assert!(found[0].1.starts_with("not JSON ("), "{}", found[0].1);
        assert_eq!(found[1].1, "a line is a JSON object, not an array");
        assert_eq!(found[2].1, "session `a` already has a reference (line 1)");
        assert_eq!(found[3].1, "a line needs a `sessionId`");
        assert!(found[4].1.starts_with("a line needs `toolCalls`"));
        assert_eq!(found[5].1, "`toolCalls[0].args` is an object, not an array");
        assert_eq!(
            found[6].1,
            "`messages[0].tool_calls[0].function.arguments` holds an array, not a JSON object"
        );
        assert!(found[7]
            .1
            .starts_with("`messages[0].tool_calls[0].function.arguments` is not JSON ("));
        let err = References::parse(text, "refs.jsonl").expect_err("invalid");
        assert!(err
            .to_string()
            .starts_with("reference file `refs.jsonl` is invalid: line 2: not JSON"));
    }
}
