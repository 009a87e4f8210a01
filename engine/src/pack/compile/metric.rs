//! Metrics: a ratio of two selectors, the duplicates or distinct keys of one, or a plugin's.

use super::Compiler;
use crate::field::Field;
use crate::native::FunctionKind;
use crate::pack::codes::Code;
use crate::pack::raw::RawMetric;
use crate::pack::Metric;

impl Compiler<'_> {
    pub(super) fn metric(&mut self, raw: &RawMetric, path: &str) -> Option<Metric> {
        let trajectories = raw.trajectories();
        let kinds = [
            raw.ratio.is_some(),
            raw.duplicates.is_some(),
            raw.distinct.is_some(),
            raw.native.is_some(),
        ];
        let written = kinds.iter().filter(|k| **k).count()
            + trajectories.iter().filter(|(_, t)| t.is_some()).count();
        if written != 1 {
            self.problem(
                Code::MetricShape,
                path,
                "a metric is exactly one of `ratio`, `duplicates`, `distinct`, `native` or a trajectory metric (`trajectory_match`, `tool_precision`, `tool_recall`, `tool_f1`, `tool_sequence`)",
            );
            return None;
        }
        if let Some((kind, Some(trajectory))) = trajectories.iter().find(|(_, t)| t.is_some()) {
            return self
                .trajectory_metric(kind, trajectory, path)
                .map(|m| Metric::Trajectory(Box::new(m)));
        }
        if let Some(reference) = &raw.native {
            return self
                .native(reference, FunctionKind::Metric, &format!("{path}.native"))
                .map(Metric::Native);
        }
        if let Some(ratio) = &raw.ratio {
            let of = self.selector_ref(&ratio.of, &format!("{path}.ratio.of"));
            let over = self.selector_ref(&ratio.over, &format!("{path}.ratio.over"));
            return Some(Metric::Ratio {
                of: of?,
                over: over?,
            });
        }
        let (keyed, which) = match (&raw.duplicates, &raw.distinct) {
            (Some(k), _) => (k, "duplicates"),
            (_, Some(k)) => (k, "distinct"),
            _ => return None,
        };
        let of = self.selector_ref(&keyed.of, &format!("{path}.{which}.of"));
        let key = match Field::parse(&keyed.key) {
            Ok(field) if !keyed.normalize.is_empty() && field.never_text() => {
                self.problem(
                    Code::MetricShape,
                    format!("{path}.{which}.normalize"),
                    format!(
                        "`normalize` works on text, and `{}` is never text: every session with one would be left not graded (drop `normalize`)",
                        keyed.key
                    ),
                );
                None
            }
            Ok(field) => Some(field),
            Err(message) => {
                self.problem(
                    Code::UnknownFieldPath,
                    format!("{path}.{which}.key"),
                    message,
                );
                None
            }
        };
        let (of, key, normalize) = (of?, key?, keyed.normalize.clone());
        Some(if which == "duplicates" {
            Metric::Duplicates { of, key, normalize }
        } else {
            Metric::Distinct { of, key, normalize }
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::{errors, grade_rule};

    fn with_metric(metric: &str, when: &str) -> String {
        format!("id: t\nversion: '1'\nname: T\nselectors:\n  tasks: {{ domain: tasks }}\nmetrics:\n  m: {metric}\ndimensions:\n  - id: d\n    max: 10\n    rules:\n      - id: r\n        doc: d\n        points: {{ metric: m, times: 1 }}\n{when}")
    }

    #[test]
    fn a_metric_is_exactly_one_kind() {
        assert_eq!(
            errors(&with_metric("{}", "")),
            ["metrics.m: a metric is exactly one of `ratio`, `duplicates`, `distinct`, `native` or a trajectory metric (`trajectory_match`, `tool_precision`, `tool_recall`, `tool_f1`, `tool_sequence`)"]
        );
    }

    #[test]
    fn every_part_of_a_keyed_metric_is_checked() {
        assert_eq!(
            errors(&with_metric("{ duplicates: { of: nope, key: colour } }", "")),
            [
                "metrics.m.duplicates.of: unknown selector `nope` (declared: `tasks`)",
                "metrics.m.duplicates.key: unknown field path `colour` (paths start with `timestamp`, `sessionId`, `domain`, `operation`, `result.success`, `result.exitCode`, `result.duration`, `error`, `params.…`, `metadata.…`)",
            ]
        );
    }

    /// A `normalize`d key that is never text left every session it reached not graded
    /// (E040); it is refused when the pack is validated instead. Without `normalize` the key
    /// is compared as it is.
    #[test]
    fn normalize_on_a_key_that_is_never_text_is_refused() {
        for kind in ["duplicates", "distinct"] {
            let metric =
                format!("{{ {kind}: {{ of: tasks, key: result.exitCode, normalize: [trim] }} }}");
            assert_eq!(
                errors(&with_metric(&metric, "")),
                [format!("metrics.m.{kind}.normalize: `normalize` works on text, and `result.exitCode` is never text: every session with one would be left not graded (drop `normalize`)")]
            );
            let metric = format!("{{ {kind}: {{ of: tasks, key: result.exitCode }} }}");
            assert_eq!(errors(&with_metric(&metric, "")), Vec::<String>::new());
        }
    }

    #[test]
    fn duplicates_and_distinct_count_operations() {
        let dup = with_metric("{ duplicates: { of: tasks, key: operation } }", "");
        let ops = [
            ("tasks", "find"),
            ("tasks", "find"),
            ("tasks", "show"),
            ("x", "find"),
        ];
        assert_eq!(grade_rule(&dup, &ops), 1.0);
        let distinct = with_metric("{ distinct: { of: tasks, key: operation } }", "");
        assert_eq!(grade_rule(&distinct, &ops), 2.0);
    }

    #[test]
    fn normalized_keys_compare_after_each_step() {
        let dup = with_metric(
            "{ duplicates: { of: tasks, key: operation, normalize: [lowercase, trim] } }",
            "",
        );
        assert_eq!(
            grade_rule(&dup, &[("tasks", " Find"), ("tasks", "find ")]),
            1.0
        );
    }
}
