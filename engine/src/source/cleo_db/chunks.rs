//! The second pass over `tasks.db`: the session table's `rowid` ranges read in batches of
//! chunks, each chunk's rows mapped to entries on a thread of its own.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;
use rusqlite::Connection;
use rustc_hash::FxHashMap;

use super::{check_layout, column_names, entry_columns, map_row, rowid_name, LoneRows};
use crate::entry::{Entry, SourceFile};
use crate::field::{FieldsRead, Projection};
use crate::source::cleo_jsonl::Kept;
use crate::source::common::{ReadOptions, SourceError, SourceWarning};
use crate::source::readonly_db::{explain, ReadOnlyDb};
use crate::source::stream::{Batch, Batches, Progress, SessionTable};

/// Rows read per batch of the second pass, split among the threads.
pub(super) const BATCH_ROWS: u32 = 1 << 15;

/// Chunks of a batch per thread. One each left a thread idle for nearly half of every batch:
/// whichever thread was grading the batch before took its chunk late, and the other waited
/// for it; with several, the thread free first takes the next.
const CHUNKS_PER_THREAD: u32 = 8;

/// Inclusive `rowid` ranges covering `min..=max` in at most `parts` pieces of equal span.
/// Computed in `i128`: a span reaching `i64::MAX` (where SQLite puts rowids once one row has
/// it) overflows `i64`.
fn split_range(min: i64, max: i64, parts: usize) -> Vec<(i64, i64)> {
    let (min, max) = (i128::from(min), i128::from(max));
    let parts = i128::try_from(parts.max(1)).unwrap_or(1);
    let step = ((max - min + 1).max(1) + parts - 1) / parts;
    let mut ranges = Vec::new();
    let mut lo = min;
    while lo <= max {
        let hi = (lo + step - 1).min(max);
        // Both lie in `min..=max`, so they fit in `i64`.
        if let (Ok(a), Ok(b)) = (i64::try_from(lo), i64::try_from(hi)) {
            ranges.push((a, b));
        }
        lo = hi + 1;
    }
    ranges
}

/// Rows with a session id, `first..=last` by `rowid`, and how many the first pass counted:
/// the second pass reads the same rows in these pieces, so its work follows the rows, however
/// far apart their rowids lie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Chunk {
    first: i64,
    last: i64,
    rows: u32,
}

/// Cuts rows, seen in `rowid` order, into [`Chunk`]s of `size` rows.
struct Chunker {
    size: u32,
    chunks: Vec<Chunk>,
    open: Option<Chunk>,
}

impl Chunker {
    fn new(size: u32) -> Self {
        Chunker {
            size: size.max(1),
            chunks: Vec::new(),
            open: None,
        }
    }

    fn push(&mut self, rowid: i64) {
        let chunk = self.open.get_or_insert(Chunk {
            first: rowid,
            last: rowid,
            rows: 0,
        });
        chunk.last = rowid;
        chunk.rows += 1;
        if chunk.rows >= self.size {
            self.chunks.extend(self.open.take());
        }
    }

    fn finish(mut self) -> Vec<Chunk> {
        self.chunks.extend(self.open.take());
        self.chunks
    }
}

/// What one thread of the first pass found in its `rowid` range: sessions in order of first
/// row with their numbers of rows, and the range's rows cut into chunks.
type Counted = (Vec<(String, u32)>, Vec<Chunk>);

/// First pass of a streamed read: every session and its number of rows, read in parallel
/// `rowid` ranges, and the rows cut into chunks that the second pass's batches read again.
pub(super) fn open_stream<'p>(
    path: &Path,
    options: &ReadOptions,
    progress: Option<Progress<'p>>,
) -> Result<(SessionTable, DbBatches<'p>), SourceError> {
    let sql_err = |source| explain(path, source);
    let db = ReadOnlyDb::new(path)?;
    let conn = db.connect()?;
    check_layout(&conn, path)?;
    let has_actor = column_names(&conn, path)?.iter().any(|c| c == "actor");
    let (min, max): (Option<i64>, Option<i64>) = conn
        // Each in a subquery of its own: SQLite reads one end of the table for a lone
        // `min(rowid)` or `max(rowid)`, but scans every row for both in one select (45 ms of
        // a 1M-row table, before any thread could start).
        .query_row(
            "SELECT (SELECT min(rowid) FROM audit_log), (SELECT max(rowid) FROM audit_log)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(sql_err)?;
    let ranges = match (min, max) {
        (Some(min), Some(max)) => split_range(min, max, rayon::current_num_threads()),
        _ => Vec::new(),
    };
    let threads = rayon::current_num_threads().max(1);
    let mut pool = vec![Mutex::new(conn)];
    for _ in 1..threads {
        pool.push(Mutex::new(db.connect()?));
    }
    let per_batch = u32::try_from(pool.len())
        .unwrap_or(1)
        .max(1)
        .saturating_mul(CHUNKS_PER_THREAD);
    let chunk_rows = BATCH_ROWS / per_batch;

    let parts: Vec<Result<Counted, SourceError>> = ranges
        .into_par_iter()
        .enumerate()
        .map(|(k, (lo, hi))| {
            let conn = pool[k % pool.len()]
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let mut stmt = conn
                .prepare_cached(
                    "SELECT rowid, session_id FROM audit_log WHERE session_id IS NOT NULL \
                     AND rowid BETWEEN ?1 AND ?2 ORDER BY rowid",
                )
                .map_err(sql_err)?;
            let mut rows = stmt.query([lo, hi]).map_err(sql_err)?;
            let mut seen: Vec<(String, u32)> = Vec::new();
            let mut index: FxHashMap<String, usize> = FxHashMap::default();
            let mut chunker = Chunker::new(chunk_rows);
            while let Some(row) = rows.next().map_err(sql_err)? {
                chunker.push(row.get(0).map_err(sql_err)?);
                // A session id that is not text is reported by the second pass.
                let rusqlite::types::ValueRef::Text(id) = row.get_ref(1).map_err(sql_err)? else {
                    continue;
                };
                let Ok(id) = std::str::from_utf8(id) else {
                    continue;
                };
                match index.get(id) {
                    Some(&i) => seen[i].1 += 1,
                    None => {
                        index.insert(id.to_owned(), seen.len());
                        seen.push((id.to_owned(), 1));
                    }
                }
            }
            Ok((seen, chunker.finish()))
        })
        .collect();
    let mut table = SessionTable::default();
    let mut chunks = Vec::new();
    for part in parts {
        let (seen, part_chunks) = part?;
        for (id, n) in seen {
            table.add(&id, n);
        }
        chunks.extend(part_chunks);
    }
    // Each chunk reaches up to the next, so that the second pass reads every rowid between
    // the first row and the last: a row added between two chunks is then seen, and its chunk
    // holds more rows than were counted.
    for k in 1..chunks.len() {
        let next = chunks[k].first;
        chunks[k - 1].last = next.saturating_sub(1);
    }
    if let Some(p) = progress {
        p(1, 2);
    }
    let sql = format!(
        "SELECT {} FROM audit_log WHERE session_id IS NOT NULL AND rowid BETWEEN ?1 AND ?2 ORDER BY rowid",
        entry_columns(has_actor, Kept::new(&options.kept, options.checked))
    );
    let total = chunks.iter().map(|c| u64::from(c.rows)).sum();
    Ok((
        table,
        DbBatches {
            path: path.to_owned(),
            file: SourceFile::named(path),
            checked: options.checked,
            kept: options.kept.clone(),
            pool,
            _db: db,
            sql,
            chunks,
            per_batch: per_batch as usize,
            lone: LoneRows::default(),
            warnings: Vec::new(),
            next: 0,
            done: 0,
            total,
            progress,
        },
    ))
}

pub(super) struct DbBatches<'p> {
    path: PathBuf,
    /// The database, as entries' origins name it.
    file: SourceFile,
    /// The optional values to check ([`ReadOptions::checked`]).
    checked: FieldsRead,
    /// What of each entry to keep ([`ReadOptions::kept`]).
    kept: Projection,
    /// One connection per thread.
    pool: Vec<Mutex<Connection>>,
    /// Keeps a private copy of a WAL database alive while it is read.
    _db: ReadOnlyDb,
    sql: String,
    /// The rows to read, as the first pass counted them.
    chunks: Vec<Chunk>,
    /// Chunks read per batch.
    per_batch: usize,
    /// The rows read so far whose `details_json` held a lone surrogate.
    lone: LoneRows,
    /// Warnings not yet taken.
    warnings: Vec<SourceWarning>,
    /// The first chunk not yet read.
    next: usize,
    /// Rows read, and rows to read in all, for progress.
    done: u64,
    total: u64,
    progress: Option<Progress<'p>>,
}

impl Batches for DbBatches<'_> {
    fn next_batch(&mut self, table: &SessionTable) -> Result<Option<Batch>, SourceError> {
        let rest = self.chunks.get(self.next..).unwrap_or_default();
        let batch = rest.get(..self.per_batch).unwrap_or(rest);
        if batch.is_empty() {
            let lone = std::mem::take(&mut self.lone);
            self.warnings.extend(lone.warning(&self.path));
            return Ok(None);
        }
        self.next += batch.len();
        let path = &self.path;
        let sql_err = |source| explain(path, source);
        type Part = Result<((Vec<Entry>, Vec<u32>), LoneRows), SourceError>;
        let parts: Vec<Part> = batch
            .par_iter()
            .map(|chunk| {
                // A connection per thread: a chunk never waits for another thread's.
                let slot = rayon::current_thread_index().unwrap_or(0);
                let conn = self.pool[slot % self.pool.len()]
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                let mut stmt = conn.prepare_cached(&self.sql).map_err(sql_err)?;
                let mut rows = stmt.query([chunk.first, chunk.last]).map_err(sql_err)?;
                let mut entries = Vec::with_capacity(chunk.rows as usize);
                let mut sessions = Vec::with_capacity(chunk.rows as usize);
                let mut lone = LoneRows::default();
                let read = (self.checked, Kept::new(&self.kept, self.checked));
                while let Some(row) = rows.next().map_err(sql_err)? {
                    let entry =
                        map_row(row, self.file, read, &mut lone).map_err(|(id, message)| {
                            SourceError::BadRow {
                                path: path.clone(),
                                row: id.unwrap_or_else(|| rowid_name(row)),
                                message,
                            }
                        })?;
                    let Some(session) = table.lookup(&entry.session_id) else {
                        return Err(self.changed());
                    };
                    entries.push(entry);
                    sessions.push(session);
                }
                // Rows added or removed in the chunk since the first pass counted them.
                if entries.len() != chunk.rows as usize {
                    return Err(self.changed());
                }
                Ok(((entries, sessions), lone))
            })
            .collect();
        let mut pieces = Vec::with_capacity(parts.len());
        for part in parts {
            let (piece, lone) = part?;
            pieces.push(piece);
            self.lone.extend(lone);
        }
        self.done += batch.iter().map(|c| u64::from(c.rows)).sum::<u64>();
        if let Some(p) = self.progress {
            // Rows: the first pass counted as done.
            let total = self.total.max(1);
            p(total + self.done, 2 * total);
        }
        Ok(Some(Batch {
            pieces,
            lost: Vec::new(),
        }))
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn take_warnings(&mut self) -> Vec<SourceWarning> {
        std::mem::take(&mut self.warnings)
    }

    fn changed(&self) -> SourceError {
        SourceError::NotCleoDb {
            path: self.path.clone(),
            reason: "its `audit_log` table changed while it was read; run again".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_range_covers_every_rowid_once_without_overflow() {
        for (min, max, parts) in [
            (1, 10, 3),
            (5, 5, 4),
            (1, 1_000_000_000_000, 2),
            (1, i64::MAX, 2),
            (i64::MIN, i64::MAX, 3),
            (i64::MAX, i64::MAX, 1),
            (i64::MAX - 2, i64::MAX, 7),
        ] {
            let ranges = split_range(min, max, parts);
            assert!(!ranges.is_empty() && ranges.len() <= parts);
            assert_eq!(ranges[0].0, min);
            assert_eq!(ranges[ranges.len() - 1].1, max);
            for pair in ranges.windows(2) {
                assert!(pair[0].0 <= pair[0].1);
                assert_eq!(pair[0].1.checked_add(1), Some(pair[1].0), "{ranges:?}");
            }
        }
        assert!(split_range(2, 1, 4).is_empty());
    }

    #[test]
    fn chunks_hold_the_rows_counted_whatever_their_rowids() {
        let mut chunker = Chunker::new(2);
        for rowid in [1, 1_000_000_000_000, i64::MAX - 1, i64::MAX, -5] {
            chunker.push(rowid);
        }
        let chunk = |first, last, rows| Chunk { first, last, rows };
        assert_eq!(
            chunker.finish(),
            [
                chunk(1, 1_000_000_000_000, 2),
                chunk(i64::MAX - 1, i64::MAX, 2),
                chunk(-5, -5, 1)
            ]
        );
        assert!(Chunker::new(0).finish().is_empty());
    }
}
