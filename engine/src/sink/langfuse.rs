//! Langfuse score bodies: the scores of graded sessions as Langfuse's public API takes
//! them (`POST /api/public/scores`), collected by the [`LangfuseScores`] sink, and the
//! score-config bodies of a weighted pack (`POST /api/public/score-configs`).
//!
//! Bodies carry the fields the Python SDK sends for a score; the binary's tests check them
//! against Langfuse's own OpenAPI schemas.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{Sink, SinkError};
use crate::judgment::json_number;
use crate::pack::DimensionKind;
use crate::{CompiledPack, GradeResult, Session};

/// A pack without weighted scoring has no Langfuse score configs.
#[derive(Debug, thiserror::Error)]
#[error("rubric `{0}` is not a weighted pack; Langfuse score configs describe weighted dimensions (like `langfuse-v1`)")]
pub struct NotWeighted(pub String);

/// Collects the score bodies of every result it takes, in order: one per dimension and,
/// for a weighted pack, the aggregate; each attached to its session's Langfuse trace when
/// the source names one ([`ScoreTarget::of`]).
pub struct LangfuseScores<'a> {
    pack: &'a CompiledPack,
    /// The sessions by id (the first of an id, as a search in order would find), so that a
    /// run over many sessions finds each in one lookup.
    sessions: HashMap<&'a str, &'a Session>,
    environment: Option<&'a str>,
    config_ids: &'a HashMap<String, String>,
    bodies: Vec<ScoreBody>,
}

impl<'a> LangfuseScores<'a> {
    /// A sink for results of `pack` over `sessions` (which name each score's trace and
    /// start; a result whose session is not among them is dated by its grade), with the
    /// default `environment` and the ids of the score configs by score name.
    pub fn new(
        pack: &'a CompiledPack,
        sessions: &'a [Session],
        environment: Option<&'a str>,
        config_ids: &'a HashMap<String, String>,
    ) -> Self {
        let mut by_id = HashMap::with_capacity(sessions.len());
        for session in sessions {
            by_id.entry(session.id.as_str()).or_insert(session);
        }
        LangfuseScores {
            pack,
            sessions: by_id,
            environment,
            config_ids,
            bodies: Vec::new(),
        }
    }

    /// The bodies collected, in order.
    pub fn into_bodies(self) -> Vec<ScoreBody> {
        self.bodies
    }
}

impl Sink for LangfuseScores<'_> {
    fn accept(&mut self, result: &GradeResult) -> Result<(), SinkError> {
        let session = self.sessions.get(result.session_id.as_str()).copied();
        let target = ScoreTarget::of(session, self.environment);
        self.bodies
            .extend(score_bodies(self.pack, result, &target, self.config_ids));
        Ok(())
    }
}

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
pub fn score_configs(pack: &CompiledPack) -> Result<Vec<ScoreConfig>, NotWeighted> {
    if pack.scoring != crate::pack::Scoring::Weighted {
        return Err(NotWeighted(pack.id.clone()));
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

/// What a score is attached to in Langfuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attached<'a> {
    /// A trace, by its id.
    Trace(&'a str),
    /// A session, by its id (a source that names no trace).
    Session(&'a str),
}

/// A stable id for a score: the same target (trace or session), session, rubric text and
/// score name give the same id, so a re-run overwrites its scores in Langfuse instead of
/// adding new ones, and nothing else does. Langfuse upserts a score by id, moving it to the
/// trace the body names: an id of session, rubric and name alone made the scores of a
/// session's second trace take over those of its first.
pub(crate) fn score_id(target: Attached<'_>, session: &str, digest: &str, name: &str) -> String {
    let (kind, target) = match target {
        Attached::Trace(id) => ("trace", id),
        Attached::Session(id) => ("session", id),
    };
    let mut hasher = Sha256::new();
    for part in [kind, target, session, digest, name] {
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

/// Where a session's scores go and when they are dated, from what its source says.
#[derive(Debug, Clone, Default)]
pub struct ScoreTarget {
    /// The Langfuse trace the scores attach to; without one they attach to the session.
    pub trace_id: Option<String>,
    /// The environment of the scored trace, else the default given.
    pub environment: Option<String>,
    /// The session's first entry, else the grade's own time.
    pub timestamp: Option<String>,
}

impl ScoreTarget {
    /// The target of a session: the first trace it came from (the design's "7 scores on
    /// the first trace"), that trace's environment (else `environment`, the deployment's
    /// default) and the session's start.
    pub fn of(session: Option<&Session>, environment: Option<&str>) -> ScoreTarget {
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
            environment: text("environment").or_else(|| environment.map(str::to_owned)),
            timestamp: entries
                .iter()
                .map(|e| e.instant)
                .min()
                .map(crate::time::format_iso_millis),
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
    let attached = match trace_id {
        Some(trace) => Attached::Trace(trace),
        None => Attached::Session(&result.session_id),
    };
    let body = |name: &str,
                value: Value,
                data_type: &'static str,
                comment: Option<String>,
                evidence: &[String]| ScoreBody {
        id: score_id(attached, &result.session_id, &result.rubric.digest, name),
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
        // A dimension the session gave nothing to judge has no score: a 0 sent for it would
        // pull every Langfuse average of the dimension down.
        if scored.not_applicable {
            continue;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_ids_are_stable_and_distinct() {
        let on = Attached::Trace("t1");
        let a = score_id(on, "s1", "sha256:x", "goal_achievement");
        assert_eq!(a, score_id(on, "s1", "sha256:x", "goal_achievement"));
        assert_ne!(a, score_id(on, "s1", "sha256:y", "goal_achievement"));
        assert_ne!(a, score_id(on, "s1", "sha256:x", "overall_quality"));
        assert_ne!(a, score_id(on, "s2", "sha256:x", "goal_achievement"));
        assert_eq!(a.len(), 36);
    }

    #[test]
    fn score_ids_of_two_traces_of_one_session_differ() {
        let a = score_id(Attached::Trace("A"), "s1", "sha256:x", "goal_achievement");
        let b = score_id(Attached::Trace("B"), "s1", "sha256:x", "goal_achievement");
        assert_ne!(a, b);
        // A trace and a session that happen to share an id are still two targets.
        let session = score_id(Attached::Session("A"), "s1", "sha256:x", "goal_achievement");
        assert_ne!(a, session);
    }
}
