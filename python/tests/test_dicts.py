"""Results reach Python as dicts made in Rust, not parsed from JSON text: each must be
exactly what `json.loads` makes of the line the binary prints — the same keys in the same
order, an `int` where the text has an integer and a `float` where it has a fraction or an
exponent, the same floats, `None` for `null`. Equality of dicts would not see `1` against
`1.0` or keys out of order; `same` does."""

import json
import math

import pytest

import grade
from conftest import CORPUS, FIXTURES, run_cli

ODD = FIXTURES / "odd-sessions" / "audit.jsonl"
CODEX = FIXTURES / "agents" / "codex" / "localpush_redacted_12-41-04.jsonl"

# Half a point off per failed call out of 10.5: whole scores and fractions, and percentages
# with two decimals.
FRACTIONAL = """id: fractional
version: 0.1.0
name: Half points
selectors:
  failed: { success: false }
dimensions:
  - id: d
    max: 10.5
    start: 10.5
    rules:
      - id: half-off
        doc: half a point per failed call
        for_each: failed
        points: -0.5
"""


@pytest.fixture(scope="module")
def fractional(tmp_path_factory):
    folder = tmp_path_factory.mktemp("packs") / "fractional"
    folder.mkdir()
    (folder / "rubric.yaml").write_text(FRACTIONAL)
    return str(folder)


def same(ours, theirs, where="result"):
    """`ours` is `theirs` down to each value's type and each dict's key order."""
    assert type(ours) is type(theirs), f"{where}: {ours!r} against {theirs!r}"
    if isinstance(ours, dict):
        assert list(ours) == list(theirs), f"{where}: keys {list(ours)} against {list(theirs)}"
        for key in ours:
            same(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(ours, list):
        assert len(ours) == len(theirs), f"{where}: {len(ours)} items against {len(theirs)}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            same(a, b, f"{where}[{i}]")
    elif isinstance(ours, float):
        assert ours == theirs or (math.isnan(ours) and math.isnan(theirs)), f"{where}: {ours!r} against {theirs!r}"
        assert math.copysign(1, ours) == math.copysign(1, theirs), f"{where}: {ours!r} against {theirs!r}"
    else:
        assert ours == theirs, f"{where}: {ours!r} against {theirs!r}"


def cli_lines(*args, failing=False):
    """Each line `grade ARGS… --format jsonl` prints, as `json.loads` reads it; `failing`
    when some sessions cannot be graded (the command prints the others' and exits 1)."""
    code, out, err = run_cli(*args, "--format", "jsonl", "--no-record")
    assert code == (1 if failing else 0), err
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def untimed(result):
    return {k: v for k, v in result.items() if k != "timestamp"}


@pytest.mark.parametrize(
    "pack, source",
    [
        ("cleo-v1", CORPUS),
        ("cleo-v2", CORPUS),
        ("cleo-v1", ODD),
        ("cleo-v2", ODD),
        ("fractional", CORPUS),
        ("coding-agent-v1", CODEX),
    ],
    ids=["cleo-v1-corpus", "cleo-v2-corpus", "cleo-v1-odd", "cleo-v2-odd", "fractional", "coding-agent-codex"],
)
def test_a_result_dict_is_json_loads_of_the_binarys_line(pack, source, fractional):
    if pack == "fractional":
        pack = fractional
    # Some odd sessions cannot be graded (a number where a rule reads text): the others are.
    failing = source == ODD
    theirs = cli_lines("--rubric", pack, "--source", source, "--all", "--explain", failing=failing)
    loaded = grade.load_pack(pack)
    try:
        ours = loaded.grade_source(source, explain=True)
        assert not failing
    except grade.GradeError as err:
        assert failing
        ours = err.results
    assert len(ours) == len(theirs) > 0
    for a, b in zip(ours, theirs):
        same(untimed(a), untimed(b), f"result of `{b['sessionId']}`")
    # The iterator's dicts are made the same way.
    iterated = []
    try:
        for result in loaded.iter_source(source, explain=True):
            iterated.append(result)
    except grade.GradeError:
        assert failing
    assert len(iterated) == len(theirs)
    for a, b in zip(iterated, theirs):
        same(untimed(a), untimed(b), f"iterated result of `{b['sessionId']}`")


def test_fractional_scores_are_floats_and_whole_ones_ints(fractional):
    results = grade.load_pack(fractional).grade_source(CORPUS)
    kinds = {type(r["dimensions"]["d"]["score"]) for r in results}
    assert kinds == {int, float}
    assert float in {type(r["percent"]) for r in results}


def test_entries_in_memory_give_the_dicts_their_file_gives(tmp_path):
    lines = CORPUS.read_text().splitlines()[:400]
    pack = grade.load_pack("cleo-v2")
    ours = pack.grade_entries([json.loads(line) for line in lines])
    path = tmp_path / "audit.jsonl"
    path.write_text("\n".join(lines) + "\n")
    theirs = cli_lines("--rubric", "cleo-v2", "--source", path, "--all")
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        same(untimed(a), untimed(b))


def result_line(**changes):
    """A result as the binary writes one, with `changes` to its fields."""
    result = {
        "sessionId": "ses_1",
        "totalScore": 7.5,
        "maxScore": 10,
        "dimensions": {
            "d": {"score": 7.5, "max": 10, "evidence": ["half a point off"]},
        },
        "flags": [],
        "timestamp": "2026-03-01T00:00:00.000Z",
        "entryCount": 3,
        "evaluator": "grade-engine@0.1.0",
        "rubric": {"id": "x", "version": "1", "digest": "sha256:00"},
        "percent": 75,
    }
    result.update(changes)
    return json.dumps(result)


ODD_RESULTS = {
    "tenths": result_line(
        totalScore=0.1,
        maxScore=0.30000000000000004,
        percent=33.33,
        dimensions={
            "d": {"score": 0.1, "max": 0.3, "evidence": [], "normalized": 0.1, "weight": 1 / 3},
            "e": {"score": 1e-7, "max": 5e-324, "evidence": [], "normalized": 0.0, "weight": 1.0},
        },
    ),
    "extremes": result_line(
        totalScore=1.7976931348623157e308,
        maxScore=9.0e15,
        entryCount=2**64 - 1,
        skippedLines=2**63,
        percent=-0.5,
        dimensions={"d": {"score": -8999999999999999, "max": 8999999999999998.0, "evidence": []}},
    ),
    "negative-zero": result_line(
        totalScore=-0.0,
        percent=-0.0,
        dimensions={"d": {"score": -0.0, "max": 1, "evidence": [], "normalized": -0.0, "weight": 0.5}},
    ),
    "unicode": result_line(
        sessionId="séance 🦀 İstanbul \u2028 \ufeff \"quoted\" \\ \t",
        taskId="T\u00a0１",
        flags=["ΣΑΣ", "\u212a", ""],
        dimensions={"ü 🦀": {"score": 1, "max": 1, "evidence": ["\u0000 nul", "é"], "label": "ok"}},
        source="dir/ü.jsonl",
        grade="A+",
    ),
    "nothing-to-grade": result_line(
        totalScore=0, maxScore=0, percent=None, flags=["no-entries"], dimensions={}, entryCount=0
    ),
    "not-applicable": result_line(
        dimensions={"d": {"score": 0, "max": 10, "evidence": ["did not apply"], "notApplicable": True}}
    ),
    "judged": result_line(
        dimensions={
            "d": {
                "score": 3.5,
                "max": 5,
                "evidence": ["a"],
                "rationale": "because",
                "spread": {"min": 3, "max": 4.0, "sd": 0.5},
                "panel": [
                    {"judge": "openai:m", "score": 3, "evidence": [], "rationale": "r"},
                    {"judge": "cmd", "score": 4.25, "evidence": ["e"], "rationale": "", "spread": {"min": 0.1, "max": 0.2, "sd": 0.05}},
                ],
            }
        },
        judge={"model": "m", "runs": 2, "replies": 2, "inputTokens": 12345678901, "outputTokens": 0, "cached": 1},
    ),
    "panel": result_line(
        panel={"combine": "median", "judges": [{"model": "a", "runs": 1, "replies": 1, "inputTokens": 1, "outputTokens": 2, "cached": 0}]}
    ),
    "explained": result_line(
        explain={
            "d": [
                {"rule": "(start)", "points": 10},
                {
                    "rule": "half-off",
                    "points": -2.5,
                    "evidence": ["x"],
                    "flags": ["f"],
                    "entries": [
                        {"position": 1, "timestamp": "t", "operation": "tasks.add", "file": "a.jsonl", "line": 3},
                        {"position": 2, "timestamp": "t", "operation": "Bash", "rowId": 7, "toolUseId": "toolu_1", "place": "#2"},
                    ],
                    "trajectories": [
                        {
                            "metric": "m",
                            "value": 0.6666666666666666,
                            "matched": [{"agent": {"position": 1, "timestamp": "t", "operation": "o"}, "reference": {"position": 1, "name": "n"}}],
                            "missed": [],
                            "extra": [],
                        }
                    ],
                },
            ]
        }
    ),
}


@pytest.mark.parametrize("text", ODD_RESULTS.values(), ids=ODD_RESULTS.keys())
def test_odd_values_become_what_json_loads_makes_of_their_text(text):
    ours, line = grade._native._result_forms(text)
    same(ours, json.loads(line))


def test_keys_are_shared_between_results():
    results = grade.load_pack("cleo-v1").grade_source(CORPUS)
    a, b = (list(r) for r in results[:2])
    assert all(x is y for x, y in zip(a, b))


def test_grading_leaves_the_garbage_collector_as_it_found_it(tmp_path):
    # The collector is held off while results are made (they hold no cycles): it must run
    # again afterwards, after a failure too, and stay off for a caller who turned it off.
    import gc

    pack = grade.load_pack("cleo-v1")
    assert gc.isenabled()
    assert pack.grade_source(CORPUS)
    assert pack.grade_source(CORPUS, sessions=[pack.grade_source(CORPUS)[0]["sessionId"]])
    assert gc.isenabled()
    assert pack.grade_entries(json.loads(line) for line in CORPUS.read_text().splitlines()[:50])
    assert gc.isenabled()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sessionId": "s", "domain": "task"\n')
    with pytest.raises(grade.SourceError):
        pack.grade_source(bad, source_format="cleo-jsonl")
    assert gc.isenabled()
    gc.disable()
    try:
        assert pack.grade_source(CORPUS)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_results_are_made_old_without_thawing_what_the_caller_froze():
    # Results move to the collector's oldest generation when made (a collection of the young
    # one would only find that they all live), with `gc.freeze()` and `gc.unfreeze()`: never
    # when the caller has frozen objects, which `unfreeze` would thaw.
    import gc

    pack = grade.load_pack("cleo-v1")
    assert gc.get_freeze_count() == 0
    results = pack.grade_source(CORPUS)
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()
    assert gc.get_count()[0] < 1000, "the young generation still holds the results"
    assert all(gc.is_tracked(r) for r in results)
    frozen = [[] for _ in range(10)]
    gc.freeze()
    try:
        held = gc.get_freeze_count()
        assert pack.grade_source(CORPUS)
        assert gc.get_freeze_count() == held
    finally:
        gc.unfreeze()
    del frozen
