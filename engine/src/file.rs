//! Files read, opened by one guarded open: read only when they are regular files (or a pipe
//! something writes to, where the user named one), and read whole only up to a cap:
//! `/dev/zero` never ends, and opening a FIFO waits for a writer that may never come. The
//! engine's readers open regular files only; a pipe the user asked to read is read by the
//! program that embeds the engine ([`open_named`]; the `grade` binary copies a piped source
//! to a private file first).

use std::fs::File;
use std::io::{Error, ErrorKind, Read};
use std::path::Path;

/// The most a document read whole may hold: a transcript or a trace (read whole to be
/// parsed), an expectation or judgments file of a pack's tests, a plugin library.
pub const MAX_DOCUMENT: u64 = 4 << 30;

/// What kind of file `meta` describes, when it is not a regular file.
pub(crate) fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// Opens `path` for reading without waiting, whatever it is: a FIFO is opened without
/// blocking.
fn open_without_waiting(path: &Path) -> Result<File, Error> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    options.open(path)
}

/// A file the user named, opened to be read whole: a regular file, `/dev/null`, or a pipe
/// something is writing to (`<(cmd)`, a FIFO with a writer). A FIFO nothing writes to, a
/// device and a socket are refused at once, never waited on; a folder is left to fail as
/// it is read.
pub fn open_named(path: &Path) -> Result<Box<dyn Read + Send>, Error> {
    let mut file = open_without_waiting(path)?;
    let meta = file.metadata()?;
    let kind = not_regular(&meta);
    #[cfg(unix)]
    if kind == Some("a FIFO (named pipe)") {
        // Read without waiting: nothing at all (no writer, or one that closed at once) is
        // refused; a writer that has not written yet is then waited for, as it will write.
        let mut first = [0u8; 1];
        let read = loop {
            match file.read(&mut first) {
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                read => break read,
            }
        };
        let got = match read {
            Ok(0) => {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    "it is a FIFO (named pipe) that nothing writes to",
                ))
            }
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => 0,
            Err(e) => return Err(e),
        };
        let flags = rustix::fs::fcntl_getfl(&file)?;
        rustix::fs::fcntl_setfl(&file, flags - rustix::fs::OFlags::NONBLOCK)?;
        let first = first[..got].to_vec();
        return Ok(Box::new(std::io::Cursor::new(first).chain(file)));
    }
    match kind {
        None | Some("a folder") => Ok(Box::new(file)),
        Some(_) if path == Path::new("/dev/null") => Ok(Box::new(file)),
        Some(kind) => Err(Error::new(
            ErrorKind::InvalidInput,
            format!("it is {kind}, not a file or a pipe"),
        )),
    }
}

/// Opens `path` for reading if it is a regular file (after links); anything else is refused
/// without waiting: a FIFO is opened without blocking, then refused.
pub(crate) fn open_regular(path: &Path) -> Result<File, Error> {
    let file = open_without_waiting(path)?;
    match not_regular(&file.metadata()?) {
        None => Ok(file),
        Some("not a regular file") => Err(Error::new(
            ErrorKind::InvalidInput,
            "it is not a regular file",
        )),
        Some(kind) => Err(Error::new(
            ErrorKind::InvalidInput,
            format!("it is {kind}, not a regular file"),
        )),
    }
}

/// Reads the regular file at `path` whole; more than `cap` bytes is an error naming `what`.
pub fn read_capped(path: &Path, cap: u64, what: &str) -> Result<Vec<u8>, Error> {
    let file = open_regular(path)?;
    let too_large = || {
        Error::new(
            ErrorKind::InvalidData,
            format!("a {what} larger than {} MiB is not read", cap >> 20),
        )
    };
    let len = file.metadata()?.len();
    if len > cap {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // The file may grow while it is read.
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read_capped`] as UTF-8 text.
pub(crate) fn read_text_capped(path: &Path, cap: u64, what: &str) -> Result<String, Error> {
    String::from_utf8(read_capped(path, cap, what)?)
        .map_err(|e| Error::new(ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_device_is_refused_without_waiting_or_reading() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Opening a FIFO for reading waited for a writer: this test hung.
        let err = open_regular(&fifo).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is a FIFO (named pipe), not a regular file"
        );
        let err = read_capped(Path::new("/dev/zero"), 1 << 20, "trace").unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is a character device, not a regular file"
        );
        let err = open_regular(dir.path()).unwrap_err();
        assert_eq!(err.to_string(), "it is a folder, not a regular file");
    }

    #[test]
    fn a_file_past_the_cap_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        std::fs::write(&path, vec![b' '; (1 << 20) + 1]).unwrap();
        let err = read_capped(&path, 1 << 20, "trace").unwrap_err();
        assert_eq!(err.to_string(), "a trace larger than 1 MiB is not read");
        assert_eq!(
            read_capped(&path, 2 << 20, "trace").unwrap().len(),
            (1 << 20) + 1
        );
    }
}
