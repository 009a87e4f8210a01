"""Grade AI-agent sessions against rubric packs, from Python.

The engine of the ``grade`` command as a module: a pack is loaded once with
:func:`load_pack`, then grades a source file (:meth:`Pack.grade_source`,
:meth:`Pack.iter_source`), entries already in memory (:meth:`Pack.grade_entries`: dicts in
CLEO's audit shape, a pyarrow Table or a pandas DataFrame) or a table into a table
(:meth:`Pack.grade_arrow`). Each result is the dict ``grade --format json`` prints for its
session: same keys, same numbers. Grading runs in Rust on every core, without the GIL.

Errors are exceptions whose messages are the command's: :class:`PackError` (a pack that
cannot be found or compiled), :class:`SourceError` (a source or entries that cannot be
read) and :class:`GradeError` (sessions that could not be graded; the others' results are
on the exception). What the command prints as a warning is a :class:`GradeWarning`.

>>> import grade
>>> pack = grade.load_pack("cleo-v1")
>>> results = pack.grade_source("examples/cleo-audit.jsonl")  # doctest: +SKIP
>>> results[0]["sessionId"], results[0]["percent"], results[0]["grade"]  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from ._native import Error, GradeError, PackError, SourceError

__all__ = [
    "Error",
    "GradeError",
    "GradeWarning",
    "Pack",
    "PackError",
    "SourceError",
    "builtin_packs",
    "compare",
    "load_pack",
]

__version__: str = _native.__version__

PathLike = Union[str, "os.PathLike[str]"]

#: How in-memory entries are named in messages: ``entries:3: …`` is the third entry.
ENTRIES_NAME = "entries"

#: The columns of :meth:`Pack.grade_arrow`'s table before the dimensions' scores.
RESULT_COLUMNS = ("sessionId", "totalScore", "maxScore", "percent", "grade")
#: The columns after them.
TRAILING_COLUMNS = ("flags", "result", "error")


class GradeWarning(UserWarning):
    """What ``grade`` says on standard error as a warning: lines skipped, sessions without
    entries, a source that held no session."""


def builtin_packs() -> List[str]:
    """The ids of the packs built into the engine (``cleo-v1``, ``cleo-v2``, …)."""
    return list(_native.builtin_packs())


def _search_path(rubric_path: Union[None, PathLike, Sequence[PathLike]]) -> List[str]:
    """The folders searched for a pack id: as given, or ``GRADE_RUBRIC_PATH`` (as the
    command reads it) when none is."""
    if rubric_path is None:
        value = os.environ.get("GRADE_RUBRIC_PATH", "")
        return [p for p in value.split(os.pathsep) if p]
    if isinstance(rubric_path, (str, os.PathLike)):
        return [os.fspath(rubric_path)]
    return [os.fspath(p) for p in rubric_path]


def load_pack(
    spec: PathLike,
    rubric_path: Union[None, PathLike, Sequence[PathLike]] = None,
    allow_plugins: bool = False,
) -> "Pack":
    """Finds and compiles a rubric pack, as ``grade --rubric SPEC`` does.

    ``spec`` is a shipped id (``"cleo-v1"``), an id found in the ``rubric_path`` folders
    (searched first; ``GRADE_RUBRIC_PATH`` when not given), or a pack folder's path. A pack
    that declares native plugins loads them only with ``allow_plugins=True``: they are code
    that runs with your rights.

    Raises :class:`PackError` with the command's message when the pack cannot be found,
    read or compiled.
    """
    text = os.fspath(spec)
    if isinstance(spec, os.PathLike) and os.sep not in text and "/" not in text:
        # A path object names a folder, even one spelled like an id.
        text = os.path.join(".", text)
    return Pack(_native.load_pack(text, _search_path(rubric_path), bool(allow_plugins)))


def _warn(messages: Iterable[str]) -> None:
    for message in messages:
        warnings.warn(message, GradeWarning, stacklevel=3)


def _results(graded: Any) -> List[dict]:
    """The results of a grading, its warnings issued; :class:`GradeError` when sessions
    could not be graded, carrying the others' results."""
    # Each result the dict `json.loads` makes of its JSON text, made in Rust.
    results, failed, total, warned, _skipped = graded
    _warn(warned)
    if failed:
        raise _grade_error(failed, total, results)
    return results


def _grade_error(failed: List[tuple], total: int, results: List[dict]) -> GradeError:
    lines = [message for _, message in failed]
    lines.append(_native.could_not_grade(len(failed), total))
    err = GradeError("\n".join(lines))
    err.errors = failed
    err.results = results
    return err


class Pack:
    """A compiled rubric pack. Grading with it is thread-safe and releases the GIL."""

    __slots__ = ("_native",)

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def id(self) -> str:
        """The pack's id (``cleo-v1``)."""
        return self._native.id

    @property
    def version(self) -> str:
        """The pack's version."""
        return self._native.version

    @property
    def name(self) -> str:
        """The pack's name."""
        return self._native.name

    @property
    def digest(self) -> str:
        """``sha256:`` over the pack's files: the digest its results carry."""
        return self._native.digest

    @property
    def dimensions(self) -> List[str]:
        """The ids of the pack's dimensions, in its order."""
        return list(self._native.dimensions)

    def __repr__(self) -> str:
        return f"<grade.Pack {self.id}@{self.version} {self.digest[:19]}>"

    def grade_source(
        self,
        path: PathLike,
        sessions: Union[None, str, Sequence[str]] = None,
        source_format: Optional[str] = None,
        *,
        skip_bad_lines: bool = False,
        allow_empty: bool = False,
        explain: bool = False,
    ) -> List[dict]:
        """Grades the sessions of a source: ``grade --rubric … --source PATH --all`` (or the
        ``sessions`` named, in the order named), each result the dict ``--format json``
        prints.

        ``source_format`` is a format name (``cleo-jsonl``, ``cleo-db``, ``claude-code``,
        ``langfuse``, a plugin's) or ``None`` to detect it. ``skip_bad_lines`` skips
        malformed lines with a warning (``--skip-bad-lines``); ``allow_empty`` grades a
        named session the source has no entries for (``--allow-empty``); ``explain`` adds
        each rule's trace (``--explain``).

        Raises :class:`SourceError` when the source cannot be read, and :class:`GradeError`
        when sessions could not be graded (``err.results`` holds the others').
        """
        if isinstance(sessions, str):
            sessions = [sessions]
        graded = self._native.grade_source(
            os.fspath(path),
            None if sessions is None else list(sessions),
            source_format,
            skip_bad_lines,
            allow_empty,
            explain,
        )
        return _results(graded)

    def iter_source(
        self,
        path: PathLike,
        source_format: Optional[str] = None,
        *,
        skip_bad_lines: bool = False,
        explain: bool = False,
    ) -> Iterator[dict]:
        """Grades every session of a source, yielding each result as soon as it and the
        sessions before it are graded: memory follows the sessions open at once, not the
        size of the source.

        A malformed line met late raises :class:`SourceError` after the results before it
        were yielded (the command holds its output back instead). Sessions that could not
        be graded raise :class:`GradeError` once every other result was yielded.
        """
        items = self._native.iter_source(
            os.fspath(path), source_format, skip_bad_lines, explain
        )
        failed = []
        total = 0
        for kind, value in items:
            if kind == "result":
                total += 1
                yield value
            elif kind == "failed":
                total += 1
                failed.append(tuple(value))
            else:
                warnings.warn(value, GradeWarning, stacklevel=2)
        if total == 0:
            warnings.warn(
                f"`{os.fspath(path)}` holds no sessions: nothing was graded",
                GradeWarning,
                stacklevel=2,
            )
        if failed:
            raise _grade_error(failed, total, [])

    def grade_entries(
        self,
        entries: Any,
        *,
        skip_bad_lines: bool = False,
        explain: bool = False,
    ) -> List[dict]:
        """Grades entries already in memory: an iterable of dicts in CLEO's audit-entry
        shape, a pyarrow Table (or RecordBatch, or anything with ``__arrow_c_stream__``) or a
        pandas DataFrame with those columns. Entries are grouped by ``sessionId``, sessions
        in the order of their first entry, each session's entries in the order given — as
        the command reads the same entries written one a line, and with its messages:
        ``entries:3: …`` names the third entry.

        In a table, a null is the field's absence: inside struct columns (``result``,
        ``metadata``, ``params``) null fields are left out, as entries that lacked them
        were written.
        """
        data = _entries_jsonl(entries)
        return _results(
            self._native.grade_jsonl(ENTRIES_NAME, data, skip_bad_lines, explain)
        )

    def grade_arrow(
        self, table: Any, *, errors: str = "raise", explain: bool = False
    ) -> Any:
        """Grades the entries of a pyarrow Table (or pandas DataFrame) into a pyarrow Table
        of one row per session: ``sessionId``, ``totalScore``, ``maxScore``, ``percent``,
        ``grade``, one column per dimension (its score, named by its id), ``flags``,
        ``result`` (the whole result as JSON text) and ``error``.

        With ``errors="raise"`` a session that could not be graded raises
        :class:`GradeError`; with ``errors="row"`` it is a row with its ``sessionId`` and
        the message in ``error``, the other columns null.
        """
        if errors not in ("raise", "row"):
            raise ValueError(f"errors must be 'raise' or 'row', not {errors!r}")
        import pyarrow as pa

        # The columns filled in Rust, not read again from each result's JSON text.
        columns, warned = self._native.grade_jsonl_table(
            ENTRIES_NAME, _entries_jsonl(table), False, explain
        )
        _warn(warned)
        if errors == "raise":
            failed = [(s, e) for s, e in zip(columns["ids"], columns["error"]) if e is not None]
            if failed:
                raise _grade_error(failed, len(columns["ids"]), [])
        return _results_table(pa, self.dimensions, columns)

    def arrow_schema(self) -> Any:
        """The schema of :meth:`grade_arrow`'s table for this pack."""
        import pyarrow as pa

        return _schema(pa, self.dimensions)

    def _files(self) -> dict:
        return dict(self._native.files())


def _schema(pa: Any, dimensions: Sequence[str]) -> Any:
    taken = set(RESULT_COLUMNS) | set(TRAILING_COLUMNS)
    clash = [d for d in dimensions if d in taken]
    if clash:
        raise GradeError(
            f"dimension `{clash[0]}` has the name of a column of the results table: "
            "read its score from the `result` column"
        )
    fields = [
        pa.field("sessionId", pa.string()),
        pa.field("totalScore", pa.float64()),
        pa.field("maxScore", pa.float64()),
        pa.field("percent", pa.float64()),
        pa.field("grade", pa.string()),
    ]
    fields += [pa.field(d, pa.float64()) for d in dimensions]
    fields += [
        pa.field("flags", pa.list_(pa.string())),
        pa.field("result", pa.string()),
        pa.field("error", pa.string()),
    ]
    return pa.schema(fields)


def _results_table(pa: Any, dimensions: Sequence[str], columns: Mapping[str, Any]) -> Any:
    """:meth:`Pack.grade_arrow`'s table of the columns ``grade_jsonl_table`` fills."""
    schema = _schema(pa, dimensions)
    by_name = {
        "sessionId": columns["ids"],
        "totalScore": columns["total"],
        "maxScore": columns["max"],
        "percent": columns["percent"],
        "grade": columns["grade"],
        **dict(zip(dimensions, columns["scores"])),
        "flags": columns["flags"],
        "result": columns["json"],
        "error": columns["error"],
    }
    return pa.table({f.name: by_name[f.name] for f in schema}, schema=schema)


# Entries in memory, as the lines of a CLEO audit log.


def _dumps(value: Any) -> str:
    # Compact, and text as written: the reader sees what `json.dumps` of a log line would.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_not_json)


def _not_json(value: Any) -> Any:
    raise TypeError(f"a value of type `{type(value).__name__}` is not JSON")


def _entries_jsonl(entries: Any) -> Any:
    """The entries as the bytes of a JSONL audit log, one entry a line: ``bytes``, or the
    lines of a table held in Rust (``bytes()`` of them gives theirs)."""
    if isinstance(entries, (str, bytes, os.PathLike)):
        raise TypeError(
            "grade_entries takes entries (dicts, a pyarrow Table, a pandas DataFrame); "
            "grade a file with grade_source"
        )
    table = _as_arrow(entries)
    if table is not None:
        # Written in Rust through Arrow's C stream interface, the same bytes as below;
        # `None` for a type only this module writes (or refuses, with its message).
        lines = _native.arrow_lines(table) if hasattr(table, "__arrow_c_stream__") else None
        if lines is not None:
            return lines
    return _rows_jsonl(_arrow_rows(table) if table is not None else entries)


def _rows_jsonl(rows: Iterable[Any]) -> bytes:
    """Entries (dicts, or a table's rows) as JSONL bytes, written by ``json.dumps``."""
    lines = []
    for n, row in enumerate(rows, 1):
        try:
            lines.append(_dumps(row))
        except (TypeError, ValueError) as err:
            raise SourceError(f"{ENTRIES_NAME}:{n}: the entry cannot be written as JSON: {err}") from None
    if not lines:
        return b""
    text = "\n".join(lines) + "\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (half of a character cut in two) has no UTF-8: written escaped,
        # the reader takes it as the command does, as U+FFFD with a warning.
        return ("\n".join(json.dumps(json.loads(line), separators=(",", ":")) for line in lines) + "\n").encode("ascii")


def _as_arrow(entries: Any) -> Any:
    """A pyarrow Table of ``entries`` when they are a table (pyarrow, pandas, anything with
    the Arrow PyCapsule stream interface); ``None`` for plain Python entries."""
    module = type(entries).__module__
    if module.startswith("pandas"):
        import pyarrow as pa

        if not hasattr(entries, "columns"):
            raise TypeError(f"grade_entries takes a DataFrame, not a pandas {type(entries).__name__}")
        return pa.Table.from_pandas(entries, preserve_index=False)
    if module.startswith("pyarrow"):
        import pyarrow as pa

        if isinstance(entries, pa.RecordBatch):
            return pa.Table.from_batches([entries])
        if isinstance(entries, pa.Table):
            return entries
    if hasattr(entries, "__arrow_c_stream__") and not isinstance(entries, (list, tuple)):
        import pyarrow as pa

        return pa.table(entries)
    return None


def _unwritable(kind: Any) -> Optional[Any]:
    """The first type inside ``kind`` that no JSON value is (a timestamp, binary, decimal…),
    or ``None``."""
    import pyarrow.types as t

    if t.is_struct(kind):
        for i in range(kind.num_fields):
            bad = _unwritable(kind.field(i).type)
            if bad is not None:
                return bad
        return None
    if t.is_list(kind) or t.is_large_list(kind) or t.is_fixed_size_list(kind):
        return _unwritable(kind.value_type)
    if t.is_map(kind):
        return _unwritable(kind.key_type) or _unwritable(kind.item_type)
    if t.is_dictionary(kind):
        return _unwritable(kind.value_type)
    if (
        t.is_null(kind)
        or t.is_boolean(kind)
        or t.is_integer(kind)
        or t.is_floating(kind)
        or t.is_string(kind)
        or t.is_large_string(kind)
        or (hasattr(t, "is_string_view") and t.is_string_view(kind))
    ):
        return None
    return kind


def _arrow_rows(table: Any) -> Iterator[dict]:
    """The rows of a table as entries: nulls inside structs left out, maps as objects."""
    for field in table.schema:
        bad = _unwritable(field.type)
        if bad is not None:
            raise SourceError(
                f"column `{field.name}` holds {bad}, which no field of an entry holds: "
                "entries hold text, numbers, booleans, lists and structs "
                "(a timestamp as ISO-8601 text, as CLEO writes it)"
            )
    has_map = any("map<" in str(f.type) for f in table.schema)
    for batch in table.to_batches(max_chunksize=65536):
        for row in batch.to_pylist():
            yield {
                k: (_clean(v, has_map) if isinstance(v, (dict, list)) else v)
                for k, v in row.items()
            }


def _clean(value: Any, has_map: bool) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v, has_map) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        if has_map and value and all(isinstance(x, tuple) and len(x) == 2 for x in value):
            return {k: _clean(v, has_map) for k, v in value}
        return [_clean(v, has_map) for v in value]
    return value


def compare(
    base: Union[PathLike, "Pack", Iterable[Mapping[str, Any]]],
    candidate: Union[PathLike, "Pack", Iterable[Mapping[str, Any]]],
    source: Optional[PathLike] = None,
    sessions: Union[None, str, Sequence[str]] = None,
    source_format: Optional[str] = None,
    *,
    skip_bad_lines: bool = False,
    pass_at: Optional[float] = None,
    seed: int = 0,
    rubric_path: Union[None, PathLike, Sequence[PathLike]] = None,
    allow_plugins: bool = False,
    labels: Tuple[str, str] = ("baseline", "candidate"),
) -> dict:
    """Compares two packs over the sessions of one source, or two lists of results, and
    returns the report ``grade compare --format json`` prints: the change of score with its
    confidence interval and tests, flips, the change per dimension and per rule, each
    session's change and, where the packs are known, how they differ.

    Two packs: ``base`` and ``candidate`` are packs or what :func:`load_pack` takes, and
    ``source`` is the file whose sessions both grade, as ``grade compare --rubric BASE
    --rubric CAND --source SOURCE`` (``sessions``, ``source_format`` and ``skip_bad_lines``
    as its flags).

    Two lists of results: ``base`` and ``candidate`` are lists of result dicts, as
    :meth:`Pack.grade_source` returns them or as read from the lines of a grades file (the
    last result of a session stands, as in ``grade compare BASE.jsonl CAND.jsonl``; CLEO's
    own results, which name no rubric, are compared too). There is no source. ``labels``
    name the two sides in the report and in messages, where the command names each file by
    its path: with the paths as labels, the report is the command's on those files. A
    result's pack is looked up by its rubric's id (in ``rubric_path``, then among the
    shipped packs) and used when its digest is the results'; rules are compared only when
    every result carries its trace (``explain=True``).

    ``pass_at`` is the percentage a session needs to pass (by default the baseline's lowest
    band needing half the points); ``seed`` seeds the bootstrap.

    Raises :class:`SourceError` when the source or a result cannot be read (or the source
    lacks a named session) and :class:`GradeError` when there is nothing to compare, or
    when grades could not be made (``err.report`` then holds the report of the others).
    """
    kinds = {_is_results(side) for side in (base, candidate)}
    if kinds == {True}:
        if source is not None or sessions is not None or source_format is not None or skip_bad_lines:
            raise TypeError(
                "results are compared as recorded: `source`, `sessions`, `source_format` and "
                "`skip_bad_lines` go with two packs"
            )
        text, warned, nothing = _compare_results(
            base, candidate, labels, pass_at, seed, rubric_path, allow_plugins
        )
        _warn(warned)
        if nothing is not None:
            raise GradeError(nothing)
        return json.loads(text)
    if kinds != {False}:
        raise TypeError("compare two packs over a source, or two lists of results, not one of each")
    if source is None:
        raise TypeError("two packs are compared over a source: give `source`")
    packs = []
    specs = []
    for side in (base, candidate):
        if isinstance(side, Pack):
            packs.append(side)
            specs.append(side.id)
        else:
            packs.append(load_pack(side, rubric_path=rubric_path, allow_plugins=allow_plugins))
            specs.append(os.fspath(side))
    if isinstance(sessions, str):
        sessions = [sessions]
    text, warned, errors, nothing = _native.compare_packs(
        packs[0]._native,
        specs[0],
        packs[1]._native,
        specs[1],
        os.fspath(source),
        None if sessions is None else list(sessions),
        source_format,
        skip_bad_lines,
        None if pass_at is None else float(pass_at),
        int(seed),
    )
    _warn(warned)
    if nothing is not None:
        # Said last, as the command says it after the grades it could not make.
        raise GradeError("\n".join([*errors, nothing]))
    report = json.loads(text)
    if errors:
        n = len(errors)
        err = GradeError("\n".join([*errors, f"{n} grade{'' if n == 1 else 's'} could not be made"]))
        err.report = report
        raise err
    return report


def _is_results(side: Any) -> bool:
    """Whether a side of :func:`compare` is results (any iterable but a pack, a path or a
    single result) rather than a pack."""
    if isinstance(side, (str, bytes, os.PathLike, Pack, Mapping)):
        return False
    return isinstance(side, Iterable)


def _compare_results(
    base: Iterable[Any],
    candidate: Iterable[Any],
    labels: Tuple[str, str],
    pass_at: Optional[float],
    seed: int,
    rubric_path: Union[None, PathLike, Sequence[PathLike]],
    allow_plugins: bool,
) -> Tuple[str, List[str], Optional[str]]:
    """The report of two lists of results as JSON text, the warnings, and why there is
    nothing to compare."""
    if (
        isinstance(labels, (str, bytes))
        or len(labels) != 2
        or not all(isinstance(label, str) for label in labels)
    ):
        raise TypeError("`labels` is two strings: the baseline's and the candidate's")
    return _native.compare_results(
        (
            (labels[0], _results_jsonl(labels[0], base)),
            (labels[1], _results_jsonl(labels[1], candidate)),
        ),
        None if pass_at is None else float(pass_at),
        int(seed),
        _search_path(rubric_path),
        bool(allow_plugins),
    )


def _results_jsonl(label: str, results: Iterable[Any]) -> str:
    """Results as the lines of a grades file, one a line; ASCII, so that a lone surrogate
    reaches the reader escaped, as JavaScript writes it."""
    lines = []
    for n, result in enumerate(results, 1):
        try:
            lines.append(json.dumps(result, separators=(",", ":"), default=_not_json))
        except (TypeError, ValueError) as err:
            raise SourceError(f"{label}:{n}: the result cannot be written as JSON: {err}") from None
    return "\n".join(lines)
