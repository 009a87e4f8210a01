//! `compare`: cleo-v1 against cleo-v2 on the conformance corpus, and the invariants every
//! comparison keeps (attribution sums, swapping sides, comparing a pack with itself).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use std::path::PathBuf;

use grade_engine::compare::{
    self, rubric_diff, CompareOptions, Comparison, Layout, PackSource, Pairing, Side, Status,
    TermKind,
};
use grade_engine::result::{DimensionScore, RuleTrace, Score};
use grade_engine::{CompiledPack, GradeResult, SessionFilter};
use indexmap::IndexMap;
use proptest::prelude::*;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/conformance/audit.jsonl")
}

fn pack(id: &str) -> (CompiledPack, grade_engine::PackFiles) {
    let files = grade_engine::locate_pack(id, &[]).expect("a shipped pack");
    (grade_engine::compile_pack(&files).expect("compiles"), files)
}

fn options() -> CompareOptions {
    CompareOptions {
        resamples: 2_000,
        ..CompareOptions::default()
    }
}

/// Every session's per-rule deltas add up to its delta, and the rules' mean deltas to the mean.
fn assert_attribution_sums(c: &Comparison) {
    for s in &c.sessions {
        let sum: f64 = s.rules.iter().map(|r| r.delta).sum();
        assert!(
            (sum - s.delta).abs() < 1e-6,
            "session `{}`: rules sum to {sum}, delta {}",
            s.session_id,
            s.delta
        );
    }
    let total: f64 = c.rules.iter().map(|r| r.mean_delta).sum();
    assert!(
        (total - c.summary.mean_delta).abs() < 1e-6,
        "rules sum to {total}, mean delta {}",
        c.summary.mean_delta
    );
}

/// Grading the corpus twice is most of these tests' time in a debug build: it is done once.
fn cleo_sides() -> (Side, Side, Option<grade_engine::compare::RubricDiff>) {
    static SIDES: std::sync::OnceLock<(Side, Side, Option<grade_engine::compare::RubricDiff>)> =
        std::sync::OnceLock::new();
    SIDES.get_or_init(grade_cleo_sides).clone()
}

fn grade_cleo_sides() -> (Side, Side, Option<grade_engine::compare::RubricDiff>) {
    let (v1, f1) = pack("cleo-v1");
    let (v2, f2) = pack("cleo-v2");
    let (l1, l2) = (Layout::of_pack(&v1), Layout::of_pack(&v2));
    let mut graded = compare::grade_source(
        &[(&v1, &l1), (&v2, &l2)],
        &corpus(),
        None,
        &SessionFilter::All,
        None,
        false,
        None,
    )
    .expect("the corpus reads")
    .results;
    let (base, e1) = compare::sides_of("cleo-v1", &l1, &mut graded, 0);
    let (cand, e2) = compare::sides_of("cleo-v2", &l2, &mut graded, 1);
    assert!(e1.is_empty() && e2.is_empty());
    let diff = rubric_diff(
        PackSource {
            pack: &v1,
            files: &f1,
        },
        PackSource {
            pack: &v2,
            files: &f2,
        },
    );
    (base, cand, Some(diff))
}

#[test]
fn cleo_v1_against_v2_names_the_rules_that_changed_grades() {
    let (base, cand, diff) = cleo_sides();
    let c = compare::compare(&base, &cand, &Pairing::BySessionId, diff, &options());
    assert_eq!(c.summary.n, base.sessions.len());
    assert!(c.summary.n > 250);
    assert!(c.unmatched.baseline.is_empty() && c.unmatched.candidate.is_empty());
    assert_attribution_sums(&c);
    let changed: Vec<_> = c.sessions.iter().filter(|s| s.delta != 0.0).collect();
    assert!(
        !changed.is_empty(),
        "cleo-v2 grades some corpus sessions differently"
    );
    for s in &changed {
        assert!(
            !s.rules.is_empty(),
            "session `{}` changed without a rule",
            s.session_id
        );
    }
    // The gateway rule was replaced: removed in v2, added under another id.
    let status = |rule: &str| c.rules.iter().find(|r| r.rule == rule).map(|r| r.status);
    assert_eq!(status("mcp-query"), Some(Status::Removed));
    assert_eq!(status("query-gateway"), Some(Status::Added));
    assert_eq!(
        status("lead-self-implementation-bypass"),
        Some(Status::Added)
    );
    let diff = c.rubric_diff.as_ref().expect("a diff");
    assert!(diff
        .rules
        .iter()
        .any(|r| r.rule == "delegation-count" && r.status == Status::Added));
    // Rules that read the renamed selector through a template changed texts only.
    assert!(diff
        .rules
        .iter()
        .all(|r| r.status != Status::Changed || !r.changes.is_empty()));
}

#[test]
fn a_pack_compared_with_itself_changes_nothing() {
    let (base, _, _) = cleo_sides();
    let c = compare::compare(&base, &base, &Pairing::BySessionId, None, &options());
    assert_eq!(c.summary.mean_delta, 0.0);
    assert_eq!(c.summary.ci95, Some([0.0, 0.0]));
    assert_eq!(c.summary.wilcoxon_p, Some(1.0));
    assert_eq!(c.summary.sign_test_p, Some(1.0));
    assert_eq!(c.summary.mcnemar_p, Some(1.0));
    let flips = c.summary.flips.expect("paired");
    assert_eq!((flips.pass_to_fail, flips.fail_to_pass), (0, 0));
    assert!(c.rules.is_empty());
    assert!(c
        .sessions
        .iter()
        .all(|s| s.delta == 0.0 && s.rules.is_empty()));
}

#[test]
fn swapping_sides_negates_every_delta_and_mirrors_flips() {
    let (base, cand, _) = cleo_sides();
    let ab = compare::compare(&base, &cand, &Pairing::BySessionId, None, &options());
    let ba = compare::compare(&cand, &base, &Pairing::BySessionId, None, &options());
    assert_swapped(&ab, &ba);
}

fn assert_swapped(ab: &Comparison, ba: &Comparison) {
    assert!((ab.summary.mean_delta + ba.summary.mean_delta).abs() < 1e-9);
    let (f, g) = (
        ab.summary.flips.expect("paired"),
        ba.summary.flips.expect("paired"),
    );
    assert_eq!(
        (f.pass_to_fail, f.fail_to_pass),
        (g.fail_to_pass, g.pass_to_fail)
    );
    assert_eq!(ab.summary.improved, ba.summary.regressed);
    assert_eq!(ab.summary.wilcoxon_p, ba.summary.wilcoxon_p);
    assert_eq!(ab.summary.mcnemar_p, ba.summary.mcnemar_p);
    for s in &ab.sessions {
        let t = ba
            .sessions
            .iter()
            .find(|t| t.session_id == s.session_id)
            .expect("the same pairs");
        assert!((s.delta + t.delta).abs() < 1e-9);
    }
}

#[test]
fn arms_pair_by_a_key_and_unpaired_arms_use_rank_tests() {
    let (base, cand, _) = cleo_sides();
    let c = compare::compare(&base, &cand, &Pairing::Unpaired, None, &options());
    assert!(!c.paired);
    assert!(c.summary.mann_whitney_p.is_some() && c.summary.cliffs_delta.is_some());
    assert!(c.summary.wilcoxon_p.is_none() && c.summary.flips.is_none());
    assert!(c.sessions.is_empty());
    assert_attribution_sums(&c);
}

#[test]
fn default_pass_mark_is_the_lowest_band_with_half_the_points() {
    let (v1, _) = pack("cleo-v1");
    assert_eq!(compare::default_pass_at(&v1.bands), 60.0);
}

/// A result as the engine would make it for `pack`, from per-rule points (with explain).
fn fake_result(pack: &CompiledPack, id: &str, points: &[i32], empty: bool) -> GradeResult {
    let mut dimensions = IndexMap::new();
    let mut explain = IndexMap::new();
    let mut total = 0.0;
    let mut k = 0;
    for d in &pack.dimensions {
        let mut score = d.start;
        let mut traces = Vec::new();
        for r in &d.rules {
            let p = f64::from(points.get(k).copied().unwrap_or(0));
            k += 1;
            score += p;
            traces.push(RuleTrace {
                rule: r.id.clone(),
                points: Score(p),
                evidence: Vec::new(),
                flags: Vec::new(),
                entries: Vec::new(),
                trajectories: Vec::new(),
            });
        }
        let clamped = if empty {
            0.0
        } else {
            score.max(d.floor).min(d.cap)
        };
        total += clamped;
        dimensions.insert(
            d.id.clone(),
            DimensionScore {
                score: Score(clamped),
                max: Score(d.max),
                ..DimensionScore::default()
            },
        );
        if !empty {
            explain.insert(d.id.clone(), traces);
        }
    }
    let max = pack.max_score();
    let percent = grade_engine::result::percent_of(total, max);
    GradeResult {
        session_id: id.to_owned(),
        task_id: None,
        total_score: Score(total),
        max_score: Score(max),
        dimensions,
        flags: Vec::new(),
        timestamp: String::new(),
        entry_count: 1,
        evaluator: "auto".to_owned(),
        rubric: grade_engine::result::RubricRef {
            id: pack.id.clone(),
            version: pack.version.clone(),
            digest: pack.digest.clone(),
        },
        percent: (max > 0.0).then_some(Score(percent)),
        grade: pack.band_for(percent).map(str::to_owned),
        explain: Some(explain),
        judge: None,
        panel: None,
        skipped_lines: 0,
        source: None,
    }
}

fn side_of(pack: &CompiledPack, sessions: &[(Vec<i32>, bool)]) -> Side {
    let layout = Layout::of_pack(pack);
    let scored = sessions
        .iter()
        .enumerate()
        .map(|(i, (points, empty))| {
            layout
                .score(&fake_result(pack, &format!("s{i}"), points, *empty))
                .expect("fits its own pack")
        })
        .collect();
    Side::new(pack.id.clone(), layout, scored)
}

fn sessions() -> impl Strategy<Value = Vec<(Vec<i32>, bool)>> {
    prop::collection::vec(
        (
            prop::collection::vec(-15i32..25, 14),
            prop::bool::weighted(0.05),
        ),
        1..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Floors and caps clamp many of these scores: the clamp term keeps the sums exact.
    #[test]
    fn attribution_sums_and_swap_mirrors(a in sessions(), b in sessions()) {
        let (v1, _) = pack("cleo-v1");
        let (v2, _) = pack("cleo-v2");
        let n = a.len().min(b.len());
        let base = side_of(&v1, &a[..n]);
        let cand = side_of(&v2, &b[..n]);
        let opts = CompareOptions { resamples: 200, ..CompareOptions::default() };
        let ab = compare::compare(&base, &cand, &Pairing::BySessionId, None, &opts);
        let ba = compare::compare(&cand, &base, &Pairing::BySessionId, None, &opts);
        assert_attribution_sums(&ab);
        assert_attribution_sums(&ba);
        assert_swapped(&ab, &ba);
        let un = compare::compare(&base, &cand, &Pairing::Unpaired, None, &opts);
        assert_attribution_sums(&un);
        prop_assert!(ab.rules.iter().all(|r| r.kind != TermKind::Base));
    }

    #[test]
    fn self_compare_is_null(a in sessions()) {
        let (v1, _) = pack("cleo-v1");
        let side = side_of(&v1, &a);
        let opts = CompareOptions { resamples: 200, ..CompareOptions::default() };
        let c = compare::compare(&side, &side, &Pairing::BySessionId, None, &opts);
        prop_assert_eq!(c.summary.mean_delta, 0.0);
        prop_assert_eq!(c.summary.wilcoxon_p, Some(1.0));
        prop_assert_eq!(c.summary.mcnemar_p, Some(1.0));
        let f = c.summary.flips.expect("paired");
        prop_assert_eq!((f.pass_to_fail, f.fail_to_pass), (0, 0));
    }
}
