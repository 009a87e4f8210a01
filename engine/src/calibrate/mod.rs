//! Calibration: how far a judge's scores agree with people's, per judged dimension.
//!
//! A judge's results (its score, rationale and evidence per dimension per session) meet
//! human labels ([`parse_labels`]): every label of a session is paired with the judge's score
//! of that session, so three annotators make three pairs. On those pairs, a categorical
//! dimension gets Cohen's κ unweighted and quadratic-weighted, the confusion matrix and the
//! exact and within-one agreement; a numeric one Pearson's r and Spearman's ρ; both the
//! mean absolute and the mean signed difference (judge − human, the judge's bias). Per
//! session, Krippendorff's α takes the judge and every annotator as coders, and the
//! annotators alone (the agreement among people, the ceiling a judge can reach). κ, r, ρ
//! and α get 95% bootstrap intervals, resampling sessions with their labels, seeded.
//!
//! Labels that cannot pair are counted and named, never dropped in silence
//! ([`Warning`]): sessions with labels but no result, results without labels, dimensions
//! the pack does not have, scores outside a dimension's categories or range, and a second
//! label of one annotator for one session and dimension (the first is kept).

pub(crate) mod labels;
pub(crate) mod stats;

use indexmap::{IndexMap, IndexSet};
use serde::Serialize;
use serde_json::Value;

use crate::agreement::Metric;
use crate::pack::{CompiledPack, DimensionKind};
pub use labels::{parse_labels, Label, LabelScore, LabelsError};
pub use stats::Interval;
use stats::{Undefined, Weights};

/// What a judge said about one dimension of one session.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// The score.
    pub score: f64,
    /// Why the judge gave it.
    pub rationale: String,
    /// What the judge saw.
    pub evidence: Vec<String>,
}

/// A judge's results over a batch: session → dimension → what it said. The pack's
/// aggregate, when graded, is a dimension too (keyed by its id).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeResults {
    /// The judge's name (`anthropic:MODEL`, `panel`, the results file).
    pub judge: String,
    /// Session id → dimension id → judged.
    pub sessions: IndexMap<String, IndexMap<String, Judged>>,
}

/// Why a result line cannot be read as a judge's result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {why}")]
pub struct ResultsError {
    /// Where the result is (`results.jsonl:3`).
    pub origin: String,
    /// What is wrong with it.
    pub why: String,
}

/// The judges in results of `grade --format jsonl` for `pack`: the results as graded
/// (named `name`), and, when a panel judged them, each of the panel's judges. Each result
/// must be of `pack` and hold its judged dimensions.
pub fn judges_from_results(
    results: &[(String, Value)],
    pack: &CompiledPack,
    name: &str,
) -> Result<Vec<JudgeResults>, ResultsError> {
    let mut graded = JudgeResults {
        judge: name.to_owned(),
        sessions: IndexMap::new(),
    };
    let mut members: IndexMap<String, JudgeResults> = IndexMap::new();
    for (origin, result) in results {
        let fail = |why: String| ResultsError {
            origin: origin.clone(),
            why,
        };
        let session = result
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or_else(|| fail("not a grade result: it has no `sessionId`".to_owned()))?;
        let rubric = result.pointer("/rubric/id").and_then(Value::as_str);
        if rubric.is_some_and(|r| r != pack.id) {
            return Err(fail(format!(
                "session `{session}` was graded with rubric `{}`, not `{}`",
                rubric.unwrap_or_default(),
                pack.id
            )));
        }
        let dimensions = result
            .get("dimensions")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                fail(format!(
                    "the result of session `{session}` has no `dimensions`"
                ))
            })?;
        let mut judged = IndexMap::new();
        for d in pack.judged_dimensions() {
            let Some(dimension) = dimensions.get(&d.id) else {
                return Err(fail(format!(
                    "the result of session `{session}` has no dimension `{}`",
                    d.id
                )));
            };
            // Nothing to judge there (`applies_when` did not hold): no score to compare.
            if dimension.get("notApplicable").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            let score = dimension
                .get("score")
                .and_then(Value::as_f64)
                .ok_or_else(|| {
                    fail(format!(
                        "dimension `{}` of session `{session}` has no score",
                        d.id
                    ))
                })?;
            let said = |v: &Value| Judged {
                score: v.get("score").and_then(Value::as_f64).unwrap_or(score),
                rationale: v
                    .get("rationale")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                evidence: v
                    .get("evidence")
                    .and_then(Value::as_array)
                    .map(|e| {
                        e.iter()
                            .filter_map(|s| s.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
            };
            judged.insert(d.id.clone(), said(dimension));
            for member in dimension
                .get("panel")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(judge) = member.get("judge").and_then(Value::as_str) else {
                    continue;
                };
                if member.get("score").and_then(Value::as_f64).is_none() {
                    continue;
                }
                members
                    .entry(judge.to_owned())
                    .or_insert_with(|| JudgeResults {
                        judge: judge.to_owned(),
                        sessions: IndexMap::new(),
                    })
                    .sessions
                    .entry(session.to_owned())
                    .or_default()
                    .insert(d.id.clone(), said(member));
            }
        }
        if let (Some((aggregate, _)), Some(total)) = (
            &pack.aggregate,
            result.get("totalScore").and_then(Value::as_f64),
        ) {
            judged.insert(
                aggregate.clone(),
                Judged {
                    score: total,
                    rationale: String::new(),
                    evidence: Vec::new(),
                },
            );
        }
        graded.sessions.insert(session.to_owned(), judged);
    }
    Ok(std::iter::once(graded)
        .chain(members.into_values())
        .collect())
}

/// How to calibrate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Bootstrap resamples for each interval.
    pub resamples: usize,
    /// The bootstrap's seed.
    pub seed: u64,
    /// How many of the sessions that disagree most to list.
    pub disagreements: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            resamples: 2000,
            seed: 45,
            disagreements: 10,
        }
    }
}

/// A figure: its value, or why it has none, and its bootstrap interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Figure {
    /// The value; `null` when undefined.
    pub value: Option<f64>,
    /// Why it is undefined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The 95% bootstrap interval, for the figures that get one, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
}

impl Figure {
    fn of(value: Result<f64, Undefined>) -> Figure {
        Figure {
            value: value.ok(),
            reason: value.err().map(|e| e.to_string()),
            interval: None,
        }
    }

    fn with_interval(mut self, interval: Option<Interval>) -> Figure {
        if self.value.is_some() {
            self.interval = interval;
        }
        self
    }
}

/// The confusion matrix of a categorical dimension.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Confusion {
    /// The categories' labels, in the pack's order: the rows' and the columns' order.
    pub categories: Vec<String>,
    /// Row the people's category, column the judge's: how many pairs.
    pub matrix: Vec<Vec<u64>>,
}

/// The figures of a categorical dimension.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CategoricalFigures {
    /// Cohen's κ, unweighted.
    pub kappa: Figure,
    /// Cohen's κ with quadratic weights.
    pub kappa_quadratic: Figure,
    /// The confusion matrix.
    pub confusion: Confusion,
    /// The share of pairs in the same category; `null` for no pairs.
    pub exact: Option<f64>,
    /// The share of pairs at most one category apart; `null` for no pairs.
    pub within_one: Option<f64>,
}

/// The figures of a numeric dimension.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NumericFigures {
    /// Pearson's r.
    pub pearson: Figure,
    /// Spearman's ρ.
    pub spearman: Figure,
}

/// The agreement of a judge with people on one dimension.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DimensionCalibration {
    /// The dimension's id (or the aggregate's).
    pub dimension: String,
    /// `categorical`, `numeric`, or `aggregate`.
    pub kind: &'static str,
    /// Krippendorff's metric for the dimension: `ordinal` or `interval`.
    pub metric: &'static str,
    /// Pairs of a judge's score and a person's.
    pub pairs: usize,
    /// Sessions with a judge's score and at least one label.
    pub sessions: usize,
    /// κ, the confusion matrix and the agreement, for a categorical dimension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub categorical: Option<CategoricalFigures>,
    /// The correlations, for a numeric dimension (and the aggregate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numeric: Option<NumericFigures>,
    /// The mean absolute difference between the judge's score and a person's.
    pub mae: Option<f64>,
    /// The mean signed difference judge − person: above 0 the judge scores higher.
    pub bias: Option<f64>,
    /// Krippendorff's α of the judge and every annotator as coders.
    pub alpha: Figure,
    /// Krippendorff's α of the annotators alone.
    pub alpha_annotators: Figure,
    /// The pairs, for plotting: the judge's score and a person's.
    #[serde(skip)]
    pub points: Vec<(f64, f64)>,
}

/// A judge's agreement with people, per dimension.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JudgeCalibration {
    /// The judge.
    pub judge: String,
    /// Per judged dimension in the pack's order, then the aggregate when labelled.
    pub dimensions: Vec<DimensionCalibration>,
}

/// One annotator's score beside the judge's.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HumanScore {
    /// Who.
    pub annotator: String,
    /// Their score.
    pub score: f64,
}

/// A session where the judge and the people disagree.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Disagreement {
    /// The session.
    pub session_id: String,
    /// The dimension.
    pub dimension: String,
    /// The judge's score.
    pub judge_score: f64,
    /// The annotators' mean score.
    pub human_mean: f64,
    /// Each annotator's score.
    pub human_scores: Vec<HumanScore>,
    /// |judge − people's mean| as a share of the dimension's range (0 to 1), so that
    /// dimensions on different scales compare.
    pub gap: f64,
    /// Why the judge gave its score.
    pub rationale: String,
    /// What the judge saw.
    pub evidence: Vec<String>,
}

/// Labels that could not pair, or results left unlabelled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    /// `labels-without-result`, `results-without-labels`, `unknown-dimension`,
    /// `score-outside-dimension` or `duplicate-label`.
    pub kind: &'static str,
    /// How many.
    pub count: usize,
    /// Which (sessions, dimensions, or `session/annotator/dimension`), at most 20.
    pub names: Vec<String>,
    /// The warning in words.
    pub message: String,
}

/// What a calibration found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Calibration {
    /// The pack.
    pub rubric: Value,
    /// Labels read (lines or scores).
    pub labels: usize,
    /// The annotators, sorted.
    pub annotators: Vec<String>,
    /// Sessions with results.
    pub results: usize,
    /// Bootstrap resamples per interval.
    pub resamples: usize,
    /// The bootstrap's seed.
    pub seed: u64,
    /// Per judge: the results as graded first, then each judge of a panel.
    pub judges: Vec<JudgeCalibration>,
    /// Where the first judge disagrees most with the people, most first.
    pub disagreements: Vec<Disagreement>,
    /// What could not pair.
    pub warnings: Vec<Warning>,
}

/// How a dimension is scored, for calibration.
struct Scale {
    id: String,
    kind: &'static str,
    /// The categories (label, value), for a categorical dimension.
    categories: Vec<(String, f64)>,
    low: f64,
    high: f64,
    metric: Metric,
}

fn scales(pack: &CompiledPack) -> Vec<Scale> {
    let mut out: Vec<Scale> = pack
        .judged_dimensions()
        .map(|d| match &d.kind {
            DimensionKind::Categorical { categories } => Scale {
                id: d.id.clone(),
                kind: "categorical",
                categories: categories.clone(),
                low: categories.iter().map(|c| c.1).fold(f64::INFINITY, f64::min),
                high: categories
                    .iter()
                    .map(|c| c.1)
                    .fold(f64::NEG_INFINITY, f64::max),
                metric: Metric::Ordinal,
            },
            DimensionKind::Numeric { min } => Scale {
                id: d.id.clone(),
                kind: "numeric",
                categories: Vec::new(),
                low: *min,
                high: d.max,
                metric: Metric::Interval,
            },
            DimensionKind::Points => Scale {
                id: d.id.clone(),
                kind: "numeric",
                categories: Vec::new(),
                low: d.floor,
                high: d.max,
                metric: Metric::Interval,
            },
        })
        .collect();
    if let Some((id, _)) = &pack.aggregate {
        out.push(Scale {
            id: id.clone(),
            kind: "aggregate",
            categories: Vec::new(),
            low: 0.0,
            high: 1.0,
            metric: Metric::Interval,
        });
    }
    out
}

/// A person's score, checked against the dimension.
fn resolve(scale: &Scale, score: &LabelScore) -> Option<f64> {
    match (scale.categories.is_empty(), score) {
        (false, LabelScore::Number(v)) => scale.categories.iter().find(|c| c.1 == *v).map(|c| c.1),
        (false, LabelScore::Category(label)) => {
            scale.categories.iter().find(|c| c.0 == *label).map(|c| c.1)
        }
        (true, LabelScore::Number(v)) => (scale.low <= *v && *v <= scale.high).then_some(*v),
        (true, LabelScore::Category(_)) => None,
    }
}

fn describe(score: &LabelScore) -> String {
    match score {
        LabelScore::Number(v) => crate::entry::js_number(*v),
        LabelScore::Category(label) => format!("\"{label}\""),
    }
}

/// Names to show in a warning: at most this many.
const NAMES_SHOWN: usize = 20;

fn warning(kind: &'static str, names: Vec<String>, message: String) -> Option<Warning> {
    (!names.is_empty()).then(|| Warning {
        kind,
        count: names.len(),
        names: names.into_iter().take(NAMES_SHOWN).collect(),
        message,
    })
}

/// The labels as numbers: session → dimension → annotator → score, with what could not be used.
type Resolved = IndexMap<String, IndexMap<String, IndexMap<String, f64>>>;

/// Calibrates `judges` (the first is the results as graded) against `labels`.
pub fn calibrate(
    pack: &CompiledPack,
    judges: &[JudgeResults],
    labels: &[Label],
    options: &Options,
) -> Calibration {
    let scales = scales(pack);
    let mut warnings = Vec::new();
    let mut resolved: Resolved = IndexMap::new();
    let mut unknown: IndexMap<String, usize> = IndexMap::new();
    let mut outside = Vec::new();
    let mut duplicates = Vec::new();
    let mut annotators = IndexSet::new();
    for label in labels {
        annotators.insert(label.annotator.clone());
        for (dimension, score) in &label.scores {
            let Some(scale) = scales.iter().find(|s| s.id == *dimension) else {
                *unknown.entry(dimension.clone()).or_default() += 1;
                continue;
            };
            let Some(value) = resolve(scale, score) else {
                outside.push(format!(
                    "{}/{}/{dimension} = {}",
                    label.session_id,
                    label.annotator,
                    describe(score)
                ));
                continue;
            };
            let kept = resolved
                .entry(label.session_id.clone())
                .or_default()
                .entry(dimension.clone())
                .or_default();
            if kept.contains_key(&label.annotator) {
                duplicates.push(format!(
                    "{}/{}/{dimension} ({})",
                    label.session_id, label.annotator, label.origin
                ));
            } else {
                kept.insert(label.annotator.clone(), value);
            }
        }
    }
    let graded: IndexSet<&String> = judges.iter().flat_map(|j| j.sessions.keys()).collect();
    let orphans: Vec<String> = resolved
        .keys()
        .filter(|s| !graded.contains(s))
        .cloned()
        .collect();
    warnings.extend(warning(
        "labels-without-result",
        orphans,
        "sessions labelled that have no result: their labels pair with nothing".to_owned(),
    ));
    let unlabelled: Vec<String> = graded
        .iter()
        .filter(|s| resolved.get(s.as_str()).is_none_or(IndexMap::is_empty))
        .map(|s| (*s).clone())
        .collect();
    warnings.extend(warning(
        "results-without-labels",
        unlabelled,
        "results that no usable label scores: they are left out of the figures".to_owned(),
    ));
    let unknown_names: Vec<String> = unknown
        .iter()
        .flat_map(|(d, n)| std::iter::repeat_n(d.clone(), *n))
        .collect();
    if let Some(mut w) = warning(
        "unknown-dimension",
        unknown_names,
        format!(
            "scores of dimensions rubric `{}` does not judge: {}",
            pack.id,
            unknown
                .iter()
                .map(|(d, n)| format!("`{d}` ({n})"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ) {
        w.names = unknown.keys().take(NAMES_SHOWN).cloned().collect();
        warnings.push(w);
    }
    warnings.extend(warning(
        "score-outside-dimension",
        outside,
        "scores that are not one of the dimension's categories, or outside its range: left out"
            .to_owned(),
    ));
    warnings.extend(warning(
        "duplicate-label",
        duplicates,
        "a second score by the same annotator for the same session and dimension: the first is kept"
            .to_owned(),
    ));
    let mut annotators: Vec<String> = annotators.into_iter().collect();
    annotators.sort();

    let calibrations: Vec<JudgeCalibration> = judges
        .iter()
        .map(|judge| JudgeCalibration {
            judge: judge.judge.clone(),
            dimensions: scales
                .iter()
                .filter_map(|scale| dimension(scale, judge, &resolved, &annotators, options))
                .collect(),
        })
        .collect();
    let disagreements = judges
        .first()
        .map(|j| disagreements(&scales, j, &resolved, options.disagreements))
        .unwrap_or_default();
    Calibration {
        rubric: serde_json::json!({"id": pack.id, "version": pack.version, "digest": pack.digest}),
        labels: labels.len(),
        annotators,
        results: graded.len(),
        resamples: options.resamples,
        seed: options.seed,
        judges: calibrations,
        disagreements,
        warnings,
    }
}

/// A figure of pairs `(judge, human)`.
type PairFigure<'a> = dyn Fn(&[(f64, f64)]) -> Result<f64, Undefined> + Sync + 'a;

/// One session of a dimension: the judge's score and each annotator's (by position in the
/// sorted annotators).
struct Unit {
    judge: f64,
    humans: Vec<(usize, f64)>,
}

fn dimension(
    scale: &Scale,
    judge: &JudgeResults,
    resolved: &Resolved,
    annotators: &[String],
    options: &Options,
) -> Option<DimensionCalibration> {
    let units: Vec<Unit> = judge
        .sessions
        .iter()
        .filter_map(|(session, dims)| {
            let judged = dims.get(&scale.id)?;
            let humans = resolved.get(session)?.get(&scale.id)?;
            let humans: Vec<(usize, f64)> = humans
                .iter()
                .filter_map(|(a, v)| Some((annotators.iter().position(|x| x == a)?, *v)))
                .collect();
            (!humans.is_empty()).then_some(Unit {
                judge: judged.score,
                humans,
            })
        })
        .collect();
    // The aggregate is compared only when people scored it.
    if scale.kind == "aggregate" && units.is_empty() {
        return None;
    }
    let pairs_of = |drawn: &mut dyn Iterator<Item = &Unit>| -> Vec<(f64, f64)> {
        drawn
            .flat_map(|u| u.humans.iter().map(move |(_, h)| (u.judge, *h)))
            .collect()
    };
    let all: Vec<usize> = (0..units.len()).collect();
    let pairs = pairs_of(&mut all.iter().map(|&i| &units[i]));
    let position = |v: f64| scale.categories.iter().position(|c| c.1 == v);
    let categorical = |pairs: &[(f64, f64)]| -> Vec<(usize, usize)> {
        pairs
            .iter()
            .filter_map(|(j, h)| Some((position(*h)?, position(*j)?)))
            .collect()
    };
    let k = scale.categories.len();
    let interval = |figure: &PairFigure<'_>| {
        stats::bootstrap(units.len(), options.resamples, options.seed, &|drawn| {
            figure(&pairs_of(&mut drawn.iter().map(|&i| &units[i]))).ok()
        })
    };
    let coders = annotators.len();
    let rows = |drawn: &[usize], with_judge: bool| -> Vec<Vec<Option<f64>>> {
        drawn
            .iter()
            .map(|&i| {
                let u = &units[i];
                let mut row = vec![None; coders + usize::from(with_judge)];
                if with_judge {
                    row[0] = Some(u.judge);
                }
                for (a, v) in &u.humans {
                    row[a + usize::from(with_judge)] = Some(*v);
                }
                row
            })
            .collect()
    };
    let alpha_figure = |with_judge: bool| {
        let value = stats::alpha(&rows(&all, with_judge), scale.metric);
        Figure::of(value).with_interval(stats::bootstrap(
            units.len(),
            options.resamples,
            options.seed,
            &|drawn| stats::alpha(&rows(drawn, with_judge), scale.metric).ok(),
        ))
    };
    let mut out = DimensionCalibration {
        dimension: scale.id.clone(),
        kind: scale.kind,
        metric: scale.metric.name(),
        pairs: pairs.len(),
        sessions: units.len(),
        categorical: None,
        numeric: None,
        mae: stats::mean_absolute_difference(&pairs),
        bias: stats::mean_signed_difference(&pairs),
        alpha: alpha_figure(true),
        alpha_annotators: alpha_figure(false),
        points: pairs.clone(),
    };
    if k > 0 {
        let positions = categorical(&pairs);
        let kappa = |weights: Weights| {
            Figure::of(stats::cohen_kappa(&positions, k, weights)).with_interval(interval(
                &|p: &[(f64, f64)]| stats::cohen_kappa(&categorical(p), k, weights),
            ))
        };
        out.categorical = Some(CategoricalFigures {
            kappa: kappa(Weights::Unweighted),
            kappa_quadratic: kappa(Weights::Quadratic),
            confusion: Confusion {
                categories: scale.categories.iter().map(|c| c.0.clone()).collect(),
                matrix: stats::confusion(&positions, k),
            },
            exact: stats::agreement_within(&positions, 0),
            within_one: stats::agreement_within(&positions, 1),
        });
    } else {
        out.numeric = Some(NumericFigures {
            pearson: Figure::of(stats::pearson(&pairs)).with_interval(interval(&stats::pearson)),
            spearman: Figure::of(stats::spearman(&pairs)).with_interval(interval(&stats::spearman)),
        });
    }
    Some(out)
}

fn disagreements(
    scales: &[Scale],
    judge: &JudgeResults,
    resolved: &Resolved,
    most: usize,
) -> Vec<Disagreement> {
    let mut out = Vec::new();
    for (session, dims) in &judge.sessions {
        for scale in scales {
            let (Some(judged), Some(humans)) = (
                dims.get(&scale.id),
                resolved.get(session).and_then(|d| d.get(&scale.id)),
            ) else {
                continue;
            };
            if humans.is_empty() {
                continue;
            }
            let mean = humans.values().sum::<f64>() / humans.len() as f64;
            let range = scale.high - scale.low;
            let gap = if range > 0.0 {
                (judged.score - mean).abs() / range
            } else {
                0.0
            };
            if gap == 0.0 {
                continue;
            }
            out.push(Disagreement {
                session_id: session.clone(),
                dimension: scale.id.clone(),
                judge_score: judged.score,
                human_mean: mean,
                human_scores: humans
                    .iter()
                    .map(|(a, v)| HumanScore {
                        annotator: a.clone(),
                        score: *v,
                    })
                    .collect(),
                gap,
                rationale: judged.rationale.clone(),
                evidence: judged.evidence.clone(),
            });
        }
    }
    // Most first; ties in the order of the results and the pack's dimensions.
    out.sort_by(|a, b| b.gap.total_cmp(&a.gap));
    out.truncate(most);
    out
}

#[cfg(test)]
mod tests;
