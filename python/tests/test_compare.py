"""`grade.compare` against `grade compare --format json`: the same report."""

import json

import pytest

import grade
from conftest import CORPUS, EXAMPLE, RUNAWAY, run_cli, session_ids, uncoded


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
    # The session the candidate could not grade is left out, and said so as the command says it.
    with pytest.warns(grade.GradeWarning, match=r"^1 session only in the baseline \(`session-demo-sloppy`\)"):
        with pytest.raises(grade.GradeError, match="1 grade could not be made$") as err:
            grade.compare("cleo-v1", str(RUNAWAY), EXAMPLE)
    assert "too many operations" in str(err.value)
    assert err.value.report["summary"]["n"] == 1


# Two lists of results: the report `grade compare BASE.jsonl CAND.jsonl` makes of the same
# results in files, each side labelled with its file's path as the command labels it.

from conftest import FIXTURES, read_jsonl


def write_jsonl(path, results):
    path.write_text("".join(json.dumps(r) + "\n" for r in results))
    return str(path)


def test_results_graded_here_compare_as_the_binary_compares_their_files(tmp_path):
    base = grade.load_pack("cleo-v1").grade_source(CORPUS, explain=True)[:60]
    cand = grade.load_pack("cleo-v2").grade_source(CORPUS, explain=True)[:60]
    a = write_jsonl(tmp_path / "v1.jsonl", base)
    b = write_jsonl(tmp_path / "v2.jsonl", cand)
    ours = grade.compare(base, cand, labels=(a, b), pass_at=65, seed=7)
    theirs = cli_compare(a, b, "--pass-at", "65", "--seed", "7")
    assert ours == theirs
    # The packs were found by their digests: the rules and the rubric's changes are known.
    assert ours["rubricDiff"] is not None
    assert ours["rules"] and ours["summary"]["n"] == 60


def test_cleos_own_results_compare_as_the_binary_compares_them():
    a = str(FIXTURES / "conformance" / "cleo-v1.expected.jsonl")
    b = str(FIXTURES / "conformance" / "cleo-v2.expected.jsonl")
    with pytest.warns(grade.GradeWarning) as warned:
        ours = grade.compare(read_jsonl(a), read_jsonl(b), labels=(a, b))
    assert ours == cli_compare(a, b)
    # Named after the file, as the command names them.
    assert ours["baseline"]["rubric"]["id"] == "cleo-v1.expected"
    said = [str(w.message) for w in warned]
    assert any("name no rubric (CLEO's own grader writes them so)" in m for m in said), said


def test_the_last_result_of_a_session_stands_and_labels_name_the_sides():
    results = read_jsonl(FIXTURES / "conformance" / "cleo-v1.expected.jsonl")[:5]
    zero = json.loads(json.dumps(results[0]))
    for dimension in zero["dimensions"].values():
        dimension["score"] = 0
    zero["totalScore"] = 0
    later = [zero]
    with pytest.warns(grade.GradeWarning) as warned:
        report = grade.compare(results, results + later)
    said = [str(w.message) for w in warned]
    assert "`candidate` grades 1 session more than once; the last grade of each is compared" in said
    assert (
        "6 results in `candidate` name no rubric (CLEO's own grader writes them so); "
        "they are labelled `candidate` after the side's label"
    ) in said
    # The module's keywords, not the command's flags.
    assert (
        "`baseline` and `candidate` hold results without rule traces: changes are put down to "
        "dimensions, not rules (a grades file never keeps traces; grade them with `explain=True`)"
    ) in said
    assert (
        "the baseline's pack is not at hand, so its grade bands are unknown: a session passes "
        "at 50% (set it with `pass_at=`)"
    ) in said
    assert report["baseline"]["label"] == "baseline"
    assert report["candidate"]["label"] == "candidate"
    assert report["summary"]["regressed"] == 1


def test_a_result_that_is_not_one_is_refused_in_the_binarys_words(tmp_path):
    results = read_jsonl(FIXTURES / "conformance" / "cleo-v1.expected.jsonl")[:3]
    broken = [results[0], {k: v for k, v in results[1].items() if k not in ("flags", "maxScore")}]
    a = write_jsonl(tmp_path / "a.jsonl", results)
    b = write_jsonl(tmp_path / "b.jsonl", broken)
    code, _, err = run_cli("compare", a, b, "--format", "json")
    assert code == 2
    with pytest.raises(grade.SourceError) as raised:
        grade.compare(results, broken, labels=(a, b))
    assert f"error: {raised.value}\n" in uncoded(err)
    assert str(raised.value) == f"{b}:2: not a grade result: missing fields `maxScore`, `flags`"


def test_results_without_a_session_in_common_have_nothing_to_compare():
    results = read_jsonl(FIXTURES / "conformance" / "cleo-v1.expected.jsonl")[:4]
    with pytest.raises(grade.GradeError, match="^nothing to compare: the two sides have no session id in common$"):
        with pytest.warns(grade.GradeWarning):
            grade.compare(results[:2], results[2:])


def test_a_pack_and_a_list_or_a_list_with_a_source_are_refused():
    results = read_jsonl(FIXTURES / "conformance" / "cleo-v1.expected.jsonl")[:2]
    with pytest.raises(TypeError, match="not one of each"):
        grade.compare("cleo-v1", results, CORPUS)
    with pytest.raises(TypeError, match="go with two packs"):
        grade.compare(results, results, CORPUS)
    with pytest.raises(TypeError, match="give `source`"):
        grade.compare("cleo-v1", "cleo-v2")
    with pytest.raises(TypeError, match="`labels` is two strings"):
        grade.compare(results, results, labels="ab")


def cli_warnings(err):
    """The warnings the command printed on stderr, without their `warning: `."""
    return [line[len("warning: "):] for line in err.splitlines() if line.startswith("warning: ")]


def as_the_command_words_it(message):
    """A warning of the module with the command's words for a way out: the module names its
    keywords where the command names its flags, and a side's label where it names a file."""
    for ours, theirs in [
        ("after the side's label", "after the file"),
        ("grade them with `explain=True`", "write results with `grade … --all --explain --format jsonl -o FILE`"),
        ("`pass_at=`", "`--pass-at`"),
    ]:
        message = message.replace(ours, theirs)
    return message


def test_sessions_of_one_side_only_are_warned_of_in_the_binarys_words(tmp_path):
    results = read_jsonl(FIXTURES / "conformance" / "cleo-v1.expected.jsonl")[:8]
    a = write_jsonl(tmp_path / "a.jsonl", results[:6])
    b = write_jsonl(tmp_path / "b.jsonl", results[1:8])
    code, out, err = run_cli("compare", a, b, "--pass-at", "60", "--format", "json")
    assert code == 0, err
    with pytest.warns(grade.GradeWarning) as warned:
        ours = grade.compare(results[:6], results[1:8], labels=(a, b), pass_at=60)
    assert ours == json.loads(out)
    said = [str(w.message) for w in warned]
    first, second = results[0]["sessionId"], results[6]["sessionId"]
    left_out = [
        f"1 session only in the baseline (`{first}`): listed under `unmatched`, not compared",
        f"2 sessions only in the candidate (`{second}`, `{results[7]['sessionId']}`): "
        "listed under `unmatched`, not compared",
    ]
    assert said[-2:] == left_out
    # Every warning the command gives, in its order.
    assert [as_the_command_words_it(m) for m in said] == cli_warnings(err)
    assert ours["unmatched"]["baseline"] == [first]


def test_nothing_to_compare_is_raised_after_the_warnings_of_what_was_left_out(tmp_path):
    results = read_jsonl(FIXTURES / "conformance" / "cleo-v1.expected.jsonl")[:4]
    a = write_jsonl(tmp_path / "a.jsonl", results[:2])
    b = write_jsonl(tmp_path / "b.jsonl", results[2:])
    code, _, err = run_cli("compare", a, b, "--pass-at", "60", "--format", "json")
    assert code == 2
    with pytest.warns(grade.GradeWarning) as warned:
        with pytest.raises(grade.GradeError) as raised:
            grade.compare(results[:2], results[2:], labels=(a, b), pass_at=60)
    said = [str(w.message) for w in warned]
    assert uncoded(err).splitlines()[-1] == f"error: {raised.value}"
    assert [as_the_command_words_it(m) for m in said] == cli_warnings(err)
    assert any(m.startswith("2 sessions only in the baseline") for m in said), said


def test_two_packs_warn_of_what_the_source_read_skipped_as_the_binary_does(tmp_path):
    lines = EXAMPLE.read_text().splitlines()
    source = tmp_path / "audit.jsonl"
    source.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    code, out, err = run_cli(
        "compare", "--rubric", "cleo-v1", "--rubric", "cleo-v2", "--source", source,
        "--all", "--skip-bad-lines", "--format", "json",
    )
    assert code == 0, err
    with pytest.warns(grade.GradeWarning) as warned:
        ours = grade.compare("cleo-v1", "cleo-v2", source, skip_bad_lines=True)
    assert ours == json.loads(out)
    # The command says how many lines it skipped after its report; the module as it reads.
    assert sorted(str(w.message) for w in warned) == sorted(cli_warnings(err))
