//! Stage 1: `rubric.yaml` exactly as written. Unknown keys are refused here, so a typo
//! never silently disables a rule.

use std::fmt;

use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::codes::Code;

/// An item that failed to deserialize is kept as its error instead of ending the parse, so
/// one run reports the problems of every dimension, rule, selector and metric.
#[derive(Debug)]
pub enum Lenient<T> {
    Ok(T),
    Err {
        /// [`Code::UnknownKey`] or [`Code::WrongType`].
        code: Code,
        /// Where inside the item, as a key path (empty for the item itself).
        path: String,
        message: String,
    },
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_yaml::Value::deserialize(d)?;
        Ok(match serde_path_to_error::deserialize::<_, T>(value) {
            Ok(item) => Lenient::Ok(item),
            Err(err) => {
                let inner = err.path().to_string();
                let message = in_yaml_words(err.into_inner().to_string());
                let mut path = if inner == "." { String::new() } else { inner };
                // serde names an unknown key only in the message; the key is the place.
                if let Some(key) = message
                    .strip_prefix("unknown field `")
                    .and_then(|rest| rest.split('`').next())
                {
                    // serde_path_to_error already ends the path with the key when it saw it.
                    if !(path == key || path.ends_with(&format!(".{key}"))) {
                        if !path.is_empty() {
                            path.push('.');
                        }
                        path.push_str(key);
                    }
                }
                Lenient::Err {
                    code: serde_code(&message),
                    path,
                    message,
                }
            }
        })
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPack {
    pub id: String,
    pub version: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Letter grades, highest first.
    #[serde(default)]
    pub bands: Vec<Lenient<RawBand>>,
    /// What a session without entries gets.
    #[serde(default)]
    pub empty_session: Option<RawEmptySession>,
    /// Named selectors, referred to by rules, conditions, metrics and other selectors.
    #[serde(default)]
    pub selectors: IndexMap<String, Lenient<RawSelector>>,
    /// Named values computed once per session.
    #[serde(default)]
    pub metrics: IndexMap<String, Lenient<RawMetric>>,
    /// `points` (default): the total is the sum of the dimension scores. `weighted`: the
    /// total is Σ weight × normalised score, each dimension normalised to 0–1.
    #[serde(default)]
    pub scoring: Scoring,
    /// For weighted packs: the name and description of the total (a Langfuse score name).
    #[serde(default)]
    pub aggregate: Option<RawAggregate>,
    /// For packs with judged dimensions: how to ask a judge for them.
    #[serde(default)]
    pub judge: Option<RawJudge>,
    /// Native libraries whose functions rules use (`native: NAME.function`).
    #[serde(default)]
    pub plugins: Vec<Lenient<RawPlugin>>,
    /// The source formats the pack grades (`--source-format` names); any when absent.
    #[serde(default)]
    pub sources: Option<Vec<String>>,
    /// Warning codes the pack silences (`allow: [W103]`).
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    /// Bounds the pack sets on its own scripts.
    #[serde(default)]
    pub limits: Option<RawLimits>,
    pub dimensions: Vec<Lenient<RawDimension>>,
}

/// Bounds the pack sets on its own scripts (`limits: { script_seconds: 30 }`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    /// The processor time a script run may take, in seconds, before what each entry of its
    /// session adds.
    #[serde(default)]
    pub script_seconds: Option<f64>,
}

/// A native plugin the pack loads: `path` relative to the pack (the platform's library
/// prefix and suffix added when the file name has no extension), pinned by `sha256`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPlugin {
    pub name: String,
    pub path: String,
    pub sha256: String,
}

/// The top-level keys of `rubric.yaml`, in the order of [`RawPack`].
const TOP_LEVEL_KEYS: [&str; 16] = [
    "id",
    "version",
    "name",
    "description",
    "bands",
    "empty_session",
    "selectors",
    "metrics",
    "scoring",
    "aggregate",
    "judge",
    "plugins",
    "sources",
    "allow",
    "limits",
    "dimensions",
];

pub use super::prescan::RawProblem;

use super::prescan::{find_non_finite, too_deep, MAX_FLOW_DEPTH};

impl RawPack {
    /// Reads `rubric.yaml`, reporting every top-level problem (an unknown key, a missing or
    /// mistyped field) instead of stopping at the first, so that the problems inside the
    /// dimensions, selectors and metrics are reported in the same run. Only a YAML syntax
    /// error, or a document that is not a mapping, stops the reading.
    pub fn read(text: &str) -> Result<(RawPack, Vec<RawProblem>), serde_yaml::Error> {
        if let Some(line) = too_deep(text) {
            return Err(serde::de::Error::custom(format!(
                "line {line}: brackets nested more than {MAX_FLOW_DEPTH} deep; a rubric never needs that"
            )));
        }
        let value: serde_yaml::Value = serde_yaml::from_str(text)?;
        let mut non_finite = Vec::new();
        find_non_finite(&value, &mut String::new(), &mut non_finite);
        let serde_yaml::Value::Mapping(mut map) = value else {
            return serde_yaml::from_str::<RawPack>(text).map(|pack| (pack, Vec::new()));
        };
        let mut problems = non_finite;
        let keys: Vec<serde_yaml::Value> = map.keys().cloned().collect();
        for key in keys {
            let name = key.as_str().unwrap_or_default().to_owned();
            if !TOP_LEVEL_KEYS.contains(&name.as_str()) {
                let expected = TOP_LEVEL_KEYS
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                problems.push((
                    Code::UnknownKey,
                    name.clone(),
                    format!("unknown field `{name}`, expected one of {expected}"),
                ));
                map.remove(&key);
                continue;
            }
            let Some(field) = map.get(&key).cloned() else {
                continue;
            };
            if let Err((path, message)) = check_field(&name, field) {
                let hint = if matches!(name.as_str(), "id" | "version" | "name")
                    && message.starts_with("invalid type")
                {
                    format!(" (quote it: `{name}: \"…\"`)")
                } else {
                    String::new()
                };
                let at = if path.is_empty() {
                    name.clone()
                } else if path.starts_with('[') {
                    format!("{name}{path}")
                } else {
                    format!("{name}.{path}")
                };
                problems.push((serde_code(&message), at, format!("{message}{hint}")));
                map.remove(&key);
            }
        }
        // Stand-ins for what is missing or broken, so the rest of the pack is still checked;
        // the problems above make the pack invalid. A pack without dimensions is reported by
        // the compiler ("needs at least one dimension").
        for required in ["id", "version", "name"] {
            let key = serde_yaml::Value::String(required.to_owned());
            if !map.contains_key(&key) {
                if !problems
                    .iter()
                    .any(|(_, p, _)| p == required || p.starts_with(&format!("{required}.")))
                {
                    problems.push((
                        Code::WrongType,
                        String::new(),
                        format!("missing field `{required}`"),
                    ));
                }
                map.insert(key, serde_yaml::Value::String("?".to_owned()));
            }
        }
        let dimensions = serde_yaml::Value::String("dimensions".to_owned());
        if !map.contains_key(&dimensions) {
            map.insert(dimensions, serde_yaml::Value::Sequence(Vec::new()));
        }
        let pack = serde_yaml::from_value::<RawPack>(serde_yaml::Value::Mapping(map))?;
        Ok((pack, problems))
    }
}

/// The code of a serde error: serde reports an unknown key only in its message's words, so
/// they are read once, here, where serde's error becomes a problem of the pack.
/// serde's message with what it expected in a pack author's words: a Rust type (`f64`,
/// `u32`) or serde's `sequence` is no word of YAML's.
fn in_yaml_words(message: String) -> String {
    let Some((found, wanted)) = message.rsplit_once(", expected ") else {
        return message;
    };
    let plain = match wanted {
        "f32" | "f64" => "a number",
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number, 0 or more",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number",
        "a sequence" => "a list",
        _ => return message,
    };
    format!("{found}, expected {plain}")
}

fn serde_code(message: &str) -> Code {
    if message.starts_with("unknown field `") {
        Code::UnknownKey
    } else {
        Code::WrongType
    }
}

/// Deserializes one top-level field alone, to find its problem and where inside it.
fn check_field(name: &str, value: serde_yaml::Value) -> Result<(), (String, String)> {
    fn check<T: DeserializeOwned>(value: serde_yaml::Value) -> Result<(), (String, String)> {
        serde_path_to_error::deserialize::<_, T>(value)
            .map(|_| ())
            .map_err(|e| {
                let path = e.path().to_string();
                let path = if path == "." { String::new() } else { path };
                (path, in_yaml_words(e.into_inner().to_string()))
            })
    }
    match name {
        "id" | "version" | "name" | "description" => check::<String>(value),
        "bands" => check::<Vec<Lenient<RawBand>>>(value),
        "empty_session" => check::<Option<RawEmptySession>>(value),
        "selectors" => check::<IndexMap<String, Lenient<RawSelector>>>(value),
        "metrics" => check::<IndexMap<String, Lenient<RawMetric>>>(value),
        "scoring" => check::<Scoring>(value),
        "aggregate" => check::<Option<RawAggregate>>(value),
        "judge" => check::<Option<RawJudge>>(value),
        "plugins" => check::<Vec<Lenient<RawPlugin>>>(value),
        "sources" | "allow" => check::<Option<Vec<String>>>(value),
        "limits" => check::<Option<RawLimits>>(value),
        "dimensions" => check::<Vec<Lenient<RawDimension>>>(value),
        _ => Ok(()),
    }
}

pub use super::Scoring;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAggregate {
    pub id: String,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawJudge {
    /// The scorer prompt template, a file of the pack (`*.prompt.md`).
    pub prompt: String,
    /// Above this estimated size (tokens ≈ characters / 4) a session is cut into chunks.
    #[serde(default = "default_budget_tokens")]
    pub budget_tokens: u64,
    /// The size each chunk aims at.
    #[serde(default = "default_chunk_tokens")]
    pub chunk_tokens: u64,
    /// The sampling temperature sent to a built-in judge; the model's default without it.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// The most tokens a built-in judge may write per reply.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// How a panel of judges combines their scores (`mean`, `median`, `min`, `max`).
    #[serde(default)]
    pub panel: Option<crate::pack::PanelCombine>,
}

fn default_budget_tokens() -> u64 {
    80_000
}

fn default_chunk_tokens() -> u64 {
    70_000
}

/// How a dimension gets its score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DimensionType {
    /// From the pack's rules.
    #[default]
    Points,
    /// A judge's number within `min`..=`max`.
    Numeric,
    /// A judge's choice among `categories`.
    Categorical,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCategory {
    pub label: String,
    pub value: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBand {
    pub grade: String,
    pub min_percent: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEmptySession {
    pub flag: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDimension {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Required for `points`; `numeric` defaults to 1, `categorical` to its largest value.
    #[serde(default)]
    pub max: Option<f64>,
    /// The smallest score of a `numeric` dimension (default 0).
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default, rename = "type")]
    pub kind: DimensionType,
    #[serde(default)]
    pub categories: Vec<RawCategory>,
    /// Share of the total in a `weighted` pack.
    #[serde(default)]
    pub weight: Option<f64>,
    #[serde(default)]
    pub start: f64,
    #[serde(default)]
    pub floor: Option<f64>,
    #[serde(default)]
    pub cap: Option<f64>,
    /// The rules of a `points` dimension; judged dimensions have none.
    #[serde(default)]
    pub rules: Vec<Lenient<RawRule>>,
    /// When this condition does not hold, the session gives the dimension nothing to judge:
    /// it is marked not applicable and left out of the total and its maximum.
    #[serde(default)]
    pub applies_when: Option<RawCondition>,
    /// The evidence of a dimension that does not apply (a template), saying why.
    #[serde(default)]
    pub not_applicable: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    pub id: String,
    /// What the rule checks and why, in words; `grade rubric show` prints it.
    pub doc: String,
    /// Evaluate the rule once per matching entry instead of once per session.
    #[serde(default)]
    pub for_each: Option<SelectorRef>,
    /// A Rhai script (a file of the pack) that decides the rule's outcome.
    #[serde(default)]
    pub script: Option<String>,
    /// A plugin's rule function (`plugin.function`) that decides the rule's outcome.
    #[serde(default)]
    pub native: Option<String>,
    /// Outcomes tried in order; the first whose `when` holds applies.
    #[serde(default)]
    pub cases: Option<Vec<RawCase>>,
    /// Shorthand for a single case: `when` plus its outcome, and `otherwise`.
    #[serde(default)]
    pub when: Option<RawCondition>,
    #[serde(default)]
    pub points: Option<RawPoints>,
    #[serde(default)]
    pub evidence: Option<String>,
    #[serde(default)]
    pub flag: Option<String>,
    #[serde(default)]
    pub otherwise: Option<RawOutcome>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCase {
    #[serde(default)]
    pub when: Option<RawCondition>,
    #[serde(default)]
    pub points: Option<RawPoints>,
    #[serde(default)]
    pub evidence: Option<String>,
    #[serde(default)]
    pub flag: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutcome {
    #[serde(default)]
    pub points: Option<RawPoints>,
    #[serde(default)]
    pub evidence: Option<String>,
    #[serde(default)]
    pub flag: Option<String>,
}

/// A number of points, or a metric scaled and rounded (`{metric: ratio, times: 15}`).
#[derive(Debug)]
pub enum RawPoints {
    Fixed(f64),
    Scaled(RawScaled),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScaled {
    pub metric: String,
    pub times: f64,
}

impl<'de> Deserialize<'de> for RawPoints {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawPoints;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a map `{metric, times}`")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawPoints, E> {
                Ok(RawPoints::Fixed(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawPoints, E> {
                Ok(RawPoints::Fixed(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawPoints, E> {
                Ok(RawPoints::Fixed(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawPoints, A::Error> {
                RawScaled::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawPoints::Scaled)
            }
        }
        d.deserialize_any(V)
    }
}

pub use super::condition::RawCondition;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMetric {
    /// `count(of) / count(over)`; undefined when `over` matches nothing.
    #[serde(default)]
    pub ratio: Option<RawRatio>,
    /// How many matching entries repeat an earlier one's key (`total - distinct`).
    #[serde(default)]
    pub duplicates: Option<RawKeyed>,
    /// How many distinct keys the matching entries have.
    #[serde(default)]
    pub distinct: Option<RawKeyed>,
    /// A plugin's metric function (`plugin.function`); undefined when it gives no value.
    #[serde(default)]
    pub native: Option<String>,
    /// 1 when the session's tool calls match its reference trajectory in a mode, else 0;
    /// undefined without a reference (see `pack/trajectory`).
    #[serde(default)]
    pub trajectory_match: Option<RawTrajectory>,
    /// Matched calls / the agent's calls, from a maximum one-to-one matching.
    #[serde(default)]
    pub tool_precision: Option<RawTrajectory>,
    /// Matched calls / the reference's calls.
    #[serde(default)]
    pub tool_recall: Option<RawTrajectory>,
    /// 2 × matched / (the agent's calls + the reference's calls).
    #[serde(default)]
    pub tool_f1: Option<RawTrajectory>,
    /// The longest common subsequence over the longer side's length.
    #[serde(default)]
    pub tool_sequence: Option<RawTrajectory>,
}

impl RawMetric {
    /// The trajectory metrics written, by their key.
    pub fn trajectories(&self) -> [(&'static str, Option<&RawTrajectory>); 5] {
        [
            ("trajectory_match", self.trajectory_match.as_ref()),
            ("tool_precision", self.tool_precision.as_ref()),
            ("tool_recall", self.tool_recall.as_ref()),
            ("tool_f1", self.tool_f1.as_ref()),
            ("tool_sequence", self.tool_sequence.as_ref()),
        ]
    }
}

pub use super::trajectory::RawTrajectory;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRatio {
    pub of: SelectorRef,
    pub over: SelectorRef,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawKeyed {
    pub of: SelectorRef,
    /// A field path such as `params.title`; entries where it is missing or empty are skipped.
    pub key: String,
    #[serde(default)]
    pub normalize: Vec<Normalize>,
}

pub(crate) use super::Normalize;

/// Matches entries. Keys of one map must all hold.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawSelector {
    /// The entry's domain is this one (or one of these).
    #[serde(default)]
    pub domain: Option<Names>,
    #[serde(default)]
    pub operation: Option<Names>,
    #[serde(default)]
    pub success: Option<bool>,
    #[serde(default)]
    pub exit_code: Option<Codes>,
    /// A field path (`params.title`, `metadata.gateway`, `error`, …) tested by the keys below.
    #[serde(default)]
    pub field: Option<String>,
    /// `equals: null` tests for null (or a missing field), so an explicit null is kept.
    #[serde(default, deserialize_with = "present_value")]
    pub equals: Option<Value>,
    #[serde(default)]
    pub one_of: Option<Vec<Value>>,
    /// JavaScript truthiness: not missing, null, false, 0 or "".
    #[serde(default)]
    pub truthy: Option<bool>,
    /// Missing, falsy, or a string that is empty once trimmed.
    #[serde(default)]
    pub blank: Option<bool>,
    #[serde(default)]
    pub present: Option<bool>,
    /// The field is a string containing this text.
    #[serde(default)]
    pub contains: Option<String>,
    /// The field is of this JSON type (`string`, `number`, `boolean`, `array`, `object`).
    #[serde(default, rename = "type")]
    pub kind: Option<crate::field::JsonType>,
    /// Another named selector.
    #[serde(default)]
    pub is: Option<String>,
    #[serde(default)]
    pub all: Option<Vec<SelectorRef>>,
    #[serde(default)]
    pub any: Option<Vec<SelectorRef>>,
    #[serde(default)]
    pub not: Option<Box<SelectorRef>>,
}

/// A selector by name, or written in place.
#[derive(Debug)]
pub enum SelectorRef {
    Name(String),
    Inline(Box<RawSelector>),
}

impl<'de> Deserialize<'de> for SelectorRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SelectorRef;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a selector name or a selector map")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SelectorRef, E> {
                Ok(SelectorRef::Name(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<SelectorRef, A::Error> {
                RawSelector::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|s| SelectorRef::Inline(Box::new(s)))
            }
        }
        d.deserialize_any(V)
    }
}

/// One name or a list of names.
#[derive(Debug, Clone)]
pub struct Names(pub Vec<String>);

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Names;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a name or a list of names")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Names, E> {
                Ok(Names(vec![v.to_owned()]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Names, A::Error> {
                let mut out = Vec::new();
                while let Some(name) = seq.next_element::<String>()? {
                    out.push(name);
                }
                Ok(Names(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// One exit code or a list of them.
#[derive(Debug, Clone)]
pub struct Codes(pub Vec<i64>);

impl<'de> Deserialize<'de> for Codes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Codes;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer or a list of integers")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Codes, E> {
                Ok(Codes(vec![v]))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Codes, E> {
                i64::try_from(v)
                    .map(|v| Codes(vec![v]))
                    .map_err(|_| E::custom("exit code out of range"))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Codes, A::Error> {
                let mut out = Vec::new();
                while let Some(code) = seq.next_element::<i64>()? {
                    out.push(code);
                }
                Ok(Codes(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// `Some` for any written value, `null` included; a missing key stays `None` via `default`.
fn present_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::errors;

    /// serde names what it wanted by Rust types (`expected u32`, `expected f64`) and its own
    /// `sequence`; a pack author reads YAML.
    #[test]
    fn a_value_of_the_wrong_type_is_described_in_yaml_words() {
        let errors = errors(
            "id: t
version: '1'
name: T
selectors:
  find: { operation: find }
dimensions:
  - id: d
    max: true
    rules: []
  - id: e
    max: 10
    rules:
      - id: r
        doc: d
        for_each: find
        when: { followed_by: find, within: -1 }
        points: 1
  - id: f
    max: 10
    rules: 5
",
        );
        assert_eq!(
            errors,
            [
                "dimensions[0].max: invalid type: boolean `true`, expected a number",
                "dimensions[1].rules[0].when.within: invalid value: integer `-1`, expected a whole number, 0 or more",
                "dimensions[2].rules: invalid type: integer `5`, expected a list",
            ]
        );
    }
}
