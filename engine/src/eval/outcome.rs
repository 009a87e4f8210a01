//! What a case gives (points, evidence, flags), which case applies, and the parts of a
//! result that name a judged score or an entry.

use crate::entry::{round_half_up, Entry};
use crate::judgment::Judgment;
use crate::pack::condition::{Ctx, Witnesses};
use crate::pack::{Case, Dimension, DimensionKind, Points};
use crate::result::{DimensionScore, EntryRef, PanelMember, Score};

/// A judged dimension's result: the judge's score (within the dimension's range), its
/// category label, the normalised value and the weight.
pub(super) fn judged_score(dimension: &Dimension, judgment: &Judgment) -> DimensionScore {
    let judged = judgment.dimensions.get(&dimension.id);
    let raw = judged.map_or(dimension.start, |j| j.score);
    let score = raw.max(dimension.floor).min(dimension.cap);
    let label = match &dimension.kind {
        DimensionKind::Categorical { categories } => categories
            .iter()
            .find(|(_, v)| *v == score)
            .map(|(l, _)| l.clone()),
        _ => None,
    };
    let span = dimension.cap - dimension.floor;
    let normalized = if span > 0.0 {
        (score - dimension.floor) / span
    } else {
        0.0
    };
    DimensionScore {
        score: Score(score),
        max: Score(dimension.max),
        evidence: judged.map(|j| j.evidence.clone()).unwrap_or_default(),
        label,
        normalized: Some(normalized),
        weight: dimension.weight,
        rationale: judged.map(|j| j.rationale.clone()),
        spread: judged.and_then(|j| j.spread()),
        panel: judged
            .map(|j| {
                j.panel
                    .iter()
                    .map(|m| PanelMember {
                        judge: m.judge.clone(),
                        score: Score(m.score),
                        evidence: m.evidence.clone(),
                        rationale: m.rationale.clone(),
                        spread: m.spread(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        not_applicable: false,
        // A judge raises no flags.
        flags: 0..0,
    }
}

pub(super) fn entry_ref(index: u32, e: &Entry) -> EntryRef {
    let position = index as usize + 1;
    let source = e.source_place();
    let place = crate::entry::place_of(position, e);
    EntryRef {
        position,
        timestamp: e.timestamp.to_string(),
        operation: format!("{}.{}", e.domain, e.operation),
        file: source.file,
        line: source.line,
        row_id: source.row_id,
        tool_use_id: source.tool_use_id,
        // Only when it says more than the position.
        place: (place != format!("#{position}")).then_some(place),
    }
}

/// The first case whose condition holds; with `witnesses`, the entries behind it are added.
pub(super) fn first_case<'c>(
    cases: &'c [Case],
    ctx: &Ctx<'_, '_>,
    witnesses: Option<&mut Vec<u32>>,
) -> Option<&'c Case> {
    let Some(witnesses) = witnesses else {
        return cases
            .iter()
            .find(|case| case.when.holds(ctx, Witnesses(None)));
    };
    // When the applied case has no entries of its own (an `otherwise`), the entries that
    // made the earlier cases fail are what explains it.
    let mut failed = Vec::new();
    let mut tried = Vec::new();
    for case in cases {
        tried.clear();
        if case.when.holds(ctx, Witnesses(Some(&mut tried))) {
            witnesses.extend_from_slice(if tried.is_empty() { &failed } else { &tried });
            return Some(case);
        }
        failed.extend_from_slice(&tried);
    }
    None
}

/// Applies a case's outcome and returns its points.
pub(super) fn apply(
    case: &Case,
    ctx: &Ctx<'_, '_>,
    evidence: &mut Vec<String>,
    flags: &mut Vec<String>,
) -> f64 {
    if let Some(t) = &case.evidence {
        evidence.push(t.render(ctx));
    }
    if let Some(t) = &case.flag {
        flags.push(t.render(ctx));
    }
    match &case.points {
        None => 0.0,
        Some(Points::Fixed(p)) => *p,
        // JavaScript's `Math.round`: half rounds up, on the exact binary value.
        Some(Points::Scaled { metric, times }) => {
            ctx.facts.metrics[*metric].map_or(0.0, |v| round_half_up(times * v))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::testing::entry;

    fn dimension(kind: DimensionKind, floor: f64, cap: f64) -> Dimension {
        Dimension {
            path: "dimensions[0]".to_owned(),
            id: "q".to_owned(),
            kind,
            weight: Some(0.5),
            name: "q".to_owned(),
            description: String::new(),
            max: cap,
            start: floor,
            floor,
            cap,
            rules: Vec::new(),
            applies: None,
            compares_with_reference: Vec::new(),
        }
    }

    fn judgment(score: f64) -> Judgment {
        let judged = crate::judgment::DimensionJudgment {
            score,
            evidence: vec!["e".to_owned()],
            rationale: "r".to_owned(),
            chunk_scores: Vec::new(),
            run_scores: Vec::new(),
            panel: Vec::new(),
        };
        Judgment {
            dimensions: [("q".to_owned(), judged)].into_iter().collect(),
            chunks: 1,
            runs: 1,
            usage: None,
            panel: None,
        }
    }

    #[test]
    fn a_judged_score_is_clamped_and_normalised() {
        let numeric = dimension(DimensionKind::Numeric { min: 1.0 }, 1.0, 5.0);
        let scored = judged_score(&numeric, &judgment(9.0));
        assert_eq!((scored.score.0, scored.normalized), (5.0, Some(1.0)));
        let scored = judged_score(&numeric, &judgment(2.0));
        assert_eq!(scored.normalized, Some(0.25));
        assert_eq!(scored.weight, Some(0.5));
        assert_eq!(scored.evidence, ["e"]);
    }

    #[test]
    fn a_category_is_named_by_its_value() {
        let categorical = dimension(
            DimensionKind::Categorical {
                categories: vec![("no".to_owned(), 0.0), ("yes".to_owned(), 2.0)],
            },
            0.0,
            2.0,
        );
        assert_eq!(
            judged_score(&categorical, &judgment(2.0)).label.as_deref(),
            Some("yes")
        );
        assert_eq!(judged_score(&categorical, &judgment(1.0)).label, None);
    }

    #[test]
    fn an_entry_ref_names_the_line_only_when_the_source_has_one() {
        let plain = entry_ref(4, &entry(4, "tasks", "add"));
        assert_eq!((plain.position, plain.operation.as_str()), (5, "tasks.add"));
        assert_eq!((plain.line, plain.place), (None, None));
    }
}
