//! Conditions: what a case, a dimension's `applies_when` or another condition tests.
//!
//! One kind, one home: each kind keeps its compilation, its evaluation, its static check
//! (why it can never hold) and its unit tests in one file:
//! - [`bounded`]: `count`, `metric` and `score_at_least`/`score_at_most`, a number within bounds;
//! - [`first`]: `first` with `before_first` or `is`;
//! - [`window`]: `entry`, `followed_by` and `preceded_by`, which look at a `for_each` entry;
//! - [`logic`]: `all`, `any`, `not` and a plugin's `native` condition.
//!
//! This file holds what they share: the YAML as written ([`RawCondition`], one map whose
//! keys name the kind), the choice of the kind with the checks of keys that belong to
//! another kind, and the dispatch of evaluation and of the static check. [`context`] holds
//! what they are evaluated in ([`Ctx`], [`Facts`]), which `eval` fills: a condition never
//! imports `eval`.

pub(crate) mod bounded;
mod context;
pub(crate) mod first;
pub(crate) mod logic;
pub(crate) mod window;

use crate::pack::codes::Code;
use serde::Deserialize;

use super::compile::Compiler;
use super::raw::SelectorRef;
use super::CompiledPack;
pub(crate) use context::{Ctx, Facts};

/// A condition over the session (or, in a `for_each` rule, over one entry and its neighbours).
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawCondition {
    /// How many entries match a selector; with `at_least` / `at_most` (default: at least 1).
    #[serde(default)]
    pub count: Option<SelectorRef>,
    /// A named metric's value; with `at_least` / `at_most`. False when the metric is undefined.
    #[serde(default)]
    pub metric: Option<String>,
    #[serde(default)]
    pub at_least: Option<f64>,
    #[serde(default)]
    pub at_most: Option<f64>,
    /// The dimension's running score, before this rule.
    #[serde(default)]
    pub score_at_least: Option<f64>,
    #[serde(default)]
    pub score_at_most: Option<f64>,
    /// The first entry (in session order) that matches a selector; with `before_first` or `is`.
    #[serde(default)]
    pub first: Option<SelectorRef>,
    /// Holds when no entry matches this selector, or its first match is not earlier in time.
    #[serde(default)]
    pub before_first: Option<SelectorRef>,
    /// Holds when the `first` entry also matches this selector.
    #[serde(default)]
    pub is: Option<SelectorRef>,
    /// In `for_each`: the current entry matches this selector.
    #[serde(default)]
    pub entry: Option<SelectorRef>,
    /// In `for_each`: one of the next `within` entries matches.
    #[serde(default)]
    pub followed_by: Option<SelectorRef>,
    /// In `for_each`: one of the previous `within` entries matches.
    #[serde(default)]
    pub preceded_by: Option<SelectorRef>,
    #[serde(default)]
    pub within: Option<u32>,
    #[serde(default)]
    pub all: Option<Vec<RawCondition>>,
    #[serde(default)]
    pub any: Option<Vec<RawCondition>>,
    #[serde(default)]
    pub not: Option<Box<RawCondition>>,
    /// A plugin's condition function (`plugin.function`); in `for_each`, it judges the entry.
    #[serde(default)]
    pub native: Option<String>,
}

/// A compiled condition: selectors and metrics are ids into the pack's lists.
#[derive(Debug, Clone)]
pub(crate) enum Condition {
    /// A case without `when`, and `otherwise`.
    Always,
    Count(bounded::Count),
    Metric(bounded::MetricBound),
    Score(bounded::ScoreBound),
    First(first::First),
    Window(window::Window),
    All(Vec<Condition>),
    Any(Vec<Condition>),
    Not(Box<Condition>),
    Native(crate::native::NativeRef),
}

/// The kinds a condition map can name, each by the key that names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Count,
    Metric,
    Score,
    First,
    Entry,
    FollowedBy,
    PrecededBy,
    All,
    Any,
    Not,
    Native,
}

impl Kind {
    /// The key(s) that name the kind, as an author writes them.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Kind::Count => "count",
            Kind::Metric => "metric",
            Kind::Score => "score_at_least/score_at_most",
            Kind::First => "first",
            Kind::Entry => "entry",
            Kind::FollowedBy => "followed_by",
            Kind::PrecededBy => "preceded_by",
            Kind::All => "all",
            Kind::Any => "any",
            Kind::Not => "not",
            Kind::Native => "native",
        }
    }

    /// The kinds a condition map names.
    fn of(raw: &RawCondition) -> Vec<Kind> {
        [
            (Kind::Count, raw.count.is_some()),
            (Kind::Metric, raw.metric.is_some()),
            (
                Kind::Score,
                raw.score_at_least.is_some() || raw.score_at_most.is_some(),
            ),
            (Kind::First, raw.first.is_some()),
            (Kind::Entry, raw.entry.is_some()),
            (Kind::FollowedBy, raw.followed_by.is_some()),
            (Kind::PrecededBy, raw.preceded_by.is_some()),
            (Kind::All, raw.all.is_some()),
            (Kind::Any, raw.any.is_some()),
            (Kind::Not, raw.not.is_some()),
            (Kind::Native, raw.native.is_some()),
        ]
        .into_iter()
        .filter_map(|(kind, set)| set.then_some(kind))
        .collect()
    }
}

impl Compiler<'_> {
    /// Compiles a condition at `path`; `has_entry` says whether it is inside a `for_each` rule.
    pub(in crate::pack) fn condition(
        &mut self,
        raw: &RawCondition,
        path: &str,
        has_entry: bool,
    ) -> Option<Condition> {
        let kinds = Kind::of(raw);
        let [kind] = kinds[..] else {
            self.problem(
                Code::ConditionShape,path,
                if kinds.is_empty() {
                    "the condition tests nothing (use `count`, `metric`, `score_at_least`, `first`, `entry`, `followed_by`, `preceded_by`, `all`, `any`, `not` or `native`)".to_owned()
                } else {
                    format!(
                        "a condition tests one thing, but this one has {} (combine them with `all`)",
                        kinds.iter().map(|k| format!("`{}`", k.key())).collect::<Vec<_>>().join(", ")
                    )
                },
            );
            return None;
        };
        let subject = kind.key();
        if !matches!(kind, Kind::Count | Kind::Metric)
            && (raw.at_least.is_some() || raw.at_most.is_some())
        {
            self.problem(
                Code::ConditionShape,
                path,
                format!("`at_least`/`at_most` bound a `count` or `metric`, not `{subject}`"),
            );
        }
        if !matches!(kind, Kind::FollowedBy | Kind::PrecededBy) && raw.within.is_some() {
            self.problem(
                Code::ConditionShape,
                format!("{path}.within"),
                "`within` belongs to `followed_by` or `preceded_by`",
            );
        }
        if kind != Kind::First && (raw.before_first.is_some() || raw.is.is_some()) {
            self.problem(
                Code::ConditionShape,
                path,
                "`before_first` and `is` belong to `first`",
            );
        }
        match kind {
            Kind::Count => bounded::compile_count(self, raw, path),
            Kind::Metric => bounded::compile_metric(self, raw, path),
            Kind::Score => Some(bounded::compile_score(raw)),
            Kind::First => first::compile(self, raw, path),
            Kind::Entry | Kind::FollowedBy | Kind::PrecededBy => {
                window::compile(self, raw, kind, path, has_entry)
            }
            Kind::All | Kind::Any | Kind::Not | Kind::Native => {
                logic::compile(self, raw, kind, path, has_entry)
            }
        }
    }
}

/// Where the entries that decided a condition go, when a rule is explained.
pub(crate) struct Witnesses<'w>(pub Option<&'w mut Vec<u32>>);

impl Witnesses<'_> {
    pub(crate) fn add(&mut self, positions: &[u32]) {
        if let Some(w) = self.0.as_deref_mut() {
            w.extend_from_slice(positions);
        }
    }

    pub(crate) fn reborrow(&mut self) -> Witnesses<'_> {
        Witnesses(self.0.as_deref_mut())
    }
}

impl Condition {
    /// Whether the condition holds at `ctx`; the entries behind the answer go to `witnesses`.
    pub(crate) fn holds(&self, ctx: &Ctx<'_, '_>, mut witnesses: Witnesses<'_>) -> bool {
        match self {
            Condition::Always => true,
            Condition::Count(c) => c.holds(ctx, witnesses),
            Condition::Metric(c) => c.holds(ctx, witnesses),
            Condition::Score(c) => c.holds(ctx),
            Condition::First(c) => c.holds(ctx, witnesses),
            Condition::Window(c) => c.holds(ctx, witnesses),
            Condition::All(items) => items.iter().all(|c| c.holds(ctx, witnesses.reborrow())),
            Condition::Any(items) => items.iter().any(|c| c.holds(ctx, witnesses.reborrow())),
            Condition::Not(inner) => !inner.holds(ctx, Witnesses(None)),
            Condition::Native(native) => logic::native_holds(native, ctx, witnesses),
        }
    }

    /// Why the condition can never hold, if it cannot (a static check of `grade rubric validate`).
    pub(crate) fn never_holds(&self, pack: &CompiledPack) -> Option<String> {
        match self {
            Condition::Count(c) => c.never_holds(pack),
            Condition::Metric(c) => c.never_holds(pack),
            Condition::Score(c) => c.never_holds(),
            Condition::First(c) => c.never_holds(pack),
            Condition::Window(c) => c.never_holds(pack),
            Condition::All(items) => items.iter().find_map(|c| c.never_holds(pack)),
            Condition::Any(items) => logic::any_never_holds(items, pack),
            Condition::Always | Condition::Not(_) | Condition::Native(_) => None,
        }
    }

    /// The conditions nested directly in this one.
    #[cfg(test)]
    pub(crate) fn children(&self) -> &[Condition] {
        match self {
            Condition::All(items) | Condition::Any(items) => items,
            Condition::Not(inner) => std::slice::from_ref(inner),
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::{errors, pack};

    #[test]
    fn a_condition_names_exactly_one_kind() {
        let yaml = "      - id: r\n        doc: d\n        when: {}\n        points: 1\n";
        assert_eq!(
            errors(yaml),
            ["dimensions[0].rules[0].when: the condition tests nothing (use `count`, `metric`, `score_at_least`, `first`, `entry`, `followed_by`, `preceded_by`, `all`, `any`, `not` or `native`)"]
        );
        let yaml = "      - id: r\n        doc: d\n        when: { count: tasks, first: tasks, before_first: tasks }\n        points: 1\n";
        assert_eq!(
            errors(yaml),
            ["dimensions[0].rules[0].when: a condition tests one thing, but this one has `count`, `first` (combine them with `all`)"]
        );
    }

    #[test]
    fn keys_of_another_kind_are_refused() {
        let yaml = "      - id: r\n        doc: d\n        when: { count: tasks, within: 2, is: tasks }\n        points: 1\n";
        assert_eq!(
            errors(yaml),
            [
                "dimensions[0].rules[0].when.within: `within` belongs to `followed_by` or `preceded_by`",
                "dimensions[0].rules[0].when: `before_first` and `is` belong to `first`",
            ]
        );
        let yaml = "      - id: r\n        doc: d\n        when: { score_at_least: 1, at_most: 3 }\n        points: 1\n";
        assert_eq!(
            errors(yaml),
            ["dimensions[0].rules[0].when: `at_least`/`at_most` bound a `count` or `metric`, not `score_at_least/score_at_most`"]
        );
    }

    #[test]
    fn nested_conditions_compile_in_place() {
        let yaml = "      - id: r\n        doc: d\n        when: { all: [ { count: tasks }, { not: { any: [ { count: tasks, at_least: 2 } ] } } ] }\n        points: 1\n";
        let pack = pack(yaml);
        let crate::pack::RuleKind::Session(cases) = &pack.dimensions[0].rules[0].kind else {
            panic!("a session rule");
        };
        let all = &cases[0].when;
        assert_eq!(all.children().len(), 2);
        assert_eq!(all.children()[1].children()[0].children().len(), 1);
    }
}
