//! The groundwork of a comparison: the terms of both layouts merged into one list, the
//! sessions of the two sides paired, and the letters in band order.

use super::*;

/// A term of either side's layout, with where it sits in each.
pub(super) struct MergedTerm {
    pub(super) key: TermKey,
    pub(super) status: Status,
}

pub(super) struct Merged {
    pub(super) terms: Vec<MergedTerm>,
    pub(super) from_base: Vec<u32>,
    pub(super) from_cand: Vec<u32>,
}

pub(super) fn merge_terms(base: &Layout, cand: &Layout, diff: Option<&RubricDiff>) -> Merged {
    let mut terms: Vec<MergedTerm> = Vec::new();
    let mut at: HashMap<&TermKey, u32> = HashMap::new();
    let mut from_base = Vec::with_capacity(base.terms.len());
    for k in &base.terms {
        at.insert(k, terms.len() as u32);
        from_base.push(terms.len() as u32);
        terms.push(MergedTerm {
            key: k.clone(),
            status: Status::Removed,
        });
    }
    let mut from_cand = Vec::with_capacity(cand.terms.len());
    for k in &cand.terms {
        match at.get(k) {
            Some(&i) => {
                terms[i as usize].status = Status::Same;
                from_cand.push(i);
            }
            None => {
                from_cand.push(terms.len() as u32);
                terms.push(MergedTerm {
                    key: k.clone(),
                    status: Status::Added,
                });
            }
        }
    }
    if let Some(diff) = diff {
        for t in &mut terms {
            if t.key.kind == TermKind::Rule && t.status == Status::Same {
                t.status = diff.rule_status(&t.key.dimension, &t.key.rule);
            }
        }
    }
    Merged {
        terms,
        from_base,
        from_cand,
    }
}

/// Pairs of session indices (baseline, candidate) and what was left over.
pub(super) fn pair(
    base: &Side,
    cand: &Side,
    pairing: &Pairing,
) -> (Vec<(usize, usize)>, Unmatched) {
    let mut unmatched = Unmatched::default();
    let key_of = |side: &Side, i: usize| -> Option<String> {
        match pairing {
            Pairing::BySessionId => Some(side.sessions[i].session_id.clone()),
            _ => side.keys.get(i).cloned().flatten(),
        }
    };
    // A key naming two sessions of a side pairs neither: which one is meant is unknowable.
    let index = |side: &Side, unkeyed: &mut Vec<String>| -> HashMap<String, usize> {
        let mut seen: HashMap<String, Option<usize>> = HashMap::new();
        for i in 0..side.sessions.len() {
            match key_of(side, i) {
                Some(k) => {
                    seen.entry(k).and_modify(|v| *v = None).or_insert(Some(i));
                }
                None => unkeyed.push(side.sessions[i].session_id.clone()),
            }
        }
        let mut out = HashMap::new();
        for (k, v) in seen {
            match v {
                Some(i) => {
                    out.insert(k, i);
                }
                None => {
                    for i in 0..side.sessions.len() {
                        if key_of(side, i).as_deref() == Some(k.as_str()) {
                            unkeyed.push(side.sessions[i].session_id.clone());
                        }
                    }
                }
            }
        }
        out
    };
    let mut unkeyed = Vec::new();
    let cand_index = index(cand, &mut unkeyed);
    let base_index = index(base, &mut unkeyed);
    let mut pairs = Vec::new();
    for i in 0..base.sessions.len() {
        let Some(k) = key_of(base, i) else { continue };
        if base_index.get(&k) != Some(&i) {
            continue;
        }
        match cand_index.get(&k) {
            Some(&j) => pairs.push((i, j)),
            None => unmatched.baseline.push(base.sessions[i].session_id.clone()),
        }
    }
    for j in 0..cand.sessions.len() {
        if let Some(k) = key_of(cand, j) {
            if cand_index.get(&k) == Some(&j) && !base_index.contains_key(&k) {
                unmatched
                    .candidate
                    .push(cand.sessions[j].session_id.clone());
            }
        }
    }
    unkeyed.sort();
    unkeyed.dedup();
    unmatched.unkeyed = unkeyed;
    (pairs, unmatched)
}

pub(super) fn grade_counts(
    side: &Side,
    order: &[String],
    only: Option<&[usize]>,
) -> IndexMap<String, usize> {
    let mut counts: IndexMap<String, usize> = order.iter().map(|g| (g.clone(), 0)).collect();
    let mut add = |s: &Scored| {
        let g = s.grade.clone().unwrap_or_else(|| "-".to_owned());
        *counts.entry(g).or_insert(0) += 1;
    };
    match only {
        Some(idx) => idx.iter().for_each(|&i| add(&side.sessions[i])),
        None => side.sessions.iter().for_each(add),
    }
    counts
}

/// The letters in band order (best first) across both packs.
pub(super) fn letter_order(base: &Layout, cand: &Layout) -> Vec<String> {
    let mut bands: Vec<&Band> = base.bands.iter().chain(&cand.bands).collect();
    bands.sort_by(|a, b| b.min_percent.total_cmp(&a.min_percent));
    let mut order: Vec<String> = Vec::new();
    for b in bands {
        if !order.contains(&b.grade) {
            order.push(b.grade.clone());
        }
    }
    order
}
