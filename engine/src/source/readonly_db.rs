//! Opening a user's SQLite database so that nothing beside it is created or changed.
//!
//! A read-only connection to a WAL-mode database still creates `-wal` and `-shm` files
//! next to it, or rewrites an existing `-shm`. So a WAL database with no pending WAL is
//! opened `immutable` (no locks, no side files), and one whose `-wal` holds pages not yet
//! checkpointed is copied with its `-wal` into a private temporary folder and read there:
//! the copy sees every committed write, and the user's folder is never touched. A
//! rollback-journal database is opened read-only as it is, which creates nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::common::SourceError;

/// Where and how to open a database for reading; holds the private copy alive, if any.
#[derive(Clone)]
pub(crate) struct ReadOnlyDb {
    /// The database as the user named it, for messages.
    path: PathBuf,
    /// What to open: the file itself, an `immutable` URI, or the private copy.
    open: Opening,
    _copy: Option<Arc<tempfile::TempDir>>,
}

#[derive(Clone)]
enum Opening {
    Plain(PathBuf),
    Uri(String),
}

/// Byte 18 and 19 of a SQLite header: the read and write versions, 2 in WAL mode.
fn is_wal_mode(path: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    let mut header = [0u8; 20];
    let mut file = crate::file::open_regular(path)?;
    let mut filled = 0;
    while filled < header.len() {
        let n = file.read(&mut header[filled..])?;
        if n == 0 {
            return Ok(false);
        }
        filled += n;
    }
    Ok(header[18] == 2 && header[19] == 2)
}

/// A side file of a WAL database (`-wal`, `-shm`), opened when it is there: it must be a
/// regular file of its own, not a symbolic link (a `-wal` linked to anything, of any size, was
/// copied into the temporary folder) nor a FIFO or a device.
fn open_side_file(side: &Path) -> std::io::Result<Option<std::fs::File>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
        options.custom_flags(flags.bits() as i32);
    }
    let refused = |what: &str| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("it is {what}, not a regular file; a database's side file is read only when it is one"),
        )
    };
    // Where links cannot be refused as the file is opened, it is looked at first.
    if std::fs::symlink_metadata(side).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(refused("a symbolic link"));
    }
    let file = match options.open(side) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            return Err(refused("a symbolic link"))
        }
        Err(e) => return Err(e),
    };
    match crate::file::not_regular(&file.metadata()?) {
        None => Ok(Some(file)),
        Some(kind) => Err(refused(kind)),
    }
}

fn side_file(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// A `file:` URI for `path` with `immutable=1`; characters a URI gives meaning to are escaped.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for byte in path.as_os_str().as_encoded_bytes() {
        match byte {
            b'?' | b'#' | b'%' => uri.push_str(&format!("%{byte:02X}")),
            _ => uri.push(char::from(*byte)),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

impl ReadOnlyDb {
    pub(crate) fn new(path: &Path) -> Result<ReadOnlyDb, SourceError> {
        let io = |source| SourceError::Io {
            path: path.to_owned(),
            source,
        };
        let plain = ReadOnlyDb {
            path: path.to_owned(),
            open: Opening::Plain(path.to_owned()),
            _copy: None,
        };
        if !is_wal_mode(path).map_err(io)? {
            return Ok(plain);
        }
        let wal = side_file(path, "-wal");
        let shm = side_file(path, "-shm");
        let side_io = |at: &Path| {
            let at = at.to_owned();
            move |source| SourceError::Io { path: at, source }
        };
        let wal_file = open_side_file(&wal).map_err(side_io(&wal))?;
        open_side_file(&shm).map_err(side_io(&shm))?;
        let pending = match &wal_file {
            Some(file) => file.metadata().map_err(side_io(&wal))?.len() > 0,
            None => false,
        };
        // A URI is built from bytes; a path that is not UTF-8 is copied instead.
        if !pending && path.to_str().is_some() {
            return Ok(ReadOnlyDb {
                open: Opening::Uri(immutable_uri(path)),
                ..plain
            });
        }
        let dir = tempfile::Builder::new()
            .prefix("grade-db-")
            .tempdir()
            .map_err(io)?;
        let copy = dir.path().join("tasks.db");
        std::fs::copy(path, &copy).map_err(io)?;
        if let Some(mut from) = wal_file.filter(|_| pending) {
            // A WAL being appended to while it is copied ends in frames whose checksums
            // fail; SQLite stops at the last whole commit, so the copy is consistent. It is
            // copied from the file checked above, not from its name again.
            std::fs::File::create(side_file(&copy, "-wal"))
                .and_then(|mut to| std::io::copy(&mut from, &mut to))
                .map_err(side_io(&wal))?;
        }
        Ok(ReadOnlyDb {
            path: path.to_owned(),
            open: Opening::Plain(copy),
            _copy: Some(Arc::new(dir)),
        })
    }

    pub(crate) fn connect(&self) -> Result<Connection, SourceError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let opened = match &self.open {
            Opening::Plain(file) => Connection::open_with_flags(file, flags),
            Opening::Uri(uri) => {
                Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)
            }
        };
        let conn = opened.map_err(|source| self.error(source))?;
        // CLEO's writes are short: a lock held longer than this is reported, not waited out.
        conn.busy_timeout(std::time::Duration::from_secs(1))
            .map_err(|source| self.error(source))?;
        Ok(conn)
    }

    /// The error of a query on this database: a lock or a hot journal is said for what it is.
    pub(crate) fn error(&self, source: rusqlite::Error) -> SourceError {
        explain(&self.path, source)
    }
}

/// A SQLite error on `path`, named for what it is when it is a lock or a hot journal.
pub(crate) fn explain(path: &Path, source: rusqlite::Error) -> SourceError {
    let code = source.sqlite_error_code();
    if matches!(
        code,
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    ) {
        return SourceError::Locked {
            path: path.to_owned(),
        };
    }
    let journal = side_file(path, "-journal");
    if matches!(code, Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen))
        && std::fs::metadata(&journal).is_ok_and(|m| m.len() > 0)
    {
        return SourceError::HotJournal {
            path: path.to_owned(),
            journal,
        };
    }
    SourceError::Sqlite {
        path: path.to_owned(),
        source,
    }
}
