//! What a condition is evaluated in: the facts of one session (which entries each selector
//! matched, each metric's value) and, in [`Ctx`], the running score and the `for_each` entry.
//! Conditions and templates read them here; `eval` fills them in its single pass over the
//! session (`eval/facts.rs`) and builds a [`Ctx`] for each case it tries. They live with the
//! conditions so that a condition kind keeps its evaluation in its own file without importing
//! `eval`.

use crate::entry::Entry;
use crate::field::Field;
use crate::pack::template::TemplateValues;

/// The first plugin call that failed while the facts or a rule were evaluated.
#[derive(Debug)]
pub(crate) struct NativeFailure {
    pub(crate) function: String,
    pub(crate) error: crate::native::CallError,
}

/// What the single pass learned about a session.
pub(crate) struct Facts<'s> {
    pub(crate) session_id: &'s str,
    pub(crate) entries: &'s [Entry],
    /// Per selector id: the (ascending) positions of matching entries.
    pub(crate) hits: Vec<Vec<u32>>,
    /// The selectors written in place under a window condition whose tests could not decide
    /// an entry (`blank` on a number), with its position and the field tested, ascending by
    /// selector and position: not hits, and the session fails once a condition reads one.
    pub(crate) deferred: Vec<(usize, u32, &'s Field)>,
    /// The first of `deferred` a condition read: the session fails with it.
    pub(crate) deferred_read: std::cell::Cell<Option<(usize, u32, &'s Field)>>,
    pub(crate) metrics: Vec<Option<f64>>,
    /// Per metric, the entries that moved it (only with `explain`): the `over` entries
    /// outside `of` for a ratio, the repeats for duplicates, the first of each key for distinct.
    pub(crate) metric_witnesses: Vec<Vec<u32>>,
    /// A plugin call that failed: the session fails with it (conditions and metrics have
    /// no other way to say so, and a false or undefined in its place would grade wrong).
    pub(crate) native_failure: std::cell::RefCell<Option<NativeFailure>>,
    /// The metric whose native call failed first, when one did: two metrics may call one
    /// function, and the error names the one that failed, not the first that calls it.
    pub(crate) failed_metric: Option<usize>,
    /// The first field a message printed that JavaScript cannot print (an object with its
    /// own `toString`), with its entry's position: the session fails with it, as CLEO's
    /// grader throws where it puts such a value in a flag.
    pub(crate) unprintable: std::cell::RefCell<Option<(u32, Field)>>,
    /// Per trajectory metric (by id), what it paired (only with `explain`).
    pub(crate) pairings: Vec<(usize, crate::pack::trajectory::Pairing)>,
}

impl Facts<'_> {
    /// A condition looked for `selector` at the entries `from..=to`, nearest first from
    /// `to` down when `backwards`: the first of them its tests could not decide, if any,
    /// fails the session (it is recorded unless a failure is already).
    pub(crate) fn read_deferred(&self, selector: usize, from: u32, to: u32, backwards: bool) {
        if self.deferred.is_empty() || from > to {
            return;
        }
        let lo = self
            .deferred
            .partition_point(|&(s, at, _)| (s, at) < (selector, from));
        let hi = self
            .deferred
            .partition_point(|&(s, at, _)| (s, at) <= (selector, to));
        let read = self.deferred.get(lo..hi).and_then(|undecided| {
            if backwards {
                undecided.last()
            } else {
                undecided.first()
            }
        });
        if let (Some(&read), None) = (read, self.deferred_read.get()) {
            self.deferred_read.set(Some(read));
        }
    }

    pub(crate) fn call_native(
        &self,
        native: &crate::native::NativeRef,
        entry: Option<u32>,
        score: f64,
    ) -> Option<crate::native::NativeResult> {
        match native.call(self.session_id, self.entries, entry, score) {
            Ok(result) => Some(result),
            Err(error) => {
                self.native_failure
                    .borrow_mut()
                    .get_or_insert(NativeFailure {
                        function: native.qualified_name(),
                        error,
                    });
                None
            }
        }
    }
}

/// Where a condition is evaluated: the session, the running score, and in `for_each` the entry.
pub(crate) struct Ctx<'a, 's> {
    pub(crate) facts: &'a Facts<'s>,
    pub(crate) score: f64,
    pub(crate) entry: Option<u32>,
}

impl TemplateValues for Ctx<'_, '_> {
    fn count(&self, selector: usize) -> usize {
        self.facts.hits[selector].len()
    }
    fn metric(&self, metric: usize) -> Option<f64> {
        self.facts.metrics[metric]
    }
    fn score(&self) -> f64 {
        self.score
    }
    fn entry_field(&self, field: &Field) -> Option<String> {
        let at = self.entry?;
        match field.get(&self.facts.entries[at as usize]).display() {
            Ok(text) => text,
            Err(crate::field::Unprintable) => {
                self.facts
                    .unprintable
                    .borrow_mut()
                    .get_or_insert_with(|| (at, field.clone()));
                None
            }
        }
    }
    fn entry_position(&self) -> Option<usize> {
        self.entry.map(|at| at as usize + 1)
    }
}
