//! Langfuse: score-config bodies for a weighted pack, score bodies for a graded session,
//! `grade push` and `--push langfuse`, which send score bodies to a Langfuse server, and
//! `--source langfuse:session/ID`, which reads a session from one.
//!
//! Bodies follow Langfuse's public API (`POST /api/public/score-configs`,
//! `POST /api/public/scores`) and carry the fields the Python SDK sends for a score; the
//! tests check them against Langfuse's own OpenAPI schemas.

pub mod fetch;
pub mod push;
pub mod server;

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

use grade_engine::judgment::json_number;
use grade_engine::pack::DimensionKind;
use grade_engine::{CompiledPack, GradeResult, Session};
use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::args::PushArgs;
use crate::error::CliError;
use server::Server;

/// A body for `POST /api/public/score-configs`, keys in the order of Langfuse's docs.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScoreConfig {
    name: String,
    data_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    categories: Option<Vec<Category>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_value: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_value: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
}

#[derive(Debug, Serialize)]
struct Category {
    label: String,
    value: Value,
}

/// A body for `POST /api/public/scores`: the fields the Python SDK's `create_score` sends,
/// in its order, those without a value left out as it leaves them out. `source` is not
/// sent (the server then records `API`, as for the SDK's scores).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScoreBody {
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    name: String,
    value: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    comment: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    environment: Option<String>,
    data_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    config_id: Option<String>,
    /// With the id, what makes a re-sent score update the first one instead of adding
    /// another: the session's start, the same on every run.
    timestamp: String,
    metadata: ScoreMetadata,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ScoreMetadata {
    rubric: String,
    rubric_version: String,
    rubric_digest: String,
    evidence: Vec<String>,
}

/// The score-config bodies of a weighted pack: one per dimension, and the aggregate.
pub fn score_configs(pack: &CompiledPack) -> Result<Vec<ScoreConfig>, CliError> {
    if pack.scoring != grade_engine::pack::Scoring::Weighted {
        return Err(CliError::Usage(format!(
            "rubric `{}` is not a weighted pack; Langfuse score configs describe weighted dimensions (like `langfuse-v1`)",
            pack.id
        )));
    }
    let described = |text: &str| (!text.trim().is_empty()).then(|| text.trim().to_owned());
    let mut out = Vec::new();
    for d in &pack.dimensions {
        out.push(match &d.kind {
            DimensionKind::Categorical { categories } => ScoreConfig {
                name: d.id.clone(),
                data_type: "CATEGORICAL",
                categories: Some(
                    categories
                        .iter()
                        .map(|(label, value)| Category {
                            label: label.clone(),
                            value: json_number(*value),
                        })
                        .collect(),
                ),
                min_value: None,
                max_value: None,
                description: described(&d.description),
            },
            _ => ScoreConfig {
                name: d.id.clone(),
                data_type: "NUMERIC",
                categories: None,
                min_value: Some(json_number(d.floor)),
                max_value: Some(json_number(d.max)),
                description: described(&d.description),
            },
        });
    }
    if let Some((id, description)) = &pack.aggregate {
        out.push(ScoreConfig {
            name: id.clone(),
            data_type: "NUMERIC",
            categories: None,
            min_value: Some(json_number(0.0)),
            max_value: Some(json_number(pack.max_score())),
            description: described(description),
        });
    }
    Ok(out)
}

/// A stable id for a score: the same session, rubric text and score name give the same id,
/// so a re-run overwrites its scores in Langfuse instead of adding new ones.
pub fn score_id(session: &str, digest: &str, name: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [session, digest, name] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    let hex: String = hasher
        .finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Reads `{"score name": "config id"}`.
pub fn read_config_ids(path: &Path) -> Result<HashMap<String, String>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Io {
        path: path.to_owned(),
        source,
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        CliError::Usage(format!("config ids `{}` are not JSON: {e}", path.display()))
    })?;
    let Value::Object(map) = value else {
        return Err(CliError::Usage(format!(
            "config ids `{}` must be an object mapping score names to config ids",
            path.display()
        )));
    };
    map.into_iter()
        .map(|(k, v)| match v {
            Value::String(id) => Ok((k, id)),
            other => Err(CliError::Usage(format!(
                "config id of `{k}` in `{}` is not a string: {other}",
                path.display()
            ))),
        })
        .collect()
}

/// Where a session's scores go and when they are dated, from what its source says.
#[derive(Debug, Clone, Default)]
pub struct ScoreTarget {
    /// The Langfuse trace the scores attach to; without one they attach to the session.
    pub trace_id: Option<String>,
    /// The environment of the scored trace, else `LANGFUSE_TRACING_ENVIRONMENT`.
    pub environment: Option<String>,
    /// The session's first entry, else the grade's own time.
    pub timestamp: Option<String>,
}

impl ScoreTarget {
    /// The target of a session: the first trace it came from (the design's "7 scores on
    /// the first trace"), that trace's environment and the session's start.
    pub fn of(session: Option<&Session>) -> ScoreTarget {
        let entries = session.map_or(&[][..], |s| &s.entries[..]);
        let text = |key: &str| {
            entries.iter().find_map(|e| {
                e.metadata
                    .get(key)
                    .and_then(|v| v.as_str())
                    .filter(|v| !v.is_empty())
                    .map(str::to_owned)
            })
        };
        ScoreTarget {
            trace_id: text("traceId"),
            environment: text("environment").or_else(|| {
                std::env::var("LANGFUSE_TRACING_ENVIRONMENT")
                    .ok()
                    .filter(|v| !v.trim().is_empty())
            }),
            timestamp: entries
                .iter()
                .map(|e| e.instant)
                .min()
                .map(grade_engine::time::format_iso_millis),
        }
    }
}

/// The score bodies of one graded session: one per dimension and, for a weighted pack,
/// the aggregate. Attached to the session's Langfuse trace when the source names one,
/// else to the session.
pub fn score_bodies(
    pack: &CompiledPack,
    result: &GradeResult,
    target: &ScoreTarget,
    config_ids: &HashMap<String, String>,
) -> Vec<ScoreBody> {
    let trace_id = target.trace_id.as_deref();
    let timestamp = target
        .timestamp
        .clone()
        .unwrap_or_else(|| result.timestamp.clone());
    let body = |name: &str,
                value: Value,
                data_type: &'static str,
                comment: Option<String>,
                evidence: &[String]| ScoreBody {
        id: score_id(&result.session_id, &result.rubric.digest, name),
        trace_id: trace_id.map(str::to_owned),
        session_id: trace_id.is_none().then(|| result.session_id.clone()),
        name: name.to_owned(),
        value,
        data_type,
        comment: comment.filter(|c| !c.is_empty()),
        environment: target.environment.clone(),
        config_id: config_ids.get(name).cloned(),
        timestamp: timestamp.clone(),
        metadata: ScoreMetadata {
            rubric: result.rubric.id.clone(),
            rubric_version: result.rubric.version.clone(),
            rubric_digest: result.rubric.digest.clone(),
            evidence: evidence.to_vec(),
        },
    };
    let mut out = Vec::new();
    for d in &pack.dimensions {
        let Some(scored) = result.dimensions.get(&d.id) else {
            continue;
        };
        let (value, data_type) = match (&d.kind, &scored.label) {
            // Langfuse takes a categorical value as its label.
            (DimensionKind::Categorical { .. }, Some(label)) => (json!(label), "CATEGORICAL"),
            _ => (json!(scored.score.0), "NUMERIC"),
        };
        let comment = scored
            .rationale
            .clone()
            .or_else(|| (!scored.evidence.is_empty()).then(|| scored.evidence.join("; ")));
        out.push(body(&d.id, value, data_type, comment, &scored.evidence));
    }
    if let Some((id, description)) = &pack.aggregate {
        out.push(body(
            id,
            json!(result.total_score.0),
            "NUMERIC",
            Some(description.clone()),
            &[],
        ));
    }
    out
}

/// Reads score bodies: JSON lines, or one JSON array.
fn read_bodies(path: &Path) -> Result<Vec<Value>, CliError> {
    let mut text = String::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|source| CliError::Io {
                path: path.to_owned(),
                source,
            })?;
    } else {
        text = std::fs::read_to_string(path).map_err(|source| CliError::Io {
            path: path.to_owned(),
            source,
        })?;
    }
    let shown = if path.as_os_str() == "-" {
        "stdin".to_owned()
    } else {
        path.display().to_string()
    };
    if text.trim_start().starts_with('[') {
        let bodies: Vec<Value> = serde_json::from_str(&text).map_err(|e| {
            CliError::Usage(format!("{shown}: not a JSON array of score bodies: {e}"))
        })?;
        if let Some(i) = bodies.iter().position(|b| {
            b.get("name").and_then(Value::as_str).is_none() || b.get("value").is_none()
        }) {
            return Err(CliError::Usage(format!(
                "{shown}: item {i} of the array: a score body needs `name` and `value`"
            )));
        }
        return Ok(bodies);
    }
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let body: Value = serde_json::from_str(line)
            .map_err(|e| CliError::Usage(format!("{shown}:{}: not a score body: {e}", n + 1)))?;
        if body.get("name").and_then(Value::as_str).is_none() || body.get("value").is_none() {
            return Err(CliError::Usage(format!(
                "{shown}:{}: a score body needs `name` and `value`",
                n + 1
            )));
        }
        out.push(body);
    }
    Ok(out)
}

/// `grade push --langfuse FILE|-`.
pub fn push(args: &PushArgs) -> Result<(), CliError> {
    let bodies = read_bodies(&args.langfuse)?;
    let server = Server::from_env(
        "`grade push --langfuse`",
        Duration::from_secs(args.timeout),
        crate::http::Retry {
            attempts: args.attempts,
            backoff: Duration::from_millis(args.backoff_ms),
            max_wait: Duration::from_secs(60),
        },
    )?;
    let said = send(&server, &bodies)?;
    crate::write_stdout(said.as_bytes())
}

/// Sends score bodies; what was done, in a line.
pub fn send(server: &Server, bodies: &[Value]) -> Result<String, CliError> {
    let pushed = push::push_scores(server, bodies)?;
    Ok(format!(
        "pushed {} score{} to {} in {} request{} ({} retr{})\n",
        pushed.scores,
        if pushed.scores == 1 { "" } else { "s" },
        server.host,
        pushed.requests,
        if pushed.requests == 1 { "" } else { "s" },
        pushed.retries,
        if pushed.retries == 1 { "y" } else { "ies" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_ids_are_stable_and_distinct() {
        let a = score_id("s1", "sha256:x", "goal_achievement");
        assert_eq!(a, score_id("s1", "sha256:x", "goal_achievement"));
        assert_ne!(a, score_id("s1", "sha256:y", "goal_achievement"));
        assert_ne!(a, score_id("s1", "sha256:x", "overall_quality"));
        assert_eq!(a.len(), 36);
    }
}
