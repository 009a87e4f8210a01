//! The run pipeline: a source read through a [`Registry`], every wanted session graded,
//! and each session's outcome handed on in the order of the session's first entry, ready
//! for the [`sink`](crate::sink)s.
//!
//! ```text
//! source ──Registry──▶ sessions ──CompiledPack──▶ outcomes (in order) ──▶ sinks
//! ```
//!
//! A whole log graded by rules alone is streamed when its format streams
//! ([`grade_source`]): sessions are graded as soon as they are read whole, so memory follows
//! the sessions open at once, not the size of the source. Sessions already read (and judged,
//! for a pack with judged dimensions) are graded with [`grade_sessions`].

use std::path::Path;

use rayon::prelude::*;

use crate::judgment::Judgment;
use crate::source::{Delivered, Mapped, Progress, Registry, StreamError};
use crate::{
    CompiledPack, EvalError, GradeOptions, GradeResult, ReadOptions, Session, SessionFilter,
    SourceError, SourceFormat,
};

/// A source error in the words a caller shows: the engine's message, the built-in packs that
/// grade a format the pack refuses, and, for a malformed line, how to skip such lines
/// (`skip_bad_lines`: the caller's flag or setting, such as `` `--skip-bad-lines` ``).
pub fn source_message(err: &SourceError, skip_bad_lines: &str) -> String {
    match err {
        SourceError::MalformedLine { .. } => {
            format!("{err} (pass {skip_bad_lines} to skip malformed lines with a warning)")
        }
        SourceError::NotGraded(refused) => {
            let graders: Vec<String> = crate::builtin_pack_ids()
                .into_iter()
                .filter(|id| *id != refused.pack)
                .filter(|id| {
                    crate::load_pack(id, &[]).is_ok_and(|pack| {
                        pack.sources
                            .as_ref()
                            .is_some_and(|formats| formats.contains(&refused.format))
                    })
                })
                .map(|id| format!("`{id}`"))
                .collect();
            match graders.as_slice() {
                [] => err.to_string(),
                [one] => format!("{err} (the built-in rubric {one} grades it)"),
                [rest @ .., last] => format!(
                    "{err} (the built-in rubrics {} and {last} grade it)",
                    rest.join(", ")
                ),
            }
        }
        _ => err.to_string(),
    }
}

/// How many malformed lines of `source` were skipped, when any were: a run's last word on
/// them, so that a long run's warnings are not lost.
pub fn skipped_warning(skipped: u64, source: &Path) -> Option<String> {
    let plural = if skipped == 1 { "" } else { "s" };
    (skipped > 0).then(|| format!(
        "skipped {skipped} malformed line{plural} of `{}`; the results of their sessions say how many each lost",
        source.display()
    ))
}

/// The last word of a run in which `failed` of `total` sessions could not be graded.
pub fn could_not_grade(failed: usize, total: usize) -> String {
    let plural = if total == 1 { "" } else { "s" };
    format!("{failed} of {total} session{plural} could not be graded")
}

/// What a run over a whole source that held no session says of it (an empty log, the wrong
/// file): nobody should take the silence for a clean run.
pub fn no_sessions(source: &Path) -> String {
    format!("`{}` holds no sessions", source.display())
}

/// What became of one session: its result, or why it could not be graded. One session that
/// fails (a runaway script) costs the others nothing.
pub type Outcome = Result<GradeResult, EvalError>;

/// Grades sessions in parallel, each with its judgment when `judgments` has one (it holds
/// one per session, or is empty); the outcomes are in the order of `sessions`.
pub fn grade_sessions(
    pack: &CompiledPack,
    sessions: &[Session],
    judgments: &[Option<Judgment>],
    options: &GradeOptions,
) -> Vec<Outcome> {
    sessions
        .par_iter()
        .enumerate()
        .map(|(i, s)| pack.grade_with(s, judgments.get(i).and_then(Option::as_ref), options))
        .collect()
}

/// How [`grade_source`] reads and grades.
#[derive(Clone, Default)]
pub struct SourceRun<'a> {
    /// The format to read the source as; detected from the content when `None`.
    pub format: Option<&'a dyn SourceFormat>,
    /// The sessions to grade.
    pub filter: Option<SessionFilter>,
    /// How the source is read.
    pub read: ReadOptions,
    /// How each session is graded.
    pub grade: GradeOptions,
}

/// Grades every wanted session of a source, streaming when its format streams, and hands
/// each outcome to `then` on the thread that graded it (to serialise a result there, say).
/// The values of `then` come back in the order of each session's first entry; a source
/// error ends the run. Warnings of a source read whole are not kept (read it with
/// [`Registry::read`] for them).
pub fn grade_source<T, F>(
    pack: &CompiledPack,
    registry: &Registry,
    path: &Path,
    run: &SourceRun<'_>,
    progress: Option<Progress<'_>>,
    then: F,
) -> Result<Mapped<T>, SourceError>
where
    T: Send,
    F: Fn(Outcome) -> T + Sync,
{
    let mut results = Vec::new();
    let delivered = grade_source_into(pack, registry, path, run, progress, then, &mut |t| {
        results.push(t)
    })?;
    Ok(delivered.with_results(results))
}

/// [`grade_source`], handing each value of `then` to `sink` (on the calling thread) as soon
/// as every session before it is graded, in the order of each session's first entry: a
/// caller can write results out while the source is still being read, so that a run over
/// millions of sessions holds none of them. A source error can end the run after `sink` was
/// handed earlier values: hold them until this returns `Ok` when a late error must leave no
/// output.
pub fn grade_source_into<T, F>(
    pack: &CompiledPack,
    registry: &Registry,
    path: &Path,
    run: &SourceRun<'_>,
    progress: Option<Progress<'_>>,
    then: F,
    sink: &mut dyn FnMut(T),
) -> Result<Delivered, SourceError>
where
    T: Send,
    F: Fn(Outcome) -> T + Sync,
{
    let all = SessionFilter::All;
    let filter = run.filter.as_ref().unwrap_or(&all);
    registry
        .map_sessions_into(
            path,
            run.format,
            filter,
            &run.read,
            progress,
            |session| {
                Ok::<T, std::convert::Infallible>(then(pack.grade_owned(session, None, &run.grade)))
            },
            sink,
        )
        .map_err(infallible)
}

/// Calls `f` on every wanted session of a source, in parallel, as soon as the session is
/// read whole (streaming when the format streams); the values come back in the order of
/// each session's first entry. What `compare` grades with.
pub fn map_source<T, F>(
    registry: &Registry,
    path: &Path,
    format: Option<&dyn SourceFormat>,
    filter: &SessionFilter,
    read: &ReadOptions,
    progress: Option<Progress<'_>>,
    f: F,
) -> Result<Mapped<T>, SourceError>
where
    T: Send,
    F: Fn(Session) -> T + Sync,
{
    registry
        .map_sessions(path, format, filter, read, progress, |session| {
            Ok::<T, std::convert::Infallible>(f(session))
        })
        .map_err(infallible)
}

fn infallible(e: StreamError<std::convert::Infallible>) -> SourceError {
    match e {
        StreamError::Source(e) => e,
        StreamError::Session(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example_log() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cleo-audit.jsonl")
    }

    #[test]
    fn a_streamed_source_grades_as_sessions_read_whole_do() {
        let pack = crate::load_pack("cleo-v1", &[]).unwrap();
        let options = GradeOptions {
            now: 0,
            explain: true,
            references: None,
        };
        let run = SourceRun {
            grade: options.clone(),
            ..SourceRun::default()
        };
        let streamed = grade_source(
            &pack,
            Registry::builtin(),
            &example_log(),
            &run,
            None,
            |o| o.unwrap(),
        )
        .unwrap()
        .results;
        let sessions = crate::read_sessions(&example_log(), &SessionFilter::All).unwrap();
        let whole: Vec<GradeResult> = grade_sessions(&pack, &sessions, &[], &options)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert!(!whole.is_empty());
        assert_eq!(streamed, whole);
    }
}
