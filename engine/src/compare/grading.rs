//! Grading a source with several packs in one read, each result taken apart as it is made.

use std::path::Path;

use rayon::prelude::*;

use super::breakdown::{Layout, LayoutMismatch, Scored};
use super::Side;
use crate::entry::{js_number, Session};
use crate::eval::{EvalError, GradeOptions, RulePoints};
use crate::field::{Field, FieldValue, FieldsRead, Projection};
use crate::pack::CompiledPack;
use crate::source::{self, SessionFilter, SourceError, SourceFormat};

/// Why a session has no grade from one of the packs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GradeError {
    /// The pack could not grade the session.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// The result does not fit its side's layout.
    #[error(transparent)]
    Layout(#[from] LayoutMismatch),
}

/// A session graded by every pack of a [`grade_source`] call.
#[derive(Debug)]
pub struct GradedSession {
    /// The session's id.
    pub id: String,
    /// The session's value of the pairing field (its first entry that has one).
    pub key: Option<String>,
    /// One outcome per pack, in the order the packs were given.
    pub scored: Vec<Result<Scored, GradeError>>,
}

/// Reads the source once and grades each session with every pack (recording each rule's
/// points, which the attribution needs, but not the evidence and entries `--explain` shows),
/// keeping only each grade's terms. Whole CLEO logs and databases
/// are streamed, so memory follows the sessions open at once. `key` is read from each
/// session for pairing by key. Sessions come in the order of their first entry, with what
/// the read skipped or guessed (its warnings), which a caller must show as grading does.
///
/// The source is checked as grading with each pack alone checks it: an optional field is
/// type-checked only if one of the packs (or `key`) reads it, so the comparison reads every
/// source each pack grades. `skip_bad_lines` skips malformed lines of a JSONL audit log with
/// a warning, as [`ReadOptions::skip_bad_lines`](source::ReadOptions::skip_bad_lines) does.
/// `references` are the sessions' reference trajectories, for packs with trajectory metrics.
#[allow(
    clippy::too_many_arguments,
    reason = "the public entry point over a source: each argument is an independent choice of its caller"
)]
pub fn grade_source(
    packs: &[(&CompiledPack, &Layout)],
    path: &Path,
    format: Option<&dyn SourceFormat>,
    filter: &SessionFilter,
    key: Option<&Field>,
    skip_bad_lines: bool,
    references: Option<std::sync::Arc<crate::reference::References>>,
) -> Result<source::Mapped<GradedSession>, SourceError> {
    let options = GradeOptions {
        references,
        ..GradeOptions::default()
    };
    let grade = |session: Session| -> GradedSession {
        let key = key.and_then(|field| key_of(field, &session));
        let mut points = RulePoints::default();
        let scored = packs
            .iter()
            .map(|(pack, layout)| {
                let result = pack.grade_rule_points(&session, &options, &mut points)?;
                Ok(layout.score_points(&result, pack, &points)?)
            })
            .collect();
        GradedSession {
            id: session.id,
            key,
            scored,
        }
    };
    // Every pack grades each session, so each must grade the source's format.
    let registry = packs
        .iter()
        .fold(source::Registry::builtin().clone(), |r, (pack, _)| {
            pack.grading(r)
        });
    let checked = packs.iter().fold(
        key.map_or(FieldsRead::NONE, FieldsRead::of_field),
        |read, (pack, _)| read.with(pack.fields_read()),
    );
    // What any of the packs reads, and the key: each line is read for all of them at once.
    let kept = packs.iter().fold(
        key.map_or(
            Projection::of_fields(FieldsRead::NONE),
            Projection::of_field,
        ),
        |kept, (pack, _)| kept.with(&pack.projection()),
    );
    let read = source::ReadOptions {
        checked,
        kept,
        skip_bad_lines,
    };
    crate::run::map_source(&registry, path, format, filter, &read, None, grade)
}

/// The value of `field` in the first entry of the session that has one, as text.
fn key_of(field: &Field, session: &Session) -> Option<String> {
    session.entries.iter().find_map(|e| match field.get(e) {
        FieldValue::Missing => None,
        FieldValue::Str(s) => Some(s.to_owned()),
        FieldValue::Bool(b) => Some(b.to_string()),
        FieldValue::Int(i) => Some(i.to_string()),
        FieldValue::Float(f) => Some(js_number(f)),
        FieldValue::Json(serde_json::Value::String(s)) => Some(s.clone()),
        FieldValue::Json(serde_json::Value::Number(n)) => Some(n.to_string()),
        FieldValue::Json(serde_json::Value::Bool(b)) => Some(b.to_string()),
        FieldValue::Json(_) => None,
    })
}

/// How the side of a pack asked for by `spec` is labelled: the pack's id, and the spec too
/// when it differs (a path): `cleo-v2 (rubrics/cleo-v2)`.
pub fn side_label(pack: &CompiledPack, spec: &str) -> String {
    if pack.id == spec {
        spec.to_owned()
    } else {
        format!("{} ({spec})", pack.id)
    }
}

/// One pack's side of graded sessions (`which` is the pack's place in the
/// [`grade_source`] call), and the sessions it could not grade.
pub fn sides_of(
    label: &str,
    layout: &Layout,
    graded: &mut [GradedSession],
    which: usize,
) -> (Side, Vec<GradeError>) {
    // Taken out on every core (a slot a session, scattered in memory: after the last
    // session is graded, with the pool otherwise idle), then sorted into the side in order.
    let taken: Vec<Result<(Scored, Option<String>), GradeError>> = graded
        .par_iter_mut()
        .filter_map(|g| {
            // What is left in the slot once its outcome is taken: never read, so it costs no
            // allocation per session (empty strings do not allocate).
            let placeholder = Err(GradeError::Layout(LayoutMismatch {
                session: String::new(),
                rubric: String::new(),
                what: String::new(),
            }));
            let slot = g.scored.get_mut(which)?;
            Some(std::mem::replace(slot, placeholder).map(|s| (s, g.key.clone())))
        })
        .collect();
    let mut sessions = Vec::with_capacity(taken.len());
    let mut keys = Vec::with_capacity(taken.len());
    let mut failed = Vec::new();
    for outcome in taken {
        match outcome {
            Ok((s, key)) => {
                sessions.push(s);
                keys.push(key);
            }
            Err(e) => failed.push(e),
        }
    }
    let mut side = Side::new(label, layout.clone(), sessions);
    side.keys = keys;
    (side, failed)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::compare::Layout;
    use crate::source::{CleoJsonl, Input, ReadOptions};

    /// A weighted pack whose dimensions clamp at a floor and a cap and one that may not apply:
    /// every kind of term a compiled pack's grade has.
    const WEIGHTED: &str = "id: w
version: '1'
name: W
scoring: weighted
selectors:
  tasks: { domain: tasks }
  adds: { domain: tasks, operation: add }
  lists: { domain: session, operation: list }
dimensions:
  - id: capped
    max: 10
    weight: 0.5
    cap: 6
    rules:
      - { id: each-task, doc: d, for_each: tasks, points: 2 }
      - { id: any-list, doc: d, when: { count: lists }, points: 3 }
  - id: floored
    max: 10
    start: 10
    floor: 2
    weight: 0.3
    rules:
      - { id: each-add, doc: d, for_each: adds, points: -4 }
  - id: maybe
    max: 5
    weight: 0.2
    applies_when: { count: lists }
    not_applicable: no lists
    rules:
      - { id: lists, doc: d, when: { count: lists }, points: 5 }
";

    /// The points recorded beside a grade take it apart into the terms its `explain` gives,
    /// for every session of the odd-sessions fixture and every kind of pack: the comparison
    /// reads the former, recorded grades the latter.
    #[test]
    fn rule_points_take_a_grade_apart_as_its_explain_does() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let log = root.join("tests/fixtures/odd-sessions/audit.jsonl");
        let sessions = CleoJsonl
            .read(
                &Input::File(&log),
                &SessionFilter::All,
                &ReadOptions {
                    checked: FieldsRead::NONE,
                    ..ReadOptions::default()
                },
            )
            .unwrap()
            .sessions;
        let scripted = root.join("tests/packs/cleo-v1-scripted");
        let tutorial = root.join("tests/packs/tutorial");
        let packs = [
            crate::load_pack("cleo-v1", &[]).unwrap(),
            crate::load_pack("cleo-v2", &[]).unwrap(),
            crate::load_pack(&scripted.to_string_lossy(), &[]).unwrap(),
            crate::load_pack(&tutorial.to_string_lossy(), &[]).unwrap(),
            crate::pack::testing::pack(WEIGHTED),
        ];
        let (explained, plain) = (
            GradeOptions {
                now: 0,
                explain: true,
                references: None,
            },
            GradeOptions {
                now: 0,
                explain: false,
                references: None,
            },
        );
        let mut points = RulePoints::default();
        let mut compared = 0;
        for pack in &packs {
            let layout = Layout::of_pack(pack);
            for session in &sessions {
                let Ok(whole) = pack.grade(session, &explained) else {
                    assert!(pack
                        .grade_rule_points(session, &plain, &mut points)
                        .is_err());
                    continue;
                };
                let result = pack
                    .grade_rule_points(session, &plain, &mut points)
                    .unwrap();
                assert_eq!(result.explain, None);
                assert_eq!(
                    layout.score_points(&result, pack, &points).unwrap(),
                    layout.score(&whole).unwrap(),
                    "pack `{}`, session `{}`",
                    pack.id,
                    session.id
                );
                compared += 1;
            }
        }
        assert!(compared > 1_000, "{compared}");
    }
}
