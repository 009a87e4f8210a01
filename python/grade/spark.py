"""Grading a Spark DataFrame of CLEO audit entries on the executors.

:func:`grade_dataframe` grades each session once, where its entries are, through PySpark's
grouped Arrow functions (``groupBy(…).applyInArrow``, Spark 4.0 or later): sessions are
hashed into ``groups`` buckets, and every executor's Python worker compiles the pack from
files sent with the job, checks that it is the pack the driver loaded (its digest), and
grades a bucket's sessions in one call of the engine, as :meth:`grade.Pack.grade_arrow`
does. A group per session paid Arrow's hand-over and a call into the engine for each one
(0.1 s a session on a loaded machine, 40 times the grading). The result is a DataFrame of one row per session with
:meth:`grade.Pack.grade_arrow`'s columns; a session that could not be graded (a script that
failed, entries that cannot be read, a pack that would not load there) is a row with its
session id and the message in ``error``, never a session dropped in silence.

Entries keep their order within a session, which the grade depends on (CLEO grades in log
order): without ``order_col`` the DataFrame's order as given is captured with
``monotonically_increasing_id`` before the shuffle that groups sessions, so give the
DataFrame as read (a Parquet or JSON-lines scan) or name a column that orders each session's
entries (``order_col``, such as a sequence number or the line's offset).

On a cluster the executors need the ``grade`` wheel: ``spark-submit --py-files`` cannot ship
a compiled extension, so install the wheel in the executors' Python (an environment packed
with ``venv-pack`` and given with ``--archives``, or ``%pip install grade-…whl`` on
Databricks, which installs on every node of the cluster).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import grade

#: The column that carries each entry's place in the DataFrame as given, while grouping.
ORDER_COLUMN = "__grade_order"

#: The column that carries each entry's bucket (a hash of its session id), while grouping.
GROUP_COLUMN = "__grade_group"

#: The fields of an entry in CLEO's audit shape: other columns (a partition column such as a
#: date, an ordering column) are not handed to the engine.
ENTRY_FIELDS = (
    "timestamp", "sessionId", "domain", "operation", "params", "result", "metadata", "error",
)

#: The worker's packs, by digest: compiled once per Python worker, not once per session.
_PACKS: dict = {}


def _spark_schema(pack: "grade.Pack") -> Any:
    from pyspark.sql import types as T

    arrow = pack.arrow_schema()
    fields = []
    for f in arrow:
        if f.name == "flags":
            kind = T.ArrayType(T.StringType())
        elif str(f.type) == "double":
            kind = T.DoubleType()
        else:
            kind = T.StringType()
        fields.append(T.StructField(f.name, kind, True))
    return T.StructType(fields)


def _worker_pack(shipped: dict) -> "grade.Pack":
    """The pack the driver loaded, compiled in this worker from the files sent with the job;
    :class:`grade.PackError` when it does not compile here, or compiles to another digest
    (an executor with another version of the engine would grade differently)."""
    digest = shipped["digest"]
    pack = _PACKS.get(digest)
    if pack is None:
        native = grade._native.pack_from_files(
            shipped["files"], shipped["builtin"], shipped["folder"], shipped["allow_plugins"]
        )
        pack = grade.Pack(native)
        if pack.digest != digest:
            raise grade.PackError(
                f"rubric `{pack.id}` compiles to digest `{pack.digest}` on this executor, "
                f"not the driver's `{digest}`: install the same `grade` (version "
                f"{grade.__version__} here) on the driver and every executor"
            )
        _PACKS[digest] = pack
    return pack


def _grade_group(shipped: dict, session_col: str, order_col: str):
    """The function each group's entries are given to, as a pyarrow Table: one session's
    or, bucketed by :func:`grade_dataframe`, many sessions', graded in one call."""

    def grade_sessions(table: Any) -> Any:
        import pyarrow as pa

        try:
            pack = _worker_pack(shipped)
        except grade.Error as err:
            ids = table.column(session_col).unique().to_pylist() if table.num_rows else [None]
            return _error_rows(pa, shipped, ids, str(err))
        # Each session's entries together and in their order: the engine groups a table's
        # entries by session in the order of their first entry, each in the order given.
        table = table.sort_by([(session_col, "ascending"), (order_col, "ascending")])
        try:
            return pack.grade_arrow(_entries(table, session_col), errors="row")
        except grade.Error:
            # Entries that cannot be read (a null session id, a missing field) refuse the
            # whole table: the bucket's sessions are graded one by one, so each row says
            # what its own session's entries say (``entries:N`` counted within it).
            return pa.concat_tables(
                [_grade_one(pa, pack, shipped, one, session_col) for one in _sessions(table, session_col)]
            )

    return grade_sessions


def _grade_one(pa: Any, pack: "grade.Pack", shipped: dict, table: Any, session_col: str) -> Any:
    try:
        return pack.grade_arrow(_entries(table, session_col), errors="row")
    except grade.Error as err:
        ids = table.column(session_col).unique().to_pylist() if table.num_rows else [None]
        return _error_rows(pa, shipped, ids, str(err))


def _sessions(table: Any, session_col: str) -> Any:
    """The runs of one session id of a table sorted by session (nulls a run of their own)."""
    ids = table.column(session_col).to_pylist()
    start = 0
    for i in range(1, len(ids) + 1):
        if i == len(ids) or ids[i] != ids[start]:
            yield table.slice(start, i - start)
            start = i


def _entries(table: Any, session_col: str) -> Any:
    """The columns of CLEO's audit shape, the session's named ``sessionId`` as the engine
    reads it."""
    if session_col != "sessionId":
        if "sessionId" in table.column_names:
            table = table.drop_columns(["sessionId"])
        names = ["sessionId" if n == session_col else n for n in table.column_names]
        table = table.rename_columns(names)
    return table.select([c for c in table.column_names if c in ENTRY_FIELDS])


def _error_rows(pa: Any, shipped: dict, ids: Sequence[Any], message: str) -> Any:
    schema = grade._schema(pa, shipped["dimensions"])
    columns = {f.name: [None] * len(ids) for f in schema}
    columns["sessionId"] = [None if i is None else str(i) for i in ids]
    columns["error"] = [message] * len(ids)
    return pa.table(columns, schema=schema)


def grade_dataframe(
    df: Any,
    rubric: Union[str, "grade.Pack"],
    session_col: str = "sessionId",
    order_col: Optional[str] = None,
    *,
    rubric_path: Any = None,
    allow_plugins: bool = False,
    groups: Optional[int] = None,
) -> Any:
    """Grades every session of a Spark DataFrame of CLEO audit entries (the columns of
    CLEO's audit shape: ``timestamp``, ``sessionId``, ``domain``, ``operation``,
    ``params``, ``result``, ``metadata``, ``error``), one row per session.

    ``rubric`` is a pack id or path (loaded on the driver with ``rubric_path`` and
    ``allow_plugins`` as :func:`grade.load_pack` loads it) or a loaded :class:`grade.Pack`.
    ``session_col`` is the column sessions are grouped by; ``order_col`` orders each
    session's entries (by default the DataFrame's order, captured before grouping).

    Sessions are hashed into ``groups`` buckets (by default ``spark.sql.shuffle.partitions``),
    each graded in one call of the engine; a session is never split between buckets, so the
    largest bucket, not the largest session, bounds a Python worker's memory — raise
    ``groups`` when buckets are too large to hold.

    The output has :meth:`grade.Pack.grade_arrow`'s columns: ``sessionId``,
    ``totalScore``, ``maxScore``, ``percent``, ``grade``, a score column per dimension,
    ``flags``, ``result`` (the result as JSON text) and ``error`` (null for a graded
    session, the message for one that could not be graded).
    """
    from pyspark.sql import functions as F

    pack = rubric if isinstance(rubric, grade.Pack) else grade.load_pack(
        rubric, rubric_path=rubric_path, allow_plugins=allow_plugins
    )
    kind, where = pack._native.origin
    shipped = {
        "files": pack._files(),
        "digest": pack.digest,
        "builtin": where if kind == "builtin" else None,
        "folder": where if kind == "folder" else None,
        "allow_plugins": bool(allow_plugins),
        "dimensions": pack.dimensions,
    }
    if session_col not in df.columns:
        raise grade.SourceError(
            f"the DataFrame has no column `{session_col}` to group sessions by "
            f"(it has {', '.join(f'`{c}`' for c in df.columns)})"
        )
    if order_col is None:
        # Before any shuffle: the id grows with the partition and the row within it, so it
        # is the order the entries were read in.
        order_col = ORDER_COLUMN
        df = df.withColumn(order_col, F.monotonically_increasing_id())
    elif order_col not in df.columns:
        raise grade.SourceError(f"the DataFrame has no column `{order_col}` to order entries by")
    if groups is None:
        groups = _shuffle_partitions(df)
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ValueError(f"groups must be a positive number of buckets, not {groups!r}")
    # xxhash64 is Spark's own, the same on every executor and release: a session's entries
    # all land in one bucket.
    df = df.withColumn(GROUP_COLUMN, F.pmod(F.xxhash64(F.col(session_col)), F.lit(groups)))
    schema = _spark_schema(pack)
    return df.groupBy(GROUP_COLUMN).applyInArrow(
        _grade_group(shipped, session_col, order_col), schema
    )


def _shuffle_partitions(df: Any) -> int:
    """``spark.sql.shuffle.partitions``, or Spark's default of 200 when it is not a number
    (``auto`` on platforms that size shuffles themselves)."""
    value = df.sparkSession.conf.get("spark.sql.shuffle.partitions", "200")
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return 200
