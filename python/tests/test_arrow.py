"""Tables written as JSONL lines in Rust (`_native.arrow_jsonl`, through Arrow's C stream
interface): byte for byte the lines the Python path writes (`json.dumps` of each row), so
every message naming a line or a column of it stays the same; and a type only the Python path
knows falls back to it."""

import json
import math
import random

import pytest

import grade
from grade import _native
from conftest import CORPUS, FIXTURES, read_jsonl

pa = pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def v1():
    return grade.load_pack("cleo-v1")


def json_objects(path):
    """The lines of `path` that are JSON objects (odd logs hold some that are not)."""
    rows = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            rows.append(value)
    return rows


def python_lines(table):
    return grade._rows_jsonl(grade._arrow_rows(table))


def rust_lines(table):
    return _native.arrow_jsonl(table)


def test_the_conformance_corpus_is_written_as_python_writes_it():
    table = pa.Table.from_pylist(read_jsonl(CORPUS))
    assert rust_lines(table) == python_lines(table)


def test_odd_sessions_are_written_as_python_writes_them():
    # Their lines differ in type from line to line: each is a table of its own.
    written = 0
    for row in json_objects(FIXTURES / "odd-sessions" / "audit.jsonl"):
        try:
            table = pa.Table.from_pylist([row])
        except (ValueError, OverflowError, pa.ArrowException):
            continue  # a value Arrow cannot type (a list of mixed values, a huge integer)
        assert rust_lines(table) == python_lines(table), row
        written += 1
    assert written >= 100


FLOATS = [
    0.0, -0.0, 1.0, -1.0, 3.0, 0.1, 0.5, 1.5, 2.5e-5, 1e-5, 1e-4, 0.0001234, 1e15, 1e16, 1e17,
    123456789.123, 1.2345678901234568e17, 9999999999999998.0, 1e22, 1e-7, 5e-324, 2.2250738585072014e-308,
    1.7976931348623157e308, math.pi, -math.e, 100.0, 1234567890123456.0, 12345678901234567.0,
]


def test_floats_are_written_as_repr_writes_them():
    rng = random.Random(7)
    values = FLOATS + [rng.uniform(-1e6, 1e6) for _ in range(500)]
    values += [math.ldexp(rng.random(), rng.randint(-1070, 1020)) for _ in range(500)]
    table = pa.table({"x": pa.array(values, pa.float64())})
    assert rust_lines(table) == python_lines(table)
    table = pa.table({"x": pa.array(values[:60], pa.float32())})
    assert rust_lines(table) == python_lines(table)


def test_non_finite_floats_are_written_as_python_writes_them():
    table = pa.table({"x": pa.array([math.nan, math.inf, -math.inf], pa.float64())})
    assert rust_lines(table) == b'{"x":NaN}\n{"x":Infinity}\n{"x":-Infinity}\n'
    assert rust_lines(table) == python_lines(table)


def test_text_is_escaped_as_json_dumps_escapes_it():
    texts = ['a"b', "back\\slash", "line\nfeed", "\r\t\b\f", "\x00\x01\x1f\x7f", "é ü 中文 🎉",
             "\u2028\u2029", "", "</script>", "'single'"]
    table = pa.table({"t": texts, "large": pa.array(texts, pa.large_string())})
    assert rust_lines(table) == python_lines(table)


def test_nulls_are_kept_in_rows_and_lists_and_left_out_of_structs():
    rows = [
        {"timestamp": None, "params": {"a": None, "b": 1, "c": {"d": None}}, "xs": [1, None, 3]},
        {"timestamp": "t", "params": None, "xs": None},
        {"timestamp": "u", "params": {"a": "x", "b": None, "c": None}, "xs": []},
    ]
    table = pa.Table.from_pylist(rows)
    assert rust_lines(table) == python_lines(table)
    first = json.loads(rust_lines(table).splitlines()[0])
    assert first == {"timestamp": None, "params": {"b": 1, "c": {}}, "xs": [1, None, 3]}


def test_every_integer_width_and_booleans():
    cols = {}
    for kind in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()):
        cols[str(kind)] = pa.array([0, 1, None, 100], kind)
    cols["big"] = pa.array([2**63 - 1, -(2**63), None, 0], pa.int64())
    cols["ubig"] = pa.array([2**64 - 1, 0, None, 1], pa.uint64())
    cols["b"] = pa.array([True, False, None, True])
    cols["n"] = pa.nulls(4)
    table = pa.table(cols)
    assert rust_lines(table) == python_lines(table)


def test_lists_of_structs_fixed_lists_and_dictionaries():
    structs = pa.array([[{"k": "a", "v": None}, None], None, []], pa.list_(pa.struct([("k", pa.string()), ("v", pa.int64())])))
    fixed = pa.array([[1, 2], [3, None], None], pa.list_(pa.int32(), 2))
    large = pa.array([["x"], None, ["y", None]], pa.large_list(pa.string()))
    words = pa.array(["edit", None, "edit"]).dictionary_encode()
    table = pa.table({"structs": structs, "fixed": fixed, "large": large, "words": words})
    assert rust_lines(table) == python_lines(table)


def test_a_map_is_an_object():
    kinds = pa.map_(pa.string(), pa.int64())
    table = pa.table({"m": pa.array([[("a", 1), ("b", None)], None, [("c", 3)]], kinds)})
    assert rust_lines(table) == python_lines(table)
    numbered = pa.table({"m": pa.array([[(1, "x"), (2, "y")]], pa.map_(pa.int32(), pa.string()))})
    assert rust_lines(numbered) == python_lines(numbered)


def test_an_empty_map_is_an_empty_object():
    # The Python path's rows cannot tell an empty map from an empty list and wrote `[]`.
    table = pa.table({"m": pa.array([[]], pa.map_(pa.string(), pa.string()))})
    assert rust_lines(table) == b'{"m":{}}\n'


def test_a_sliced_table_writes_only_its_rows():
    table = pa.Table.from_pylist(read_jsonl(CORPUS)).slice(17, 40)
    assert rust_lines(table) == python_lines(table)
    assert len(rust_lines(table).splitlines()) == 40


def test_several_batches_are_written_in_order():
    rows = read_jsonl(CORPUS)[:300]
    one = pa.Table.from_pylist(rows)
    table = pa.Table.from_batches(one.to_batches(max_chunksize=7))
    assert rust_lines(table) == python_lines(one)


@pytest.mark.parametrize(
    "column",
    [
        pa.array([1, 2], pa.timestamp("s")),
        pa.array([b"x", b"y"], pa.binary()),
        pa.array([1.5, 2.5], pa.float16()),
        pa.array([{"at": 1}, None], pa.struct([("at", pa.date32())])),
    ],
    ids=["timestamp", "binary", "float16", "nested-date"],
)
def test_a_type_only_python_knows_falls_back_to_it(column):
    table = pa.table({"x": column})
    assert rust_lines(table) is None


def test_a_timestamp_column_is_still_refused_with_the_modules_message(v1):
    table = pa.table({"timestamp": pa.array([1], pa.timestamp("s")), "sessionId": ["s"]})
    with pytest.raises(grade.SourceError, match="column `timestamp` holds timestamp"):
        v1.grade_entries(table)


def test_a_table_grades_as_its_file_through_the_rust_lines(v1):
    table = pa.Table.from_pylist(read_jsonl(CORPUS))
    assert bytes(grade._entries_jsonl(table)) == python_lines(table)
    assert [r["totalScore"] for r in v1.grade_entries(table)] == [
        r["totalScore"] for r in v1.grade_source(CORPUS)
    ]
