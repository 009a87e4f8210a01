//! Stage 3: grading one session with a compiled pack.
//!
//! One pass over the entries records, for every selector, the positions it matches; every
//! count, first match, window and metric is then read from those lists, so the cost of a
//! session is (entries × selectors) plus a little per rule.

use std::collections::HashSet;
use std::sync::Arc;

use indexmap::IndexMap;

use crate::entry::{round_half_up, Entry, Session};
use crate::judgment::Judgment;
use crate::pack::field::Field;
use crate::pack::raw::Normalize;
use crate::pack::raw::Scoring;
use crate::pack::template::TemplateValues;
use crate::pack::{
    Case, CompiledPack, Condition, Dimension, DimensionKind, EntryKeys, Metric, Points, RuleKind,
    Selector,
};
use crate::result::{
    percent_of, DimensionScore, EntryRef, GradeResult, RubricRef, RuleTrace, Score,
};
use crate::script::{Observable, SessionData};
use crate::time::{format_iso_millis, InstantMs};

/// How a session is graded.
#[derive(Debug, Clone, Copy)]
pub struct GradeOptions {
    /// The instant recorded as the grade's `timestamp`.
    pub now: InstantMs,
    /// Record, per rule, the points and the entries behind them.
    pub explain: bool,
}

impl Default for GradeOptions {
    fn default() -> Self {
        GradeOptions {
            now: crate::time::now_ms(),
            explain: false,
        }
    }
}

/// Why a session could not be graded (other sessions of a run still can be).
#[derive(Debug, thiserror::Error)]
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
}

/// The first plugin call that failed while the facts or a rule were evaluated.
#[derive(Debug)]
struct NativeFailure {
    function: String,
    message: String,
}

/// What the single pass learned about a session.
struct Facts<'s> {
    session_id: &'s str,
    entries: &'s [Entry],
    /// Per selector id: the (ascending) positions of matching entries.
    hits: Vec<Vec<u32>>,
    metrics: Vec<Option<f64>>,
    /// Per metric, the entries that moved it (only with `explain`): the `over` entries
    /// outside `of` for a ratio, the repeats for duplicates, the first of each key for distinct.
    metric_witnesses: Vec<Vec<u32>>,
    /// A plugin call that failed: the session fails with it (conditions and metrics have
    /// no other way to say so, and a false or undefined in its place would grade wrong).
    native_failure: std::cell::RefCell<Option<NativeFailure>>,
}

impl Facts<'_> {
    fn call_native(
        &self,
        native: &crate::plugin::NativeRef,
        entry: Option<u32>,
        score: f64,
    ) -> Option<crate::plugin::NativeResult> {
        match native.call(self.session_id, self.entries, entry, score) {
            Ok(result) => Some(result),
            Err(message) => {
                self.native_failure
                    .borrow_mut()
                    .get_or_insert(NativeFailure {
                        function: native.qualified_name(),
                        message,
                    });
                None
            }
        }
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
        let copy = || Arc::new(session.entries.clone());
        let mut result =
            self.grade_entries(&session.id, &session.entries, &copy, judgment, options)?;
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
        let mut result = self.grade_entries(&id, &entries, &share, judgment, options)?;
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
    ) -> Result<GradeResult, EvalError> {
        self.check_judgment(session_id, judgment)?;
        let facts = self.facts(session_id, entries, options.explain);
        if let Some(failure) = facts.native_failure.borrow_mut().take() {
            let metric = self
                .metrics
                .iter()
                .position(
                    |m| matches!(m, Metric::Native(n) if n.qualified_name() == failure.function),
                )
                .and_then(|i| self.metric_names.get(i))
                .map_or_else(|| "a metric".to_owned(), |name| format!("metric `{name}`"));
            return Err(EvalError::Plugin {
                pack: self.id.clone(),
                place: metric,
                function: failure.function,
                session: session_id.to_owned(),
                message: failure.message,
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
            options,
        )
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
        options: &GradeOptions,
    ) -> Result<GradeResult, EvalError> {
        let entries = facts.entries;
        let mut result = GradeResult {
            session_id: session_id.to_owned(),
            task_id: None,
            total_score: Score(0.0),
            max_score: Score(self.max_score()),
            dimensions: IndexMap::with_capacity(self.dimensions.len()),
            flags: Vec::new(),
            timestamp: format_iso_millis(options.now),
            entry_count: entries.len(),
            skipped_lines: 0,
            evaluator: "auto".to_owned(),
            rubric: RubricRef {
                id: self.id.clone(),
                version: self.version.clone(),
                digest: self.digest.clone(),
            },
            percent: Score(0.0),
            grade: None,
            judge: judgment.and_then(|j| j.usage.clone()),
            explain: options.explain.then(IndexMap::new),
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

        let mut total = 0.0;
        let mut not_applicable = Vec::new();
        for dimension in &self.dimensions {
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
            if let Some(applies) = &dimension.applies {
                let ctx = Ctx {
                    facts,
                    score: dimension.start,
                    entry: None,
                };
                if !holds(&applies.when, &ctx, None) {
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
            for rule in &dimension.rules {
                let before = score;
                let (flags_before, evidence_before) = (result.flags.len(), evidence.len());
                let mut witnesses = Vec::new();
                match &rule.kind {
                    RuleKind::Session(cases) => {
                        let ctx = Ctx {
                            facts,
                            score,
                            entry: None,
                        };
                        if let Some(case) =
                            first_case(cases, &ctx, options.explain.then_some(&mut witnesses))
                        {
                            score += apply(case, &ctx, &mut evidence, &mut result.flags);
                        }
                    }
                    RuleKind::ForEach { selector, cases } => {
                        for &at in &facts.hits[*selector] {
                            let ctx = Ctx {
                                facts,
                                score,
                                entry: Some(at),
                            };
                            let mut found = Vec::new();
                            if let Some(case) =
                                first_case(cases, &ctx, options.explain.then_some(&mut found))
                            {
                                let points = apply(case, &ctx, &mut evidence, &mut result.flags);
                                score += points;
                                if options.explain
                                    && (points != 0.0
                                        || case.evidence.is_some()
                                        || case.flag.is_some())
                                {
                                    witnesses.push(at);
                                    witnesses.extend(found);
                                }
                            }
                        }
                    }
                    RuleKind::Script { index, .. } => {
                        let host = self.scripts.as_ref().ok_or_else(|| EvalError::Script {
                            pack: self.id.clone(),
                            rule: rule.id.clone(),
                            session: session_id.to_owned(),
                            message: "the pack has no script host".to_owned(),
                        })?;
                        let observable = Observable {
                            session_id,
                            entries,
                            hits: &facts.hits,
                            metrics: &facts.metrics,
                        };
                        let mut data =
                            || Arc::clone(script_data.get_or_insert_with(make_script_data));
                        let outcome =
                            host.run(*index, &observable, score, &mut data)
                                .map_err(|message| EvalError::Script {
                                    pack: self.id.clone(),
                                    rule: rule.id.clone(),
                                    session: session_id.to_owned(),
                                    message,
                                })?;
                        if self.whole_scores && outcome.points.fract() != 0.0 {
                            return Err(EvalError::Script {
                                pack: self.id.clone(),
                                rule: rule.id.clone(),
                                session: session_id.to_owned(),
                                message: format!(
                                    "it gave {} points at `{}`, and every score of this pack is a whole number",
                                    crate::entry::js_number(outcome.points),
                                    rule.path
                                ),
                            });
                        }
                        score += outcome.points;
                        evidence.extend(outcome.evidence);
                        result.flags.extend(outcome.flags);
                        witnesses.extend(outcome.entries);
                    }
                    RuleKind::Native(native) => {
                        if let Some(outcome) = facts.call_native(native, None, score) {
                            score += outcome.value.unwrap_or(0.0);
                            evidence.extend(outcome.evidence);
                            result.flags.extend(outcome.flags);
                            witnesses.extend(outcome.entries);
                        }
                    }
                }
                if let Some(failure) = facts.native_failure.borrow_mut().take() {
                    return Err(EvalError::Plugin {
                        pack: self.id.clone(),
                        place: format!("rule `{}`", rule.id),
                        function: failure.function,
                        session: session_id.to_owned(),
                        message: failure.message,
                    });
                }
                if options.explain {
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
                    });
                }
            }
            let clamped = score.max(dimension.floor).min(dimension.cap);
            let mut scored = DimensionScore {
                score: Score(clamped),
                max: Score(dimension.max),
                evidence,
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
            result.percent = Score(percent_of(total, self.max_score()));
            result.grade = self.band_for(result.percent.0).map(str::to_owned);
            return Ok(result);
        }
        // The total is over the dimensions that apply; with none, there is nothing to grade
        // and no letter (a session that did nothing is not an A).
        let max = self.max_score_of(|d| !not_applicable.contains(&d.id.as_str()));
        result.max_score = Score(max);
        result.percent = Score(percent_of(total, max));
        result.grade = if max > 0.0 {
            self.band_for(result.percent.0).map(str::to_owned)
        } else {
            None
        };
        Ok(result)
    }

    fn facts<'s>(&self, session_id: &'s str, entries: &'s [Entry], explain: bool) -> Facts<'s> {
        let mut hits: Vec<Vec<u32>> = vec![Vec::new(); self.selectors.len()];
        // Per entry, what the selectors before the current one decided: a reference to an
        // earlier selector (`all: [task_added, …]`) reads it instead of matching again.
        let mut matched = vec![false; self.selectors.len()];
        for (i, entry) in entries.iter().enumerate() {
            let keys = self.vocabulary.keys(entry);
            // Selectors decided when the pack compiled are read from the entry's row.
            let row = self
                .decided
                .as_ref()
                .map(|d| (&d.decided, d.row(keys, entry.result.success)));
            for (s, selector) in self.selectors.iter().enumerate() {
                let hit = match row {
                    Some((decided, bits)) if decided[s] => bits[s / 64] >> (s % 64) & 1 == 1,
                    _ => self.matches(selector, entry, keys, &matched[..s]),
                };
                matched[s] = hit;
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
        };
        let mut native_witnesses = vec![Vec::new(); self.metrics.len()];
        for (i, m) in self.metrics.iter().enumerate() {
            let value = match m {
                Metric::Native(native) => facts.call_native(native, None, 0.0).and_then(|r| {
                    native_witnesses[i] = r.entries;
                    r.value
                }),
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
        known: &[bool],
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
                Some(&hit) => hit,
                None => self
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

/// A judged dimension's result: the judge's score (within the dimension's range), its
/// category label, the normalised value and the weight.
fn judged_score(dimension: &Dimension, judgment: &Judgment) -> DimensionScore {
    let judged = judgment.dimensions.get(&dimension.id);
    let raw = judged.map_or(dimension.start, |j| j.score);
    let score = raw.max(dimension.floor).min(dimension.cap);
    let label = match &dimension.kind {
        DimensionKind::Categorical { categories } => categories
            .iter()
            .find(|(_, v)| *v == score)
            .map(|(l, _)| l.clone()),
        _ => None,
    };
    let span = dimension.cap - dimension.floor;
    let normalized = if span > 0.0 {
        (score - dimension.floor) / span
    } else {
        0.0
    };
    DimensionScore {
        score: Score(score),
        max: Score(dimension.max),
        evidence: judged.map(|j| j.evidence.clone()).unwrap_or_default(),
        label,
        normalized: Some(normalized),
        weight: dimension.weight,
        rationale: judged.map(|j| j.rationale.clone()),
        spread: judged.and_then(|j| j.spread()),
        not_applicable: false,
    }
}

fn entry_ref(index: u32, e: &Entry) -> EntryRef {
    let position = index as usize + 1;
    let meta = |key: &str| e.metadata.get(key).map(crate::entry::MetaRef::to_json);
    let line = meta("line").and_then(|v| v.as_u64());
    let place = crate::entry::place_of(position, e);
    EntryRef {
        position,
        timestamp: e.timestamp.to_string(),
        operation: format!("{}.{}", e.domain, e.operation),
        file: line
            .and(meta("file"))
            .and_then(|v| v.as_str().map(str::to_owned)),
        line,
        tool_use_id: meta("toolUseId").and_then(|v| v.as_str().map(str::to_owned)),
        // Only when it says more than the position.
        place: (place != format!("#{position}")).then_some(place),
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

/// Where a condition is evaluated: the session, the running score, and in `for_each` the entry.
struct Ctx<'a, 's> {
    facts: &'a Facts<'s>,
    score: f64,
    entry: Option<u32>,
}

/// The first case whose condition holds; with `witnesses`, the entries behind it are added.
fn first_case<'c>(
    cases: &'c [Case],
    ctx: &Ctx<'_, '_>,
    witnesses: Option<&mut Vec<u32>>,
) -> Option<&'c Case> {
    let Some(witnesses) = witnesses else {
        return cases.iter().find(|case| holds(&case.when, ctx, None));
    };
    // When the applied case has no entries of its own (an `otherwise`), the entries that
    // made the earlier cases fail are what explains it.
    let mut failed = Vec::new();
    let mut tried = Vec::new();
    for case in cases {
        tried.clear();
        if holds(&case.when, ctx, Some(&mut tried)) {
            witnesses.extend_from_slice(if tried.is_empty() { &failed } else { &tried });
            return Some(case);
        }
        failed.extend_from_slice(&tried);
    }
    None
}

fn within_bounds(value: f64, at_least: Option<f64>, at_most: Option<f64>) -> bool {
    at_least.is_none_or(|m| value >= m) && at_most.is_none_or(|m| value <= m)
}

fn holds(condition: &Condition, ctx: &Ctx<'_, '_>, mut witnesses: Option<&mut Vec<u32>>) -> bool {
    let hits = &ctx.facts.hits;
    let mut witness = |positions: &[u32]| {
        if let Some(w) = witnesses.as_deref_mut() {
            w.extend_from_slice(positions);
        }
    };
    match condition {
        Condition::Always => true,
        Condition::Count {
            selector,
            at_least,
            at_most,
        } => {
            let found = &hits[*selector];
            witness(found);
            within_bounds(found.len() as f64, *at_least, *at_most)
        }
        Condition::Metric {
            metric,
            at_least,
            at_most,
        } => {
            if let Some(w) = ctx.facts.metric_witnesses.get(*metric) {
                witness(w);
            }
            ctx.facts.metrics[*metric].is_some_and(|v| within_bounds(v, *at_least, *at_most))
        }
        Condition::Score { at_least, at_most } => within_bounds(ctx.score, *at_least, *at_most),
        Condition::FirstBeforeFirst { first, before } => {
            let Some(&a) = hits[*first].first() else {
                return false;
            };
            let entries = ctx.facts.entries;
            match hits[*before].first() {
                None => {
                    witness(&[a]);
                    true
                }
                Some(&b) => {
                    let ok = entries[a as usize].instant <= entries[b as usize].instant;
                    witness(&[a, b]);
                    ok
                }
            }
        }
        Condition::FirstIs { first, is } => {
            let Some(&a) = hits[*first].first() else {
                return false;
            };
            witness(&[a]);
            hits[*is].binary_search(&a).is_ok()
        }
        Condition::Entry(selector) => ctx
            .entry
            .is_some_and(|at| hits[*selector].binary_search(&at).is_ok()),
        Condition::FollowedBy { selector, within } => {
            let Some(at) = ctx.entry else { return false };
            let found = &hits[*selector];
            let start = found.partition_point(|&j| j <= at);
            match found.get(start) {
                Some(&j) if u64::from(j) <= u64::from(at) + u64::from(*within) => {
                    witness(&[j]);
                    true
                }
                _ => false,
            }
        }
        Condition::PrecededBy { selector, within } => {
            let Some(at) = ctx.entry else { return false };
            let found = &hits[*selector];
            let end = found.partition_point(|&j| j < at);
            match end.checked_sub(1).and_then(|k| found.get(k)) {
                Some(&j) if u64::from(j) + u64::from(*within) >= u64::from(at) => {
                    witness(&[j]);
                    true
                }
                _ => false,
            }
        }
        Condition::All(items) => items
            .iter()
            .all(|c| holds(c, ctx, witnesses.as_deref_mut())),
        Condition::Any(items) => items
            .iter()
            .any(|c| holds(c, ctx, witnesses.as_deref_mut())),
        Condition::Not(inner) => !holds(inner, ctx, None),
        Condition::Native(native) => {
            let Some(result) = ctx.facts.call_native(native, ctx.entry, ctx.score) else {
                return false;
            };
            witness(&result.entries);
            result.value.is_some_and(|v| v != 0.0 && !v.is_nan())
        }
    }
}

/// Applies a case's outcome and returns its points.
fn apply(
    case: &Case,
    ctx: &Ctx<'_, '_>,
    evidence: &mut Vec<String>,
    flags: &mut Vec<String>,
) -> f64 {
    if let Some(t) = &case.evidence {
        evidence.push(t.render(ctx));
    }
    if let Some(t) = &case.flag {
        flags.push(t.render(ctx));
    }
    match &case.points {
        None => 0.0,
        Some(Points::Fixed(p)) => *p,
        // JavaScript's `Math.round`: half rounds up, on the exact binary value.
        Some(Points::Scaled { metric, times }) => {
            ctx.facts.metrics[*metric].map_or(0.0, |v| round_half_up(times * v))
        }
    }
}

impl TemplateValues for Ctx<'_, '_> {
    fn count(&self, selector: usize) -> usize {
        self.facts.hits[selector].len()
    }
    fn metric(&self, metric: usize) -> Option<f64> {
        self.facts.metrics[metric]
    }
    fn score(&self) -> f64 {
        self.score
    }
    fn entry_field(&self, field: &Field) -> Option<String> {
        let at = self.entry?;
        field.get(&self.facts.entries[at as usize]).display()
    }
    fn entry_position(&self) -> Option<usize> {
        self.entry.map(|at| at as usize + 1)
    }
}

/// A selector decided from the entry's ids and result, or a reference to one already
/// decided for this entry; `None` for the others.
#[inline(always)]
fn quick_match(selector: &Selector, e: &Entry, keys: EntryKeys, known: &[bool]) -> Option<bool> {
    Some(match selector {
        Selector::Domain(names) => names.ids.contains(&keys.domain),
        Selector::Operation(names) => names.ids.contains(&keys.operation),
        Selector::Success(want) => e.result.success == *want,
        Selector::ExitCode(codes) => codes.ids.contains(&keys.exit_code),
        Selector::Ref(id) => return known.get(*id).copied(),
        _ => return None,
    })
}
