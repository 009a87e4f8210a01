//! Files the engine reads, opened only when they are regular files and read whole only up to
//! a cap: `/dev/zero` never ends, and opening a FIFO waits for a writer that may never come.
//! A pipe the user asked to read is read by the program that embeds the engine (the `grade`
//! binary copies it to a private file first).

use std::fs::File;
use std::io::{Error, ErrorKind, Read};
use std::path::Path;

/// The most a document read whole may hold: a transcript or a trace (read whole to be
/// parsed), an expectation or judgments file of a pack's tests, a plugin library.
pub const MAX_DOCUMENT: u64 = 4 << 30;

/// What kind of file `meta` describes, when it is not a regular file.
fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
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

/// Opens `path` for reading if it is a regular file (after links); anything else is refused
/// without waiting: a FIFO is opened without blocking, then refused.
pub(crate) fn open_regular(path: &Path) -> Result<File, Error> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = options.open(path)?;
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
pub(crate) fn read_capped(path: &Path, cap: u64, what: &str) -> Result<Vec<u8>, Error> {
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
