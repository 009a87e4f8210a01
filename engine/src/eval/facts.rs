//! The single pass over a session: which entries each selector matches, and each metric's
//! value (with, when explained, the entries that moved it). What it fills, [`Facts`], lives
//! with the conditions that read it (`pack/condition/context.rs`).

use std::cell::Cell;
use std::collections::HashSet;

use crate::entry::Entry;
use crate::field::Field;
use crate::pack::condition::Facts;
use crate::pack::{CompiledPack, EntryKeys, Metric, Normalize, Selector};
use crate::reference::Trajectory;

/// A test that reads text met, in the entry at position `at`, a value it cannot read as
/// text: CLEO's grader throws there (`desc.trim is not a function`), so the session gets
/// no grade rather than an answer guessed for it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NotText<'p> {
    pub test: TextTest,
    pub field: &'p Field,
    pub at: u32,
}

/// What evaluating the selectors has decided for one entry: each selector's match, once
/// taken (a reference reads it instead of matching again), and the field of the first test
/// that could not decide (`blank` on a number), which fails the session. One argument for
/// both, so that the evaluation of every selector passes no more than it did.
pub(crate) struct Decisions<'p> {
    pub matched: Vec<Option<bool>>,
    pub undecided: Cell<Option<&'p Field>>,
}

impl Decisions<'_> {
    /// No decision yet, for `selectors` selectors.
    pub fn new(selectors: usize) -> Self {
        Decisions {
            matched: vec![None; selectors],
            undecided: Cell::new(None),
        }
    }
}

/// Which test of text [`NotText`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextTest {
    /// A `blank` test in the selector with this id.
    Blank { selector: usize },
    /// The `normalize` steps of the metric with this id.
    Normalize { metric: usize },
    /// The key of the metric with this id, which has no `normalize` steps and so compares
    /// keys as JavaScript prints them.
    Key { metric: usize },
    /// A message of the rule `rule` of the dimension `dimension`, which prints an entry's
    /// field as JavaScript does.
    Message { dimension: usize, rule: usize },
}

impl CompiledPack {
    pub(super) fn facts<'s, 'p: 's>(
        &'p self,
        session_id: &'s str,
        entries: &'s [Entry],
        reference: Option<&Trajectory>,
        explain: bool,
    ) -> Result<Facts<'s>, NotText<'p>> {
        let mut hits: Vec<Vec<u32>> = vec![Vec::new(); self.selectors.len()];
        // Per entry, what the selectors already evaluated decided: a reference to one
        // (`all: [task_added, …]`) reads it instead of matching again. Referenced selectors
        // are evaluated first, so a graph that doubles per level costs one match per selector.
        let order = &self.selector_order;
        let mut decisions = Decisions::new(self.selectors.len());
        let mut deferred = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            decisions.matched.fill(None);
            let keys = self.vocabulary.keys(entry);
            // Selectors decided when the pack compiled are read from the entry's row.
            let row = self
                .decided
                .as_ref()
                .map(|d| (&d.decided, d.row(keys, entry.result.success)));
            for &s in order {
                let hit = match row {
                    Some((decided, bits)) if decided[s] => bits[s / 64] >> (s % 64) & 1 == 1,
                    _ => self.matches(&self.selectors[s], entry, keys, &decisions),
                };
                decisions.matched[s] = Some(hit);
                if hit {
                    hits[s].push(i as u32);
                }
            }
            if decisions.undecided.get().is_some() {
                self.undecided_at(entry, keys, order, &decisions, i as u32, &mut deferred)?;
            }
        }
        deferred.sort_unstable_by_key(|&(selector, at, _)| (selector, at));
        let mut facts = Facts {
            session_id,
            entries,
            hits,
            deferred,
            deferred_read: Cell::new(None),
            metrics: Vec::with_capacity(self.metrics.len()),
            metric_witnesses: Vec::new(),
            native_failure: std::cell::RefCell::new(None),
            failed_metric: None,
            unprintable: std::cell::RefCell::new(None),
            pairings: Vec::new(),
        };
        let mut native_witnesses = vec![Vec::new(); self.metrics.len()];
        for (i, m) in self.metrics.iter().enumerate() {
            let value = match m {
                // Undefined without a reference: the dimensions that read it do not apply.
                Metric::Trajectory(t) => reference.map(|r| {
                    let pairing = t.evaluate(entries, &facts.hits, r);
                    let value = pairing.scored.value;
                    if explain {
                        native_witnesses[i] = pairing.extra();
                        facts.pairings.push((i, pairing));
                    }
                    value
                }),
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
                _ => metric_value(m, entries, &facts.hits).map_err(|(field, at)| NotText {
                    test: match m {
                        Metric::Duplicates { normalize, .. }
                        | Metric::Distinct { normalize, .. }
                            if normalize.is_empty() =>
                        {
                            TextTest::Key { metric: i }
                        }
                        _ => TextTest::Normalize { metric: i },
                    },
                    field,
                    at,
                })?,
            };
            facts.metrics.push(value);
        }
        if explain {
            facts.metric_witnesses = self
                .metrics
                .iter()
                .zip(native_witnesses)
                .map(|(m, native)| match m {
                    Metric::Native(_) | Metric::Trajectory(_) => native,
                    _ => metric_witnesses(m, entries, &facts.hits),
                })
                .collect();
        }
        Ok(facts)
    }

    /// Sorts out the selectors whose own tests (not those they read from a referenced
    /// selector) cannot decide `entry`, at position `at`: the first that counts at every
    /// entry fails the session; one written in place under a window condition counts only
    /// where that condition looks, so it is put in `deferred` for the condition to find.
    /// Found again only once a test could not decide, so that the pass itself checks one
    /// cell per entry.
    #[cold]
    fn undecided_at<'p>(
        &'p self,
        entry: &Entry,
        keys: EntryKeys,
        order: &[usize],
        decisions: &Decisions<'p>,
        at: u32,
        deferred: &mut Vec<(usize, u32, &'p Field)>,
    ) -> Result<(), NotText<'p>> {
        for &s in order {
            decisions.undecided.set(None);
            self.matches(&self.selectors[s], entry, keys, decisions);
            let Some(field) = decisions.undecided.get() else {
                continue;
            };
            if self.window_selectors.binary_search(&s).is_ok() {
                deferred.push((s, at, field));
            } else {
                return Err(NotText {
                    test: TextTest::Blank { selector: s },
                    field,
                    at,
                });
            }
        }
        decisions.undecided.set(None);
        Ok(())
    }

    /// Whether `e` (whose domain, operation and exit code ids are `keys`) matches `selector`. A
    /// reference to a selector in `known` (the decisions already taken for this entry)
    /// reads that decision instead of matching again. A test that cannot decide (`blank` on
    /// a number) puts its field in `known.undecided`, unless one is there already, and counts
    /// as not matching: the caller fails the session. Tests are evaluated as written, `all`
    /// stopping at its first false and `any` at its first true, so a test after one that
    /// failed is never evaluated.
    pub(crate) fn matches<'p>(
        &'p self,
        selector: &'p Selector,
        e: &Entry,
        keys: EntryKeys,
        known: &Decisions<'p>,
    ) -> bool {
        // Leaves are decided inline: most selectors are `all` of a domain, an operation and
        // a result, and a call per leaf cost more than the comparisons.
        let each = |s: &'p Selector| {
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
            Selector::Blank(field, want) => match field.get(e).blank() {
                Some(blank) => blank == *want,
                None => not_decided(field, &known.undecided),
            },
            Selector::Present(field, want) => field.get(e).is_missing() != *want,
            Selector::Contains(field, text) => field
                .get(e)
                .as_str()
                .is_some_and(|s| s.contains(text.as_str())),
            Selector::Type(field, kind) => field.get(e).is_type(*kind),
            Selector::Ref(id) => match known.matched.get(*id) {
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

/// Records that `field` could not be decided, and answers "no match" in its place.
#[cold]
#[inline(never)]
fn not_decided<'p>(field: &'p Field, undecided: &Cell<Option<&'p Field>>) -> bool {
    if undecided.get().is_none() {
        undecided.set(Some(field));
    }
    false
}

/// The metric's value; for a key its `normalize` steps cannot read, the key's field and
/// the position of the entry.
fn metric_value<'p>(
    metric: &'p Metric,
    entries: &[Entry],
    hits: &[Vec<u32>],
) -> Result<Option<f64>, (&'p Field, u32)> {
    Ok(match metric {
        Metric::Ratio { of, over } => {
            let over = hits[*over].len();
            (over > 0).then(|| hits[*of].len() as f64 / over as f64)
        }
        Metric::Duplicates { of, key, normalize } => {
            let keys = keys(&hits[*of], entries, key, normalize).map_err(|at| (key, at))?;
            let distinct: HashSet<&str> = keys.iter().map(String::as_str).collect();
            Some((keys.len() - distinct.len()) as f64)
        }
        Metric::Distinct { of, key, normalize } => {
            let keys = keys(&hits[*of], entries, key, normalize).map_err(|at| (key, at))?;
            let distinct: HashSet<&str> = keys.iter().map(String::as_str).collect();
            Some(distinct.len() as f64)
        }
        // Computed by `facts`, which can record a failure or has the reference.
        Metric::Native(_) | Metric::Trajectory(_) => None,
    })
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
                    // A key the steps cannot read has already failed the session.
                    let Ok(Some(k)) = normalized_key(&entries[i as usize], key, normalize) else {
                        return false;
                    };
                    seen.insert(k) != want_repeats
                })
                .collect()
        }
        Metric::Native(_) | Metric::Trajectory(_) => Vec::new(),
    }
}

/// The normalised keys of the matching entries; missing and empty keys are left out
/// (CLEO's `.filter(Boolean)`). A key the steps cannot read fails with its entry's position.
fn keys(
    positions: &[u32],
    entries: &[Entry],
    key: &Field,
    normalize: &[Normalize],
) -> Result<Vec<String>, u32> {
    let mut keys = Vec::with_capacity(positions.len());
    for &i in positions {
        if let Some(k) = normalized_key(&entries[i as usize], key, normalize).map_err(|()| i)? {
            keys.push(k);
        }
    }
    Ok(keys)
}

/// The entry's key after the `normalize` steps; `None` when it is missing or ends empty.
/// The steps read text, as CLEO's `title.toLowerCase()` does: a key that is present and not
/// text (a number, a boolean, an array, an object) is an error, where CLEO's grader throws.
/// Without steps, a key of any kind compares as JavaScript prints it, and one JavaScript
/// cannot print (an object with its own `toString`) is an error too.
fn normalized_key(
    entry: &Entry,
    key: &Field,
    normalize: &[Normalize],
) -> Result<Option<String>, ()> {
    let value = key.get(entry);
    if !normalize.is_empty() && !value.is_missing() && value.as_str().is_none() {
        return Err(());
    }
    let Some(mut k) = value.display().map_err(|_| ())? else {
        return Ok(None);
    };
    for step in normalize {
        k = match step {
            Normalize::Lowercase => k.to_lowercase(),
            Normalize::Trim => crate::entry::js_trim(&k).to_owned(),
            Normalize::CollapseWhitespace => k.split_whitespace().collect::<Vec<_>>().join(" "),
        };
    }
    Ok((!k.is_empty()).then_some(k))
}

/// A selector decided from the entry's ids and result, or a reference to one already
/// decided for this entry; `None` for the others.
#[inline(always)]
fn quick_match(
    selector: &Selector,
    e: &Entry,
    keys: EntryKeys,
    known: &Decisions<'_>,
) -> Option<bool> {
    Some(match selector {
        Selector::Domain(names) => names.ids.contains(&keys.domain),
        Selector::Operation(names) => names.ids.contains(&keys.operation),
        Selector::Success(want) => e.result.success == *want,
        Selector::ExitCode(codes) => codes.ids.contains(&keys.exit_code),
        Selector::Ref(id) => return known.matched.get(*id).copied().flatten(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::{grade, pack, session};

    #[test]
    fn each_selector_lists_the_positions_it_matches() {
        let pack = pack("      - { id: r, doc: d, points: 1 }\n");
        let session = session(&[("tasks", "find"), ("session", "list"), ("tasks", "add!")]);
        let facts = pack
            .facts("s", &session.entries, None, false)
            .expect("decided");
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
        let facts = pack
            .facts("s", &session.entries, None, false)
            .expect("decided");
        assert_eq!(facts.metrics, [None]);
    }
}

#[cfg(test)]
mod text_tests {
    use serde_json::{json, Value};

    use crate::entry::Session;
    use crate::eval::{EvalError, GradeOptions};
    use crate::pack::testing::{entry, pack};

    /// Tasks added and their descriptions, and metrics of their titles with and without
    /// `normalize`.
    const PACK: &str = "id: t
version: '1'
name: T
selectors:
  added: { domain: tasks, operation: add }
  undescribed: { all: [added, { field: params.description, blank: true }] }
metrics:
  repeats: { duplicates: { of: added, key: params.title, normalize: [lowercase, trim] } }
  raw_repeats: { duplicates: { of: added, key: params.title } }
  raw_titles: { distinct: { of: added, key: params.title } }
dimensions:
  - id: d
    max: 100
    rules:
      - { id: r, doc: d, points: 1 }
";

    /// A session of `(domain, operation, params)`.
    fn session(calls: &[(&str, &str, Value)]) -> Session {
        let entries = calls
            .iter()
            .enumerate()
            .map(|(i, (domain, operation, params))| {
                let mut e = entry(i, domain, operation);
                if let Value::Object(map) = params {
                    for (k, v) in map {
                        e.params.insert(k.as_str(), v.clone());
                    }
                }
                e
            })
            .collect();
        Session {
            id: "s1".to_owned(),
            entries,
            skipped_lines: 0,
        }
    }

    fn message(calls: &[(&str, &str, Value)]) -> String {
        match pack(PACK).grade(&session(calls), &GradeOptions::default()) {
            Err(err @ EvalError::NotText { .. }) => err.to_string(),
            other => panic!("expected a session not graded, got {other:?}"),
        }
    }

    #[test]
    fn blank_on_a_truthy_value_that_is_not_text_fails_the_session_naming_the_entry() {
        for (description, shown) in [
            (json!(7), "a number (`7`)"),
            (json!(-0.5), "a number (`-0.5`)"),
            (json!(true), "a boolean (`true`)"),
            (json!([]), "an array (`[]`)"),
            (json!({ "text": "d" }), "an object (`{\"text\":\"d\"}`)"),
        ] {
            let calls = [
                ("tasks", "find", json!({})),
                (
                    "tasks",
                    "add",
                    json!({ "title": "x", "description": description }),
                ),
            ];
            assert_eq!(
                message(&calls),
                format!("rubric `t` cannot grade session `s1`: `blank` of selector `undescribed` tests text, and `params.description` of entry #2 of the session is {shown} [E040]")
            );
        }
    }

    #[test]
    fn a_long_value_is_shown_cut_short() {
        let long = "y".repeat(100);
        let calls = [("tasks", "add", json!({ "description": [long] }))];
        let expected = format!("an array (`[\"{}…`)", "y".repeat(38));
        assert!(message(&calls).ends_with(&format!("{expected} [E040]")));
    }

    #[test]
    fn blank_decides_falsy_values_and_text_as_before() {
        let pack = pack(PACK);
        let calls: Vec<(&str, &str, Value)> = [
            json!({}),
            json!({ "description": null }),
            json!({ "description": false }),
            json!({ "description": 0 }),
            json!({ "description": "" }),
            json!({ "description": " \n" }),
            json!({ "description": "d" }),
        ]
        .into_iter()
        .map(|params| ("tasks", "add", params))
        .collect();
        let session = session(&calls);
        let facts = pack
            .facts("s1", &session.entries, None, false)
            .expect("decided");
        assert_eq!(
            facts.hits[pack.selector_index["undescribed"]],
            [0, 1, 2, 3, 4, 5]
        );
    }

    #[test]
    fn blank_is_evaluated_only_on_the_entries_that_reach_it() {
        // Not `tasks.add`: `all` stops at `added`, so the description is never tested.
        let calls = [
            ("tasks", "find", json!({ "description": 7 })),
            ("tasks", "add", json!({ "title": "x", "description": "d" })),
        ];
        let result = pack(PACK).grade(&session(&calls), &GradeOptions::default());
        assert!(result.is_ok(), "{result:?}");
    }

    #[test]
    fn a_normalized_key_that_is_not_text_fails_the_session_naming_the_metric() {
        for (title, shown) in [
            (json!(3), "a number (`3`)"),
            (json!(0), "a number (`0`)"),
            (json!(false), "a boolean (`false`)"),
            (json!(["x"]), "an array (`[\"x\"]`)"),
        ] {
            let calls = [
                ("tasks", "add", json!({ "title": "x", "description": "d" })),
                (
                    "tasks",
                    "add",
                    json!({ "title": title, "description": "d" }),
                ),
            ];
            assert_eq!(
                message(&calls),
                format!("rubric `t` cannot grade session `s1`: `normalize` of metric `repeats` reads text, and `params.title` of entry #2 of the session is {shown} [E040]")
            );
        }
    }

    #[test]
    fn a_normalized_key_is_read_only_for_the_entries_of_its_metric() {
        let calls = [
            ("tasks", "find", json!({ "title": 3 })),
            ("tasks", "add", json!({ "title": "X " })),
            ("tasks", "add", json!({ "title": null, "description": "d" })),
            ("tasks", "add", json!({ "title": "x" })),
        ];
        let pack = pack(PACK);
        let session = session(&calls);
        let facts = pack
            .facts("s1", &session.entries, None, false)
            .expect("decided");
        assert_eq!(facts.metrics[pack.metric_index["repeats"]], Some(1.0));
    }

    /// Keys without `normalize`, and a message that prints a field of each added entry.
    const RAW_KEYS: &str = "id: t
version: '1'
name: T
selectors:
  added: { domain: tasks, operation: add }
metrics:
  raw_repeats: { duplicates: { of: added, key: params.title } }
  raw_titles: { distinct: { of: added, key: params.title } }
dimensions:
  - id: d
    max: 100
    rules:
      - id: named
        doc: d
        for_each: added
        points: 1
        flag: 'added {entry.params.name}'
";

    #[test]
    fn keys_without_normalize_still_compare_as_javascript_prints_them() {
        let pack = crate::pack::testing::pack(RAW_KEYS);
        let calls: Vec<(&str, &str, Value)> = [json!(3), json!("3"), json!(true), json!([1])]
            .into_iter()
            .map(|title| ("tasks", "add", json!({ "title": title })))
            .collect();
        let session = session(&calls);
        let facts = pack
            .facts("s1", &session.entries, None, false)
            .expect("decided");
        assert_eq!(facts.metrics[pack.metric_index["raw_repeats"]], Some(1.0));
        assert_eq!(facts.metrics[pack.metric_index["raw_titles"]], Some(3.0));
    }

    /// A key or a message value JavaScript throws on rather than print (an object with its
    /// own `toString`) printed as `[object Object]` and graded; it leaves the session not
    /// graded, naming the metric or the rule.
    #[test]
    fn a_value_javascript_cannot_print_fails_the_session_naming_where_it_is_printed() {
        let grade = |params: Value| {
            let calls = [
                ("tasks", "add", json!({ "title": "t", "name": "n" })),
                ("tasks", "add", params),
            ];
            crate::pack::testing::pack(RAW_KEYS)
                .grade(&session(&calls), &GradeOptions::default())
                .map(|r| r.flags)
                .map_err(|e| e.to_string())
        };
        let object = json!({ "toString": 1 });
        assert_eq!(
            grade(json!({ "title": object, "name": "n" })),
            Err("rubric `t` cannot grade session `s1`: metric `raw_repeats` compares keys as JavaScript prints them, which throws on an object with a `toString` of its own, and `params.title` of entry #2 of the session is an object (`{\"toString\":1}`) [E040]".to_owned())
        );
        assert_eq!(
            grade(json!({ "title": "u", "name": [1, object] })),
            Err("rubric `t` cannot grade session `s1`: a message of rule `named` prints `params.name` as JavaScript does, which throws on an object with a `toString` of its own, and `params.name` of entry #2 of the session is an array (`[1,{\"toString\":1}]`) [E040]".to_owned())
        );
        assert_eq!(
            grade(json!({ "title": { "valueOf": 1 }, "name": [null, { "a": 1 }] })),
            Ok(vec![
                "added n".to_owned(),
                "added ,[object Object]".to_owned()
            ])
        );
    }

    #[test]
    fn an_entry_is_named_by_its_place_in_the_source() {
        let file = crate::entry::SourceFile::named(std::path::Path::new("/logs/audit.jsonl"));
        let mut session = session(&[("tasks", "add", json!({ "description": 7 }))]);
        session.entries[0].origin = crate::entry::Origin::line(file, 18);
        let err = pack(PACK)
            .grade(&session, &GradeOptions::default())
            .map(|_| ())
            .expect_err("not graded");
        assert_eq!(err.to_string(), "rubric `t` cannot grade session `s1`: `blank` of selector `undescribed` tests text, and `params.description` of the entry at `audit.jsonl:18` is a number (`7`) [E040]");
        assert_eq!(err.code(), Some(crate::pack::codes::Code::NotText));
    }
}

#[cfg(test)]
mod in_place_tests {
    use serde_json::{json, Value};

    use crate::entry::{Entry, Session};
    use crate::eval::GradeOptions;
    use crate::pack::testing::{entry, pack};
    use crate::pack::CompiledPack;

    fn rule_pack(when: &str) -> CompiledPack {
        pack(&format!(
            "id: t
version: '1'
name: T
selectors:
  added: {{ domain: tasks, operation: add }}
dimensions:
  - id: d
    max: 10
    rules:
      - id: r
        doc: d
        for_each: added
        cases:
          - when: {when}
            points: 1
"
        ))
    }

    /// Entries of `(operation, description)`, all in domain `tasks`.
    fn session(ops: &[(&str, Value)]) -> Session {
        let entries: Vec<Entry> = ops
            .iter()
            .enumerate()
            .map(|(i, (operation, description))| {
                let mut e = entry(i, "tasks", operation);
                e.params.insert("description", description.clone());
                e
            })
            .collect();
        Session {
            id: "s1".to_owned(),
            entries,
            skipped_lines: 0,
        }
    }

    fn outcome(pack: &CompiledPack, ops: &[(&str, Value)]) -> Result<f64, String> {
        pack.grade(&session(ops), &GradeOptions::default())
            .map(|r| r.total_score.0)
            .map_err(|e| e.to_string())
    }

    /// The refusal of a `blank` test at key path `at` (under the rule) on entry `n`.
    fn refused(at: &str, n: usize, value: &str) -> Result<f64, String> {
        Err(format!("rubric `t` cannot grade session `s1`: `blank` of the selector at `dimensions[0].rules[0].{at}` tests text, and `params.description` of entry #{n} of the session is {value} [E040]"))
    }

    /// A selector written in place under `entry` is tested only at the `for_each` entries,
    /// as the condition reads it there and nowhere else: a number in another entry's
    /// description fails no session, one in an entry the rule reads names the selector by
    /// where it is written.
    #[test]
    fn a_blank_test_under_entry_reads_only_the_for_each_entries() {
        let pack = rule_pack("{ entry: { field: params.description, blank: true } }");
        assert_eq!(
            outcome(&pack, &[("find", json!(7)), ("add", json!("d"))]),
            Ok(0.0)
        );
        assert_eq!(
            outcome(&pack, &[("find", json!(7)), ("add", json!(""))]),
            Ok(1.0)
        );
        assert_eq!(
            outcome(&pack, &[("find", json!("x")), ("add", json!(7))]),
            refused("cases[0].when.entry", 2, "a number (`7`)")
        );
    }

    /// `followed_by` looks at the next entries until the first match: a test that cannot
    /// decide one of them before it fails the session, one after it is never read.
    #[test]
    fn a_blank_test_under_followed_by_reads_the_entries_up_to_the_match() {
        let pack = rule_pack(
            "{ followed_by: { all: [{ operation: show }, { field: params.description, blank: true }] }, within: 3 }",
        );
        let met = [("add", json!("d")), ("show", json!("")), ("show", json!(7))];
        assert_eq!(outcome(&pack, &met), Ok(1.0));
        let beyond = [
            ("add", json!("d")),
            ("find", json!(7)),
            ("find", json!(7)),
            ("find", json!(7)),
            ("show", json!(7)),
        ];
        assert_eq!(outcome(&pack, &beyond), Ok(0.0));
        let before = [
            ("add", json!("d")),
            ("show", json!(true)),
            ("show", json!("")),
        ];
        assert_eq!(
            outcome(&pack, &before),
            refused("cases[0].when.followed_by", 2, "a boolean (`true`)")
        );
    }

    /// `preceded_by` looks back from the entry, nearest first, until the first match.
    #[test]
    fn a_blank_test_under_preceded_by_reads_back_to_the_nearest_match() {
        let pack = rule_pack(
            "{ preceded_by: { all: [{ operation: show }, { field: params.description, blank: true }] }, within: 3 }",
        );
        let met = [("show", json!(7)), ("show", json!("")), ("add", json!("d"))];
        assert_eq!(outcome(&pack, &met), Ok(1.0));
        let between = [
            ("show", json!("")),
            ("show", json!([1])),
            ("add", json!("d")),
        ];
        assert_eq!(
            outcome(&pack, &between),
            Err("rubric `t` cannot grade session `s1`: `blank` of the selector at `dimensions[0].rules[0].cases[0].when.preceded_by` tests text, and `params.description` of entry #2 of the session is an array (`[1]`) [E040]".to_owned())
        );
    }

    /// A selector written in place anywhere else (`count`, `for_each`, …) is read at every
    /// entry, as a named one is.
    #[test]
    fn a_blank_test_under_count_reads_every_entry() {
        let pack = pack(
            "id: t
version: '1'
name: T
dimensions:
  - id: d
    max: 10
    rules:
      - id: r
        doc: d
        when: { count: { field: params.description, blank: true }, at_least: 1 }
        points: 1
",
        );
        assert_eq!(
            outcome(&pack, &[("find", json!(7)), ("add", json!("d"))]),
            refused("when.count", 1, "a number (`7`)")
        );
    }
}
