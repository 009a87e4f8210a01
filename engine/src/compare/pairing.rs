//! The groundwork of a comparison: the terms of both layouts merged into one list, the
//! sessions of the two sides paired, and the letters in band order.

use std::borrow::Cow;
use std::collections::HashSet;

use rustc_hash::FxHashMap;

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
    match diff {
        Some(diff) => {
            for t in &mut terms {
                if t.key.kind == TermKind::Rule && t.status == Status::Same {
                    t.status = diff.rule_status(&t.key.dimension, &t.key.rule);
                }
            }
        }
        None => {
            // Without the packs' diff, a rule is added or removed only as far as the other side
            // can tell: one whose grades carry no rule of the dimension (results recorded
            // without `--explain`) says nothing of that dimension's rules.
            let has_rules = |layout: &Layout, dimension: &str| {
                layout
                    .terms
                    .iter()
                    .any(|k| k.kind == TermKind::Rule && k.dimension == dimension)
            };
            for t in &mut terms {
                let other = match t.status {
                    Status::Removed => cand,
                    Status::Added => base,
                    _ => continue,
                };
                if t.key.kind == TermKind::Rule && !has_rules(other, &t.key.dimension) {
                    t.status = Status::Same;
                }
            }
        }
    }
    Merged {
        terms,
        from_base,
        from_cand,
    }
}

/// The sides without the sessions that have nothing to grade (no dimension applies), and
/// those sessions' ids, sorted. Paired, a session leaves both sides when either side has
/// nothing to grade for its key. Borrowed as they are when every session was graded.
pub(super) fn graded_only<'s>(
    base: &'s Side,
    cand: &'s Side,
    pairing: &Pairing,
) -> (Cow<'s, Side>, Cow<'s, Side>, Vec<String>) {
    if base.sessions.iter().chain(&cand.sessions).all(|s| s.graded) {
        return (Cow::Borrowed(base), Cow::Borrowed(cand), Vec::new());
    }
    let mut ungraded_keys: HashSet<&str> = HashSet::new();
    if *pairing != Pairing::Unpaired {
        for side in [base, cand] {
            for (k, s) in keys_of(side, pairing).into_iter().zip(&side.sessions) {
                if let (Some(k), false) = (k, s.graded) {
                    ungraded_keys.insert(k);
                }
            }
        }
    }
    let mut left_out = Vec::new();
    let mut keep = |side: &Side| -> Side {
        let keys = keys_of(side, pairing);
        let mut kept = Side {
            label: side.label.clone(),
            layout: side.layout.clone(),
            sessions: Vec::new(),
            keys: Vec::new(),
            letters_why: side.letters_why.clone(),
        };
        for (i, s) in side.sessions.iter().enumerate() {
            if s.graded && keys[i].is_none_or(|k| !ungraded_keys.contains(k)) {
                kept.sessions.push(s.clone());
                if let Some(k) = side.keys.get(i) {
                    kept.keys.push(k.clone());
                }
            } else {
                left_out.push(s.session_id.clone());
            }
        }
        kept
    };
    let (b, c) = (keep(base), keep(cand));
    left_out.sort();
    left_out.dedup();
    (Cow::Owned(b), Cow::Owned(c), left_out)
}

/// Each session's pairing key.
fn keys_of<'s>(side: &'s Side, pairing: &'s Pairing) -> Vec<Option<&'s str>> {
    (0..side.sessions.len())
        .map(|i| match pairing {
            Pairing::BySessionId => Some(side.sessions[i].session_id.as_str()),
            _ => side.keys.get(i).and_then(|k| k.as_deref()),
        })
        .collect()
}

/// Each key's session, `None` for a key naming two sessions of the side: which one is meant
/// is unknowable, so it pairs neither.
fn index_of<'s>(keys: &[Option<&'s str>]) -> FxHashMap<&'s str, Option<usize>> {
    let mut index = FxHashMap::with_capacity_and_hasher(keys.len(), Default::default());
    for (i, k) in keys.iter().enumerate() {
        if let Some(k) = *k {
            index
                .entry(k)
                .and_modify(|v: &mut Option<usize>| *v = None)
                .or_insert(Some(i));
        }
    }
    index
}

/// Pairs of session indices (baseline, candidate) and what was left over.
pub(super) fn pair<'s>(
    base: &'s Side,
    cand: &'s Side,
    pairing: &'s Pairing,
) -> (Vec<(usize, usize)>, Unmatched) {
    // The two sides' indexes (a hash of every key) are built at once, one a core.
    let indexed = |side: &'s Side| {
        let keys = keys_of(side, pairing);
        let index = index_of(&keys);
        (keys, index)
    };
    let ((base_keys, base_index), (cand_keys, cand_index)) =
        rayon::join(|| indexed(base), || indexed(cand));
    let unique = |index: &FxHashMap<&str, Option<usize>>, k: &str| index.get(k).copied().flatten();

    let mut unmatched = Unmatched::default();
    let mut unkeyed = Vec::new();
    for (side, keys, index) in [
        (cand, &cand_keys, &cand_index),
        (base, &base_keys, &base_index),
    ] {
        for (i, k) in keys.iter().enumerate() {
            if k.is_none_or(|k| unique(index, k).is_none()) {
                unkeyed.push(side.sessions[i].session_id.clone());
            }
        }
    }
    let mut pairs = Vec::new();
    for (i, k) in base_keys.iter().enumerate() {
        let Some(k) = *k else { continue };
        if unique(&base_index, k) != Some(i) {
            continue;
        }
        match unique(&cand_index, k) {
            Some(j) => pairs.push((i, j)),
            None => unmatched.baseline.push(base.sessions[i].session_id.clone()),
        }
    }
    for (j, k) in cand_keys.iter().enumerate() {
        let Some(k) = *k else { continue };
        if unique(&cand_index, k) == Some(j) && unique(&base_index, k).is_none() {
            unmatched
                .candidate
                .push(cand.sessions[j].session_id.clone());
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

/// The letters in band order (best first) across both packs. A letter no band names (results
/// whose pack is not at hand: CLEO's own grader names none) is placed by the lowest percent it
/// was given on either side, so that `A` still ranks above `B` and a move between them shows.
pub(super) fn letter_order(base: &Side, cand: &Side) -> Vec<String> {
    let mut bands: Vec<&Band> = base.layout.bands.iter().chain(&cand.layout.bands).collect();
    bands.sort_by(|a, b| b.min_percent.total_cmp(&a.min_percent));
    let mut order: Vec<String> = Vec::new();
    for b in bands {
        if !order.contains(&b.grade) {
            order.push(b.grade.clone());
        }
    }
    let mut unbanded: Vec<(&str, f64)> = Vec::new();
    for s in base.sessions.iter().chain(&cand.sessions) {
        let Some(g) = s.grade.as_deref() else {
            continue;
        };
        if order.iter().any(|o| o == g) {
            continue;
        }
        match unbanded.iter_mut().find(|(u, _)| *u == g) {
            Some((_, low)) => *low = low.min(s.reported_percent),
            None => unbanded.push((g, s.reported_percent)),
        }
    }
    unbanded.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    order.extend(unbanded.into_iter().map(|(g, _)| g.to_owned()));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(keys: &[(&str, Option<&str>)]) -> Side {
        let sessions = keys
            .iter()
            .map(|(id, _)| Scored {
                session_id: (*id).to_owned(),
                percent: 50.0,
                reported_percent: 50.0,
                grade: None,
                graded: true,
                dimensions: Vec::new(),
                terms: Vec::new(),
            })
            .collect();
        let mut side = Side::new(
            "side",
            Layout::empty(RubricRef {
                id: "p".to_owned(),
                version: "1".to_owned(),
                digest: String::new(),
            }),
            sessions,
        );
        side.keys = keys.iter().map(|(_, k)| k.map(str::to_owned)).collect();
        side
    }

    /// A key two sessions of a side share pairs neither of them, on either side, and each
    /// session left over is listed once.
    #[test]
    fn a_key_naming_two_sessions_of_a_side_pairs_neither_and_every_leftover_is_listed() {
        let base = side(&[
            ("b1", Some("t1")),
            ("b2", Some("t2")),
            ("b3", Some("t2")),
            ("b4", None),
            ("b5", Some("t5")),
            ("b6", Some("t6")),
        ]);
        let cand = side(&[
            ("c1", Some("t1")),
            ("c2", Some("t2")),
            ("c5", Some("t5")),
            ("c6", Some("t6")),
            ("c7", Some("t6")),
            ("c8", Some("t8")),
        ]);
        let (pairs, unmatched) = pair(&base, &cand, &Pairing::ByKey("k".to_owned()));
        assert_eq!(pairs, [(0, 0), (4, 2)]);
        assert_eq!(
            unmatched.baseline,
            ["b6"],
            "t6 names two candidate sessions"
        );
        assert_eq!(
            unmatched.candidate,
            ["c2", "c8"],
            "t2 names two baseline sessions"
        );
        assert_eq!(unmatched.unkeyed, ["b2", "b3", "b4", "c6", "c7"]);
    }

    /// Results whose pack is not at hand name letters no band orders: they are ranked by the
    /// lowest percent each was given, so a move from `A` to `B` is not lost as `- -> -`.
    #[test]
    fn letters_without_bands_are_ordered_by_the_lowest_percent_they_were_given() {
        let mut base = side(&[("s1", None), ("s2", None), ("s3", None)]);
        let mut cand = side(&[("s1", None), ("s2", None)]);
        for (s, (grade, percent)) in base
            .sessions
            .iter_mut()
            .zip([("B", 70.0), ("A", 95.0), ("B", 80.0)])
            .chain(cand.sessions.iter_mut().zip([("F", 10.0), ("A", 90.0)]))
        {
            s.grade = Some(grade.to_owned());
            s.reported_percent = percent;
        }
        assert_eq!(letter_order(&base, &cand), ["A", "B", "F"]);
    }

    #[test]
    fn sessions_pair_by_id_when_asked_whatever_their_keys() {
        let base = side(&[("s1", None), ("s2", Some("x"))]);
        let cand = side(&[("s2", None), ("s3", Some("x"))]);
        let (pairs, unmatched) = pair(&base, &cand, &Pairing::BySessionId);
        assert_eq!(pairs, [(1, 0)]);
        assert_eq!(unmatched.baseline, ["s1"]);
        assert_eq!(unmatched.candidate, ["s3"]);
        assert!(unmatched.unkeyed.is_empty());
    }
}
