//! Grading a whole source with memory bounded by the sessions open at once, not by the file.
//!
//! Sessions interleave in a source, so a session is known to be complete only once its last
//! entry has been read. Two passes make that knowable: the first ([`SessionTable`]) reads only
//! each entry's session id and counts the entries of every session; the second parses entries
//! in parallel batches and hands a session to the caller's function the moment its count is
//! reached, while the next batch is being read. Results come back in the order of each
//! session's first entry, as a whole read orders them.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::common::{SourceError, SourceWarning};
use crate::entry::{Entry, Session};

/// Why [`map_sessions`](super::map_sessions) stopped.
#[derive(Debug, thiserror::Error)]
pub enum StreamError<E> {
    /// The source could not be read.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The caller's function failed for a session.
    #[error("{0}")]
    Session(E),
}

/// How far a run is, for a progress bar: `done` of `total` units (bytes or rows, both passes).
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// Every session of the source (in order of first entry) with its number of entries.
#[derive(Debug, Default)]
pub(crate) struct SessionTable {
    pub ids: Vec<String>,
    pub counts: Vec<u32>,
    pub index: FxHashMap<String, u32>,
    /// Lines whose session could not be read: if they are skipped, any session may have
    /// lost them.
    pub unattributed: u64,
}

impl SessionTable {
    /// Adds `n` entries of the session `id`, registering it if it is new.
    pub fn add(&mut self, id: &str, n: u32) {
        match self.index.get(id) {
            Some(&i) => self.counts[i as usize] += n,
            None => {
                self.index.insert(id.to_owned(), self.ids.len() as u32);
                self.ids.push(id.to_owned());
                self.counts.push(n);
            }
        }
    }

    pub fn lookup(&self, id: &str) -> Option<u32> {
        self.index.get(id).copied()
    }
}

/// An entry of a batch, with the session it belongs to (an index into the [`SessionTable`]);
/// no entry for a line of that session that was skipped.
pub(crate) struct Item {
    pub session: u32,
    pub entry: Option<Entry>,
}

/// A source read in batches after its [`SessionTable`] is known.
pub(crate) trait Batches: Send {
    /// The next batch of wanted entries in source order (in pieces, to move entries less),
    /// or `None` at the end.
    fn next_batch(&mut self, table: &SessionTable) -> Result<Option<Vec<Vec<Item>>>, SourceError>;
    /// An error for a source whose content changed between the passes.
    fn changed(&self) -> SourceError;
    /// What was skipped since the last call.
    fn take_warnings(&mut self) -> Vec<SourceWarning> {
        Vec::new()
    }
}

/// What [`map_sessions`](super::map_sessions) made of a source: a result per session in the order of each
/// session's first entry, and what was skipped while reading.
#[derive(Debug)]
pub struct Mapped<T> {
    /// One result per session read.
    pub results: Vec<T>,
    /// What was skipped or guessed while reading.
    pub warnings: Vec<SourceWarning>,
    /// Malformed lines skipped (each also a warning).
    pub skipped_lines: u64,
}

/// A source opened for a streamed read: the first pass's session table, and the batches
/// of the second pass. Built by a format's [`open_stream`](super::SourceFormat::open_stream).
pub struct Stream<'p> {
    pub(crate) table: SessionTable,
    pub(crate) batches: Box<dyn Batches + 'p>,
    /// Whether a session's entries are put in instant order (ties in source order) before
    /// it is handed on, as the whole read of the format orders them.
    pub(crate) sort_by_instant: bool,
}

impl<'p> Stream<'p> {
    pub(crate) fn new(
        table: SessionTable,
        batches: impl Batches + 'p,
        sort_by_instant: bool,
    ) -> Self {
        Stream {
            table,
            batches: Box::new(batches),
            sort_by_instant,
        }
    }

    /// Calls `f` on every session, in parallel, as soon as it is complete; results in the
    /// order of each session's first entry. A source error wins over an error of `f`.
    pub(crate) fn map<T, E, F>(self, f: &F) -> Result<Mapped<T>, StreamError<E>>
    where
        T: Send,
        E: Send,
        F: Fn(Session) -> Result<T, E> + Sync,
    {
        drive(self.table, self.batches, self.sort_by_instant, f)
    }
}

fn drive<T, E, F>(
    table: SessionTable,
    mut batches: Box<dyn Batches + '_>,
    sort_by_instant: bool,
    f: &F,
) -> Result<Mapped<T>, StreamError<E>>
where
    T: Send,
    E: Send,
    F: Fn(Session) -> Result<T, E> + Sync,
{
    let n = table.ids.len();
    let mut remaining = table.counts.clone();
    let mut open: Vec<Vec<Entry>> = (0..n).map(|_| Vec::new()).collect();
    // Lines skipped per session; a line of no known session may have been any session's.
    let mut skipped: Vec<u64> = vec![table.unattributed; n];
    let mut warnings = Vec::new();
    let mut results: Vec<Option<T>> = (0..n).map(|_| None).collect();
    let mut first_error: Option<(usize, E)> = None;

    let grade = |ready: Vec<(usize, Session)>| -> Vec<(usize, Result<T, E>)> {
        ready
            .into_par_iter()
            .map(|(order, mut session)| {
                if sort_by_instant {
                    // Instant order, ties in source order (the sort is stable).
                    session.entries.sort_by_key(|e| e.instant);
                }
                (order, f(session))
            })
            .collect()
    };
    let mut keep = |graded: Vec<(usize, Result<T, E>)>, results: &mut Vec<Option<T>>| {
        for (order, outcome) in graded {
            match outcome {
                Ok(t) => results[order] = Some(t),
                Err(e) => {
                    if first_error.as_ref().is_none_or(|(o, _)| order < *o) {
                        first_error = Some((order, e));
                    }
                }
            }
        }
    };

    // Hands each entry of a batch to its session; `None` if a session got more entries than
    // the first pass counted (the source changed).
    let distribute = |batch: Vec<Vec<Item>>,
                      open: &mut Vec<Vec<Entry>>,
                      remaining: &mut Vec<u32>,
                      skipped: &mut Vec<u64>|
     -> Option<Vec<(usize, Session)>> {
        let mut ready = Vec::new();
        for item in batch.into_iter().flatten() {
            let s = item.session as usize;
            if remaining[s] == 0 {
                return None;
            }
            match item.entry {
                Some(entry) => {
                    if open[s].capacity() == 0 {
                        // The session's size is known: no regrowth, no moving entries again.
                        open[s].reserve_exact(remaining[s] as usize);
                    }
                    open[s].push(entry);
                }
                None => skipped[s] += 1,
            }
            remaining[s] -= 1;
            if remaining[s] == 0 {
                let entries = std::mem::take(&mut open[s]);
                ready.push((
                    s,
                    Session {
                        id: table.ids[s].clone(),
                        entries,
                        skipped_lines: skipped[s],
                    },
                ));
            }
        }
        Some(ready)
    };

    // A pipeline: while batch k+1 is read and parsed, batch k is handed to its sessions and
    // the sessions it completes are graded, so no step waits on the one thread.
    let mut parsed: Vec<Vec<Item>> = Vec::new();
    loop {
        let previous = std::mem::take(&mut parsed);
        let (batch, graded) = rayon::join(
            || batches.next_batch(&table),
            || distribute(previous, &mut open, &mut remaining, &mut skipped).map(&grade),
        );
        let Some(graded) = graded else {
            return Err(batches.changed().into());
        };
        keep(graded, &mut results);
        warnings.extend(batches.take_warnings());
        match batch? {
            Some(batch) => parsed = batch,
            None => break,
        }
    }
    // Sessions the second pass found fewer entries of than the first (a source that shrank).
    let mut ready = Vec::new();
    for (s, entries) in open.into_iter().enumerate() {
        if !entries.is_empty() {
            ready.push((
                s,
                Session {
                    id: table.ids[s].clone(),
                    entries,
                    skipped_lines: skipped[s],
                },
            ));
        }
    }
    let graded = grade(ready);
    keep(graded, &mut results);
    if let Some((_, e)) = first_error {
        return Err(StreamError::Session(e));
    }
    Ok(Mapped {
        results: results.into_iter().flatten().collect(),
        skipped_lines: warnings.len() as u64,
        warnings,
    })
}
