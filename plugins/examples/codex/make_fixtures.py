#!/usr/bin/env python3
"""Writes `rollout.jsonl`, a Codex CLI session rollout in the shape Codex CLI 0.5x–0.6x writes
(`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`), for this pack's tests. Run by
hand, not by CI. The session: look around, patch, a failing test run, a second patch, a
passing run, a plan update; with the lines Codex writes that are not entries (reasoning,
event messages, environment context, a `turn_context`).
"""
import json
from pathlib import Path

HERE = Path(__file__).parent / "pack" / "tests"
SID = "0199a213-81c0-7800-8aa1-bbab2a035a55"
lines = []
t = [0]


def ts():
    t[0] += 2
    return f"2025-10-05T14:{t[0] // 60:02d}:{t[0] % 60:02d}.{t[0] * 7 % 1000:03d}Z"


def line(kind, payload):
    lines.append({"timestamp": ts(), "type": kind, "payload": payload})


def shell(call_id, script, exit_code, output, seconds):
    line("response_item", {"type": "function_call", "name": "shell",
                           "arguments": json.dumps({"command": ["bash", "-lc", script],
                                                    "workdir": "/home/dev/inventory",
                                                    "timeout_ms": 120000}),
                           "call_id": call_id})
    line("response_item", {"type": "function_call_output", "call_id": call_id,
                           "output": json.dumps({"output": output,
                                                 "metadata": {"exit_code": exit_code,
                                                              "duration_seconds": seconds}})})


def patch(call_id, body):
    line("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": call_id,
                           "name": "apply_patch", "input": body})
    line("response_item", {"type": "custom_tool_call_output", "call_id": call_id,
                           "output": json.dumps({"output": "Success. Updated the following files:\nM inventory/stock.py\n",
                                                 "metadata": {"exit_code": 0, "duration_seconds": 0.0}})})


line("session_meta", {"id": SID, "timestamp": "2025-10-05T14:00:00.000Z", "cwd": "/home/dev/inventory",
                      "originator": "codex_cli_rs", "cli_version": "0.46.0",
                      "instructions": None, "git": {"branch": "main"}})
line("response_item", {"type": "message", "role": "user", "content": [
    {"type": "input_text", "text": "<environment_context>\n  <cwd>/home/dev/inventory</cwd>\n  <approval_policy>on-request</approval_policy>\n</environment_context>"}]})
line("response_item", {"type": "message", "role": "user", "content": [
    {"type": "input_text", "text": "restock() double counts returned items; fix it and keep the tests green"}]})
line("turn_context", {"cwd": "/home/dev/inventory", "approval_policy": "on-request", "model": "gpt-5-codex",
                      "summary": "auto"})
line("event_msg", {"type": "user_message", "message": "restock() double counts returned items"})
line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA..."})
shell("call_a1", "rg -n 'def restock' -g '*.py'", 0, "inventory/stock.py:41:def restock(item, qty, returned=0):\n", 0.1)
shell("call_a2", "sed -n '35,70p' inventory/stock.py", 0, "def restock(item, qty, returned=0):\n    item.count += qty + returned\n", 0.0)
line("response_item", {"type": "function_call", "name": "update_plan",
                       "arguments": json.dumps({"plan": [{"step": "Fix restock", "status": "in_progress"},
                                                         {"step": "Run tests", "status": "pending"}]}),
                       "call_id": "call_a3"})
line("response_item", {"type": "function_call_output", "call_id": "call_a3", "output": "Plan updated"})
patch("call_a4", "*** Begin Patch\n*** Update File: inventory/stock.py\n@@\n-    item.count += qty + returned\n+    item.count += qty\n*** End Patch\n")
shell("call_a5", "python -m pytest -q tests/test_stock.py", 1,
      "F.\nFAILED tests/test_stock.py::test_restock_returns - assert 5 == 7\n1 failed, 1 passed in 0.21s\n", 1.4)
line("event_msg", {"type": "token_count", "info": None})
patch("call_a6", "*** Begin Patch\n*** Update File: inventory/stock.py\n@@\n-    item.count += qty\n+    item.count += qty\n+    item.returned += returned\n*** Add File: tests/test_returns.py\n+def test_returned_kept_apart():\n+    pass\n*** End Patch\n")
shell("call_a7", "python -m pytest -q", 0, "...\n3 passed in 0.25s\n", 1.2)
line("response_item", {"type": "message", "role": "assistant", "content": [
    {"type": "output_text", "text": "Fixed: returned items are tracked apart from the restocked count; all tests pass."}]})

with open(HERE / "rollout.jsonl", "w") as f:
    for item in lines:
        f.write(json.dumps(item, separators=(",", ":")) + "\n")
