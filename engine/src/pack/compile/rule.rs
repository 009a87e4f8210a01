//! Rules and their cases: the four forms of a rule, each case's condition and outcome, and
//! the templates of evidence and flags.

use super::{Compiler, Scope};
use crate::native::FunctionKind;
use crate::pack::codes::Code;
use crate::pack::raw::{RawCase, RawOutcome, RawPoints, RawRule};
use crate::pack::template::Template;
use crate::pack::{Case, Condition, Points, RuleKind};

impl Compiler<'_> {
    pub(super) fn rule(&mut self, raw: &RawRule, path: &str) -> Option<RuleKind> {
        let shorthand = raw.when.is_some()
            || raw.points.is_some()
            || raw.evidence.is_some()
            || raw.flag.is_some()
            || raw.otherwise.is_some();
        let forms = [
            raw.script.is_some(),
            raw.native.is_some(),
            raw.cases.is_some(),
            shorthand,
        ];
        if forms.iter().filter(|f| **f).count() != 1 {
            self.problem(
                Code::RuleShape,path,
                "a rule is exactly one of: `script`, `native`, `cases`, or a single case (`when` with `points`/`evidence`/`flag`, and optionally `otherwise`)",
            );
            return None;
        }
        if raw.doc.trim().is_empty() {
            self.problem(
                Code::RuleWithoutDoc,
                format!("{path}.doc"),
                "the rule has no `doc`; say what it checks",
            );
        }
        if let Some(file) = &raw.script {
            if raw.for_each.is_some() {
                self.problem(
                    Code::RuleShape,
                    format!("{path}.for_each"),
                    "a script rule sees the whole session; drop `for_each` and loop in the script",
                );
                return None;
            }
            return self.script(file, &format!("{path}.script"));
        }
        if let Some(reference) = &raw.native {
            if raw.for_each.is_some() {
                self.problem(
                    Code::RuleShape,format!("{path}.for_each"),
                    "a native rule sees the whole session; drop `for_each` (or use a native condition in a `for_each` rule)",
                );
                return None;
            }
            return self
                .native(reference, FunctionKind::Rule, &format!("{path}.native"))
                .map(RuleKind::Native);
        }
        // A bad `for_each` must not hide the problems of the outcomes below it.
        let for_each = raw
            .for_each
            .as_ref()
            .map(|r| self.selector_ref(r, &format!("{path}.for_each")));
        let has_entry = for_each.is_some();
        let cases = if let Some(cases) = &raw.cases {
            if cases.is_empty() {
                self.problem(Code::RuleShape, format!("{path}.cases"), "`cases` is empty");
            }
            cases
                .iter()
                .enumerate()
                .filter_map(|(i, case)| self.case(case, &format!("{path}.cases[{i}]"), has_entry))
                .collect::<Vec<_>>()
        } else {
            let mut cases = Vec::new();
            let when = match &raw.when {
                Some(c) => self.condition(c, &format!("{path}.when"), has_entry),
                None => Some(Condition::Always),
            };
            let outcome = self.outcome(
                raw.points.as_ref(),
                raw.evidence.as_deref(),
                raw.flag.as_deref(),
                path,
                has_entry,
            );
            if let (Some(when), Some((points, evidence, flag))) = (when, outcome) {
                cases.push(Case {
                    path: path.to_owned(),
                    when,
                    points,
                    evidence,
                    flag,
                });
            }
            if let Some(RawOutcome {
                points,
                evidence,
                flag,
            }) = &raw.otherwise
            {
                if raw.when.is_none() {
                    self.problem(
                        Code::RuleShape,
                        format!("{path}.otherwise"),
                        "`otherwise` needs a `when` to be the alternative of",
                    );
                }
                let opath = format!("{path}.otherwise");
                if let Some((points, evidence, flag)) = self.outcome(
                    points.as_ref(),
                    evidence.as_deref(),
                    flag.as_deref(),
                    &opath,
                    has_entry,
                ) {
                    cases.push(Case {
                        path: opath.clone(),
                        when: Condition::Always,
                        points,
                        evidence,
                        flag,
                    });
                }
            }
            cases
        };
        Some(match for_each {
            Some(selector) => RuleKind::ForEach {
                selector: selector?,
                cases,
            },
            None => RuleKind::Session(cases),
        })
    }

    fn case(&mut self, raw: &RawCase, path: &str, has_entry: bool) -> Option<Case> {
        let when = match &raw.when {
            Some(c) => self.condition(c, &format!("{path}.when"), has_entry),
            None => Some(Condition::Always),
        };
        let outcome = self.outcome(
            raw.points.as_ref(),
            raw.evidence.as_deref(),
            raw.flag.as_deref(),
            path,
            has_entry,
        );
        let (points, evidence, flag) = outcome?;
        Some(Case {
            path: path.to_owned(),
            when: when?,
            points,
            evidence,
            flag,
        })
    }

    #[allow(
        clippy::type_complexity,
        reason = "the one place that builds an outcome; an alias would hide its three parts"
    )]
    fn outcome(
        &mut self,
        points: Option<&RawPoints>,
        evidence: Option<&str>,
        flag: Option<&str>,
        path: &str,
        has_entry: bool,
    ) -> Option<(Option<Points>, Option<Template>, Option<Template>)> {
        let mut ok = true;
        let points = match points {
            None => None,
            Some(RawPoints::Fixed(p)) => {
                if p.fract() != 0.0 {
                    self.fractional_points.push((format!("{path}.points"), *p));
                }
                Some(Points::Fixed(*p))
            }
            Some(RawPoints::Scaled(s)) => match self.metric_ids.get(&s.metric) {
                Some(&metric) => Some(Points::Scaled {
                    metric,
                    times: s.times,
                }),
                None => {
                    ok = false;
                    self.problem(
                        Code::UnknownMetric,
                        format!("{path}.points.metric"),
                        format!("unknown metric `{}`", s.metric),
                    );
                    None
                }
            },
        };
        let evidence = evidence.and_then(|t| {
            let parsed = self.template(t, &format!("{path}.evidence"), has_entry);
            ok &= parsed.is_some();
            parsed
        });
        let flag = flag.and_then(|t| {
            let parsed = self.template(t, &format!("{path}.flag"), has_entry);
            ok &= parsed.is_some();
            parsed
        });
        ok.then_some((points, evidence, flag))
    }

    pub(super) fn template(&mut self, text: &str, path: &str, has_entry: bool) -> Option<Template> {
        let mut scope = Scope {
            compiler: self,
            has_entry,
        };
        match Template::parse(text, &mut scope) {
            Ok(t) => Some(t),
            Err(problems) => {
                for p in problems {
                    self.problem(Code::Placeholder, path, p);
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::{errors, grade, grade_rule, pack};

    #[test]
    fn a_rule_is_exactly_one_form_and_says_what_it_checks() {
        assert_eq!(
            errors("      - { id: r, doc: d, script: a.rhai, points: 1 }\n"),
            ["dimensions[0].rules[0]: a rule is exactly one of: `script`, `native`, `cases`, or a single case (`when` with `points`/`evidence`/`flag`, and optionally `otherwise`)"]
        );
        assert_eq!(
            errors(
                "      - { id: r, doc: ' ', points: 1 }\n      - { id: r, doc: d, points: 1 }\n"
            ),
            [
                "dimensions[0].rules[0].doc: the rule has no `doc`; say what it checks",
                "dimensions[0].rules[1].id: rule id `r` is used twice in the pack",
            ]
        );
    }

    #[test]
    fn the_first_case_that_holds_applies() {
        let rule = "      - id: r\n        doc: d\n        cases:\n          - { when: { count: tasks, at_least: 2 }, points: 10 }\n          - { when: { count: tasks }, points: 5 }\n          - { points: 1 }\n";
        assert_eq!(grade_rule(rule, &[("tasks", "a"), ("tasks", "b")]), 10.0);
        assert_eq!(grade_rule(rule, &[("tasks", "a")]), 5.0);
        assert_eq!(grade_rule(rule, &[("x", "y")]), 1.0);
    }

    #[test]
    fn otherwise_applies_when_the_case_does_not() {
        let rule = "      - id: r\n        doc: d\n        when: { count: tasks }\n        points: 3\n        evidence: 'tasks {count.tasks}x'\n        otherwise: { points: -1, flag: 'no tasks (score {score})' }\n";
        let pack = pack(rule);
        let with = grade(&pack, &[("tasks", "a"), ("tasks", "b")]);
        assert_eq!(with.dimensions["d"].evidence, ["tasks 2x"]);
        let without = grade(&pack, &[("x", "y")]);
        assert_eq!(without.dimensions["d"].score.0, 0.0);
        assert_eq!(without.flags, ["no tasks (score 0)"]);
    }

    #[test]
    fn scaled_points_round_half_up() {
        // share = tasks / sessions = 1 / 2; 0.5 × 5 = 2.5 rounds to 3.
        let rule = "      - id: r\n        doc: d\n        points: { metric: share, times: 5 }\n";
        assert_eq!(
            grade_rule(rule, &[("tasks", "a"), ("session", "x"), ("session", "y")]),
            3.0
        );
    }

    #[test]
    fn outcomes_are_checked_even_when_the_for_each_is_wrong() {
        let rule = "      - id: r\n        doc: d\n        for_each: nope\n        points: { metric: none, times: 1 }\n        flag: '{entry.colour}'\n        otherwise: { points: 1 }\n";
        let found = errors(rule);
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(found[0].starts_with("dimensions[0].rules[0].for_each: unknown selector `nope`"));
        assert_eq!(
            found[1],
            "dimensions[0].rules[0].points.metric: unknown metric `none`"
        );
        assert!(found[2].starts_with("dimensions[0].rules[0].flag: placeholder `{entry.colour}`"));
        assert_eq!(
            found[3],
            "dimensions[0].rules[0].otherwise: `otherwise` needs a `when` to be the alternative of"
        );
    }

    #[test]
    fn fractional_points_are_refused_in_a_pack_of_whole_scores() {
        assert_eq!(
            errors("      - { id: r, doc: d, points: 0.5 }\n"),
            ["dimensions[0].rules[0].points: points 0.5 are not a whole number, and every score of this pack is (its dimensions' `max`, `start`, `floor` and `cap`)"]
        );
    }
}
