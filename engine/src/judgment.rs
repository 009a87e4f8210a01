//! Judgments: what a judge (an LLM, or a person) says about a pack's judged dimensions.
//!
//! The format is the scorer output of the session-quality design: per dimension
//! `{score, evidence, rationale}`. A judgment is one such object, or an array of them, one
//! per chunk of a long session, aggregated as the design says: numeric dimensions take the
//! mean over the chunks, categorical ones the last chunk's (which has seen the end).
//!
//! Every judgment is checked against a JSON Schema derived from the pack's dimensions
//! (`schemas/judgment.schema.json` is langfuse-v1's), and every violation is reported with
//! its JSON pointer and the dimension's name. Nothing is ever defaulted.

mod reply;

use indexmap::IndexMap;
use serde_json::{json, Map, Value};

use crate::pack::{CompiledPack, DimensionKind, PanelCombine};
pub use reply::{find_judgment_json, ReplyError};

/// One judged dimension, after aggregating the chunks.
#[derive(Debug, Clone, PartialEq)]
pub struct DimensionJudgment {
    /// The score, averaged over chunks and runs.
    pub score: f64,
    /// The judge's evidence, over all chunks.
    pub evidence: Vec<String>,
    /// Why the judge gave the score.
    pub rationale: String,
    /// The score of each chunk, when there were several.
    pub chunk_scores: Vec<f64>,
    /// The score of each run, when the judge was asked several times (`--judge-runs`).
    pub run_scores: Vec<f64>,
    /// Each judge's own judgment of the dimension, in the order the judges were given, when
    /// a panel judged the session (`--judge` more than once); empty otherwise.
    pub panel: Vec<PanelScore>,
}

/// One judge of a panel on one dimension: what it said, before the panel's scores combined.
#[derive(Debug, Clone, PartialEq)]
pub struct PanelScore {
    /// The judge, as named in results and the cache (`openai:MODEL`, a command).
    pub judge: String,
    /// Its score (the mean or median of its runs, as without a panel).
    pub score: f64,
    /// Its evidence.
    pub evidence: Vec<String>,
    /// Its rationale.
    pub rationale: String,
    /// Its score of each run, when it was asked several times (`--judge-runs`).
    pub run_scores: Vec<f64>,
}

/// A judge's scores for a session's judged dimensions.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgment {
    /// Dimension id → its judgment, in the pack's order.
    pub dimensions: IndexMap<String, DimensionJudgment>,
    /// How many chunks of the session were judged.
    pub chunks: usize,
    /// How many times the judge was asked for the whole session.
    pub runs: usize,
    /// What asking a built-in judge cost, when one was asked.
    pub usage: Option<JudgeUsage>,
    /// The panel that judged the session, when several judges did: how their scores
    /// combined and what each cost.
    pub panel: Option<PanelUsage>,
}

/// A panel of judges that judged a session: `panel` in a result.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PanelUsage {
    /// How the judges' scores of a dimension made its score.
    pub combine: PanelCombine,
    /// Each judge, in the order given, with what asking it cost (a command reports no
    /// tokens).
    pub judges: Vec<JudgeUsage>,
}

/// What asking a model for a session's judgment cost: `judge` in a result.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JudgeUsage {
    /// The judge as given: `anthropic:MODEL`, `openai:MODEL`, or `cmd:COMMAND`.
    pub model: String,
    /// Times the judge was asked for the whole session (`--judge-runs`).
    pub runs: usize,
    /// Replies read: chunks × runs.
    pub replies: usize,
    /// Prompt tokens the model reported for the replies asked for now (not those cached).
    pub input_tokens: u64,
    /// Completion tokens the model reported for the replies asked for now.
    pub output_tokens: u64,
    /// Replies read from the judgment cache instead of asked for.
    pub cached: usize,
}

/// How far a judged dimension's score moved over repeated runs.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Spread {
    /// The lowest score of a run.
    pub min: f64,
    /// The highest score of a run.
    pub max: f64,
    /// Population standard deviation over the runs (divided by the number of runs).
    pub sd: f64,
}

impl Spread {
    /// The spread of some scores; `None` for fewer than two.
    pub fn of(scores: &[f64]) -> Option<Spread> {
        if scores.len() < 2 {
            return None;
        }
        let n = scores.len() as f64;
        let mean = scores.iter().sum::<f64>() / n;
        let variance = scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n;
        Some(Spread {
            min: scores.iter().copied().fold(f64::INFINITY, f64::min),
            max: scores.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            sd: variance.sqrt(),
        })
    }
}

impl DimensionJudgment {
    /// How far the scores that made this one spread: the panel's judges' when a panel
    /// judged, else the runs' when there were several.
    pub fn spread(&self) -> Option<Spread> {
        if self.panel.is_empty() {
            Spread::of(&self.run_scores)
        } else {
            Spread::of(&self.panel.iter().map(|p| p.score).collect::<Vec<_>>())
        }
    }
}

impl DimensionJudgment {
    /// A combined score, with this judgment's words (evidence, rationale, chunk scores)
    /// beside it, and the scores it was combined from.
    fn speaking_for(&self, score: f64, run_scores: Vec<f64>, panel: Vec<PanelScore>) -> Self {
        DimensionJudgment {
            score,
            evidence: self.evidence.clone(),
            rationale: self.rationale.clone(),
            chunk_scores: self.chunk_scores.clone(),
            run_scores,
            panel,
        }
    }
}

impl PanelScore {
    /// The spread of this judge's runs, when it was asked several times.
    pub fn spread(&self) -> Option<Spread> {
        Spread::of(&self.run_scores)
    }
}

/// Several scores of one dimension made into one, as `how` says; a categorical dimension
/// always lands on one of the scores given (a mean of categories is none of them, so
/// [`PanelCombine::Mean`] takes the median category). `scores` must not be empty.
pub fn combine_scores(scores: &[f64], kind: &DimensionKind, how: PanelCombine) -> f64 {
    let mut sorted = scores.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n == 0 {
        return 0.0;
    }
    let categorical = matches!(kind, DimensionKind::Categorical { .. });
    match how {
        PanelCombine::Min => sorted[0],
        PanelCombine::Max => sorted[n - 1],
        PanelCombine::Mean if !categorical => sorted.iter().sum::<f64>() / n as f64,
        // The lower of the two middle ones for an even count, so a tie never rounds up.
        PanelCombine::Mean | PanelCombine::Median if categorical || n % 2 == 1 => {
            sorted[(n - 1) / 2]
        }
        PanelCombine::Mean | PanelCombine::Median => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The index of the first score nearest `target`: whose evidence and rationale speak for
/// a combined score.
fn nearest(scores: &[f64], target: f64) -> usize {
    scores
        .iter()
        .enumerate()
        .min_by(|a, b| (a.1 - target).abs().total_cmp(&(b.1 - target).abs()))
        .map_or(0, |(i, _)| i)
}

/// One judgment from a panel's judgments of the same session, `judges` in the order given
/// (each already combined over its runs): each judged dimension's score is the judges'
/// scores combined as the pack's `panel` (or `how`) says ([`combine_scores`]); evidence,
/// rationale and chunk scores come from the first judge whose score is nearest the result,
/// and every judge's own judgment is kept in [`DimensionJudgment::panel`].
///
/// What each judge cost comes from its judgment's `usage`; a judge without one (a command)
/// is listed with its runs and replies and no tokens.
pub fn combine_panel(
    judges: Vec<(String, Judgment)>,
    how: PanelCombine,
    pack: &CompiledPack,
) -> Judgment {
    let mut dimensions = IndexMap::new();
    for d in pack.judged_dimensions() {
        let members: Vec<PanelScore> = judges
            .iter()
            .filter_map(|(name, j)| {
                j.dimensions.get(&d.id).map(|dj| PanelScore {
                    judge: name.clone(),
                    score: dj.score,
                    evidence: dj.evidence.clone(),
                    rationale: dj.rationale.clone(),
                    run_scores: dj.run_scores.clone(),
                })
            })
            .collect();
        let scores: Vec<f64> = members.iter().map(|m| m.score).collect();
        if scores.is_empty() {
            continue;
        }
        let score = combine_scores(&scores, &d.kind, how);
        let at = nearest(&scores, score);
        let Some(base) = judges
            .iter()
            .filter(|(_, j)| j.dimensions.contains_key(&d.id))
            .nth(at)
            .and_then(|(_, j)| j.dimensions.get(&d.id))
        else {
            continue;
        };
        dimensions.insert(d.id.clone(), base.speaking_for(score, Vec::new(), members));
    }
    let usage = judges
        .iter()
        .map(|(name, j)| {
            j.usage.clone().unwrap_or_else(|| JudgeUsage {
                model: name.clone(),
                runs: j.runs,
                replies: j.runs * j.chunks,
                ..JudgeUsage::default()
            })
        })
        .collect();
    Judgment {
        dimensions,
        chunks: judges.first().map_or(0, |(_, j)| j.chunks),
        runs: judges.first().map_or(0, |(_, j)| j.runs),
        usage: None,
        panel: Some(PanelUsage {
            combine: how,
            judges: usage,
        }),
    }
}

/// One judgment from several runs of the judge over the same session: a numeric
/// dimension takes the mean of the runs, a categorical one the median category (the lower
/// of the two middle ones for an even number of runs, so a tie never rounds up). Evidence,
/// rationale and chunk scores come from the first run whose score is nearest the result.
///
/// `runs` must not be empty; one run is returned as it is.
pub fn combine_runs(mut runs: Vec<Judgment>, pack: &CompiledPack) -> Judgment {
    if runs.len() <= 1 {
        return runs.pop().unwrap_or(Judgment {
            dimensions: IndexMap::new(),
            chunks: 0,
            runs: 0,
            usage: None,
            panel: None,
        });
    }
    let n = runs.len();
    let mut dimensions = IndexMap::new();
    for d in pack.judged_dimensions() {
        let scores: Vec<f64> = runs
            .iter()
            .map(|r| r.dimensions.get(&d.id).map_or(0.0, |j| j.score))
            .collect();
        let score = combine_scores(&scores, &d.kind, PanelCombine::Mean);
        let Some(base) = runs[nearest(&scores, score)].dimensions.get(&d.id) else {
            continue;
        };
        let combined = base.speaking_for(score, scores, Vec::new());
        dimensions.insert(d.id.clone(), combined);
    }
    Judgment {
        dimensions,
        chunks: runs[0].chunks,
        runs: n,
        usage: None,
        panel: None,
    }
}

/// Why a judgment cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JudgmentError {
    /// The judgment is not JSON.
    #[error("{origin}: the judgment is not JSON ({message}); it starts with `{start}`")]
    NotJson {
        /// Where the judgment came from (a file, `stdin`, a judge).
        origin: String,
        /// What the JSON parser said.
        message: String,
        /// The judgment's first characters.
        start: String,
    },
    /// The judgment is JSON of the wrong shape.
    #[error("{origin}: a judgment is an object of dimensions, or an array of them (one per chunk), not {found}")]
    WrongShape {
        /// Where the judgment came from.
        origin: String,
        /// What was found instead (`a number`…).
        found: &'static str,
    },
    /// The judgment does not fit the pack's judged dimensions.
    #[error("{origin}: the judgment is invalid: {}", problems.join("; "))]
    Invalid {
        /// Where the judgment came from.
        origin: String,
        /// Every problem found.
        problems: Vec<String>,
    },
}

/// The schema one judgment object (one chunk) must satisfy for this pack.
pub fn judgment_schema(pack: &CompiledPack) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for d in pack.judged_dimensions() {
        let score = match &d.kind {
            DimensionKind::Categorical { categories } => json!({
                "description": format!(
                    "one of {}",
                    categories.iter().map(|(l, v)| format!("{} ({l})", crate::entry::js_number(*v))).collect::<Vec<_>>().join(", ")
                ),
                "enum": categories.iter().map(|(_, v)| json_number(*v)).collect::<Vec<_>>(),
            }),
            _ => json!({
                "type": "number",
                "minimum": json_number(d.start),
                "maximum": json_number(d.max),
            }),
        };
        let mut description = d.name.clone();
        if !d.description.is_empty() {
            description = format!("{description}: {}", d.description.trim());
        }
        properties.insert(
            d.id.clone(),
            json!({
                "type": "object",
                "description": description,
                "required": ["score", "evidence", "rationale"],
                "additionalProperties": false,
                "properties": {
                    "score": score,
                    "evidence": { "type": "array", "items": { "type": "string" } },
                    "rationale": { "type": "string" },
                },
            }),
        );
        required.push(Value::String(d.id.clone()));
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": format!("Judgment for rubric pack `{}`", pack.id),
        "description": "The judge's scores of one session (or one chunk of it): per dimension its score, the evidence seen, and a short rationale.",
        "type": "object",
        "required": required,
        "additionalProperties": false,
        "properties": properties,
    })
}

/// Whole numbers as JSON integers, so `enum: [0, 1, 2, 3]` reads as written.
pub(crate) fn json_number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}

/// The first `n` characters of a text, on one line, to quote in an error.
pub fn quote_start(text: &str, n: usize) -> String {
    let flat: String = text
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() > n {
        format!("{}…", flat.chars().take(n).collect::<String>())
    } else {
        flat
    }
}

/// Parses, checks and aggregates a judgment. `origin` names where it came from in messages.
pub fn parse_judgment(
    text: &str,
    origin: &str,
    pack: &CompiledPack,
) -> Result<Judgment, JudgmentError> {
    let value: Value = serde_json::from_str(text).map_err(|e| JudgmentError::NotJson {
        origin: origin.to_owned(),
        message: crate::entry::lowercase_first(&e.to_string()),
        start: quote_start(text, 80),
    })?;
    // serde_json keeps the last of two equal keys: a judgment scoring a dimension twice
    // would be graded on one of its answers in silence.
    if let Err(e) = duplicate_keys(text) {
        return Err(JudgmentError::Invalid {
            origin: origin.to_owned(),
            problems: vec![e.to_string()],
        });
    }
    let chunks: Vec<&Value> = match &value {
        Value::Array(items) if !items.is_empty() => items.iter().collect(),
        Value::Array(_) => {
            return Err(JudgmentError::WrongShape {
                origin: origin.to_owned(),
                found: "an empty array",
            })
        }
        Value::Object(_) => vec![&value],
        Value::String(_) => {
            return Err(JudgmentError::WrongShape {
                origin: origin.to_owned(),
                found: "a string",
            })
        }
        Value::Number(_) => {
            return Err(JudgmentError::WrongShape {
                origin: origin.to_owned(),
                found: "a number",
            })
        }
        Value::Bool(_) => {
            return Err(JudgmentError::WrongShape {
                origin: origin.to_owned(),
                found: "a boolean",
            })
        }
        Value::Null => {
            return Err(JudgmentError::WrongShape {
                origin: origin.to_owned(),
                found: "null",
            })
        }
    };
    check(&chunks, value.is_array(), origin, pack)?;
    Ok(aggregate(&chunks, pack))
}

fn check(
    chunks: &[&Value],
    is_array: bool,
    origin: &str,
    pack: &CompiledPack,
) -> Result<(), JudgmentError> {
    let schema = judgment_schema(pack);
    let validator = jsonschema::validator_for(&schema).map_err(|e| JudgmentError::Invalid {
        origin: origin.to_owned(),
        problems: vec![format!("the pack's judgment schema is broken: {e}")],
    })?;
    let mut problems = Vec::new();
    for (i, chunk) in chunks.iter().enumerate() {
        let prefix = if is_array {
            format!("/{i}")
        } else {
            String::new()
        };
        for error in validator.iter_errors(chunk) {
            let pointer = error.instance_path.to_string();
            let dimension =
                pointer
                    .split('/')
                    .nth(1)
                    .map(str::to_owned)
                    .or_else(|| match &error.kind {
                        jsonschema::error::ValidationErrorKind::Required { property } => {
                            property.as_str().map(str::to_owned)
                        }
                        jsonschema::error::ValidationErrorKind::AdditionalProperties {
                            unexpected,
                        } => unexpected.first().cloned(),
                        _ => None,
                    });
            let message = match &error.kind {
                jsonschema::error::ValidationErrorKind::Required { property } => {
                    format!("{property} is missing")
                }
                jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                    format!(
                        "{} {} not a dimension of rubric `{}`",
                        unexpected
                            .iter()
                            .map(|u| format!("`{u}`"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        if unexpected.len() == 1 { "is" } else { "are" },
                        pack.id
                    )
                }
                _ => crate::entry::lowercase_first(&error.to_string()),
            };
            let at = format!("{prefix}{pointer}");
            let at = if at.is_empty() { "/".to_owned() } else { at };
            problems.push(match dimension {
                Some(d) => format!("`{at}`: {message} (dimension `{d}`)"),
                None => format!("`{at}`: {message}"),
            });
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(JudgmentError::Invalid {
            origin: origin.to_owned(),
            problems,
        })
    }
}

fn aggregate(chunks: &[&Value], pack: &CompiledPack) -> Judgment {
    let n = chunks.len();
    let mut dimensions = IndexMap::new();
    for d in pack.judged_dimensions() {
        let scores: Vec<f64> = chunks
            .iter()
            .map(|c| c[&d.id]["score"].as_f64().unwrap_or_default())
            .collect();
        let last = chunks[n - 1];
        let evidence: Vec<String> = chunks
            .iter()
            .flat_map(|c| c[&d.id]["evidence"].as_array().cloned().unwrap_or_default())
            .filter_map(|e| e.as_str().map(str::to_owned))
            .collect();
        let (score, rationale) = match (&d.kind, n) {
            (_, 1) => (
                scores[0],
                last[&d.id]["rationale"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ),
            (DimensionKind::Categorical { .. }, _) => (
                scores[n - 1],
                last[&d.id]["rationale"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ),
            _ => (
                scores.iter().sum::<f64>() / n as f64,
                format!("Average across {n} chunks"),
            ),
        };
        dimensions.insert(
            d.id.clone(),
            DimensionJudgment {
                score,
                evidence,
                rationale,
                chunk_scores: if n > 1 { scores } else { Vec::new() },
                run_scores: Vec::new(),
                panel: Vec::new(),
            },
        );
    }
    Judgment {
        dimensions,
        chunks: n,
        runs: 1,
        usage: None,
        panel: None,
    }
}

/// Checks a JSON text for an object with the same key twice; the error names the key and
/// where it is (`/0/goal_achievement`).
pub(crate) fn duplicate_keys(text: &str) -> Result<(), serde_json::Error> {
    use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

    struct Walk(String);

    impl<'de> DeserializeSeed<'de> for Walk {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Walk {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut i = 0;
            while seq
                .next_element_seed(Walk(format!("{}/{i}", self.0)))?
                .is_some()
            {
                i += 1;
            }
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                let at = format!("{}/{}", self.0, key.replace('~', "~0").replace('/', "~1"));
                if !seen.insert(key.clone()) {
                    return Err(serde::de::Error::custom(format!(
                        "the key `{key}` appears twice in the object at `{}` (which one counts would be a guess)",
                        if self.0.is_empty() { "/" } else { &self.0 }
                    )));
                }
                map.next_value_seed(Walk(at))?;
            }
            Ok(())
        }
    }

    let mut de = serde_json::Deserializer::from_str(text);
    Walk(String::new()).deserialize(&mut de)?;
    de.end()
}

#[cfg(test)]
mod tests;
