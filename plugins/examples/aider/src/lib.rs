//! Example plugin `aider`: reads Aider's chat history, `.aider.chat.history.md`, a Markdown
//! file no built-in source reads. Aider (`aider/io.py`, `InputOutput`) appends to it as the
//! chat goes on:
//!
//! | in the file | written by | entry |
//! |---|---|---|
//! | `# aider chat started at 2025-12-24 16:45:52` | `InputOutput.__init__` | starts a session, its id the time as written |
//! | `#### text` (one such line per line of the input) | `user_input` | domain `message`, operation `user`, `params.text` |
//! | other text (a blank line before and after) | `ai_output` | domain `message`, operation `assistant`, `params.text` |
//! | `> Applied edit to PATH` | the coder, after an edit | domain `tool`, operation `edit`, `params.file_path`, `metadata.kind` `edit` |
//! | `> … SEARCH/REPLACE block failed to match!`, `> The LLM did not conform to the edit format.` | the coder's errors | domain `tool`, operation `edit`, failed, `error` the line, `metadata.kind` `edit` |
//! | `> Commit HASH MESSAGE` | the repo, after a commit | domain `tool`, operation `commit`, `params.hash` and `params.message`, `metadata.kind` `other` |
//! | `> Running COMMAND` | a shell command the user let run | domain `tool`, operation `shell`, `params.command`, `metadata.kind` `shell` |
//! | any other `> ` line (`Tokens: …`, `Added x to the chat`, a question and its answer) | `tool_output`, `tool_warning`, `confirm_ask` | no entry: the output of what came before |
//!
//! A pack's test fixture in this format: `pack/tests/aider-chat-history`.
//!
//! The file records no time but the session's start, which every entry of the session takes:
//! the header's local time, written as UTC because the file names no zone (entries keep the
//! file's order). `> ` lines hold what Aider printed, so a tool error and a tool output look
//! alike: only the messages above are read as outcomes. Metadata: `source` (`aider`) and
//! `line`.

use grade_plugin::serde_json::{json, Map, Value};
use grade_plugin::{plugin, NewEntry, Sink, Source, SourceError};

pub struct AiderHistory;

/// The header that starts a session, as `InputOutput` writes it.
const HEADER: &str = "# aider chat started at ";
/// A line of the user's input.
const USER: &str = "#### ";
/// A line of what Aider printed.
const OUTPUT: &str = "> ";
/// Lines by which the coder says an edit did not apply.
/// (The `## SearchReplaceNoExactMatch: …` lines that follow name the file of the same failure.)
const EDIT_FAILURES: [&str; 2] = [
    "SEARCH/REPLACE block failed to match",
    "did not conform to the edit format",
];

impl Source for AiderHistory {
    fn detect(head: &[u8]) -> bool {
        // The file starts with a blank line and the header (each start appends both).
        let text = String::from_utf8_lossy(head);
        text.lines()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| header_time(l).is_some())
    }

    fn read(_path: &str, content: &[u8], out: &mut Sink<'_>) -> Result<(), SourceError> {
        let text = std::str::from_utf8(content)
            .map_err(|e| SourceError::at(0, format!("the chat history is not UTF-8: {e}")))?;
        let (entries, warnings) = parse(text);
        for (line, warning) in warnings {
            out.warning(line, &warning);
        }
        for entry in entries {
            out.entry(&entry)?;
        }
        Ok(())
    }
}

/// The entries of a chat history, and what was skipped (line, why).
pub fn parse(text: &str) -> (Vec<NewEntry>, Vec<(u64, String)>) {
    let mut reader = Reader::default();
    for (i, line) in text.lines().enumerate() {
        reader.line(i as u64 + 1, line);
    }
    reader.flush();
    (reader.entries, reader.warnings)
}

/// `2025-12-24 16:45:52` from a header line, or `None` when the line is no header.
fn header_time(line: &str) -> Option<&str> {
    let time = line.strip_prefix(HEADER)?.trim();
    let bytes = time.as_bytes();
    let shape = time.len() == 19
        && bytes.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            10 => *b == b' ',
            13 | 16 => *b == b':',
            _ => b.is_ascii_digit(),
        });
    shape.then_some(time)
}

/// What is being gathered: the user's lines or the assistant's, from a line on.
enum Block {
    None,
    User(u64, Vec<String>),
    Assistant(u64, Vec<String>),
}

struct Reader {
    session: Option<(String, String)>,
    block: Block,
    entries: Vec<NewEntry>,
    warnings: Vec<(u64, String)>,
}

impl Default for Reader {
    fn default() -> Reader {
        Reader {
            session: None,
            block: Block::None,
            entries: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

impl Reader {
    fn line(&mut self, number: u64, line: &str) {
        if let Some(time) = header_time(line) {
            self.flush();
            let timestamp = format!("{}T{}Z", &time[..10], &time[11..]);
            self.session = Some((time.to_owned(), timestamp));
            return;
        }
        if self.session.is_none() {
            if !line.trim().is_empty() {
                self.warnings.push((
                    number,
                    "skipped: text before the first `# aider chat started at` header".to_owned(),
                ));
            }
            return;
        }
        // Aider ends each line it logs with two spaces (a Markdown line break).
        let text = line.trim_end_matches("  ");
        if let Some(said) = text.strip_prefix(USER).or((text == "####").then_some("")) {
            match &mut self.block {
                Block::User(_, lines) => lines.push(said.to_owned()),
                _ => {
                    self.flush();
                    self.block = Block::User(number, vec![said.to_owned()]);
                }
            }
        } else if let Some(printed) = text.strip_prefix(OUTPUT).or((text == ">").then_some("")) {
            self.flush();
            self.output(number, printed.trim());
        } else if text.trim().is_empty() {
            if let Block::Assistant(_, lines) = &mut self.block {
                lines.push(String::new());
            } else {
                self.flush();
            }
        } else {
            match &mut self.block {
                Block::Assistant(_, lines) => lines.push(text.to_owned()),
                _ => {
                    self.flush();
                    self.block = Block::Assistant(number, vec![text.to_owned()]);
                }
            }
        }
    }

    /// A line Aider printed: an entry when it is an edit, a commit or a command run.
    fn output(&mut self, line: u64, printed: &str) {
        if let Some(path) = printed.strip_prefix("Applied edit to ") {
            self.tool(
                line,
                "edit",
                "edit",
                json!({ "file_path": path.trim() }),
                None,
            );
        } else if EDIT_FAILURES.iter().any(|f| printed.contains(f)) {
            self.tool(line, "edit", "edit", json!({}), Some(printed));
        } else if let Some(rest) = printed.strip_prefix("Commit ") {
            let (hash, message) = rest.split_once(' ').unwrap_or((rest, ""));
            let commit = json!({ "hash": hash, "message": message });
            self.tool(line, "commit", "other", commit, None);
        } else if let Some(command) = printed.strip_prefix("Running ") {
            self.tool(line, "shell", "shell", json!({ "command": command }), None);
        }
    }

    fn tool(&mut self, line: u64, operation: &str, kind: &str, params: Value, error: Option<&str>) {
        let mut entry = self.entry(line, "tool", operation, params);
        if let Value::Object(meta) = &mut entry.metadata {
            meta.insert("kind".to_owned(), json!(kind));
        }
        if let Some(error) = error {
            entry.success = false;
            entry.exit_code = 1;
            entry.error = Some(error.to_owned());
        }
        self.entries.push(entry);
    }

    fn entry(&self, line: u64, domain: &str, operation: &str, params: Value) -> NewEntry {
        let (id, timestamp) = self.session.clone().unwrap_or_default();
        let mut metadata = Map::new();
        metadata.insert("source".to_owned(), json!("aider"));
        metadata.insert("line".to_owned(), json!(line));
        NewEntry {
            session_id: id,
            timestamp,
            domain: domain.to_owned(),
            operation: operation.to_owned(),
            success: true,
            exit_code: 0,
            duration_ms: 0.0,
            error: None,
            params,
            metadata: Value::Object(metadata),
            line,
        }
    }

    /// Ends the block being gathered, as a message entry.
    fn flush(&mut self) {
        let (role, line, lines) = match std::mem::replace(&mut self.block, Block::None) {
            Block::None => return,
            Block::User(line, lines) => ("user", line, lines),
            Block::Assistant(line, lines) => ("assistant", line, lines),
        };
        let text = lines.join("\n").trim().to_owned();
        if text.is_empty() {
            return;
        }
        let entry = self.entry(line, "message", role, json!({ "text": text }));
        self.entries.push(entry);
    }
}

plugin! {
    name: "aider",
    version: env!("CARGO_PKG_VERSION"),
    sources: [
        {
            name: "aider-history",
            doc: "Aider's chat history (`.aider.chat.history.md`)",
            reader: AiderHistory,
        },
    ],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_is_detected_by_its_first_header() {
        assert!(AiderHistory::detect(
            b"\n# aider chat started at 2025-12-24 16:45:52\n\n"
        ));
        assert!(!AiderHistory::detect(
            b"# aider chat started at yesterday\n"
        ));
        assert!(!AiderHistory::detect(
            b"# Notes\n# aider chat started at 2025-12-24 16:45:52\n"
        ));
        assert!(!AiderHistory::detect(b"{\"type\":\"session_meta\"}\n"));
    }

    fn shape(text: &str) -> Vec<(String, String, String, bool)> {
        parse(text)
            .0
            .into_iter()
            .map(|e| (e.session_id, e.domain, e.operation, e.success))
            .collect()
    }

    #[test]
    fn headers_start_sessions_and_each_block_is_one_entry() {
        let text = "\n# aider chat started at 2025-03-02 09:15:07\n\n#### fix the bug  \n#### in app.py  \n\nHere is the fix:\n\napp.py\n```python\nx = 1\n```\n\n> Tokens: 2.1k sent, 310 received.  \n> Applied edit to app.py  \n> Commit 1a2b3c4 fix: the bug  \n\n# aider chat started at 2025-03-02 10:00:00\n\n#### /run pytest  \n> Running pytest  \n> # 1 SEARCH/REPLACE block failed to match!  \n";
        let got = shape(text);
        let s1 = "2025-03-02 09:15:07".to_owned();
        let s2 = "2025-03-02 10:00:00".to_owned();
        let e =
            |s: &String, d: &str, o: &str, ok: bool| (s.clone(), d.to_owned(), o.to_owned(), ok);
        assert_eq!(
            got,
            vec![
                e(&s1, "message", "user", true),
                e(&s1, "message", "assistant", true),
                e(&s1, "tool", "edit", true),
                e(&s1, "tool", "commit", true),
                e(&s2, "message", "user", true),
                e(&s2, "tool", "shell", true),
                e(&s2, "tool", "edit", false),
            ]
        );
        let (entries, warnings) = parse(text);
        assert!(warnings.is_empty());
        assert_eq!(entries[0].params["text"], "fix the bug\nin app.py");
        assert_eq!(
            entries[1].params["text"],
            "Here is the fix:\n\napp.py\n```python\nx = 1\n```"
        );
        assert_eq!(entries[2].params["file_path"], "app.py");
        assert_eq!(entries[3].params["hash"], "1a2b3c4");
        assert_eq!(entries[0].timestamp, "2025-03-02T09:15:07Z");
        assert_eq!(entries[2].metadata["kind"], "edit");
    }

    #[test]
    fn text_before_the_first_header_is_skipped_and_said() {
        let (entries, warnings) =
            parse("stray\n# aider chat started at 2025-03-02 09:15:07\n#### hi\n");
        assert_eq!(entries.len(), 1);
        assert_eq!(
            warnings,
            vec![(
                1,
                "skipped: text before the first `# aider chat started at` header".to_owned()
            )]
        );
    }
}
