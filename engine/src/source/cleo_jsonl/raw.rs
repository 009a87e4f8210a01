//! A line's typed shape for serde: the fields every entry has, typed; the optional ones
//! [`Lenient`], checked only when the pack reads them; metadata read straight into its fields.

use std::borrow::Cow;
use std::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::super::lenient::{required, Duration, ExitCode, FromJson, Lenient};
use crate::entry::{MetaValue, Metadata, Params, Text};

/// The fields every entry has are typed; the optional ones are [`Lenient`], checked only
/// when the pack reads them.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RawEntry {
    #[serde(deserialize_with = "timestamp")]
    pub(super) timestamp: Text,
    #[serde(deserialize_with = "session_id")]
    pub(super) session_id: Text,
    #[serde(deserialize_with = "domain")]
    pub(super) domain: Text,
    #[serde(deserialize_with = "operation")]
    pub(super) operation: Text,
    #[serde(default)]
    pub(super) params: Lenient<Params>,
    #[serde(deserialize_with = "result")]
    pub(super) result: RawOutcome,
    #[serde(default)]
    pub(super) metadata: Lenient<RawMetadata>,
    #[serde(default)]
    pub(super) error: Lenient<Text>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RawOutcome {
    #[serde(deserialize_with = "success")]
    pub(super) success: bool,
    #[serde(default)]
    pub(super) exit_code: Lenient<ExitCode>,
    #[serde(default)]
    pub(super) duration: Lenient<Duration>,
}

/// The fields every entry has, each refused by name when it holds another kind of value.
macro_rules! required_fields {
    ($($read:ident: $type:ty = $name:literal, $wanted:literal;)*) => {$(
        fn $read<'de, D: Deserializer<'de>>(d: D) -> Result<$type, D::Error> {
            required(d, $name, $wanted)
        }
    )*};
}

required_fields! {
    timestamp: Text = "timestamp", "a string";
    session_id: Text = "sessionId", "a string";
    domain: Text = "domain", "a string";
    operation: Text = "operation", "a string";
    result: RawOutcome = "result", "an object";
    success: bool = "result.success", "a boolean";
}

impl<'de> FromJson<'de> for RawOutcome {
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        RawOutcome::deserialize(MapAccessDeserializer::new(map)).map(Some)
    }
}

/// Metadata read straight into its fields: what [`Metadata::from_map`] builds from a map,
/// without building the map first.
pub(super) struct RawMetadata(pub(super) Metadata);

/// A key, borrowed from the line when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for RawMetadata {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MetadataVisitor;
        impl<'de> Visitor<'de> for MetadataVisitor {
            type Value = RawMetadata;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawMetadata, A::Error> {
                let mut slots = MetadataSlots::default();
                // A repeated key keeps its last value, as a map would.
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    match slots.slot(&key) {
                        Some(slot) => *slot = Some(map.next_value::<MetaValue>()?),
                        None => {
                            slots
                                .extra
                                .insert(key.into_owned(), map.next_value::<Value>()?);
                        }
                    }
                }
                Ok(RawMetadata(slots.finish()))
            }
        }
        d.deserialize_map(MetadataVisitor)
    }
}

/// Metadata as its keys are read: one slot per key CLEO defines, the rest kept as written.
/// What serde's reading and the fast reader ([`super::fast`]) both fill.
#[derive(Default)]
pub(super) struct MetadataSlots {
    task_id: Option<MetaValue>,
    user_id: Option<MetaValue>,
    source: Option<MetaValue>,
    gateway: Option<MetaValue>,
    role: Option<MetaValue>,
    pub(super) extra: Map<String, Value>,
}

impl MetadataSlots {
    /// The slot of `key` if CLEO defines it; `None` for a key kept in `extra`.
    pub(super) fn slot(&mut self, key: &str) -> Option<&mut Option<MetaValue>> {
        match key {
            "taskId" => Some(&mut self.task_id),
            "userId" => Some(&mut self.user_id),
            "source" => Some(&mut self.source),
            "gateway" => Some(&mut self.gateway),
            "role" => Some(&mut self.role),
            _ => None,
        }
    }

    /// The metadata, as [`Metadata::from_map`] builds it: `null` is no value, and the source
    /// defaults to `mcp`.
    pub(super) fn finish(self) -> Metadata {
        let known = |v: Option<MetaValue>| v.filter(|v| !v.is_null());
        Metadata {
            task_id: known(self.task_id),
            user_id: known(self.user_id),
            source: known(self.source).unwrap_or_else(|| MetaValue::from("mcp")),
            gateway: known(self.gateway),
            role: known(self.role),
            extra: self.extra,
        }
    }
}

impl<'de> FromJson<'de> for RawMetadata {
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        RawMetadata::deserialize(MapAccessDeserializer::new(map)).map(Some)
    }
}
