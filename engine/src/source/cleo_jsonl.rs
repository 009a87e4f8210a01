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
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::common::{
    Input, Place, ReadOptions, SessionFilter, SessionGroups, SourceError, SourceRead, SourceWarning,
};
use super::format::{Evidence, Sniff, SourceFormat};
use super::lenient::{Duration, ExitCode, FromJson, Lenient};
use super::stream::{Batches, Item, Progress, SessionTable, Stream};
use crate::entry::{Entry, MetaValue, Metadata, Outcome, Params, Text};
use crate::pack::reads::FieldsRead;
use crate::time::parse_timestamp;

/// The fields every entry has are typed; the optional ones are [`Lenient`], checked only
/// when the pack reads them.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEntry {
    timestamp: Text,
    session_id: Text,
    domain: Text,
    operation: Text,
    #[serde(default)]
    params: Lenient<Params>,
    result: RawOutcome,
    #[serde(default)]
    metadata: Lenient<RawMetadata>,
    #[serde(default)]
    error: Lenient<Text>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawOutcome {
    success: bool,
    #[serde(default)]
    exit_code: Lenient<ExitCode>,
    #[serde(default)]
    duration: Lenient<Duration>,
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

impl<'de> FromJson<'de> for RawMetadata {
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        RawMetadata::deserialize(MapAccessDeserializer::new(map)).map(Some)
    }
}

/// A CLEO audit log: one `AuditEntry` per line. An empty input is an empty audit log.
#[derive(Debug, Clone, Copy, Default)]
pub struct CleoJsonl;

impl SourceFormat for CleoJsonl {
    fn name(&self) -> &str {
        "cleo-jsonl"
    }

    fn noun(&self) -> &str {
        "a CLEO audit log"
    }

    fn about(&self) -> &str {
        "A CLEO audit log, one entry per line"
    }

    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        match evidence {
            Evidence::Object(map)
                if map.contains_key("domain") || map.contains_key("operation") =>
            {
                Sniff::Likely
            }
            Evidence::Empty => Sniff::Likely,
            _ => Sniff::No,
        }
    }

    fn read(
        &self,
        input: &Input<'_>,
        filter: &SessionFilter,
        options: &ReadOptions,
    ) -> Result<SourceRead, SourceError> {
        let chunks = match input {
            Input::File(path) => Chunks::open(path, None)?,
            Input::Bytes { name, bytes } => Chunks::new(Box::new(*bytes), name, None),
        };
        read_chunks(chunks, input.name(), filter, options)
    }

    fn streams(&self) -> bool {
        true
    }

    fn open_stream<'p>(
        &self,
        path: &Path,
        filter: &SessionFilter,
        options: &ReadOptions,
        progress: Option<Progress<'p>>,
    ) -> Result<Option<Stream<'p>>, SourceError> {
        let (table, batches) = open_stream(path, filter, options, progress)?;
        Ok(Some(Stream::new(table, batches, false)))
    }
}

/// Bytes read at a time: enough lines to keep both cores busy, small next to the file.
const CHUNK_BYTES: usize = 4 << 20;
/// Lines per parallel task within a chunk.
const PIECE_BYTES: usize = 256 << 10;

/// Reads a JSONL audit log. A session's entries keep file order; sessions come out in the
/// order of their first entry. A malformed line is an error naming its line, even in a
/// session that was not asked for (a log that is partly unreadable should not grade
/// quietly), unless `options` skip bad lines; a final line without a newline that is not
/// JSON is a line still being written, and is skipped with a warning.
fn read_chunks(
    mut chunks: Chunks<'_>,
    path: &Path,
    filter: &SessionFilter,
    options: &ReadOptions,
) -> Result<SourceRead, SourceError> {
    let mut groups = SessionGroups::default();
    let mut warnings = Vec::new();
    let mut skipped_lines = 0;
    while let Some(chunk) = chunks.next_chunk()? {
        let parsed = parse_chunk(&chunk, options, |e: Entry| {
            filter.wants(&e.session_id).then_some(e)
        });
        let (parsed, skipped) = unwrap_pieces(parsed, &chunk, path)?;
        chunks.recycle(chunk);
        parsed.into_iter().flatten().for_each(|e| groups.push(e));
        for line in skipped {
            skipped_lines += 1;
            match &line.session {
                Some(id) if !filter.wants(id) => {}
                id => groups.skipped(id.as_deref()),
            }
            warnings.push(line.warning(path));
        }
    }
    let (sessions, skipped_unattributed) = groups.into_sessions();
    Ok(SourceRead {
        sessions,
        warnings,
        skipped_lines,
        skipped_unattributed,
    })
}

/// First pass of a streamed read: the session table. Then the batches of the second pass.
fn open_stream<'p>(
    path: &Path,
    filter: &SessionFilter,
    options: &ReadOptions,
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
            || -> Vec<SessionCounts<'_>> {
                split_lines(&chunk)
                    .par_iter()
                    .map(|piece| count_sessions(piece))
                    .collect()
            },
        );
        for (counts, unreadable) in pieces {
            for (id, n) in counts {
                if filter.wants(&id) {
                    table.add(&id, n);
                }
            }
            table.unattributed += unreadable;
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
        options: *options,
        path: path.to_owned(),
        size,
        progress,
        warnings: Vec::new(),
    };
    Ok((table, batches))
}

struct JsonlBatches<'p> {
    chunks: Chunks<'static>,
    filter: SessionFilter,
    options: ReadOptions,
    path: PathBuf,
    size: u64,
    progress: Option<Progress<'p>>,
    /// The lines skipped so far.
    warnings: Vec<SourceWarning>,
}

impl Batches for JsonlBatches<'_> {
    fn next_batch(&mut self, table: &SessionTable) -> Result<Option<Vec<Vec<Item>>>, SourceError> {
        let Some(chunk) = self.chunks.next_chunk()? else {
            return Ok(None);
        };
        let filter = &self.filter;
        // A wanted session the first pass did not see gets `u32::MAX`: the log changed.
        let parsed = parse_chunk(&chunk, &self.options, |entry: Entry| {
            if !filter.wants(&entry.session_id) {
                return None;
            }
            let session = table.lookup(&entry.session_id).unwrap_or(u32::MAX);
            Some(Item {
                session,
                entry: Some(entry),
            })
        });
        let (mut items, skipped) = unwrap_pieces(parsed, &chunk, &self.path)?;
        self.chunks.recycle(chunk);
        // A skipped line still counts toward its session, which the first pass counted it in.
        let mut lost = Vec::new();
        for line in skipped {
            if let Some(id) = line.session.as_deref().filter(|id| filter.wants(id)) {
                let session = table.lookup(id).unwrap_or(u32::MAX);
                lost.push(Item {
                    session,
                    entry: None,
                });
            }
            self.warnings.push(line.warning(&self.path));
        }
        items.push(lost);
        if items.iter().flatten().any(|i| i.session == u32::MAX) {
            return Err(self.changed());
        }
        if let Some(p) = self.progress {
            p(self.size + self.chunks.consumed, 2 * self.size);
        }
        Ok(Some(items))
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn changed(&self) -> SourceError {
        SourceError::Io {
            path: self.path.clone(),
            source: std::io::Error::other("the file changed while it was read; run again"),
        }
    }

    fn take_warnings(&mut self) -> Vec<SourceWarning> {
        std::mem::take(&mut self.warnings)
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

/// A file (or bytes in memory) read as chunks of whole lines.
struct Chunks<'r> {
    file: Box<dyn Read + Send + 'r>,
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

impl<'r> Chunks<'r> {
    fn open(path: &Path, limit: Option<u64>) -> Result<Chunks<'static>, SourceError> {
        let file = File::open(path).map_err(|source| SourceError::Io {
            path: path.to_owned(),
            source,
        })?;
        Ok(Chunks::new(Box::new(file), path, limit))
    }

    fn new(file: Box<dyn Read + Send + 'r>, path: &Path, limit: Option<u64>) -> Chunks<'r> {
        Chunks {
            file,
            path: path.to_owned(),
            carry: Vec::new(),
            left: limit,
            consumed: 0,
            lines: 0,
            eof: false,
            spare: None,
        }
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

/// A malformed line of a piece: its index within the piece, why, and the session it names.
struct BadLine {
    index: usize,
    error: LineError,
    /// Whether the line ends the file without a newline.
    last: bool,
    session: Option<String>,
}

/// What a piece of a chunk parsed into: the kept entries, the lines skipped, and the bad
/// line that stops the read (bad lines not being skipped).
struct Piece<T> {
    kept: Vec<T>,
    skipped: Vec<BadLine>,
    fatal: Option<BadLine>,
}

/// A skipped line, numbered in the file.
pub(crate) struct SkippedLine {
    pub line: u64,
    pub session: Option<String>,
    bad: BadLine,
}

impl SkippedLine {
    fn warning(&self, path: &Path) -> SourceWarning {
        let what = if self.bad.last {
            "skipped the last line, which has no newline and is not JSON (a log still being written?)"
        } else {
            "skipped a malformed line"
        };
        SourceWarning {
            path: path.to_owned(),
            place: Place::Line(self.line),
            message: format!("{what}: {}", self.bad.error.message),
        }
    }
}

/// Parses the lines of a chunk in parallel; `keep` decides which entries to keep and turns
/// them into what the caller collects (built in place, so entries are moved once).
fn parse_chunk<T, F>(chunk: &Chunk, options: &ReadOptions, keep: F) -> Vec<(usize, Piece<T>)>
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
            let mut skipped = Vec::new();
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
                let entry = match parse_line(line, line_text, options.checked) {
                    Ok(e) => e,
                    Err(error) => {
                        // Only the file's last line can lack its newline: chunks end at one.
                        let last = line.last() != Some(&b'\n');
                        let bad = BadLine {
                            index: i,
                            last,
                            session: session_of(line).map(Cow::into_owned),
                            error,
                        };
                        if options.skip_bad_lines || (last && bad.error.not_json) {
                            skipped.push(bad);
                            continue;
                        }
                        return (
                            offset,
                            Piece {
                                kept,
                                skipped,
                                fatal: Some(bad),
                            },
                        );
                    }
                };
                if let Some(t) = keep(entry) {
                    kept.push(t);
                }
            }
            (
                offset,
                Piece {
                    kept,
                    skipped,
                    fatal: None,
                },
            )
        })
        .collect()
}

/// The kept entries of a parsed chunk, piece by piece in file order, and the lines it
/// skipped; or the error of its first bad line that was not skipped.
fn unwrap_pieces<T>(
    parsed: Vec<(usize, Piece<T>)>,
    chunk: &Chunk,
    path: &Path,
) -> Result<(Vec<Vec<T>>, Vec<SkippedLine>), SourceError> {
    let mut out = Vec::with_capacity(parsed.len());
    let mut skipped = Vec::new();
    for (offset, piece) in parsed {
        let line_of = |index: usize| {
            let before = memchr::memchr_iter(b'\n', &chunk[..offset]).count() as u64;
            chunk.first_line + before + index as u64 + 1
        };
        if let Some(bad) = piece.fatal {
            return Err(SourceError::MalformedLine {
                path: path.to_owned(),
                line: line_of(bad.index),
                message: bad.error.message.clone(),
            });
        }
        out.push(piece.kept);
        skipped.extend(piece.skipped.into_iter().map(|bad| SkippedLine {
            line: line_of(bad.index),
            session: bad.session.clone(),
            bad,
        }));
    }
    Ok((out, skipped))
}

/// The sessions of some lines with their number of lines, in order of first line, and the
/// number of lines whose session cannot be read.
type SessionCounts<'a> = (Vec<(Cow<'a, str>, u32)>, u64);

/// The sessions of a piece's lines with their number of lines, in order of first line, and
/// the number of lines whose session cannot be read (the second pass reports or skips them).
fn count_sessions(piece: &[u8]) -> SessionCounts<'_> {
    let mut out: Vec<(Cow<'_, str>, u32)> = Vec::new();
    let mut unreadable = 0;
    let mut index: FxHashMap<Cow<'_, str>, usize> = FxHashMap::default();
    for line in lines(piece) {
        if is_blank(line) {
            continue;
        }
        let Some(id) = session_of(line) else {
            unreadable += 1;
            continue;
        };
        match index.get(&id) {
            Some(&i) => out[i].1 += 1,
            None => {
                index.insert(id.clone(), out.len());
                out.push((id, 1));
            }
        }
    }
    (out, unreadable)
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

/// Why a line is not an entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LineError {
    pub message: String,
    /// Not JSON at all (as opposed to JSON that is no entry): a line still being written.
    pub not_json: bool,
}

impl From<String> for LineError {
    fn from(message: String) -> Self {
        LineError {
            message,
            not_json: false,
        }
    }
}

/// An optional field's value; one of the wrong type is an error when the pack reads the
/// field (`read`) and is left out when it does not.
fn optional<T>(
    value: Lenient<T>,
    read: bool,
    name: &str,
    wanted: &str,
) -> Result<Option<T>, LineError> {
    match value {
        Lenient::Value(v) => Ok(Some(v)),
        Lenient::Null => Ok(None),
        Lenient::Wrong(found) if read => {
            Err(format!("field `{name}` must be {wanted}, not {found}").into())
        }
        Lenient::Wrong(_) => Ok(None),
    }
}

/// Parses a line; `text` is the same line when it is known to be valid UTF-8. Optional
/// fields of the wrong type are refused only if `reads` names them.
pub(crate) fn parse_line(
    line: &[u8],
    text: Option<&str>,
    reads: FieldsRead,
) -> Result<Entry, LineError> {
    let raw: RawEntry = match text {
        Some(text) => serde_json::from_str(text),
        None => serde_json::from_slice(line),
    }
    .map_err(|e| LineError {
        not_json: e.is_syntax() || e.is_eof(),
        message: describe_json_error(e),
    })?;
    let instant = parse_timestamp(&raw.timestamp).map_err(|e| format!("field `timestamp`: {e}"))?;
    let read = |field| reads.contains(field);
    let exit_code = optional(
        raw.result.exit_code,
        read(FieldsRead::EXIT_CODE),
        "result.exitCode",
        "an integer",
    )?
    .map_or(if raw.result.success { 0 } else { 1 }, |ExitCode(c)| c);
    let duration = optional(
        raw.result.duration,
        read(FieldsRead::DURATION),
        "result.duration",
        "a number",
    )?
    .map_or(0.0, |Duration(d)| d);
    let params = optional(raw.params, read(FieldsRead::PARAMS), "params", "an object")?;
    let metadata = optional(
        raw.metadata,
        read(FieldsRead::METADATA),
        "metadata",
        "an object",
    )?;
    let error = optional(raw.error, read(FieldsRead::ERROR), "error", "a string")?;
    Ok(Entry {
        timestamp: raw.timestamp,
        instant,
        session_id: raw.session_id,
        domain: raw.domain,
        operation: raw.operation,
        params: params.unwrap_or_default(),
        result: Outcome {
            success: raw.result.success,
            exit_code,
            duration,
        },
        metadata: match metadata {
            Some(RawMetadata(m)) => m,
            None => Metadata::from_map(Map::new(), "mcp"),
        },
        error,
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
        let err = parse_line(br#"{"timestamp":"2026-03-01T00:00:00Z","domain":"tasks","operation":"find","result":{"success":true}}"#, None, FieldsRead::ALL)
            .unwrap_err();
        assert!(
            err.message.contains("missing field `sessionId`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn defaults_follow_cleo() {
        let e = parse_line(br#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"tasks","operation":"find","result":{"success":false}}"#, None, FieldsRead::ALL)
            .unwrap();
        assert_eq!(e.result.exit_code, 1);
        assert_eq!(e.metadata.source, MetaValue::from("mcp"));
        assert!(e.params.is_empty());
    }

    #[test]
    fn metadata_is_read_as_from_map_reads_it() {
        let line = br#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"d","operation":"o","result":{"success":true},"metadata":{"source":null,"taskId":"T1","x":{"y":1},"role":null,"gateway":"a","gateway":"query","userId":7}}"#;
        let e = parse_line(line, None, FieldsRead::ALL).unwrap();
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
