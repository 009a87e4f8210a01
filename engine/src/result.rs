//! The grade of one session: a superset of CLEO's `GradeResult`.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize, Serializer};

/// A score: printed as an integer when it is one, so CLEO-shaped results stay byte-identical.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Deserialize)]
#[serde(transparent)]
pub struct Score(pub f64);

impl Serialize for Score {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        if v.fract() == 0.0 && v.abs() < 9.0e15 {
            s.serialize_i64(v as i64)
        } else {
            s.serialize_f64(v)
        }
    }
}

impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::entry::js_number(self.0))
    }
}

/// The grade of one session by one pack, as `grade --format json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GradeResult {
    /// The graded session.
    pub session_id: String,
    /// The CLEO task the session worked on, when its entries name one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Points scored (or the weighted total of a weighted pack).
    pub total_score: Score,
    /// The most points the session could score.
    pub max_score: Score,
    /// Each dimension's score, in the pack's order.
    pub dimensions: IndexMap<String, DimensionScore>,
    /// Flags the rules raised, in order.
    pub flags: Vec<String>,
    /// When the grade was made (ISO-8601, milliseconds, UTC).
    pub timestamp: String,
    /// How many entries the session has.
    pub entry_count: usize,
    /// Lines of the source skipped as malformed that were (or may have been) this session's.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_lines: u64,
    /// What made the grade (`grade-engine` and its version).
    pub evaluator: String,
    /// The pack that graded the session.
    pub rubric: RubricRef,
    /// `totalScore / maxScore` as a percentage, rounded to two decimals.
    pub percent: Score,
    /// The letter of the pack's band the percentage reaches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grade: Option<String>,
    /// What asking a built-in judge cost, when one was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<crate::judgment::JudgeUsage>,
    /// Why each point was given or taken; only with `--explain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<IndexMap<String, Vec<RuleTrace>>>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The score of one dimension.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DimensionScore {
    /// Points scored in the dimension.
    pub score: Score,
    /// The dimension's maximum.
    pub max: Score,
    /// Why the dimension scored what it did, one line each.
    pub evidence: Vec<String>,
    /// A categorical dimension's category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// In a weighted pack: the score on 0–1 (`(score - min) / (max - min)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalized: Option<f64>,
    /// In a weighted pack: the dimension's share of the total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// A judged dimension: why the judge gave this score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    /// A judged dimension asked several times (`--judge-runs`): how far the runs' scores
    /// spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<crate::judgment::Spread>,
    /// The session gave the dimension nothing to judge (its `applies_when` did not hold):
    /// its score is 0, its evidence says why, and neither it nor its `max` counts in the
    /// result's `totalScore` and `maxScore`.
    #[serde(
        rename = "notApplicable",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub not_applicable: bool,
}

/// Names exactly what graded a result: the pack, its version, and a digest of its files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RubricRef {
    /// The pack's id.
    pub id: String,
    /// The pack's version.
    pub version: String,
    /// `sha256:` and the digest of the pack's files (and plugins).
    pub digest: String,
}

/// What one rule did to a dimension, and the entries behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleTrace {
    /// The rule (or the dimension's own term, such as `(start)`).
    pub rule: String,
    /// Points the rule gave (negative when it took).
    pub points: Score,
    /// The rule's evidence lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// The flags the rule raised.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// The entries behind the points.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<EntryRef>,
}

/// An entry a rule's points rest on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryRef {
    /// 1-based place of the entry in its session.
    pub position: usize,
    /// The entry's timestamp, as the source spelled it.
    pub timestamp: String,
    /// The entry's operation (`domain.operation` for CLEO entries).
    pub operation: String,
    /// The file the entry was read from, when the source says: a transcript, a CLEO audit
    /// log or `tasks.db`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The entry's line in `file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// A database entry's row id (`tasks.db`'s `rowid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_id: Option<u64>,
    /// A transcript tool call's `tool_use` id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// `#15 (FILE:25, toolu_…)`: how evidence names the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
}

/// `percent` rounded to two decimals, half up.
pub fn percent_of(total: f64, max: f64) -> f64 {
    if max <= 0.0 {
        return 0.0;
    }
    crate::entry::round_half_up(total / max * 10_000.0) / 100.0
}

/// The JSON values of JSON-lines text (recorded results, expectations) with their 1-based
/// line numbers; blank lines are skipped, and the first line that is not JSON is the error,
/// with its number.
pub fn parse_json_lines(
    text: &str,
) -> Result<Vec<(usize, serde_json::Value)>, (usize, serde_json::Error)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value = serde_json::from_str(line).map_err(|e| (n + 1, e))?;
        out.push((n + 1, value));
    }
    Ok(out)
}
