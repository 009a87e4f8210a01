//! Entries packed into bytes while they wait for their session.
//!
//! A streamed read holds every entry of a session that is still open. When the log
//! interleaves sessions from its start to its end, that is nearly every entry of the file,
//! and a parsed [`Entry`] takes about 400 bytes with its params. Packed, an entry takes
//! about 60: texts are written once, short ones that repeat (domains, operations, param
//! keys, gateways, task ids) become numbers from a dictionary the read shares, and a
//! timestamp is written as what it adds to the session's first one. Unpacking gives back
//! exactly the entry that was packed.

use rustc_hash::FxHashMap;
use serde_json::{Map, Number, Value};

use crate::entry::{Entry, MetaValue, Metadata, Origin, Outcome, Params, Text};

/// Texts repeated across entries, numbered in the order they are first packed.
#[derive(Default)]
pub(crate) struct Dictionary {
    ids: FxHashMap<Text, u32>,
    texts: Vec<Text>,
}

/// Texts longer than this are written out rather than numbered: they rarely repeat.
const DICTIONARY_TEXT: usize = 24;
/// Numbered texts at most: a log of unique values must not grow the dictionary forever.
const DICTIONARY_SIZE: usize = 1 << 16;

/// The entries of one open session, packed one after the other.
#[derive(Default)]
pub(crate) struct PackedEntries {
    bytes: Vec<u8>,
    count: u32,
}

impl PackedEntries {
    /// Packs `entry`, reserving room for about `more` entries after it on the first one.
    pub fn push(&mut self, entry: &Entry, dictionary: &mut Dictionary, more: u32) {
        if self.count == 0 {
            // About 60 bytes an entry: room for the session's rest, not a doubling per entry.
            self.bytes.reserve_exact(64 * (more as usize + 1));
        }
        // Written as what it adds to the session's first timestamp, from a character
        // boundary so that the rest is text on its own.
        let shared = self.first_timestamp().map_or(0, |first| {
            let same = first
                .bytes()
                .zip(entry.timestamp.bytes())
                .take_while(|(a, b)| a == b)
                .count();
            (0..=same)
                .rev()
                .find(|&n| entry.timestamp.is_char_boundary(n))
                .unwrap_or(0)
        });
        let mut w = Writer {
            out: &mut self.bytes,
            dictionary,
        };
        w.varint(shared as u64);
        w.literal(&entry.timestamp[shared..]);
        w.signed(entry.instant);
        w.text(&entry.domain);
        w.text(&entry.operation);
        w.varint(entry.params.len() as u64);
        for (key, value) in entry.params.iter() {
            w.text(key);
            w.value(value);
        }
        w.byte(u8::from(entry.result.success));
        w.signed(entry.result.exit_code);
        w.number(entry.result.duration);
        let m = &entry.metadata;
        let optional = [&m.task_id, &m.user_id, &m.gateway, &m.role];
        let mut present = 0u8;
        for (bit, v) in optional.iter().enumerate() {
            if v.is_some() {
                present |= 1 << bit;
            }
        }
        if entry.error.is_some() {
            present |= 1 << 4;
        }
        w.byte(present);
        w.meta(&m.source);
        for v in optional.into_iter().flatten() {
            w.meta(v);
        }
        w.varint(m.extra.len() as u64);
        for (key, value) in &m.extra {
            w.text(key);
            w.value(value);
        }
        if let Some(error) = &entry.error {
            w.text(error);
        }
        let (file, number) = entry.origin.to_parts();
        w.varint(file);
        w.varint(number);
        self.count += 1;
    }

    pub fn len(&self) -> u32 {
        self.count
    }

    fn first_timestamp(&self) -> Option<&str> {
        if self.count == 0 {
            return None;
        }
        let mut r = Reader {
            bytes: &self.bytes,
            at: 0,
        };
        r.varint()?;
        r.literal()
    }

    /// The entries, as they were packed, appended to `out`; each gets `session_id`.
    /// `None` only if the bytes are not what [`push`](Self::push) wrote (a bug).
    pub fn unpack(
        &self,
        session_id: &str,
        dictionary: &Dictionary,
        out: &mut Vec<Entry>,
    ) -> Option<()> {
        let mut r = Reader {
            bytes: &self.bytes,
            at: 0,
        };
        let session_id = Text::from(session_id);
        let mut first: Option<&str> = None;
        for _ in 0..self.count {
            let shared = r.varint()? as usize;
            let rest = r.literal()?;
            let timestamp = match first {
                None => {
                    first = Some(rest);
                    Text::from(rest)
                }
                Some(first) => {
                    let mut t = Text::from(first.get(..shared)?);
                    t.push_str(rest);
                    t
                }
            };
            let instant = r.signed()?;
            let domain = r.text(dictionary)?;
            let operation = r.text(dictionary)?;
            let n = r.varint()?;
            let mut params = Params::new();
            for _ in 0..n {
                let key = r.text(dictionary)?;
                let value = r.value(dictionary)?;
                params.insert(key, value);
            }
            let success = r.byte()? == 1;
            let exit_code = r.signed()?;
            let duration = r.number()?;
            let present = r.byte()?;
            let source = r.meta(dictionary)?;
            let mut optional = [None, None, None, None];
            for (bit, slot) in optional.iter_mut().enumerate() {
                if present & (1 << bit) != 0 {
                    *slot = Some(r.meta(dictionary)?);
                }
            }
            let [task_id, user_id, gateway, role] = optional;
            let mut extra = Map::new();
            for _ in 0..r.varint()? {
                let key = r.text(dictionary)?;
                extra.insert(key.into(), r.value(dictionary)?);
            }
            let error = if present & (1 << 4) != 0 {
                Some(r.text(dictionary)?)
            } else {
                None
            };
            let origin = Origin::from_parts(r.varint()?, r.varint()?)?;
            out.push(Entry {
                timestamp,
                instant,
                session_id: session_id.clone(),
                domain,
                operation,
                params,
                result: Outcome {
                    success,
                    exit_code,
                    duration,
                },
                metadata: Metadata {
                    task_id,
                    user_id,
                    source,
                    gateway,
                    role,
                    extra,
                },
                error,
                origin,
            });
        }
        Some(())
    }
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
    dictionary: &'a mut Dictionary,
}

// Value tags.
const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const POSITIVE: u8 = 3;
const NEGATIVE: u8 = 4;
const FLOAT: u8 = 5;
const STRING: u8 = 6;
const ARRAY: u8 = 7;
const OBJECT: u8 = 8;

impl Writer<'_> {
    fn byte(&mut self, b: u8) {
        self.out.push(b);
    }

    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.out.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.out.push(v as u8);
    }

    fn signed(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }

    fn literal(&mut self, s: &str) {
        self.varint(s.len() as u64);
        self.out.extend_from_slice(s.as_bytes());
    }

    /// A text: `2n + 1` for the dictionary's text `n`, or `2 × length` and the bytes.
    fn text(&mut self, s: &str) {
        if s.len() <= DICTIONARY_TEXT {
            let d = &mut *self.dictionary;
            let id = match d.ids.get(s) {
                Some(&id) => Some(id),
                None if d.texts.len() < DICTIONARY_SIZE => {
                    let id = d.texts.len() as u32;
                    d.texts.push(Text::from(s));
                    d.ids.insert(Text::from(s), id);
                    Some(id)
                }
                None => None,
            };
            if let Some(id) = id {
                self.varint(2 * u64::from(id) + 1);
                return;
            }
        }
        self.varint(2 * s.len() as u64);
        self.out.extend_from_slice(s.as_bytes());
    }

    /// A float: whole numbers that fit a varint as one (tag 0), the rest as bits (tag 1).
    fn number(&mut self, f: f64) {
        if f.fract() == 0.0 && f.is_sign_positive() && f < 9_007_199_254_740_992.0 {
            self.byte(0);
            self.varint(f as u64);
        } else {
            self.byte(1);
            self.out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
    }

    fn meta(&mut self, v: &MetaValue) {
        match v {
            MetaValue::Text(t) => {
                self.byte(0);
                self.text(t);
            }
            MetaValue::Json(v) => {
                self.byte(1);
                self.value(v);
            }
        }
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.byte(NULL),
            Value::Bool(false) => self.byte(FALSE),
            Value::Bool(true) => self.byte(TRUE),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    self.byte(POSITIVE);
                    self.varint(u);
                } else if let Some(i) = n.as_i64() {
                    self.byte(NEGATIVE);
                    self.signed(i);
                } else {
                    self.byte(FLOAT);
                    let f = n.as_f64().unwrap_or(f64::NAN);
                    self.out.extend_from_slice(&f.to_bits().to_le_bytes());
                }
            }
            Value::String(s) => {
                self.byte(STRING);
                self.text(s);
            }
            Value::Array(items) => {
                self.byte(ARRAY);
                self.varint(items.len() as u64);
                for item in items {
                    self.value(item);
                }
            }
            Value::Object(map) => {
                self.byte(OBJECT);
                self.varint(map.len() as u64);
                for (key, value) in map {
                    self.text(key);
                    self.value(value);
                }
            }
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(v);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    }

    fn signed(&mut self) -> Option<i64> {
        let v = self.varint()?;
        Some(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let bytes = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(bytes)
    }

    fn literal(&mut self) -> Option<&'a str> {
        let n = self.varint()? as usize;
        std::str::from_utf8(self.take(n)?).ok()
    }

    fn text(&mut self, dictionary: &Dictionary) -> Option<Text> {
        let v = self.varint()?;
        if v & 1 == 1 {
            return dictionary.texts.get((v >> 1) as usize).cloned();
        }
        let bytes = self.take((v >> 1) as usize)?;
        std::str::from_utf8(bytes).ok().map(Text::from)
    }

    fn number(&mut self) -> Option<f64> {
        match self.byte()? {
            0 => Some(self.varint()? as f64),
            _ => self.bits(),
        }
    }

    fn bits(&mut self) -> Option<f64> {
        let bytes: [u8; 8] = self.take(8)?.try_into().ok()?;
        Some(f64::from_bits(u64::from_le_bytes(bytes)))
    }

    fn meta(&mut self, dictionary: &Dictionary) -> Option<MetaValue> {
        match self.byte()? {
            0 => self.text(dictionary).map(MetaValue::Text),
            _ => self.value(dictionary).map(|v| MetaValue::Json(Box::new(v))),
        }
    }

    fn value(&mut self, dictionary: &Dictionary) -> Option<Value> {
        Some(match self.byte()? {
            NULL => Value::Null,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            POSITIVE => Value::from(self.varint()?),
            NEGATIVE => Value::from(self.signed()?),
            FLOAT => Value::Number(Number::from_f64(self.bits()?)?),
            STRING => Value::String(self.text(dictionary)?.into()),
            ARRAY => {
                let n = self.varint()? as usize;
                let mut items = Vec::with_capacity(n.min(1 << 16));
                for _ in 0..n {
                    items.push(self.value(dictionary)?);
                }
                Value::Array(items)
            }
            OBJECT => {
                let n = self.varint()?;
                let mut map = Map::new();
                for _ in 0..n {
                    let key = self.text(dictionary)?;
                    map.insert(key.into(), self.value(dictionary)?);
                }
                Value::Object(map)
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn corpus_entries() -> Vec<Entry> {
        let text = include_str!("../../../tests/fixtures/conformance/audit.jsonl");
        text.lines()
            .map(|line| {
                super::super::cleo_jsonl::parse_line(
                    line.as_bytes(),
                    Some(line),
                    crate::field::FieldsRead::ALL,
                    &mut Default::default(),
                )
                .unwrap()
            })
            .collect()
    }

    fn round_trip(entries: &[Entry]) {
        let mut dictionary = Dictionary::default();
        let mut by_session: Vec<(Text, PackedEntries, Vec<Entry>)> = Vec::new();
        for e in entries {
            let i = match by_session.iter().position(|(s, _, _)| *s == e.session_id) {
                Some(i) => i,
                None => {
                    by_session.push((e.session_id.clone(), PackedEntries::default(), Vec::new()));
                    by_session.len() - 1
                }
            };
            by_session[i].1.push(e, &mut dictionary, 3);
            by_session[i].2.push(e.clone());
        }
        for (id, packed, want) in by_session {
            let mut got = Vec::new();
            packed.unpack(&id, &dictionary, &mut got).unwrap();
            assert_eq!(got, want);
            for (g, w) in got.iter().zip(&want) {
                // Equal floats can differ in sign: the bits must be the same too.
                assert_eq!(
                    g.result.duration.to_bits(),
                    w.result.duration.to_bits(),
                    "{}",
                    w.result.duration
                );
            }
        }
    }

    #[test]
    fn the_corpus_unpacks_as_it_was_packed() {
        let entries = corpus_entries();
        assert!(entries.len() > 1_000);
        round_trip(&entries);
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<u64>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            ".{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(".{0,8}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_entry_unpacks_as_it_was_packed(
            stamps in prop::collection::vec(".{0,30}", 1..4),
            instant in any::<i64>(),
            names in prop::collection::vec(".{0,30}", 2),
            params in prop::collection::vec((".{0,26}", json_value()), 0..4),
            exit_code in any::<i64>(),
            duration in prop_oneof![any::<f64>(), Just(-0.0), Just(0.0), Just(3.0), Just(1e300)],
            meta in prop::collection::vec(prop::option::of(json_value()), 5),
            extra in prop::collection::btree_map(".{0,8}", json_value(), 0..3),
            error in prop::option::of(".{0,40}"),
            origin in prop::option::of((0..4u64, any::<i64>())),
        ) {
            let metadata = |i: usize| meta[i].clone().map(MetaValue::from);
            let entries: Vec<Entry> = stamps
                .iter()
                .map(|stamp| Entry {
                    timestamp: stamp.as_str().into(),
                    instant,
                    session_id: "s".into(),
                    domain: names[0].as_str().into(),
                    operation: names[1].as_str().into(),
                    params: params.iter().cloned().collect(),
                    result: Outcome { success: exit_code % 2 == 0, exit_code, duration },
                    metadata: Metadata {
                        task_id: metadata(0),
                        user_id: metadata(1),
                        source: metadata(2).unwrap_or(MetaValue::from("mcp")),
                        gateway: metadata(3),
                        role: metadata(4),
                        extra: extra.clone().into_iter().collect(),
                    },
                    error: error.as_deref().map(Text::from),
                    origin: origin.map_or(Origin::UNKNOWN, |(file, row)| {
                        Origin::row(crate::entry::SourceFile::named(std::path::Path::new(&format!("f{file}"))), row)
                    }),
                })
                .collect();
            if duration.is_nan() {
                // NaN is not equal to itself; compare what is packed apart from it.
                return Ok(());
            }
            round_trip(&entries);
        }
    }
}
