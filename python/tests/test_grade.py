"""The Python module against the `grade` binary: the same results (the grading instant
aside) and the same messages, from files, iterators, dicts, Arrow tables and DataFrames."""

import json
import threading

import pytest

import grade
from conftest import (
    CORPUS,
    EXAMPLE,
    RUNAWAY,
    cli_error,
    cli_json,
    read_jsonl,
    session_ids,
    untimed,
)

pa = pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def v1():
    return grade.load_pack("cleo-v1")


@pytest.mark.parametrize("pack_id", ["cleo-v1", "cleo-v2"])
def test_the_conformance_corpus_grades_as_the_binary_grades_it(pack_id):
    ids = session_ids()
    pack = grade.load_pack(pack_id)
    with pytest.warns(grade.GradeWarning, match="has no entries in"):
        ours = pack.grade_source(CORPUS, sessions=ids, allow_empty=True)
    theirs = cli_json("--rubric", pack_id, "--source", CORPUS, "--allow-empty", *ids)
    assert len(ours) == len(ids) == 301
    assert untimed(ours) == untimed(theirs)


@pytest.mark.parametrize("pack_id", ["cleo-v1", "cleo-v2"])
def test_a_whole_source_grades_as_grade_all(pack_id):
    pack = grade.load_pack(pack_id)
    ours = pack.grade_source(CORPUS)
    theirs = cli_json("--rubric", pack_id, "--source", CORPUS, "--all")
    assert len(ours) == len(theirs) > 100
    assert untimed(ours) == untimed(theirs)
    # Same numbers, same types: an integer score stays an integer.
    assert type(ours[0]["totalScore"]) is type(theirs[0]["totalScore"])


def test_explain_adds_the_traces_the_binary_adds(v1):
    ours = v1.grade_source(EXAMPLE, explain=True)
    theirs = cli_json("--rubric", "cleo-v1", "--source", EXAMPLE, "--all", "--explain")
    assert untimed(ours) == untimed(theirs)
    assert "explain" in ours[0]


def test_the_iterator_yields_what_the_list_holds(v1):
    it = v1.iter_source(CORPUS)
    first = next(it)
    rest = list(it)
    assert untimed([first, *rest]) == untimed(v1.grade_source(CORPUS))


def test_an_iterator_left_early_stops_grading(v1):
    for i, _ in enumerate(v1.iter_source(CORPUS)):
        if i == 3:
            break
    # The pack grades on, the abandoned run having let go of it.
    assert len(v1.grade_source(EXAMPLE)) == 2


def test_named_sessions_grade_in_the_order_named(v1):
    ids = session_ids()[:5][::-1]
    ours = v1.grade_source(CORPUS, sessions=ids)
    assert [r["sessionId"] for r in ours] == ids
    theirs = cli_json("--rubric", "cleo-v1", "--source", CORPUS, *ids)
    assert untimed(ours) == untimed(theirs)


def test_dicts_grade_as_the_same_lines_in_a_file(v1):
    entries = read_jsonl(CORPUS)
    assert untimed(v1.grade_entries(entries)) == untimed(v1.grade_source(CORPUS))
    # Any iterable of dicts, a generator too.
    assert len(v1.grade_entries(e for e in read_jsonl(EXAMPLE))) == 2


def corpus_table(path=CORPUS):
    """The log as pyarrow reads JSON lines, the timestamp kept as text (as CLEO writes it)."""
    from pyarrow import json as pj

    schema = pa.schema([("timestamp", pa.string())])
    return pj.read_json(path, parse_options=pj.ParseOptions(explicit_schema=schema))


def test_an_arrow_table_grades_as_its_file():
    for pack_id in ("cleo-v1", "cleo-v2"):
        pack = grade.load_pack(pack_id)
        table = corpus_table()
        assert untimed(pack.grade_entries(table)) == untimed(pack.grade_source(CORPUS))


def test_a_dataframe_grades_as_its_file(v1):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(read_jsonl(EXAMPLE))
    assert untimed(v1.grade_entries(frame)) == untimed(v1.grade_source(EXAMPLE))
    frame = corpus_table().to_pandas()
    assert untimed(v1.grade_entries(frame)) == untimed(v1.grade_source(CORPUS))


def test_grade_arrow_is_a_row_a_session_with_the_results_numbers(v1):
    table = v1.grade_arrow(corpus_table())
    results = v1.grade_source(CORPUS)
    assert table.schema == v1.arrow_schema()
    assert table.column_names == [
        "sessionId", "totalScore", "maxScore", "percent", "grade",
        *v1.dimensions, "flags", "result", "error",
    ]
    assert table.num_rows == len(results)
    rows = table.to_pylist()
    for row, r in zip(rows, results):
        assert row["sessionId"] == r["sessionId"]
        assert row["totalScore"] == r["totalScore"]
        assert row["percent"] == r["percent"]
        assert row["grade"] == r.get("grade")
        assert row["flags"] == r["flags"]
        assert row["error"] is None
        for d in v1.dimensions:
            assert row[d] == r["dimensions"][d]["score"]
        assert untimed([json.loads(row["result"])]) == untimed([r])


# Errors, in the binary's words.


def test_an_unknown_pack_is_a_pack_error_with_the_binarys_message():
    with pytest.raises(grade.PackError) as err:
        grade.load_pack("no-such-pack")
    assert str(err.value) == cli_error("--rubric", "no-such-pack", "--source", EXAMPLE, "--all")


def test_a_broken_pack_is_a_pack_error_with_the_binarys_message(tmp_path):
    from conftest import FIXTURES

    broken = FIXTURES / "packs" / "broken-yaml"
    with pytest.raises(grade.PackError) as err:
        grade.load_pack(str(broken))
    code, _, stderr = __import__("conftest").run_cli(
        "--rubric", broken, "--source", EXAMPLE, "--all", "--no-record"
    )
    assert code != 0
    assert str(err.value).splitlines()[0] in stderr


def test_a_missing_source_is_a_source_error_with_the_binarys_message(v1, tmp_path):
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(grade.SourceError) as err:
        v1.grade_source(missing)
    assert str(err.value) == cli_error("--rubric", "cleo-v1", "--source", missing, "--all")


def test_an_unknown_format_is_refused_with_the_known_ones(v1):
    with pytest.raises(grade.SourceError) as err:
        v1.grade_source(EXAMPLE, source_format="nope")
    assert str(err.value).startswith("unknown source format `nope` (known: `auto`, ")


def test_a_session_not_in_the_source_is_refused_with_the_closest(v1):
    with pytest.raises(grade.SourceError) as err:
        v1.grade_source(EXAMPLE, sessions=["session-demo-god"])
    theirs = cli_error("--rubric", "cleo-v1", "--source", EXAMPLE, "session-demo-god")
    ours = str(err.value)
    assert ours.replace("`allow_empty=True`", "`--allow-empty`") == theirs
    assert "did you mean `session-demo-good`?" in ours


def write_lines(tmp_path, entries):
    """The entries as the binary would read them: a file named as messages name entries."""
    path = tmp_path / grade.ENTRIES_NAME
    path.write_text("".join(json.dumps(e, separators=(",", ":"), ensure_ascii=False) + "\n" for e in entries))
    return path


def assert_same_source_error(pack_id, entries, tmp_path, given=None):
    pack = grade.load_pack(pack_id)
    with pytest.raises(grade.SourceError) as err:
        pack.grade_entries(entries if given is None else given)
    write_lines(tmp_path, entries)
    theirs = cli_error("--rubric", pack_id, "--source", grade.ENTRIES_NAME, "--all", cwd=tmp_path)
    # The way out names the module's setting where the binary names its flag.
    assert str(err.value).replace("`skip_bad_lines=True`", "`--skip-bad-lines`") == theirs
    return str(err.value)


def test_an_entry_missing_a_field_is_refused_as_the_binary_refuses_its_line(tmp_path):
    entries = read_jsonl(EXAMPLE)[:3]
    del entries[1]["domain"]
    message = assert_same_source_error("cleo-v1", entries, tmp_path)
    assert message.startswith("entries:2: ")
    assert "`domain`" in message


def test_a_column_of_the_wrong_type_is_refused_as_its_lines_are(tmp_path):
    entries = read_jsonl(EXAMPLE)[:3]
    for e in entries:
        e["sessionId"] = 7
    table = pa.Table.from_pylist(entries)
    assert table.schema.field("sessionId").type == pa.int64()
    assert_same_source_error("cleo-v1", entries, tmp_path, given=table)


def test_a_null_session_id_is_refused_as_its_line_is(tmp_path):
    entries = read_jsonl(EXAMPLE)[:3]
    entries[2]["sessionId"] = None
    table = pa.Table.from_pylist(entries)
    message = assert_same_source_error("cleo-v1", entries, tmp_path, given=table)
    assert message.startswith("entries:3: ")
    pd = pytest.importorskip("pandas")
    with pytest.raises(grade.SourceError, match="^entries:3: "):
        grade.load_pack("cleo-v1").grade_entries(table.to_pandas())


def test_empty_entries_are_refused(v1):
    pd = pytest.importorskip("pandas")
    for empty in ([], pa.table({"sessionId": pa.array([], pa.string())}), pd.DataFrame()):
        with pytest.raises(grade.SourceError, match="^`entries` holds no sessions: nothing was graded$"):
            v1.grade_entries(empty)


def test_a_column_no_entry_field_holds_is_refused(v1):
    table = corpus_table().slice(0, 3)
    table = table.set_column(
        0, "timestamp", pa.array([1, 2, 3], pa.timestamp("ms"))
    )
    with pytest.raises(grade.SourceError, match="column `timestamp` holds timestamp"):
        v1.grade_entries(table)


def test_a_value_that_is_not_json_is_refused(v1):
    entries = read_jsonl(EXAMPLE)[:2]
    entries[1]["params"] = {"when": object()}
    with pytest.raises(grade.SourceError, match="^entries:2: the entry cannot be written as JSON"):
        v1.grade_entries(entries)


def test_a_file_given_as_entries_is_pointed_at_grade_source(v1):
    with pytest.raises(TypeError, match="grade_source"):
        v1.grade_entries(str(EXAMPLE))


def test_skipped_lines_are_warned_of_and_counted(v1, tmp_path):
    path = tmp_path / "audit.jsonl"
    path.write_text(EXAMPLE.read_text().replace("\n", "\nnot json\n", 1))
    with pytest.raises(grade.SourceError, match=r"audit.jsonl:2: .*\(pass `skip_bad_lines=True`"):
        v1.grade_source(path)
    with pytest.warns(grade.GradeWarning) as caught:
        results = v1.grade_source(path, skip_bad_lines=True)
    assert len(results) == 2
    # The line, where it is, as the CLI names it; then the count for the source.
    said = [str(w.message) for w in caught]
    assert any("audit.jsonl:2: skipped a malformed line: not valid JSON" in m for m in said), said
    assert any("skipped 1 malformed line of" in m for m in said), said


def test_an_empty_source_grades_nothing_and_says_so(v1, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    with pytest.warns(grade.GradeWarning, match="holds no sessions: nothing was graded"):
        assert v1.grade_source(path) == []


def test_a_session_that_fails_is_a_grade_error_carrying_the_others():
    pack = grade.load_pack(str(RUNAWAY))
    with pytest.raises(grade.GradeError) as err:
        pack.grade_source(EXAMPLE)
    message = str(err.value)
    assert "rubric `runaway`, rule `spin`, session `session-demo-sloppy`: the script failed: spin.rhai:3: too many operations" in message
    assert message.endswith("1 of 2 sessions could not be graded")
    assert [r["sessionId"] for r in err.value.results] == ["session-demo-good"]
    assert [s for s, _ in err.value.errors] == ["session-demo-sloppy"]
    # The iterator yields the graded ones first.
    seen = []
    with pytest.raises(grade.GradeError):
        for r in pack.iter_source(EXAMPLE):
            seen.append(r["sessionId"])
    assert seen == ["session-demo-good"]
    # As a table, a failed session is a row that says why.
    table = pack.grade_arrow(pa.Table.from_pylist(read_jsonl(EXAMPLE)), errors="row")
    rows = {r["sessionId"]: r for r in table.to_pylist()}
    assert rows["session-demo-good"]["error"] is None
    assert "too many operations" in rows["session-demo-sloppy"]["error"]
    assert rows["session-demo-sloppy"]["totalScore"] is None


def test_the_gil_is_released_while_grading(v1):
    # Another Python thread runs while a long grading is under way: with the GIL held it
    # could not run until the grading ended.
    entries = read_jsonl(CORPUS) * 20
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)

    data = "".join(json.dumps(e) + "\n" for e in entries).encode()
    t = threading.Thread(target=tick)
    t.start()
    before = len(ticks)
    # The native call alone: the Python around it would let the other thread run anyway.
    _, _, total, _, _ = v1._native.grade_jsonl("entries", data, False, False)
    during = len(ticks) - before
    done.set()
    t.join()
    assert total == len(v1.grade_source(CORPUS))
    assert during > 0


def test_search_path_finds_a_pack_by_id(tmp_path):
    from conftest import FIXTURES

    pack = grade.load_pack("runaway", rubric_path=FIXTURES / "packs")
    assert pack.id == "runaway"
    assert pack.digest.startswith("sha256:")
    assert "cleo-v1" in grade.builtin_packs()
