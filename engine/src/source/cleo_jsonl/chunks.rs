//! A file (or bytes in memory) read as chunks of whole lines, and chunks split into pieces
//! of lines for parallel work.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::super::common::SourceError;

/// Bytes read at a time: enough lines to keep both cores busy, small next to the file.
pub(super) const CHUNK_BYTES: usize = 4 << 20;
/// The longest line read (a line this long is refused): an audit log entry is a few hundred bytes, and a file with no line
/// end (a disk image, `/dev/zero` copied to a file) would otherwise be read whole into memory.
pub const MAX_LINE_BYTES: usize = 64 << 20;
/// Lines per parallel task within a chunk.
const PIECE_BYTES: usize = 256 << 10;

/// A chunk of whole lines. Its lines are numbered by whoever walks them: they count its
/// lines as they go, where a count here would be one more pass over the bytes.
pub(super) struct Chunk {
    /// A buffer of which the first `len` bytes are the chunk (the rest is kept initialised
    /// so that a recycled buffer is read into without zeroing it again).
    pub(super) bytes: Vec<u8>,
    pub(super) len: usize,
}

/// Why [`Chunks::next_chunk`] gave no chunk.
#[derive(Debug)]
pub(super) enum ChunkError {
    /// Reading failed.
    Read(SourceError),
    /// The line after the chunks handed out so far is [`MAX_LINE_BYTES`] or longer.
    LongLine,
}

impl ChunkError {
    /// The error, for a read whose chunks so far held `lines` lines.
    pub(super) fn named(self, path: &Path, lines: u64) -> SourceError {
        match self {
            ChunkError::Read(e) => e,
            ChunkError::LongLine => SourceError::Format {
                path: path.to_owned(),
                message: format!(
                    "line {} is {} MiB or longer",
                    lines + 1,
                    MAX_LINE_BYTES >> 20
                ),
            },
        }
    }
}

impl std::ops::Deref for Chunk {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// A file (or bytes in memory) read as chunks of whole lines.
pub(super) struct Chunks<'r> {
    file: Box<dyn Read + Send + 'r>,
    path: PathBuf,
    carry: Vec<u8>,
    /// Bytes still to read, when the read is bounded.
    left: Option<u64>,
    /// Bytes handed out in chunks so far.
    pub(super) consumed: u64,
    eof: bool,
    /// A buffer handed back, to read the next chunk into without faulting in new pages.
    spare: Option<Vec<u8>>,
}

impl<'r> Chunks<'r> {
    pub(super) fn open(path: &Path, limit: Option<u64>) -> Result<Chunks<'static>, SourceError> {
        let file = crate::file::open_regular(path).map_err(|source| SourceError::Io {
            path: path.to_owned(),
            source,
        })?;
        Ok(Chunks::new(Box::new(file), path, limit))
    }

    pub(super) fn new(
        file: Box<dyn Read + Send + 'r>,
        path: &Path,
        limit: Option<u64>,
    ) -> Chunks<'r> {
        Chunks {
            file,
            path: path.to_owned(),
            carry: Vec::new(),
            left: limit,
            consumed: 0,
            eof: false,
            spare: None,
        }
    }

    /// Hands a chunk's buffer back for the next read.
    pub(super) fn recycle(&mut self, chunk: Chunk) {
        self.spare = Some(chunk.bytes);
    }

    /// Reads into `buf[len..target]` until it is full or the file (or the bound) ends, and
    /// returns the new length. One `read` of all that is wanted: `read_to_end` probes with
    /// reads of 8 KiB doubling up to the size, ten system calls a chunk instead of one.
    fn fill(&mut self, buf: &mut [u8], mut len: usize) -> Result<usize, ChunkError> {
        while !self.eof && len < buf.len() {
            let want = match self.left {
                Some(left) => (buf.len() - len).min(usize::try_from(left).unwrap_or(usize::MAX)),
                None => buf.len() - len,
            };
            if want == 0 {
                self.eof = true;
                break;
            }
            let n = match self.file.read(&mut buf[len..len + want]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(ChunkError::Read(SourceError::Io {
                        path: self.path.clone(),
                        source,
                    }))
                }
            };
            if n == 0 {
                self.eof = true;
            }
            len += n;
            if let Some(left) = self.left.as_mut() {
                *left -= n as u64;
            }
        }
        Ok(len)
    }

    pub(super) fn next_chunk(&mut self) -> Result<Option<Chunk>, ChunkError> {
        let mut buf = self.spare.take().unwrap_or_default();
        let mut target = CHUNK_BYTES.max(self.carry.len());
        if buf.len() < target {
            buf.resize(target, 0);
        }
        buf[..self.carry.len()].copy_from_slice(&self.carry);
        let mut len = self.carry.len();
        self.carry.clear();
        loop {
            len = self.fill(&mut buf[..target], len)?;
            if len == 0 {
                return Ok(None);
            }
            let cut = if self.eof {
                len
            } else {
                match memchr::memrchr(b'\n', &buf[..len]) {
                    Some(i) => i + 1,
                    None => {
                        // A line longer than a chunk: read on, up to the longest line.
                        if len >= MAX_LINE_BYTES {
                            return Err(ChunkError::LongLine);
                        }
                        target *= 2;
                        buf.resize(target, 0);
                        continue;
                    }
                }
            };
            self.carry.extend_from_slice(&buf[cut..len]);
            len = cut;
            self.consumed += len as u64;
            return Ok(Some(Chunk { bytes: buf, len }));
        }
    }
}

/// Splits whole lines into pieces of about [`PIECE_BYTES`], each ending at a line end.
pub(super) fn split_lines(bytes: &[u8]) -> Vec<&[u8]> {
    let mut pieces = Vec::with_capacity(bytes.len() / PIECE_BYTES + 1);
    let mut rest = bytes;
    while !rest.is_empty() {
        if rest.len() <= PIECE_BYTES {
            pieces.push(rest);
            break;
        }
        let cut = match memchr::memchr(b'\n', &rest[PIECE_BYTES..]) {
            Some(i) => PIECE_BYTES + i + 1,
            None => rest.len(),
        };
        pieces.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    pieces
}

pub(super) fn lines(piece: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = piece;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
        let line = &rest[..end];
        rest = &rest[end..];
        Some(line)
    })
}

pub(super) fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_split_at_line_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        let mut text = String::new();
        for i in 0..200_000 {
            text.push_str(&format!("line {i}\n"));
        }
        text.push_str("last");
        std::fs::write(&path, &text).unwrap();
        let mut chunks = Chunks::open(&path, None).unwrap();
        let mut all = Vec::new();
        let mut count = 0;
        while let Some(c) = chunks.next_chunk().unwrap() {
            count += lines(&c).count();
            assert!(c.ends_with(b"\n") || c.ends_with(b"last"));
            all.extend_from_slice(&c);
        }
        assert_eq!(all, text.as_bytes());
        assert_eq!(count, 200_001);
    }

    /// Recycled buffers keep bytes of earlier chunks past a chunk's end: none may show.
    #[test]
    fn recycled_chunks_hold_only_their_lines_even_after_a_line_longer_than_a_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        let long = "x".repeat(CHUNK_BYTES * 2 + 17);
        let mut text = String::new();
        for i in 0..2_000_000 {
            text.push_str(&format!("line {i}\n"));
            if i == 1_000 {
                text.push_str(&long);
                text.push('\n');
            }
        }
        std::fs::write(&path, &text).unwrap();
        let read = |limit: Option<u64>| {
            let mut chunks = Chunks::open(&path, limit).unwrap();
            let mut all = Vec::new();
            let mut count = 0;
            let mut lines_read = 0;
            while let Some(c) = chunks.next_chunk().unwrap() {
                assert!(c.ends_with(b"\n"));
                all.extend_from_slice(&c);
                count += 1;
                lines_read += lines(&c).count() as u64;
                chunks.recycle(c);
            }
            (all, count, lines_read)
        };
        let (all, count, lines) = read(None);
        assert_eq!(all, text.as_bytes());
        assert!(count > 3, "{count} chunks");
        assert_eq!(lines, 2_000_001);
        // A bound stops at the byte it names, as the second pass reads what the first counted.
        let cut = text[..text.len() / 2].rfind('\n').unwrap() + 1;
        let (all, _, lines) = read(Some(cut as u64));
        assert_eq!(all, &text.as_bytes()[..cut]);
        assert_eq!(lines, text[..cut].matches('\n').count() as u64);
    }
}
