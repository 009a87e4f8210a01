//! `all`, `any` and `not` combine conditions; `native: plugin.function` asks a plugin.
//!
//! - `all: [...]` holds when every condition holds (an empty list always holds);
//! - `any: [...]` holds when one does (an empty list never holds);
//! - `not: {...}` holds when its condition does not; the entries it saw explain nothing;
//! - `native` holds when the plugin's condition function returns a number other than 0
//!   and NaN; a failing call fails the session's grade.

use super::Ctx;
use super::{Condition, Kind, RawCondition, Witnesses};
use crate::native::{FunctionKind, NativeRef};
use crate::pack::compile::Compiler;
use crate::pack::CompiledPack;

pub(super) fn compile(
    c: &mut Compiler<'_>,
    raw: &RawCondition,
    kind: Kind,
    path: &str,
    has_entry: bool,
) -> Option<Condition> {
    let subject = kind.key();
    match kind {
        Kind::All | Kind::Any => {
            let list = if kind == Kind::All {
                raw.all.as_ref()?
            } else {
                raw.any.as_ref()?
            };
            let mut items = Vec::new();
            let mut ok = true;
            for (i, item) in list.iter().enumerate() {
                match c.condition(item, &format!("{path}.{subject}[{i}]"), has_entry) {
                    Some(item) => items.push(item),
                    None => ok = false,
                }
            }
            ok.then(|| {
                if kind == Kind::All {
                    Condition::All(items)
                } else {
                    Condition::Any(items)
                }
            })
        }
        Kind::Not => Some(Condition::Not(Box::new(c.condition(
            raw.not.as_ref()?,
            &format!("{path}.not"),
            has_entry,
        )?))),
        _ => c
            .native(
                raw.native.as_deref()?,
                FunctionKind::Condition,
                &format!("{path}.native"),
            )
            .map(Condition::Native),
    }
}

pub(super) fn native_holds(
    native: &NativeRef,
    ctx: &Ctx<'_, '_>,
    mut witnesses: Witnesses<'_>,
) -> bool {
    let Some(result) = ctx.facts.call_native(native, ctx.entry, ctx.score) else {
        return false;
    };
    witnesses.add(&result.entries);
    result.value.is_some_and(|v| v != 0.0 && !v.is_nan())
}

/// `any` can never hold when none of its conditions can (or it has none).
pub(super) fn any_never_holds(items: &[Condition], pack: &CompiledPack) -> Option<String> {
    if items.is_empty() {
        return Some("`any: []` never holds".to_owned());
    }
    let reasons: Option<Vec<String>> = items.iter().map(|c| c.never_holds(pack)).collect();
    reasons.map(|r| r.join("; "))
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::{errors, grade_rule, warnings};

    fn rule(when: &str) -> String {
        format!("      - id: r\n        doc: d\n        when: {when}\n        points: 1\n")
    }

    #[test]
    fn all_any_and_not_combine() {
        let both = rule("{ all: [ { count: tasks }, { count: sessions } ] }");
        let either = rule("{ any: [ { count: tasks }, { count: sessions } ] }");
        let neither = rule("{ not: { any: [ { count: tasks }, { count: sessions } ] } }");
        let tasks = [("tasks", "add")];
        let all = [("tasks", "add"), ("session", "list")];
        let none = [("x", "y")];
        assert_eq!(
            [grade_rule(&both, &tasks), grade_rule(&both, &all)],
            [0.0, 1.0]
        );
        assert_eq!(
            [grade_rule(&either, &tasks), grade_rule(&either, &none)],
            [1.0, 0.0]
        );
        assert_eq!(
            [grade_rule(&neither, &tasks), grade_rule(&neither, &none)],
            [0.0, 1.0]
        );
    }

    #[test]
    fn empty_lists() {
        assert_eq!(grade_rule(&rule("{ all: [] }"), &[("x", "y")]), 1.0);
        assert_eq!(grade_rule(&rule("{ any: [] }"), &[("x", "y")]), 0.0);
        assert_eq!(
            warnings(&rule("{ any: [] }")),
            ["dimensions[0].rules[0].when: this case of rule `r` can never apply: `any: []` never holds"]
        );
    }

    #[test]
    fn every_problem_of_nested_conditions_is_reported() {
        assert_eq!(
            errors(&rule("{ all: [ { count: nope }, { not: { metric: none, at_least: 1 } } ] }")),
            [
                "dimensions[0].rules[0].when.all[0].count: unknown selector `nope` (declared: `tasks`, `sessions`, `lookups`, `failed`)",
                "dimensions[0].rules[0].when.all[1].not.metric: unknown metric `none`",
            ]
        );
    }

    #[test]
    fn any_never_holds_when_no_alternative_can() {
        assert_eq!(
            warnings(&rule("{ any: [ { score_at_most: -1 }, { count: tasks, at_most: -2 } ] }")),
            ["dimensions[0].rules[0].when: this case of rule `r` can never apply: `at_most` -1 is below 0; `at_most` -2 is below 0"]
        );
    }

    #[test]
    fn a_native_condition_needs_a_declared_plugin() {
        let found = errors(&rule("{ native: nowhere.check }"));
        assert_eq!(found.len(), 1);
        assert!(
            found[0].starts_with("dimensions[0].rules[0].when.native: "),
            "{found:?}"
        );
    }
}
