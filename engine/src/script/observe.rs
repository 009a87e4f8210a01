//! What a script reads of a session, one probe at a time.
//!
//! The script API reads session data only through [`Probe::answer`], and every answer is a
//! scalar (entries are handed out as handles that name how they were reached, not what they
//! hold). A run is deterministic (no clock, no randomness, no I/O), so its outcome is a
//! function of its `score` and the answers it got: that is what lets [`super::memo`] reuse an
//! outcome for a session that would give the same answers.

use rhai::{Dynamic, ImmutableString};
use serde_json::Value;

use crate::entry::{Entry, Reach};
use crate::field::{Field, FieldValue};

/// The parts of a graded session a script can read.
#[derive(Clone, Copy)]
pub struct Observable<'a> {
    pub session_id: &'a str,
    pub entries: &'a [Entry],
    /// Per selector id: the ascending positions of matching entries.
    pub hits: &'a [Vec<u32>],
    pub metrics: &'a [Option<f64>],
}

/// An entry as a script holds it: by the way it was reached, so the same path names the
/// corresponding entry of another session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryAt {
    /// The entry at this 0-based position of the session (from `session.entries`, or an
    /// index a script put in `entries`).
    Nth(u32),
    /// The `k`-th entry matching a selector (from `first` and `matching`).
    Hit { selector: u32, k: u32 },
}

impl EntryAt {
    pub fn index(self, on: &Observable<'_>) -> Option<u32> {
        match self {
            EntryAt::Nth(k) => Some(k),
            EntryAt::Hit { selector, k } => on
                .hits
                .get(selector as usize)
                .and_then(|hits| hits.get(k as usize))
                .copied(),
        }
    }
}

/// One read of session data.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Probe {
    /// The dimension's running score (read first by every run of a script that names it).
    Score,
    SessionId,
    /// The number of entries (`session.len()`, and the length of `session.entries`).
    Len,
    /// The number of entries matching a selector (`count`, and the length of `matching`).
    Count(u32),
    /// Whether any entry matches a selector (`first` returns a handle or `()`).
    Any(u32),
    Metric(u32),
    Entry(EntryAt, Getter),
    /// How one entry's instant compares with another's (`a.cmp_time(b)`): −1, 0 or 1. One
    /// answer where reading both instants would be two that differ in every session.
    TimeOrder(EntryAt, EntryAt),
    /// Whether an entry of a selector lies within reach of an entry (`e.followed_by(NAME, N)`,
    /// `e.preceded_by(NAME, N)`): the declarative window, one answer where walking the
    /// selector's entries would read positions that differ in every session.
    Near(EntryAt, u32, Reach),
}

/// What a script reads of one entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Getter {
    Index,
    Position,
    Instant,
    /// `to_string`: `#position domain.operation`.
    Describe,
    /// `place`: the position and, when the source says, file, line and tool call id.
    Place,
    /// Whether the entry matches a selector.
    Is(u32),
    /// A field with a scalar value: `e.domain`, `e.success`, … and `e.field(path)` (a map or
    /// an array is not an answer: see [`Answer::from_field`]).
    Field(Field),
}

/// A probe's answer: a scalar, compared exactly (floats by their bits).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Answer {
    Unit,
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(ImmutableString),
}

impl Answer {
    fn float(f: f64) -> Answer {
        Answer::Float(f.to_bits())
    }

    pub fn score(score: f64) -> Answer {
        Answer::float(score)
    }

    fn text(s: &str) -> Answer {
        Answer::Str(s.into())
    }

    pub fn to_dynamic(&self) -> Dynamic {
        match self {
            Answer::Unit => Dynamic::UNIT,
            Answer::Bool(b) => Dynamic::from(*b),
            Answer::Int(i) => Dynamic::from(*i),
            Answer::Float(bits) => Dynamic::from(f64::from_bits(*bits)),
            Answer::Str(s) => Dynamic::from(s.clone()),
        }
    }

    /// The answer for a field's value, as [`super::api::json_to_dynamic`] converts its JSON;
    /// `None` for an array or object.
    pub fn from_field(value: FieldValue<'_>) -> Option<Answer> {
        Some(match value {
            FieldValue::Missing => Answer::Unit,
            FieldValue::Str(s) => Answer::text(s),
            FieldValue::Bool(b) => Answer::Bool(b),
            FieldValue::Int(i) => Answer::Int(i),
            FieldValue::Float(f) => Answer::float(f),
            FieldValue::Json(Value::Null) => Answer::Unit,
            FieldValue::Json(Value::Bool(b)) => Answer::Bool(*b),
            FieldValue::Json(Value::Number(n)) => match n.as_i64() {
                Some(i) => Answer::Int(i),
                None => Answer::float(n.as_f64().unwrap_or(f64::NAN)),
            },
            FieldValue::Json(Value::String(s)) => Answer::text(s),
            FieldValue::Json(Value::Array(_) | Value::Object(_)) => return None,
        })
    }
}

impl Probe {
    /// The answer in a session; `None` when the probe does not apply there (an entry path
    /// past the end) or its value is not a scalar.
    pub fn answer(&self, on: &Observable<'_>, score: Option<f64>) -> Option<Answer> {
        let count = |selector: u32| on.hits.get(selector as usize).map(Vec::len);
        Some(match self {
            Probe::Score => Answer::float(score?),
            Probe::SessionId => Answer::text(on.session_id),
            Probe::Len => Answer::Int(on.entries.len() as i64),
            Probe::Count(selector) => Answer::Int(count(*selector)? as i64),
            Probe::Any(selector) => Answer::Bool(count(*selector)? > 0),
            Probe::Metric(metric) => match on.metrics.get(*metric as usize)? {
                Some(value) => Answer::float(*value),
                None => Answer::Unit,
            },
            Probe::Entry(at, getter) => {
                let index = at.index(on)?;
                let entry = on.entries.get(index as usize)?;
                match getter {
                    Getter::Index => Answer::Int(i64::from(index)),
                    Getter::Position => Answer::Int(i64::from(index) + 1),
                    Getter::Instant => Answer::Int(entry.instant),
                    Getter::Describe => Answer::Str(
                        format!("#{} {}.{}", index + 1, entry.domain, entry.operation).into(),
                    ),
                    Getter::Place => {
                        Answer::Str(crate::entry::place_of(index as usize + 1, entry).into())
                    }
                    Getter::Is(selector) => Answer::Bool(
                        on.hits
                            .get(*selector as usize)?
                            .binary_search(&index)
                            .is_ok(),
                    ),
                    Getter::Field(field) => Answer::from_field(field.get(entry))?,
                }
            }
            Probe::Near(at, selector, reach) => {
                let found = on.hits.get(*selector as usize)?;
                Answer::Bool(reach.find(found, at.index(on)?).is_some())
            }
            Probe::TimeOrder(a, b) => {
                let instant = |at: &EntryAt| Some(on.entries.get(at.index(on)? as usize)?.instant);
                // `Ordering` is −1, 0 and 1 as an integer.
                Answer::Int(instant(a)?.cmp(&instant(b)?) as i64)
            }
        })
    }
}
