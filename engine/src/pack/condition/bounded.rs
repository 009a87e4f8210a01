//! `count`, `metric` and `score_at_least`/`score_at_most`: a number within bounds.
//!
//! - `count: SELECTOR` holds when the number of matching entries is within `at_least` and
//!   `at_most` (with neither, at least 1);
//! - `metric: NAME` holds when the metric is defined and within `at_least`/`at_most` (one of
//!   them is required);
//! - `score_at_least`/`score_at_most` test the dimension's running score before the rule.

use super::Ctx;
use super::{Condition, RawCondition, Witnesses};
use crate::entry::js_number;
use crate::pack::codes::Code;
use crate::pack::compile::Compiler;
use crate::pack::{CompiledPack, Metric};

#[derive(Debug, Clone)]
pub(crate) struct Count {
    pub selector: usize,
    pub at_least: Option<f64>,
    pub at_most: Option<f64>,
}

#[derive(Debug, Clone)]
pub(crate) struct MetricBound {
    pub metric: usize,
    pub at_least: Option<f64>,
    pub at_most: Option<f64>,
}

#[derive(Debug, Clone)]
pub(crate) struct ScoreBound {
    pub at_least: Option<f64>,
    pub at_most: Option<f64>,
}

pub(super) fn compile_count(
    c: &mut Compiler<'_>,
    raw: &RawCondition,
    path: &str,
) -> Option<Condition> {
    let selector = c.selector_ref(raw.count.as_ref()?, &format!("{path}.count"))?;
    let at_least = if raw.at_least.is_none() && raw.at_most.is_none() {
        Some(1.0)
    } else {
        raw.at_least
    };
    Some(Condition::Count(Count {
        selector,
        at_least,
        at_most: raw.at_most,
    }))
}

pub(super) fn compile_metric(
    c: &mut Compiler<'_>,
    raw: &RawCondition,
    path: &str,
) -> Option<Condition> {
    let name = raw.metric.as_deref()?;
    let Some(metric) = c.metric_id(name) else {
        c.problem(
            Code::UnknownMetric,
            format!("{path}.metric"),
            format!("unknown metric `{name}`"),
        );
        return None;
    };
    if raw.at_least.is_none() && raw.at_most.is_none() {
        c.problem(
            Code::ConditionShape,
            path,
            "a `metric` condition needs `at_least` or `at_most`",
        );
        return None;
    }
    Some(Condition::Metric(MetricBound {
        metric,
        at_least: raw.at_least,
        at_most: raw.at_most,
    }))
}

pub(super) fn compile_score(raw: &RawCondition) -> Condition {
    Condition::Score(ScoreBound {
        at_least: raw.score_at_least,
        at_most: raw.score_at_most,
    })
}

fn within_bounds(value: f64, at_least: Option<f64>, at_most: Option<f64>) -> bool {
    at_least.is_none_or(|m| value >= m) && at_most.is_none_or(|m| value <= m)
}

/// Why no value can be within the bounds, if none can.
fn empty_bounds(at_least: Option<f64>, at_most: Option<f64>) -> Option<String> {
    match (at_least, at_most) {
        (Some(a), Some(b)) if a > b => Some(format!(
            "`at_least` {} is above `at_most` {}",
            js_number(a),
            js_number(b)
        )),
        (_, Some(b)) if b < 0.0 => Some(format!("`at_most` {} is below 0", js_number(b))),
        _ => None,
    }
}

impl Count {
    pub(super) fn holds(&self, ctx: &Ctx<'_, '_>, mut witnesses: Witnesses<'_>) -> bool {
        let found = &ctx.facts.hits[self.selector];
        witnesses.add(found);
        within_bounds(found.len() as f64, self.at_least, self.at_most)
    }

    pub(super) fn never_holds(&self, pack: &CompiledPack) -> Option<String> {
        empty_bounds(self.at_least, self.at_most).or_else(|| {
            if self.at_least.is_some_and(|a| a > 0.0) {
                crate::pack::lint::never_matches(pack, &pack.selectors[self.selector], 0)
                    .map(|why| format!("it counts a selector that {why}"))
            } else {
                None
            }
        })
    }
}

impl MetricBound {
    pub(super) fn holds(&self, ctx: &Ctx<'_, '_>, mut witnesses: Witnesses<'_>) -> bool {
        if let Some(w) = ctx.facts.metric_witnesses.get(self.metric) {
            witnesses.add(w);
        }
        ctx.facts.metrics[self.metric]
            .is_some_and(|v| within_bounds(v, self.at_least, self.at_most))
    }

    pub(super) fn never_holds(&self, pack: &CompiledPack) -> Option<String> {
        empty_bounds(self.at_least, self.at_most).or_else(|| match pack.metrics.get(self.metric) {
            Some(m @ (Metric::Ratio { .. } | Metric::Trajectory(_)))
                if self.at_least.is_some_and(|a| a > 1.0) =>
            {
                Some(format!(
                    "{} `{}` is at most 1, so `at_least` {} never holds",
                    if matches!(m, Metric::Ratio { .. }) {
                        "ratio"
                    } else {
                        "trajectory metric"
                    },
                    pack.metric_names
                        .get(self.metric)
                        .map_or("", String::as_str),
                    js_number(self.at_least.unwrap_or_default())
                ))
            }
            _ => None,
        })
    }
}

impl ScoreBound {
    pub(super) fn holds(&self, ctx: &Ctx<'_, '_>) -> bool {
        within_bounds(ctx.score, self.at_least, self.at_most)
    }

    pub(super) fn never_holds(&self) -> Option<String> {
        empty_bounds(self.at_least, self.at_most)
    }
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::{errors, grade_rule, warnings};

    #[test]
    fn count_defaults_to_at_least_one() {
        let rule =
            "      - id: r\n        doc: d\n        when: { count: tasks }\n        points: 5\n";
        assert_eq!(grade_rule(rule, &[("tasks", "add")]), 5.0);
        assert_eq!(grade_rule(rule, &[("session", "list")]), 0.0);
    }

    #[test]
    fn count_bounds_are_inclusive() {
        let rule = "      - id: r\n        doc: d\n        when: { count: tasks, at_least: 2, at_most: 3 }\n        points: 5\n";
        let one = [("tasks", "add")];
        let three = [("tasks", "add"); 3];
        let four = [("tasks", "add"); 4];
        assert_eq!(grade_rule(rule, &one), 0.0);
        assert_eq!(grade_rule(rule, &three), 5.0);
        assert_eq!(grade_rule(rule, &four), 0.0);
    }

    #[test]
    fn metric_needs_a_bound_and_a_known_name() {
        let rule =
            "      - id: r\n        doc: d\n        when: { metric: share }\n        points: 5\n";
        assert_eq!(
            errors(rule),
            ["dimensions[0].rules[0].when: a `metric` condition needs `at_least` or `at_most`"]
        );
        let rule = "      - id: r\n        doc: d\n        when: { metric: nope, at_least: 1 }\n        points: 5\n";
        assert_eq!(
            errors(rule),
            ["dimensions[0].rules[0].when.metric: unknown metric `nope`"]
        );
    }

    #[test]
    fn an_undefined_metric_never_holds() {
        // `share` is tasks over sessions: with no session entry it is undefined.
        let rule = "      - id: r\n        doc: d\n        when: { metric: share, at_most: 100 }\n        points: 5\n";
        assert_eq!(grade_rule(rule, &[("tasks", "add")]), 0.0);
        assert_eq!(grade_rule(rule, &[("session", "list")]), 5.0);
    }

    #[test]
    fn score_tests_the_running_score() {
        let rule = "      - id: a\n        doc: d\n        points: 3\n      - id: r\n        doc: d\n        when: { score_at_least: 3 }\n        points: 2\n";
        assert_eq!(grade_rule(rule, &[("tasks", "add")]), 5.0);
    }

    #[test]
    fn empty_bounds_are_reported() {
        let rule = "      - id: r\n        doc: d\n        when: { count: tasks, at_least: 3, at_most: 1 }\n        points: 5\n";
        assert_eq!(
            warnings(rule),
            ["dimensions[0].rules[0].when: this case of rule `r` can never apply: `at_least` 3 is above `at_most` 1"]
        );
        let rule = "      - id: r\n        doc: d\n        when: { metric: share, at_least: 2 }\n        points: 5\n";
        assert_eq!(
            warnings(rule),
            ["dimensions[0].rules[0].when: this case of rule `r` can never apply: ratio `share` is at most 1, so `at_least` 2 never holds"]
        );
    }
}
