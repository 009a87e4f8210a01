#!/usr/bin/env python3
"""Writes the Claude Code transcripts this pack's tests grade (run by hand, not by CI).

Two sessions in the shape Claude Code writes (`~/.claude/projects/<project>/<session>.jsonl`):
`careful` reads with the tools, edits with Edit and fixes a failing test before rerunning it;
`sloppy` retries a failing command nearly verbatim twice and writes files through the shell.
"""
import json
from pathlib import Path

HERE = Path(__file__).parent / "pack" / "tests"


def session(sid, calls):
    """calls: (tool name, input, error text or None), one assistant line each."""
    lines = [{"type": "user", "sessionId": sid, "uuid": f"{sid}-u0", "parentUuid": None,
              "timestamp": "2025-11-02T10:00:00.000Z", "cwd": "/work/app",
              "message": {"role": "user", "content": "make the failing test pass"}}]
    second = 1
    for i, (name, tool_input, error) in enumerate(calls):
        tid = f"toolu_{sid}_{i:02d}"
        lines.append({"type": "assistant", "sessionId": sid, "uuid": f"{sid}-a{i}",
                      "timestamp": f"2025-11-02T10:00:{second:02d}.000Z", "cwd": "/work/app",
                      "message": {"id": f"msg_{sid}_{i:02d}", "model": "claude-sonnet-4-5",
                                  "role": "assistant",
                                  "content": [{"type": "tool_use", "id": tid, "name": name,
                                               "input": tool_input}]}})
        result = {"type": "tool_result", "tool_use_id": tid,
                  "content": error if error else "ok"}
        if error:
            result["is_error"] = True
        lines.append({"type": "user", "sessionId": sid, "uuid": f"{sid}-r{i}",
                      "timestamp": f"2025-11-02T10:00:{second + 1:02d}.000Z", "cwd": "/work/app",
                      "message": {"role": "user", "content": [result]}})
        second += 2
    return lines


careful = session("careful", [
    ("Bash", {"command": "cargo test -p app 2>&1 | tail -20"}, "Exit code 101\ntest parse::dates ... FAILED"),
    ("Read", {"file_path": "/work/app/src/parse.rs"}, None),
    ("Edit", {"file_path": "/work/app/src/parse.rs", "old_string": "%d/%m", "new_string": "%m/%d"}, None),
    ("Bash", {"command": "cargo test -p app 2>&1 | tail -20"}, None),
    ("Bash", {"command": "git diff --stat"}, None),
])

sloppy = session("sloppy", [
    ("Bash", {"command": "pytest tests/test_api.py"}, "Exit code 1\nE   assert 404 == 200"),
    ("Bash", {"command": "pytest tests/test_api.py -x"}, "Exit code 1\nE   assert 404 == 200"),
    ("Bash", {"command": "pytest  tests/test_api.py -x"}, "Exit code 1\nE   assert 404 == 200"),
    ("Bash", {"command": "sed -i 's/404/200/' tests/test_api.py"}, None),
    ("Bash", {"command": "cat > app/routes.py <<'EOF'\nROUTES = {'/health': 'ok'}\nEOF"}, None),
    ("Bash", {"command": "pytest tests/test_api.py"}, None),
])

with open(HERE / "sessions.jsonl", "w") as f:
    for line in careful + sloppy:
        f.write(json.dumps(line) + "\n")
