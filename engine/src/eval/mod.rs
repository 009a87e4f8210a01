//! Stage 3: grading one session with a compiled pack.
//!
//! One pass over the entries records, for every selector, the positions it matches; every
//! count, first match, window and metric is then read from those lists, so the cost of a
//! session is (entries × selectors) plus a little per rule.

//!
//! Files: [`facts`] (the single pass and the metrics), [`rule`] (one rule's run),
//! [`outcome`] (which case applies and what it gives); conditions are evaluated where they
//! are compiled, in [`crate::pack::condition`].

mod facts;
mod outcome;
mod rule;

use std::sync::Arc;

use indexmap::IndexMap;

use crate::entry::{Entry, Session};
use crate::judgment::Judgment;
use crate::pack::condition::{Ctx, Facts, Witnesses};
use crate::pack::{CompiledPack, Scoring};
use crate::reference::References;
use crate::result::{
    percent_of, DimensionScore, GradeResult, MatchedCall, ReferenceCall, RubricRef, RuleTrace,
    Score, TrajectoryTrace,
};
use crate::script::SessionData;
use crate::time::{format_iso_millis, InstantMs};
#[cfg(test)]
pub(crate) use facts::Decisions;
use facts::{NotText, TextTest};
use outcome::{entry_ref, judged_score};

/// An entry as an error names it: by its place in the source (`the entry at
/// `audit.jsonl:18``), or by its position in the session when the source keeps none.
fn entry_named(index: u32, e: &Entry) -> String {
    match crate::entry::source_place_of(e) {
        Some(place) => format!("the entry at `{place}`"),
        None => format!("entry #{} of the session", index as usize + 1),
    }
}

/// A value as JSON, cut to a length a message can carry.
fn shortened(value: &serde_json::Value) -> String {
    const MAX_CHARS: usize = 40;
    let text = value.to_string();
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// How a session is graded.
#[derive(Debug, Clone)]
pub struct GradeOptions {
    /// The instant recorded as the grade's `timestamp`.
    pub now: InstantMs,
    /// Record, per rule, the points and the entries behind them.
    pub explain: bool,
    /// The reference trajectories the trajectory metrics compare with (`--reference`); a
    /// session without one is not graded on them (their dimensions do not apply).
    pub references: Option<Arc<References>>,
}

impl Default for GradeOptions {
    fn default() -> Self {
        GradeOptions {
            now: crate::time::now_ms(),
            explain: false,
            references: None,
        }
    }
}

/// How much of why a grade was given is recorded, and where.
#[derive(Debug)]
pub(crate) enum Trace<'p> {
    Off,
    /// Each rule's points, into the [`RulePoints`] given, and nothing in `explain`: what
    /// attributing a change to rules needs, at the cost of grading without a trace.
    Points(&'p mut RulePoints),
    /// Each rule's points, evidence, flags and the entries behind them in `explain`
    /// (`--explain`).
    Entries,
}

/// Each rule's points of one grade, in the pack's order: a number a rule, where a trace in
/// `explain` is a rule id (an allocation), an evidence list and a flag list a rule, and an
/// entry in a map of dimensions (a tenth of a comparison's time went to building, reading
/// and dropping them).
#[derive(Debug, Default)]
pub(crate) struct RulePoints {
    points: Vec<f64>,
    /// Per dimension of the pack, where its rules' points start in `points`; `None` for a
    /// dimension whose rules did not run (judged, not applicable, or the session empty).
    starts: Vec<Option<usize>>,
}

impl RulePoints {
    /// The points of the rules of dimension `d` (the pack's `d`-th), in the pack's order, if
    /// they ran.
    pub(crate) fn of(&self, d: usize, rules: usize) -> Option<&[f64]> {
        let start = (*self.starts.get(d)?)?;
        self.points.get(start..start + rules)
    }
}

impl Trace<'_> {
    fn of(options: &GradeOptions) -> Trace<'static> {
        if options.explain {
            Trace::Entries
        } else {
            Trace::Off
        }
    }
}

/// Why a session could not be graded (other sessions of a run still can be). More reasons
/// may come: an embedder matches with a catch-all arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The pack has judged dimensions and the session no judgment.
    #[error(
        "rubric `{pack}` scores {dimensions} from a judgment, and session `{session}` has none"
    )]
    NoJudgment {
        /// The pack's id.
        pack: String,
        /// The session.
        session: String,
        /// The judged dimensions, as a phrase.
        dimensions: String,
    },
    /// A Rhai script failed (or ran out of operations) for this session.
    #[error("rubric `{pack}`, rule `{rule}`, session `{session}`: the script failed: {message}")]
    Script {
        /// The pack's id.
        pack: String,
        /// The rule whose script failed.
        rule: String,
        /// The session.
        session: String,
        /// What the script engine said.
        message: String,
    },
    /// The rules of a dimension added up to a number no grade can hold (a `times` so large
    /// that a metric's value times it overflows): clamped, it would be the dimension's floor
    /// or cap without a word.
    #[error("rubric `{pack}`, dimension `{dimension}`, session `{session}`: its rules add up to {points} points, which no grade can hold (a rule's `times` too large for its metric's value?)")]
    NotFinite {
        /// The pack's id.
        pack: String,
        /// The dimension.
        dimension: String,
        /// The session.
        session: String,
        /// The sum, as JavaScript prints it (`Infinity`, `NaN`).
        points: String,
    },
    /// A plugin function failed (returned an error or panicked) for this session.
    #[error("rubric `{pack}`, {place}, session `{session}`: plugin function `{function}` failed: {message}")]
    Plugin {
        /// The pack's id.
        pack: String,
        /// `rule `ID`` or `metric `NAME``.
        place: String,
        /// `plugin.function`.
        function: String,
        /// The session.
        session: String,
        /// What the plugin said.
        message: String,
    },
    /// A test that reads text (`blank`, a metric's `normalize` steps) met a value that is
    /// not text, where CLEO's grader, whose tests these are, throws a `TypeError` and gives
    /// the session no grade: any answer taken in its place would be a guess.
    #[error("rubric `{pack}` cannot grade session `{session}`: {test}, and {found} [E040]")]
    NotText {
        /// The pack's id.
        pack: String,
        /// The session.
        session: String,
        /// The test and where the pack writes it (``blank` of selector `NAME` tests text`).
        test: String,
        /// The field the test reads, the entry by its place in the source, and the value's
        /// kind and the value, shortened (``params.description` of the entry at
        /// `audit.jsonl:18` is a number (`7`)`).
        found: String,
    },
}

/// Why a value cannot be printed, as the errors of [`TextTest::Key`] and
/// [`TextTest::Message`] say it.
const CANNOT_PRINT: &str = "which throws on an object with a `toString` of its own";

impl EvalError {
    /// The diagnostic code of the error (`E04x`; `grade explain CODE` describes it). An
    /// `Option` for the errors to come, which may have none.
    pub fn code(&self) -> Option<crate::pack::codes::Code> {
        use crate::pack::codes::Code;
        Some(match self {
            EvalError::NoJudgment { .. } => Code::NoJudgment,
            EvalError::Script { .. } => Code::ScriptFailed,
            EvalError::NotFinite { .. } => Code::PointsOverflow,
            EvalError::Plugin { .. } => Code::PluginFailed,
            EvalError::NotText { .. } => Code::NotText,
        })
    }
}

impl CompiledPack {
    /// Grades a session with a pack that has no judged dimensions.
    pub fn grade(
        &self,
        session: &Session,
        options: &GradeOptions,
    ) -> Result<GradeResult, EvalError> {
        self.grade_with(session, None, options)
    }

    /// Grades a session; judged dimensions take their scores from `judgment`.
    pub fn grade_with(
        &self,
        session: &Session,
        judgment: Option<&Judgment>,
        options: &GradeOptions,
    ) -> Result<GradeResult, EvalError> {
        self.grade_traced(session, judgment, options, Trace::of(options))
    }

    /// Grades a session recording each rule's points in `points` (and no `explain`), as
    /// comparing two grades rule by rule needs.
    pub(crate) fn grade_rule_points(
        &self,
        session: &Session,
        options: &GradeOptions,
        points: &mut RulePoints,
    ) -> Result<GradeResult, EvalError> {
        self.grade_traced(session, None, options, Trace::Points(points))
    }

    fn grade_traced(
        &self,
        session: &Session,
        judgment: Option<&Judgment>,
        options: &GradeOptions,
        trace: Trace<'_>,
    ) -> Result<GradeResult, EvalError> {
        let copy = || Arc::new(session.entries.clone());
        let mut result = self.grade_entries(
            &session.id,
            &session.entries,
            &copy,
            judgment,
            options,
            trace,
        )?;
        result.skipped_lines = session.skipped_lines;
        Ok(result)
    }

    /// [`CompiledPack::grade_with`] for a session the caller no longer needs: a script that
    /// runs is handed the entries instead of a copy of them.
    pub fn grade_owned(
        &self,
        session: Session,
        judgment: Option<&Judgment>,
        options: &GradeOptions,
    ) -> Result<GradeResult, EvalError> {
        if self.scripts.is_none() {
            return self.grade_with(&session, judgment, options);
        }
        let Session {
            id,
            entries,
            skipped_lines,
        } = session;
        let entries = Arc::new(entries);
        let share = || Arc::clone(&entries);
        let mut result =
            self.grade_entries(&id, &entries, &share, judgment, options, Trace::of(options))?;
        result.skipped_lines = skipped_lines;
        Ok(result)
    }

    /// Grades entries; `share` gives them to scripts, which is needed only when a script
    /// runs (not when its outcome for such a session is remembered).
    fn grade_entries(
        &self,
        session_id: &str,
        entries: &[Entry],
        share: &dyn Fn() -> Arc<Vec<Entry>>,
        judgment: Option<&Judgment>,
        options: &GradeOptions,
        trace: Trace<'_>,
    ) -> Result<GradeResult, EvalError> {
        self.check_judgment(session_id, judgment)?;
        let reference = options.references.as_ref().and_then(|r| r.get(session_id));
        let facts = self
            .facts(
                session_id,
                entries,
                reference,
                matches!(trace, Trace::Entries),
            )
            .map_err(|failure| self.not_text(session_id, entries, failure))?;
        if let Some(failure) = facts.native_failure.borrow_mut().take() {
            let name = facts.failed_metric.and_then(|i| self.metric_names.get(i));
            let at = name.map(|name| format!("metrics.{name}"));
            return Err(EvalError::Plugin {
                pack: self.id.clone(),
                place: name
                    .map_or_else(|| "a metric".to_owned(), |name| format!("metric `{name}`")),
                function: failure.function,
                session: session_id.to_owned(),
                message: failure.error.describe(at.as_deref()),
            });
        }
        let mut script_data: Option<Arc<SessionData>> = None;
        let make = || {
            Arc::new(SessionData {
                session_id: session_id.to_owned(),
                entries: share(),
                hits: facts.hits.clone(),
                metrics: facts.metrics.clone(),
                selector_ids: Arc::clone(&self.selector_index),
                metric_ids: Arc::clone(&self.metric_index),
            })
        };
        self.grade_facts(
            session_id,
            &facts,
            judgment,
            &mut script_data,
            &make,
            (options.now, trace, reference.is_some()),
        )
    }

    /// The error for a test of text that met another kind of value.
    #[cold]
    fn not_text(&self, session_id: &str, entries: &[Entry], failure: NotText<'_>) -> EvalError {
        let name = |names: &std::collections::HashMap<String, usize>, id: usize| {
            names
                .iter()
                .find(|(_, &i)| i == id)
                .map_or_else(String::new, |(name, _)| name.clone())
        };
        let test = match failure.test {
            TextTest::Blank { selector } => {
                match self.inline_selectors.iter().find(|(id, _)| *id == selector) {
                    Some((_, path)) => format!("`blank` of the selector at `{path}` tests text"),
                    None => format!(
                        "`blank` of selector `{}` tests text",
                        name(&self.selector_index, selector)
                    ),
                }
            }
            TextTest::Normalize { metric } => format!(
                "`normalize` of metric `{}` reads text",
                self.metric_names.get(metric).map_or("", String::as_str)
            ),
            TextTest::Key { metric } => format!(
                "metric `{}` compares keys as JavaScript prints them, {CANNOT_PRINT}",
                self.metric_names.get(metric).map_or("", String::as_str)
            ),
            TextTest::Message { dimension, rule } => {
                let rule = self
                    .dimensions
                    .get(dimension)
                    .and_then(|d| d.rules.get(rule))
                    .map_or("", |r| r.id.as_str());
                format!(
                    "a message of rule `{rule}` prints `{}` as JavaScript does, {CANNOT_PRINT}",
                    failure.field
                )
            }
        };
        let (entry, value) = match entries.get(failure.at as usize) {
            Some(e) => {
                let value = failure.field.get(e);
                (
                    entry_named(failure.at, e),
                    format!(
                        "{} (`{}`)",
                        value.kind_phrase(),
                        shortened(&value.to_json())
                    ),
                )
            }
            None => (format!("entry #{}", failure.at + 1), "not text".to_owned()),
        };
        EvalError::NotText {
            pack: self.id.clone(),
            session: session_id.to_owned(),
            test,
            found: format!("`{}` of {entry} is {value}", failure.field),
        }
    }

    /// A pack with judged dimensions grades nothing without a judgment.
    fn check_judgment(
        &self,
        session_id: &str,
        judgment: Option<&Judgment>,
    ) -> Result<(), EvalError> {
        let judged: Vec<String> = self
            .judged_dimensions()
            .map(|d| format!("`{}`", d.id))
            .collect();
        if judgment.is_none() && !judged.is_empty() {
            return Err(EvalError::NoJudgment {
                pack: self.id.clone(),
                session: session_id.to_owned(),
                dimensions: judged.join(", "),
            });
        }
        Ok(())
    }

    fn grade_facts(
        &self,
        session_id: &str,
        facts: &Facts<'_>,
        judgment: Option<&Judgment>,
        script_data: &mut Option<Arc<SessionData>>,
        make_script_data: &dyn Fn() -> Arc<SessionData>,
        (now, mut trace, has_reference): (InstantMs, Trace<'_>, bool),
    ) -> Result<GradeResult, EvalError> {
        let witnessed = matches!(trace, Trace::Entries);
        if let Trace::Points(points) = &mut trace {
            points.points.clear();
            points.starts.clear();
            points.starts.resize(self.dimensions.len(), None);
        }
        let entries = facts.entries;
        let mut result = GradeResult {
            session_id: session_id.to_owned(),
            task_id: None,
            total_score: Score(0.0),
            max_score: Score(self.max_score()),
            dimensions: IndexMap::with_capacity(self.dimensions.len()),
            flags: Vec::new(),
            timestamp: format_iso_millis(now),
            entry_count: entries.len(),
            skipped_lines: 0,
            source: None,
            evaluator: "auto".to_owned(),
            rubric: RubricRef {
                id: self.id.clone(),
                version: self.version.clone(),
                digest: self.digest.clone(),
            },
            percent: Some(Score(0.0)),
            grade: None,
            judge: judgment.and_then(|j| j.usage.clone()),
            panel: judgment.and_then(|j| j.panel.clone()),
            explain: witnessed.then(IndexMap::new),
        };
        // With a judgment, the grade rests on it even when the source has no entries.
        if entries.is_empty() && judgment.is_none() {
            for d in &self.dimensions {
                result.dimensions.insert(
                    d.id.clone(),
                    DimensionScore {
                        score: Score(0.0),
                        max: Score(d.max),
                        ..DimensionScore::default()
                    },
                );
            }
            result.flags.push(self.empty_flag.clone());
            result.grade = self.band_for(0.0).map(str::to_owned);
            return Ok(result);
        }

        let mut prefetched = self.prefetch_scripts(
            session_id,
            facts,
            judgment.is_some(),
            script_data,
            make_script_data,
        );
        let mut total = 0.0;
        let mut not_applicable = Vec::new();
        for (d, dimension) in self.dimensions.iter().enumerate() {
            if let (Some(judgment), true) = (judgment, dimension.kind.is_judged()) {
                let scored = judged_score(dimension, judgment);
                total += match self.scoring {
                    Scoring::Points => scored.score.0,
                    Scoring::Weighted => {
                        scored.weight.unwrap_or(0.0) * scored.normalized.unwrap_or(0.0)
                    }
                };
                result.dimensions.insert(dimension.id.clone(), scored);
                continue;
            }
            if let (Some(first), false) = (dimension.compares_with_reference.first(), has_reference)
            {
                // A zero would say the agent did everything wrong; with nothing to compare
                // with, nothing was graded.
                let evidence = format!(
                    "no reference trajectory for this session: metric `{first}` compares the session's tool calls with one (give it with `--reference`)"
                );
                result.dimensions.insert(
                    dimension.id.clone(),
                    DimensionScore {
                        score: Score(0.0),
                        max: Score(dimension.max),
                        evidence: vec![evidence],
                        not_applicable: true,
                        ..DimensionScore::default()
                    },
                );
                if let Some(explain) = result.explain.as_mut() {
                    explain.insert(dimension.id.clone(), Vec::new());
                }
                not_applicable.push(dimension.id.as_str());
                continue;
            }
            if let Some(applies) = &dimension.applies {
                let ctx = Ctx {
                    facts,
                    score: dimension.start,
                    entry: None,
                };
                let holds = applies.when.holds(&ctx, Witnesses(None));
                if let Some(failure) = facts.native_failure.borrow_mut().take() {
                    return Err(EvalError::Plugin {
                        pack: self.id.clone(),
                        place: format!("dimension `{}`", dimension.id),
                        function: failure.function,
                        session: session_id.to_owned(),
                        message: failure
                            .error
                            .describe(Some(&format!("{}.applies_when", dimension.path))),
                    });
                }
                if !holds {
                    // No entry here, so no field to print: nothing can be unprintable.
                    let reason = applies.otherwise.as_ref().map(|t| t.render(&ctx));
                    result.dimensions.insert(
                        dimension.id.clone(),
                        DimensionScore {
                            score: Score(0.0),
                            max: Score(dimension.max),
                            evidence: reason.into_iter().collect(),
                            not_applicable: true,
                            ..DimensionScore::default()
                        },
                    );
                    if let Some(explain) = result.explain.as_mut() {
                        explain.insert(dimension.id.clone(), Vec::new());
                    }
                    not_applicable.push(dimension.id.as_str());
                    continue;
                }
            }
            let mut score = dimension.start;
            let mut evidence = Vec::new();
            let mut traces = Vec::new();
            let flags_start = result.flags.len();
            if let Trace::Points(points) = &mut trace {
                points.starts[d] = Some(points.points.len());
            }
            for (r, rule) in dimension.rules.iter().enumerate() {
                let before = score;
                let (flags_before, evidence_before) = (result.flags.len(), evidence.len());
                let mut witnesses = Vec::new();
                self.run_rule(
                    rule,
                    session_id,
                    facts,
                    rule::Running {
                        score: &mut score,
                        evidence: &mut evidence,
                        flags: &mut result.flags,
                        witnesses: &mut witnesses,
                    },
                    script_data,
                    make_script_data,
                    &mut prefetched,
                    witnessed,
                )?;
                if let Some(failure) = facts.native_failure.borrow_mut().take() {
                    return Err(EvalError::Plugin {
                        pack: self.id.clone(),
                        place: format!("rule `{}`", rule.id),
                        function: failure.function,
                        session: session_id.to_owned(),
                        message: failure.error.describe(Some(&rule.path)),
                    });
                }
                if let Some((selector, at, field)) = facts.deferred_read.take() {
                    let failure = NotText {
                        test: TextTest::Blank { selector },
                        field,
                        at,
                    };
                    return Err(self.not_text(session_id, entries, failure));
                }
                if let Some((at, field)) = facts.unprintable.borrow_mut().take() {
                    let test = TextTest::Message {
                        dimension: d,
                        rule: r,
                    };
                    let failure = NotText {
                        test,
                        field: &field,
                        at,
                    };
                    return Err(self.not_text(session_id, entries, failure));
                }
                if let Trace::Points(points) = &mut trace {
                    points.points.push(score - before);
                } else if witnessed {
                    witnesses.sort_unstable();
                    witnesses.dedup();
                    traces.push(RuleTrace {
                        rule: rule.id.clone(),
                        points: Score(score - before),
                        evidence: evidence[evidence_before..].to_vec(),
                        flags: result.flags[flags_before..].to_vec(),
                        entries: witnesses
                            .iter()
                            .filter_map(|&i| entries.get(i as usize).map(|e| entry_ref(i, e)))
                            .collect(),
                        trajectories: self.trajectory_traces(rule, facts),
                    });
                }
            }
            if !score.is_finite() {
                return Err(EvalError::NotFinite {
                    pack: self.id.clone(),
                    dimension: dimension.id.clone(),
                    session: session_id.to_owned(),
                    points: crate::entry::js_number(score),
                });
            }
            let clamped = score.max(dimension.floor).min(dimension.cap);
            let mut scored = DimensionScore {
                score: Score(clamped),
                max: Score(dimension.max),
                evidence,
                flags: flags_start..result.flags.len(),
                ..DimensionScore::default()
            };
            total += match self.scoring {
                Scoring::Points => clamped,
                Scoring::Weighted => {
                    let normalized = clamped / dimension.max;
                    scored.normalized = Some(normalized);
                    scored.weight = dimension.weight;
                    dimension.weight.unwrap_or(0.0) * normalized
                }
            };
            result.dimensions.insert(dimension.id.clone(), scored);
            if let Some(explain) = result.explain.as_mut() {
                explain.insert(dimension.id.clone(), traces);
            }
        }
        result.total_score = Score(total);
        if not_applicable.is_empty() {
            let percent = percent_of(total, self.max_score());
            result.percent = Some(Score(percent));
            result.grade = self.band_for(percent).map(str::to_owned);
            return Ok(result);
        }
        // The total is over the dimensions that apply; with none, there is nothing to grade
        // and no letter (a session that did nothing is not an A).
        let max = self.max_score_of(|d| !not_applicable.contains(&d.id.as_str()));
        result.max_score = Score(max);
        // With none, there is no percent either: a 0 would count in every mean.
        let percent = (max > 0.0).then(|| percent_of(total, max));
        result.percent = percent.map(Score);
        result.grade = percent.and_then(|p| self.band_for(p)).map(str::to_owned);
        Ok(result)
    }
}

impl CompiledPack {
    /// What each trajectory metric `rule` reads paired, for `--explain`.
    fn trajectory_traces(
        &self,
        rule: &crate::pack::Rule,
        facts: &Facts<'_>,
    ) -> Vec<TrajectoryTrace> {
        if facts.pairings.is_empty() {
            return Vec::new();
        }
        let entries = facts.entries;
        let at = |i: u32| entries.get(i as usize).map(|e| entry_ref(i, e));
        crate::pack::trajectory::metrics_read(rule)
            .into_iter()
            .filter_map(|m| facts.pairings.iter().find(|(id, _)| *id == m))
            .map(|(m, pairing)| {
                let call = |r: usize| ReferenceCall {
                    position: r + 1,
                    name: pairing.reference.get(r).cloned().unwrap_or_default(),
                };
                TrajectoryTrace {
                    metric: self.metric_names.get(*m).cloned().unwrap_or_default(),
                    value: Score(pairing.scored.value),
                    matched: pairing
                        .scored
                        .pairs
                        .iter()
                        .filter_map(|&(a, r)| {
                            Some(MatchedCall {
                                agent: at(*pairing.agent.get(a as usize)?)?,
                                reference: call(r as usize),
                            })
                        })
                        .collect(),
                    missed: pairing.missed().into_iter().map(call).collect(),
                    extra: pairing.extra().into_iter().filter_map(at).collect(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::{grade, pack, session};

    #[test]
    fn an_empty_session_scores_zero_with_the_pack_flag() {
        let pack = pack("      - { id: r, doc: d, points: 100 }\n");
        let result = match pack.grade(&session(&[]), &super::GradeOptions::default()) {
            Ok(r) => r,
            Err(err) => panic!("{err}"),
        };
        assert_eq!(result.total_score.0, 0.0);
        assert_eq!(result.flags, ["no audit entries found for session"]);
    }

    #[test]
    fn a_dimension_that_does_not_apply_leaves_the_total() {
        let yaml = "id: t\nversion: '1'\nname: T\nselectors:\n  tasks: { domain: tasks }\ndimensions:\n  - id: a\n    max: 10\n    applies_when: { count: tasks }\n    not_applicable: 'no tasks'\n    rules: [ { id: r, doc: d, points: 10 } ]\n  - id: b\n    max: 10\n    rules: [ { id: s, doc: d, points: 5 } ]\n";
        let pack = pack(yaml);
        let result = grade(&pack, &[("x", "y")]);
        assert!(result.dimensions["a"].not_applicable);
        assert_eq!(result.dimensions["a"].evidence, ["no tasks"]);
        assert_eq!(
            (
                result.total_score.0,
                result.max_score.0,
                result.percent.map(|p| p.0)
            ),
            (5.0, 10.0, Some(50.0))
        );
        let result = grade(&pack, &[("tasks", "y")]);
        assert_eq!((result.total_score.0, result.max_score.0), (15.0, 20.0));
    }

    /// A report shows each flag under the dimension that raised it (issue 48, friction 5):
    /// the result says which, with or without `--explain`, and not in its JSON.
    #[test]
    fn each_dimension_knows_the_flags_its_rules_raised() {
        let yaml = "id: t\nversion: '1'\nname: T\nselectors:\n  tasks: { domain: tasks }\ndimensions:\n  - id: a\n    max: 10\n    rules: [ { id: r, doc: d, when: { count: tasks }, points: 10, otherwise: { flag: 'no tasks' } } ]\n  - id: b\n    max: 10\n    rules: [ { id: s, doc: d, points: 10 } ]\n  - id: c\n    max: 10\n    rules:\n      - { id: t, doc: d, flag: 'one' }\n      - { id: u, doc: d, flag: 'two' }\n";
        let pack = pack(yaml);
        for explain in [false, true] {
            let options = super::GradeOptions {
                explain,
                ..super::GradeOptions::default()
            };
            let result = match pack.grade(&session(&[("x", "y")]), &options) {
                Ok(r) => r,
                Err(err) => panic!("{err}"),
            };
            assert_eq!(result.flags, ["no tasks", "one", "two"]);
            assert_eq!(result.flags_of("a"), ["no tasks"]);
            assert!(result.flags_of("b").is_empty());
            assert_eq!(result.flags_of("c"), ["one", "two"]);
            assert!(result.flags_of("nope").is_empty());
            assert_eq!(result.flags_of_no_dimension().count(), 0);
            let mut line = Vec::new();
            assert!(result.write_json_line(&mut line).is_ok());
            let back: crate::GradeResult = match serde_json::from_slice(&line) {
                Ok(r) => r,
                Err(err) => panic!("{err}"),
            };
            // Read back, the flags belong to no dimension: all are the session's.
            assert!(back.flags_of("a").is_empty());
            assert_eq!(back.flags_of_no_dimension().count(), 3);
        }
        let empty = match pack.grade(&session(&[]), &super::GradeOptions::default()) {
            Ok(r) => r,
            Err(err) => panic!("{err}"),
        };
        assert_eq!(
            empty.flags_of_no_dimension().collect::<Vec<_>>(),
            ["no audit entries found for session"]
        );
    }

    #[test]
    fn a_judged_pack_needs_a_judgment() {
        let yaml = "id: t\nversion: '1'\nname: T\nscoring: weighted\njudge: { prompt: j.prompt.md }\ndimensions:\n  - { id: q, type: numeric, weight: 1 }\n";
        let mut files = crate::pack::testing::files(yaml);
        files
            .files
            .insert("j.prompt.md".to_owned(), "{{session_id}}".to_owned());
        let pack = match crate::pack::compile_pack(&files) {
            Ok(p) => p,
            Err(err) => panic!("{err}"),
        };
        let err = pack
            .grade(&session(&[("a", "b")]), &super::GradeOptions::default())
            .map(|_| ())
            .err();
        assert!(
            matches!(err, Some(super::EvalError::NoJudgment { .. })),
            "{err:?}"
        );
    }
}
