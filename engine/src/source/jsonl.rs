//! JSONL audit logs: one CLEO `AuditEntry` per line, sessions possibly interleaved.
//!
//! The file is read in chunks of whole lines, and each chunk is parsed in parallel into
//! typed entries (no generic JSON tree except for `params` and unknown metadata keys).
//! Grading a whole log streams in two passes (see [`super::stream`]): the first pass only
//! finds each line's `sessionId`, mostly without parsing the rest of the line.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::stream::{Batches, Item, Progress, SessionTable};
use super::{SessionFilter, SessionGroups, SourceError};
use crate::entry::{Entry, MetaValue, Metadata, Outcome, Params, Session, Text};
use crate::time::parse_timestamp;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEntry {
    timestamp: Text,
    session_id: Text,
    domain: Text,
    operation: Text,
    #[serde(default)]
    params: Option<Params>,
    result: RawOutcome,
    #[serde(default)]
    metadata: Option<RawMetadata>,
    #[serde(default)]
    error: Option<Text>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawOutcome {
    success: bool,
    #[serde(default)]
    exit_code: Option<i64>,
    #[serde(default)]
    duration: Option<f64>,
}

/// Metadata read straight into its fields: what [`Metadata::from_map`] builds from a map,
/// without building the map first.
struct RawMetadata(Metadata);

/// A key, borrowed from the line when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for RawMetadata {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MetadataVisitor;
        impl<'de> Visitor<'de> for MetadataVisitor {
            type Value = RawMetadata;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawMetadata, A::Error> {
                let (mut task_id, mut user_id, mut source, mut gateway, mut role) =
                    (None, None, None, None, None);
                let mut extra = Map::new();
                // A repeated key keeps its last value, as a map would.
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    let slot = match &*key {
                        "taskId" => &mut task_id,
                        "userId" => &mut user_id,
                        "source" => &mut source,
                        "gateway" => &mut gateway,
                        "role" => &mut role,
                        _ => {
                            extra.insert(key.into_owned(), map.next_value::<Value>()?);
                            continue;
                        }
                    };
                    *slot = Some(map.next_value::<MetaValue>()?);
                }
                let known = |v: Option<MetaValue>| v.filter(|v| !v.is_null());
                Ok(RawMetadata(Metadata {
                    task_id: known(task_id),
                    user_id: known(user_id),
                    source: known(source).unwrap_or_else(|| MetaValue::from("mcp")),
                    gateway: known(gateway),
                    role: known(role),
                    extra,
                }))
            }
        }
        d.deserialize_map(MetadataVisitor)
    }
}

/// Bytes read at a time: enough lines to keep both cores busy, small next to the file.
const CHUNK_BYTES: usize = 4 << 20;
/// Lines per parallel task within a chunk.
const PIECE_BYTES: usize = 256 << 10;

/// Reads a JSONL audit log. A session's entries keep file order; sessions come out in the
/// order of their first entry. Any malformed line is an error naming its line, even in a
/// session that was not asked for: a log that is partly unreadable should not grade quietly.
pub fn read_jsonl(path: &Path, filter: &SessionFilter) -> Result<Vec<Session>, SourceError> {
    let mut chunks = Chunks::open(path, None)?;
    let mut groups = SessionGroups::default();
    while let Some(chunk) = chunks.next_chunk()? {
        let parsed = parse_chunk(&chunk, |e: Entry| filter.wants(&e.session_id).then_some(e));
        let parsed = unwrap_pieces(parsed, &chunk, path)?;
        chunks.recycle(chunk);
        parsed.into_iter().flatten().for_each(|e| groups.push(e));
    }
    Ok(groups.into_sessions())
}

/// First pass of a streamed read: the session table. Then the batches of the second pass.
pub(crate) fn open_stream<'p>(
    path: &Path,
    filter: &SessionFilter,
    progress: Option<Progress<'p>>,
) -> Result<(SessionTable, JsonlBatches<'p>), SourceError> {
    let io = |source| SourceError::Io {
        path: path.to_owned(),
        source,
    };
    let size = std::fs::metadata(path).map_err(io)?.len();
    let mut chunks = Chunks::open(path, None)?;
    let mut table = SessionTable::default();
    let mut next = chunks.next_chunk()?;
    while let Some(chunk) = next {
        // The next chunk is read while this one is counted.
        let (read, pieces) = rayon::join(
            || chunks.next_chunk(),
            || -> Vec<Vec<(Cow<'_, str>, u32)>> {
                split_lines(&chunk)
                    .par_iter()
                    .map(|piece| count_sessions(piece))
                    .collect()
            },
        );
        for (id, n) in pieces.into_iter().flatten() {
            if filter.wants(&id) {
                table.add(&id, n);
            }
        }
        next = read?;
        chunks.recycle(chunk);
        if let Some(p) = progress {
            p(chunks.consumed, 2 * size);
        }
    }
    // The second pass reads exactly the bytes the first one counted, even if the log grows.
    let batches = JsonlBatches {
        chunks: Chunks::open(path, Some(chunks.consumed))?,
        filter: filter.clone(),
        path: path.to_owned(),
        size,
        progress,
    };
    Ok((table, batches))
}

pub(crate) struct JsonlBatches<'p> {
    chunks: Chunks,
    filter: SessionFilter,
    path: PathBuf,
    size: u64,
    progress: Option<Progress<'p>>,
}

impl Batches for JsonlBatches<'_> {
    fn next_batch(&mut self, table: &SessionTable) -> Result<Option<Vec<Vec<Item>>>, SourceError> {
        let Some(chunk) = self.chunks.next_chunk()? else {
            return Ok(None);
        };
        let filter = &self.filter;
        // A wanted session the first pass did not see gets `u32::MAX`: the log changed.
        let parsed = parse_chunk(&chunk, |entry: Entry| {
            if !filter.wants(&entry.session_id) {
                return None;
            }
            let session = table.lookup(&entry.session_id).unwrap_or(u32::MAX);
            Some(Item { session, entry })
        });
        let items = unwrap_pieces(parsed, &chunk, &self.path)?;
        self.chunks.recycle(chunk);
        if items.iter().flatten().any(|i| i.session == u32::MAX) {
            return Err(self.changed());
        }
        if let Some(p) = self.progress {
            p(self.size + self.chunks.consumed, 2 * self.size);
        }
        Ok(Some(items))
    }

    fn changed(&self) -> SourceError {
        SourceError::Io {
            path: self.path.clone(),
            source: std::io::Error::other("the file changed while it was read; run again"),
        }
    }
}

/// A chunk of whole lines and the number of lines before it.
struct Chunk {
    /// A buffer of which the first `len` bytes are the chunk (the rest is kept initialised
    /// so that a recycled buffer is read into without zeroing it again).
    bytes: Vec<u8>,
    len: usize,
    first_line: u64,
}

impl std::ops::Deref for Chunk {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// A file read as chunks of whole lines.
struct Chunks {
    file: File,
    path: PathBuf,
    carry: Vec<u8>,
    /// Bytes still to read, when the read is bounded.
    left: Option<u64>,
    /// Bytes handed out in chunks so far.
    consumed: u64,
    lines: u64,
    eof: bool,
    /// A buffer handed back, to read the next chunk into without faulting in new pages.
    spare: Option<Vec<u8>>,
}

impl Chunks {
    fn open(path: &Path, limit: Option<u64>) -> Result<Chunks, SourceError> {
        let file = File::open(path).map_err(|source| SourceError::Io {
            path: path.to_owned(),
            source,
        })?;
        Ok(Chunks {
            file,
            path: path.to_owned(),
            carry: Vec::new(),
            left: limit,
            consumed: 0,
            lines: 0,
            eof: false,
            spare: None,
        })
    }

    /// Hands a chunk's buffer back for the next read.
    fn recycle(&mut self, chunk: Chunk) {
        self.spare = Some(chunk.bytes);
    }

    /// Reads into `buf[len..target]` until it is full or the file (or the bound) ends, and
    /// returns the new length. One `read` of all that is wanted: `read_to_end` probes with
    /// reads of 8 KiB doubling up to the size, ten system calls a chunk instead of one.
    fn fill(&mut self, buf: &mut [u8], mut len: usize) -> Result<usize, SourceError> {
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
                    return Err(SourceError::Io {
                        path: self.path.clone(),
                        source,
                    })
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

    fn next_chunk(&mut self) -> Result<Option<Chunk>, SourceError> {
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
                        // A line longer than a chunk: read on.
                        target *= 2;
                        buf.resize(target, 0);
                        continue;
                    }
                }
            };
            self.carry.extend_from_slice(&buf[cut..len]);
            len = cut;
            let chunk = &buf[..len];
            let first_line = self.lines;
            self.lines += memchr::memchr_iter(b'\n', chunk).count() as u64;
            if self.eof && chunk.last() != Some(&b'\n') {
                self.lines += 1;
            }
            self.consumed += len as u64;
            return Ok(Some(Chunk {
                bytes: buf,
                len,
                first_line,
            }));
        }
    }
}

/// Splits whole lines into pieces of about [`PIECE_BYTES`], each ending at a line end.
fn split_lines(bytes: &[u8]) -> Vec<&[u8]> {
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

fn lines(piece: &[u8]) -> impl Iterator<Item = &[u8]> {
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

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// What a piece of a chunk parsed into: the kept entries, or the first bad line (its index
/// within the piece and the message).
type PieceResult<T> = Result<Vec<T>, (usize, String)>;

/// Parses the lines of a chunk in parallel; `keep` decides which entries to keep and turns
/// them into what the caller collects (built in place, so entries are moved once).
fn parse_chunk<T, F>(chunk: &Chunk, keep: F) -> Vec<(usize, PieceResult<T>)>
where
    T: Send,
    F: Fn(Entry) -> Option<T> + Sync,
{
    let pieces = split_lines(chunk);
    let mut offsets = Vec::with_capacity(pieces.len());
    let mut at = 0;
    for p in &pieces {
        offsets.push(at);
        at += p.len();
    }
    pieces
        .par_iter()
        .zip(offsets)
        .map(|(piece, offset)| {
            let mut kept = Vec::with_capacity(piece.len() / 200);
            // UTF-8 checked once for the piece rather than string by string in the parser;
            // a piece that fails is parsed from bytes, so the bad line is the one named.
            let text = std::str::from_utf8(piece).ok();
            let mut at = 0;
            for (i, line) in lines(piece).enumerate() {
                // Lines start after a `\n`, so they start and end on character boundaries.
                let line_text = text.map(|t| &t[at..at + line.len()]);
                at += line.len();
                if is_blank(line) {
                    continue;
                }
                let entry = match parse_line(line, line_text) {
                    Ok(e) => e,
                    Err(message) => return (offset, Err((i, message))),
                };
                if let Some(t) = keep(entry) {
                    kept.push(t);
                }
            }
            (offset, Ok(kept))
        })
        .collect()
}

/// The kept entries of a parsed chunk, piece by piece in file order, or the error of its
/// first bad line.
fn unwrap_pieces<T>(
    parsed: Vec<(usize, PieceResult<T>)>,
    chunk: &Chunk,
    path: &Path,
) -> Result<Vec<Vec<T>>, SourceError> {
    let mut out = Vec::with_capacity(parsed.len());
    for (offset, result) in parsed {
        match result {
            Ok(kept) => out.push(kept),
            Err((i, message)) => {
                let before = memchr::memchr_iter(b'\n', &chunk[..offset]).count() as u64;
                return Err(SourceError::BadLine {
                    path: path.to_owned(),
                    line: chunk.first_line + before + i as u64 + 1,
                    message,
                });
            }
        }
    }
    Ok(out)
}

/// The sessions of a piece's lines with their number of lines, in order of first line.
/// Lines whose session cannot be read are left out: the second pass reports them.
fn count_sessions(piece: &[u8]) -> Vec<(Cow<'_, str>, u32)> {
    let mut out: Vec<(Cow<'_, str>, u32)> = Vec::new();
    let mut index: FxHashMap<Cow<'_, str>, usize> = FxHashMap::default();
    for line in lines(piece) {
        if is_blank(line) {
            continue;
        }
        let Some(id) = session_of(line) else { continue };
        match index.get(&id) {
            Some(&i) => out[i].1 += 1,
            None => {
                index.insert(id.clone(), out.len());
                out.push((id, 1));
            }
        }
    }
    out
}

/// The `sessionId` of a line, as the full parse will read it.
fn session_of(line: &[u8]) -> Option<Cow<'_, str>> {
    if let Some(id) = skim_session_id(line) {
        return Some(id);
    }
    #[derive(Deserialize)]
    struct OnlySession<'a> {
        #[serde(borrow, rename = "sessionId")]
        session_id: Cow<'a, str>,
    }
    serde_json::from_slice::<OnlySession<'_>>(line)
        .ok()
        .map(|s| s.session_id)
}

/// Finds the top-level `"sessionId"` of a line by skipping the values before it, without
/// validating the line. `None` when anything is unusual (escapes in keys, odd nesting): the
/// caller then parses the line properly.
fn skim_session_id(line: &[u8]) -> Option<Cow<'_, str>> {
    let mut s = Skim { b: line, i: 0 };
    s.ws();
    s.eat(b'{')?;
    loop {
        s.ws();
        let key = s.string()?;
        s.ws();
        s.eat(b':')?;
        s.ws();
        if key == b"sessionId" {
            let start = s.i;
            let raw = s.string()?;
            return if raw.contains(&b'\\') {
                serde_json::from_slice::<String>(&line[start..s.i])
                    .ok()
                    .map(Cow::Owned)
            } else {
                std::str::from_utf8(raw).ok().map(Cow::Borrowed)
            };
        }
        if key.contains(&b'\\') {
            return None;
        }
        s.skip_value()?;
        s.ws();
        s.eat(b',')?;
    }
}

struct Skim<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Skim<'a> {
    fn ws(&mut self) {
        while self
            .b
            .get(self.i)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }
    /// A string's raw content (escapes left as they are).
    fn string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            let at = self.i + memchr::memchr2(b'"', b'\\', &self.b[self.i..])?;
            if self.b[at] == b'\\' {
                self.i = at + 2;
                if self.i > self.b.len() {
                    return None;
                }
            } else {
                self.i = at + 1;
                return Some(&self.b[start..at]);
            }
        }
    }
    fn skip_value(&mut self) -> Option<()> {
        match *self.b.get(self.i)? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match *self.b.get(self.i)? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            _ => {
                while self.b.get(self.i).is_some_and(|c| {
                    !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.i += 1;
                }
                Some(())
            }
        }
    }
}

/// Parses a line; `text` is the same line when it is known to be valid UTF-8.
fn parse_line(line: &[u8], text: Option<&str>) -> Result<Entry, String> {
    let raw: RawEntry = match text {
        Some(text) => serde_json::from_str(text),
        None => serde_json::from_slice(line),
    }
    .map_err(describe_json_error)?;
    let instant = parse_timestamp(&raw.timestamp).map_err(|e| format!("field `timestamp`: {e}"))?;
    let exit_code = raw
        .result
        .exit_code
        .unwrap_or(if raw.result.success { 0 } else { 1 });
    Ok(Entry {
        timestamp: raw.timestamp,
        instant,
        session_id: raw.session_id,
        domain: raw.domain,
        operation: raw.operation,
        params: raw.params.unwrap_or_default(),
        result: Outcome {
            success: raw.result.success,
            exit_code,
            duration: raw.result.duration.unwrap_or(0.0),
        },
        metadata: match raw.metadata {
            Some(RawMetadata(m)) => m,
            None => Metadata::from_map(Map::new(), "mcp"),
        },
        error: raw.error,
    })
}

/// serde_json's message without its trailing "at line 1 column N", which is misleading
/// for a single line; the column is kept.
fn describe_json_error(err: serde_json::Error) -> String {
    let text = err.to_string();
    let message = match text.rfind(" at line ") {
        Some(cut) => &text[..cut],
        None => text.as_str(),
    };
    let kind = if err.is_syntax() || err.is_eof() {
        "not valid JSON: "
    } else {
        ""
    };
    format!("{kind}{message} (column {})", err.column())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_field_is_named() {
        let err = parse_line(br#"{"timestamp":"2026-03-01T00:00:00Z","domain":"tasks","operation":"find","result":{"success":true}}"#, None)
            .unwrap_err();
        assert!(err.contains("missing field `sessionId`"), "{err}");
    }

    #[test]
    fn defaults_follow_cleo() {
        let e = parse_line(br#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"tasks","operation":"find","result":{"success":false}}"#, None)
            .unwrap();
        assert_eq!(e.result.exit_code, 1);
        assert_eq!(e.metadata.source, MetaValue::from("mcp"));
        assert!(e.params.is_empty());
    }

    #[test]
    fn metadata_is_read_as_from_map_reads_it() {
        let line = br#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"d","operation":"o","result":{"success":true},"metadata":{"source":null,"taskId":"T1","x":{"y":1},"role":null,"gateway":"a","gateway":"query","userId":7}}"#;
        let e = parse_line(line, None).unwrap();
        let v: Value = serde_json::from_slice(line).unwrap();
        let map = v["metadata"].as_object().unwrap().clone();
        assert_eq!(e.metadata, Metadata::from_map(map, "mcp"));
        assert_eq!(e.metadata.gateway, Some(MetaValue::from("query")));
    }

    #[test]
    fn the_skim_finds_the_session_the_parse_reads() {
        let cases: &[(&[u8], Option<&str>)] = &[
            (br#"{"timestamp": "t", "sessionId": "s1", "domain": "d"}"#, Some("s1")),
            (br#"{"params": {"sessionId": "inner", "a": [1, {"b": "}"}]}, "sessionId": "outer"}"#, Some("outer")),
            (br#"{"x": "a\"sessionId\": \"no", "sessionId": "yes"}"#, Some("yes")),
            (br#"{"sessionId": "a\u00e9b"}"#, Some("a\u{e9}b")),
            (br#"  {"n": -1.5e3, "b": true, "z": null, "sessionId":"s"}"#, Some("s")),
            (br#"{"session\u0049d": "escaped-key"}"#, Some("escaped-key")),
            (br#"{"timestamp": "t"}"#, None),
            (br#"not json"#, None),
        ];
        for (line, want) in cases {
            assert_eq!(
                session_of(line).as_deref(),
                *want,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn chunks_split_at_line_ends_and_count_lines() {
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
        let mut expected_line = 0;
        while let Some(c) = chunks.next_chunk().unwrap() {
            assert_eq!(c.first_line, expected_line);
            expected_line += lines(&c).count() as u64;
            assert!(c.ends_with(b"\n") || c.ends_with(b"last"));
            all.extend_from_slice(&c);
        }
        assert_eq!(all, text.as_bytes());
        assert_eq!(chunks.lines, 200_001);
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
            while let Some(c) = chunks.next_chunk().unwrap() {
                assert!(c.ends_with(b"\n"));
                all.extend_from_slice(&c);
                count += 1;
                chunks.recycle(c);
            }
            (all, count, chunks.lines)
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
