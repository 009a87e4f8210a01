#!/usr/bin/env python3
"""A Claude Code transcript with N tool calls, a mix of what the claude-code-v1 rules read."""
import json, sys
n = int(sys.argv[1])
sid = "long"
out = sys.stdout
k = 0
def line(obj):
    out.write(json.dumps(obj, separators=(",", ":")) + "\n")
def base(kind, uuid):
    return {"type": kind, "sessionId": sid, "uuid": uuid, "parentUuid": None, "isSidechain": False,
            "cwd": "/work/app", "version": "2.0.28", "timestamp": "2025-10-01T09:00:01.000Z"}
line({**base("user", "u0"), "message": {"role": "user", "content": "Do the work"}})
i = 0
while i < n:
    f = i % 10
    kinds = [
        ("Read", {"file_path": f"/work/app/src/f{i % 997}.py"}),
        ("Edit", {"file_path": f"/work/app/src/f{(i - 1) % 997}.py", "old_string": "a", "new_string": "b"}),
        ("Bash", {"command": f"cat src/f{i % 991}.py | grep foo && ls", "description": "look"}),
        ("Grep", {"pattern": f"def f{i}", "path": "/work/app"}),
        ("Bash", {"command": "npm test"}),
        ("Read", {"file_path": f"/work/app/src/g{i}.py"}),
        ("Glob", {"pattern": f"**/*{i}.py"}),
        ("TodoWrite", {"todos": [{"content": "x", "status": "in_progress", "activeForm": "x"}]}),
        ("Write", {"file_path": f"/work/app/out{i}.txt", "content": "hello"}),
        ("Read", {"file_path": f"/work/app/src/f{i % 997}.py", "offset": 10, "limit": 20}),
    ]
    per_msg = 2 if i % 37 == 0 else 1
    uses = []
    for j in range(per_msg):
        name, inp = kinds[(i + j) % 10]
        uses.append({"type": "tool_use", "id": f"t{i + j}", "name": name, "input": inp})
    line({**base("assistant", f"a{i}"), "message": {"id": f"msg_{i}", "type": "message", "role": "assistant",
          "model": "claude-sonnet-4-5-20250929", "content": uses}})
    for j, u in enumerate(uses):
        err = (i + j) % 13 == 4
        line({**base("user", f"r{i + j}"), "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": u["id"], "content": "Error: failed" if err else "ok", **({"is_error": True} if err else {})}]}})
    i += per_msg
    if i % 50 == 0:
        line({**base("assistant", f"x{i}"), "message": {"id": f"msgt_{i}", "type": "message", "role": "assistant",
              "model": "claude-sonnet-4-5-20250929", "content": [{"type": "text", "text": "Done with that part."}]}})
        line({**base("user", f"y{i}"), "message": {"role": "user", "content": "Go on"}})
