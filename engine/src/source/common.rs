//! What every source format shares: the session filter, read options, errors and
//! warnings, what a read returns, and the input a format reads from.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::entry::{Entry, Session};
use crate::field::{FieldsRead, Projection};

/// Which sessions to read from a source.
#[derive(Debug, Clone)]
pub enum SessionFilter {
    /// Every session, in the order of first appearance.
    All,
    /// Only these sessions; others are parsed for validity but not kept.
    Only(HashSet<String>),
}

impl SessionFilter {
    /// Only the sessions with these ids.
    pub fn only<I: IntoIterator<Item = S>, S: Into<String>>(ids: I) -> Self {
        SessionFilter::Only(ids.into_iter().map(Into::into).collect())
    }

    /// Whether the session `id` is wanted.
    pub fn wants(&self, id: &str) -> bool {
        match self {
            SessionFilter::All => true,
            SessionFilter::Only(ids) => ids.contains(id),
        }
    }
}

/// Why a source could not be read. Every variant names the file, and the line or row.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// The file could not be read.
    #[error("cannot read `{path}`: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// No format recognised the file.
    #[error("`{path}` is not a source grade can read (tried {tried}): {reason}")]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// The formats detection tried, as a phrase (`a CLEO database, … and a Langfuse trace`).
        tried: String,
        /// Why the likeliest format refused it.
        reason: String,
    },
    /// A line of a JSON document source is malformed.
    #[error("{path}:{line}: {message}")]
    BadLine {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// What is wrong with it.
        message: String,
    },
    /// A malformed line of a log that [`ReadOptions::skip_bad_lines`] would have skipped.
    #[error("{path}:{line}: {message}")]
    MalformedLine {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// What is wrong with it.
        message: String,
    },
    /// The file is not a CLEO `tasks.db`.
    #[error("`{path}` is not a CLEO database: {reason}")]
    NotCleoDb {
        /// The file.
        path: PathBuf,
        /// Why it is not.
        reason: String,
    },
    /// The `audit_log` table predates the columns that record sessions.
    #[error("`{path}` has an `audit_log` table without the dispatch columns {missing}: it was written by a CLEO older than the 2026-02-27 migration, which records no sessions")]
    MissingDispatchColumns {
        /// The file.
        path: PathBuf,
        /// The missing columns, as a phrase.
        missing: String,
    },
    /// A row of `audit_log` is malformed.
    #[error("`{path}`: audit_log row `{row}`: {message}")]
    BadRow {
        /// The file.
        path: PathBuf,
        /// The row's id.
        row: String,
        /// What is wrong with it.
        message: String,
    },
    /// SQLite failed to query the database.
    #[error("cannot query `{path}`: {source}")]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// Another process holds a write lock on the database.
    #[error("`{path}` is locked by another process (a write in progress): run again when it has finished")]
    Locked {
        /// The file.
        path: PathBuf,
    },
    /// The database has a journal of an unfinished write.
    #[error("`{path}` has a hot journal `{journal}` left by a write that did not finish: open it once with `sqlite3` (or let CLEO run) to roll the write back; grade only reads and does not")]
    HotJournal {
        /// The file.
        path: PathBuf,
        /// The journal file.
        journal: PathBuf,
    },
    /// The file is not a Langfuse trace.
    #[error("`{path}` is not a Langfuse trace: {reason}")]
    NotLangfuse {
        /// The file.
        path: PathBuf,
        /// Why it is not.
        reason: String,
    },
    /// A folder was given for a format that reads files.
    #[error("`{path}` is a folder, and only Claude Code project folders can be read as a source (format `{format}` was asked for)")]
    FolderNotClaudeCode {
        /// The folder.
        path: PathBuf,
        /// The format asked for.
        format: String,
    },
    /// A problem found by a format the engine does not ship (a plugin's, an embedder's).
    #[error("`{path}`: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A Claude Code project folder without transcripts.
    #[error("folder `{path}` holds no `*.jsonl` transcripts")]
    EmptyFolder {
        /// The folder.
        path: PathBuf,
    },
    /// A folder or glob source without a file of any format the run reads.
    #[error("`{path}` holds no source file (looked for {looked_for})")]
    NoSourceFiles {
        /// The folder or glob pattern.
        path: PathBuf,
        /// The file names looked for, as a phrase (`` `*.db`, `*.json` or `*.jsonl` ``).
        looked_for: String,
    },
    /// One session id in two files of a run of several sources: which of them to grade
    /// under that id cannot be told, and grading both would record two grades for one id.
    #[error("session `{id}` is in both `{first}` and `{path}`: a run of several sources grades each session once (give one of the files, or `--source` each separately)")]
    DuplicateSession {
        /// The session id.
        id: String,
        /// The file it was found in first.
        first: PathBuf,
        /// The file it was found in again.
        path: PathBuf,
    },
    /// The source is of a format the pack does not grade (`sources` in its `rubric.yaml`):
    /// its rules would look for entries the source never has, and grade it wrong.
    #[error("{0}")]
    NotGraded(Box<NotGraded>),
    /// A plugin's format could not read the file.
    #[error("{path}{place}: format `{format}` (plugin `{plugin}`): {message}")]
    Plugin {
        /// The file.
        path: PathBuf,
        /// `:LINE`, or empty for the file as a whole.
        place: String,
        /// The format's name.
        format: String,
        /// The plugin that reads it.
        plugin: String,
        /// What the plugin said.
        message: String,
    },
}

impl SourceError {
    /// The same error naming `path` instead of the file it was found in (a temporary copy).
    pub(crate) fn at_path(mut self, name: &Path) -> SourceError {
        match &mut self {
            SourceError::Io { path, .. }
            | SourceError::UnknownFormat { path, .. }
            | SourceError::BadLine { path, .. }
            | SourceError::MalformedLine { path, .. }
            | SourceError::NotCleoDb { path, .. }
            | SourceError::MissingDispatchColumns { path, .. }
            | SourceError::BadRow { path, .. }
            | SourceError::Sqlite { path, .. }
            | SourceError::NotLangfuse { path, .. }
            | SourceError::FolderNotClaudeCode { path, .. }
            | SourceError::Format { path, .. }
            | SourceError::Locked { path }
            | SourceError::HotJournal { path, .. }
            | SourceError::Plugin { path, .. }
            | SourceError::EmptyFolder { path }
            | SourceError::NoSourceFiles { path, .. }
            | SourceError::DuplicateSession { path, .. } => *path = name.to_owned(),
            SourceError::NotGraded(refused) => refused.path = name.to_owned(),
        }
        self
    }
}

/// A source of a format a pack does not grade: see [`SourceError::NotGraded`].
#[derive(Debug, thiserror::Error)]
#[error("`{path}` reads as {noun}, and rubric `{pack}` grades only {grades}")]
pub struct NotGraded {
    /// The file or folder.
    pub path: PathBuf,
    /// The source's format as a noun phrase with its name (``a Claude Code transcript
    /// (`claude-code`)``).
    pub noun: String,
    /// The source's format (`claude-code`).
    pub format: String,
    /// The pack that does not grade it.
    pub pack: String,
    /// The formats the pack grades, as a phrase (`` `cleo-db` and `cleo-jsonl` sources ``).
    pub grades: String,
}

/// Something in a source that was skipped or guessed, with its place; reading went on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceWarning {
    /// The file.
    pub path: PathBuf,
    /// Where in the file.
    pub place: Place,
    /// What was skipped or guessed.
    pub message: String,
}

/// Where in a file a warning points.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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
    /// The sessions read, in the order of each one's first entry.
    pub sessions: Vec<Session>,
    /// What was skipped or guessed while reading.
    pub warnings: Vec<SourceWarning>,
    /// Malformed lines skipped (each is also a warning), of sessions asked for or not.
    pub skipped_lines: u64,
    /// Of those, the lines whose session could not be read: any session may have lost them,
    /// so a session asked for that the source does not hold has lost these.
    pub skipped_unattributed: u64,
}

/// How a source is read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReadOptions {
    /// The optional entry fields to check the type of (the pack's
    /// [`crate::CompiledPack::fields_read`]); an unchecked field of the wrong type is left
    /// out of the entry. By default every field is checked.
    pub checked: FieldsRead,
    /// What of each entry to keep (the packs' [`crate::CompiledPack::projection`]): a reader
    /// that can may skip the rest of each line without building it. By default everything
    /// is kept; a caller that hands the entries to anything but the packs keeps it so.
    pub kept: Projection,
    /// Skip any malformed line of a JSONL audit log with a warning, instead of failing on
    /// the first. A final line without a newline that is not JSON (a log still being
    /// written) is skipped either way.
    pub skip_bad_lines: bool,
}

/// What a source format reads: a file on disk, or bytes already in memory (standard input,
/// a pipe read to its end, a document fetched from a server).
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// A file, read where it lies; formats that stream read it twice.
    File(&'a Path),
    /// Bytes in memory; `name` is how messages name them (for example `-` or a URL).
    Bytes {
        /// How errors and warnings name the input.
        name: &'a Path,
        /// The whole content.
        bytes: &'a [u8],
    },
}

impl Input<'_> {
    /// How errors and warnings name the input.
    pub fn name(&self) -> &Path {
        match self {
            Input::File(path) => path,
            Input::Bytes { name, .. } => name,
        }
    }

    /// The first `n` bytes, or all of them when there are fewer.
    pub(crate) fn head(&self, n: usize) -> Result<Vec<u8>, SourceError> {
        use std::io::Read;
        match self {
            Input::File(path) => {
                let mut head = Vec::with_capacity(n);
                crate::file::open_regular(path)
                    .and_then(|file| file.take(n as u64).read_to_end(&mut head))
                    .map_err(|source| SourceError::Io {
                        path: path.to_path_buf(),
                        source,
                    })?;
                Ok(head)
            }
            Input::Bytes { bytes, .. } => Ok(bytes[..bytes.len().min(n)].to_vec()),
        }
    }

    /// The whole content: the bytes, or the file read.
    pub(crate) fn bytes(&self) -> Result<std::borrow::Cow<'_, [u8]>, SourceError> {
        match self {
            Input::File(path) => {
                crate::file::read_capped(path, crate::file::MAX_DOCUMENT, "source read whole")
                    .map(std::borrow::Cow::Owned)
                    .map_err(|source| SourceError::Io {
                        path: path.to_path_buf(),
                        source,
                    })
            }
            Input::Bytes { bytes, .. } => Ok(std::borrow::Cow::Borrowed(bytes)),
        }
    }
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

/// What a JSON value that should be an object (a line of a log, a record, a document) is
/// instead, as every source says it: `a JSON array, not an object`.
pub(crate) fn not_an_object(value: &Value) -> String {
    format!("a JSON {}, not an object", json_kind(value))
}

/// A JSON value as a warning names it: a string or number with its value (as JSON writes
/// it, so `"1"` and `1` differ), else its kind.
pub(crate) fn described(value: &Value) -> String {
    match value {
        Value::String(_) | Value::Number(_) => format!("the {} `{value}`", json_kind(value)),
        other => format!("a JSON {}", json_kind(other)),
    }
}

/// The timestamp in `field` of a JSON record: its text as written and its instant; `None`
/// when the field is absent or null; otherwise why it cannot be read, naming the field and
/// the value. A number is not read: epoch seconds and milliseconds look alike, and the
/// value does not say which it counts, so guessing could shift a session by decades (or
/// reorder it) without a word.
pub(crate) fn timestamp_field<'v>(
    record: &'v serde_json::Map<String, Value>,
    field: &str,
) -> Result<Option<(&'v str, crate::time::InstantMs)>, String> {
    match record.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => crate::time::parse_timestamp(text)
            .map(|instant| Some((text.as_str(), instant)))
            .map_err(|err| format!("field `{field}`: {err}")),
        Some(Value::Number(n)) => Err(format!(
            "field `{field}` is the number `{n}`, not a timestamp: it does not say whether it counts seconds or milliseconds since 1970, so it is not read (write ISO-8601 like `2026-03-01T12:00:00Z`)"
        )),
        Some(other) => Err(format!(
            "field `{field}` is a JSON {}, not a timestamp",
            json_kind(other)
        )),
    }
}

/// serde_json's message without its trailing "at line 1 column N"; the column is kept.
pub(crate) fn describe_json_error(err: &serde_json::Error, text: &[u8]) -> String {
    // Editors on Windows save UTF-8 with a mark serde_json reports only as "expected value
    // (column 1)", which does not say what to fix.
    if text.starts_with(BYTE_ORDER_MARK) && err.line() == 1 && err.column() == 1 {
        return "it starts with a byte order mark (U+FEFF), which JSON does not allow (save the file as UTF-8 without one)".to_owned();
    }
    // Windows PowerShell 5 redirects output as UTF-16 (with its mark, `FF FE`), which
    // serde_json reports as "expected value (column 1)" too.
    if err.line() == 1 && err.column() <= 2 {
        if let Some(order) = utf16_order(text) {
            return format!("it is UTF-16 ({order}), and JSON sources are read as UTF-8 (save the file as UTF-8)");
        }
    }
    let shown = err.to_string();
    let message = match shown.rfind(" at line ") {
        Some(cut) => &shown[..cut],
        None => shown.as_str(),
    };
    // serde_json puts an error found just past a newline (the text ended, or a string ran
    // into the line's end) at column 0 of the next line: "(column 0)" named no place.
    if err.column() == 0 && err.line() > 1 {
        let lines = text
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count();
        return if lines <= 1 {
            format!("{message} (at the end of the line)")
        } else {
            format!("{message} (at the end of line {})", err.line() - 1)
        };
    }
    format!("{message} (column {})", err.column())
}

/// UTF-8's byte order mark.
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// How a text in UTF-16 shows it: its byte order mark, or a NUL beside its first character
/// (`{` or `[` in a JSON source); `None` for anything else.
fn utf16_order(text: &[u8]) -> Option<&'static str> {
    match text {
        [0xFF, 0xFE, ..] => Some("its first bytes are the byte order mark `FF FE`"),
        [0xFE, 0xFF, ..] => Some("its first bytes are the byte order mark `FE FF`"),
        [b'{' | b'[', 0, ..] | [0, b'{' | b'[', ..] => {
            Some("a NUL byte is beside its first character")
        }
        _ => None,
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
