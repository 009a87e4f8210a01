//! A result as the Python value `json.loads` makes of its JSON text, built straight from the
//! Rust value: parsing the text again in Python was half of what the module cost over the
//! binary on the 1M-entry bench log.
//!
//! In two steps, so that the one thread that holds the GIL does as little as it can. On the
//! grading threads, without Python, [`plan`] walks the value through serde into a [`Plan`]:
//! its values in order, flat, each already typed as Python will hold it, its keys numbered in
//! one table for the process. On the thread that holds the GIL, [`build`] only makes the
//! objects the plan lists. Walking the value with serde while making its objects (hashing
//! each key to find its interned string, typing each number) took that thread half again
//! the grading's time.
//!
//! The value is the one `json.loads` gives for what `serde_json::to_writer` writes, as the
//! binary prints it: objects are dicts in the order written, arrays lists, a number an `int`
//! when serde_json writes it without a fraction or exponent (every integer type, and
//! [`grade_engine::Score`] when it is whole), a `float` otherwise, with the value the text
//! parses to (an `f32` is written in its shortest digits, which are read as an `f64`), and a
//! float that is not finite is `None`, as serde_json writes `null`. Keys are interned: every
//! result's dict shares them, as `json.loads` would not, which only saves memory.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Display;
use std::sync::{Arc, LazyLock, RwLock};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use pyo3::IntoPyObjectExt;
use rustc_hash::FxBuildHasher;
use serde::ser::{self, Serialize};

/// One value of a plan. A list or a dict is followed by its items (a dict's as key, value),
/// each with what it holds.
#[derive(Clone, Copy, Debug)]
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer past `i64`: `wide[n]`.
    Wide(u32),
    Float(f64),
    /// `text[start..start + len]`.
    Str(u32, u32),
    /// Key `n` of the process's table.
    Key(u32),
    List(u32),
    Dict(u32),
}

#[derive(Clone, Copy, Debug)]
enum Wide {
    Signed(i128),
    Unsigned(u128),
}

/// A value laid out for [`build`]: made without Python, on any thread.
#[derive(Debug, Default)]
pub struct Plan {
    nodes: Vec<Node>,
    /// Every string of the value but the keys, one after the other.
    text: String,
    wide: Vec<Wide>,
}

/// The keys met by any plan of the process, numbered in the order met: each thread that
/// plans looks a key up in its own copy of the numbers first, so that threads do not wait
/// on each other for the keys they have seen. Bounded: a value with many distinct keys (a
/// map keyed by something of each session) writes its keys as text past the bound.
struct KeyTable {
    numbers: HashMap<Box<str>, u32, FxBuildHasher>,
    names: Vec<Arc<str>>,
}

/// More distinct keys than any pack's results have (their fields and dimension ids).
const MAX_KEYS: usize = 4096;

static KEYS: LazyLock<RwLock<KeyTable>> = LazyLock::new(|| {
    RwLock::new(KeyTable {
        numbers: HashMap::default(),
        names: Vec::new(),
    })
});

thread_local! {
    static SEEN: RefCell<HashMap<Box<str>, u32, FxBuildHasher>> = RefCell::default();
}

/// The number of `key` in the process's table; `None` once the table is full.
fn key_number(key: &str) -> Option<u32> {
    if let Some(n) = SEEN.with(|seen| seen.borrow().get(key).copied()) {
        return Some(n);
    }
    let n = {
        let mut table = KEYS.write().unwrap_or_else(|e| e.into_inner());
        match table.numbers.get(key) {
            Some(&n) => n,
            None if table.names.len() < MAX_KEYS => {
                let n = u32::try_from(table.names.len()).ok()?;
                table.names.push(Arc::from(key));
                table.numbers.insert(Box::from(key), n);
                n
            }
            None => return None,
        }
    };
    SEEN.with(|seen| seen.borrow_mut().insert(Box::from(key), n));
    Some(n)
}

fn key_name(n: u32) -> Option<Arc<str>> {
    let table = KEYS.read().unwrap_or_else(|e| e.into_inner());
    table.names.get(n as usize).cloned()
}

/// `value` laid out as the Python value `json.loads` makes of
/// `serde_json::to_string(value)`.
pub fn plan<T: Serialize + ?Sized>(value: &T) -> Result<Plan, String> {
    let mut plan = Plan::default();
    value.serialize(&mut plan).map_err(|e| e.0)?;
    Ok(plan)
}

/// Why a value could not be laid out: what serde_json would refuse.
#[derive(Debug)]
pub struct Error(String);

impl Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

type Done = Result<(), Error>;

impl Plan {
    fn text(&mut self, v: &str) -> Result<Node, Error> {
        let start = u32::try_from(self.text.len()).map_err(|_| too_large())?;
        let len = u32::try_from(v.len()).map_err(|_| too_large())?;
        start.checked_add(len).ok_or_else(too_large)?;
        self.text.push_str(v);
        Ok(Node::Str(start, len))
    }

    fn string(&mut self, v: &str) -> Done {
        let node = self.text(v)?;
        self.nodes.push(node);
        Ok(())
    }

    fn key(&mut self, key: &str) -> Done {
        match key_number(key) {
            Some(n) => self.nodes.push(Node::Key(n)),
            None => self.string(key)?,
        }
        Ok(())
    }

    fn int(&mut self, v: i128) -> Done {
        let node = match i64::try_from(v) {
            Ok(v) => Node::Int(v),
            Err(_) => self.wide(Wide::Signed(v))?,
        };
        self.nodes.push(node);
        Ok(())
    }

    fn wide(&mut self, v: Wide) -> Result<Node, Error> {
        let n = u32::try_from(self.wide.len()).map_err(|_| too_large())?;
        self.wide.push(v);
        Ok(Node::Wide(n))
    }

    fn float(&mut self, v: f64) -> Done {
        // `null` when it is not finite, as serde_json writes it.
        self.nodes.push(if v.is_finite() {
            Node::Float(v)
        } else {
            Node::Null
        });
        Ok(())
    }

    /// Opens a list or dict whose length is counted as its items come: where its node is.
    fn open(&mut self, node: Node) -> Open {
        self.nodes.push(node);
        Open {
            at: self.nodes.len() - 1,
            items: 0,
        }
    }

    fn close(&mut self, open: &Open) -> Done {
        let items = u32::try_from(open.items).map_err(|_| too_large())?;
        match self.nodes.get_mut(open.at) {
            Some(Node::List(n) | Node::Dict(n)) => *n = items,
            _ => return Err(ser::Error::custom("a plan's container was lost")),
        }
        Ok(())
    }
}

fn too_large() -> Error {
    ser::Error::custom("a result too large to make into Python objects")
}

struct Open {
    at: usize,
    items: usize,
}

impl<'a> ser::Serializer for &'a mut Plan {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Done {
        self.nodes.push(Node::Bool(v));
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Done {
        self.int(v.into())
    }
    fn serialize_i16(self, v: i16) -> Done {
        self.int(v.into())
    }
    fn serialize_i32(self, v: i32) -> Done {
        self.int(v.into())
    }
    fn serialize_i64(self, v: i64) -> Done {
        self.nodes.push(Node::Int(v));
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Done {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Done {
        self.int(v.into())
    }
    fn serialize_u16(self, v: u16) -> Done {
        self.int(v.into())
    }
    fn serialize_u32(self, v: u32) -> Done {
        self.int(v.into())
    }
    fn serialize_u64(self, v: u64) -> Done {
        self.int(v.into())
    }
    fn serialize_u128(self, v: u128) -> Done {
        match i128::try_from(v) {
            Ok(v) => self.int(v),
            Err(_) => {
                let node = self.wide(Wide::Unsigned(v))?;
                self.nodes.push(node);
                Ok(())
            }
        }
    }
    fn serialize_f32(self, v: f32) -> Done {
        // serde_json writes an f32's shortest digits, and `json.loads` reads them as a double:
        // `0.1f32` is `0.1`, not the double `0.1f32` is (0.10000000149011612).
        if !v.is_finite() {
            return self.float(f64::from(v));
        }
        let digits = serde_json::to_string(&v).map_err(<Error as ser::Error>::custom)?;
        let v = digits
            .parse::<f64>()
            .map_err(<Error as ser::Error>::custom)?;
        self.float(v)
    }
    fn serialize_f64(self, v: f64) -> Done {
        self.float(v)
    }
    fn serialize_char(self, v: char) -> Done {
        self.string(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Done {
        self.string(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Done {
        // serde_json writes bytes as an array of numbers.
        let len = u32::try_from(v.len()).map_err(|_| too_large())?;
        self.nodes.push(Node::List(len));
        self.nodes
            .extend(v.iter().map(|b| Node::Int(i64::from(*b))));
        Ok(())
    }
    fn serialize_none(self) -> Done {
        self.nodes.push(Node::Null);
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Done {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Done {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Done {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Done {
        self.string(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Done {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Done {
        self.nodes.push(Node::Dict(1));
        self.key(variant)?;
        value.serialize(self)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        let open = self.open(Node::List(0));
        Ok(Compound { plan: self, open })
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        // `{"Variant": [...]}`, as serde_json writes it.
        self.nodes.push(Node::Dict(1));
        self.key(variant)?;
        let open = self.open(Node::List(0));
        Ok(Compound { plan: self, open })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        let open = self.open(Node::Dict(0));
        Ok(Compound { plan: self, open })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        // `{"Variant": {...}}`, as serde_json writes it.
        self.nodes.push(Node::Dict(1));
        self.key(variant)?;
        let open = self.open(Node::Dict(0));
        Ok(Compound { plan: self, open })
    }
}

/// A list or dict being laid out (as an enum variant's value, the dict around it is laid out
/// whole already).
pub struct Compound<'a> {
    plan: &'a mut Plan,
    open: Open,
}

impl Compound<'_> {
    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
        value.serialize(&mut *self.plan)?;
        self.open.items += 1;
        Ok(())
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Done {
        self.plan.key(key)?;
        self.item(value)
    }

    fn end(self) -> Done {
        self.plan.close(&self.open)
    }
}

/// A list's items, or a tuple's: each in turn.
macro_rules! items {
    ($($kind:ident :: $method:ident),*) => {$(
        impl ser::$kind for Compound<'_> {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
                self.item(value)
            }
            fn end(self) -> Done {
                Compound::end(self)
            }
        }
    )*};
}

items!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Done {
        let text = key.serialize(KeyText)?;
        self.plan.key(&text)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
        self.item(value)
    }
    fn end(self) -> Done {
        Compound::end(self)
    }
}

/// A struct's fields, or a struct variant's: each under its name.
macro_rules! fields {
    ($($kind:ident),*) => {$(
        impl ser::$kind for Compound<'_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                name: &'static str,
                value: &T,
            ) -> Done {
                self.field(name, value)
            }
            fn end(self) -> Done {
                Compound::end(self)
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);

/// The keys' strings made so far by one thread that holds the GIL, by their numbers in the
/// process's table: each is made (and interned) once a call, however many results share it.
#[derive(Default)]
pub struct Keys {
    made: Vec<Option<Py<PyString>>>,
}

impl Keys {
    fn get<'py>(&mut self, py: Python<'py>, n: u32) -> PyResult<Bound<'py, PyString>> {
        let at = n as usize;
        if let Some(Some(made)) = self.made.get(at) {
            return Ok(made.bind(py).clone());
        }
        let name = key_name(n).ok_or_else(lost)?;
        let made = PyString::intern(py, &name);
        if self.made.len() <= at {
            self.made.resize_with(at + 1, || None);
        }
        self.made[at] = Some(made.clone().unbind());
        Ok(made)
    }
}

fn lost() -> PyErr {
    PyValueError::new_err("a result's plan is malformed")
}

/// The Python value `plan` lays out.
pub fn build<'py>(py: Python<'py>, keys: &mut Keys, plan: &Plan) -> PyResult<Bound<'py, PyAny>> {
    let mut builder = Builder {
        py,
        keys,
        plan,
        at: 0,
        items: Vec::new(),
    };
    builder.value()
}

struct Builder<'k, 'p, 'py> {
    py: Python<'py>,
    keys: &'k mut Keys,
    plan: &'p Plan,
    /// The next node.
    at: usize,
    /// The items of the lists being made, innermost last.
    items: Vec<Bound<'py, PyAny>>,
}

impl<'py> Builder<'_, '_, 'py> {
    fn next(&mut self) -> PyResult<Node> {
        let node = self.plan.nodes.get(self.at).copied().ok_or_else(lost)?;
        self.at += 1;
        Ok(node)
    }

    fn text(&self, start: u32, len: u32) -> PyResult<&str> {
        let (start, len) = (start as usize, len as usize);
        self.plan.text.get(start..start + len).ok_or_else(lost)
    }

    fn value(&mut self) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match self.next()? {
            Node::Null => py.None().into_bound(py),
            Node::Bool(v) => PyBool::new(py, v).to_owned().into_any(),
            Node::Int(v) => v.into_bound_py_any(py)?,
            Node::Wide(n) => match self.plan.wide.get(n as usize).ok_or_else(lost)? {
                Wide::Signed(v) => v.into_bound_py_any(py)?,
                Wide::Unsigned(v) => v.into_bound_py_any(py)?,
            },
            Node::Float(v) => PyFloat::new(py, v).into_any(),
            Node::Str(start, len) => PyString::new(py, self.text(start, len)?).into_any(),
            Node::Key(n) => self.keys.get(py, n)?.into_any(),
            Node::List(n) => {
                let from = self.items.len();
                for _ in 0..n {
                    let item = self.value()?;
                    self.items.push(item);
                }
                PyList::new(py, self.items.drain(from..))?.into_any()
            }
            Node::Dict(n) => {
                let dict = PyDict::new(py);
                for _ in 0..n {
                    let key = match self.next()? {
                        Node::Key(n) => self.keys.get(py, n)?,
                        Node::Str(start, len) => PyString::new(py, self.text(start, len)?),
                        _ => return Err(lost()),
                    };
                    let value = self.value()?;
                    dict.set_item(key, value)?;
                }
                dict.into_any()
            }
        })
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
