//! Two packs over the sessions of one source, as `grade compare --rubric BASE --rubric CAND`
//! compares them: one read, each session graded by both packs, the two sides compared by
//! session id with what changed between the packs. The binary, `grade mcp` and the Python
//! module's `grade.compare` all go through [`TwoPacks`], in two steps so that a caller shows
//! what the read warns of before it knows whether the comparison can be made.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{
    compare, grade_source, rubric_diff, side_label, sides_of, CompareOptions, Comparison,
    GradeError, GradedSession, Layout, PackSource, Pairing,
};
use crate::pack::CompiledPack;
use crate::reference::References;
use crate::source::{Mapped, SessionFilter, SourceError, SourceFormat};

/// Why `pack` cannot be compared by grading a source with it, or `None` when it can: its
/// dimensions are scored from a judgment, which a comparison has no way to ask for; its
/// recorded results can be compared instead ([`recorded`](super::recorded)).
pub fn judged_refusal(pack: &CompiledPack) -> Option<String> {
    pack.judge.as_ref().map(|_| {
        format!(
            "rubric `{}` scores dimensions from a judgment; compare its recorded results instead",
            pack.id
        )
    })
}

/// Named sessions the source has no entries for: a comparison that silently left them out
/// would answer another question than the one asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", crate::named::no_entries_for(&self.sessions.iter().map(String::as_str).collect::<Vec<_>>(), &self.path))]
#[non_exhaustive]
pub struct NoEntriesFor {
    /// The sessions, in the order they were named.
    pub sessions: Vec<String>,
    /// The source read.
    pub path: PathBuf,
}

/// What [`TwoPacks::compare`] makes of the sessions graded.
#[derive(Debug)]
#[non_exhaustive]
pub struct PacksCompared {
    /// The comparison of the sessions both packs graded.
    pub report: Comparison,
    /// The grades that could not be made, the baseline's first: a caller says each, and
    /// that the run did not grade every session.
    pub failed: Vec<GradeError>,
}

/// Two packs to compare over one source, each with the spec its caller named it by (an
/// id, or a path), which labels its side ([`side_label`]).
pub struct TwoPacks<'a> {
    sides: [(PackSource<'a>, String, Layout); 2],
}

impl<'a> TwoPacks<'a> {
    /// The baseline `base`, asked for as `base_spec`, against the candidate `cand`.
    pub fn new(
        base: PackSource<'a>,
        base_spec: &str,
        cand: PackSource<'a>,
        cand_spec: &str,
    ) -> TwoPacks<'a> {
        let side =
            |p: PackSource<'a>, spec: &str| (p, side_label(p.pack, spec), Layout::of_pack(p.pack));
        TwoPacks {
            sides: [side(base, base_spec), side(cand, cand_spec)],
        }
    }

    /// Reads the source at `path` once and grades each session with both packs
    /// ([`grade_source`]): `sessions` names the sessions to compare (all when `None`). The
    /// read's warnings and skipped lines are the caller's to show, as grading shows them.
    pub fn grade_source(
        &self,
        path: &Path,
        format: Option<&dyn SourceFormat>,
        sessions: Option<&[String]>,
        skip_bad_lines: bool,
        references: Option<Arc<References>>,
    ) -> Result<Mapped<GradedSession>, SourceError> {
        let filter = match sessions {
            Some(ids) => SessionFilter::only(ids.iter().cloned()),
            None => SessionFilter::All,
        };
        let [(a, _, la), (b, _, lb)] = &self.sides;
        grade_source(
            &[(a.pack, la), (b.pack, lb)],
            path,
            format,
            &filter,
            None,
            skip_bad_lines,
            references,
        )
    }

    /// Compares the sessions [`TwoPacks::grade_source`] graded, by session id, with the
    /// packs' differences. `sessions` are the sessions it was asked for, of `source`: one it
    /// has no entries for refuses the comparison ([`NoEntriesFor`]).
    pub fn compare(
        &self,
        mut graded: Vec<GradedSession>,
        sessions: Option<&[String]>,
        source: &Path,
        options: &CompareOptions,
    ) -> Result<PacksCompared, NoEntriesFor> {
        if let Some(asked) = sessions {
            let missing = crate::named::missing(graded.iter().map(|g| g.id.as_str()), asked);
            if !missing.is_empty() {
                return Err(NoEntriesFor {
                    sessions: missing.into_iter().map(str::to_owned).collect(),
                    path: source.to_owned(),
                });
            }
        }
        let [(a, label_a, la), (b, label_b, lb)] = &self.sides;
        let (sa, mut failed) = sides_of(label_a, la, &mut graded, 0);
        let (sb, failed_b) = sides_of(label_b, lb, &mut graded, 1);
        failed.extend(failed_b);
        let report = compare(
            &sa,
            &sb,
            &Pairing::BySessionId,
            Some(rubric_diff(*a, *b)),
            options,
        );
        // Freed by the pool, idle now, while the caller writes the report: two results a
        // session, 2% of the wall time of a million entries on the one thread left.
        rayon::spawn(move || drop((graded, sa, sb)));
        Ok(PacksCompared { report, failed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example CLEO log: two sessions, `session-demo-good` and `session-demo-sloppy`.
    fn log() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cleo-audit.jsonl")
    }

    /// What `with` makes of `cleo-v1` against `cleo-v2`, asked for as `cand_spec`.
    fn with_packs<T>(cand_spec: &str, with: impl FnOnce(&TwoPacks<'_>) -> T) -> T {
        let files = |id: &str| crate::locate_pack(id, &[]).unwrap();
        let (f1, f2) = (files("cleo-v1"), files("cleo-v2"));
        let compile = |f: &crate::PackFiles| crate::pack::compile_pack(f).unwrap();
        let (p1, p2) = (compile(&f1), compile(&f2));
        let side = |pack, files| PackSource { pack, files };
        with(&TwoPacks::new(
            side(&p1, &f1),
            "cleo-v1",
            side(&p2, &f2),
            cand_spec,
        ))
    }

    #[test]
    fn two_packs_compare_every_session_of_the_source_with_their_differences() {
        let source = log();
        let done = with_packs("rubrics/cleo-v2", |two| {
            let read = two.grade_source(&source, None, None, false, None).unwrap();
            two.compare(read.results, None, &source, &CompareOptions::default())
                .unwrap()
        });
        assert!(done.failed.is_empty());
        let report = done.report;
        assert_eq!(report.baseline.label, "cleo-v1");
        assert_eq!(report.candidate.label, "cleo-v2 (rubrics/cleo-v2)");
        assert_eq!(report.summary.n, 2);
        assert!(report.rubric_diff.is_some());
        assert!(report.left_out().is_empty());
        assert_eq!(report.nothing_to_compare(), None);
    }

    #[test]
    fn a_named_session_the_source_lacks_refuses_the_comparison_in_the_order_named() {
        let source = log();
        let named = ["zz", "session-demo-good", "aa"].map(str::to_owned);
        let err = with_packs("cleo-v2", |two| {
            let read = two
                .grade_source(&source, None, Some(&named), false, None)
                .unwrap();
            let options = CompareOptions::default();
            two.compare(read.results, Some(&named), &source, &options)
                .unwrap_err()
        });
        assert_eq!(err.sessions, ["zz", "aa"]);
        assert_eq!(
            err.to_string(),
            format!(
                "no entries for sessions `zz`, `aa` in `{}`",
                source.display()
            )
        );
    }

    #[test]
    fn a_judged_pack_is_refused_with_the_way_to_compare_it() {
        let pack = crate::load_pack("langfuse-v1", &[]).unwrap();
        assert_eq!(
            judged_refusal(&pack).as_deref(),
            Some("rubric `langfuse-v1` scores dimensions from a judgment; compare its recorded results instead")
        );
        assert_eq!(
            judged_refusal(&crate::load_pack("cleo-v1", &[]).unwrap()),
            None
        );
    }
}
