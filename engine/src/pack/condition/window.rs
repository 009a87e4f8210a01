//! `entry`, `followed_by` and `preceded_by`: conditions on the entry of a `for_each` rule.
//!
//! - `entry: SELECTOR` holds when the current entry matches;
//! - `followed_by: SELECTOR, within: N` holds when one of the next `N` entries matches;
//! - `preceded_by: SELECTOR, within: N` holds when one of the previous `N` entries matches.
//!
//! Each looks at one entry, so each works only inside a `for_each` rule; `within` is
//! required for the two windows and is 1 or more. The entry found is the witness.

use super::Ctx;
use super::{Condition, Kind, RawCondition, Witnesses};
use crate::entry::Reach;
use crate::pack::codes::Code;
use crate::pack::compile::Compiler;
use crate::pack::CompiledPack;

#[derive(Debug, Clone)]
pub(crate) struct Window {
    pub selector: usize,
    pub reach: Reach,
}

pub(super) fn compile(
    c: &mut Compiler<'_>,
    raw: &RawCondition,
    kind: Kind,
    path: &str,
    has_entry: bool,
) -> Option<Condition> {
    let subject = kind.key();
    if !has_entry {
        c.problem(
            Code::NeedsEntry,
            format!("{path}.{subject}"),
            format!("`{subject}` looks at one entry, so it works only in a `for_each` rule"),
        );
        return None;
    }
    let target = match kind {
        Kind::Entry => raw.entry.as_ref(),
        Kind::FollowedBy => raw.followed_by.as_ref(),
        _ => raw.preceded_by.as_ref(),
    }?;
    let selector = c.selector_ref(target, &format!("{path}.{subject}"));
    if let (Some(id), crate::pack::raw::SelectorRef::Inline(_)) = (selector, target) {
        // Written here, it is read nowhere else (ids are ascending as they are made).
        c.window_selectors.push(id);
    }
    if kind == Kind::Entry {
        return Some(Condition::Window(Window {
            selector: selector?,
            reach: Reach::Here,
        }));
    }
    let within = match raw.within {
        Some(0) => {
            c.problem(
                Code::ConditionShape,
                format!("{path}.within"),
                "`within` must be 1 or more: it counts the entries to look at",
            );
            return None;
        }
        Some(w) => w,
        None => {
            c.problem(
                Code::ConditionShape,
                path,
                format!("`{subject}` needs `within`: how many entries to look at (1 or more)"),
            );
            return None;
        }
    };
    Some(Condition::Window(Window {
        selector: selector?,
        reach: if kind == Kind::FollowedBy {
            Reach::After(within)
        } else {
            Reach::Before(within)
        },
    }))
}

impl Window {
    pub(super) fn holds(&self, ctx: &Ctx<'_, '_>, mut witnesses: Witnesses<'_>) -> bool {
        let Some(at) = ctx.entry else { return false };
        let facts = ctx.facts;
        let found = self.reach.find(&facts.hits[self.selector], at);
        // The entries looked at before the answer: a test there that could not decide one
        // fails the session, as the same test on a named selector would.
        match (self.reach, found) {
            (Reach::Here, Some(_)) => {}
            (Reach::Here, None) => facts.read_deferred(self.selector, at, at, false),
            (Reach::After(_), Some(j)) => {
                facts.read_deferred(self.selector, at + 1, j - 1, false);
                witnesses.add(&[j]);
            }
            (Reach::After(within), None) => facts.read_deferred(
                self.selector,
                at.saturating_add(1),
                at.saturating_add(within),
                false,
            ),
            (Reach::Before(_), Some(j)) => {
                facts.read_deferred(self.selector, j + 1, at - 1, true);
                witnesses.add(&[j]);
            }
            (Reach::Before(within), None) => {
                if let Some(to) = at.checked_sub(1) {
                    facts.read_deferred(self.selector, at.saturating_sub(within), to, true);
                }
            }
        }
        found.is_some()
    }

    pub(super) fn never_holds(&self, pack: &CompiledPack) -> Option<String> {
        crate::pack::lint::never_matches(pack, &pack.selectors[self.selector], 0)
            .map(|why| format!("its selector {why}"))
    }
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::{errors, grade, grade_rule, pack, warnings};

    fn rule(when: &str) -> String {
        format!("      - id: r\n        doc: d\n        for_each: failed\n        when: {when}\n        points: 1\n")
    }

    #[test]
    fn followed_by_looks_at_the_next_entries_only() {
        let rule = rule("{ followed_by: lookups, within: 2 }");
        // Found one and two entries later; not three.
        assert_eq!(grade_rule(&rule, &[("x", "y!"), ("tasks", "find")]), 1.0);
        assert_eq!(
            grade_rule(&rule, &[("x", "y!"), ("a", "b"), ("tasks", "find")]),
            1.0
        );
        assert_eq!(
            grade_rule(
                &rule,
                &[("x", "y!"), ("a", "b"), ("a", "b"), ("tasks", "find")]
            ),
            0.0
        );
        // Not before.
        assert_eq!(grade_rule(&rule, &[("tasks", "find"), ("x", "y!")]), 0.0);
    }

    #[test]
    fn preceded_by_looks_at_the_previous_entries_only() {
        let rule = rule("{ preceded_by: lookups, within: 1 }");
        assert_eq!(grade_rule(&rule, &[("tasks", "find"), ("x", "y!")]), 1.0);
        assert_eq!(
            grade_rule(&rule, &[("tasks", "find"), ("a", "b"), ("x", "y!")]),
            0.0
        );
        assert_eq!(grade_rule(&rule, &[("x", "y!"), ("tasks", "find")]), 0.0);
    }

    #[test]
    fn a_failed_lookup_is_not_its_own_follow_up() {
        // The current entry matches the selector, and only later ones count.
        let rule = rule("{ followed_by: { domain: tasks }, within: 3 }");
        assert_eq!(grade_rule(&rule, &[("tasks", "find!")]), 0.0);
        assert_eq!(
            grade_rule(&rule, &[("tasks", "find!"), ("tasks", "find!")]),
            1.0
        );
    }

    #[test]
    fn entry_tests_the_current_entry() {
        let rule = rule("{ entry: tasks }");
        assert_eq!(
            grade_rule(&rule, &[("tasks", "add!"), ("x", "y!"), ("tasks", "show!")]),
            2.0
        );
    }

    #[test]
    fn the_entry_found_is_the_witness() {
        let result = grade(
            &pack(&rule("{ followed_by: lookups, within: 5 }")),
            &[("x", "y!"), ("a", "b"), ("tasks", "show")],
        );
        let traces = &result.explain.as_ref().expect("explained")["d"];
        let positions: Vec<usize> = traces[0].entries.iter().map(|e| e.position).collect();
        assert_eq!(positions, [1, 3]);
    }

    #[test]
    fn windows_need_a_for_each_entry_and_a_positive_within() {
        let session_rule = "      - id: r\n        doc: d\n        when: { followed_by: tasks, within: 3 }\n        points: 1\n";
        assert_eq!(
            errors(session_rule),
            ["dimensions[0].rules[0].when.followed_by: `followed_by` looks at one entry, so it works only in a `for_each` rule"]
        );
        assert_eq!(
            errors(&rule("{ preceded_by: tasks }")),
            ["dimensions[0].rules[0].when: `preceded_by` needs `within`: how many entries to look at (1 or more)"]
        );
        assert_eq!(
            errors(&rule("{ followed_by: tasks, within: 0 }")),
            ["dimensions[0].rules[0].when.within: `within` must be 1 or more: it counts the entries to look at"]
        );
    }

    #[test]
    fn a_window_over_a_selector_that_matches_nothing_is_reported() {
        assert_eq!(
            warnings(&rule("{ followed_by: { domain: [] }, within: 3 }")),
            ["dimensions[0].rules[0].when: this case of rule `r` can never apply: its selector matches nothing: it lists no names"]
        );
    }
}
