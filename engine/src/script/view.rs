//! The session as a script sees it: handles whose every read goes through a probe, so a
//! run can be remembered by what it asked.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rhai::{Dynamic, EvalAltResult};

use super::memo::Recorder;
use super::observe::{Answer, EntryAt, Getter, Observable, Probe};
use crate::entry::Entry;

/// Everything a script may read about one session, owned so that scripts can hold it.
pub struct SessionData {
    pub session_id: String,
    pub entries: Arc<Vec<Entry>>,
    pub hits: Vec<Vec<u32>>,
    pub metrics: Vec<Option<f64>>,
    pub selector_ids: Arc<HashMap<String, usize>>,
    pub metric_ids: Arc<HashMap<String, usize>>,
}

impl SessionData {
    pub(super) fn observable(&self) -> Observable<'_> {
        Observable {
            session_id: &self.session_id,
            entries: &self.entries,
            hits: &self.hits,
            metrics: &self.metrics,
        }
    }
}

/// The session as a script sees it. Every read goes through [`SessionView::ask`], which
/// records it when the run is to be remembered.
#[derive(Clone)]
pub(super) struct SessionView(pub(super) Arc<Run>);

/// One run of a script: the session it reads and what records the reads.
pub(super) struct Run {
    pub(super) data: Arc<SessionData>,
    pub(super) recorder: Option<Recorder>,
    /// The `params` map of the entry read last, as handed to Rhai, by the entry's index: a
    /// script reads `e.params.x`, `e.params[key]` of one entry many times (coding-agent-v1's
    /// scripts a dozen times a call), and each read built the whole map again, copying every
    /// string; a clone of the map built shares them.
    pub(super) params: Mutex<Option<(u32, Dynamic)>>,
    /// The same for `metadata`.
    pub(super) metadata: Mutex<Option<(u32, Dynamic)>>,
}

impl Run {
    pub(super) fn new(data: Arc<SessionData>, recorder: Option<Recorder>) -> Run {
        Run {
            data,
            recorder,
            params: Mutex::new(None),
            metadata: Mutex::new(None),
        }
    }
}

impl std::ops::Deref for SessionView {
    type Target = Run;
    fn deref(&self) -> &Run {
        &self.0
    }
}

impl SessionView {
    pub(super) fn ask(&self, probe: Probe) -> Dynamic {
        match probe.answer(&self.data.observable(), None) {
            Some(answer) => self.answered(probe, answer),
            // Only an entry path past the end has no answer, and handles never point there.
            None => Dynamic::UNIT,
        }
    }

    /// Records an answer already computed from this session's data, and hands it to Rhai.
    pub(super) fn answered(&self, probe: Probe, answer: Answer) -> Dynamic {
        if let Some(recorder) = &self.recorder {
            recorder.record(probe, &answer);
        }
        answer.to_dynamic()
    }

    /// The run read a map or an array: nothing to compare another session's answer with.
    pub(super) fn give_up_memo(&self) {
        if let Some(recorder) = &self.recorder {
            recorder.give_up();
        }
    }

    pub(super) fn entry(&self, at: EntryAt) -> EntryView {
        EntryView {
            session: self.clone(),
            at,
        }
    }

    pub(super) fn selector(&self, name: &str) -> Fallible<u32> {
        id_of(&self.data.selector_ids, name, "selector")
    }
}

#[derive(Clone)]
pub(super) struct EntryView {
    pub(super) session: SessionView,
    pub(super) at: EntryAt,
}

impl EntryView {
    pub(super) fn ask(&self, getter: Getter) -> Dynamic {
        self.session.ask(Probe::Entry(self.at, getter))
    }

    /// The entry itself, for the reads that are not scalar answers.
    pub(super) fn entry(&self) -> Option<&Entry> {
        let data = &self.session.data;
        let index = self.at.index(&data.observable())?;
        data.entries.get(index as usize)
    }

    /// `make` of the entry, or a clone of what it made for the same entry last time in
    /// `slot` (one of the run's caches): the same value, built once.
    pub(super) fn cached(
        &self,
        slot: &Mutex<Option<(u32, Dynamic)>>,
        make: impl FnOnce(&Entry) -> Dynamic,
    ) -> Dynamic {
        let data = &self.session.data;
        let Some(index) = self.at.index(&data.observable()) else {
            return Dynamic::UNIT;
        };
        let Some(entry) = data.entries.get(index as usize) else {
            return Dynamic::UNIT;
        };
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, value)) = slot.as_ref() {
            if *at == index {
                return value.clone();
            }
        }
        let value = make(entry);
        *slot = Some((index, value.clone()));
        value
    }
}

pub(super) type Fallible<T> = Result<T, Box<EvalAltResult>>;

pub(super) fn id_of(ids: &HashMap<String, usize>, name: &str, what: &str) -> Fallible<u32> {
    ids.get(name)
        .and_then(|&id| u32::try_from(id).ok())
        .ok_or_else(|| format!("unknown {what} `{name}`").into())
}
