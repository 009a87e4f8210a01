//! A table's entries written as the lines of a JSONL audit log, in Rust: what `grade_entries`,
//! `grade_arrow` and Spark hand the engine's CLEO reader. The table arrives through Arrow's
//! C stream interface (`__arrow_c_stream__`), so no row becomes a Python object: building
//! the lines in Python (`to_pylist`, then `json.dumps` of each row) cost about ten times the
//! grading.
//!
//! The lines are byte for byte the ones the Python path writes (`grade._entries_jsonl`), so
//! every message that names a line or a column of it is the same: a row is a JSON object of
//! every column, a null `null`; inside a struct a null field is left out, as entries that
//! lacked it were written; a list keeps its nulls; a map is an object; numbers are written as
//! Python writes them (`1e+16`, `3.0`, `NaN`), strings escaped as `json.dumps` escapes them
//! with `ensure_ascii=False`. One difference, a fix: an empty map is `{}` (Python's rows
//! cannot tell it from an empty list, and wrote `[]`). A type this writer does not know
//! (timestamps, decimals, binary, half floats…) makes it answer `None`, and the Python path
//! refuses the table with its message.

use std::collections::HashSet;
use std::sync::Mutex;

use arrow_array::cast::AsArray;
use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::types::{
    ArrowDictionaryKeyType, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, OffsetSizeTrait, RecordBatch, RecordBatchReader};
use arrow_buffer::ArrowNativeType;
use arrow_schema::{DataType, Fields};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyCapsuleMethods};

/// The entries of `table` (anything with `__arrow_c_stream__`) as JSONL bytes, or `None` when
/// a column holds a type only the Python path writes (or refuses).
#[pyfunction]
pub(crate) fn arrow_jsonl<'py>(
    py: Python<'py>,
    table: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    Ok(jsonl(py, table)?.map(|lines| PyBytes::new(py, &lines)))
}

/// `arrow_jsonl`'s lines kept in Rust, for `grade_jsonl`: a table of a million entries is
/// hundreds of megabytes of lines, which copied into a `bytes` and back out of it cost two
/// copies, with the GIL held.
#[pyfunction]
pub(crate) fn arrow_lines(py: Python<'_>, table: &Bound<'_, PyAny>) -> PyResult<Option<Lines>> {
    Ok(jsonl(py, table)?.map(|lines| Lines {
        lines: Mutex::new(Some(lines)),
    }))
}

/// The JSONL lines of a table's entries, held for the one grading that reads them.
#[pyclass(frozen, module = "grade._native")]
pub(crate) struct Lines {
    lines: Mutex<Option<Vec<u8>>>,
}

#[pymethods]
impl Lines {
    /// The lines as `bytes` (while not yet graded).
    fn __bytes__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        match lines.as_deref() {
            Some(lines) => Ok(PyBytes::new(py, lines)),
            None => Err(graded_already()),
        }
    }
}

fn graded_already() -> PyErr {
    PyValueError::new_err("these lines were graded already")
}

impl Lines {
    /// The bytes of `data`, a `bytes` (copied: Python may move it while it is read) or
    /// `Lines` (taken).
    pub(crate) fn take(data: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
        if let Ok(lines) = data.cast::<Lines>() {
            let mut lines = lines.get().lines.lock().unwrap_or_else(|e| e.into_inner());
            return lines.take().ok_or_else(graded_already);
        }
        Ok(data.extract::<&[u8]>()?.to_vec())
    }
}

fn jsonl(py: Python<'_>, table: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    let capsule = table.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>()?;
    let pointer = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
    // SAFETY: the capsule is named `arrow_array_stream`, which the Arrow PyCapsule interface
    // reserves for a pointer to an `ArrowArrayStream`; `from_raw` moves the stream out and
    // leaves a released one behind, which is what the capsule's destructor expects to find.
    #[expect(
        unsafe_code,
        reason = "taking an Arrow C stream out of its PyCapsule is the C data interface"
    )]
    let stream = unsafe { FFI_ArrowArrayStream::from_raw(pointer.as_ptr().cast()) };
    let reader = ArrowArrayStreamReader::try_new(stream).map_err(arrow_error)?;
    let schema = reader.schema();
    if !writable_fields(schema.fields()) {
        return Ok(None);
    }
    let lines = py.detach(|| -> Result<Vec<u8>, arrow_schema::ArrowError> {
        use rayon::prelude::*;
        let mut batches = Vec::new();
        for batch in reader {
            let batch = batch?;
            // Slices of a large batch (zero-copy), so that one batch is not one core's work.
            let rows = batch.num_rows();
            for start in (0..rows).step_by(SLICE_ROWS) {
                batches.push(batch.slice(start, SLICE_ROWS.min(rows - start)));
            }
        }
        // Each slice on whichever core is free, joined in their order.
        let written = batches
            .par_iter()
            .map(|batch| {
                // Arrays that crossed the C interface are checked before they are read: a
                // string column of bytes that are not UTF-8 is refused, not written.
                for column in batch.columns() {
                    column.to_data().validate_full()?;
                }
                let mut out = Vec::new();
                write_batch(&mut out, batch);
                Ok(out)
            })
            .collect::<Result<Vec<_>, arrow_schema::ArrowError>>()?;
        Ok(joined(&written))
    });
    lines.map(Some).map_err(arrow_error)
}

/// The pieces one after the other, copied on every core: for a million entries they are
/// hundreds of megabytes, and one thread joining them (faulting in every page of the copy)
/// was a step the grading waited for. The copy's pages come zeroed from the allocator
/// (`alloc_zeroed`), not written twice.
fn joined(pieces: &[Vec<u8>]) -> Vec<u8> {
    use rayon::prelude::*;
    let total = pieces.iter().map(Vec::len).sum();
    let mut out = vec![0u8; total];
    let mut places = Vec::with_capacity(pieces.len());
    let mut rest = out.as_mut_slice();
    for piece in pieces {
        let (place, after) = rest.split_at_mut(piece.len());
        places.push(place);
        rest = after;
    }
    places
        .into_par_iter()
        .zip(pieces)
        .for_each(|(place, piece)| place.copy_from_slice(piece));
    out
}

/// Rows a core writes at a time: large enough that joining the pieces costs nothing.
const SLICE_ROWS: usize = 65_536;

fn arrow_error(err: arrow_schema::ArrowError) -> PyErr {
    PyValueError::new_err(format!("the table cannot be read through Arrow: {err}"))
}

/// Whether every column can be written here: known types, and names given once (a row of
/// Python's path keeps one value of a name given twice).
fn writable_fields(fields: &Fields) -> bool {
    let mut names = HashSet::new();
    fields
        .iter()
        .all(|f| names.insert(f.name().as_str()) && writable(f.data_type()))
}

fn writable(kind: &DataType) -> bool {
    match kind {
        DataType::Null
        | DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Float32
        | DataType::Float64
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View => true,
        DataType::Struct(fields) => writable_fields(fields),
        DataType::List(item) | DataType::LargeList(item) | DataType::FixedSizeList(item, _) => {
            writable(item.data_type())
        }
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                map_key_writable(kv[0].data_type()) && writable(kv[1].data_type())
            }
            _ => false,
        },
        DataType::Dictionary(key, value) => key.is_dictionary_key_type() && writable(value),
        _ => false,
    }
}

/// Keys Python writes as JSON object keys: text, and numbers and booleans as their text.
fn map_key_writable(kind: &DataType) -> bool {
    match kind {
        DataType::Dictionary(key, value) => key.is_dictionary_key_type() && map_key_writable(value),
        DataType::Null | DataType::Struct(_) | DataType::Map(..) => false,
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) => false,
        other => writable(other),
    }
}

fn write_batch(out: &mut Vec<u8>, batch: &RecordBatch) {
    let schema = batch.schema();
    for row in 0..batch.num_rows() {
        out.push(b'{');
        for (n, (field, column)) in schema.fields().iter().zip(batch.columns()).enumerate() {
            if n > 0 {
                out.push(b',');
            }
            string(out, field.name());
            out.push(b':');
            value(out, column.as_ref(), row);
        }
        out.extend_from_slice(b"}\n");
    }
}

/// Whether the value at `i` is null as Python's rows see it: a `Null` array's every value,
/// and a dictionary key that points at a null.
fn is_null(array: &dyn Array, i: usize) -> bool {
    match array.data_type() {
        DataType::Null => true,
        DataType::Dictionary(key, _) => match dictionary_index(array, key, i) {
            Some(at) => is_null(dictionary_values(array, key), at),
            None => true,
        },
        _ => array.is_null(i),
    }
}

fn value(out: &mut Vec<u8>, array: &dyn Array, i: usize) {
    if is_null(array, i) {
        out.extend_from_slice(b"null");
        return;
    }
    match array.data_type() {
        DataType::Struct(_) => {
            let s = array.as_struct();
            out.push(b'{');
            let mut first = true;
            for (field, column) in s.fields().iter().zip(s.columns()) {
                if is_null(column.as_ref(), i) {
                    continue;
                }
                if !first {
                    out.push(b',');
                }
                first = false;
                string(out, field.name());
                out.push(b':');
                value(out, column.as_ref(), i);
            }
            out.push(b'}');
        }
        DataType::List(_) => list::<i32>(out, array, i),
        DataType::LargeList(_) => list::<i64>(out, array, i),
        DataType::FixedSizeList(_, _) => {
            let list = array.as_fixed_size_list();
            let start = list.value_offset(i) as usize;
            items(
                out,
                list.values().as_ref(),
                start,
                start + list.value_length() as usize,
            );
        }
        DataType::Map(..) => {
            let map = array.as_map();
            let offsets = map.value_offsets();
            let (keys, values) = (map.keys().as_ref(), map.values().as_ref());
            out.push(b'{');
            for (n, j) in (offsets[i] as usize..offsets[i + 1] as usize).enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                key(out, keys, j);
                out.push(b':');
                value(out, values, j);
            }
            out.push(b'}');
        }
        DataType::Dictionary(key, _) => {
            if let Some(at) = dictionary_index(array, key, i) {
                value(out, dictionary_values(array, key), at);
            }
        }
        _ => scalar(out, array, i),
    }
}

/// A list of 32- or 64-bit offsets: its items at `i`.
fn list<O: OffsetSizeTrait>(out: &mut Vec<u8>, array: &dyn Array, i: usize) {
    let list = array.as_list::<O>();
    let offsets = list.value_offsets();
    items(
        out,
        list.values().as_ref(),
        offsets[i].as_usize(),
        offsets[i + 1].as_usize(),
    );
}

fn items(out: &mut Vec<u8>, values: &dyn Array, start: usize, end: usize) {
    out.push(b'[');
    for j in start..end {
        if j > start {
            out.push(b',');
        }
        value(out, values, j);
    }
    out.push(b']');
}

/// A map's key as Python's `json.dumps` writes a dict's key: text as itself, a number or a
/// boolean as its JSON text in quotes.
fn key(out: &mut Vec<u8>, keys: &dyn Array, j: usize) {
    match keys.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => scalar(out, keys, j),
        DataType::Dictionary(kind, _) => match dictionary_index(keys, kind, j) {
            Some(at) => key(out, dictionary_values(keys, kind), at),
            None => out.extend_from_slice(b"\"null\""),
        },
        _ => {
            out.push(b'"');
            scalar(out, keys, j);
            out.push(b'"');
        }
    }
}

fn scalar(out: &mut Vec<u8>, array: &dyn Array, i: usize) {
    match array.data_type() {
        DataType::Boolean => out.extend_from_slice(if array.as_boolean().value(i) {
            b"true"
        } else {
            b"false"
        }),
        DataType::Int8 => integer(out, array.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => integer(out, array.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => integer(out, array.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => integer(out, array.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => integer(out, array.as_primitive::<UInt8Type>().value(i)),
        DataType::UInt16 => integer(out, array.as_primitive::<UInt16Type>().value(i)),
        DataType::UInt32 => integer(out, array.as_primitive::<UInt32Type>().value(i)),
        DataType::UInt64 => integer(out, array.as_primitive::<UInt64Type>().value(i)),
        DataType::Float32 => float(out, f64::from(array.as_primitive::<Float32Type>().value(i))),
        DataType::Float64 => float(out, array.as_primitive::<Float64Type>().value(i)),
        DataType::Utf8 => string(out, array.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => string(out, array.as_string::<i64>().value(i)),
        DataType::Utf8View => string(out, array.as_string_view().value(i)),
        // `writable` let no other type through.
        _ => out.extend_from_slice(b"null"),
    }
}

/// The index into the dictionary's values of the key at `i`; `None` for a null key.
fn dictionary_index(array: &dyn Array, key: &DataType, i: usize) -> Option<usize> {
    fn at<K: ArrowDictionaryKeyType>(array: &dyn Array, i: usize) -> Option<usize> {
        let keys = array.as_dictionary::<K>().keys();
        if keys.is_null(i) {
            return None;
        }
        keys.value(i).to_usize()
    }
    match key {
        DataType::Int8 => at::<Int8Type>(array, i),
        DataType::Int16 => at::<Int16Type>(array, i),
        DataType::Int32 => at::<Int32Type>(array, i),
        DataType::Int64 => at::<Int64Type>(array, i),
        DataType::UInt8 => at::<UInt8Type>(array, i),
        DataType::UInt16 => at::<UInt16Type>(array, i),
        DataType::UInt32 => at::<UInt32Type>(array, i),
        DataType::UInt64 => at::<UInt64Type>(array, i),
        _ => None,
    }
}

fn dictionary_values<'a>(array: &'a dyn Array, key: &DataType) -> &'a dyn Array {
    fn values<K: ArrowDictionaryKeyType>(array: &dyn Array) -> &dyn Array {
        array.as_dictionary::<K>().values().as_ref()
    }
    match key {
        DataType::Int8 => values::<Int8Type>(array),
        DataType::Int16 => values::<Int16Type>(array),
        DataType::Int32 => values::<Int32Type>(array),
        DataType::Int64 => values::<Int64Type>(array),
        DataType::UInt8 => values::<UInt8Type>(array),
        DataType::UInt16 => values::<UInt16Type>(array),
        DataType::UInt32 => values::<UInt32Type>(array),
        _ => values::<UInt64Type>(array),
    }
}

fn integer(out: &mut Vec<u8>, n: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// `repr(float)`, as `json.dumps` writes a float: the shortest digits that read back as the
/// same number, positional from 1e-4 up to 1e16 (`0.0001`, `3.0`) and scientific outside
/// (`1e-05`, `1e+16`), and `NaN`, `Infinity` and `-Infinity`, which are not JSON (the reader
/// then refuses the line, as it refuses the same line from Python).
pub(crate) fn float(out: &mut Vec<u8>, x: f64) {
    if x.is_nan() {
        out.extend_from_slice(b"NaN");
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"Infinity" } else { b"-Infinity" });
        return;
    }
    // Rust's `{:e}` is the shortest round trip too: `1.5e-5`, `1e16`, `-0e0`.
    let shortest = format!("{x:e}");
    let (mantissa, exponent) = shortest.split_once('e').unwrap_or((shortest.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if negative {
        out.push(b'-');
    }
    if (-4..16).contains(&exponent) {
        if exponent >= 0 {
            let whole = exponent as usize + 1;
            if digits.len() <= whole {
                out.extend_from_slice(digits.as_bytes());
                out.extend(std::iter::repeat_n(b'0', whole - digits.len()));
                out.extend_from_slice(b".0");
            } else {
                out.extend_from_slice(&digits.as_bytes()[..whole]);
                out.push(b'.');
                out.extend_from_slice(&digits.as_bytes()[whole..]);
            }
        } else {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', (-exponent - 1) as usize));
            out.extend_from_slice(digits.as_bytes());
        }
    } else {
        out.extend_from_slice(&digits.as_bytes()[..1]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits.as_bytes()[1..]);
        }
        out.push(b'e');
        out.push(if exponent < 0 { b'-' } else { b'+' });
        let magnitude = exponent.unsigned_abs();
        if magnitude < 10 {
            out.push(b'0');
        }
        integer(out, magnitude);
    }
}

/// A JSON string as `json.dumps(…, ensure_ascii=False)` writes it: `"` and `\` escaped, the
/// control characters below U+0020 as `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX`, everything
/// else as itself.
pub(crate) fn string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(escape);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}
