//! Example plugin `codex`: reads OpenAI Codex CLI session rollouts, a format no built-in
//! source reads (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`).
//!
//! A rollout is one JSON object per line, `{timestamp, type, payload}`:
//! `session_meta` (the session id, `cwd`, `cli_version`), `turn_context` (the `model`),
//! `response_item` (messages, tool calls and their outputs), `event_msg` and `compacted`
//! (not used). Older rollouts put the item itself on the line, without `payload`.
//!
//! | rollout | entry |
//! |---|---|
//! | `function_call` (`shell`, `exec_command`, `update_plan`, MCP tools …) | domain `tool`, operation its `name`, params its parsed `arguments`; a shell `command` array becomes `params.argv`, and `params.command` the script (`bash -lc SCRIPT`) or the words joined |
//! | `local_shell_call` | domain `tool`, operation `shell`, params as above from `action` |
//! | `custom_tool_call` (`apply_patch`) | domain `tool`, operation its `name`, `params.input`, and `params.files`: the paths the patch adds, updates or deletes |
//! | `message` (user, assistant) | domain `message`, operation the role, `params.text`; the user messages Codex writes itself (`<environment_context>`, `<user_instructions>`) are left out |
//!
//! A call's outcome comes from the `*_output` item with its `call_id`: `result.exitCode` from
//! `metadata.exit_code` (or an `Exit code: N` line), `result.success` when it is 0,
//! `result.duration` from `metadata.duration_seconds` (or a `Wall time:` line; else 0),
//! and `error` the output text when the call failed. Metadata: `cwd`, `cliVersion`, `model`,
//! `callId`, `hasResult`, and `line`.

use std::collections::HashMap;

use grade_plugin::serde_json::{self, json, Map, Value};
use grade_plugin::{plugin, NewEntry, Sink, Source, SourceError};

/// The longest `error` kept from a failed call's output.
const MAX_ERROR_CHARS: usize = 2000;

pub struct CodexRollout;

/// Response items that are themselves a line in older rollouts.
const ITEM_TYPES: [&str; 7] = [
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "reasoning",
];

impl Source for CodexRollout {
    fn detect(head: &[u8]) -> bool {
        let Some(first) = head
            .split(|&b| b == b'\n')
            .find(|l| !l.iter().all(u8::is_ascii_whitespace))
        else {
            return false;
        };
        let Ok(Value::Object(line)) = serde_json::from_slice::<Value>(first) else {
            return false;
        };
        match line.get("type").and_then(Value::as_str) {
            Some("session_meta") => line
                .get("payload")
                .and_then(|p| p.get("id"))
                .is_some_and(Value::is_string),
            // Before `session_meta`, the first line was the session itself.
            None => {
                line.get("id").is_some_and(Value::is_string)
                    && line.get("timestamp").is_some_and(Value::is_string)
                    && (line.contains_key("instructions") || line.contains_key("git"))
            }
            _ => false,
        }
    }

    fn read(path: &str, content: &[u8], out: &mut Sink<'_>) -> Result<(), SourceError> {
        let text = std::str::from_utf8(content)
            .map_err(|e| SourceError::at(0, format!("the rollout is not UTF-8: {e}")))?;
        let mut reader = Reader::new(path);
        for (i, line) in text.lines().enumerate() {
            let number = i as u64 + 1;
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(record)) => reader.record(number, &record),
                Ok(_) => out.warning(number, "skipped: not a JSON object"),
                Err(e) => out.warning(number, &format!("skipped: not JSON ({e})")),
            }
        }
        for entry in reader.finish() {
            out.entry(&entry)?;
        }
        Ok(())
    }
}

struct Reader {
    session_id: Option<String>,
    fallback_id: String,
    timestamp: Option<String>,
    cwd: Option<String>,
    cli_version: Option<String>,
    model: Option<String>,
    entries: Vec<Pending>,
    /// `call_id` → index in `entries`.
    calls: HashMap<String, usize>,
}

struct Pending {
    entry: NewEntry,
}

impl Reader {
    fn new(path: &str) -> Reader {
        let stem = std::path::Path::new(path)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("codex")
            .to_owned();
        Reader {
            session_id: None,
            fallback_id: stem,
            timestamp: None,
            cwd: None,
            cli_version: None,
            model: None,
            entries: Vec::new(),
            calls: HashMap::new(),
        }
    }

    fn record(&mut self, line: u64, record: &Map<String, Value>) {
        if let Some(ts) = record.get("timestamp").and_then(Value::as_str) {
            self.timestamp = Some(ts.to_owned());
        }
        let kind = record.get("type").and_then(Value::as_str);
        let payload = record.get("payload").and_then(Value::as_object);
        match (kind, payload) {
            (Some("session_meta"), Some(meta)) => self.meta(meta),
            (Some("turn_context"), Some(context)) => {
                if let Some(model) = context.get("model").and_then(Value::as_str) {
                    self.model = Some(model.to_owned());
                }
                if let Some(cwd) = context.get("cwd").and_then(Value::as_str) {
                    self.cwd = Some(cwd.to_owned());
                }
            }
            (Some("response_item"), Some(item)) => self.item(line, item),
            (Some(kind), None) if ITEM_TYPES.contains(&kind) => self.item(line, record),
            (None, None) if line == 1 || self.session_id.is_none() => self.meta(record),
            _ => {}
        }
    }

    fn meta(&mut self, meta: &Map<String, Value>) {
        if let Some(id) = meta.get("id").and_then(Value::as_str) {
            self.session_id.get_or_insert_with(|| id.to_owned());
        }
        if let Some(cwd) = meta.get("cwd").and_then(Value::as_str) {
            self.cwd = Some(cwd.to_owned());
        }
        if let Some(v) = meta.get("cli_version").and_then(Value::as_str) {
            self.cli_version = Some(v.to_owned());
        }
        if let Some(ts) = meta.get("timestamp").and_then(Value::as_str) {
            self.timestamp.get_or_insert_with(|| ts.to_owned());
        }
    }

    fn item(&mut self, line: u64, item: &Map<String, Value>) {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
        let call_id = item.get("call_id").and_then(Value::as_str);
        match kind {
            "function_call" => {
                let name = item
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("function");
                let arguments = item
                    .get("arguments")
                    .and_then(Value::as_str)
                    .unwrap_or("{}");
                let params = match serde_json::from_str::<Value>(arguments) {
                    Ok(Value::Object(map)) => shell_params(map),
                    _ => json!({ "arguments": arguments }),
                };
                self.call(line, name, params, call_id);
            }
            "local_shell_call" => {
                let action = item.get("action").and_then(Value::as_object);
                let mut map = Map::new();
                if let Some(action) = action {
                    for (k, v) in action {
                        if k != "type" {
                            map.insert(k.clone(), v.clone());
                        }
                    }
                }
                self.call(line, "shell", shell_params(map), call_id);
            }
            "custom_tool_call" => {
                let name = item.get("name").and_then(Value::as_str).unwrap_or("tool");
                let input = item
                    .get("input")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let params = json!({ "input": input, "files": patch_files(input) });
                self.call(line, name, params, call_id);
            }
            "function_call_output" | "custom_tool_call_output" => {
                if let Some(&at) = call_id.and_then(|id| self.calls.get(id)) {
                    settle(&mut self.entries[at], item.get("output"));
                }
            }
            "message" => {
                let role = item.get("role").and_then(Value::as_str).unwrap_or("user");
                let text = message_text(item.get("content"));
                let boilerplate = role == "user"
                    && ["<environment_context>", "<user_instructions>"]
                        .iter()
                        .any(|tag| text.trim_start().starts_with(tag));
                if !text.trim().is_empty() && !boilerplate && matches!(role, "user" | "assistant") {
                    let entry = self.entry(line, "message", role, json!({ "text": text }), None);
                    self.entries.push(entry);
                }
            }
            _ => {}
        }
    }

    fn call(&mut self, line: u64, name: &str, params: Value, call_id: Option<&str>) {
        let entry = self.entry(line, "tool", name, params, call_id);
        if let Some(id) = call_id {
            self.calls.insert(id.to_owned(), self.entries.len());
        }
        self.entries.push(entry);
    }

    fn entry(
        &self,
        line: u64,
        domain: &str,
        operation: &str,
        params: Value,
        call_id: Option<&str>,
    ) -> Pending {
        let mut metadata = Map::new();
        for (key, value) in [
            ("cwd", &self.cwd),
            ("cliVersion", &self.cli_version),
            ("model", &self.model),
        ] {
            if let Some(v) = value {
                metadata.insert(key.to_owned(), json!(v));
            }
        }
        if let Some(id) = call_id {
            metadata.insert("callId".to_owned(), json!(id));
            metadata.insert("hasResult".to_owned(), json!(false));
        }
        metadata.insert("line".to_owned(), json!(line));
        Pending {
            entry: NewEntry {
                session_id: String::new(),
                timestamp: self.timestamp.clone().unwrap_or_default(),
                domain: domain.to_owned(),
                operation: operation.to_owned(),
                success: true,
                exit_code: 0,
                duration_ms: 0.0,
                error: None,
                params,
                metadata: Value::Object(metadata),
                line,
            },
        }
    }

    fn finish(self) -> Vec<NewEntry> {
        let id = self.session_id.unwrap_or(self.fallback_id);
        self.entries
            .into_iter()
            .map(|p| NewEntry {
                session_id: id.clone(),
                ..p.entry
            })
            .collect()
    }
}

/// A shell call's params: `command` as one string whatever the rollout wrote, `argv` the words.
fn shell_params(mut map: Map<String, Value>) -> Value {
    if let Some(Value::Array(words)) = map.get("command").cloned() {
        let words: Vec<String> = words
            .iter()
            .map(|w| w.as_str().map_or_else(|| w.to_string(), str::to_owned))
            .collect();
        let script = match words.as_slice() {
            [shell, flag, script]
                if ["bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh"]
                    .contains(&shell.as_str())
                    && flag.starts_with('-')
                    && flag.ends_with('c') =>
            {
                script.clone()
            }
            _ => words.join(" "),
        };
        map.insert("argv".to_owned(), json!(words));
        map.insert("command".to_owned(), json!(script));
    } else if let Some(cmd) = map.get("cmd").and_then(Value::as_str).map(str::to_owned) {
        map.entry("command").or_insert(json!(cmd));
    }
    Value::Object(map)
}

/// The paths an `apply_patch` input adds, updates or deletes.
fn patch_files(input: &str) -> Vec<String> {
    input
        .lines()
        .filter_map(|l| {
            ["*** Add File: ", "*** Update File: ", "*** Delete File: "]
                .iter()
                .find_map(|p| l.strip_prefix(p))
        })
        .map(|p| p.trim().to_owned())
        .collect()
}

fn message_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}

/// Applies a call's output to its entry.
fn settle(pending: &mut Pending, output: Option<&Value>) {
    let entry = &mut pending.entry;
    let text = match output {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let (body, exit_code, seconds) = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(o)) => {
            let meta = o.get("metadata");
            (
                o.get("output")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                meta.and_then(|m| m.get("exit_code"))
                    .and_then(Value::as_i64),
                meta.and_then(|m| m.get("duration_seconds"))
                    .and_then(Value::as_f64),
            )
        }
        // Newer rollouts write `Exit code: N\nWall time: S seconds\nOutput:\n…`.
        _ => {
            let field = |name: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.trim().trim_end_matches(" seconds").to_owned())
            };
            (
                text.clone(),
                field("Exit code:").and_then(|v| v.parse().ok()),
                field("Wall time:").and_then(|v| v.parse().ok()),
            )
        }
    };
    let exit_code = exit_code.unwrap_or(0);
    entry.exit_code = exit_code;
    entry.success = exit_code == 0;
    entry.duration_ms = seconds.map_or(0.0, |s| s * 1000.0);
    if !entry.success {
        entry.error = Some(body.chars().take(MAX_ERROR_CHARS).collect());
    }
    if let Value::Object(meta) = &mut entry.metadata {
        meta.insert("hasResult".to_owned(), json!(true));
    }
}

plugin! {
    name: "codex",
    version: env!("CARGO_PKG_VERSION"),
    sources: [
        {
            name: "codex-rollout",
            doc: "an OpenAI Codex CLI session rollout (`~/.codex/sessions/…/rollout-*.jsonl`)",
            reader: CodexRollout,
        },
    ],
}
