//! Recorded results compared: the lines of a grades file (or a results file, or a list an
//! embedder holds) read into one standing result per session, CLEO's own bare results
//! completed, their pack found when it is at hand with their digest, and two such sets
//! compared session by session.
//!
//! The reading of a file is the caller's (the binary reads files and standard input, the
//! Python module lists of dicts): each line's JSON goes through [`read_result`], the lines
//! through [`standing`], and two sets through [`compare_recorded`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{compare, default_pass_at, rubric_diff, CompareOptions, Comparison, Layout, Side};
use super::{PackSource, Pairing};
use crate::plugin::PluginPolicy;
use crate::{CompiledPack, GradeResult, PackFiles};

/// The fields a result cannot be compared without.
const NEEDED: [&str; 5] = ["sessionId", "totalScore", "maxScore", "dimensions", "flags"];

/// Why recorded results cannot be compared. Each message names `origin`, the file (or list)
/// the results came from.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordedError {
    /// A line (or item, from 1) is not a result that can be compared.
    #[error("{origin}:{line}: not a grade result: {message}")]
    NotAResult {
        /// Where the results came from.
        origin: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The results are of two rubrics.
    #[error("`{origin}` holds results of rubric `{first}` and of `{other}` (line {line}); compare the results of one rubric per file")]
    TwoRubrics {
        /// Where the results came from.
        origin: String,
        /// The rubric of the first result.
        first: String,
        /// The rubric of the result at `line`.
        other: String,
        /// The first line of `other`.
        line: usize,
    },
    /// There are no results.
    #[error("results file `{origin}` has no results")]
    Empty {
        /// Where the results came from.
        origin: String,
    },
    /// The standing results were graded by more than one version of their rubric.
    #[error("{0}")]
    MixedVersions(String),
    /// A result does not fit the layout of its side (its pack's dimensions or rules).
    #[error("`{origin}`: {message}")]
    Layout {
        /// Where the results came from.
        origin: String,
        /// How the result differs.
        message: String,
    },
}

/// The fields a result cannot be compared without that `value` lacks, all of them at once
/// (serde names only the first).
pub(crate) fn missing_fields(value: &serde_json::Value) -> Option<String> {
    let obj = value.as_object()?;
    let missing: Vec<String> = NEEDED
        .into_iter()
        .filter(|k| !obj.contains_key(*k))
        .map(|k| format!("`{k}`"))
        .collect();
    match missing.len() {
        0 => None,
        1 => Some(format!("missing field {}", missing[0])),
        _ => Some(format!("missing fields {}", missing.join(", "))),
    }
}

/// A result as CLEO's own grader writes it has no `rubric`, `evaluator`, `percent` and, in
/// some copies, no `timestamp`: none of them is needed to compare, so they are filled in (the
/// rubric named `rubric_id`, the file's [`file_label`] for a file; `percent` from the
/// scores) rather than the result refused. Says whether the result lacked its rubric.
pub fn complete_bare_result(value: &mut serde_json::Value, rubric_id: &str) -> bool {
    let Some(obj) = value.as_object_mut() else {
        return false;
    };
    let bare = !obj.contains_key("rubric");
    if bare {
        obj.insert(
            "rubric".into(),
            serde_json::json!({"id": rubric_id, "version": "", "digest": ""}),
        );
    }
    obj.entry("timestamp").or_insert_with(|| "".into());
    obj.entry("evaluator").or_insert_with(|| "".into());
    obj.entry("entryCount").or_insert_with(|| 0.into());
    if !obj.contains_key("percent") {
        let num = |k: &str| obj.get(k).and_then(serde_json::Value::as_f64);
        if let (Some(total), Some(max)) = (num("totalScore"), num("maxScore")) {
            let percent = crate::result::percent_of(total, max);
            obj.insert("percent".into(), percent.into());
        }
    }
    bare
}

/// A results file's name without its extensions (`cleo-v1.expected.jsonl` →
/// `cleo-v1.expected`): the rubric of its bare results.
pub fn file_label(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    name.strip_suffix(".jsonl")
        .or_else(|| name.strip_suffix(".json"))
        .unwrap_or(&name)
        .to_owned()
}

/// One recorded result read from its JSON: completed when bare ([`complete_bare_result`],
/// whose answer is the `bool`), and refused with every missing field named, or with serde's
/// word on what else is wrong.
pub fn read_result(
    mut value: serde_json::Value,
    rubric_id: &str,
) -> (bool, Result<GradeResult, String>) {
    let bare = complete_bare_result(&mut value, rubric_id);
    let read = match missing_fields(&value) {
        Some(missing) => Err(missing),
        None => serde_json::from_value::<GradeResult>(value).map_err(|e| e.to_string()),
    };
    (bare, read)
}

/// The standing results of a set of recorded ones: the last of each session, in the order
/// sessions first appear.
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    /// The last result of each session.
    pub results: Vec<GradeResult>,
    /// Results that named no rubric (CLEO's own grader writes them so).
    pub bare: usize,
    /// Results replaced by a later one of the same session.
    pub repeats: usize,
}

impl Recorded {
    /// What to tell of the results of `source` beside the comparison: bare results labelled
    /// `rubric_id` (after `after`, such as "the file"), and sessions graded more than once.
    pub fn warnings(&self, source: &str, rubric_id: &str, after: &str) -> Vec<String> {
        let mut out = Vec::new();
        let bare = self.bare;
        if bare > 0 {
            out.push(format!(
                "{bare} result{} in `{source}` name no rubric (CLEO's own grader writes them so); {} labelled `{rubric_id}` after {after}",
                if bare == 1 { "" } else { "s" },
                if bare == 1 { "it is" } else { "they are" },
            ));
        }
        let repeats = self.repeats;
        if repeats > 0 {
            out.push(format!(
                "`{source}` grades {repeats} session{} more than once; the last grade of each is compared",
                if repeats == 1 { "" } else { "s" }
            ));
        }
        out
    }
}

/// The standing results of `source`'s lines, each its line number, whether it was bare and
/// its reading ([`read_result`]). A line that is not a result, a `percent` that is not its
/// scores', results of two rubrics, no result at all, or standing results of more than one
/// version of their rubric are refused.
pub fn standing(
    source: &str,
    lines: impl IntoIterator<Item = (usize, bool, Result<GradeResult, String>)>,
) -> Result<Recorded, RecordedError> {
    let lines = lines.into_iter();
    let mut out = Recorded {
        results: Vec::with_capacity(lines.size_hint().0),
        ..Recorded::default()
    };
    let mut at: HashMap<String, usize> = HashMap::new();
    for (line, bare, read) in lines {
        out.bare += usize::from(bare);
        let not_a_result = |message: String| RecordedError::NotAResult {
            origin: source.to_owned(),
            line,
            message,
        };
        let r = read.map_err(not_a_result)?;
        percent_agrees(&r).map_err(not_a_result)?;
        if let Some(first) = out.results.first() {
            if first.rubric.id != r.rubric.id {
                return Err(RecordedError::TwoRubrics {
                    origin: source.to_owned(),
                    first: first.rubric.id.clone(),
                    other: r.rubric.id.clone(),
                    line,
                });
            }
        }
        // A grades file keeps every grading of a session: the last one stands.
        match at.get(&r.session_id) {
            Some(&i) => {
                out.results[i] = r;
                out.repeats += 1;
            }
            None => {
                at.insert(r.session_id.clone(), out.results.len());
                out.results.push(r);
            }
        }
    }
    if out.results.is_empty() {
        return Err(RecordedError::Empty {
            origin: source.to_owned(),
        });
    }
    if let Some(message) = mixed_versions(source, &out.results) {
        return Err(RecordedError::MixedVersions(message));
    }
    Ok(out)
}

/// The figures compared are the scores; the pass and the letter are read from `percent`. A
/// result whose `percent` is not its scores' was edited or made by hand, and would be
/// compared as two different grades.
fn percent_agrees(r: &GradeResult) -> Result<(), String> {
    let pct = crate::entry::js_number;
    let from_scores = crate::result::percent_of(r.total_score.0, r.max_score.0);
    // `null` says there was nothing to grade, which only a `maxScore` of 0 says too.
    if r.percent.is_none() && r.max_score.0 != 0.0 {
        return Err(format!(
            "its `percent` is null (nothing to grade) but its `maxScore` is {}",
            pct(r.max_score.0)
        ));
    }
    let percent = r.percent.map_or(from_scores, |p| p.0);
    if (percent - from_scores).abs() > 0.01 + 1e-9 {
        return Err(format!(
            "its `percent` {} is not `totalScore` {} of `maxScore` {} ({})",
            pct(percent),
            pct(r.total_score.0),
            pct(r.max_score.0),
            pct(from_scores)
        ));
    }
    Ok(())
}

/// Whether the standing results of `source` were graded by more than one version of their
/// pack (a grades file that outlived a change of the pack): their rules and scales differ, so
/// a mean over them would compare nothing in particular. Says so, and how to take one
/// version out.
fn mixed_versions(source: &str, results: &[GradeResult]) -> Option<String> {
    let mut versions: Vec<(&str, &str, usize)> = Vec::new();
    for r in results {
        let (v, d) = (r.rubric.version.as_str(), r.rubric.digest.as_str());
        match versions.iter_mut().find(|(vv, dd, _)| *vv == v && *dd == d) {
            Some((_, _, n)) => *n += 1,
            None => versions.push((v, d, 1)),
        }
    }
    if versions.len() < 2 {
        return None;
    }
    let id = &results[0].rubric.id;
    let named: Vec<String> = versions
        .iter()
        .map(|(v, d, n)| {
            let short: String = d.chars().take(12).collect();
            format!(
                "{n} by `{id}@{v}`{}",
                if versions.iter().filter(|(vv, _, _)| vv == v).count() > 1 {
                    format!(" (digest `{short}`)")
                } else {
                    String::new()
                }
            )
        })
        .collect();
    Some(format!(
        "the last grades of the sessions in `{source}` were made by different versions of `{id}` ({}); compare the grades of one version: `grade --list --grades {source} --rubric {id}@VERSION --format jsonl > FILE`",
        named.join(", "),
    ))
}

/// The pack of recorded results, when it is found by their rubric's id (in `search_path`,
/// then among the built-in packs) with the digest every one of them names: then their
/// starts, clamps, bands and the rule changes between two packs are known.
pub fn pack_of(
    results: &[GradeResult],
    search_path: &[PathBuf],
    policy: PluginPolicy,
) -> Option<(CompiledPack, PackFiles)> {
    let first = results.first()?;
    crate::locate_pack(&first.rubric.id, search_path)
        .ok()
        .and_then(|files| {
            crate::pack::compile_pack_with(&files, policy)
                .ok()
                .map(|pack| (pack, files))
        })
        .filter(|(pack, _)| results.iter().all(|r| r.rubric.digest == pack.digest))
}

/// A side's standing results read from `text`, the JSON lines of `origin` (a file's path, or
/// the label of a list an embedder holds), as `grade compare BASE.jsonl CAND.jsonl` reads a
/// file: each line read as it is parsed, on every core ([`read_result`]; a tree of every line
/// first took 8 times the file's size), the last result of each session standing
/// ([`standing`]), and their pack when it is at hand with their digest ([`pack_of`]). Bare
/// results are labelled after `origin`'s [`file_label`]; `warn` is told of them (`after`
/// says what they are named after: "the file"), of sessions graded more than once, and of
/// lines read with U+FFFD for a lone surrogate.
pub fn read_side(
    origin: &str,
    text: &str,
    after: &str,
    search_path: &[PathBuf],
    policy: PluginPolicy,
    warn: &mut dyn FnMut(String),
) -> Result<ReadSide, RecordedError> {
    let rubric = file_label(Path::new(origin));
    let lines = crate::sink::grades_read::read_json_lines_as(
        Path::new(origin),
        text,
        |line, value| {
            let (bare, read) = read_result(value, &rubric);
            (line, bare, read)
        },
        warn,
    )
    .map_err(|e| RecordedError::NotAResult {
        origin: origin.to_owned(),
        line: e.line,
        message: e.message,
    })?;
    let read = standing(origin, lines)?;
    for warning in read.warnings(origin, &rubric, after) {
        warn(warning);
    }
    let pack = pack_of(&read.results, search_path, policy);
    Ok(ReadSide {
        results: read.results,
        pack,
    })
}

/// A side of recorded results as [`read_side`] reads it.
#[non_exhaustive]
pub struct ReadSide {
    /// The standing result of each session, in the order sessions first appear.
    pub results: Vec<GradeResult>,
    /// Their pack and its files, when at hand with their digest ([`pack_of`]).
    pub pack: Option<(CompiledPack, PackFiles)>,
}

/// One side of a comparison of recorded results.
pub struct RecordedSide<'a> {
    /// The side's name in the report and in messages (the binary gives the file's path).
    pub label: String,
    /// Its standing results ([`standing`]).
    pub results: Vec<GradeResult>,
    /// Their pack, when at hand with their digest ([`pack_of`]).
    pub pack: Option<PackSource<'a>>,
}

impl<'a> RecordedSide<'a> {
    /// A side labelled `label`, of `results` and their pack with its files as [`pack_of`]
    /// finds them.
    pub fn new(
        label: impl Into<String>,
        results: Vec<GradeResult>,
        pack: Option<&'a (CompiledPack, PackFiles)>,
    ) -> RecordedSide<'a> {
        RecordedSide {
            label: label.into(),
            results,
            pack: pack.map(|(pack, files)| PackSource { pack, files }),
        }
    }
}

/// How the caller's users set what a comparison of recorded results guessed or left out,
/// as its warnings name it (an embedder names its own keywords, not the binary's flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// How to give the pass mark: the binary's `` `--pass-at` ``.
    pub pass_at: &'static str,
    /// How to write results with their rule traces.
    pub traces: &'static str,
}

impl Hints {
    /// The `grade` binary's flags.
    pub const BINARY: Hints = Hints {
        pass_at: "`--pass-at`",
        traces: "write results with `grade … --all --explain --format jsonl -o FILE`",
    };
}

/// Compares two sides of recorded results by session id, as `grade compare BASE.jsonl
/// CAND.jsonl` does; `warn` is told what the report rests on that a reader should know (a
/// side without rule traces, a pass mark guessed), in the order it is found, in the words of
/// `hints`.
pub fn compare_recorded(
    base: RecordedSide<'_>,
    cand: RecordedSide<'_>,
    options: &CompareOptions,
    hints: Hints,
    warn: &mut dyn FnMut(String),
) -> Result<Comparison, RecordedError> {
    let (mut base, mut cand) = (base, cand);
    // Rules can be compared only where both sides traced them: otherwise one side's rules
    // would be set against the other's whole dimensions.
    let traced = |rs: &[GradeResult]| rs.iter().all(|r| r.explain.is_some());
    let mut untraced: Vec<String> = [&base, &cand]
        .into_iter()
        .filter(|side| !traced(&side.results))
        .map(|side| format!("`{}`", side.label))
        .collect();
    // The same file as both sides is one file ("`a` and `a` hold" reads as two).
    untraced.dedup();
    if !untraced.is_empty() {
        warn(format!(
            "{} {} results without rule traces: changes are put down to dimensions, not rules (a grades file never keeps traces; {})",
            untraced.join(" and "),
            if untraced.len() == 1 { "holds" } else { "hold" },
            hints.traces
        ));
        for r in base.results.iter_mut().chain(cand.results.iter_mut()) {
            r.explain = None;
        }
    }
    let sa = side_of(&base)?;
    let sb = side_of(&cand)?;
    if options.pass_at.is_none() && sa.layout.bands.is_empty() {
        warn(format!(
            "the baseline's pack is not at hand, so its grade bands are unknown: a session passes at {}% (set it with {})",
            default_pass_at(&[]),
            hints.pass_at
        ));
    }
    let diff = match (base.pack, cand.pack) {
        (Some(a), Some(b)) => Some(rubric_diff(a, b)),
        _ => None,
    };
    Ok(compare(&sa, &sb, &Pairing::BySessionId, diff, options))
}

/// The side a set of recorded results makes: laid out by their pack when it is at hand, else
/// by what the results hold.
fn side_of(side: &RecordedSide<'_>) -> Result<Side, RecordedError> {
    let pack = side.pack.map(|p| p.pack);
    let mut layout = match (pack, side.results.first()) {
        (Some(p), _) => Layout::of_pack(p),
        (None, Some(first)) => Layout::empty(first.rubric.clone()),
        (None, None) => {
            return Err(RecordedError::Empty {
                origin: side.label.clone(),
            })
        }
    };
    for r in &side.results {
        layout.learn(r);
    }
    let scored = side
        .results
        .iter()
        .map(|r| layout.score(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| RecordedError::Layout {
            origin: side.label.clone(),
            message: e.to_string(),
        })?;
    let mut out = Side::new(side.label.clone(), layout, scored);
    out.letters_why = letters_why(&side.results, pack.is_some());
    Ok(out)
}

/// Why the letters of recorded results are not known, when some carry none and their pack
/// (whose bands would give them) is not at hand with their digest.
fn letters_why(results: &[GradeResult], pack_found: bool) -> Option<String> {
    let first = results.iter().find(|r| r.grade.is_none())?;
    if pack_found {
        return None;
    }
    Some(if first.rubric.digest.is_empty() {
        "the results carry no letter and name no pack whose bands would give one".to_owned()
    } else {
        let short: String = first.rubric.digest.chars().take(19).collect();
        format!(
            "the results carry no letter, and their pack `{}` is not found with their digest `{short}…`",
            first.rubric.id
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A result as CLEO's own grader writes it: no rubric, no percent, no timestamp.
    fn bare(session: &str, total: f64) -> serde_json::Value {
        json!({
            "sessionId": session,
            "totalScore": total,
            "maxScore": 40,
            "dimensions": {
                "a": {"score": total.min(20.0), "max": 20, "evidence": []},
                "b": {"score": (total - 20.0).max(0.0), "max": 20, "evidence": []},
            },
            "flags": [],
        })
    }

    fn of(rubric: &str, version: &str, value: serde_json::Value) -> serde_json::Value {
        let mut value = value;
        value["rubric"] =
            json!({"id": rubric, "version": version, "digest": format!("d{version}")});
        value
    }

    fn lines(values: Vec<serde_json::Value>) -> Vec<(usize, bool, Result<GradeResult, String>)> {
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let (bare, read) = read_result(v, "expected");
                (i + 1, bare, read)
            })
            .collect()
    }

    #[test]
    fn a_bare_result_is_named_after_its_file_and_given_its_percent() {
        let (was_bare, read) = read_result(bare("s1", 25.0), "cleo-v1.expected");
        assert!(was_bare);
        let r = read.unwrap();
        assert_eq!(r.rubric.id, "cleo-v1.expected");
        assert_eq!(r.percent.map(|p| p.0), Some(62.5));
        assert_eq!(
            file_label(Path::new("a/cleo-v1.expected.jsonl")),
            "cleo-v1.expected"
        );
        let (was_bare, _) = read_result(of("p", "1", bare("s1", 25.0)), "x");
        assert!(!was_bare);
    }

    #[test]
    fn every_missing_field_is_named_at_once() {
        let (_, read) = read_result(json!({"sessionId": "s", "flags": []}), "x");
        assert_eq!(
            read.unwrap_err(),
            "missing fields `totalScore`, `maxScore`, `dimensions`"
        );
        assert_eq!(
            missing_fields(&json!({"sessionId": "s", "totalScore": 1, "maxScore": 2, "flags": []})),
            Some("missing field `dimensions`".to_owned())
        );
    }

    #[test]
    fn the_last_grade_of_a_session_stands_in_its_first_place() {
        let read = standing(
            "g.jsonl",
            lines(vec![bare("s1", 10.0), bare("s2", 20.0), bare("s1", 30.0)]),
        )
        .unwrap();
        let got: Vec<(&str, f64)> = read
            .results
            .iter()
            .map(|r| (r.session_id.as_str(), r.total_score.0))
            .collect();
        assert_eq!(got, [("s1", 30.0), ("s2", 20.0)]);
        assert_eq!((read.bare, read.repeats), (3, 1));
        assert_eq!(
            read.warnings("g.jsonl", "g", "the file"),
            [
                "3 results in `g.jsonl` name no rubric (CLEO's own grader writes them so); they are labelled `g` after the file",
                "`g.jsonl` grades 1 session more than once; the last grade of each is compared",
            ]
        );
    }

    #[test]
    fn a_percent_that_is_not_the_scores_is_refused_with_its_line() {
        let mut edited = bare("s2", 20.0);
        edited["percent"] = json!(90);
        let err = standing("g.jsonl", lines(vec![bare("s1", 10.0), edited])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "g.jsonl:2: not a grade result: its `percent` 90 is not `totalScore` 20 of `maxScore` 40 (50)"
        );
        let mut nothing = bare("s1", 10.0);
        nothing["percent"] = json!(null);
        let err = standing("g.jsonl", lines(vec![nothing])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "g.jsonl:1: not a grade result: its `percent` is null (nothing to grade) but its `maxScore` is 40"
        );
    }

    /// Why the results of `g.jsonl` given (by rubric and version) are refused.
    fn refusal(graded: &[(&str, &str, &str)]) -> String {
        let values = graded
            .iter()
            .map(|(rubric, version, session)| of(rubric, version, bare(session, 1.0)))
            .collect();
        standing("g.jsonl", lines(values)).unwrap_err().to_string()
    }

    #[test]
    fn results_of_two_rubrics_or_none_are_refused() {
        assert_eq!(
            refusal(&[("p", "1", "s1"), ("q", "1", "s2")]),
            "`g.jsonl` holds results of rubric `p` and of `q` (line 2); compare the results of one rubric per file"
        );
        assert_eq!(refusal(&[]), "results file `g.jsonl` has no results");
    }

    #[test]
    fn standing_grades_of_two_versions_are_refused_with_the_way_to_pick_one() {
        let graded = [
            ("p", "1", "s1"),
            ("p", "2", "s2"),
            ("p", "2", "s3"),
            // Replaced: a version no standing grade has is no mix.
            ("p", "3", "s4"),
            ("p", "2", "s4"),
        ];
        assert_eq!(
            refusal(&graded),
            "the last grades of the sessions in `g.jsonl` were made by different versions of `p` (1 by `p@1`, 3 by `p@2`); compare the grades of one version: `grade --list --grades g.jsonl --rubric p@VERSION --format jsonl > FILE`"
        );
    }

    fn recorded(label: &str, values: Vec<serde_json::Value>) -> RecordedSide<'static> {
        RecordedSide {
            label: label.to_owned(),
            results: standing(label, lines(values)).unwrap().results,
            pack: None,
        }
    }

    #[test]
    fn recorded_sides_without_a_pack_compare_by_session_and_say_what_they_guess() {
        let base = recorded("a.jsonl", vec![bare("s1", 20.0), bare("s2", 30.0)]);
        let cand = recorded("b.jsonl", vec![bare("s2", 10.0), bare("s1", 24.0)]);
        let mut warned = Vec::new();
        let report = compare_recorded(
            base,
            cand,
            &CompareOptions::default(),
            Hints::BINARY,
            &mut |w| warned.push(w),
        )
        .unwrap();
        assert_eq!(warned.len(), 2);
        assert!(warned[0].starts_with("`a.jsonl` and `b.jsonl` hold results without rule traces"));
        assert!(warned[1].contains("a session passes at 50%"));
        assert_eq!(report.summary.n, 2);
        assert_eq!(report.summary.mean_delta, (10.0 - 50.0) / 2.0);
        assert_eq!(
            report.summary.letters_unknown.as_deref(),
            Some("both sides: the results carry no letter and name no pack whose bands would give one")
        );
        assert!(report.rubric_diff.is_none());
        assert!(report.nothing_to_compare().is_none());
    }

    #[test]
    fn the_same_file_on_both_sides_is_named_once_and_a_pass_mark_given_is_not_guessed() {
        let side = || recorded("a.jsonl", vec![bare("s1", 20.0)]);
        let mut warned = Vec::new();
        let options = CompareOptions {
            pass_at: Some(60.0),
            ..CompareOptions::default()
        };
        let report = compare_recorded(side(), side(), &options, Hints::BINARY, &mut |w| {
            warned.push(w)
        })
        .unwrap();
        assert_eq!(warned.len(), 1);
        assert!(warned[0].starts_with("`a.jsonl` holds results without rule traces"));
        assert_eq!(report.summary.mean_delta, 0.0);
    }

    #[test]
    fn a_side_read_from_text_warns_as_a_file_does_and_names_a_line_that_is_not_json() {
        let text = format!("{}\n\n{}\n", bare("s1", 10.0), bare("s1", 20.0));
        let mut warned = Vec::new();
        let ReadSide { results, pack } = read_side(
            "runs/base.jsonl",
            &text,
            "the file",
            &[],
            PluginPolicy::default(),
            &mut |w| warned.push(w),
        )
        .unwrap();
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].total_score.0, 20.0);
        assert_eq!(results[0].rubric.id, "base");
        assert!(pack.is_none());
        assert_eq!(
            warned,
            [
                "2 results in `runs/base.jsonl` name no rubric (CLEO's own grader writes them so); they are labelled `base` after the file",
                "`runs/base.jsonl` grades 1 session more than once; the last grade of each is compared",
            ]
        );
        let text = format!("{}\n{{\"sessionId\"\n", bare("s1", 10.0));
        let Err(err) = read_side(
            "b.jsonl",
            &text,
            "the file",
            &[],
            PluginPolicy::default(),
            &mut |_| {},
        ) else {
            panic!("a line that is not JSON is refused");
        };
        assert!(
            matches!(&err, RecordedError::NotAResult { origin, line: 2, .. } if origin == "b.jsonl"),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .starts_with("b.jsonl:2: not a grade result: "),
            "{err}"
        );
    }

    #[test]
    fn a_shipped_pack_is_found_only_with_the_digest_its_results_name() {
        let pack = crate::load_pack("cleo-v1", &[]).unwrap();
        let mut result = of("cleo-v1", &pack.version, bare("s1", 10.0));
        result["rubric"]["digest"] = json!(pack.digest);
        let (_, read) = read_result(result, "x");
        let mut results = vec![read.unwrap()];
        let found = pack_of(&results, &[], PluginPolicy::default());
        assert_eq!(found.map(|(p, _)| p.id), Some("cleo-v1".to_owned()));
        results[0].rubric.digest = "sha256:other".to_owned();
        assert!(pack_of(&results, &[], PluginPolicy::default()).is_none());
    }
}
