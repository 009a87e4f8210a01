//! Comparing two sets of grades: two rubric versions on the same sessions, two files of
//! recorded results, or two agent arms graded by one rubric.
//!
//! Each side's grades are taken apart into terms ([`Layout`], [`Scored`]); [`compare`] pairs
//! the sessions (by session id, by a key such as `metadata.taskId`, or not at all), and
//! reports the change of score with its confidence interval and tests, the pass/fail flips,
//! the letter transitions, the change per dimension, and for every rule the points it moved.
//! For every paired session the per-rule deltas add up to the session's delta.
//!
//! ```no_run
//! use grade_engine::compare::{self, CompareOptions, Layout, Pairing};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let v1 = grade_engine::load_pack("cleo-v1", &[])?;
//! let v2 = grade_engine::load_pack("cleo-v2", &[])?;
//! let (l1, l2) = (Layout::of_pack(&v1), Layout::of_pack(&v2));
//! let read = compare::grade_source(
//!     &[(&v1, &l1), (&v2, &l2)],
//!     std::path::Path::new("audit.jsonl"),
//!     None,
//!     &grade_engine::SessionFilter::All,
//!     None,
//!     false,
//!     None,
//! )?;
//! for warning in &read.warnings {
//!     eprintln!("warning: {warning}");
//! }
//! let mut graded = read.results;
//! let (base, _) = compare::sides_of("cleo-v1", &l1, &mut graded, 0);
//! let (cand, _) = compare::sides_of("cleo-v2", &l2, &mut graded, 1);
//! let report = compare::compare(&base, &cand, &Pairing::BySessionId, None, &CompareOptions::default());
//! println!("mean change {:+.2} points", report.summary.mean_delta);
//! # Ok(()) }
//! ```

pub(crate) mod breakdown;
mod deltas;
pub(crate) mod diff;
mod grading;
mod json;
mod pairing;
pub mod recorded;
pub(crate) mod stats;
mod two_packs;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use indexmap::IndexMap;
use serde::Serialize;

pub use breakdown::{DimensionInfo, Layout, LayoutMismatch, Scored, TermKey, TermKind};
use deltas::{paired, unpaired};
pub use diff::{rubric_diff, PackSource, RubricDiff, Status};
pub use grading::{grade_source, side_label, sides_of, GradeError, GradedSession};
pub use json::write_json;
use pairing::{letter_order, merge_terms};
pub use two_packs::{judged_refusal, NoEntriesFor, PacksCompared, TwoPacks};

use crate::pack::Band;
use crate::result::RubricRef;

/// Resamples of the bootstrap when none are asked for.
pub const DEFAULT_RESAMPLES: usize = 10_000;

/// A change smaller than this (in percentage points) is no change: it is what floating-point
/// sums of the same points in another order leave behind.
const EPSILON: f64 = 1e-9;

/// How a comparison is computed.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    /// The percent a session needs to pass; by default the baseline pack's [`default_pass_at`].
    pub pass_at: Option<f64>,
    /// The seed of the bootstrap.
    pub seed: u64,
    /// Bootstrap resamples.
    pub resamples: usize,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            pass_at: None,
            seed: 0,
            resamples: DEFAULT_RESAMPLES,
        }
    }
}

/// The pass mark of a pack: the lowest band that needs at least half the points (C = 60 for
/// the shipped packs, whose D band at 45 is below half); 50 for a pack without such a band.
pub fn default_pass_at(bands: &[Band]) -> f64 {
    bands
        .iter()
        .map(|b| b.min_percent)
        .filter(|&m| m >= 50.0)
        .fold(None, |low: Option<f64>, m| {
            Some(low.map_or(m, |l| l.min(m)))
        })
        .unwrap_or(50.0)
}

/// One side of a comparison: a label, what its grades are made of, and the grades.
#[derive(Debug, Clone)]
pub struct Side {
    /// The side's name in reports (`baseline`, a pack id, a file).
    pub label: String,
    /// What the side's grades are made of.
    pub layout: Layout,
    /// The side's graded sessions.
    pub sessions: Vec<Scored>,
    /// Per session (same order), the value sessions are paired by with [`Pairing::ByKey`].
    pub keys: Vec<Option<String>>,
    /// Why the side's letters are not known, when its results carry none and its pack's
    /// bands are not at hand (said in place of letter changes).
    pub letters_why: Option<String>,
}

impl Side {
    /// A side without pairing keys.
    pub fn new(label: impl Into<String>, layout: Layout, sessions: Vec<Scored>) -> Side {
        Side {
            label: label.into(),
            layout,
            keys: Vec::new(),
            sessions,
            letters_why: None,
        }
    }
}

/// How sessions of the two sides are matched.
#[derive(Debug, Clone, PartialEq)]
pub enum Pairing {
    /// The same session id on both sides.
    BySessionId,
    /// The same key (named here, e.g. `metadata.taskId`) on both sides; see [`Side::keys`].
    ByKey(String),
    /// Two independent samples.
    Unpaired,
}

/// Sessions left unpaired, by side.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unmatched {
    /// Sessions only the baseline has (or whose key the candidate lacks).
    pub baseline: Vec<String>,
    /// Sessions only the candidate has (or whose key the baseline lacks).
    pub candidate: Vec<String>,
    /// Sessions without the pairing key, or whose key names more than one session on its side.
    pub unkeyed: Vec<String>,
    /// Sessions with nothing to grade (no dimension applies) on either side: they have no
    /// score, and are left out of every figure.
    pub nothing_to_grade: Vec<String>,
}

/// Sessions a comparison left out of every figure ([`Comparison::left_out`]): a caller tells
/// of them before the report, which lists them under `unmatched`, so that a mean over fewer
/// sessions than were given is not read as a mean over all of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeftOut<'a> {
    /// Why they were left out: `only in the baseline`, `only in the candidate`, `with
    /// nothing to grade (no dimension applies)`.
    pub why: &'static str,
    /// Their ids, in the report's order.
    pub sessions: &'a [String],
}

impl LeftOut<'_> {
    /// The warning, the first sessions' ids shown by `show` ([`preview`]): the binary
    /// escapes the control characters an id may hold before it reaches a terminal.
    pub fn warning(&self, show: impl Fn(&str) -> Cow<'_, str>) -> String {
        let n = self.sessions.len();
        format!(
            "{n} session{} {} ({}): listed under `unmatched`, not compared",
            if n == 1 { "" } else { "s" },
            self.why,
            preview(self.sessions, show)
        )
    }
}

impl fmt::Display for LeftOut<'_> {
    /// The warning with the ids as they are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.warning(|id| Cow::Borrowed(id)))
    }
}

/// Up to five session ids, each shown by `show` in backticks, and `…` for the rest.
pub fn preview(ids: &[String], show: impl Fn(&str) -> Cow<'_, str>) -> String {
    let shown: Vec<String> = ids
        .iter()
        .take(5)
        .map(|id| format!("`{}`", show(id)))
        .collect();
    if ids.len() > 5 {
        format!("{}, …", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// One side of a comparison, as reported.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SideInfo {
    /// The side's name.
    pub label: String,
    /// The pack of the side's grades.
    pub rubric: RubricRef,
    /// How many sessions the side has.
    pub sessions: usize,
}

/// Paired sessions whose pass mark verdict changed.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Flips {
    /// Passed in the baseline, failed in the candidate.
    pub pass_to_fail: usize,
    /// Failed in the baseline, passed in the candidate.
    pub fail_to_pass: usize,
}

/// A count per side.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PerSide {
    /// The baseline's count.
    pub baseline: usize,
    /// The candidate's count.
    pub candidate: usize,
}

/// The comparison of the totals.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Paired sessions; for unpaired arms, the sessions of both.
    pub n: usize,
    /// Whether sessions were paired.
    pub paired: bool,
    /// Sessions of the baseline compared.
    pub n_baseline: usize,
    /// Sessions of the candidate compared.
    pub n_candidate: usize,
    /// The baseline's mean percentage.
    pub mean_baseline: Option<f64>,
    /// The candidate's mean percentage.
    pub mean_candidate: Option<f64>,
    /// Mean of the paired deltas, or difference of the means.
    pub mean_delta: f64,
    /// 95% bootstrap interval of `meanDelta`.
    pub ci95: Option<[f64; 2]>,
    /// Sessions at or above the pass mark, per side.
    pub passed: PerSide,
    /// Letter grade counts, per side.
    pub grade_counts: GradeCounts,
    // Paired only.
    /// Paired: Wilcoxon signed-rank p-value of the deltas.
    pub wilcoxon_p: Option<f64>,
    /// Paired: sign test p-value.
    pub sign_test_p: Option<f64>,
    /// Paired: sessions that scored higher in the candidate.
    pub improved: Option<usize>,
    /// Paired: sessions that scored lower in the candidate.
    pub regressed: Option<usize>,
    /// Paired: sessions that scored the same.
    pub unchanged: Option<usize>,
    /// Paired: pass mark verdicts that changed.
    pub flips: Option<Flips>,
    /// Paired: McNemar's exact p-value of the flips.
    pub mcnemar_p: Option<f64>,
    /// Letter transitions, `"A->B": count`.
    pub grades: Option<IndexMap<String, usize>>,
    /// Paired: why letters are not known, when a compared session of either side has none
    /// (results that carry no letter, of a pack whose bands are not at hand); the
    /// transitions then count those sessions under `-`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub letters_unknown: Option<String>,
    // Unpaired only.
    /// Unpaired: Mann–Whitney U p-value.
    pub mann_whitney_p: Option<f64>,
    /// Unpaired: Cliff's delta of the candidate against the baseline.
    pub cliffs_delta: Option<f64>,
}

/// Letter grade counts of each side.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GradeCounts {
    /// Letter → sessions, in the baseline.
    pub baseline: IndexMap<String, usize>,
    /// Letter → sessions, in the candidate.
    pub candidate: IndexMap<String, usize>,
}

/// How one dimension changed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DimensionDelta {
    /// The dimension's id.
    pub dimension: String,
    /// The dimension's name.
    pub name: String,
    /// How the packs' dimensions differ.
    pub status: Status,
    /// Sessions compared.
    pub n: usize,
    /// Scores as a percentage of the dimension's maximum.
    pub mean_baseline: Option<f64>,
    /// The candidate's mean, as a percentage of the maximum.
    pub mean_candidate: Option<f64>,
    /// The mean change (percentage points).
    pub mean_delta: Option<f64>,
    /// 95% bootstrap interval of `meanDelta`.
    pub ci95: Option<[f64; 2]>,
    /// Wilcoxon (paired) or Mann–Whitney (unpaired).
    pub p: Option<f64>,
    /// Paired: sessions whose dimension scored higher in the candidate.
    pub improved: Option<usize>,
    /// Paired: sessions whose dimension scored lower in the candidate.
    pub regressed: Option<usize>,
}

/// How one rule (or a dimension's own term) moved the totals.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleDelta {
    /// The dimension of the term.
    pub dimension: String,
    /// The rule id, or the term's label.
    pub rule: String,
    /// What the term is.
    pub kind: TermKind,
    /// How the packs' rules differ.
    pub status: Status,
    /// Paired sessions whose points from this term changed.
    pub sessions_changed: Option<usize>,
    /// The term's deltas summed over the paired sessions (percentage points).
    pub points_moved: Option<f64>,
    /// The positive deltas summed (percentage points).
    pub points_gained: Option<f64>,
    /// The negative deltas summed (percentage points).
    pub points_lost: Option<f64>,
    /// The term's share of `summary.meanDelta`: these add up to it.
    pub mean_delta: f64,
}

/// One term's change in one session.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleChangeOf {
    /// The dimension of the term.
    pub dimension: String,
    /// The rule id, or the term's label.
    pub rule: String,
    /// The change, in percentage points of the total.
    pub delta: f64,
}

/// How one paired session changed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionDelta {
    /// The baseline's session.
    pub session_id: String,
    /// The candidate's session, where pairing by key matched another session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate_session_id: Option<String>,
    /// The key the sessions were paired by, when paired by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The baseline's percentage.
    pub baseline: f64,
    /// The candidate's percentage.
    pub candidate: f64,
    /// `candidate - baseline`, in percentage points.
    pub delta: f64,
    /// The baseline's letter.
    pub baseline_grade: Option<String>,
    /// The candidate's letter.
    pub candidate_grade: Option<String>,
    /// The terms that changed; they add up to `delta`.
    pub rules: Vec<RuleChangeOf>,
}

/// The whole comparison, as `grade compare --format json` prints it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// The baseline side.
    pub baseline: SideInfo,
    /// The candidate side.
    pub candidate: SideInfo,
    /// Whether sessions were paired.
    pub paired: bool,
    /// What sessions were paired by: `sessionId`, a key, or nothing.
    pub pair_by: Option<String>,
    /// The percentage a session needs to pass.
    pub pass_at: f64,
    /// The bootstrap's seed.
    pub seed: u64,
    /// The bootstrap's resamples.
    pub resamples: usize,
    /// The comparison of the totals.
    pub summary: Summary,
    /// Per dimension.
    pub dimensions: Vec<DimensionDelta>,
    /// Per rule, the terms that moved the total most first.
    pub rules: Vec<RuleDelta>,
    /// Paired sessions, the most changed first.
    pub sessions: Vec<SessionDelta>,
    /// Sessions left unpaired.
    pub unmatched: Unmatched,
    /// How the packs differ, when two packs were compared.
    pub rubric_diff: Option<RubricDiff>,
    /// Score histograms of the compared sessions of each side.
    pub distributions: Distributions,
}

/// Sessions per score bin: bin i holds scores in `[i·binWidth, (i+1)·binWidth)`, the last
/// bin also 100 (and scores outside 0–100 go to the nearest end).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Distributions {
    /// The width of a bin, in percentage points.
    pub bin_width: f64,
    /// Sessions per bin, in the baseline.
    pub baseline: Vec<usize>,
    /// Sessions per bin, in the candidate.
    pub candidate: Vec<usize>,
}

const BIN_WIDTH: f64 = 5.0;

fn histogram(scores: impl Iterator<Item = f64>) -> Vec<usize> {
    let bins = (100.0 / BIN_WIDTH) as usize;
    let mut out = vec![0; bins];
    for s in scores {
        let i = (s / BIN_WIDTH).floor().clamp(0.0, (bins - 1) as f64) as usize;
        out[i] += 1;
    }
    out
}

/// A condition on a comparison that fails a CI run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FailOn {
    /// The whole 95% interval of the mean change lies below zero.
    Regression,
    /// Any session goes from pass to fail.
    Flips,
    /// The mean change is below minus this many points.
    Drop(f64),
}

impl FailOn {
    /// A rule as written: `regression`, `flips` or `drop=X` with X a number of points ≥ 0;
    /// `None` for anything else.
    pub fn parse(text: &str) -> Option<FailOn> {
        match text {
            "regression" => Some(FailOn::Regression),
            "flips" => Some(FailOn::Flips),
            other => match other.strip_prefix("drop=").map(str::parse::<f64>) {
                Some(Ok(x)) if x.is_finite() && x >= 0.0 => Some(FailOn::Drop(x)),
                _ => None,
            },
        }
    }
}

/// What a comparison makes of the rules that fail a CI run ([`Comparison::verdict`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    /// Why a rule asked for could not be judged (a regression without an interval): passing
    /// it without a word would read as "no regression".
    pub unjudged: Option<String>,
    /// Why the comparison fails, one reason per rule it fails, in the rules' order.
    pub failures: Vec<String>,
}

impl Comparison {
    /// The comparison judged by `rules`: each rule it fails, and a rule it cannot judge.
    pub fn verdict(&self, rules: &[FailOn]) -> Verdict {
        let s = &self.summary;
        // One session (or one on a side) gives no interval: the gate has nothing to judge.
        let unjudged = (rules.contains(&FailOn::Regression) && s.ci95.is_none()).then(|| {
            format!(
                "`--fail-on regression` is not judged: the mean change has no 95% interval with {}",
                if self.paired {
                    format!(
                        "{} paired session{} (it needs 2 or more)",
                        s.n,
                        if s.n == 1 { "" } else { "s" }
                    )
                } else {
                    format!(
                        "{} and {} sessions in the arms (it needs 2 or more in each)",
                        s.n_baseline, s.n_candidate
                    )
                }
            )
        });
        Verdict {
            unjudged,
            failures: rules.iter().filter_map(|r| self.fails(*r)).collect(),
        }
    }

    /// The sessions left out of every figure, by why, for the warnings a caller gives
    /// before the report ([`LeftOut::warning`]): only in one side, or with nothing to grade.
    /// Sessions of an arm that cannot be paired are the arm's to tell of, as it is read.
    pub fn left_out(&self) -> Vec<LeftOut<'_>> {
        let u = &self.unmatched;
        [
            ("only in the baseline", &u.baseline),
            ("only in the candidate", &u.candidate),
            (
                "with nothing to grade (no dimension applies)",
                &u.nothing_to_grade,
            ),
        ]
        .into_iter()
        .filter(|(_, ids)| !ids.is_empty())
        .map(|(why, ids)| LeftOut { why, sessions: ids })
        .collect()
    }

    /// Why there is nothing to compare, when a side has no mean: a comparison of nothing
    /// would pass every gate in silence, so a caller refuses it with this reason.
    pub fn nothing_to_compare(&self) -> Option<&'static str> {
        if self.summary.mean_baseline.is_some() && self.summary.mean_candidate.is_some() {
            return None;
        }
        Some(
            if self.paired && self.pair_by.as_deref() != Some("sessionId") {
                "no session could be paired: each arm needs a session with the same key, graded, that no other session of the arm shares"
            } else if self.paired
                && !self.unmatched.baseline.is_empty()
                && !self.unmatched.candidate.is_empty()
                && self.unmatched.nothing_to_grade.is_empty()
            {
                // Both sides were graded; what is missing is a session they share.
                "the two sides have no session id in common"
            } else if self.paired {
                "no session is graded on both sides"
            } else if self.summary.mean_baseline.is_none() {
                "the baseline has no graded session"
            } else {
                "the candidate has no graded session"
            },
        )
    }

    /// Why the comparison fails `rule`, or `None` when it holds.
    pub fn fails(&self, rule: FailOn) -> Option<String> {
        let s = &self.summary;
        match rule {
            FailOn::Regression => match s.ci95 {
                Some([low, high]) if high < 0.0 => Some(format!(
                    "regression: the 95% interval of the mean change, [{}, {}], lies below 0",
                    fmt2(low),
                    fmt2(high)
                )),
                _ => None,
            },
            FailOn::Flips => match s.flips {
                Some(f) if f.pass_to_fail > 0 => Some(format!(
                    "{} session{} went from pass to fail at {}%",
                    f.pass_to_fail,
                    if f.pass_to_fail == 1 { "" } else { "s" },
                    fmt2(self.pass_at)
                )),
                _ => None,
            },
            FailOn::Drop(x) => (s.mean_delta < -x).then(|| {
                format!(
                    "the mean change, {}, is below -{}",
                    fmt2(s.mean_delta),
                    fmt2(x)
                )
            }),
        }
    }
}

fn fmt2(v: f64) -> String {
    let r = (v * 100.0).round() / 100.0;
    crate::entry::js_number(if r == 0.0 { 0.0 } else { r })
}

fn snap(v: f64) -> f64 {
    if v.abs() < EPSILON {
        0.0
    } else {
        v
    }
}

/// Compares two sides. `diff` (from [`rubric_diff`]) marks rules as changed; without it a
/// rule is the same when both packs have it.
pub fn compare(
    base: &Side,
    cand: &Side,
    pairing: &Pairing,
    diff: Option<RubricDiff>,
    options: &CompareOptions,
) -> Comparison {
    let pass_at = options
        .pass_at
        .unwrap_or_else(|| default_pass_at(&base.layout.bands));
    let merged = merge_terms(&base.layout, &cand.layout, diff.as_ref());
    let order = letter_order(base, cand);
    let info = |s: &Side| SideInfo {
        label: s.label.clone(),
        rubric: s.layout.rubric.clone(),
        sessions: s.sessions.len(),
    };
    let passes = |s: &Scored| s.reported_percent >= pass_at;
    let (base_all, cand_all) = (base, cand);
    let (base, cand, nothing_to_grade) = pairing::graded_only(base, cand, pairing);
    let (base, cand) = (base.as_ref(), cand.as_ref());
    let mut report = Comparison {
        baseline: info(base_all),
        candidate: info(cand_all),
        paired: *pairing != Pairing::Unpaired,
        pair_by: match pairing {
            Pairing::BySessionId => Some("sessionId".to_owned()),
            Pairing::ByKey(k) => Some(k.clone()),
            Pairing::Unpaired => None,
        },
        pass_at,
        seed: options.seed,
        resamples: options.resamples,
        summary: Summary {
            n: 0,
            paired: *pairing != Pairing::Unpaired,
            n_baseline: base_all.sessions.len(),
            n_candidate: cand_all.sessions.len(),
            mean_baseline: None,
            mean_candidate: None,
            mean_delta: 0.0,
            ci95: None,
            passed: PerSide::default(),
            grade_counts: GradeCounts::default(),
            wilcoxon_p: None,
            sign_test_p: None,
            improved: None,
            regressed: None,
            unchanged: None,
            flips: None,
            mcnemar_p: None,
            grades: None,
            letters_unknown: None,
            mann_whitney_p: None,
            cliffs_delta: None,
        },
        dimensions: Vec::new(),
        rules: Vec::new(),
        sessions: Vec::new(),
        unmatched: Unmatched::default(),
        rubric_diff: None,
        distributions: Distributions::default(),
    };

    report.rubric_diff = diff;
    if *pairing == Pairing::Unpaired {
        unpaired(base, cand, &merged, &order, options, passes, &mut report);
    } else {
        paired(
            base,
            cand,
            pairing,
            &merged,
            &order,
            options,
            passes,
            &mut report,
        );
    }
    report.unmatched.nothing_to_grade = nothing_to_grade;
    report
}

#[cfg(test)]
mod tests;
