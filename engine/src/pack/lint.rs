//! Static checks of a compiled pack: things that work but are probably not what the author
//! meant — a dimension whose score range leaves its max, a rule or case that can never fire.

use super::codes::Code;
use super::{Case, CompiledPack, Condition, Metric, Points, Problem, RuleKind, Selector};
use crate::entry::js_number;

pub fn lint(pack: &CompiledPack, file: &str) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut warn = |code: Code, path: String, message: String| {
        out.push(Problem::new(code, file, path, message))
    };
    if pack.scoring == super::Scoring::Weighted {
        let sum: f64 = pack.dimensions.iter().filter_map(|d| d.weight).sum();
        if (sum - 1.0).abs() > 1e-9 {
            warn(
                Code::WeightsSum,
                "dimensions".to_owned(),
                format!(
                    "the weights sum to {}, not 1, so the total ranges over 0..{}",
                    js_number(sum),
                    js_number(sum)
                ),
            );
        }
    }
    for dimension in pack.dimensions.iter().filter(|d| !d.kind.is_judged()) {
        let (mut lo, mut hi, mut known) = (dimension.start, dimension.start, true);
        for rule in &dimension.rules {
            let cases = match &rule.kind {
                RuleKind::Session(cases) => cases,
                RuleKind::ForEach { selector, cases } => {
                    if let Some(why) = never_matches(pack, &pack.selectors[*selector], 0) {
                        warn(
                            Code::ForEachNeverFires,
                            format!("{}.for_each", rule.path),
                            format!(
                                "rule `{}` can never fire: its `for_each` selector {why}",
                                rule.id
                            ),
                        );
                    }
                    cases
                }
                RuleKind::Script { .. } | RuleKind::Native(_) => {
                    known = false;
                    continue;
                }
            };
            if cases
                .iter()
                .all(|c| c.points.is_none() && c.evidence.is_none() && c.flag.is_none())
            {
                warn(
                    Code::NoOutcome,
                    rule.path.clone(),
                    format!(
                        "rule `{}` has no outcome: no case gives points, evidence or a flag",
                        rule.id
                    ),
                );
            }
            for (i, case) in cases.iter().enumerate() {
                let case_path = &case.path;
                if let Some(j) = cases[..i]
                    .iter()
                    .position(|c| matches!(c.when, Condition::Always))
                {
                    warn(Code::UnreachableCase, case_path.clone(), format!("case {} of rule `{}` can never apply: case {} before it always applies", i + 1, rule.id, j + 1));
                } else if let Some(why) = case.when.never_holds(pack) {
                    warn(
                        Code::CaseNeverApplies,
                        format!("{case_path}.when"),
                        format!("this case of rule `{}` can never apply: {why}", rule.id),
                    );
                }
            }
            let per_entry = matches!(rule.kind, RuleKind::ForEach { .. });
            let (rule_lo, rule_hi) = rule_range(pack, cases, per_entry);
            lo += rule_lo;
            hi += rule_hi;
        }
        if !known {
            continue;
        }
        let max = dimension.max;
        if hi.is_infinite() {
            warn(
                Code::PassesMax, dimension.path.clone(),
                format!(
                    "dimension `{}` awards points per entry, so its score can pass its max {} (the cap clamps it)",
                    dimension.id,
                    js_number(max)
                ),
            );
        } else if hi > max {
            warn(
                Code::PassesMax,
                dimension.path.clone(),
                format!(
                    "dimension `{}` can sum awards to {}, past its max {} (the cap clamps it)",
                    dimension.id,
                    js_number(hi),
                    js_number(max)
                ),
            );
        } else if hi < max {
            warn(
                Code::NeverReachesMax,
                format!("{}.max", dimension.path),
                format!(
                    "dimension `{}` can never reach its max {}: its rules give at most {}",
                    dimension.id,
                    js_number(max),
                    js_number(hi)
                ),
            );
        }
        let _ = lo;
    }
    out
}

/// The least and most a rule can add to its dimension.
fn rule_range(pack: &CompiledPack, cases: &[Case], per_entry: bool) -> (f64, f64) {
    // When no case is unconditional, a session may match none and get 0.
    let may_skip = !cases.iter().any(|c| matches!(c.when, Condition::Always));
    let (mut lo, mut hi) = if may_skip || cases.is_empty() {
        (0.0, 0.0)
    } else {
        (f64::INFINITY, f64::NEG_INFINITY)
    };
    for case in cases {
        let (a, b) = points_range(pack, case.points.as_ref());
        lo = f64::min(lo, a);
        hi = f64::max(hi, b);
    }
    if per_entry {
        // Any number of entries may match.
        (
            if lo < 0.0 { f64::NEG_INFINITY } else { 0.0 },
            if hi > 0.0 { f64::INFINITY } else { 0.0 },
        )
    } else {
        (lo, hi)
    }
}

fn points_range(pack: &CompiledPack, points: Option<&Points>) -> (f64, f64) {
    match points {
        None => (0.0, 0.0),
        Some(Points::Fixed(p)) => (*p, *p),
        Some(Points::Scaled { metric, times }) => {
            let bound = match pack.metrics.get(*metric) {
                Some(Metric::Ratio { .. } | Metric::Trajectory(_)) => *times,
                _ => times * f64::INFINITY,
            };
            (f64::min(0.0, bound), f64::max(0.0, bound))
        }
    }
}

/// Why no entry can match a selector, if none can (contradictory keys, empty lists).
pub(crate) fn never_matches(
    pack: &CompiledPack,
    selector: &Selector,
    depth: usize,
) -> Option<String> {
    if depth > 32 {
        return None;
    }
    let mut parts = Vec::new();
    flatten(pack, selector, &mut parts, depth);
    let mut domains: Option<Vec<&String>> = None;
    let mut operations: Option<Vec<&String>> = None;
    let mut success: Option<bool> = None;
    for part in &parts {
        match part {
            Selector::Domain(names) | Selector::Operation(names) if names.is_empty() => {
                return Some("matches nothing: it lists no names".to_owned())
            }
            Selector::Domain(names) => {
                let next: Vec<&String> = match domains {
                    None => names.iter().collect(),
                    Some(prev) => prev.into_iter().filter(|d| names.contains(d)).collect(),
                };
                if next.is_empty() {
                    return Some("matches nothing: it asks for two different domains".to_owned());
                }
                domains = Some(next);
            }
            Selector::Operation(names) => {
                let next: Vec<&String> = match operations {
                    None => names.iter().collect(),
                    Some(prev) => prev.into_iter().filter(|o| names.contains(o)).collect(),
                };
                if next.is_empty() {
                    return Some(
                        "matches nothing: it asks for two different operations".to_owned(),
                    );
                }
                operations = Some(next);
            }
            Selector::Success(want) => {
                if success.is_some_and(|s| s != *want) {
                    return Some("matches nothing: it asks for success and failure".to_owned());
                }
                success = Some(*want);
            }
            Selector::ExitCode(codes) if codes.is_empty() => {
                return Some("matches nothing: it lists no exit codes".to_owned())
            }
            Selector::Any(items)
                if items
                    .iter()
                    .all(|i| never_matches(pack, i, depth + 1).is_some()) =>
            {
                return Some("matches nothing: no alternative of its `any` can match".to_owned())
            }
            _ => {}
        }
    }
    None
}

/// The conjuncts of a selector, with references to named selectors followed.
fn flatten<'p>(
    pack: &'p CompiledPack,
    selector: &'p Selector,
    out: &mut Vec<&'p Selector>,
    depth: usize,
) {
    if depth > 32 {
        return;
    }
    match selector {
        Selector::All(items) => items.iter().for_each(|i| flatten(pack, i, out, depth + 1)),
        Selector::Ref(id) => {
            if let Some(target) = pack.selectors.get(*id) {
                flatten(pack, target, out, depth + 1);
            }
        }
        other => out.push(other),
    }
}
