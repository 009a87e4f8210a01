"""Grading a Spark DataFrame of CLEO audit entries on the executors.

:func:`grade_dataframe` grades each session once, where its entries are, through PySpark's
grouped Arrow functions (``groupBy(session).applyInArrow``, Spark 4.0 or later): every
executor's Python worker compiles the pack from files sent with the job, checks that it is
the pack the driver loaded (its digest), and grades the session's entries with the engine,
as :meth:`grade.Pack.grade_arrow` does. The result is a DataFrame of one row per session with
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
    """The function each session's entries are given to, as a pyarrow Table."""

    def grade_session(table: Any) -> Any:
        import pyarrow as pa

        ids = table.column(session_col).unique().to_pylist() if table.num_rows else [None]
        try:
            pack = _worker_pack(shipped)
        except grade.Error as err:
            return _error_rows(pa, shipped, ids, str(err))
        table = table.sort_by([(order_col, "ascending")])
        if session_col != "sessionId":
            # The engine reads each entry's session from `sessionId`.
            if "sessionId" in table.column_names:
                table = table.drop_columns(["sessionId"])
            names = ["sessionId" if n == session_col else n for n in table.column_names]
            table = table.rename_columns(names)
        table = table.select([c for c in table.column_names if c in ENTRY_FIELDS])
        try:
            return pack.grade_arrow(table, errors="row")
        except grade.Error as err:
            # Entries that cannot be read (a null session id, a missing field): the
            # session's row says so.
            return _error_rows(pa, shipped, ids, str(err))

    return grade_session


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
) -> Any:
    """Grades every session of a Spark DataFrame of CLEO audit entries (the columns of
    CLEO's audit shape: ``timestamp``, ``sessionId``, ``domain``, ``operation``,
    ``params``, ``result``, ``metadata``, ``error``), one row per session.

    ``rubric`` is a pack id or path (loaded on the driver with ``rubric_path`` and
    ``allow_plugins`` as :func:`grade.load_pack` loads it) or a loaded :class:`grade.Pack`.
    ``session_col`` is the column sessions are grouped by; ``order_col`` orders each
    session's entries (by default the DataFrame's order, captured before grouping).

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
    schema = _spark_schema(pack)
    return df.groupBy(session_col).applyInArrow(
        _grade_group(shipped, session_col, order_col), schema
    )
