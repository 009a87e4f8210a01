"""Type stub of `grade`: grade AI-agent sessions against rubric packs."""

import os
from typing import Any, Iterable, Iterator, List, Literal, Mapping, Optional, Sequence, Tuple, Union, overload

_Path = Union[str, "os.PathLike[str]"]
_Result = dict  # one result, as `grade --format json` prints it

__version__: str
ENTRIES_NAME: str
RESULT_COLUMNS: Tuple[str, ...]
TRAILING_COLUMNS: Tuple[str, ...]

class Error(Exception):
    """Anything `grade` refuses."""

class PackError(Error):
    """A rubric pack could not be found, read or compiled."""

class SourceError(Error):
    """A source (a file, in-memory entries) could not be read as sessions."""

class GradeError(Error):
    """Sessions could not be graded; the others' results are on the exception."""

    errors: List[Tuple[str, str]]
    results: List[_Result]

class GradeWarning(UserWarning):
    """What `grade` says on standard error as a warning."""

def builtin_packs() -> List[str]: ...
def load_pack(
    spec: _Path,
    rubric_path: Union[None, _Path, Sequence[_Path]] = None,
    allow_plugins: bool = False,
) -> Pack: ...

class Pack:
    @property
    def id(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def digest(self) -> str: ...
    @property
    def dimensions(self) -> List[str]: ...
    def grade_source(
        self,
        path: _Path,
        sessions: Union[None, str, Sequence[str]] = None,
        source_format: Optional[str] = None,
        *,
        skip_bad_lines: bool = False,
        allow_empty: bool = False,
        explain: bool = False,
    ) -> List[_Result]: ...
    def iter_source(
        self,
        path: _Path,
        source_format: Optional[str] = None,
        *,
        skip_bad_lines: bool = False,
        explain: bool = False,
    ) -> Iterator[_Result]: ...
    def grade_entries(
        self,
        entries: Union[Iterable[Mapping[str, Any]], Any],
        *,
        skip_bad_lines: bool = False,
        explain: bool = False,
    ) -> List[_Result]: ...
    def grade_arrow(
        self, table: Any, *, errors: Literal["raise", "row"] = "raise", explain: bool = False
    ) -> Any: ...
    def arrow_schema(self) -> Any: ...

@overload
def compare(
    base: Union[_Path, Pack],
    candidate: Union[_Path, Pack],
    source: _Path,
    sessions: Union[None, str, Sequence[str]] = None,
    source_format: Optional[str] = None,
    *,
    skip_bad_lines: bool = False,
    pass_at: Optional[float] = None,
    seed: int = 0,
    rubric_path: Union[None, _Path, Sequence[_Path]] = None,
    allow_plugins: bool = False,
) -> dict:
    """Two packs over the sessions of one source: `grade compare --rubric BASE --rubric
    CAND --source SOURCE --format json`."""

@overload
def compare(
    base: Iterable[Mapping[str, Any]],
    candidate: Iterable[Mapping[str, Any]],
    *,
    pass_at: Optional[float] = None,
    seed: int = 0,
    rubric_path: Union[None, _Path, Sequence[_Path]] = None,
    allow_plugins: bool = False,
    labels: Tuple[str, str] = ("baseline", "candidate"),
) -> dict:
    """Two lists of results (as `Pack.grade_source` returns them, or a grades file's
    lines): `grade compare BASE.jsonl CAND.jsonl --format json`, each side named by its
    label where the command names its file."""
