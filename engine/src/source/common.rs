//! What every source format shares: the session filter, read options, errors and
//! warnings, what a read returns, and the input a format reads from.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::entry::{Entry, Session};
use crate::pack::reads::FieldsRead;

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

/// Why a source could not be read. Every variant names the file, and the line or row.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot read `{path}`: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{path}` is not a source grade can read (tried {tried}): {reason}")]
    UnknownFormat {
        path: PathBuf,
        /// The formats detection tried, as a phrase (`a CLEO database, … and a Langfuse trace`).
        tried: String,
        reason: String,
    },
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
    FolderNotClaudeCode { path: PathBuf, format: String },
    /// A problem found by a format the engine does not ship (a plugin's, an embedder's).
    #[error("`{path}`: {message}")]
    Format { path: PathBuf, message: String },
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

impl SourceError {
    /// The same error naming `path` instead of the file it was found in (a temporary copy).
    pub(crate) fn at_path(mut self, name: &Path) -> SourceError {
        match &mut self {
            SourceError::Io { path, .. }
            | SourceError::UnknownFormat { path, .. }
            | SourceError::BadLine { path, .. }
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
            | SourceError::EmptyFolder { path } => *path = name.to_owned(),
        }
        self
    }
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

    /// The whole content: the bytes, or the file read.
    pub(crate) fn bytes(&self) -> Result<std::borrow::Cow<'_, [u8]>, SourceError> {
        match self {
            Input::File(path) => {
                std::fs::read(path)
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

/// serde_json's message without its trailing "at line 1 column N"; the column is kept.
pub(crate) fn describe_json_error(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let message = match text.rfind(" at line ") {
        Some(cut) => &text[..cut],
        None => text.as_str(),
    };
    format!("{message} (column {})", err.column())
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
