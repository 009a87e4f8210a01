//! Where audit entries come from: a JSONL audit log or CLEO's `tasks.db`.

mod jsonl;
mod sqlite;
mod stream;

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::entry::Session;

pub use jsonl::read_jsonl;
pub use sqlite::read_cleo_db;
pub use stream::{map_sessions, Progress, StreamError};

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
    Jsonl,
    CleoDb,
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
    #[error("`{path}` is neither a SQLite database nor a JSONL audit log: {reason}")]
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
}

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Tells a SQLite database from a JSONL log by the file's first bytes.
pub fn detect_format(path: &Path) -> Result<SourceFormat, SourceError> {
    let io = |source| SourceError::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut head = [0u8; 16];
    let mut filled = 0;
    while filled < head.len() {
        let n = file.read(&mut head[filled..]).map_err(io)?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    if filled == head.len() && &head == SQLITE_MAGIC {
        return Ok(SourceFormat::CleoDb);
    }
    let first = head[..filled]
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace());
    match first {
        Some(b'{') | None => Ok(SourceFormat::Jsonl),
        Some(_) => Err(SourceError::UnknownFormat {
            path: path.to_owned(),
            reason: "it has no SQLite header and its first line does not start with `{`".to_owned(),
        }),
    }
}

/// Reads the sessions of a source, detecting its format.
pub fn read_sessions(path: &Path, filter: &SessionFilter) -> Result<Vec<Session>, SourceError> {
    match detect_format(path)? {
        SourceFormat::Jsonl => read_jsonl(path, filter),
        SourceFormat::CleoDb => read_cleo_db(path, filter),
    }
}
