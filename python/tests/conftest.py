"""What the tests of the Python module share: the repository's fixtures, and the `grade`
binary whose output the module must reproduce (`target/debug/grade`, built by `cargo test`
or `cargo build`; `GRADE_BIN` names another)."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
CORPUS = FIXTURES / "conformance" / "audit.jsonl"
EXAMPLE = REPO / "examples" / "cleo-audit.jsonl"
RUNAWAY = FIXTURES / "packs" / "runaway"


def grade_bin() -> str:
    path = os.environ.get("GRADE_BIN") or str(REPO / "target" / "debug" / "grade")
    if not Path(path).is_file():
        pytest.fail(f"the `grade` binary is not at {path}: build it with `cargo build -p grade-cli` (or set GRADE_BIN)")
    return path


def run_cli(*args, cwd=None):
    """`grade ARGS…`: (exit code, stdout, stderr)."""
    out = subprocess.run(
        [grade_bin(), *map(str, args)], capture_output=True, text=True, cwd=cwd
    )
    return out.returncode, out.stdout, out.stderr


def cli_json(*args, cwd=None):
    """The results `grade ARGS… --format json --no-record` prints, which must succeed."""
    code, out, err = run_cli(*args, "--format", "json", "--no-record", cwd=cwd)
    assert code == 0, err
    return json.loads(out)


def uncoded(stderr):
    """What the binary wrote to stderr, each `error[E104]: ` said `error: `: the module's
    exceptions carry the message, and the code is the binary's label of it."""
    return re.sub(r"(?m)^error\[[EW][0-9]{3}\]: ", "error: ", stderr)


def cli_error(*args, cwd=None):
    """The first error `grade ARGS…` prints (without `error[CODE]: `), which must fail."""
    code, _, err = run_cli(*args, "--format", "json", "--no-record", cwd=cwd)
    assert code != 0, err
    lines = [l for l in uncoded(err).splitlines() if l.startswith("error: ")]
    assert lines, err
    return lines[0][len("error: "):]


def untimed(results):
    """Results without the instant they were made: the one field two runs differ in."""
    return [{k: v for k, v in r.items() if k != "timestamp"} for r in results]


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def session_ids():
    return [l for l in (FIXTURES / "conformance" / "sessions.txt").read_text().splitlines() if l]
