//! Grading a whole source with memory bounded by the sessions open at once, not by the file.
//!
//! Sessions interleave in a source, so a session is known to be complete only once its last
//! entry has been read. Two passes make that knowable: the first ([`SessionTable`]) reads only
//! each entry's session id and counts the entries of every session; the second parses entries
//! in parallel batches and hands a session to the caller's function the moment its count is
//! reached, while the next batch is being read. Results come back in the order of each
//! session's first entry, as a whole read orders them.

use std::collections::VecDeque;
use std::fmt;
use std::hash::BuildHasher;

use hashbrown::hash_table::{Entry, HashTable};
use rayon::prelude::*;
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::collections::hash_map;

use super::common::{SourceError, SourceWarning};
use super::packed::{Dictionary, PackedEntries};
use crate::entry;
use crate::entry::Session;

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
///
/// A run may meet millions of sessions, so a session costs little here: its id is kept
/// once, in one text with the others, and the index holds only its number.
#[derive(Default)]
pub(crate) struct SessionTable {
    /// Every id, one after the other.
    text: String,
    /// Where each id ends in `text`.
    ends: Vec<usize>,
    pub counts: Vec<u32>,
    /// Session numbers, hashed by their id.
    index: HashTable<u32>,
    /// Lines whose session could not be read: if they are skipped, any session may have
    /// lost them.
    pub unattributed: u64,
}

impl fmt::Debug for SessionTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionTable")
            .field("sessions", &self.len())
            .field("unattributed", &self.unattributed)
            .finish()
    }
}

fn hash(id: &str) -> u64 {
    FxBuildHasher.hash_one(id)
}

impl SessionTable {
    /// The number of sessions.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The id of session `i`.
    pub fn id(&self, i: u32) -> &str {
        id_in(&self.text, &self.ends, i)
    }

    /// Adds `n` entries of the session `id`, registering it if it is new.
    pub fn add(&mut self, id: &str, n: u32) {
        let SessionTable {
            text,
            ends,
            counts,
            index,
            ..
        } = self;
        match index.entry(
            hash(id),
            |&i| id_in(text, ends, i) == id,
            |&i| hash(id_in(text, ends, i)),
        ) {
            Entry::Occupied(found) => counts[*found.get() as usize] += n,
            Entry::Vacant(slot) => {
                slot.insert(ends.len() as u32);
                text.push_str(id);
                ends.push(text.len());
                counts.push(n);
            }
        }
    }

    pub fn lookup(&self, id: &str) -> Option<u32> {
        self.index.find(hash(id), |&i| self.id(i) == id).copied()
    }
}

fn id_in<'t>(text: &'t str, ends: &[usize], i: u32) -> &'t str {
    let i = i as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &text[start..ends[i]]
}

/// Wanted entries of a source in source order, each with the session it belongs to (an
/// index into the [`SessionTable`]), in pieces parsed in parallel; and the sessions of the
/// lines skipped, which still count toward them. Entries and their sessions are kept side by
/// side rather than paired, so that an entry is moved from where it was parsed into its
/// piece, and from its piece into its session, and no more.
#[derive(Default)]
pub(crate) struct Batch {
    pub pieces: Vec<(Vec<entry::Entry>, Vec<u32>)>,
    pub lost: Vec<u32>,
}

impl Batch {
    /// Every session number of the batch.
    pub fn sessions(&self) -> impl Iterator<Item = u32> + '_ {
        let kept = self.pieces.iter().flat_map(|(_, sessions)| sessions);
        kept.chain(&self.lost).copied()
    }
}

/// A source read in batches after its [`SessionTable`] is known.
pub(crate) trait Batches: Send {
    /// The next batch, or `None` at the end.
    fn next_batch(&mut self, table: &SessionTable) -> Result<Option<Batch>, SourceError>;
    /// An error for a source whose content changed between the passes.
    fn changed(&self) -> SourceError;
    /// The source's path, for errors.
    fn path(&self) -> &std::path::Path;
    /// What was skipped or guessed since the last call.
    fn take_warnings(&mut self) -> Vec<SourceWarning> {
        Vec::new()
    }
    /// The lines skipped so far; each is one of the warnings, but not every warning is a
    /// skipped line.
    fn skipped_lines(&self) -> u64 {
        0
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

/// What a read that handed its results to a sink
/// ([`Registry::map_sessions_into`](super::Registry::map_sessions_into)) leaves: what was
/// skipped while reading.
#[derive(Debug, Default)]
pub struct Delivered {
    /// What was skipped or guessed while reading.
    pub warnings: Vec<SourceWarning>,
    /// Malformed lines skipped (each also a warning).
    pub skipped_lines: u64,
}

impl Delivered {
    /// The [`Mapped`] of a read whose sink collected `results`.
    pub fn with_results<T>(self, results: Vec<T>) -> Mapped<T> {
        Mapped {
            results,
            warnings: self.warnings,
            skipped_lines: self.skipped_lines,
        }
    }
}

/// A source opened for a streamed read: the first pass's session table, and the batches
/// of the second pass. Built by a format's [`open_stream`](super::SourceFormat::open_stream).
pub struct Stream<'p> {
    pub(crate) table: SessionTable,
    pub(crate) batches: Box<dyn Batches + 'p>,
    /// How the format puts a session's entries in order before it is handed on (as its
    /// whole read orders them), if it does.
    pub(crate) order: Option<Box<dyn SessionOrder + 'p>>,
}

/// How a format orders each session's entries before they are graded, beyond the order they
/// were read in, and what it says of that order once the read is done.
pub(crate) trait SessionOrder: Send + Sync {
    /// Puts the entries of `session`, the `order`-th of the read, in order.
    fn arrange(&self, order: usize, session: &mut Session);
    /// What the read's sessions' order calls for saying, once every session is arranged.
    fn warning(&self, path: &std::path::Path) -> Option<SourceWarning>;
}

impl<'p> Stream<'p> {
    pub(crate) fn new(
        table: SessionTable,
        batches: impl Batches + 'p,
        order: Option<Box<dyn SessionOrder + 'p>>,
    ) -> Self {
        Stream {
            table,
            batches: Box::new(batches),
            order,
        }
    }

    /// Calls `f` on every session, in parallel, as soon as it is complete, and hands the
    /// results to `sink` in the order of each session's first entry, each as soon as every
    /// session before it is done. A source error wins over an error of `f`; either may come
    /// after `sink` was handed earlier results.
    pub(crate) fn map_into<T, E, F>(
        self,
        f: &F,
        sink: &mut dyn FnMut(T),
    ) -> Result<Delivered, StreamError<E>>
    where
        T: Send,
        E: Send,
        F: Fn(Session) -> Result<T, E> + Sync,
    {
        drive(self.table, self.batches, self.order.as_deref(), f, sink)
    }
}

/// Results in the order of each session's first entry, while sessions complete in the order
/// of their last: those that come in order go to the sink at once, and only the ones that
/// wait for an earlier session take a slot.
struct Ordered<'s, T> {
    /// The order of the first session not yet handed on.
    next: usize,
    /// Orders `next..`: `None` while the session is being read, `Some(None)` for one that
    /// failed or was never graded.
    waiting: VecDeque<Option<Option<T>>>,
    sink: &'s mut dyn FnMut(T),
}

impl<'s, T> Ordered<'s, T> {
    fn new(sink: &'s mut dyn FnMut(T)) -> Self {
        Ordered {
            next: 0,
            waiting: VecDeque::new(),
            sink,
        }
    }

    /// Settles the session of order `order` (not settled before) with its result, `None`
    /// when it has none.
    fn settle(&mut self, order: usize, result: Option<T>) {
        let at = order - self.next;
        if at >= self.waiting.len() {
            self.waiting.resize_with(at + 1, || None);
        }
        self.waiting[at] = Some(result);
        while let Some(Some(_)) = self.waiting.front() {
            if let Some(Some(result)) = self.waiting.pop_front() {
                self.next += 1;
                if let Some(result) = result {
                    (self.sink)(result);
                }
            }
        }
    }

    /// Hands on what still waits (after a session that was never settled), in order.
    fn finish(self) {
        for result in self.waiting.into_iter().flatten().flatten() {
            (self.sink)(result);
        }
    }
}

/// Parsed entries that open sessions may hold (as room reserved for them) before later
/// sessions' entries wait packed: about 13 MiB. A log whose sessions overlap little (tens
/// open at once: the bench data holds 20,000 entries at most) never packs; one whose
/// sessions all span the file packs nearly all.
const PARSED_BUDGET: usize = 1 << 15;

/// A session that has had entries and is not complete.
#[derive(Default)]
struct Waiting {
    /// Parsed, when the session opened within the budget.
    parsed: Vec<entry::Entry>,
    /// Packed, when it did not.
    packed: PackedEntries,
}

/// A complete session, with its entries as they waited.
struct Ready {
    order: usize,
    id: String,
    waited: Waiting,
    last: Option<entry::Entry>,
    skipped_lines: u64,
}

impl Ready {
    /// The session, its packed entries unpacked; `None` if they cannot be (a bug).
    fn session(self, dictionary: &Dictionary) -> Option<Session> {
        let Waiting { mut parsed, packed } = self.waited;
        if packed.len() > 0 {
            parsed.reserve_exact(packed.len() as usize + 1);
            packed.unpack(&self.id, dictionary, &mut parsed)?;
        }
        parsed.extend(self.last);
        Some(Session {
            id: self.id,
            entries: parsed,
            skipped_lines: self.skipped_lines,
        })
    }
}

/// The sessions being read, and what they hold.
struct Held {
    open: FxHashMap<u32, Waiting>,
    /// Room for parsed entries reserved by open sessions.
    reserved: usize,
    budget: usize,
    dictionary: Dictionary,
}

impl Held {
    /// Holds the next of `entries`, of session `s`, which has `left` entries still to come
    /// after it. Taken from the iterator rather than by value so that the entry is copied
    /// once, from its piece into its session's storage (by value, it went through the stack
    /// first).
    #[inline(always)]
    fn hold(&mut self, s: u32, entries: &mut std::vec::IntoIter<entry::Entry>, left: u32) {
        let waiting = match self.open.entry(s) {
            hash_map::Entry::Occupied(o) => o.into_mut(),
            hash_map::Entry::Vacant(v) => {
                let mut waiting = Waiting::default();
                let room = left as usize + 1;
                if self.reserved + room <= self.budget {
                    // The session's size is known: no regrowth, no moving entries again.
                    waiting.parsed.reserve_exact(room);
                    self.reserved += waiting.parsed.capacity();
                }
                v.insert(waiting)
            }
        };
        if waiting.parsed.capacity() > 0 {
            waiting.parsed.extend(entries.take(1));
        } else if let Some(entry) = entries.next() {
            waiting.packed.push(&entry, &mut self.dictionary, left);
        }
    }

    /// What session `s` held, now that it is complete.
    fn release(&mut self, s: u32) -> Waiting {
        let waiting = self.open.remove(&s).unwrap_or_default();
        self.reserved = self.reserved.saturating_sub(waiting.parsed.capacity());
        waiting
    }
}

fn drive<T, E, F>(
    table: SessionTable,
    batches: Box<dyn Batches + '_>,
    order: Option<&dyn SessionOrder>,
    f: &F,
    sink: &mut dyn FnMut(T),
) -> Result<Delivered, StreamError<E>>
where
    T: Send,
    E: Send,
    F: Fn(Session) -> Result<T, E> + Sync,
{
    drive_with_budget(table, batches, order, PARSED_BUDGET, f, sink)
}

fn drive_with_budget<T, E, F>(
    mut table: SessionTable,
    mut batches: Box<dyn Batches + '_>,
    order: Option<&dyn SessionOrder>,
    budget: usize,
    f: &F,
    sink: &mut dyn FnMut(T),
) -> Result<Delivered, StreamError<E>>
where
    T: Send,
    E: Send,
    F: Fn(Session) -> Result<T, E> + Sync,
{
    // Entries still to come of each session (the first pass's counts, counted down).
    let mut remaining = std::mem::take(&mut table.counts);
    // Only the sessions being read take room, so a run of millions of short sessions costs a
    // few bytes a session seen.
    let mut held = Held {
        open: FxHashMap::default(),
        reserved: 0,
        budget,
        dictionary: Dictionary::default(),
    };
    // Lines skipped per session, beyond the lines of no known session, which may have been
    // any session's.
    let mut skipped: FxHashMap<u32, u64> = FxHashMap::default();
    let unattributed = table.unattributed;
    let mut warnings = Vec::new();
    let mut results: Ordered<'_, T> = Ordered::new(sink);
    let mut first_error: Option<(usize, E)> = None;
    let mut unpacked = true;

    // `None` for a session whose entries could not be unpacked.
    type Graded<T, E> = Vec<(usize, Option<Result<T, E>>)>;
    let grade = |ready: Vec<Ready>, dictionary: &Dictionary| -> Graded<T, E> {
        ready
            .into_par_iter()
            .map(|ready| {
                let place = ready.order;
                let Some(mut session) = ready.session(dictionary) else {
                    return (place, None);
                };
                if let Some(order) = order {
                    order.arrange(place, &mut session);
                }
                (place, Some(f(session)))
            })
            .collect()
    };
    let mut keep = |graded: Graded<T, E>, results: &mut Ordered<'_, T>| {
        for (order, outcome) in graded {
            match outcome {
                Some(Ok(t)) => results.settle(order, Some(t)),
                Some(Err(e)) => {
                    results.settle(order, None);
                    if first_error.as_ref().is_none_or(|(o, _)| order < *o) {
                        first_error = Some((order, e));
                    }
                }
                None => {
                    results.settle(order, None);
                    unpacked = false;
                }
            }
        }
    };
    let ready = |table: &SessionTable,
                 s: u32,
                 waited: Waiting,
                 last: Option<entry::Entry>,
                 skipped: &mut FxHashMap<u32, u64>| Ready {
        order: s as usize,
        id: table.id(s).to_owned(),
        waited,
        last,
        skipped_lines: unattributed + skipped.remove(&s).unwrap_or(0),
    };

    // Hands each entry of a batch to its session; `None` if a session got more entries than
    // the first pass counted (the source changed).
    let distribute = |batch: Batch,
                      held: &mut Held,
                      remaining: &mut Vec<u32>,
                      skipped: &mut FxHashMap<u32, u64>|
     -> Option<Vec<Ready>> {
        // Entries still to come of session `s` after one more of its lines.
        fn count_down(remaining: &mut [u32], s: u32) -> Option<u32> {
            let left = remaining.get_mut(s as usize)?;
            *left = left.checked_sub(1)?;
            Some(*left)
        }
        let mut complete = Vec::new();
        // Plain loops and an inlined `hold`: an entry is then copied from its piece straight
        // into its session's storage, not through copies on the stack.
        for (entries, sessions) in batch.pieces {
            let mut entries = entries.into_iter();
            for s in sessions {
                match count_down(remaining, s)? {
                    0 => {
                        let waited = held.release(s);
                        complete.push(ready(&table, s, waited, entries.next(), skipped));
                    }
                    left => held.hold(s, &mut entries, left),
                }
            }
        }
        for s in batch.lost {
            let left = count_down(remaining, s)?;
            *skipped.entry(s).or_insert(0) += 1;
            if left == 0 {
                let waited = held.release(s);
                complete.push(ready(&table, s, waited, None, skipped));
            }
        }
        Some(complete)
    };

    // A pipeline: while batch k+1 is read and parsed, batch k is handed to its sessions and
    // the sessions it completes are graded, so no step waits on the one thread.
    let mut parsed = Batch::default();
    loop {
        let previous = std::mem::take(&mut parsed);
        let (batch, graded) = rayon::join(
            || batches.next_batch(&table),
            || {
                distribute(previous, &mut held, &mut remaining, &mut skipped)
                    .map(|complete| grade(complete, &held.dictionary))
            },
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
    // A session the second pass found fewer entries of than the first counted: the source
    // shrank between the passes (a log cut back by `copytruncate`, rows deleted). Graded on
    // what was left, it would get a grade of part of itself and say nothing.
    if remaining.iter().any(|&left| left > 0) {
        return Err(batches.changed().into());
    }
    if !unpacked {
        return Err(StreamError::Source(SourceError::Format {
            path: batches.path().to_owned(),
            message: "an entry held while its session was read could not be unpacked (a bug in grade: please report it)".to_owned(),
        }));
    }
    if let Some((_, e)) = first_error {
        return Err(StreamError::Session(e));
    }
    results.finish();
    warnings.extend(order.and_then(|o| o.warning(batches.path())));
    Ok(Delivered {
        skipped_lines: batches.skipped_lines(),
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{CleoJsonl, ReadOptions, SessionFilter, SourceFormat};
    use std::path::Path;

    fn corpus() -> &'static Path {
        Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/conformance/audit.jsonl"
        ))
    }

    fn streamed(path: &Path, budget: usize) -> Vec<Session> {
        let stream = CleoJsonl
            .open_stream(path, &SessionFilter::All, &ReadOptions::default(), None)
            .unwrap()
            .unwrap();
        let mut sessions = Vec::new();
        drive_with_budget(
            stream.table,
            stream.batches,
            stream.order.as_deref(),
            budget,
            &|s: Session| Ok::<_, ()>(s),
            &mut |s| sessions.push(s),
        )
        .unwrap();
        sessions
    }

    /// Entries that wait packed come back as they were parsed, whichever sessions pack.
    #[test]
    fn sessions_whose_entries_waited_packed_are_the_sessions_read_whole() {
        let whole = CleoJsonl
            .read(
                &crate::source::Input::File(corpus()),
                &SessionFilter::All,
                &ReadOptions::default(),
            )
            .unwrap()
            .sessions;
        assert_eq!(whole.len(), 282);
        for budget in [usize::MAX, 0, 1, 100, 2_000] {
            assert_eq!(streamed(corpus(), budget), whole, "budget {budget}");
        }
    }

    /// A log cut back between the passes (`copytruncate` rotating it) left sessions with
    /// fewer entries than the first pass counted: they were graded on what was left, and
    /// sessions cut off whole were not graded at all, in silence.
    #[test]
    fn a_source_that_shrinks_between_the_passes_is_an_error_not_a_partial_grade() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::copy(corpus(), &path).unwrap();
        let stream = CleoJsonl
            .open_stream(&path, &SessionFilter::All, &ReadOptions::default(), None)
            .unwrap()
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let half = text[..text.len() / 2].rfind('\n').unwrap() + 1;
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(half as u64)
            .unwrap();
        let mut graded = 0;
        let err = drive_with_budget(
            stream.table,
            stream.batches,
            stream.order.as_deref(),
            PARSED_BUDGET,
            &|s: Session| Ok::<_, ()>(s),
            &mut |_| graded += 1,
        )
        .unwrap_err();
        assert!(
            matches!(&err, StreamError::Source(SourceError::Io { source, .. }) if source.to_string().contains("changed while it was read")),
            "{err:?}"
        );
    }

    #[test]
    fn results_keep_the_order_of_first_entries_when_sessions_end_out_of_order() {
        let mut out = Vec::new();
        let mut sink = |c| out.push(c);
        let mut ordered = Ordered::new(&mut sink);
        ordered.settle(2, Some('c'));
        assert!(ordered.waiting.len() == 3, "c waits for a and b");
        for (order, value) in [(0, Some('a')), (3, None), (1, Some('b'))] {
            ordered.settle(order, value);
        }
        assert!(ordered.waiting.is_empty(), "all handed on in order");
        ordered.settle(5, Some('f'));
        ordered.settle(6, Some('g'));
        assert_eq!(ordered.waiting.len(), 3, "f and g wait for 4");
        ordered.finish();
        assert_eq!(out, ['a', 'b', 'c', 'f', 'g']);
    }

    /// What lets a caller write results out while a long source is still being read.
    #[test]
    fn a_result_is_handed_on_as_soon_as_every_session_before_it_is_done() {
        let mut out = Vec::new();
        let mut sink = |c| out.push(c);
        let mut ordered = Ordered::new(&mut sink);
        ordered.settle(1, Some('b'));
        ordered.settle(0, Some('a'));
        ordered.settle(2, Some('c'));
        drop(ordered);
        assert_eq!(out, ['a', 'b', 'c']);
    }

    #[test]
    fn the_session_table_finds_each_id_it_was_given() {
        let mut table = SessionTable::default();
        for i in 0..10_000u32 {
            table.add(&format!("s{}", i % 5_000), 1);
        }
        assert_eq!(table.len(), 5_000);
        assert_eq!(table.lookup("s4999"), Some(4_999));
        assert_eq!(table.id(17), "s17");
        assert_eq!(table.counts[17], 2);
        assert_eq!(table.lookup("s5000"), None);
    }
}
