//! Field paths into an entry (`params.title`, `metadata.gateway`, `result.exitCode`, …),
//! resolved once when a pack compiles, and [`FieldsRead`], the set of optional fields a pack
//! reads (which a source then checks). Below `source` and `pack`: both speak of fields.

use serde_json::Value;

use crate::entry::{js_string, js_trim, Entry, MetaRef};

/// A field path into an entry, parsed once ([`Field::parse`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Field {
    /// `timestamp`.
    Timestamp,
    /// `sessionId`.
    SessionId,
    /// `domain`.
    Domain,
    /// `operation`.
    Operation,
    /// `result.success`.
    Success,
    /// `result.exitCode`.
    ExitCode,
    /// `result.duration`.
    Duration,
    /// `error`.
    Error,
    /// `params.KEY…`: the keys of the path under `params`.
    Params(Vec<String>),
    /// `metadata.KEY…`: the metadata key, and the keys of the path under it.
    Metadata(String, Vec<String>),
}

/// The value of a field in one entry, borrowed where it can be.
#[derive(Debug, Clone, Copy)]
pub enum FieldValue<'a> {
    Missing,
    Str(&'a str),
    Bool(bool),
    Int(i64),
    Float(f64),
    Json(&'a Value),
}

/// A value JavaScript throws on rather than print it ([`FieldValue::display`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unprintable;

pub const FIELD_ROOTS: &str = "`timestamp`, `sessionId`, `domain`, `operation`, `result.success`, `result.exitCode`, `result.duration`, `error`, `params.…`, `metadata.…`";

impl Field {
    /// Whether the field is never text (`result.success`, `result.exitCode`,
    /// `result.duration`): a test of text (`blank`, a `normalize`d key) on it cannot decide
    /// any value but a falsy one, and would leave every session it reaches not graded.
    pub fn never_text(&self) -> bool {
        matches!(self, Field::Success | Field::ExitCode | Field::Duration)
    }

    /// Parses a field path such as `params.title` or `metadata.taskId`; the error says
    /// which roots a path may start with.
    pub fn parse(path: &str) -> Result<Field, String> {
        let mut parts = path.split('.');
        let root = parts.next().unwrap_or_default();
        let rest: Vec<String> = parts.map(str::to_owned).collect();
        if rest.iter().any(String::is_empty) {
            return Err(format!("field path `{path}` has an empty segment"));
        }
        let plain = |field: Field| {
            if rest.is_empty() {
                Ok(field)
            } else {
                Err(format!(
                    "field `{root}` has no sub-fields, so `{path}` refers to nothing"
                ))
            }
        };
        match root {
            "timestamp" => plain(Field::Timestamp),
            "sessionId" => plain(Field::SessionId),
            "domain" => plain(Field::Domain),
            "operation" => plain(Field::Operation),
            "error" => plain(Field::Error),
            "result" => match rest.as_slice() {
                [one] if one == "success" => Ok(Field::Success),
                [one] if one == "exitCode" => Ok(Field::ExitCode),
                [one] if one == "duration" => Ok(Field::Duration),
                _ => Err(format!(
                    "`{path}` is not a result field (use `result.success`, `result.exitCode` or `result.duration`)"
                )),
            },
            "params" if !rest.is_empty() => Ok(Field::Params(rest)),
            "metadata" if !rest.is_empty() => {
                let mut rest = rest;
                let key = rest.remove(0);
                Ok(Field::Metadata(key, rest))
            }
            _ => Err(format!("unknown field path `{path}` (paths start with {FIELD_ROOTS})")),
        }
    }

    pub(crate) fn get<'e>(&self, e: &'e Entry) -> FieldValue<'e> {
        match self {
            Field::Timestamp => FieldValue::Str(&e.timestamp),
            Field::SessionId => FieldValue::Str(&e.session_id),
            Field::Domain => FieldValue::Str(&e.domain),
            Field::Operation => FieldValue::Str(&e.operation),
            Field::Success => FieldValue::Bool(e.result.success),
            Field::ExitCode => FieldValue::Int(e.result.exit_code),
            Field::Duration => FieldValue::Float(e.result.duration),
            Field::Error => e
                .error
                .as_deref()
                .map_or(FieldValue::Missing, FieldValue::Str),
            Field::Params(path) => {
                let mut parts = path.iter();
                let first = parts.next().and_then(|k| e.params.get(k));
                descend(first, parts)
            }
            Field::Metadata(key, path) => match e.metadata.get(key) {
                None => FieldValue::Missing,
                Some(MetaRef::Text(s)) if path.is_empty() => FieldValue::Str(s),
                // A string has no fields.
                Some(MetaRef::Text(_)) => FieldValue::Missing,
                Some(MetaRef::Json(v)) => descend(Some(v), path.iter()),
            },
        }
    }
}

impl std::fmt::Display for Field {
    /// The path as a pack writes it (`params.title`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (root, rest): (&str, &[String]) = match self {
            Field::Timestamp => ("timestamp", &[]),
            Field::SessionId => ("sessionId", &[]),
            Field::Domain => ("domain", &[]),
            Field::Operation => ("operation", &[]),
            Field::Success => ("result.success", &[]),
            Field::ExitCode => ("result.exitCode", &[]),
            Field::Duration => ("result.duration", &[]),
            Field::Error => ("error", &[]),
            Field::Params(path) => ("params", path),
            Field::Metadata(key, path) => {
                write!(f, "metadata.{key}")?;
                for part in path {
                    write!(f, ".{part}")?;
                }
                return Ok(());
            }
        };
        f.write_str(root)?;
        for part in rest {
            write!(f, ".{part}")?;
        }
        Ok(())
    }
}

fn descend<'e, 'p>(
    mut value: Option<&'e Value>,
    path: impl Iterator<Item = &'p String>,
) -> FieldValue<'e> {
    for key in path {
        value = value.and_then(|v| v.get(key.as_str()));
    }
    match value {
        None | Some(Value::Null) => FieldValue::Missing,
        Some(v) => FieldValue::Json(v),
    }
}

/// A JSON type a field can be tested for (`type: string`). A missing or `null` field has
/// none of them (`present: false` tests for that).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JsonType {
    String,
    Number,
    Boolean,
    Array,
    Object,
}

impl<'a> FieldValue<'a> {
    /// Whether the value is of JSON type `kind` (JavaScript's `typeof`, with arrays apart).
    pub fn is_type(self, kind: JsonType) -> bool {
        let actual = match self {
            FieldValue::Missing => return false,
            FieldValue::Str(_) => JsonType::String,
            FieldValue::Bool(_) => JsonType::Boolean,
            FieldValue::Int(_) | FieldValue::Float(_) => JsonType::Number,
            FieldValue::Json(v) => match v {
                Value::Null => return false,
                Value::Bool(_) => JsonType::Boolean,
                Value::Number(_) => JsonType::Number,
                Value::String(_) => JsonType::String,
                Value::Array(_) => JsonType::Array,
                Value::Object(_) => JsonType::Object,
            },
        };
        actual == kind
    }

    pub fn is_missing(self) -> bool {
        matches!(self, FieldValue::Missing)
    }

    pub fn as_str(self) -> Option<&'a str> {
        match self {
            FieldValue::Str(s) => Some(s),
            FieldValue::Json(Value::String(s)) => Some(s),
            _ => None,
        }
    }

    /// JavaScript truthiness.
    pub fn truthy(self) -> bool {
        match self {
            FieldValue::Missing => false,
            FieldValue::Str(s) => !s.is_empty(),
            FieldValue::Bool(b) => b,
            FieldValue::Int(i) => i != 0,
            FieldValue::Float(f) => f != 0.0 && !f.is_nan(),
            FieldValue::Json(v) => crate::entry::is_truthy(Some(v)),
        }
    }

    /// Falsy, or a string that is empty once trimmed (CLEO's "without description"); `None`
    /// for a truthy value that is not text (a number, `true`, an array, an object), on which
    /// CLEO's `desc.trim()` throws, so that no answer is taken for one.
    pub fn blank(self) -> Option<bool> {
        match self.as_str() {
            Some(s) => Some(js_trim(s).is_empty()),
            None if !self.truthy() => Some(true),
            None => None,
        }
    }

    /// What kind of value this is, in words (`a number`), for a message.
    pub fn kind_phrase(self) -> &'static str {
        match self {
            FieldValue::Missing => "missing",
            FieldValue::Str(_) => "a string",
            FieldValue::Bool(_) => "a boolean",
            FieldValue::Int(_) | FieldValue::Float(_) => "a number",
            FieldValue::Json(v) => crate::entry::json_kind(v),
        }
    }

    pub fn equals(self, expected: &Value) -> bool {
        match (self, expected) {
            (FieldValue::Missing, Value::Null) => true,
            (FieldValue::Str(s), Value::String(t)) => s == t,
            (FieldValue::Bool(b), Value::Bool(c)) => b == *c,
            (FieldValue::Int(i), Value::Number(n)) => {
                n.as_i64() == Some(i) || n.as_f64() == Some(i as f64)
            }
            (FieldValue::Float(f), Value::Number(n)) => n.as_f64() == Some(f),
            (FieldValue::Json(Value::Number(a)), Value::Number(b)) => a.as_f64() == b.as_f64(),
            (FieldValue::Json(v), other) => v == other,
            _ => false,
        }
    }

    /// The value as text in an evidence or flag message, as JavaScript would print it:
    /// `Ok(None)` when it is missing, `Err` where JavaScript throws rather than print it
    /// (an object with a `toString` key of its own, see [`js_string`]).
    pub fn display(self) -> Result<Option<String>, Unprintable> {
        Ok(match self {
            FieldValue::Missing => None,
            FieldValue::Str(s) => Some(s.to_owned()),
            FieldValue::Bool(b) => Some(b.to_string()),
            // As a double, as JavaScript holds it: past 2^53 an integer prints rounded.
            FieldValue::Int(i) => Some(crate::entry::js_number(i as f64)),
            FieldValue::Float(f) => Some(crate::entry::js_number(f)),
            FieldValue::Json(v) => Some(js_string(v).ok_or(Unprintable)?),
        })
    }

    /// The value as JSON, for scripts and explanations.
    pub fn to_json(self) -> Value {
        match self {
            FieldValue::Missing => Value::Null,
            FieldValue::Str(s) => Value::String(s.to_owned()),
            FieldValue::Bool(b) => Value::Bool(b),
            FieldValue::Int(i) => Value::from(i),
            FieldValue::Float(f) => Value::from(f),
            FieldValue::Json(v) => v.clone(),
        }
    }
}

/// A set of an entry's optional fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldsRead(u8);

impl FieldsRead {
    /// `params`: an object.
    pub const PARAMS: FieldsRead = FieldsRead(1);
    /// `result.exitCode`: an integer (`4`, `4.0` or `4e0`).
    pub const EXIT_CODE: FieldsRead = FieldsRead(1 << 1);
    /// `result.duration`: a number.
    pub const DURATION: FieldsRead = FieldsRead(1 << 2);
    /// `error`: a string.
    pub const ERROR: FieldsRead = FieldsRead(1 << 3);
    /// `metadata`: an object.
    pub const METADATA: FieldsRead = FieldsRead(1 << 4);
    /// No optional field.
    pub const NONE: FieldsRead = FieldsRead(0);
    /// Every optional field: what a reader checks when it is not told what is read.
    pub const ALL: FieldsRead = FieldsRead(0b1_1111);

    /// Whether every field of `other` is in `self`.
    pub fn contains(self, other: FieldsRead) -> bool {
        self.0 & other.0 == other.0
    }

    /// The fields of both.
    pub fn with(self, other: FieldsRead) -> FieldsRead {
        FieldsRead(self.0 | other.0)
    }

    /// The optional field a field path reads, if it reads one.
    pub fn of_field(field: &Field) -> FieldsRead {
        match field {
            Field::Params(_) => FieldsRead::PARAMS,
            Field::ExitCode => FieldsRead::EXIT_CODE,
            Field::Duration => FieldsRead::DURATION,
            Field::Error => FieldsRead::ERROR,
            Field::Metadata(..) => FieldsRead::METADATA,
            Field::Timestamp
            | Field::SessionId
            | Field::Domain
            | Field::Operation
            | Field::Success => FieldsRead::NONE,
        }
    }
}

impl Default for FieldsRead {
    fn default() -> Self {
        FieldsRead::ALL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_decides_text_and_falsy_values_and_no_other_truthy_value() {
        use serde_json::json;
        let decided = [
            (FieldValue::Missing, Some(true)),
            (FieldValue::Str(""), Some(true)),
            (FieldValue::Str(" \u{a0}\n"), Some(true)),
            (FieldValue::Str(" d "), Some(false)),
            (FieldValue::Bool(false), Some(true)),
            (FieldValue::Bool(true), None),
            (FieldValue::Int(0), Some(true)),
            (FieldValue::Int(4), None),
            (FieldValue::Float(0.0), Some(true)),
            (FieldValue::Float(f64::NAN), Some(true)),
            (FieldValue::Float(0.5), None),
        ];
        for (value, blank) in decided {
            assert_eq!(value.blank(), blank, "{value:?}");
        }
        let json = [
            (json!(null), Some(true)),
            (json!(""), Some(true)),
            (json!("  "), Some(true)),
            (json!("d"), Some(false)),
            (json!(false), Some(true)),
            (json!(0), Some(true)),
            (json!(-0.0), Some(true)),
            (json!(true), None),
            (json!(7), None),
            (json!([]), None),
            (json!({}), None),
        ];
        for (value, blank) in &json {
            assert_eq!(FieldValue::Json(value).blank(), *blank, "{value}");
        }
    }

    #[test]
    fn a_field_prints_as_the_path_a_pack_writes() {
        for path in [
            "params.description",
            "params.a.b",
            "metadata.taskId",
            "metadata.x.y",
            "result.exitCode",
            "sessionId",
        ] {
            assert_eq!(Field::parse(path).unwrap().to_string(), path);
        }
    }

    #[test]
    fn paths_resolve_or_explain_why_not() {
        assert_eq!(
            Field::parse("params.title").unwrap(),
            Field::Params(vec!["title".into()])
        );
        assert_eq!(
            Field::parse("metadata.gateway").unwrap(),
            Field::Metadata("gateway".into(), vec![])
        );
        assert_eq!(Field::parse("result.exitCode").unwrap(), Field::ExitCode);
        assert!(Field::parse("params")
            .unwrap_err()
            .contains("unknown field path"));
        assert!(Field::parse("domain.x")
            .unwrap_err()
            .contains("no sub-fields"));
        assert!(Field::parse("result.code").is_err());
        assert!(Field::parse("params..x").is_err());
    }
}

/// What of each entry a run keeps: the optional fields its packs read and, of `params`, only
/// the keys they read. A reader may leave the rest out of the entries it builds (it still
/// checks that each line is JSON), since no rule, metric or text of those packs can tell.
/// The default keeps everything, as every reader did before packs said what they read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Projection {
    /// Every optional field when `None`; else the fields kept.
    fields: Option<FieldsRead>,
    /// The first-level `params` keys kept, sorted, when `fields` keeps params but not every
    /// key of them; `None` keeps every key.
    params: Option<std::sync::Arc<[String]>>,
}

impl Projection {
    /// Everything, as the entry's source wrote it.
    pub const ALL: Projection = Projection {
        fields: None,
        params: None,
    };

    /// The fields `read` names, each whole.
    pub fn of_fields(read: FieldsRead) -> Projection {
        Projection {
            fields: Some(read),
            params: None,
        }
    }

    /// Only what `field` reads: of `params`, the first key of its path.
    pub(crate) fn of_field(field: &Field) -> Projection {
        match field {
            Field::Params(path) => Projection {
                fields: Some(FieldsRead::PARAMS),
                params: Some(path.first().cloned().into_iter().collect()),
            },
            other => Projection::of_fields(FieldsRead::of_field(other)),
        }
    }

    /// What either keeps.
    pub fn with(&self, other: &Projection) -> Projection {
        let (Some(a), Some(b)) = (self.fields, other.fields) else {
            return Projection::ALL;
        };
        let keys = |p: &Projection| p.fields.is_some_and(|f| f.contains(FieldsRead::PARAMS));
        let params = match (keys(self), keys(other), &self.params, &other.params) {
            // Whole params on either side that keeps params.
            (true, _, None, _) | (_, true, _, None) => None,
            (true, true, Some(x), Some(y)) => {
                let mut all: Vec<String> = x.iter().chain(y.iter()).cloned().collect();
                all.sort_unstable();
                all.dedup();
                Some(all.into())
            }
            (true, false, x, _) => x.clone(),
            (false, true, _, y) => y.clone(),
            (false, false, _, _) => None,
        };
        Projection {
            fields: Some(a.with(b)),
            params,
        }
    }

    /// The optional fields kept, whole or in part.
    pub fn fields(&self) -> FieldsRead {
        self.fields.unwrap_or(FieldsRead::ALL)
    }

    /// Whether every field of every entry is kept.
    pub fn keeps_all(&self) -> bool {
        self.fields.is_none()
    }

    /// The first-level `params` keys kept, when params are kept but not whole; `None` when
    /// every key is kept (or params are not kept at all: see [`Projection::fields`]).
    pub fn params_keys(&self) -> Option<&[String]> {
        self.params.as_deref()
    }
}
