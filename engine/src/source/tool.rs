//! The one entry model every reader gives an agent's tool call, and the normalized kind of
//! each tool: one home for what the readers of Claude Code, Codex CLI, Gemini CLI,
//! OpenHands, SWE-agent and the others share, so that one pack grades them all.
//!
//! A tool call is an entry of domain `tool` whose operation is the agent's own tool name
//! (`Read`, `exec_command`, `run_shell_command`), whose `params` are the call's arguments as
//! an object (arguments an agent writes as a JSON string are parsed: [`arguments`]), whose
//! `result.success` is false when the tool reported a failure, and whose `metadata.kind`
//! names what the tool does, the same word for every agent ([`ToolKind`]). Each reader
//! declares its agent's table ([`KindTable`]); `docs/sources.md` shows each table as
//! `KindTable::markdown` prints it, and a test keeps the two the same.

use serde_json::{Map, Value};

/// The metadata key that holds a tool call's [`ToolKind`] (`metadata.kind`).
pub const KIND_KEY: &str = "kind";

/// What a tool does, in words shared by every agent, so that a pack can say "read before
/// edit" once for Claude Code's `Read`/`Edit`, Codex's `apply_patch` and Gemini CLI's
/// `read_file`/`replace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolKind {
    /// Reads a file (`Read`, `read_file`, `str_replace_editor view`).
    Read,
    /// Changes part of an existing file (`Edit`, `apply_patch`, `replace`).
    Edit,
    /// Writes a whole file, new or replaced (`Write`, `write_file`, `create`).
    Write,
    /// Searches file names or contents (`Grep`, `Glob`, `search_file_content`).
    Search,
    /// Lists a folder (`LS`, `list_directory`).
    List,
    /// Runs a shell command (`Bash`, `exec_command`, `run_shell_command`).
    Shell,
    /// Records or updates the agent's plan (`TodoWrite`, `update_plan`, `write_todos`).
    Plan,
    /// Searches or fetches the web (`WebSearch`, `web_search_call`, `web_fetch`).
    Web,
    /// Hands work to a sub-agent (`Task`, `delegate_to_agent`).
    Delegate,
    /// Anything else (MCP tools, `think`, `finish`, tools the table does not know).
    Other,
}

impl ToolKind {
    /// Every kind, in the order the docs list them.
    pub const ALL: [ToolKind; 10] = [
        ToolKind::Read,
        ToolKind::Edit,
        ToolKind::Write,
        ToolKind::Search,
        ToolKind::List,
        ToolKind::Shell,
        ToolKind::Plan,
        ToolKind::Web,
        ToolKind::Delegate,
        ToolKind::Other,
    ];

    /// The kind as `metadata.kind` holds it (`read`).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Read => "read",
            ToolKind::Edit => "edit",
            ToolKind::Write => "write",
            ToolKind::Search => "search",
            ToolKind::List => "list",
            ToolKind::Shell => "shell",
            ToolKind::Plan => "plan",
            ToolKind::Web => "web",
            ToolKind::Delegate => "delegate",
            ToolKind::Other => "other",
        }
    }

    /// The kind named `name` (`read`), if it is one.
    pub fn parse(name: &str) -> Option<ToolKind> {
        ToolKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for ToolKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the kind of one tool is told.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KindRule {
    /// Always this kind.
    Is(ToolKind),
    /// By the text of one argument: one tool that does several things, such as the
    /// `str_replace_editor` of OpenHands and SWE-agent (`command`: `view`, `create`,
    /// `str_replace`, …). A call whose argument is none of `cases` is `otherwise`.
    ByArg {
        key: &'static str,
        cases: &'static [(&'static str, ToolKind)],
        otherwise: ToolKind,
    },
}

/// One agent's tools and their kinds. A tool the table does not name is
/// [`ToolKind::Other`], and so is every MCP tool (`mcp__server__tool`), whatever it does.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KindTable {
    /// The agent, as the docs name it (`Claude Code`).
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "read only by the docs-table test, which names each agent"
        )
    )]
    pub agent: &'static str,
    /// The tool names, exactly as the agent writes them, and how each one's kind is told.
    pub tools: &'static [(&'static str, KindRule)],
}

impl KindTable {
    /// The kind of a call of `tool` with arguments `params`.
    pub fn kind_of(&self, tool: &str, params: &Map<String, Value>) -> ToolKind {
        let Some((_, rule)) = self.tools.iter().find(|(name, _)| *name == tool) else {
            return ToolKind::Other;
        };
        match *rule {
            KindRule::Is(kind) => kind,
            KindRule::ByArg {
                key,
                cases,
                otherwise,
            } => params
                .get(key)
                .and_then(Value::as_str)
                .and_then(|arg| cases.iter().find(|(case, _)| *case == arg))
                .map_or(otherwise, |(_, kind)| *kind),
        }
    }

    /// The table as `docs/sources.md` shows it: a row per tool, `| `Read` | read |`.
    #[cfg(test)]
    pub fn markdown(&self) -> String {
        let mut out = String::from("| tool | kind |\n|---|---|\n");
        for (name, rule) in self.tools {
            let kind = match rule {
                KindRule::Is(kind) => kind.to_string(),
                KindRule::ByArg {
                    key,
                    cases,
                    otherwise,
                } => {
                    let cases: Vec<String> = cases
                        .iter()
                        .map(|(case, kind)| format!("`{key}` `{case}` → {kind}"))
                        .collect();
                    format!("{}, otherwise {otherwise}", cases.join(", "))
                }
            };
            out.push_str(&format!("| `{name}` | {kind} |\n"));
        }
        out.push_str("| any other tool | other |\n");
        out
    }
}

/// A tool call's arguments as params: an object as it is; a JSON string holding an object
/// (Codex's `function_call.arguments`, OpenAI-style `tool_calls`) parsed; nothing or `null`
/// as no params. Anything else (a string that is not a JSON object, a list) is kept whole as
/// `params.input`, so that the call still counts and its value can be read, with a note of
/// why for the reader's warning: a rule reading one of the tool's arguments finds none.
pub(crate) fn arguments(value: Option<&Value>) -> (Map<String, Value>, Option<String>) {
    let wrapped = |value: Value| {
        let mut map = Map::new();
        map.insert("input".into(), value);
        map
    };
    match value {
        None | Some(Value::Null) => (Map::new(), None),
        Some(Value::Object(map)) => (map.clone(), None),
        Some(Value::String(text)) => {
            if text.trim().is_empty() {
                return (Map::new(), None);
            }
            match crate::json::from_slice_lenient::<Value>(text.as_bytes()) {
                Ok((Value::Object(map), _)) => (map, None),
                Ok((other, _)) => (
                    wrapped(Value::String(text.clone())),
                    Some(format!(
                        "its arguments are a JSON text holding {}, not an object",
                        crate::entry::json_kind(&other)
                    )),
                ),
                // Custom tools (Codex's `apply_patch`) take free text: it is their input.
                Err(_) => (wrapped(Value::String(text.clone())), None),
            }
        }
        Some(other) => (
            wrapped(other.clone()),
            Some(format!(
                "its arguments are {}, not an object",
                crate::entry::json_kind(other)
            )),
        ),
    }
}

/// Every agent's table, in the order `docs/sources.md` lists them.
#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static KindTable> {
    vec![
        &super::claude_code::KINDS,
        &super::inspect_ai::KINDS,
        &super::codex::KINDS,
        &super::gemini::KINDS,
        &super::openhands::KINDS,
        &super::swe_agent::KINDS,
        &super::otel::KINDS,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_reads_back_from_its_name() {
        for kind in ToolKind::ALL {
            assert_eq!(ToolKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(ToolKind::parse("Read"), None);
    }

    const EDITOR: KindTable = KindTable {
        agent: "test",
        tools: &[
            ("cat", KindRule::Is(ToolKind::Read)),
            (
                "str_replace_editor",
                KindRule::ByArg {
                    key: "command",
                    cases: &[("view", ToolKind::Read), ("create", ToolKind::Write)],
                    otherwise: ToolKind::Edit,
                },
            ),
        ],
    };

    #[test]
    fn a_tool_is_its_tables_kind_by_name_or_argument_and_other_when_unknown() {
        let args = |v: Value| v.as_object().cloned().unwrap();
        assert_eq!(EDITOR.kind_of("cat", &Map::new()), ToolKind::Read);
        assert_eq!(EDITOR.kind_of("Cat", &Map::new()), ToolKind::Other);
        assert_eq!(EDITOR.kind_of("mcp__x__cat", &Map::new()), ToolKind::Other);
        let view = args(json!({"command": "view", "path": "/a"}));
        assert_eq!(EDITOR.kind_of("str_replace_editor", &view), ToolKind::Read);
        let create = args(json!({"command": "create"}));
        assert_eq!(
            EDITOR.kind_of("str_replace_editor", &create),
            ToolKind::Write
        );
        let other = args(json!({"command": "insert"}));
        assert_eq!(EDITOR.kind_of("str_replace_editor", &other), ToolKind::Edit);
        assert_eq!(
            EDITOR.kind_of("str_replace_editor", &Map::new()),
            ToolKind::Edit
        );
        assert_eq!(
            EDITOR.markdown(),
            "| tool | kind |\n|---|---|\n| `cat` | read |\n| `str_replace_editor` | `command` `view` → read, `command` `create` → write, otherwise edit |\n| any other tool | other |\n"
        );
    }

    #[test]
    fn arguments_written_as_json_text_are_parsed_and_others_kept_as_input() {
        let (map, note) = arguments(Some(&json!("{\"cmd\":\"ls\",\"n\":1}")));
        assert_eq!(Value::Object(map), json!({"cmd": "ls", "n": 1}));
        assert_eq!(note, None);
        let (map, note) = arguments(Some(&json!({"a": 1})));
        assert_eq!(Value::Object(map), json!({"a": 1}));
        assert_eq!(note, None);
        assert_eq!(arguments(None).0, Map::new());
        assert_eq!(arguments(Some(&Value::Null)).0, Map::new());
        assert_eq!(arguments(Some(&json!("  "))).0, Map::new());
        // Free text (a patch) is the tool's input, and nothing is amiss.
        let (map, note) = arguments(Some(&json!("*** Begin Patch")));
        assert_eq!(Value::Object(map), json!({"input": "*** Begin Patch"}));
        assert_eq!(note, None);
        let (map, note) = arguments(Some(&json!("[1,2]")));
        assert_eq!(Value::Object(map), json!({"input": "[1,2]"}));
        assert_eq!(
            note.as_deref(),
            Some("its arguments are a JSON text holding an array, not an object")
        );
        let (map, note) = arguments(Some(&json!([1])));
        assert_eq!(Value::Object(map), json!({"input": [1]}));
        assert_eq!(
            note.as_deref(),
            Some("its arguments are an array, not an object")
        );
    }

    /// A pack selects on `metadata.kind` as on any field: a transcript's `Edit` and
    /// `Write` calls are its edits and writes, whatever the tools are called.
    #[test]
    fn a_pack_selects_tool_calls_by_their_kind() {
        let transcript = concat!(
            r#"{"type":"assistant","sessionId":"s","uuid":"a1","timestamp":"2026-03-01T00:00:00Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a"}},{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"/a"}}]}}"#,
            "\n",
            r#"{"type":"assistant","sessionId":"s","uuid":"a2","timestamp":"2026-03-01T00:00:01Z","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t3","name":"Write","input":{"file_path":"/b"}},{"type":"tool_use","id":"t4","name":"mcp__x__edit","input":{}}]}}"#,
            "\n",
        );
        let read = crate::source::Registry::builtin()
            .read(
                &crate::source::Input::Bytes {
                    name: std::path::Path::new("t.jsonl"),
                    bytes: transcript.as_bytes(),
                },
                None,
                &crate::source::SessionFilter::All,
                &crate::source::ReadOptions::default(),
            )
            .unwrap();
        let kinds: Vec<String> = read.sessions[0]
            .entries
            .iter()
            .map(|e| {
                e.metadata
                    .get(KIND_KEY)
                    .and_then(|k| k.as_str())
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(kinds, ["read", "edit", "write", "other"]);
        let pack = crate::pack::testing::pack(concat!(
            "id: k\nversion: '1'\nname: K\nselectors:\n",
            "  changes: { domain: tool, field: metadata.kind, one_of: [edit, write] }\n",
            "dimensions:\n  - id: d\n    max: 100\n    rules:\n",
            "      - { id: r, doc: d, when: { count: changes, at_least: 2 }, points: 7 }\n",
        ));
        let options = crate::eval::GradeOptions {
            now: 0,
            explain: false,
            references: None,
        };
        let graded = pack.grade(&read.sessions[0], &options).unwrap();
        assert_eq!(graded.dimensions.get("d").map(|d| d.score.0), Some(7.0));
    }

    /// `docs/sources.md` shows every agent's table as the readers hold it.
    #[test]
    fn the_docs_show_every_agents_kind_table_as_the_reader_holds_it() {
        let docs = include_str!("../../../docs/sources.md");
        for table in tables() {
            let heading = format!("Tool kinds of {}:", table.agent);
            let at = docs
                .find(&heading)
                .unwrap_or_else(|| panic!("docs/sources.md has no `{heading}`"));
            let shown = &docs[at + heading.len()..];
            let shown = shown.trim_start_matches('\n');
            assert!(
                shown.starts_with(&table.markdown()),
                "docs/sources.md shows the table of {} otherwise; it is:\n{}",
                table.agent,
                table.markdown()
            );
        }
    }
}
