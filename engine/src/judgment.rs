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

use indexmap::IndexMap;
use serde_json::{json, Map, Value};

use crate::pack::{CompiledPack, DimensionKind};

/// One judged dimension, after aggregating the chunks.
#[derive(Debug, Clone, PartialEq)]
pub struct DimensionJudgment {
    pub score: f64,
    pub evidence: Vec<String>,
    pub rationale: String,
    /// The score of each chunk, when there were several.
    pub chunk_scores: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Judgment {
    pub dimensions: IndexMap<String, DimensionJudgment>,
    pub chunks: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum JudgmentError {
    #[error("{origin}: the judgment is not JSON ({message}); it starts with `{start}`")]
    NotJson {
        origin: String,
        message: String,
        start: String,
    },
    #[error("{origin}: a judgment is an object of dimensions, or an array of them (one per chunk), not {found}")]
    WrongShape { origin: String, found: &'static str },
    #[error("{origin}: the judgment is invalid: {}", problems.join("; "))]
    Invalid {
        origin: String,
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
pub fn json_number(v: f64) -> Value {
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

/// The JSON in a judge's reply: the whole reply, or the first fenced ```json block in it.
pub fn extract_json(reply: &str) -> &str {
    let trimmed = reply.trim();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return trimmed;
    }
    for fence in ["```json", "```JSON", "```"] {
        if let Some(start) = trimmed.find(fence) {
            let body = &trimmed[start + fence.len()..];
            if let Some(end) = body.find("```") {
                return body[..end].trim();
            }
        }
    }
    trimmed
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
            },
        );
    }
    Judgment {
        dimensions,
        chunks: n,
    }
}
