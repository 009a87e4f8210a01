//! Files the user names, read safely: a pipe or standard input is read whole (a source is
//! spooled to a private file, since the readers open it more than once), a device that
//! never ends (`/dev/zero`) is refused, and what is read at once has a size cap.

use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::CliError;

/// The most a source read from a pipe or standard input may hold.
pub const MAX_SPOOLED_SOURCE: u64 = 4 << 30;
/// The most a judgment, a grades file or another file read at once may hold.
pub const MAX_DOCUMENT: u64 = 1 << 30;

/// A cap set by the environment variable `var`: `default` when it is not set. A value that
/// is no whole number (of `unit`) is refused: ignored, it would leave a user who set it to
/// keep memory low with the default in silence.
pub fn cap_from_env(var: &str, default: usize, unit: &str) -> Result<usize, CliError> {
    match std::env::var_os(var) {
        None => Ok(default),
        Some(value) => value
            .to_str()
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "`{var}` must be a number of {unit}, not `{}`",
                    value.to_string_lossy()
                ))
            }),
    }
}

/// Each spooled copy's path and what the user called the source, so that messages name
/// `<stdin>` (or the pipe as given), not a private file they never saw. Entries outlive
/// their copy on purpose: the run's error is printed after its plan, and the copy with it,
/// is gone.
static SPOOLED: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// `text` with the path of every spooled copy replaced by what the user gave.
pub fn as_given(text: &str) -> Cow<'_, str> {
    let Ok(spooled) = SPOOLED.lock() else {
        return Cow::Borrowed(text);
    };
    let mut text = Cow::Borrowed(text);
    for (copy, given) in spooled.iter() {
        if text.contains(copy.as_str()) {
            text = Cow::Owned(text.replace(copy.as_str(), given));
        }
    }
    text
}

/// A source ready for the readers: the user's file or folder, or a private copy of what a
/// pipe or standard input gave (kept until this value is dropped).
pub struct Source {
    pub path: PathBuf,
    _spool: Option<tempfile::TempDir>,
}

/// What kind of thing a path is, as far as reading it goes.
enum Kind {
    FileOrFolder,
    Pipe,
    Device(&'static str),
}

fn kind(meta: &std::fs::Metadata) -> Kind {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return Kind::Pipe;
        }
        if t.is_char_device() {
            return Kind::Device("a character device");
        }
        if t.is_block_device() {
            return Kind::Device("a block device");
        }
        if t.is_socket() {
            return Kind::Device("a socket");
        }
    }
    let _ = meta;
    Kind::FileOrFolder
}

/// Whether `path` is a named pipe (after links): reading one waits until something writes.
pub fn is_pipe(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| matches!(kind(&meta), Kind::Pipe))
}

/// Resolves `--source`: `-` is standard input; a FIFO (or `/dev/stdin`, `<(…)`) is read to
/// its end into a private file; a device is refused.
pub fn source(given: &Path) -> Result<Source, CliError> {
    if given.as_os_str() == "-" {
        return spool(&mut std::io::stdin().lock(), given);
    }
    let meta = std::fs::metadata(given).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            CliError::Usage(format!("source `{}` does not exist", given.display()))
        } else {
            CliError::Io {
                path: given.to_owned(),
                source: e,
            }
        }
    })?;
    match kind(&meta) {
        Kind::FileOrFolder => Ok(Source {
            path: given.to_owned(),
            _spool: None,
        }),
        Kind::Pipe => {
            let mut pipe =
                grade_engine::file::open_named(given).map_err(|source| CliError::Io {
                    path: given.to_owned(),
                    source,
                })?;
            spool(&mut pipe, given)
        }
        Kind::Device(what) => Err(CliError::Usage(format!(
            "source `{}` is {what}, not a file, a folder or a pipe; give `-` to read standard input",
            given.display()
        ))),
    }
}

fn spool(from: &mut dyn Read, given: &Path) -> Result<Source, CliError> {
    let io = |source| CliError::Io {
        path: given.to_owned(),
        source,
    };
    let dir = tempfile::Builder::new()
        .prefix("grade-source-")
        .tempdir()
        .map_err(io)?;
    let path = dir.path().join("stdin");
    let mut file = std::fs::File::create(&path).map_err(io)?;
    let copied = std::io::copy(&mut from.take(MAX_SPOOLED_SOURCE + 1), &mut file).map_err(io)?;
    if copied > MAX_SPOOLED_SOURCE {
        return Err(CliError::Usage(format!(
            "source `{}` gave more than {} GiB; save it to a file and grade that",
            given.display(),
            MAX_SPOOLED_SOURCE >> 30
        )));
    }
    if let Ok(mut spooled) = SPOOLED.lock() {
        let given = if given.as_os_str() == "-" {
            "<stdin>".to_owned()
        } else {
            given.display().to_string()
        };
        spooled.push((path.display().to_string(), given));
    }
    Ok(Source {
        path,
        _spool: Some(dir),
    })
}

/// The error for a file the user named that is not there, in the words `--source` uses
/// (`judgment `j.json` does not exist`), not the system's (`entity not found`).
pub fn missing(what: &str, path: &Path) -> CliError {
    CliError::Usage(format!("{what} `{}` does not exist", path.display()))
}

/// Reads a file the user named, whole, as text: `-` is standard input; the rest goes through
/// the engine's guarded open ([`grade_engine::file::open_named`]: a device that is not
/// `/dev/null`, or a FIFO nothing writes to, is refused at once); more than `cap` bytes is an
/// error, not an endless read.
/// `Ok(None)` when the file does not exist.
pub fn read_text(path: &Path, cap: u64, what: &str) -> Result<Option<String>, std::io::Error> {
    let mut reader: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        match grade_engine::file::open_named(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        }
    };
    let mut bytes = Vec::new();
    reader.by_ref().take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a {what} larger than {} MiB is not read", cap >> 20),
        ));
    }
    // A byte-order mark (an editor on Windows saves one) is no part of the document.
    let bom = if bytes.starts_with(b"\xef\xbb\xbf") {
        3
    } else {
        0
    };
    bytes.drain(..bom);
    String::from_utf8(bytes).map(Some).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "it is not UTF-8 text (byte {} is not UTF-8)",
                bom + e.utf8_error().valid_up_to() + 1
            ),
        )
    })
}
