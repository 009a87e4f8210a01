//! Reusing a script's outcome for sessions that would give it the same answers.
//!
//! A run reads its session only through probes with scalar answers ([`super::observe`]) and
//! is otherwise deterministic, so the probes it made and their answers decide its outcome.
//! Each script keeps a decision tree of the runs it has seen: a node asks a probe, its
//! children are keyed by the answer, a leaf holds the outcome. Grading a session walks the
//! tree, answering each probe from the session; reaching a leaf is the outcome the script
//! would have computed, at the cost of a few lookups instead of a Rhai evaluation.
//!
//! Most rules read a handful of counts and metrics, which repeat from session to session.
//! Runs that read many entries (a loop over `session.entries`) give up recording after
//! [`MAX_PROBES`] probes, and a script whose sessions rarely repeat stops being memoised, so
//! a memo costs little where it does not help. Outcomes never depend on it: tests grade with
//! and without.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use rustc_hash::FxHashMap;

use super::observe::{Answer, Observable, Probe};
use super::RawOutcome;

/// Probes a run may make and still be remembered.
pub(super) const MAX_PROBES: usize = 32;
/// Nodes a script's tree may hold (a few hundred bytes each: a few MiB at most).
const MAX_NODES: usize = 1 << 14;
/// Lookups before the hit rate is judged, and the share of hits below which a script's memo
/// is dropped.
pub(super) const WARM_UP: u64 = 1024;
const MIN_HIT_SHARE: f64 = 0.25;

/// What a run ended with: its outcome, or its error message (errors are deterministic too).
pub type Remembered = Result<RawOutcome, String>;

/// The probes of one run, in order, and their answers; `None` once given up.
pub struct Recorder {
    trace: Mutex<Option<Vec<(Probe, Answer)>>>,
}

impl Recorder {
    /// A recorder for a run that reads `score` (`None`: a run that cannot).
    pub fn new(score: Option<f64>) -> Recorder {
        let mut trace = Vec::with_capacity(8);
        if let Some(score) = score {
            trace.push((Probe::Score, Answer::score(score)));
        }
        Recorder {
            trace: Mutex::new(Some(trace)),
        }
    }

    pub fn record(&self, probe: Probe, answer: &Answer) {
        let mut trace = self.trace.lock().unwrap_or_else(PoisonError::into_inner);
        match trace.as_mut() {
            Some(steps) if steps.len() < MAX_PROBES => steps.push((probe, answer.clone())),
            _ => *trace = None,
        }
    }

    /// The run read something that is not a scalar answer: it cannot be remembered.
    pub fn give_up(&self) {
        *self.trace.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    fn into_trace(self) -> Option<Vec<(Probe, Answer)>> {
        self.trace
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

enum Node {
    Ask {
        probe: Probe,
        next: FxHashMap<Answer, u32>,
    },
    Done(Arc<Remembered>),
}

#[derive(Default)]
pub struct Memo {
    tree: RwLock<Vec<Node>>,
    pub(super) lookups: AtomicU64,
    pub(super) hits: AtomicU64,
    /// Whether the warm-up is over and the hit rate judged.
    judged: AtomicBool,
    off: AtomicBool,
}

impl Memo {
    pub fn is_on(&self) -> bool {
        !self.off.load(Ordering::Relaxed)
    }

    /// The outcome a run would have for this session, if an earlier run asked the same
    /// probes and got the same answers.
    pub fn recall(&self, on: &Observable<'_>, score: Option<f64>) -> Option<Arc<Remembered>> {
        let found = {
            let tree = self.tree.read().unwrap_or_else(PoisonError::into_inner);
            walk(&tree, on, score)
        };
        // Counted during the warm-up only: counters every grading thread writes would bounce
        // their cache line between cores on every lookup.
        if !self.judged.load(Ordering::Relaxed) {
            let lookups = self.lookups.fetch_add(1, Ordering::Relaxed) + 1;
            let hits = self.hits.load(Ordering::Relaxed) + u64::from(found.is_some());
            if found.is_some() {
                self.hits.fetch_add(1, Ordering::Relaxed);
            }
            if lookups >= WARM_UP {
                self.judged.store(true, Ordering::Relaxed);
                if (hits as f64) < MIN_HIT_SHARE * lookups as f64 {
                    self.turn_off();
                }
            }
        }
        found
    }

    /// Remembers a run's outcome under the probes it made.
    pub fn remember(&self, recorder: Recorder, outcome: &Arc<Remembered>) {
        let Some(trace) = recorder.into_trace() else {
            return;
        };
        let mut tree = self.tree.write().unwrap_or_else(PoisonError::into_inner);
        if !self.is_on() {
            return;
        }
        if insert(&mut tree, &trace, outcome).is_err() {
            // Two runs that got the same answers asked different probes: a run was not
            // deterministic after all, so no outcome can be trusted to repeat.
            drop(tree);
            self.turn_off();
        }
    }

    fn turn_off(&self) {
        self.off.store(true, Ordering::Relaxed);
        let mut tree = self.tree.write().unwrap_or_else(PoisonError::into_inner);
        *tree = Vec::new();
    }
}

fn walk(tree: &[Node], on: &Observable<'_>, score: Option<f64>) -> Option<Arc<Remembered>> {
    let mut node = tree.first()?;
    loop {
        match node {
            Node::Ask { probe, next } => {
                let answer = probe.answer(on, score)?;
                node = tree.get(*next.get(&answer)? as usize)?;
            }
            Node::Done(outcome) => return Some(Arc::clone(outcome)),
        }
    }
}

/// Adds a run to the tree; `Err` when the tree contradicts it.
fn insert(
    tree: &mut Vec<Node>,
    trace: &[(Probe, Answer)],
    outcome: &Arc<Remembered>,
) -> Result<(), ()> {
    let mut at = 0;
    let mut node = if tree.is_empty() { None } else { Some(0) };
    while let Some(index) = node {
        match (&mut tree[index], trace.get(at)) {
            (Node::Ask { probe, next }, Some((asked, answer))) => {
                if probe != asked {
                    return Err(());
                }
                at += 1;
                match next.get(answer) {
                    Some(&child) => node = Some(child as usize),
                    None => {
                        if tree.len() + trace.len() - at + 1 > MAX_NODES {
                            return Ok(());
                        }
                        let child = tree.len() as u32;
                        if let Node::Ask { next, .. } = &mut tree[index] {
                            next.insert(answer.clone(), child);
                        }
                        break;
                    }
                }
            }
            // Another thread remembered the same run first.
            (Node::Done(_), None) => return Ok(()),
            _ => return Err(()),
        }
    }
    for (probe, answer) in &trace[at..] {
        let child = tree.len() as u32 + 1;
        let mut next = FxHashMap::default();
        next.insert(answer.clone(), child);
        tree.push(Node::Ask {
            probe: probe.clone(),
            next,
        });
    }
    tree.push(Node::Done(Arc::clone(outcome)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(points: f64) -> Arc<Remembered> {
        Arc::new(Ok(RawOutcome {
            points,
            ..RawOutcome::default()
        }))
    }

    #[test]
    fn runs_that_share_answers_share_a_path_and_part_where_an_answer_differs() {
        let mut tree = Vec::new();
        let one = [
            (Probe::Count(0), Answer::Int(1)),
            (Probe::Len, Answer::Int(5)),
        ];
        let two = [
            (Probe::Count(0), Answer::Int(1)),
            (Probe::Len, Answer::Int(6)),
        ];
        let three = [(Probe::Count(0), Answer::Int(2))];
        assert!(insert(&mut tree, &one, &outcome(1.0)).is_ok());
        assert!(insert(&mut tree, &two, &outcome(2.0)).is_ok());
        assert!(insert(&mut tree, &three, &outcome(3.0)).is_ok());
        // ask count, ask len, two leaves, one leaf for count 2
        assert_eq!(tree.len(), 5);
        // The same run again (another thread got there first) adds nothing.
        assert!(insert(&mut tree, &one, &outcome(1.0)).is_ok());
        assert_eq!(tree.len(), 5);
    }

    #[test]
    fn a_run_the_tree_contradicts_is_refused() {
        let mut tree = Vec::new();
        let asked_len = [
            (Probe::Count(0), Answer::Int(1)),
            (Probe::Len, Answer::Int(5)),
        ];
        insert(&mut tree, &asked_len, &outcome(1.0)).unwrap();
        // Same answer to the first probe, then another probe: the script was not deterministic.
        let asked_metric = [
            (Probe::Count(0), Answer::Int(1)),
            (Probe::Metric(0), Answer::Unit),
        ];
        assert!(insert(&mut tree, &asked_metric, &outcome(1.0)).is_err());
        // Stopping where the tree asks on, or asking on where it stopped, contradicts it too.
        assert!(insert(&mut tree, &asked_len[..1], &outcome(1.0)).is_err());
        let longer = [
            (Probe::Count(0), Answer::Int(1)),
            (Probe::Len, Answer::Int(5)),
            (Probe::Any(1), Answer::Bool(true)),
        ];
        assert!(insert(&mut tree, &longer, &outcome(1.0)).is_err());
    }

    #[test]
    fn a_contradicted_memo_turns_itself_off() {
        let memo = Memo::default();
        let record = |probes: &[(Probe, Answer)]| {
            let recorder = Recorder::new(None);
            for (probe, answer) in probes {
                recorder.record(probe.clone(), answer);
            }
            recorder
        };
        memo.remember(record(&[(Probe::Len, Answer::Int(1))]), &outcome(1.0));
        assert!(memo.is_on());
        memo.remember(record(&[]), &outcome(1.0));
        assert!(!memo.is_on());
        assert!(memo.tree.read().unwrap().is_empty());
    }
}
