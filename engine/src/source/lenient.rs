//! Optional fields read without failing on their type: a value of the wrong type is kept
//! as what was found, so the reader can refuse it when a rule reads the field and leave
//! it out when none does ([`crate::field::FieldsRead`]).

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::entry::{Params, Text};

/// A field as found: its value, `null`, or a value of another type (named, for messages).
#[derive(Default)]
pub(crate) enum Lenient<T> {
    Value(T),
    #[default]
    Null,
    Wrong(Found),
}

/// What a field of the wrong type held, as a message names it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Found {
    Kind(&'static str),
    /// A number that is not the integer wanted (`4.5`, `1e300`).
    Number(f64),
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Found::Kind(kind) => f.write_str(kind),
            Found::Number(n) => write!(f, "{}", crate::entry::js_number(*n)),
        }
    }
}

/// How a type is made from each kind of JSON value; `None` where the kind is wrong.
pub(crate) trait FromJson<'de>: Sized {
    fn from_str(_: &str) -> Option<Self> {
        None
    }
    fn from_f64(_: f64) -> Option<Self> {
        None
    }
    fn from_bool(_: bool) -> Option<Self> {
        None
    }
    fn from_i64(v: i64) -> Option<Self> {
        // Only reached for integers that do not fit: exact below 2^53, as JavaScript reads them.
        Self::from_f64(v as f64)
    }
    fn from_u64(v: u64) -> Option<Self> {
        Self::from_f64(v as f64)
    }
    /// Reads a map; `Ok(None)` when a map is the wrong kind (it is skipped).
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// `result.exitCode`: an integer in any JSON spelling (`4`, `4.0`, `4e0`).
pub(crate) struct ExitCode(pub i64);

impl FromJson<'_> for ExitCode {
    fn from_i64(v: i64) -> Option<Self> {
        Some(ExitCode(v))
    }
    fn from_u64(v: u64) -> Option<Self> {
        i64::try_from(v).ok().map(ExitCode)
    }
    fn from_f64(v: f64) -> Option<Self> {
        // Integral and within i64: below 2^63 in magnitude, where the cast is exact.
        (v.fract() == 0.0 && v.abs() < 9.223_372_036_854_776e18).then_some(ExitCode(v as i64))
    }
}

/// The largest `result.duration` read, in size: JavaScript's largest exact integer (2^53 − 1
/// ms, some 285,000 years). A larger one is no measured duration, and a pack adding durations
/// up would overflow to infinity (two of `1e308` do), which a script's comparisons all answer
/// false to and its texts print as `inf`: the grade would be wrong without a word.
pub(crate) const MAX_DURATION_MS: f64 = 9_007_199_254_740_991.0;

/// What a duration must be, as a refusal names it (every source words it alike).
pub(crate) const DURATION_WANTED: &str =
    "a number of milliseconds from -9007199254740991 to 9007199254740991";

/// Whether `ms` is a duration a pack may read: no larger than [`MAX_DURATION_MS`] in size
/// (so neither NaN nor infinite).
#[inline]
pub(crate) fn is_duration(ms: f64) -> bool {
    ms.abs() <= MAX_DURATION_MS
}

/// `result.duration`: a number of milliseconds no larger than [`MAX_DURATION_MS`] in size.
pub(crate) struct Duration(pub f64);

impl FromJson<'_> for Duration {
    fn from_f64(v: f64) -> Option<Self> {
        is_duration(v).then_some(Duration(v))
    }
}

/// `error`: a string.
impl FromJson<'_> for Text {
    fn from_str(v: &str) -> Option<Self> {
        Some(Text::from(v))
    }
}

/// `result.success`: a boolean.
impl FromJson<'_> for bool {
    fn from_bool(v: bool) -> Option<Self> {
        Some(v)
    }
}

/// A field every entry has: its value, or an error that names the field, what it must be and
/// what it held (as the refusal of an optional field a pack reads words it), where serde's
/// own message would name neither the field nor, for an object, anything but a Rust type.
pub(crate) fn required<'de, T: FromJson<'de>, D: Deserializer<'de>>(
    d: D,
    name: &str,
    wanted: &str,
) -> Result<T, D::Error> {
    match Lenient::<T>::deserialize(d)? {
        Lenient::Value(v) => Ok(v),
        Lenient::Null => Err(de::Error::custom(format_args!(
            "field `{name}` must be {wanted}, not null"
        ))),
        Lenient::Wrong(found) => Err(de::Error::custom(format_args!(
            "field `{name}` must be {wanted}, not {found}"
        ))),
    }
}

/// `params`: an object.
impl<'de> FromJson<'de> for Params {
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        Params::deserialize(MapAccessDeserializer::new(map)).map(Some)
    }
}

impl<'de, T: FromJson<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LenientVisitor(PhantomData))
    }
}

struct LenientVisitor<T>(PhantomData<T>);

fn or_wrong<T>(value: Option<T>, found: Found) -> Lenient<T> {
    match value {
        Some(v) => Lenient::Value(v),
        None => Lenient::Wrong(found),
    }
}

impl<'de, T: FromJson<'de>> Visitor<'de> for LenientVisitor<T> {
    type Value = Lenient<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Lenient<T>, E> {
        Ok(Lenient::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Lenient<T>, E> {
        Ok(Lenient::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Lenient<T>, E> {
        Ok(or_wrong(T::from_bool(v), Found::Kind("a boolean")))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Lenient<T>, E> {
        Ok(or_wrong(T::from_i64(v), Found::Number(v as f64)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Lenient<T>, E> {
        Ok(or_wrong(T::from_u64(v), Found::Number(v as f64)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Lenient<T>, E> {
        Ok(or_wrong(T::from_f64(v), Found::Number(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Lenient<T>, E> {
        Ok(or_wrong(T::from_str(v), Found::Kind("a string")))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Lenient<T>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Lenient::Wrong(Found::Kind("an array")))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Lenient<T>, A::Error> {
        Ok(or_wrong(T::from_map(map)?, Found::Kind("an object")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit_code(json: &str) -> Result<i64, String> {
        match serde_json::from_str::<Lenient<ExitCode>>(json).unwrap() {
            Lenient::Value(ExitCode(c)) => Ok(c),
            Lenient::Null => Err("null".to_owned()),
            Lenient::Wrong(found) => Err(found.to_string()),
        }
    }

    #[test]
    fn an_integral_number_is_an_integer_in_any_spelling() {
        for (json, code) in [("4", 4), ("4.0", 4), ("4e0", 4), ("40e-1", 4), ("-0.0", 0)] {
            assert_eq!(exit_code(json), Ok(code), "{json}");
        }
        assert_eq!(exit_code("4.5"), Err("4.5".to_owned()));
        assert_eq!(exit_code("1e300"), Err("1e+300".to_owned()));
        assert_eq!(
            exit_code("18446744073709551615"),
            Err("18446744073709552000".to_owned())
        );
        assert_eq!(exit_code("\"4\""), Err("a string".to_owned()));
        assert_eq!(exit_code("[4]"), Err("an array".to_owned()));
        assert_eq!(exit_code("{\"a\": [1]}"), Err("an object".to_owned()));
        assert_eq!(exit_code("null"), Err("null".to_owned()));
    }
}
