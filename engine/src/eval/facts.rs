//! The single pass over a session: which entries each selector matches, and each metric's
//! value (with, when explained, the entries that moved it). What it fills, [`Facts`], lives
//! with the conditions that read it (`pack/condition/context.rs`).

use std::collections::HashSet;

use crate::entry::Entry;
use crate::field::Field;
use crate::pack::condition::Facts;
use crate::pack::{CompiledPack, EntryKeys, Metric, Normalize, Selector};

impl CompiledPack {
    pub(super) fn facts<'s>(
        &self,
        session_id: &'s str,
        entries: &'s [Entry],
        explain: bool,
    ) -> Facts<'s> {
        let mut hits: Vec<Vec<u32>> = vec![Vec::new(); self.selectors.len()];
        // Per entry, what the selectors already evaluated decided: a reference to one
        // (`all: [task_added, …]`) reads it instead of matching again. Referenced selectors
        // are evaluated first, so a graph that doubles per level costs one match per selector.
        let order = evaluation_order(&self.selectors);
        let mut matched = vec![None; self.selectors.len()];
        for (i, entry) in entries.iter().enumerate() {
            matched.fill(None);
            let keys = self.vocabulary.keys(entry);
            // Selectors decided when the pack compiled are read from the entry's row.
            let row = self
                .decided
                .as_ref()
                .map(|d| (&d.decided, d.row(keys, entry.result.success)));
            for &s in &order {
                let hit = match row {
                    Some((decided, bits)) if decided[s] => bits[s / 64] >> (s % 64) & 1 == 1,
                    _ => self.matches(&self.selectors[s], entry, keys, &matched),
                };
                matched[s] = Some(hit);
                if hit {
                    hits[s].push(i as u32);
                }
            }
        }
        let mut facts = Facts {
            session_id,
            entries,
            hits,
            metrics: Vec::with_capacity(self.metrics.len()),
            metric_witnesses: Vec::new(),
            native_failure: std::cell::RefCell::new(None),
            failed_metric: None,
        };
        let mut native_witnesses = vec![Vec::new(); self.metrics.len()];
        for (i, m) in self.metrics.iter().enumerate() {
            let value = match m {
                Metric::Native(native) => {
                    let value = facts.call_native(native, None, 0.0).and_then(|r| {
                        native_witnesses[i] = r.entries;
                        r.value
                    });
                    if facts.failed_metric.is_none() && facts.native_failure.borrow().is_some() {
                        facts.failed_metric = Some(i);
                    }
                    value
                }
                _ => metric_value(m, entries, &facts.hits),
            };
            facts.metrics.push(value);
        }
        if explain {
            facts.metric_witnesses = self
                .metrics
                .iter()
                .zip(native_witnesses)
                .map(|(m, native)| match m {
                    Metric::Native(_) => native,
                    _ => metric_witnesses(m, entries, &facts.hits),
                })
                .collect();
        }
        facts
    }

    /// Whether `e` (whose domain, operation and exit code ids are `keys`) matches `selector`. A
    /// reference to a selector in `known` (the decisions already taken for this entry)
    /// reads that decision instead of matching again.
    pub(crate) fn matches(
        &self,
        selector: &Selector,
        e: &Entry,
        keys: EntryKeys,
        known: &[Option<bool>],
    ) -> bool {
        // Leaves are decided inline: most selectors are `all` of a domain, an operation and
        // a result, and a call per leaf cost more than the comparisons.
        let each = |s: &Selector| {
            quick_match(s, e, keys, known).unwrap_or_else(|| self.matches(s, e, keys, known))
        };
        match selector {
            Selector::Domain(_)
            | Selector::Operation(_)
            | Selector::Success(_)
            | Selector::ExitCode(_) => quick_match(selector, e, keys, known).unwrap_or(false),
            Selector::Equals(field, value) => field.get(e).equals(value),
            Selector::OneOf(field, values) => {
                let v = field.get(e);
                values.iter().any(|x| v.equals(x))
            }
            Selector::Truthy(field, want) => field.get(e).truthy() == *want,
            Selector::Blank(field, want) => field.get(e).blank() == *want,
            Selector::Present(field, want) => field.get(e).is_missing() != *want,
            Selector::Contains(field, text) => field
                .get(e)
                .as_str()
                .is_some_and(|s| s.contains(text.as_str())),
            Selector::Type(field, kind) => field.get(e).is_type(*kind),
            Selector::Ref(id) => match known.get(*id) {
                Some(&Some(hit)) => hit,
                _ => self
                    .selectors
                    .get(*id)
                    .is_some_and(|s| self.matches(s, e, keys, known)),
            },
            Selector::All(items) => items.iter().all(each),
            Selector::Any(items) => items.iter().any(each),
            Selector::Not(inner) => !each(inner),
        }
    }
}

fn metric_value(metric: &Metric, entries: &[Entry], hits: &[Vec<u32>]) -> Option<f64> {
    match metric {
        Metric::Ratio { of, over } => {
            let over = hits[*over].len();
            (over > 0).then(|| hits[*of].len() as f64 / over as f64)
        }
        Metric::Duplicates { of, key, normalize } => {
            let keys = keys(&hits[*of], entries, key, normalize);
            let distinct: HashSet<&str> = keys.iter().map(String::as_str).collect();
            Some((keys.len() - distinct.len()) as f64)
        }
        Metric::Distinct { of, key, normalize } => {
            let keys = keys(&hits[*of], entries, key, normalize);
            let distinct: HashSet<&str> = keys.iter().map(String::as_str).collect();
            Some(distinct.len() as f64)
        }
        // Computed by `facts`, which can record a failure.
        Metric::Native(_) => None,
    }
}

fn metric_witnesses(metric: &Metric, entries: &[Entry], hits: &[Vec<u32>]) -> Vec<u32> {
    match metric {
        Metric::Ratio { of, over } => hits[*over]
            .iter()
            .copied()
            .filter(|i| hits[*of].binary_search(i).is_err())
            .collect(),
        Metric::Duplicates { of, key, normalize } | Metric::Distinct { of, key, normalize } => {
            let want_repeats = matches!(metric, Metric::Duplicates { .. });
            let mut seen = HashSet::new();
            hits[*of]
                .iter()
                .copied()
                .filter(|&i| {
                    let Some(k) = normalized_key(&entries[i as usize], key, normalize) else {
                        return false;
                    };
                    seen.insert(k) != want_repeats
                })
                .collect()
        }
        Metric::Native(_) => Vec::new(),
    }
}

/// The normalised keys of the matching entries; missing and empty keys are left out
/// (CLEO's `.filter(Boolean)`).
fn keys(positions: &[u32], entries: &[Entry], key: &Field, normalize: &[Normalize]) -> Vec<String> {
    positions
        .iter()
        .filter_map(|&i| normalized_key(&entries[i as usize], key, normalize))
        .collect()
}

fn normalized_key(entry: &Entry, key: &Field, normalize: &[Normalize]) -> Option<String> {
    let mut k = key.get(entry).display()?;
    for step in normalize {
        k = match step {
            Normalize::Lowercase => k.to_lowercase(),
            Normalize::Trim => crate::entry::js_trim(&k).to_owned(),
            Normalize::CollapseWhitespace => k.split_whitespace().collect::<Vec<_>>().join(" "),
        };
    }
    (!k.is_empty()).then_some(k)
}

/// A selector decided from the entry's ids and result, or a reference to one already
/// decided for this entry; `None` for the others.
#[inline(always)]
fn quick_match(
    selector: &Selector,
    e: &Entry,
    keys: EntryKeys,
    known: &[Option<bool>],
) -> Option<bool> {
    Some(match selector {
        Selector::Domain(names) => names.ids.contains(&keys.domain),
        Selector::Operation(names) => names.ids.contains(&keys.operation),
        Selector::Success(want) => e.result.success == *want,
        Selector::ExitCode(codes) => codes.ids.contains(&keys.exit_code),
        Selector::Ref(id) => return known.get(*id).copied().flatten(),
        _ => return None,
    })
}

/// The selector ids with every referenced selector before the selectors that refer to it
/// (a reference cycle, refused by validation, is cut where it closes).
fn evaluation_order(selectors: &[Selector]) -> Vec<usize> {
    fn refs(selector: &Selector, out: &mut Vec<usize>) {
        match selector {
            Selector::Ref(id) => out.push(*id),
            Selector::All(items) | Selector::Any(items) => {
                items.iter().for_each(|item| refs(item, out))
            }
            Selector::Not(inner) => refs(inner, out),
            _ => {}
        }
    }
    fn visit(s: usize, selectors: &[Selector], seen: &mut [bool], order: &mut Vec<usize>) {
        if seen.get(s).copied() != Some(false) {
            return;
        }
        seen[s] = true;
        let mut targets = Vec::new();
        refs(&selectors[s], &mut targets);
        for target in targets {
            visit(target, selectors, seen, order);
        }
        order.push(s);
    }
    let mut seen = vec![false; selectors.len()];
    let mut order = Vec::with_capacity(selectors.len());
    for s in 0..selectors.len() {
        visit(s, selectors, &mut seen, &mut order);
    }
    order
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::{grade, pack, session};

    #[test]
    fn each_selector_lists_the_positions_it_matches() {
        let pack = pack("      - { id: r, doc: d, points: 1 }\n");
        let session = session(&[("tasks", "find"), ("session", "list"), ("tasks", "add!")]);
        let facts = pack.facts("s", &session.entries, false);
        let hits = |name: &str| facts.hits[pack.selector_index[name]].clone();
        assert_eq!(hits("tasks"), [0, 2]);
        assert_eq!(hits("sessions"), [1]);
        assert_eq!(hits("lookups"), [0]);
        assert_eq!(hits("failed"), [2]);
        assert_eq!(facts.metrics, [Some(2.0)]);
        assert!(
            facts.metric_witnesses.is_empty(),
            "only explained grades keep witnesses"
        );
    }

    #[test]
    fn a_ratio_is_explained_by_the_entries_outside_it() {
        let rule = "      - id: r\n        doc: d\n        when: { metric: share, at_most: 0.5 }\n        points: 1\n";
        // share = tasks / sessions; the `session` entries are not tasks, and explain it.
        let result = grade(
            &pack(rule),
            &[("session", "a"), ("tasks", "b"), ("session", "c")],
        );
        let traces = &result.explain.as_ref().expect("explained")["d"];
        let positions: Vec<usize> = traces[0].entries.iter().map(|e| e.position).collect();
        assert_eq!(positions, [1, 3]);
    }

    #[test]
    fn a_ratio_over_nothing_is_undefined() {
        let pack = pack("      - { id: r, doc: d, points: 1 }\n");
        let session = session(&[("tasks", "find")]);
        assert_eq!(pack.facts("s", &session.entries, false).metrics, [None]);
    }
}
