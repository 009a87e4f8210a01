//! A grade taken apart into the terms that add up to it, so that a change of grade can be
//! put down to the rules that made it.
//!
//! A dimension's share of the total is `start + Σ rule points`, clamped to the dimension's
//! floor and cap (weighted packs then scale it by `weight / max`). The terms of a dimension
//! are its start, each rule's points, and the clamp (what the floor or cap took or gave);
//! where a dimension was not scored by rules (an empty session, a judged dimension, a result
//! recorded without `--explain`) its whole share is one `score` term. Every term is in
//! percentage points of the pack's maximum, so the terms of a grade add up to its percent.

use std::collections::HashMap;

use serde::Serialize;

use crate::eval::RulePoints;
use crate::pack::{Band, CompiledPack};
use crate::result::{GradeResult, RubricRef};

/// What a term of a grade stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TermKind {
    /// The dimension's starting score.
    Start,
    /// The points one rule gave or took.
    Rule,
    /// What the dimension's floor or cap took away or gave back.
    Clamp,
    /// Start and clamp together, for results whose pack is not at hand (its start unknown).
    Base,
    /// The dimension's whole share, where no rule traces exist for it.
    Score,
}

impl TermKind {
    /// The name a non-rule term goes by in place of a rule id.
    pub fn label(self) -> &'static str {
        match self {
            TermKind::Start => "(start)",
            TermKind::Rule => "",
            TermKind::Clamp => "(clamp)",
            TermKind::Base => "(start+clamp)",
            TermKind::Score => "(score)",
        }
    }
}

/// One term: a rule of a dimension, or one of the dimension's own terms.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct TermKey {
    /// The term's dimension.
    pub dimension: String,
    /// The rule id, or the term's label (`(start)`, `(clamp)`…).
    pub rule: String,
    /// What the term is.
    pub kind: TermKind,
}

/// A dimension as the layout knows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DimensionInfo {
    /// The dimension's id.
    pub id: String,
    /// The dimension's name.
    pub name: String,
    /// The dimension's maximum.
    pub max: f64,
    /// The starting score, when the pack is known.
    #[serde(skip)]
    pub start: Option<f64>,
}

/// What one side's grades are made of: its pack's dimensions and every term a grade of it
/// can have. Built from a compiled pack, or learnt from recorded results.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The pack of the grades.
    pub rubric: RubricRef,
    /// The pack's letter bands, highest first.
    pub bands: Vec<Band>,
    /// The pack's dimensions.
    pub dimensions: Vec<DimensionInfo>,
    /// Every term a grade can have.
    pub terms: Vec<TermKey>,
    index: HashMap<TermKey, u32>,
    dimension_index: HashMap<String, usize>,
    /// Per dimension (as in `dimensions`), the indices of its terms: [`Layout::score`] finds
    /// a term among its dimension's few by comparing strings, rather than building and
    /// hashing a key for each term of each session (a tenth of a compare's time).
    terms_of: Vec<Vec<u32>>,
}

/// A session's grade, taken apart.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// The graded session.
    pub session_id: String,
    /// `totalScore / maxScore × 100`, unrounded: the sum of the terms.
    pub percent: f64,
    /// The result's own `percent` (rounded to two decimals), which its letter is read from.
    pub reported_percent: f64,
    /// The result's letter.
    pub grade: Option<String>,
    /// Whether any dimension applied (`maxScore` above 0): a session with nothing to grade
    /// has no score to compare, and its 0% would pull every mean down.
    pub graded: bool,
    /// Per dimension of the layout: the score as a percentage of the dimension's maximum;
    /// `None` for a dimension that did not apply (`notApplicable`, or no maximum).
    pub dimensions: Vec<Option<f64>>,
    /// The terms that are not zero: (index into the layout's terms, percentage points).
    pub terms: Vec<(u32, f64)>,
}

/// A result that does not fit the layout it is read with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("session `{session}`: {what} is not in rubric `{rubric}`")]
pub struct LayoutMismatch {
    /// The session of the result.
    pub session: String,
    /// The layout's pack.
    pub rubric: String,
    /// What of the result the layout lacks.
    pub what: String,
}

impl Layout {
    /// The layout of a compiled pack: every dimension with its start, rules and clamp.
    pub fn of_pack(pack: &CompiledPack) -> Layout {
        let mut layout = Layout::empty(RubricRef {
            id: pack.id.clone(),
            version: pack.version.clone(),
            digest: pack.digest.clone(),
        });
        layout.bands = pack.bands.clone();
        for d in &pack.dimensions {
            layout.add_dimension(&d.id, &d.name, d.max, Some(d.start));
            if !d.kind.is_judged() {
                layout.add_term(&d.id, TermKind::Start, "");
                for r in &d.rules {
                    layout.add_term(&d.id, TermKind::Rule, &r.id);
                }
                layout.add_term(&d.id, TermKind::Clamp, "");
            }
            layout.add_term(&d.id, TermKind::Score, "");
        }
        layout
    }

    /// A layout that knows nothing yet, to [`Layout::learn`] from results.
    pub fn empty(rubric: RubricRef) -> Layout {
        Layout {
            rubric,
            bands: Vec::new(),
            dimensions: Vec::new(),
            terms: Vec::new(),
            index: HashMap::new(),
            dimension_index: HashMap::new(),
            terms_of: Vec::new(),
        }
    }

    /// Adds the dimensions and rules of a result that the layout does not know yet.
    pub fn learn(&mut self, result: &GradeResult) {
        for (id, d) in &result.dimensions {
            if !self.dimension_index.contains_key(id) {
                self.add_dimension(id, id, d.max.0, None);
            }
            match result.explain.as_ref().and_then(|e| e.get(id)) {
                Some(traces) => {
                    for t in traces {
                        self.add_term(id, TermKind::Rule, &t.rule);
                    }
                    let start_known = self.dimension(id).is_some_and(|d| d.start.is_some());
                    if start_known {
                        self.add_term(id, TermKind::Start, "");
                        self.add_term(id, TermKind::Clamp, "");
                    } else {
                        self.add_term(id, TermKind::Base, "");
                    }
                }
                None => {
                    self.add_term(id, TermKind::Score, "");
                }
            }
        }
    }

    fn add_dimension(&mut self, id: &str, name: &str, max: f64, start: Option<f64>) {
        self.dimension_index
            .insert(id.to_owned(), self.dimensions.len());
        self.terms_of.push(Vec::new());
        self.dimensions.push(DimensionInfo {
            id: id.to_owned(),
            name: name.to_owned(),
            max,
            start,
        });
    }

    fn add_term(&mut self, dimension: &str, kind: TermKind, rule: &str) {
        let key = key(dimension, kind, rule);
        if !self.index.contains_key(&key) {
            let i = self.terms.len() as u32;
            self.index.insert(key.clone(), i);
            self.terms.push(key);
            if let Some(&d) = self.dimension_index.get(dimension) {
                self.terms_of[d].push(i);
            }
        }
    }

    /// The dimension `id` of the layout.
    pub fn dimension(&self, id: &str) -> Option<&DimensionInfo> {
        self.dimension_index.get(id).map(|&i| &self.dimensions[i])
    }

    /// The index of a term in [`Layout::terms`].
    pub fn term_index(&self, key: &TermKey) -> Option<u32> {
        self.index.get(key).copied()
    }

    /// Takes a result apart into this layout's terms, its rules' points read from its
    /// `explain`.
    pub fn score(&self, result: &GradeResult) -> Result<Scored, LayoutMismatch> {
        self.take_apart(result, Rules::Explain)
    }

    /// Takes apart a result graded by `pack` (whose dimensions it has, in order) with its
    /// rules' `points` recorded beside it.
    pub(crate) fn score_points(
        &self,
        result: &GradeResult,
        pack: &CompiledPack,
        points: &RulePoints,
    ) -> Result<Scored, LayoutMismatch> {
        self.take_apart(result, Rules::Points(pack, points))
    }

    fn take_apart(&self, result: &GradeResult, rules: Rules<'_>) -> Result<Scored, LayoutMismatch> {
        let mismatch = |what: String| LayoutMismatch {
            session: result.session_id.clone(),
            rubric: self.rubric.id.clone(),
            what,
        };
        let max_score = result.max_score.0;
        let scale = if max_score > 0.0 {
            100.0 / max_score
        } else {
            0.0
        };
        let mut terms: Vec<(u32, f64)> = Vec::new();
        // The term (`rule` for a rule, else the kind's label) of dimension `at` (`id`),
        // looked for first at `hint` among the dimension's terms, where a layout of the pack
        // has it.
        let mut push = |id: &str,
                        at: usize,
                        (kind, rule, hint): (TermKind, &str, usize),
                        value: f64|
         -> Result<(), LayoutMismatch> {
            let label = if kind == TermKind::Rule {
                rule
            } else {
                kind.label()
            };
            let is_it = |i: u32| {
                let term = &self.terms[i as usize];
                term.kind == kind && term.rule == label
            };
            let of_dimension = &self.terms_of[at];
            let found = match of_dimension.get(hint) {
                Some(&i) if is_it(i) => Some(i),
                _ => of_dimension.iter().copied().find(|&i| is_it(i)),
            };
            let Some(i) = found else {
                return Err(mismatch(if kind == TermKind::Rule {
                    format!("rule `{rule}` of dimension `{id}`")
                } else {
                    format!("the {label} of dimension `{id}`")
                }));
            };
            if value != 0.0 {
                terms.push((i, value * scale));
            }
            Ok(())
        };
        let mut dimensions = vec![None; self.dimensions.len()];
        for (place, (id, d)) in result.dimensions.iter().enumerate() {
            let Some(&at) = self.dimension_index.get(id) else {
                return Err(mismatch(format!("dimension `{id}`")));
            };
            let info = &self.dimensions[at];
            // A dimension that did not apply is left out of the total, so out of its terms
            // and of the dimension's figures too.
            if d.not_applicable {
                continue;
            }
            if d.max.0 > 0.0 {
                dimensions[at] = Some(d.score.0 / d.max.0 * 100.0);
            }
            // A weighted pack adds `weight × normalized`; a rule's points count `weight / max`.
            let (share, factor) = match (d.weight, d.normalized) {
                (Some(w), Some(norm)) => (w * norm, if d.max.0 > 0.0 { w / d.max.0 } else { 0.0 }),
                _ => (d.score.0, 1.0),
            };
            // The sum of the rules' points and how many rules there were, if they ran.
            let ruled = match rules {
                Rules::Explain => match result.explain.as_ref().and_then(|e| e.get(id)) {
                    Some(traces) => {
                        let mut ruled = 0.0;
                        for (r, t) in traces.iter().enumerate() {
                            ruled += t.points.0;
                            let term = (TermKind::Rule, t.rule.as_str(), r + 1);
                            push(id, at, term, factor * t.points.0)?;
                        }
                        Some((ruled, traces.len()))
                    }
                    None => None,
                },
                Rules::Points(pack, points) => {
                    let dimension = pack.dimensions.get(place).filter(|p| p.id == *id);
                    match dimension.and_then(|p| Some((p, points.of(place, p.rules.len())?))) {
                        Some((dimension, points)) => {
                            let mut ruled = 0.0;
                            for (r, (rule, &p)) in dimension.rules.iter().zip(points).enumerate() {
                                ruled += p;
                                push(id, at, (TermKind::Rule, &rule.id, r + 1), factor * p)?;
                            }
                            Some((ruled, points.len()))
                        }
                        None => None,
                    }
                }
            };
            match ruled {
                Some((ruled, n)) => match info.start {
                    Some(start) => {
                        push(id, at, (TermKind::Start, "", 0), factor * start)?;
                        let clamp = (TermKind::Clamp, "", n + 1);
                        push(id, at, clamp, share - factor * (start + ruled))?;
                    }
                    None => push(id, at, (TermKind::Base, "", n), share - factor * ruled)?,
                },
                None => {
                    let last = self.terms_of[at].len().saturating_sub(1);
                    push(id, at, (TermKind::Score, "", last), share)?;
                }
            }
        }
        Ok(Scored {
            session_id: result.session_id.clone(),
            percent: result.total_score.0 * scale,
            reported_percent: result.percent.map_or(0.0, |p| p.0),
            // Results that carry no letter (CLEO's grader writes none) get their pack's.
            grade: result.grade.clone().or_else(|| {
                result
                    .graded_percent()
                    .and_then(|p| crate::pack::band_of(&self.bands, p))
                    .map(str::to_owned)
            }),
            graded: max_score > 0.0,
            dimensions,
            terms,
        })
    }
}

/// Where the points of a result's rules are read from.
#[derive(Clone, Copy)]
enum Rules<'r> {
    /// Its `explain` (a recorded result, or one graded with `--explain`).
    Explain,
    /// What grading it with the pack recorded beside it.
    Points(&'r CompiledPack, &'r RulePoints),
}

fn key(dimension: &str, kind: TermKind, rule: &str) -> TermKey {
    TermKey {
        dimension: dimension.to_owned(),
        rule: if kind == TermKind::Rule {
            rule.to_owned()
        } else {
            kind.label().to_owned()
        },
        kind,
    }
}
