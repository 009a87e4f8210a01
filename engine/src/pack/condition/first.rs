//! `first: SELECTOR` with `before_first: OTHER` or `is: OTHER`: the first entry (in session
//! order) that matches a selector.
//!
//! - with `before_first`, it holds when no entry matches `OTHER`, or the first that does is
//!   not earlier in time than the first match of `SELECTOR` (CLEO's "session.list before the
//!   first task operation");
//! - with `is`, it holds when that first entry also matches `OTHER`.
//!
//! Neither holds when no entry matches `SELECTOR`.

use super::Ctx;
use super::{Condition, RawCondition, Witnesses};
use crate::pack::codes::Code;
use crate::pack::compile::Compiler;
use crate::pack::CompiledPack;

#[derive(Debug, Clone)]
pub(crate) struct First {
    pub first: usize,
    pub then: Then,
}

#[derive(Debug, Clone)]
pub(crate) enum Then {
    BeforeFirst(usize),
    Is(usize),
}

pub(super) fn compile(c: &mut Compiler<'_>, raw: &RawCondition, path: &str) -> Option<Condition> {
    let first = c.selector_ref(raw.first.as_ref()?, &format!("{path}.first"));
    let then = match (&raw.before_first, &raw.is) {
        (Some(b), None) => Then::BeforeFirst(c.selector_ref(b, &format!("{path}.before_first"))?),
        (None, Some(i)) => Then::Is(c.selector_ref(i, &format!("{path}.is"))?),
        _ => {
            c.problem(
                Code::ConditionShape,
                path,
                "`first` takes exactly one of `before_first` or `is`",
            );
            return None;
        }
    };
    Some(Condition::First(First {
        first: first?,
        then,
    }))
}

impl First {
    pub(super) fn holds(&self, ctx: &Ctx<'_, '_>, mut witnesses: Witnesses<'_>) -> bool {
        let hits = &ctx.facts.hits;
        let Some(&a) = hits[self.first].first() else {
            return false;
        };
        match self.then {
            Then::BeforeFirst(before) => {
                let entries = ctx.facts.entries;
                match hits[before].first() {
                    None => {
                        witnesses.add(&[a]);
                        true
                    }
                    Some(&b) => {
                        let ok = entries[a as usize].instant <= entries[b as usize].instant;
                        witnesses.add(&[a, b]);
                        ok
                    }
                }
            }
            Then::Is(is) => {
                witnesses.add(&[a]);
                hits[is].binary_search(&a).is_ok()
            }
        }
    }

    pub(super) fn never_holds(&self, pack: &CompiledPack) -> Option<String> {
        crate::pack::lint::never_matches(pack, &pack.selectors[self.first], 0)
            .map(|why| format!("its `first` selector {why}"))
    }
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::{errors, grade, grade_rule, pack, warnings};

    const BEFORE: &str = "      - id: r\n        doc: d\n        when: { first: sessions, before_first: tasks }\n        points: 5\n";

    #[test]
    fn before_first_compares_the_first_matches() {
        assert_eq!(
            grade_rule(BEFORE, &[("session", "list"), ("tasks", "add")]),
            5.0
        );
        assert_eq!(
            grade_rule(BEFORE, &[("tasks", "add"), ("session", "list")]),
            0.0
        );
        // Nothing matches `before_first`: it holds.
        assert_eq!(grade_rule(BEFORE, &[("session", "list")]), 5.0);
        // Nothing matches `first`: it does not.
        assert_eq!(grade_rule(BEFORE, &[("tasks", "add")]), 0.0);
    }

    #[test]
    fn before_first_names_both_entries_as_witnesses() {
        let result = grade(
            &pack(BEFORE),
            &[("session", "list"), ("x", "y"), ("tasks", "add")],
        );
        let traces = &result.explain.as_ref().expect("explained")["d"];
        let positions: Vec<usize> = traces[0].entries.iter().map(|e| e.position).collect();
        assert_eq!(positions, [1, 3]);
    }

    #[test]
    fn is_tests_the_first_match() {
        let rule = "      - id: r\n        doc: d\n        when: { first: tasks, is: lookups }\n        points: 5\n";
        assert_eq!(
            grade_rule(rule, &[("tasks", "find"), ("tasks", "add")]),
            5.0
        );
        assert_eq!(
            grade_rule(rule, &[("tasks", "add"), ("tasks", "find")]),
            0.0
        );
    }

    #[test]
    fn first_takes_exactly_one_follow_up() {
        let rule =
            "      - id: r\n        doc: d\n        when: { first: tasks }\n        points: 5\n";
        assert_eq!(
            errors(rule),
            ["dimensions[0].rules[0].when: `first` takes exactly one of `before_first` or `is`"]
        );
        let rule = "      - id: r\n        doc: d\n        when: { first: tasks, is: nope }\n        points: 5\n";
        assert_eq!(
            errors(rule),
            ["dimensions[0].rules[0].when.is: unknown selector `nope` (declared: `tasks`, `sessions`, `lookups`, `failed`)"]
        );
    }

    #[test]
    fn a_first_that_matches_nothing_is_reported() {
        let rule = "      - id: r\n        doc: d\n        when: { first: { all: [ { domain: a }, { domain: b } ] }, is: tasks }\n        points: 5\n";
        assert_eq!(
            warnings(rule),
            ["dimensions[0].rules[0].when: this case of rule `r` can never apply: its `first` selector matches nothing: it asks for two different domains"]
        );
    }
}
