//! The audit model: one entry per operation an agent performed, in CLEO's `AuditEntry` shape.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::time::InstantMs;

mod window;

pub(crate) use window::Reach;

/// A text of an entry. Nearly all (timestamps, session ids, domains, operations, param keys)
/// fit in 24 bytes and are then kept inline, without an allocation.
pub type Text = compact_str::CompactString;

/// One audited operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The timestamp as the source spelled it.
    pub timestamp: Text,
    /// The instant the timestamp denotes; what rules compare.
    #[serde(skip)]
    pub instant: InstantMs,
    /// The session the entry belongs to.
    pub session_id: Text,
    /// The area of the operation (CLEO's `domain`, such as `tasks`).
    pub domain: Text,
    /// The operation within its domain (such as `show`).
    pub operation: Text,
    /// The operation's parameters.
    pub params: Params,
    /// How the operation ended.
    pub result: Outcome,
    /// Who and what around the operation.
    pub metadata: Metadata,
    /// The error the operation reported, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Text>,
    /// Where the entry was read (a line of a CLEO audit log, a row of `tasks.db`), for a
    /// person to find it; not part of the entry's content.
    #[serde(skip)]
    pub origin: Origin,
}

/// An entry's params: a JSON object, kept as pairs sorted by key (the order a map would
/// iterate in). Most entries have no param or a few, and a map node costs 600 bytes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params(Vec<(Text, Value)>);

impl Params {
    /// No params.
    pub fn new() -> Self {
        Params(Vec::new())
    }

    /// The value of `key`, if the params have it.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|i| &self.0[i].1)
    }

    /// Whether there are no params.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many params there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The pairs in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Sets `key` to `value`, replacing an earlier value.
    pub fn insert(&mut self, key: impl Into<Text>, value: Value) {
        let key = key.into();
        match self.0.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(i) => self.0[i].1 = value,
            Err(i) => self.0.insert(i, (key, value)),
        }
    }

    /// The params as a JSON object.
    pub(crate) fn to_map(&self) -> Map<String, Value> {
        self.iter()
            .map(|(k, v)| (k.to_owned(), v.clone()))
            .collect()
    }

    /// Params from pairs in source order; a repeated key keeps its last value, as in a map.
    fn from_pairs(mut pairs: Vec<(Text, Value)>) -> Self {
        if !pairs.windows(2).all(|w| w[0].0 < w[1].0) {
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            // `later` is dropped; the kept, earlier slot takes its value.
            pairs.dedup_by(|later, earlier| {
                let same = later.0 == earlier.0;
                if same {
                    std::mem::swap(&mut later.1, &mut earlier.1);
                }
                same
            });
        }
        Params(pairs)
    }
}

impl From<Map<String, Value>> for Params {
    fn from(map: Map<String, Value>) -> Self {
        Params::from_pairs(map.into_iter().map(|(k, v)| (Text::from(k), v)).collect())
    }
}

impl<K: Into<Text>> FromIterator<(K, Value)> for Params {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Self {
        Params::from_pairs(iter.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

impl std::ops::Index<&str> for Params {
    type Output = Value;

    /// The value of `key`, or `null` when there is none (as `serde_json::Value` indexes).
    fn index(&self, key: &str) -> &Value {
        static NULL: Value = Value::Null;
        self.get(key).unwrap_or(&NULL)
    }
}

impl Serialize for Params {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k.as_str(), v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ParamsVisitor;
        impl<'de> Visitor<'de> for ParamsVisitor {
            type Value = Params;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
                let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(pair) = map.next_entry::<Text, Value>()? {
                    pairs.push(pair);
                }
                Ok(Params::from_pairs(pairs))
            }
        }
        d.deserialize_map(ParamsVisitor)
    }
}

/// How the operation ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// Whether the operation succeeded.
    pub success: bool,
    /// The operation's exit code (0 on success).
    pub exit_code: i64,
    /// How long the operation took, in milliseconds.
    pub duration: f64,
}

/// Who and what around the operation; keys CLEO does not define are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// The task the operation worked on (`taskId`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<MetaValue>,
    /// Who ran the operation (`userId`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<MetaValue>,
    /// What issued the operation (`source`, such as `mcp` or `cli`).
    pub source: MetaValue,
    /// The gateway the operation came through (`gateway`, such as `cleo_query`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<MetaValue>,
    /// The role the agent acted in (`role`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<MetaValue>,
    /// Every other metadata key, as written.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A value of one of CLEO's metadata keys: nearly always a short string (`mcp`,
/// `cleo_query`, `T342`), kept inline; anything else as JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum MetaValue {
    /// A string, the usual case.
    Text(Text),
    /// Boxed, since it is rare: a `MetaValue` is then no larger than its text, which keeps
    /// `Entry` small, and entries are moved several times on their way to a session.
    Json(Box<Value>),
}

/// A metadata value as [`Metadata::get`] finds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MetaRef<'a> {
    /// A string value.
    Text(&'a str),
    /// Any other JSON value.
    Json(&'a Value),
}

impl MetaValue {
    /// The value, borrowed.
    pub fn as_ref(&self) -> MetaRef<'_> {
        match self {
            MetaValue::Text(t) => MetaRef::Text(t),
            MetaValue::Json(v) => MetaRef::Json(v.as_ref()),
        }
    }

    /// Whether the value is JSON `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, MetaValue::Json(v) if v.is_null())
    }
}

impl<'a> MetaRef<'a> {
    /// The value as a string, if it is one.
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            MetaRef::Text(t) => Some(t),
            MetaRef::Json(v) => v.as_str(),
        }
    }

    /// The value as JSON.
    pub fn to_json(self) -> Value {
        match self {
            MetaRef::Text(t) => Value::String(t.to_owned()),
            MetaRef::Json(v) => v.clone(),
        }
    }
}

impl From<Value> for MetaValue {
    fn from(value: Value) -> Self {
        match value {
            Value::String(s) => MetaValue::Text(s.into()),
            other => MetaValue::Json(Box::new(other)),
        }
    }
}

impl From<&str> for MetaValue {
    fn from(text: &str) -> Self {
        MetaValue::Text(text.into())
    }
}

impl Serialize for MetaValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MetaValue::Text(t) => serializer.serialize_str(t),
            MetaValue::Json(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for MetaValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        use serde::de::{Error, SeqAccess};
        struct MetaVisitor;
        impl<'de> Visitor<'de> for MetaVisitor {
            type Value = MetaValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<MetaValue, E> {
                Ok(MetaValue::Text(v.into()))
            }
            fn visit_string<E: Error>(self, v: String) -> Result<MetaValue, E> {
                Ok(MetaValue::Text(v.into()))
            }
            fn visit_bool<E: Error>(self, v: bool) -> Result<MetaValue, E> {
                Ok(MetaValue::Json(Box::new(Value::Bool(v))))
            }
            fn visit_i64<E: Error>(self, v: i64) -> Result<MetaValue, E> {
                Ok(MetaValue::Json(Box::new(Value::from(v))))
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<MetaValue, E> {
                Ok(MetaValue::Json(Box::new(Value::from(v))))
            }
            fn visit_f64<E: Error>(self, v: f64) -> Result<MetaValue, E> {
                Ok(MetaValue::Json(Box::new(Value::from(v))))
            }
            fn visit_unit<E: Error>(self) -> Result<MetaValue, E> {
                Ok(MetaValue::Json(Box::new(Value::Null)))
            }
            fn visit_none<E: Error>(self) -> Result<MetaValue, E> {
                Ok(MetaValue::Json(Box::new(Value::Null)))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<MetaValue, D2::Error> {
                MetaValue::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<MetaValue, A::Error> {
                Value::deserialize(SeqAccessDeserializer::new(seq))
                    .map(|v| MetaValue::Json(Box::new(v)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<MetaValue, A::Error> {
                Value::deserialize(MapAccessDeserializer::new(map))
                    .map(|v| MetaValue::Json(Box::new(v)))
            }
        }
        d.deserialize_any(MetaVisitor)
    }
}

impl Metadata {
    /// Metadata with only a source.
    pub(crate) fn with_source(source: &str) -> Self {
        Metadata {
            task_id: None,
            user_id: None,
            source: source.into(),
            gateway: None,
            role: None,
            extra: Map::new(),
        }
    }

    /// The metadata key `name`, wherever it is kept.
    pub fn get(&self, name: &str) -> Option<MetaRef<'_>> {
        fn known(v: &Option<MetaValue>) -> Option<MetaRef<'_>> {
            v.as_ref().map(MetaValue::as_ref)
        }
        match name {
            "taskId" => known(&self.task_id),
            "userId" => known(&self.user_id),
            "source" => Some(self.source.as_ref()),
            "gateway" => known(&self.gateway),
            "role" => known(&self.role),
            other => self.extra.get(other).map(MetaRef::Json),
        }
    }

    /// Builds metadata from a JSON object, moving CLEO's known keys to their fields.
    pub fn from_map(mut map: Map<String, Value>, default_source: &str) -> Self {
        let mut take = |key: &str| {
            map.remove(key)
                .filter(|v| !v.is_null())
                .map(MetaValue::from)
        };
        let task_id = take("taskId");
        let user_id = take("userId");
        let source = take("source").unwrap_or_else(|| MetaValue::from(default_source));
        let gateway = take("gateway");
        let role = take("role");
        Metadata {
            task_id,
            user_id,
            source,
            gateway,
            role,
            extra: map,
        }
    }
}

/// All entries of one session, in the session's order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Session {
    /// The session id, as the source names it.
    pub id: String,
    /// The session's entries, in order.
    pub entries: Vec<Entry>,
    /// Malformed lines of the source that were skipped and named this session, or whose
    /// session could not be read (so may have been this one's): its grade may miss them.
    pub skipped_lines: u64,
}

/// JavaScript truthiness, which CLEO's rubric relies on (`if (e.params?.parent)`).
pub(crate) fn is_truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
}

/// Whether a character is whitespace to JavaScript's `String.prototype.trim`.
///
/// This differs from Rust's `char::is_whitespace` (U+0085 is not JS whitespace, U+FEFF is),
/// and the reference grader trims with JavaScript.
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{0009}'..='\u{000D}'
            | '\u{0020}'
            | '\u{00A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

/// `s.trim()` as JavaScript computes it.
pub(crate) fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// A value as JavaScript's `String(value)` spells it inside a template literal; `None` where
/// JavaScript throws instead of spelling it.
///
/// An object read from JSON prints as `[object Object]` through the `toString` it inherits,
/// unless it has a `toString` key of its own (`{"toString": 1}`): JavaScript then finds no
/// function to call, nor a `valueOf` that gives anything but the object, and throws a
/// `TypeError` ("Cannot convert object to primitive value"). So does a list holding such an
/// object at any depth, which JavaScript prints by joining its items.
pub fn js_string(value: &Value) -> Option<String> {
    let mut out = String::new();
    write_js_string(value, &mut out).then_some(out)
}

fn write_js_string(value: &Value, out: &mut String) -> bool {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // JavaScript reads every JSON number as a double, so an integer past 2^53 prints
        // as its nearest double does (9007199254740993 → 9007199254740992).
        Value::Number(n) => match n.as_f64() {
            Some(f) => out.push_str(&js_number(f)),
            None => out.push_str(&n.to_string()),
        },
        Value::String(s) => out.push_str(s),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                // `join` prints null (and undefined) items as nothing.
                if !item.is_null() && !write_js_string(item, out) {
                    return false;
                }
            }
        }
        Value::Object(map) if map.contains_key("toString") => return false,
        Value::Object(_) => out.push_str("[object Object]"),
    }
    true
}

/// What a message calls the kind of a JSON value, with its article (`an array`, `null`).
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A number as JavaScript's `String(x)` prints it.
pub fn js_number(f: f64) -> String {
    with_js_number(f, str::to_owned)
}

/// Calls `write` with `f` as JavaScript's `String(x)` prints it, without allocating.
pub(crate) fn with_js_number<T>(f: f64, write: impl FnOnce(&str) -> T) -> T {
    // Scores and counts are nearly always whole: their digits are the integer's, which
    // `itoa` writes in a third of the time (JavaScript uses an exponent only from 1e21).
    if f.fract() == 0.0 && f.abs() < 1e15 {
        // `-0` prints as `0`, as `-0.0 as i64` is.
        return write(itoa::Buffer::new().format(f as i64));
    }
    // ECMAScript's Number::toString: the shortest digits that round-trip, in plain notation
    // from 1e-6 up to 1e21 and as `1e+21`/`1e-7` outside it. Rust's own `{}` never uses an
    // exponent and printed integers exactly (123456789012345683968 where JavaScript says
    // 123456789012345680000).
    write(ryu_js::Buffer::new().format(f))
}

/// A message from another library in our style: lowercase first letter (`Too many
/// operations` → `too many operations`), unless it starts with an acronym (`E_NOT_FOUND`).
pub(crate) fn lowercase_first(message: &str) -> String {
    let mut chars = message.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if first.is_uppercase() && !second.is_uppercase() => first
            .to_lowercase()
            .chain(message[first.len_utf8()..].chars())
            .collect(),
        _ => message.to_owned(),
    }
}

/// Rounds half away from zero on the exact binary value, as JavaScript's `toFixed(0)`
/// does for non-negative numbers (Rust's `{:.0}` rounds half to even).
pub(crate) fn round_half_up(x: f64) -> f64 {
    let floor = x.floor();
    if x - floor >= 0.5 {
        floor + 1.0
    } else {
        floor
    }
}

/// Where an entry was read, in one `u64` so that entries stay small: a line of a file (a
/// CLEO audit log) or a row of a table (a `tasks.db` row id), with the file it is in.
///
/// The top 2 bits say which, the next 22 name the file (a [`SourceFile`]), the low 40 hold
/// the number. A number or file that does not fit leaves the entry without an origin
/// rather than with a wrong one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Origin(u64);

const ORIGIN_NUMBER_BITS: u32 = 40;
const ORIGIN_FILE_BITS: u32 = 22;
const ORIGIN_KIND_SHIFT: u32 = ORIGIN_NUMBER_BITS + ORIGIN_FILE_BITS;
const ORIGIN_LINE: u64 = 1;
const ORIGIN_ROW: u64 = 2;

/// What an [`Origin`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginKind {
    /// A 1-based line of a text file.
    Line(u64),
    /// A row id of a database table.
    Row(u64),
}

impl Origin {
    /// No known origin (entries built in code, or read from a source that keeps their place
    /// another way, such as a transcript's metadata).
    pub const UNKNOWN: Origin = Origin(0);

    /// The 1-based `line` of `file`.
    pub fn line(file: SourceFile, line: u64) -> Origin {
        Origin::pack(ORIGIN_LINE, file, line)
    }

    /// The row with id `row_id` in `file` (a negative id, which SQLite allows, has none).
    pub fn row(file: SourceFile, row_id: i64) -> Origin {
        u64::try_from(row_id).map_or(Origin::UNKNOWN, |id| Origin::pack(ORIGIN_ROW, file, id))
    }

    fn pack(kind: u64, file: SourceFile, number: u64) -> Origin {
        if number >> ORIGIN_NUMBER_BITS != 0 || u64::from(file.0) >> ORIGIN_FILE_BITS != 0 {
            return Origin::UNKNOWN;
        }
        Origin(kind << ORIGIN_KIND_SHIFT | u64::from(file.0) << ORIGIN_NUMBER_BITS | number)
    }

    /// The origin as two numbers, each small for the usual line or row in one of few files
    /// (so that it packs into few bytes): kind and file, then the line or row.
    pub(crate) fn to_parts(self) -> (u64, u64) {
        (
            self.0 >> ORIGIN_NUMBER_BITS,
            self.0 & ((1 << ORIGIN_NUMBER_BITS) - 1),
        )
    }

    /// The origin [`to_parts`](Self::to_parts) split; `None` for parts it does not give.
    pub(crate) fn from_parts(high: u64, low: u64) -> Option<Origin> {
        let fits = high >> (64 - ORIGIN_NUMBER_BITS) == 0 && low >> ORIGIN_NUMBER_BITS == 0;
        fits.then_some(Origin(high << ORIGIN_NUMBER_BITS | low))
    }

    /// The line or row, when known.
    pub fn kind(self) -> Option<OriginKind> {
        let number = self.0 & ((1 << ORIGIN_NUMBER_BITS) - 1);
        match self.0 >> ORIGIN_KIND_SHIFT {
            ORIGIN_LINE => Some(OriginKind::Line(number)),
            ORIGIN_ROW => Some(OriginKind::Row(number)),
            _ => None,
        }
    }

    /// The file the entry was read from, as the reader named it, when known.
    pub fn file(self) -> Option<std::sync::Arc<str>> {
        self.kind()?;
        SourceFile((self.0 >> ORIGIN_NUMBER_BITS) as u32 & ((1 << ORIGIN_FILE_BITS) - 1)).name()
    }
}

/// A file entries were read from, named once per read so that each entry's [`Origin`] holds
/// only a number. Names are kept for the life of the process (one per distinct file read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceFile(u32);

/// The names of the files read so far, and the index of each.
#[derive(Default)]
struct SourceFiles {
    names: Vec<std::sync::Arc<str>>,
    index: std::collections::HashMap<std::sync::Arc<str>, u32>,
}

fn source_files() -> std::sync::MutexGuard<'static, SourceFiles> {
    static FILES: std::sync::OnceLock<std::sync::Mutex<SourceFiles>> = std::sync::OnceLock::new();
    FILES
        .get_or_init(Default::default)
        .lock()
        // The table is only appended to: a panic elsewhere leaves it whole.
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl SourceFile {
    /// The handle of the file named `name` (a path as the user gave it, or `-`).
    pub fn named(name: &std::path::Path) -> SourceFile {
        let name: std::sync::Arc<str> = name.to_string_lossy().into();
        let mut files = source_files();
        if let Some(&i) = files.index.get(&name) {
            return SourceFile(i);
        }
        let i = files.names.len() as u32;
        if i >> ORIGIN_FILE_BITS != 0 {
            // Too many files for an origin to name: this one's entries stay without one.
            return SourceFile(u32::MAX);
        }
        files.names.push(name.clone());
        files.index.insert(name, i);
        SourceFile(i)
    }

    fn name(self) -> Option<std::sync::Arc<str>> {
        source_files().names.get(self.0 as usize).cloned()
    }
}

/// Where an entry is in its source, as its source says: the file and line (a transcript, a
/// CLEO audit log), the row id (`tasks.db`), and a transcript tool call's `tool_use` id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SourcePlace {
    /// The file, as the reader named it.
    pub(crate) file: Option<String>,
    /// The 1-based line in `file`.
    pub(crate) line: Option<u64>,
    /// The row id in `file` (a database).
    pub(crate) row_id: Option<u64>,
    /// A transcript tool call's `tool_use` id.
    pub(crate) tool_use_id: Option<String>,
}

impl Entry {
    /// Where the entry is in its source, from its [`Origin`] or, for a transcript, its
    /// metadata (`file`, `line`, `toolUseId`).
    pub(crate) fn source_place(&self) -> SourcePlace {
        let meta = |key: &str| self.metadata.get(key).map(MetaRef::to_json);
        let text = |key: &str| meta(key).and_then(|v| v.as_str().map(str::to_owned));
        let mut place = SourcePlace {
            tool_use_id: text("toolUseId"),
            ..SourcePlace::default()
        };
        match self.origin.kind() {
            Some(OriginKind::Line(line)) => place.line = Some(line),
            Some(OriginKind::Row(row)) => place.row_id = Some(row),
            None => place.line = meta("line").and_then(|v| v.as_u64()),
        }
        if place.line.is_some() || place.row_id.is_some() {
            place.file = match self.origin.kind() {
                Some(_) => self.origin.file().map(|f| f.to_string()),
                None => text("file"),
            };
        }
        place
    }
}

/// Where an entry is in its source, for a person to find it: `#15` (its place in the
/// session) and, when the source says, the file and line or row and the tool call's id
/// (`#15 (1af7fc5e.jsonl:25, toolu_01LM7)`, `#3 (tasks.db row 42)`), as evidence and
/// `--explain` print it.
pub(crate) fn place_of(position: usize, entry: &Entry) -> String {
    match source_place_of(entry) {
        Some(place) => format!("#{position} ({place})"),
        None => format!("#{position}"),
    }
}

/// The part of [`place_of`] the source says (`1af7fc5e.jsonl:25, toolu_01LM7`,
/// `tasks.db row 42`), when it says any.
pub(crate) fn source_place_of(entry: &Entry) -> Option<String> {
    let place = entry.source_place();
    let mut parts: Vec<String> = Vec::new();
    let file = place.file.as_deref().map(|f| {
        std::path::Path::new(f)
            .file_name()
            .map_or_else(|| f.to_owned(), |n| n.to_string_lossy().into_owned())
    });
    match (file, place.line, place.row_id) {
        (Some(file), Some(line), _) => parts.push(format!("{file}:{line}")),
        (None, Some(line), _) => parts.push(format!("line {line}")),
        (Some(file), None, Some(row)) => parts.push(format!("{file} row {row}")),
        (None, None, Some(row)) => parts.push(format!("row {row}")),
        _ => {}
    }
    if let Some(id) = place.tool_use_id {
        parts.push(id);
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests;
