//! The changes a comparison reports: per session, per dimension and per rule, for paired
//! sides (each session against its twin) and unpaired ones (two distributions).

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::pairing::{grade_counts, pair, Merged, MergedTerm};
use super::*;

#[allow(
    clippy::too_many_arguments,
    reason = "each argument is the output of a different step of the comparison"
)]
pub(super) fn paired(
    base: &Side,
    cand: &Side,
    pairing: &Pairing,
    merged: &Merged,
    order: &[String],
    options: &CompareOptions,
    passes: impl Fn(&Scored) -> bool,
    report: &mut Comparison,
) {
    let (pairs, unmatched) = pair(base, cand, pairing);
    report.unmatched = unmatched;
    report.distributions = Distributions {
        bin_width: BIN_WIDTH,
        baseline: histogram(pairs.iter().map(|p| base.sessions[p.0].percent)),
        candidate: histogram(pairs.iter().map(|p| cand.sessions[p.1].percent)),
    };
    let n = pairs.len();
    let b_idx: Vec<usize> = pairs.iter().map(|p| p.0).collect();
    let c_idx: Vec<usize> = pairs.iter().map(|p| p.1).collect();
    let b_pct: Vec<f64> = b_idx.iter().map(|&i| base.sessions[i].percent).collect();
    let c_pct: Vec<f64> = c_idx.iter().map(|&i| cand.sessions[i].percent).collect();
    let deltas: Vec<f64> = b_pct.iter().zip(&c_pct).map(|(b, c)| snap(c - b)).collect();

    let s = &mut report.summary;
    s.n = n;
    if n > 0 {
        s.mean_baseline = Some(stats::mean(&b_pct));
        s.mean_candidate = Some(stats::mean(&c_pct));
    }
    s.mean_delta = stats::mean(&deltas);
    s.ci95 = stats::bootstrap_mean_ci(&deltas, options.resamples, options.seed);
    s.wilcoxon_p = stats::wilcoxon(&deltas);
    let improved = deltas.iter().filter(|&&d| d > 0.0).count();
    let regressed = deltas.iter().filter(|&&d| d < 0.0).count();
    s.improved = Some(improved);
    s.regressed = Some(regressed);
    s.unchanged = Some(n - improved - regressed);
    s.sign_test_p = Some(stats::binom_test(
        improved as u64,
        (improved + regressed) as u64,
    ));
    let mut flips = Flips::default();
    let mut passed = PerSide::default();
    let mut transitions: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let rank = |g: &Option<String>| {
        g.as_ref()
            .and_then(|g| order.iter().position(|o| o == g))
            .unwrap_or(order.len())
    };
    for &(i, j) in &pairs {
        let (b, c) = (&base.sessions[i], &cand.sessions[j]);
        let (pb, pc) = (passes(b), passes(c));
        passed.baseline += usize::from(pb);
        passed.candidate += usize::from(pc);
        if pb && !pc {
            flips.pass_to_fail += 1;
        }
        if !pb && pc {
            flips.fail_to_pass += 1;
        }
        *transitions
            .entry((rank(&b.grade), rank(&c.grade)))
            .or_insert(0) += 1;
    }
    // A session without a letter is counted under `-`; that letters are not known is said,
    // or a file of CLEO's own grades (which carry none) reads as "no letter changed".
    let unknown: Vec<(&str, String)> = [(base, &b_idx), (cand, &c_idx)]
        .into_iter()
        .filter(|(side, idx)| idx.iter().any(|&i| side.sessions[i].grade.is_none()))
        .map(|(side, _)| {
            let why = side.letters_why.clone().unwrap_or_else(|| {
                if side.layout.bands.is_empty() {
                    format!("pack `{}` has no letter bands", side.layout.rubric.id)
                } else {
                    "some results carry no letter".to_owned()
                }
            });
            (side.label.as_str(), why)
        })
        .collect();
    s.letters_unknown = match unknown.as_slice() {
        [] => None,
        [(_, a), (_, b)] if a == b => Some(format!("both sides: {a}")),
        _ => Some(
            unknown
                .iter()
                .map(|(label, why)| format!("`{label}`: {why}"))
                .collect::<Vec<_>>()
                .join("; "),
        ),
    };
    let letter = |r: usize| order.get(r).cloned().unwrap_or_else(|| "-".to_owned());
    s.grades = Some(
        transitions
            .into_iter()
            .map(|((b, c), count)| (format!("{}->{}", letter(b), letter(c)), count))
            .collect(),
    );
    s.mcnemar_p = Some(stats::binom_test(
        flips.pass_to_fail as u64,
        (flips.pass_to_fail + flips.fail_to_pass) as u64,
    ));
    s.flips = Some(flips);
    s.passed = passed;
    s.grade_counts = GradeCounts {
        baseline: grade_counts(base, order, Some(&b_idx)),
        candidate: grade_counts(cand, order, Some(&c_idx)),
    };

    report.dimensions = dimension_deltas(
        base,
        cand,
        Some((&b_idx, &c_idx)),
        report.rubric_diff.as_ref(),
        options,
    );

    // Attribution: per pair, candidate terms minus baseline terms. The pairs' changes are
    // found on every core (a million entries make 50,000 pairs, found after the pool that
    // graded them went idle); the sums over them are taken in pair order, as before, so
    // that every total adds the same numbers in the same order.
    let m = merged.terms.len();
    let changes: Vec<Vec<(usize, f64)>> = pairs
        .par_iter()
        .map_init(
            || (vec![0.0f64; m], Vec::<u32>::new()),
            |(scratch, touched), &(i, j)| {
                let (b, c) = (&base.sessions[i], &cand.sessions[j]);
                for &(t, v) in &b.terms {
                    let at = merged.from_base[t as usize];
                    scratch[at as usize] -= v;
                    touched.push(at);
                }
                for &(t, v) in &c.terms {
                    let at = merged.from_cand[t as usize];
                    scratch[at as usize] += v;
                    touched.push(at);
                }
                touched.sort_unstable();
                touched.dedup();
                let mut moved = Vec::new();
                for &t in touched.iter() {
                    let v = snap(scratch[t as usize]);
                    scratch[t as usize] = 0.0;
                    if v != 0.0 {
                        moved.push((t as usize, v));
                    }
                }
                touched.clear();
                moved
            },
        )
        .collect();
    let mut changed = vec![0usize; m];
    let mut moved = vec![0.0f64; m];
    let mut gained = vec![0.0f64; m];
    let mut lost = vec![0.0f64; m];
    for &(t, v) in changes.iter().flatten() {
        changed[t] += 1;
        moved[t] += v;
        if v > 0.0 {
            gained[t] += v;
        } else {
            lost[t] += v;
        }
    }
    let mut sessions: Vec<SessionDelta> = pairs
        .par_iter()
        .zip(&changes)
        .zip(&deltas)
        .map(|((&(i, j), changes), &delta)| {
            let (b, c) = (&base.sessions[i], &cand.sessions[j]);
            let key = match pairing {
                Pairing::ByKey(_) => base.keys.get(i).cloned().flatten(),
                _ => None,
            };
            SessionDelta {
                session_id: b.session_id.clone(),
                candidate_session_id: (c.session_id != b.session_id).then(|| c.session_id.clone()),
                key,
                baseline: b.percent,
                candidate: c.percent,
                delta,
                baseline_grade: b.grade.clone(),
                candidate_grade: c.grade.clone(),
                rules: changes
                    .iter()
                    .map(|&(t, v)| RuleChangeOf {
                        dimension: merged.terms[t].key.dimension.clone(),
                        rule: merged.terms[t].key.rule.clone(),
                        delta: v,
                    })
                    .collect(),
            }
        })
        .collect();
    // The most changed first; ties keep the source order (rayon's sort is stable too).
    sessions.par_sort_by(|a, b| b.delta.abs().total_cmp(&a.delta.abs()));
    report.sessions = sessions;
    let nf = n.max(1) as f64;
    report.rules = (0..m)
        .filter(|&t| changed[t] > 0 || is_rule_change(&merged.terms[t]))
        .map(|t| RuleDelta {
            dimension: merged.terms[t].key.dimension.clone(),
            rule: merged.terms[t].key.rule.clone(),
            kind: merged.terms[t].key.kind,
            status: merged.terms[t].status,
            sessions_changed: Some(changed[t]),
            points_moved: Some(moved[t]),
            points_gained: Some(gained[t]),
            points_lost: Some(lost[t]),
            mean_delta: moved[t] / nf,
        })
        .collect();
    rank_rules(&mut report.rules);
}

/// A rule the packs differ on is listed even when it moved no session.
pub(super) fn is_rule_change(t: &MergedTerm) -> bool {
    t.key.kind == TermKind::Rule && t.status != Status::Same
}

pub(super) fn rank_rules(rules: &mut [RuleDelta]) {
    let weight = |r: &RuleDelta| match (r.points_gained, r.points_lost) {
        (Some(g), Some(l)) => g - l,
        _ => r.mean_delta.abs(),
    };
    rules.sort_by(|a, b| weight(b).total_cmp(&weight(a)));
}

pub(super) fn unpaired(
    base: &Side,
    cand: &Side,
    merged: &Merged,
    order: &[String],
    options: &CompareOptions,
    passes: impl Fn(&Scored) -> bool,
    report: &mut Comparison,
) {
    let x: Vec<f64> = base.sessions.iter().map(|s| s.percent).collect();
    let y: Vec<f64> = cand.sessions.iter().map(|s| s.percent).collect();
    report.distributions = Distributions {
        bin_width: BIN_WIDTH,
        baseline: histogram(x.iter().copied()),
        candidate: histogram(y.iter().copied()),
    };
    let s = &mut report.summary;
    s.n = x.len() + y.len();
    s.mean_baseline = (!x.is_empty()).then(|| stats::mean(&x));
    s.mean_candidate = (!y.is_empty()).then(|| stats::mean(&y));
    s.mean_delta = snap(stats::mean(&y) - stats::mean(&x));
    s.ci95 = stats::bootstrap_diff_ci(&x, &y, options.resamples, options.seed);
    s.mann_whitney_p = stats::mann_whitney_u(&x, &y);
    s.cliffs_delta = stats::cliffs_delta(&x, &y);
    s.passed = PerSide {
        baseline: base.sessions.iter().filter(|s| passes(s)).count(),
        candidate: cand.sessions.iter().filter(|s| passes(s)).count(),
    };
    s.grade_counts = GradeCounts {
        baseline: grade_counts(base, order, None),
        candidate: grade_counts(cand, order, None),
    };
    report.dimensions = dimension_deltas(base, cand, None, report.rubric_diff.as_ref(), options);

    // Attribution of the difference of means: each term's mean on one side minus the other.
    let m = merged.terms.len();
    let mut sums = vec![0.0f64; m];
    for s in &base.sessions {
        for &(t, v) in &s.terms {
            sums[merged.from_base[t as usize] as usize] -= v / x.len() as f64;
        }
    }
    for s in &cand.sessions {
        for &(t, v) in &s.terms {
            sums[merged.from_cand[t as usize] as usize] += v / y.len() as f64;
        }
    }
    report.rules = (0..m)
        .filter(|&t| snap(sums[t]) != 0.0 || is_rule_change(&merged.terms[t]))
        .map(|t| RuleDelta {
            dimension: merged.terms[t].key.dimension.clone(),
            rule: merged.terms[t].key.rule.clone(),
            kind: merged.terms[t].key.kind,
            status: merged.terms[t].status,
            sessions_changed: None,
            points_moved: None,
            points_gained: None,
            points_lost: None,
            mean_delta: snap(sums[t]),
        })
        .collect();
    rank_rules(&mut report.rules);
}

/// Per dimension (of either pack): the change of its score as a percentage of its maximum.
pub(super) fn dimension_deltas(
    base: &Side,
    cand: &Side,
    pairs: Option<(&[usize], &[usize])>,
    diff: Option<&RubricDiff>,
    options: &CompareOptions,
) -> Vec<DimensionDelta> {
    let status_of = |id: &str| {
        diff.and_then(|d| d.dimensions.iter().find(|c| c.dimension == id))
            .map_or(Status::Same, |c| c.status)
    };
    // Each dimension on a core of its own (its bootstrap seeded by its place, as before).
    let mut out: Vec<DimensionDelta> = base
        .layout
        .dimensions
        .par_iter()
        .enumerate()
        .map(|(k, bd)| {
            let seed = options.seed.wrapping_add(1 + k as u64);
            let bi = k;
            let ci = cand.layout.dimensions.iter().position(|d| d.id == bd.id);
            let Some(ci) = ci else {
                let vals: Vec<f64> = base
                    .sessions
                    .iter()
                    .filter_map(|s| s.dimensions[bi])
                    .collect();
                return DimensionDelta {
                    dimension: bd.id.clone(),
                    name: bd.name.clone(),
                    status: Status::Removed,
                    n: vals.len(),
                    mean_baseline: (!vals.is_empty()).then(|| stats::mean(&vals)),
                    mean_candidate: None,
                    mean_delta: None,
                    ci95: None,
                    p: None,
                    improved: None,
                    regressed: None,
                };
            };
            match pairs {
                Some((b_idx, c_idx)) => {
                    let (mut xb, mut xc) = (Vec::new(), Vec::new());
                    for (&i, &j) in b_idx.iter().zip(c_idx) {
                        if let (Some(b), Some(c)) = (
                            base.sessions[i].dimensions[bi],
                            cand.sessions[j].dimensions[ci],
                        ) {
                            xb.push(b);
                            xc.push(c);
                        }
                    }
                    let deltas: Vec<f64> = xb.iter().zip(&xc).map(|(b, c)| snap(c - b)).collect();
                    DimensionDelta {
                        dimension: bd.id.clone(),
                        name: bd.name.clone(),
                        status: status_of(&bd.id),
                        n: deltas.len(),
                        mean_baseline: (!xb.is_empty()).then(|| stats::mean(&xb)),
                        mean_candidate: (!xc.is_empty()).then(|| stats::mean(&xc)),
                        mean_delta: (!deltas.is_empty()).then(|| stats::mean(&deltas)),
                        ci95: stats::bootstrap_mean_ci(&deltas, options.resamples, seed),
                        p: stats::wilcoxon(&deltas),
                        improved: Some(deltas.iter().filter(|&&d| d > 0.0).count()),
                        regressed: Some(deltas.iter().filter(|&&d| d < 0.0).count()),
                    }
                }
                None => {
                    let xb: Vec<f64> = base
                        .sessions
                        .iter()
                        .filter_map(|s| s.dimensions[bi])
                        .collect();
                    let xc: Vec<f64> = cand
                        .sessions
                        .iter()
                        .filter_map(|s| s.dimensions[ci])
                        .collect();
                    DimensionDelta {
                        dimension: bd.id.clone(),
                        name: bd.name.clone(),
                        status: status_of(&bd.id),
                        n: xb.len() + xc.len(),
                        mean_baseline: (!xb.is_empty()).then(|| stats::mean(&xb)),
                        mean_candidate: (!xc.is_empty()).then(|| stats::mean(&xc)),
                        mean_delta: (!xb.is_empty() && !xc.is_empty())
                            .then(|| snap(stats::mean(&xc) - stats::mean(&xb))),
                        ci95: stats::bootstrap_diff_ci(&xb, &xc, options.resamples, seed),
                        p: stats::mann_whitney_u(&xb, &xc),
                        improved: None,
                        regressed: None,
                    }
                }
            }
        })
        .collect();
    for cd in &cand.layout.dimensions {
        if base.layout.dimension(&cd.id).is_none() {
            let ci = cand
                .layout
                .dimensions
                .iter()
                .position(|d| d.id == cd.id)
                .unwrap_or(0);
            let vals: Vec<f64> = cand
                .sessions
                .iter()
                .filter_map(|s| s.dimensions.get(ci).copied().flatten())
                .collect();
            out.push(DimensionDelta {
                dimension: cd.id.clone(),
                name: cd.name.clone(),
                status: Status::Added,
                n: vals.len(),
                mean_baseline: None,
                mean_candidate: (!vals.is_empty()).then(|| stats::mean(&vals)),
                mean_delta: None,
                ci95: None,
                p: None,
                improved: None,
                regressed: None,
            });
        }
    }
    out
}
