//! Where audit entries come from: a CLEO audit log (JSONL) or `tasks.db`, a Claude Code
//! transcript or project folder, or a Langfuse trace. `docs/sources.md` lists how each
//! maps to entries.

mod claude_code;
mod jsonl;
mod langfuse;
mod lenient;
mod readonly_db;
mod sqlite;
mod stream;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::entry::{Entry, Session};
use crate::pack::reads::FieldsRead;

pub use claude_code::{read_claude_code, read_claude_code_folder};
pub use jsonl::read_jsonl;
pub use langfuse::read_langfuse;
pub use sqlite::read_cleo_db;
pub use stream::{map_sessions, map_sessions_as, Mapped, Progress, StreamError};

/// Which sessions to read from a source.
#[derive(Debug, Clone)]
pub enum SessionFilter {
    /// Every session, in the order of first appearance.
    All,
    /// Only these sessions; others are parsed for validity but not kept.
    Only(HashSet<String>),
}

impl SessionFilter {
    pub fn only<I: IntoIterator<Item = S>, S: Into<String>>(ids: I) -> Self {
        SessionFilter::Only(ids.into_iter().map(Into::into).collect())
    }

    pub fn wants(&self, id: &str) -> bool {
        match self {
            SessionFilter::All => true,
            SessionFilter::Only(ids) => ids.contains(id),
        }
    }
}

/// The kinds of source the engine reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceFormat {
    /// A CLEO audit log: one `AuditEntry` per line.
    Jsonl,
    /// CLEO's `tasks.db`.
    CleoDb,
    /// A Claude Code transcript (`<session>.jsonl`, or the `{"loglines": [...]}` wrapper).
    ClaudeCode,
    /// A Langfuse trace: the UI's `{trace, observations}` download or the API's trace response.
    Langfuse,
}

impl SourceFormat {
    /// How the format is named on the command line (`--source-format`).
    pub fn name(self) -> &'static str {
        match self {
            SourceFormat::Jsonl => "cleo-jsonl",
            SourceFormat::CleoDb => "cleo-db",
            SourceFormat::ClaudeCode => "claude-code",
            SourceFormat::Langfuse => "langfuse",
        }
    }
}

/// Why a source could not be read. Every variant names the file, and the line or row.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot read `{path}`: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{path}` is not a source grade can read (tried a CLEO database, a CLEO audit log, a Claude Code transcript and a Langfuse trace): {reason}")]
    UnknownFormat { path: PathBuf, reason: String },
    #[error("{path}:{line}: {message}")]
    BadLine {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("`{path}` is not a CLEO database: {reason}")]
    NotCleoDb { path: PathBuf, reason: String },
    #[error("`{path}` has an `audit_log` table without the dispatch columns {missing}: it was written by a CLEO older than the 2026-02-27 migration, which records no sessions")]
    MissingDispatchColumns { path: PathBuf, missing: String },
    #[error("`{path}`: audit_log row `{row}`: {message}")]
    BadRow {
        path: PathBuf,
        row: String,
        message: String,
    },
    #[error("cannot query `{path}`: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("`{path}` is locked by another process (a write in progress): run again when it has finished")]
    Locked { path: PathBuf },
    #[error("`{path}` has a hot journal `{journal}` left by a write that did not finish: open it once with `sqlite3` (or let CLEO run) to roll the write back; grade only reads and does not")]
    HotJournal { path: PathBuf, journal: PathBuf },
    #[error("`{path}` is not a Langfuse trace: {reason}")]
    NotLangfuse { path: PathBuf, reason: String },
    #[error("`{path}` is a folder, and only Claude Code project folders can be read as a source (format `{format}` was asked for)")]
    FolderNotClaudeCode { path: PathBuf, format: &'static str },
    #[error("folder `{path}` holds no `*.jsonl` transcripts")]
    EmptyFolder { path: PathBuf },
    #[error("{path}{place}: format `{format}` (plugin `{plugin}`): {message}")]
    Plugin {
        path: PathBuf,
        /// `:LINE`, or empty for the file as a whole.
        place: String,
        format: String,
        plugin: String,
        message: String,
    },
}

/// Something in a source that was skipped or guessed, with its place; reading went on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceWarning {
    pub path: PathBuf,
    pub place: Place,
    pub message: String,
}

/// Where in a file a warning points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The whole file.
    File,
    /// A 1-based line.
    Line(u64),
    /// An item of a JSON document, such as `loglines[3]` (0-based, as in JSON).
    Item(String),
}

impl std::fmt::Display for SourceWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.place {
            Place::File => write!(f, "{}: {}", self.path.display(), self.message),
            Place::Line(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            Place::Item(item) => write!(f, "{}: `{item}`: {}", self.path.display(), self.message),
        }
    }
}

/// The sessions of a source, and what was skipped while reading them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceRead {
    pub sessions: Vec<Session>,
    pub warnings: Vec<SourceWarning>,
    /// Malformed lines skipped (each is also a warning), of sessions asked for or not.
    pub skipped_lines: u64,
    /// Of those, the lines whose session could not be read: any session may have lost them,
    /// so a session asked for that the source does not hold has lost these.
    pub skipped_unattributed: u64,
}

/// How a source is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadOptions {
    /// The optional entry fields to check the type of (the pack's
    /// [`crate::CompiledPack::fields_read`]); an unchecked field of the wrong type is left
    /// out of the entry. By default every field is checked.
    pub checked: FieldsRead,
    /// Skip any malformed line of a JSONL audit log with a warning, instead of failing on
    /// the first. A final line without a newline that is not JSON (a log still being
    /// written) is skipped either way.
    pub skip_bad_lines: bool,
}

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// How many non-blank lines detection looks at before giving up.
const DETECT_LINES: usize = 32;

/// Tells the formats apart by content: a SQLite header is a CLEO database; otherwise the
/// first JSON lines are read (a Claude Code record, a CLEO audit entry, a `{loglines}` or
/// Langfuse document on one line), and if the first line is not JSON on its own, the whole
/// file as one JSON document (a pretty-printed `{loglines}` wrapper or Langfuse trace).
/// An empty file is an (empty) CLEO audit log, as before.
pub fn detect_format(path: &Path) -> Result<SourceFormat, SourceError> {
    let io = |source| SourceError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut reader = BufReader::new(file);
    let mut head = [0u8; 16];
    let mut filled = 0;
    while filled < head.len() {
        let n = reader.read(&mut head[filled..]).map_err(io)?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    if filled == head.len() && &head == SQLITE_MAGIC {
        return Ok(SourceFormat::CleoDb);
    }
    let mut reader = std::io::Cursor::new(head[..filled].to_vec()).chain(reader);
    let mut line = Vec::new();
    let mut seen = 0;
    let mut first_problem: Option<String> = None;
    let mut line_no = 0u64;
    while seen < DETECT_LINES {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(io)? == 0 {
            break;
        }
        line_no += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        seen += 1;
        match serde_json::from_slice::<Value>(&line) {
            Ok(Value::Object(map)) => {
                if let Some(format) = classify(&map) {
                    return Ok(format);
                }
                first_problem.get_or_insert_with(|| {
                    format!(
                        "line {line_no} is a JSON object with none of the keys of a known record"
                    )
                });
            }
            Ok(other) => {
                first_problem.get_or_insert_with(|| {
                    format!(
                        "line {line_no} is a JSON {}, not an object",
                        json_kind(&other)
                    )
                });
            }
            Err(err) => {
                if seen == 1
                    && line
                        .iter()
                        .find(|b| !b.is_ascii_whitespace())
                        .is_some_and(|b| matches!(b, b'{' | b'['))
                {
                    // Perhaps a pretty-printed document: read it whole.
                    let text = std::fs::read(path).map_err(io)?;
                    match serde_json::from_slice::<Value>(&text) {
                        Ok(Value::Object(map)) => {
                            if let Some(format) = classify(&map) {
                                return Ok(format);
                            }
                            return Err(SourceError::UnknownFormat {
                                path: path.to_owned(),
                                reason: "it is one JSON object, but without `loglines` (Claude Code) or `trace` and `observations` (Langfuse)".to_owned(),
                            });
                        }
                        Ok(other) => {
                            return Err(SourceError::UnknownFormat {
                                path: path.to_owned(),
                                reason: format!(
                                    "it is one JSON {}, not an object",
                                    json_kind(&other)
                                ),
                            })
                        }
                        Err(_) => {}
                    }
                }
                first_problem.get_or_insert_with(|| {
                    format!(
                        "line {line_no} is not valid JSON: {}",
                        describe_json_error(&err)
                    )
                });
            }
        }
    }
    match first_problem {
        None => Ok(SourceFormat::Jsonl),
        Some(reason) => Err(SourceError::UnknownFormat {
            path: path.to_owned(),
            reason: format!("it has no SQLite header, and {reason}"),
        }),
    }
}

/// Which format a top-level JSON object belongs to, if any.
fn classify(map: &Map<String, Value>) -> Option<SourceFormat> {
    let has = |key: &str| map.contains_key(key);
    if map.get("loglines").is_some_and(Value::is_array) {
        return Some(SourceFormat::ClaudeCode);
    }
    if map.get("observations").is_some_and(Value::is_array)
        && (map.get("trace").is_some_and(Value::is_object) || has("id"))
    {
        return Some(SourceFormat::Langfuse);
    }
    if has("domain") || has("operation") {
        return Some(SourceFormat::Jsonl);
    }
    let typed = map.get("type").is_some_and(Value::is_string);
    if has("parentUuid")
        || has("leafUuid")
        || has("isSidechain")
        || (typed && (has("message") || has("uuid") || has("sessionId") || has("timestamp")))
    {
        return Some(SourceFormat::ClaudeCode);
    }
    None
}

pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// serde_json's message without its trailing "at line 1 column N"; the column is kept.
pub(crate) fn describe_json_error(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let message = match text.rfind(" at line ") {
        Some(cut) => &text[..cut],
        None => text.as_str(),
    };
    format!("{message} (column {})", err.column())
}

/// Reads the sessions of a source, detecting its format; warnings are dropped
/// (use [`read_source`] to get them).
pub fn read_sessions(path: &Path, filter: &SessionFilter) -> Result<Vec<Session>, SourceError> {
    read_source(path, None, filter).map(|read| read.sessions)
}

/// Reads the sessions of a source, in `format` or the detected one. A folder is a Claude
/// Code project folder: every `*.jsonl` in it (and its subfolders, where Claude Code keeps
/// subagent transcripts) is read, and sessions are gathered by their `sessionId`.
pub fn read_source(
    path: &Path,
    format: Option<SourceFormat>,
    filter: &SessionFilter,
) -> Result<SourceRead, SourceError> {
    read_source_with(path, format, filter, &ReadOptions::default())
}

/// [`read_source`] with [`ReadOptions`]: which fields to check, whether to skip bad lines.
pub fn read_source_with(
    path: &Path,
    format: Option<SourceFormat>,
    filter: &SessionFilter,
    options: &ReadOptions,
) -> Result<SourceRead, SourceError> {
    if path.is_dir() {
        if let Some(other) = format.filter(|f| *f != SourceFormat::ClaudeCode) {
            return Err(SourceError::FolderNotClaudeCode {
                path: path.to_owned(),
                format: other.name(),
            });
        }
        return claude_code::read_claude_code_folder(path, format.is_some(), filter);
    }
    let format = match format {
        Some(format) => format,
        None => detect_format(path)?,
    };
    match format {
        SourceFormat::Jsonl => read_jsonl(path, filter, options),
        SourceFormat::CleoDb => Ok(SourceRead {
            sessions: read_cleo_db(path, filter)?,
            ..SourceRead::default()
        }),
        SourceFormat::ClaudeCode => read_claude_code(&[path.to_owned()], filter),
        SourceFormat::Langfuse => read_langfuse(path, filter),
    }
}

/// Entries grouped by session, sessions in the order of their first entry (or skipped
/// line) and each session's entries in the order they were added.
#[derive(Default)]
pub(crate) struct SessionGroups {
    sessions: Vec<Session>,
    index_of: rustc_hash::FxHashMap<String, usize>,
    /// Skipped lines whose session could not be read.
    unattributed: u64,
}

impl SessionGroups {
    fn slot(&mut self, id: &str) -> usize {
        match self.index_of.get(id) {
            Some(&slot) => slot,
            None => {
                self.index_of.insert(id.to_owned(), self.sessions.len());
                self.sessions.push(Session {
                    id: id.to_owned(),
                    ..Session::default()
                });
                self.sessions.len() - 1
            }
        }
    }

    pub fn push(&mut self, entry: Entry) {
        let slot = self.slot(&entry.session_id);
        self.sessions[slot].entries.push(entry);
    }

    /// A skipped line of session `id`, or of an unknown session.
    pub fn skipped(&mut self, id: Option<&str>) {
        match id {
            Some(id) => {
                let slot = self.slot(id);
                self.sessions[slot].skipped_lines += 1;
            }
            None => self.unattributed += 1,
        }
    }

    /// The sessions, each counting the skipped lines no session could be told for; and
    /// the number of those.
    pub fn into_sessions(self) -> (Vec<Session>, u64) {
        let mut sessions = self.sessions;
        for s in &mut sessions {
            s.skipped_lines += self.unattributed;
        }
        (sessions, self.unattributed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn file_with(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn formats_are_told_apart_by_content() {
        let cases = [
            (
                r#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"tasks","operation":"find","result":{"success":true}}"#,
                SourceFormat::Jsonl,
            ),
            ("", SourceFormat::Jsonl),
            (
                r#"{"type":"summary","summary":"x","leafUuid":"u"}"#,
                SourceFormat::ClaudeCode,
            ),
            (
                "\"junk\"\n{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{}}",
                SourceFormat::ClaudeCode,
            ),
            ("{\n  \"loglines\": []\n}\n", SourceFormat::ClaudeCode),
            (
                "{\n  \"trace\": {\"id\": \"t\"},\n  \"observations\": []\n}",
                SourceFormat::Langfuse,
            ),
            (
                r#"{"id":"t","timestamp":"2026-03-01T00:00:00Z","observations":[]}"#,
                SourceFormat::Langfuse,
            ),
        ];
        for (text, want) in cases {
            let f = file_with(text);
            assert_eq!(detect_format(f.path()).unwrap(), want, "{text}");
        }
    }

    #[test]
    fn an_unknown_file_says_what_was_tried() {
        for text in [
            "hello\n",
            "{\"silly\": \"this\"}\n",
            "[1, 2]\n",
            "{\n \"a\": 1\n}\n",
        ] {
            let f = file_with(text);
            let err = detect_format(f.path()).unwrap_err().to_string();
            assert!(err.contains("tried a CLEO database, a CLEO audit log, a Claude Code transcript and a Langfuse trace"), "{err}");
        }
    }

    #[test]
    fn a_folder_is_only_a_claude_code_source() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_source(
            dir.path(),
            Some(SourceFormat::Langfuse),
            &SessionFilter::All,
        )
        .unwrap_err();
        assert!(
            matches!(err, SourceError::FolderNotClaudeCode { .. }),
            "{err}"
        );
        let err = read_source(dir.path(), None, &SessionFilter::All).unwrap_err();
        assert!(matches!(err, SourceError::EmptyFolder { .. }), "{err}");
    }
}
