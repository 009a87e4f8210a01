"""`grade.spark.grade_dataframe` on Spark in local mode, over the conformance corpus: the
same result for every session as `Pack.grade_source` gives for the file, entries kept in
their order across partitions, and every session that cannot be graded a row that says why."""

import json
import os
import sys

import pytest

import grade
from conftest import CORPUS, EXAMPLE, read_jsonl, untimed

pyspark = pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

import grade.spark  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    # The workers run this interpreter, the one `grade` is installed in.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("grade-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    yield session
    session.stop()


def corpus_frame(spark, path=CORPUS, partitions=3):
    """The log as a DataFrame of several partitions, each a run of lines in file order (as
    a scan of one file split in parts reads it), `line` its line number."""
    rows = read_jsonl(path)
    for n, r in enumerate(rows, 1):
        r["line"] = n
    table = pa.Table.from_pylist(rows)
    frame = spark.createDataFrame(table).coalesce(partitions)
    return frame


def by_session(rows):
    return {r["sessionId"]: r for r in rows}


def test_every_session_grades_as_the_file_does_across_partitions(spark):
    pack = grade.load_pack("cleo-v1")
    frame = corpus_frame(spark).drop("line")
    assert frame.rdd.getNumPartitions() > 1
    out = grade.spark.grade_dataframe(frame, "cleo-v1")
    rows = [r.asDict() for r in out.collect()]
    expected = by_session(pack.grade_source(CORPUS))
    got = by_session(rows)
    assert set(got) == set(expected)
    for sid, row in got.items():
        assert row["error"] is None, row["error"]
        assert untimed([json.loads(row["result"])]) == untimed([expected[sid]])
        assert row["totalScore"] == expected[sid]["totalScore"]
        assert row["flags"] == expected[sid]["flags"]


def test_order_col_restores_the_order_a_shuffle_lost(spark):
    pack = grade.load_pack("cleo-v2")
    shuffled = corpus_frame(spark).orderBy(F.rand(seed=7)).repartition(4)
    out = grade.spark.grade_dataframe(shuffled, pack, order_col="line")
    got = by_session(r.asDict() for r in out.collect())
    expected = by_session(pack.grade_source(CORPUS))
    assert {s: untimed([json.loads(r["result"])])[0] for s, r in got.items()} == {
        s: untimed([r])[0] for s, r in expected.items()
    }


def test_a_session_that_cannot_be_read_is_a_row_that_says_why(spark):
    rows = read_jsonl(EXAMPLE)
    bad = [r for r in rows if r["sessionId"] == "session-demo-sloppy"][0]
    del bad["domain"]
    rows.append(dict(rows[0], sessionId=None))
    frame = spark.createDataFrame(pd.DataFrame(rows))
    out = [r.asDict() for r in grade.spark.grade_dataframe(frame, "cleo-v1").collect()]
    got = {r["sessionId"]: r for r in out}
    assert set(got) == {"session-demo-good", "session-demo-sloppy", None}
    assert got["session-demo-good"]["error"] is None
    assert "`domain`" in got["session-demo-sloppy"]["error"]
    assert got["session-demo-sloppy"]["totalScore"] is None
    assert "sessionId" in got[None]["error"]


def test_a_pack_that_is_not_the_drivers_is_refused_on_the_executor(spark):
    pack = grade.load_pack("cleo-v1")
    frame = spark.createDataFrame(pd.DataFrame(read_jsonl(EXAMPLE)))
    shipped_files = pack._files()
    # The driver's digest for files the executor will not compile to.
    wrong = dict(
        files=shipped_files, digest="sha256:0", builtin="cleo-v1", folder=None,
        allow_plugins=False, dimensions=pack.dimensions,
    )
    fn = grade.spark._grade_group(wrong, "sessionId", grade.spark.ORDER_COLUMN)
    frame = frame.withColumn(grade.spark.ORDER_COLUMN, F.monotonically_increasing_id())
    out = frame.groupBy("sessionId").applyInArrow(fn, grade.spark._spark_schema(pack))
    rows = [r.asDict() for r in out.collect()]
    assert len(rows) == 2
    for r in rows:
        assert "not the driver's `sha256:0`" in r["error"]


def test_a_missing_session_column_is_refused_on_the_driver(spark):
    frame = spark.createDataFrame(pd.DataFrame(read_jsonl(EXAMPLE)))
    with pytest.raises(grade.SourceError, match="no column `session`"):
        grade.spark.grade_dataframe(frame, "cleo-v1", session_col="session")


@pytest.mark.parametrize("groups", [1, 7])
def test_sessions_bucketed_together_grade_as_the_file_does(spark, groups):
    # One bucket holds every session (groups=1) or several (7): each session is still graded
    # whole and alone, as the command grades it.
    pack = grade.load_pack("cleo-v1")
    frame = corpus_frame(spark).drop("line")
    out = grade.spark.grade_dataframe(frame, pack, groups=groups)
    got = by_session(r.asDict() for r in out.collect())
    expected = by_session(pack.grade_source(CORPUS))
    assert set(got) == set(expected)
    assert {s: untimed([json.loads(r["result"])])[0] for s, r in got.items()} == {
        s: untimed([r])[0] for s, r in expected.items()
    }


def test_a_session_that_cannot_be_read_spares_the_sessions_of_its_bucket(spark):
    rows = read_jsonl(EXAMPLE)
    bad = [r for r in rows if r["sessionId"] == "session-demo-sloppy"][0]
    del bad["domain"]
    rows.append(dict(rows[0], sessionId=None))
    frame = spark.createDataFrame(pd.DataFrame(rows))
    alone = {
        r["sessionId"]: r.asDict()
        for r in grade.spark.grade_dataframe(frame, "cleo-v1", groups=3).collect()
    }
    together = {
        r["sessionId"]: r.asDict()
        for r in grade.spark.grade_dataframe(frame, "cleo-v1", groups=1).collect()
    }
    assert set(together) == {"session-demo-good", "session-demo-sloppy", None}
    assert together["session-demo-good"]["error"] is None
    assert together["session-demo-good"]["totalScore"] is not None
    # The bucket's failure is told per session, with the message the session alone gives.
    for sid in together:
        assert together[sid]["error"] == alone[sid]["error"]
    assert "`domain`" in together["session-demo-sloppy"]["error"]


@pytest.mark.parametrize("groups", [0, -1, 1.5, True])
def test_a_number_of_groups_that_is_no_count_is_refused(spark, groups):
    frame = spark.createDataFrame(pd.DataFrame(read_jsonl(EXAMPLE)))
    with pytest.raises(ValueError, match="groups must be a positive number"):
        grade.spark.grade_dataframe(frame, "cleo-v1", groups=groups)
