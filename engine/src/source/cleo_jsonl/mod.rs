//! JSONL audit logs: one CLEO `AuditEntry` per line, sessions possibly interleaved.
//!
//! The file is read in chunks of whole lines, and each chunk is parsed in parallel into
//! typed entries (no generic JSON tree except for `params` and unknown metadata keys): a line
//! in the shape CLEO writes by a reader of its own ([`fast`]), any other by serde.
//! Grading a whole log streams in two passes (see [`super::stream`]): the first pass only
//! finds each line's `sessionId`, mostly without parsing the rest of the line.
//! A line that repeats a field keeps its last value, as CLEO's grader does ([`repeated`]).

mod chunks;
mod fast;
mod raw;
mod repeated;
mod skim;

#[cfg(test)]
pub(super) use fast::projected;
#[cfg(feature = "fuzzing")]
pub(crate) use fast::projection_agrees_with_serde;
#[cfg(feature = "fuzzing")]
pub(crate) use fast::{agrees_with_serde, params_agree_with_serde};
pub(super) use fast::{params_document, Kept, KeptParams};
#[cfg(feature = "fuzzing")]
pub(crate) use skim::skim_agrees_with_parse;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::de::IgnoredAny;
use serde_json::Map;

use chunks::{is_blank, lines, split_lines, Chunk, Chunks};
use raw::{RawEntry, RawMetadata};
use skim::{count_sessions, session_of, SessionCounts};

use super::common::{
    not_an_object, Input, Place, ReadOptions, SessionFilter, SessionGroups, SourceError,
    SourceRead, SourceWarning,
};
use super::format::{Evidence, Sniff, SourceFormat};
use super::lenient::{Duration, ExitCode, Lenient};
use super::stream::{Batch, Batches, Progress, SessionTable, Stream};
use crate::entry::{Entry, Metadata, Origin, OriginKind, Outcome, SourceFile};
use crate::field::FieldsRead;
use crate::time::parse_timestamp;

/// A CLEO audit log: one `AuditEntry` per line. An empty input is an empty audit log.
#[derive(Debug, Clone, Copy, Default)]
pub struct CleoJsonl;

impl SourceFormat for CleoJsonl {
    fn file_extensions(&self) -> &[&str] {
        &["jsonl"]
    }

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
            // Every audit entry has a `domain`; an `operation` alone is CLEO's only when the
            // object is not a typed record of another format (Claude Code's `queue-operation`
            // records have an `operation` too).
            Evidence::Object(map)
                if map.contains_key("domain")
                    || (map.contains_key("operation")
                        && !map.get("type").is_some_and(serde_json::Value::is_string)) =>
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
        // A log's entries keep the order they were written in.
        Ok(Some(Stream::new(table, batches, None)))
    }
}

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
    let mut notes = Notes::default();
    let file = SourceFile::named(path);
    let mut lines = 0;
    while let Some(chunk) = chunks.next_chunk().map_err(|e| e.named(path, lines))? {
        let parsed = parse_chunk(&chunk, &mut lines, options, file, |e: &Entry| {
            filter.wants(&e.session_id).then_some(())
        });
        let (parsed, skipped) = unwrap_pieces(parsed, path, &mut notes)?;
        chunks.recycle(chunk);
        for (entries, _) in parsed {
            entries.into_iter().for_each(|e| groups.push(e));
        }
        for line in skipped {
            skipped_lines += 1;
            match &line.session {
                Some(id) if !filter.wants(id) => {}
                id => groups.skipped(id.as_deref()),
            }
            warnings.push(line.warning(path));
        }
    }
    warnings.extend(notes.warnings(path));
    let (sessions, skipped_unattributed) = groups.into_sessions();
    Ok(SourceRead {
        sessions,
        warnings,
        skipped_lines,
        skipped_unattributed,
    })
}

/// Adds the wanted sessions of a chunk's counts to the table, in order of first line.
fn add_counts(table: &mut SessionTable, pieces: &[SessionCounts], filter: &SessionFilter) {
    for piece in pieces {
        for (id, n) in piece.sessions() {
            if filter.wants(id) {
                table.add(id, n);
            }
        }
    }
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
    let mut lines = 0;
    let mut next = chunks.next_chunk().map_err(|e| e.named(path, lines))?;
    // The chunk before's counts, added to the table while this chunk is counted and the
    // next one read: added after counting, they were a step on one thread alone, 4% of the
    // run's CPU where every session spans the log (each chunk then names 13,000 sessions).
    let mut counted: Vec<SessionCounts> = Vec::new();
    while let Some(chunk) = next {
        let ((read, pieces), ()) = rayon::join(
            || {
                rayon::join(
                    || chunks.next_chunk(),
                    || -> Vec<SessionCounts> {
                        split_lines(&chunk)
                            .par_iter()
                            .map(|piece| count_sessions(piece))
                            .collect()
                    },
                )
            },
            || add_counts(&mut table, &counted, filter),
        );
        for piece in &pieces {
            lines += piece.lines;
            table.unattributed += piece.unreadable;
        }
        counted = pieces;
        next = read.map_err(|e| e.named(path, lines))?;
        chunks.recycle(chunk);
        if let Some(p) = progress {
            p(chunks.consumed, 2 * size);
        }
    }
    add_counts(&mut table, &counted, filter);
    // The second pass reads exactly the bytes the first one counted, even if the log grows.
    let batches = JsonlBatches {
        chunks: Chunks::open(path, Some(chunks.consumed))?,
        filter: filter.clone(),
        options: options.clone(),
        path: path.to_owned(),
        file: SourceFile::named(path),
        size,
        progress,
        lines: 0,
        warnings: Vec::new(),
        skipped_lines: 0,
        notes: Notes::default(),
    };
    Ok((table, batches))
}

struct JsonlBatches<'p> {
    chunks: Chunks<'static>,
    filter: SessionFilter,
    options: ReadOptions,
    path: PathBuf,
    /// The log, as entries' origins name it.
    file: SourceFile,
    size: u64,
    progress: Option<Progress<'p>>,
    /// The lines of the chunks read so far.
    lines: u64,
    /// What was skipped or guessed since the last batch.
    warnings: Vec<SourceWarning>,
    /// The lines skipped so far.
    skipped_lines: u64,
    /// What the lines so far noticed (a repeated field, a lone surrogate), said at the end.
    notes: Notes,
}

impl Batches for JsonlBatches<'_> {
    fn next_batch(&mut self, table: &SessionTable) -> Result<Option<Batch>, SourceError> {
        let next = self.chunks.next_chunk();
        let Some(chunk) = next.map_err(|e| e.named(&self.path, self.lines))? else {
            let notes = std::mem::take(&mut self.notes);
            self.warnings.extend(notes.warnings(&self.path));
            return Ok(None);
        };
        let filter = &self.filter;
        // A wanted session the first pass did not see gets `u32::MAX`: the log changed.
        let parsed = parse_chunk(
            &chunk,
            &mut self.lines,
            &self.options,
            self.file,
            |entry: &Entry| {
                if !filter.wants(&entry.session_id) {
                    return None;
                }
                Some(table.lookup(&entry.session_id).unwrap_or(u32::MAX))
            },
        );
        let (pieces, skipped) = unwrap_pieces(parsed, &self.path, &mut self.notes)?;
        self.chunks.recycle(chunk);
        // A skipped line still counts toward its session, which the first pass counted it in.
        let mut lost = Vec::new();
        for line in skipped {
            if let Some(id) = line.session.as_deref().filter(|id| filter.wants(id)) {
                lost.push(table.lookup(id).unwrap_or(u32::MAX));
            }
            self.skipped_lines += 1;
            self.warnings.push(line.warning(&self.path));
        }
        let batch = Batch { pieces, lost };
        if batch.sessions().any(|s| s == u32::MAX) {
            return Err(self.changed());
        }
        if let Some(p) = self.progress {
            p(self.size + self.chunks.consumed, 2 * self.size);
        }
        Ok(Some(batch))
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

    fn skipped_lines(&self) -> u64 {
        self.skipped_lines
    }
}

/// A malformed line of a piece: its index within the piece, why, and the session it names.
struct BadLine {
    index: usize,
    error: LineError,
    /// Whether the line ends the file without a newline.
    last: bool,
    session: Option<String>,
}

/// What a piece of a chunk parsed into: the kept entries and what was kept of each (their
/// sessions' numbers, say), the lines skipped, the bad line that stops the read (bad lines
/// not being skipped), and the lines that repeat a field (the first by its index).
struct Piece<K> {
    kept: Vec<Entry>,
    keys: Vec<K>,
    skipped: Vec<BadLine>,
    fatal: Option<BadLine>,
    notes: Notes<usize>,
}

/// What reading one line noticed, beside its entry.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct LineNotes {
    /// A field of the entry the line repeats (the last value is read).
    pub repeated: Option<&'static str>,
    /// The line holds half of a UTF-16 surrogate pair (`\ud83d` alone), read as U+FFFD.
    pub lone_surrogate: bool,
}

/// What lines of a log noticed, said once for the run, not line by line: the first line
/// (`P`, its place) that repeats a field, with the field, and how many do; the first that
/// holds a lone surrogate, and how many do.
#[derive(Debug, Clone, PartialEq)]
struct Notes<P = u64> {
    first: Option<(P, &'static str)>,
    lines: u64,
    first_lone: Option<P>,
    lone_lines: u64,
}

impl<P> Default for Notes<P> {
    fn default() -> Self {
        Notes {
            first: None,
            lines: 0,
            first_lone: None,
            lone_lines: 0,
        }
    }
}

impl<P: Copy> Notes<P> {
    fn add(&mut self, at: P, line: LineNotes) {
        if let Some(field) = line.repeated {
            self.first.get_or_insert((at, field));
            self.lines += 1;
        }
        if line.lone_surrogate {
            self.first_lone.get_or_insert(at);
            self.lone_lines += 1;
        }
    }
}

impl Notes {
    /// Adds the notes of a later piece, whose lines come after these.
    fn extend<P>(&mut self, later: Notes<P>, line_of: impl Fn(P) -> u64) {
        if let Some((at, field)) = later.first {
            self.first.get_or_insert((line_of(at), field));
        }
        self.lines += later.lines;
        if let Some(at) = later.first_lone {
            self.first_lone.get_or_insert(line_of(at));
        }
        self.lone_lines += later.lone_lines;
    }

    fn warnings(&self, path: &Path) -> impl Iterator<Item = SourceWarning> + '_ {
        let plural = if self.lines == 1 { "" } else { "s" };
        let repeated = self.first.map(|(line, field)| SourceWarning {
            path: path.to_owned(),
            place: Place::Line(line),
            message: format!(
                "key `{field}` appears more than once; the last value is used, as CLEO's grader does ({} line{plural})",
                self.lines
            ),
        });
        let lone = self.first_lone.map(|line| SourceWarning {
            path: path.to_owned(),
            place: Place::Line(line),
            message: crate::json::lone_surrogates_read(self.lone_lines, "line"),
        });
        repeated.into_iter().chain(lone)
    }
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

/// Parses the lines of a chunk in parallel; `keep` decides which entries to keep and what
/// to keep with each (kept beside the entry, so that an entry is moved once, into its
/// piece). Each piece comes with the number of the file's lines before it; each entry with
/// its line of `file` as its origin. `lines` counts the file's lines before the chunk, and
/// after it on return (up to the bad line that stops the read, if one does).
fn parse_chunk<K, F>(
    chunk: &Chunk,
    lines_before: &mut u64,
    options: &ReadOptions,
    file: SourceFile,
    keep: F,
) -> Vec<(u64, Piece<K>)>
where
    K: Send,
    F: Fn(&Entry) -> Option<K> + Sync,
{
    let pieces = split_lines(chunk);
    let built = fast::Kept::new(&options.kept, options.checked);
    // Each piece is parsed not knowing the lines before it, which only the pieces before it
    // can tell: its entries are numbered from the piece's start, and moved on by the lines
    // before it once every piece has counted its own (which saves a pass over the bytes
    // only to count newlines).
    let mut parsed: Vec<(u64, Piece<K>)> = pieces
        .par_iter()
        .map(|piece| {
            let mut kept = Vec::with_capacity(piece.len() / 200);
            let mut keys = Vec::with_capacity(piece.len() / 200);
            let mut skipped = Vec::new();
            let mut notes = Notes::default();
            // UTF-8 checked once for the piece rather than string by string in the parser;
            // a piece that fails is parsed from bytes, so the bad line is the one named.
            let text = std::str::from_utf8(piece).ok();
            let mut at = 0;
            // Pieces end at a line end, so a piece's lines are its newlines (the file's last
            // line may lack one, and no line follows it).
            let mut count = 0;
            for (i, line) in lines(piece).enumerate() {
                count = i as u64 + 1;
                // Lines start after a `\n`, so they start and end on character boundaries.
                let line_text = text.map(|t| &t[at..at + line.len()]);
                at += line.len();
                if is_blank(line) {
                    continue;
                }
                let mut noticed = LineNotes::default();
                let parsed = parse_line_kept(line, line_text, options.checked, built, &mut noticed);
                notes.add(i, noticed);
                let mut entry = match parsed {
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
                        // The read stops here, so no later line's number is needed.
                        return (
                            count,
                            Piece {
                                kept,
                                keys,
                                skipped,
                                fatal: Some(bad),
                                notes,
                            },
                        );
                    }
                };
                entry.origin = Origin::line(file, i as u64 + 1);
                if let Some(key) = keep(&entry) {
                    kept.push(entry);
                    keys.push(key);
                }
            }
            (
                count,
                Piece {
                    kept,
                    keys,
                    skipped,
                    fatal: None,
                    notes,
                },
            )
        })
        .collect();
    for (lines, _) in &mut parsed {
        let count = *lines;
        *lines = *lines_before;
        *lines_before += count;
    }
    parsed.par_iter_mut().for_each(|(before, piece)| {
        if *before == 0 {
            return;
        }
        for entry in &mut piece.kept {
            // What `Origin::line` refused for the piece's own numbering (a file beyond what
            // an origin can name) it refuses again.
            if let Some(OriginKind::Line(n)) = entry.origin.kind() {
                entry.origin = Origin::line(file, *before + n);
            }
        }
    });
    parsed
}

/// The kept entries of a parsed chunk and what was kept beside them, piece by piece.
type KeptPieces<K> = Vec<(Vec<Entry>, Vec<K>)>;

/// The kept entries of a parsed chunk, piece by piece in file order, and the lines it
/// skipped, its lines that repeat a field added to `repeats`; or the error of its first bad
/// line that was not skipped.
fn unwrap_pieces<K>(
    parsed: Vec<(u64, Piece<K>)>,
    path: &Path,
    notes: &mut Notes,
) -> Result<(KeptPieces<K>, Vec<SkippedLine>), SourceError> {
    let mut out = Vec::with_capacity(parsed.len());
    let mut skipped = Vec::new();
    for (before, piece) in parsed {
        let line_of = |index: usize| before + index as u64 + 1;
        if let Some(bad) = piece.fatal {
            return Err(SourceError::MalformedLine {
                path: path.to_owned(),
                line: line_of(bad.index),
                message: bad.error.message.clone(),
            });
        }
        out.push((piece.kept, piece.keys));
        notes.extend(piece.notes, line_of);
        skipped.extend(piece.skipped.into_iter().map(|bad| SkippedLine {
            line: line_of(bad.index),
            session: bad.session.clone(),
            bad,
        }));
    }
    Ok((out, skipped))
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
/// fields of the wrong type are refused only if `reads` names them. A line that repeats a
/// field is read with the field's last value, and `notes.repeated` set to the field's name;
/// one with a lone surrogate is read with U+FFFD in its place, and `notes.lone_surrogate` set.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn parse_line(
    line: &[u8],
    text: Option<&str>,
    reads: FieldsRead,
    notes: &mut LineNotes,
) -> Result<Entry, LineError> {
    parse_line_kept(line, text, reads, fast::Kept::ALL, notes)
}

/// [`parse_line`], building only what `kept` keeps of a line the fast reader takes (the rest
/// is skipped, checked as JSON); a line it leaves to serde is read whole, as before.
#[inline(always)]
fn parse_line_kept(
    line: &[u8],
    text: Option<&str>,
    reads: FieldsRead,
    kept: fast::Kept<'_>,
    notes: &mut LineNotes,
) -> Result<Entry, LineError> {
    let raw = match text.and_then(|text| fast::read_kept(text, kept)) {
        Some(raw) => raw,
        None => read_raw(line, text, notes)?,
    };
    finish_line(raw, reads)
}

/// A line read by serde, whatever its shape; a repeated field keeps its last value, and
/// `notes.repeated` is set to its name; a lone surrogate is read as U+FFFD.
fn read_raw(line: &[u8], text: Option<&str>, notes: &mut LineNotes) -> Result<RawEntry, LineError> {
    // serde reads a struct from a list of its fields in order too, so a list must be refused
    // before it: CLEO writes each entry as an object, and a list read as one would be graded
    // in a session the first pass (`skim`), which reads objects only, never saw.
    if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(not_an_entry(line));
    }
    by_serde(line, text)
        .or_else(|e| read_keeping_last(line, text, e, &mut notes.repeated))
        .or_else(|err| read_without_lone_surrogates(line, text, notes).unwrap_or(Err(err)))
}

/// A line serde refused, read again with each lone surrogate's escape replaced by U+FFFD's
/// (same length, so columns stay): JSON allows `\ud83d` alone, JavaScript writes one where
/// it cuts a string inside a character, and CLEO's grader reads the line; Rust text cannot
/// hold it. `None` for a line without one.
#[cold]
fn read_without_lone_surrogates(
    line: &[u8],
    text: Option<&str>,
    notes: &mut LineNotes,
) -> Option<Result<RawEntry, LineError>> {
    let fixed = crate::json::lone_surrogates_replaced(line)?;
    // Escapes are ASCII, replaced by ASCII: valid UTF-8 stays so.
    let text = text.and_then(|_| std::str::from_utf8(&fixed).ok());
    let read = read_raw(&fixed, text, notes);
    // A line still refused is told of as refused, not as read with U+FFFD.
    notes.lone_surrogate = read.is_ok();
    Some(read)
}

/// Why a line that does not start as an object is no entry: what JSON value it is, in the
/// words format detection uses, rather than serde's (`invalid length 0, expected struct
/// RawEntry with 8 elements`); or why it is not JSON.
#[cold]
fn not_an_entry(line: &[u8]) -> LineError {
    match serde_json::from_slice::<serde_json::Value>(line) {
        Ok(value) => format!("the line is {}", not_an_object(&value)).into(),
        Err(err) => line_error(&err, line),
    }
}

fn by_serde(line: &[u8], text: Option<&str>) -> Result<RawEntry, serde_json::Error> {
    match text {
        Some(text) => serde_json::from_str(text),
        None => serde_json::from_slice(line),
    }
}

/// A line serde refused with `err`, read again with its repeated fields' earlier values
/// blanked out, if it has any; `err` otherwise.
#[cold]
fn read_keeping_last(
    line: &[u8],
    text: Option<&str>,
    err: serde_json::Error,
    repeated: &mut Option<&'static str>,
) -> Result<RawEntry, LineError> {
    let Some((kept, field)) = repeated::keep_last(line) else {
        // serde meets a repeat before the syntax error of a line cut off, which then
        // would not read as a line still being written.
        let err = match serde_json::from_slice::<IgnoredAny>(line) {
            Err(syntax) if err.to_string().starts_with("duplicate field") => syntax,
            _ => err,
        };
        return Err(line_error(&err, line));
    };
    *repeated = Some(field);
    // Blanking replaced whole characters by spaces: valid UTF-8 stays so.
    let text = text.and_then(|_| std::str::from_utf8(&kept).ok());
    by_serde(&kept, text).map_err(|e| line_error(&e, &kept))
}

fn line_error(err: &serde_json::Error, line: &[u8]) -> LineError {
    LineError {
        not_json: is_not_json(err),
        message: describe_json_error(err, line),
    }
}

/// The entry of a line read, its optional fields checked as `reads` asks.
// Inlined for the reason `fast::read` is.
#[inline(always)]
fn finish_line(raw: RawEntry, reads: FieldsRead) -> Result<Entry, LineError> {
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
        super::lenient::DURATION_WANTED,
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
        origin: Origin::UNKNOWN,
    })
}

/// Whether a line is not JSON at all (a line cut off while it was written, say). A number
/// beyond what a 64-bit float holds (`1e400`) is JSON, which serde_json files under syntax
/// errors: a finished line with one is not taken for a line still being written.
fn is_not_json(err: &serde_json::Error) -> bool {
    (err.is_syntax() || err.is_eof()) && !err.to_string().starts_with("number out of range")
}

/// serde_json's message without its trailing "at line 1 column N", which is misleading
/// for a single line; the column is kept. A line that is not JSON at all says so.
fn describe_json_error(err: &serde_json::Error, line: &[u8]) -> String {
    if !is_not_json(err) && err.is_syntax() {
        return format!(
            "a number at column {} is beyond what a 64-bit float holds (about 1.8e308)",
            err.column()
        );
    }
    let kind = if is_not_json(err) {
        "not valid JSON: "
    } else {
        ""
    };
    format!("{kind}{}", super::common::describe_json_error(err, line))
}

#[cfg(test)]
mod tests;
