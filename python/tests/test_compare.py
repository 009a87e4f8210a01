"""`grade.compare` against `grade compare --format json`: the same report."""

import json

import pytest

import grade
from conftest import CORPUS, EXAMPLE, RUNAWAY, run_cli, session_ids


def cli_compare(*args):
    code, out, err = run_cli("compare", *args, "--format", "json")
    assert code in (0, 1), err
    return json.loads(out)


def test_two_packs_over_a_source_report_as_the_binary_reports():
    ours = grade.compare("cleo-v1", "cleo-v2", CORPUS)
    theirs = cli_compare("--rubric", "cleo-v1", "--rubric", "cleo-v2", "--source", CORPUS, "--all")
    assert ours == theirs
    assert ours["summary"]["n"] > 100


def test_named_sessions_pass_at_and_seed_are_the_flags():
    ids = session_ids()[:40]
    pack = grade.load_pack("cleo-v2")
    ours = grade.compare("cleo-v1", pack, CORPUS, sessions=ids, pass_at=70, seed=3)
    theirs = cli_compare(
        "--rubric", "cleo-v1", "--rubric", "cleo-v2", "--source", CORPUS,
        "--pass-at", "70", "--seed", "3", *ids,
    )
    assert ours == theirs
    assert ours["passAt"] == 70


def test_a_named_session_the_source_lacks_is_refused():
    with pytest.raises(grade.SourceError, match="^no entries for session `nope` in `"):
        grade.compare("cleo-v1", "cleo-v2", EXAMPLE, sessions="nope")


def test_grades_that_could_not_be_made_raise_with_the_report():
    with pytest.raises(grade.GradeError, match="1 grade could not be made$") as err:
        grade.compare("cleo-v1", str(RUNAWAY), EXAMPLE)
    assert "too many operations" in str(err.value)
    assert err.value.report["summary"]["n"] == 1
