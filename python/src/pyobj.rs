//! A result as the Python value `json.loads` makes of its JSON text, built straight from the
//! Rust value through serde: parsing the text again in Python was half of what the module
//! cost over the binary on the 1M-entry bench log.
//!
//! The value is the one `json.loads` gives for what `serde_json::to_writer` writes, as the
//! binary prints it: objects are dicts in the order written, arrays lists, a number an `int`
//! when serde_json writes it without a fraction or exponent (every integer type, and
//! [`grade_engine::Score`] when it is whole), a `float` otherwise, with the value the text
//! parses to (an `f32` is written in its shortest digits, which are read as an `f64`), and a
//! float that is not finite is `None`, as serde_json writes `null`. Keys are interned once a
//! conversion ([`Keys`]): every result's dict shares them, as `json.loads` would not, which
//! only saves memory.

use std::collections::HashMap;
use std::fmt::Display;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use pyo3::IntoPyObjectExt;
use serde::ser::{self, Serialize};

/// The keys met so far, made once each and interned. Bounded: a value with many distinct keys
/// (a map keyed by something of each session) makes its own strings past the bound.
#[derive(Default)]
pub struct Keys {
    made: HashMap<String, Py<PyString>>,
}

/// More distinct keys than any pack's results have (their fields and dimension ids).
const MAX_KEYS: usize = 4096;

impl Keys {
    fn get<'py>(&mut self, py: Python<'py>, key: &str) -> Bound<'py, PyString> {
        if let Some(made) = self.made.get(key) {
            return made.bind(py).clone();
        }
        let made = PyString::intern(py, key);
        if self.made.len() < MAX_KEYS {
            self.made.insert(key.to_owned(), made.clone().unbind());
        }
        made
    }
}

/// `value` as the Python value `json.loads` makes of `serde_json::to_string(value)`.
pub fn to_py<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    keys: &mut Keys,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    value.serialize(ToPy { py, keys }).map_err(|e| e.0)
}

/// Why a value could not be made: a Python error, or what serde_json would refuse.
#[derive(Debug)]
pub struct Error(PyErr);

impl Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: Display>(msg: T) -> Self {
        Error(PyValueError::new_err(msg.to_string()))
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error(e)
    }
}

struct ToPy<'k, 'py> {
    py: Python<'py>,
    keys: &'k mut Keys,
}

type Made<'py> = Result<Bound<'py, PyAny>, Error>;

fn int<'py, I: IntoPyObject<'py>>(py: Python<'py>, v: I) -> Made<'py> {
    v.into_bound_py_any(py).map_err(Error)
}

/// A float as `json.loads` reads serde_json's text of it: `null` when it is not finite.
fn float(py: Python<'_>, v: f64) -> Made<'_> {
    Ok(if v.is_finite() {
        PyFloat::new(py, v).into_any()
    } else {
        py.None().into_bound(py)
    })
}

impl<'k, 'py> ser::Serializer for ToPy<'k, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    type SerializeSeq = Seq<'k, 'py>;
    type SerializeTuple = Seq<'k, 'py>;
    type SerializeTupleStruct = Seq<'k, 'py>;
    type SerializeTupleVariant = Variant<'py, Seq<'k, 'py>>;
    type SerializeMap = Map<'k, 'py>;
    type SerializeStruct = Map<'k, 'py>;
    type SerializeStructVariant = Variant<'py, Map<'k, 'py>>;

    fn serialize_bool(self, v: bool) -> Made<'py> {
        Ok(PyBool::new(self.py, v).to_owned().into_any())
    }
    fn serialize_i8(self, v: i8) -> Made<'py> {
        int(self.py, v)
    }
    fn serialize_i16(self, v: i16) -> Made<'py> {
        int(self.py, v)
    }
    fn serialize_i32(self, v: i32) -> Made<'py> {
        int(self.py, v)
    }
    fn serialize_i64(self, v: i64) -> Made<'py> {
        int(self.py, v)
    }
    fn serialize_i128(self, v: i128) -> Made<'py> {
        int(self.py, v)
    }
    fn serialize_u8(self, v: u8) -> Made<'py> {
        int(self.py, v)
    }
    fn serialize_u16(self, v: u16) -> Made<'py> {
        int(self.py, v)
    }
    fn serialize_u32(self, v: u32) -> Made<'py> {
        int(self.py, v)
    }
    fn serialize_u64(self, v: u64) -> Made<'py> {
        int(self.py, v)
    }
    fn serialize_u128(self, v: u128) -> Made<'py> {
        int(self.py, v)
    }
    fn serialize_f32(self, v: f32) -> Made<'py> {
        // serde_json writes an f32's shortest digits, and `json.loads` reads them as a double:
        // `0.1f32` is `0.1`, not the double `0.1f32` is (0.10000000149011612).
        if !v.is_finite() {
            return float(self.py, f64::from(v));
        }
        let digits = serde_json::to_string(&v).map_err(<Error as ser::Error>::custom)?;
        float(
            self.py,
            digits
                .parse::<f64>()
                .map_err(<Error as ser::Error>::custom)?,
        )
    }
    fn serialize_f64(self, v: f64) -> Made<'py> {
        float(self.py, v)
    }
    fn serialize_char(self, v: char) -> Made<'py> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Made<'py> {
        Ok(PyString::new(self.py, v).into_any())
    }
    fn serialize_bytes(self, v: &[u8]) -> Made<'py> {
        // serde_json writes bytes as an array of numbers.
        Ok(PyList::new(self.py, v)?.into_any())
    }
    fn serialize_none(self) -> Made<'py> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Made<'py> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Made<'py> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Made<'py> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Made<'py> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Made<'py> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Made<'py> {
        let dict = PyDict::new(self.py);
        let key = self.keys.get(self.py, variant);
        let value = value.serialize(ToPy {
            py: self.py,
            keys: self.keys,
        })?;
        dict.set_item(key, value)?;
        Ok(dict.into_any())
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'k, 'py>, Error> {
        Ok(Seq {
            py: self.py,
            keys: self.keys,
            items: Vec::with_capacity(len.unwrap_or(0)),
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'k, 'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Seq<'k, 'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<'py, Seq<'k, 'py>>, Error> {
        let key = self.keys.get(self.py, variant);
        Ok(Variant {
            key,
            inner: self.serialize_seq(Some(len))?,
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Map<'k, 'py>, Error> {
        Ok(Map {
            dict: PyDict::new(self.py),
            py: self.py,
            keys: self.keys,
            key: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Map<'k, 'py>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<'py, Map<'k, 'py>>, Error> {
        let key = self.keys.get(self.py, variant);
        Ok(Variant {
            key,
            inner: self.serialize_map(Some(len))?,
        })
    }
}

pub struct Seq<'k, 'py> {
    py: Python<'py>,
    keys: &'k mut Keys,
    items: Vec<Bound<'py, PyAny>>,
}

impl Seq<'_, '_> {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let item = value.serialize(ToPy {
            py: self.py,
            keys: self.keys,
        })?;
        self.items.push(item);
        Ok(())
    }
}

impl<'py> Seq<'_, 'py> {
    fn list(self) -> Made<'py> {
        Ok(PyList::new(self.py, self.items)?.into_any())
    }
}

impl<'py> ser::SerializeSeq for Seq<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Made<'py> {
        self.list()
    }
}

impl<'py> ser::SerializeTuple for Seq<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Made<'py> {
        self.list()
    }
}

impl<'py> ser::SerializeTupleStruct for Seq<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Made<'py> {
        self.list()
    }
}

pub struct Map<'k, 'py> {
    dict: Bound<'py, PyDict>,
    py: Python<'py>,
    keys: &'k mut Keys,
    /// The key of a map's entry whose value is next.
    key: Option<Bound<'py, PyString>>,
}

impl<'py> Map<'_, 'py> {
    fn field<T: Serialize + ?Sized>(
        &mut self,
        key: Bound<'py, PyString>,
        value: &T,
    ) -> Result<(), Error> {
        let value = value.serialize(ToPy {
            py: self.py,
            keys: self.keys,
        })?;
        self.dict.set_item(key, value)?;
        Ok(())
    }
}

impl<'py> ser::SerializeMap for Map<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        let text = key.serialize(KeyText)?;
        self.key = Some(self.keys.get(self.py, &text));
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        match self.key.take() {
            Some(key) => self.field(key, value),
            None => Err(ser::Error::custom("a map's value came before its key")),
        }
    }
    fn end(self) -> Made<'py> {
        Ok(self.dict.into_any())
    }
}

impl<'py> ser::SerializeStruct for Map<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let key = self.keys.get(self.py, name);
        self.field(key, value)
    }
    fn end(self) -> Made<'py> {
        Ok(self.dict.into_any())
    }
}

/// An enum's variant holding fields or elements: `{"Variant": …}`, as serde_json writes it.
pub struct Variant<'py, S> {
    key: Bound<'py, PyString>,
    inner: S,
}

impl<'py, S> Variant<'py, S> {
    fn wrap(key: Bound<'py, PyString>, value: Bound<'py, PyAny>) -> Made<'py> {
        let dict = PyDict::new(key.py());
        dict.set_item(key, value)?;
        Ok(dict.into_any())
    }
}

impl<'py> ser::SerializeTupleVariant for Variant<'py, Seq<'_, 'py>> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.inner.push(value)
    }
    fn end(self) -> Made<'py> {
        let list = self.inner.list()?;
        Self::wrap(self.key, list)
    }
}

impl<'py> ser::SerializeStructVariant for Variant<'py, Map<'_, 'py>> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        ser::SerializeStruct::serialize_field(&mut self.inner, name, value)
    }
    fn end(self) -> Made<'py> {
        let dict = self.inner.dict.into_any();
        Self::wrap(self.key, dict)
    }
}

/// A map's key as serde_json writes it: text as it is, and a number, a boolean or a character
/// as its text (a float in serde_json's digits); anything else is refused, as serde_json
/// refuses it.
struct KeyText;

fn key_must_be_text() -> Error {
    ser::Error::custom("key must be a string")
}

fn float_key(finite: bool, text: serde_json::Result<String>) -> Result<String, Error> {
    match finite {
        true => text.map_err(<Error as ser::Error>::custom),
        false => Err(ser::Error::custom(
            "float key must be finite (got NaN or +/-inf)",
        )),
    }
}

impl ser::Serializer for KeyText {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = ser::Impossible<String, Error>;
    type SerializeTuple = ser::Impossible<String, Error>;
    type SerializeTupleStruct = ser::Impossible<String, Error>;
    type SerializeTupleVariant = ser::Impossible<String, Error>;
    type SerializeMap = ser::Impossible<String, Error>;
    type SerializeStruct = ser::Impossible<String, Error>;
    type SerializeStructVariant = ser::Impossible<String, Error>;

    fn serialize_bool(self, v: bool) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i8(self, v: i8) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i16(self, v: i16) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i32(self, v: i32) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i64(self, v: i64) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i128(self, v: i128) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u8(self, v: u8) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u16(self, v: u16) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u32(self, v: u32) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u64(self, v: u64) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u128(self, v: u128) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_f32(self, v: f32) -> Result<String, Error> {
        float_key(v.is_finite(), serde_json::to_string(&v))
    }
    fn serialize_f64(self, v: f64) -> Result<String, Error> {
        float_key(v.is_finite(), serde_json::to_string(&v))
    }
    fn serialize_char(self, v: char) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_str(self, v: &str) -> Result<String, Error> {
        Ok(v.to_owned())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_none(self) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<String, Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, Error> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_must_be_text())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_must_be_text())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_must_be_text())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_must_be_text())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_must_be_text())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(key_must_be_text())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_must_be_text())
    }
}
