#!/usr/bin/env python3
"""Bench inputs for the coding-agent readers, made from the real files in tests/fixtures/agents.

    bench/gen_agents.py formats OUT [MB]   one folder per format under OUT, each the format's
                                           real files copied in turn until MB (default 100) MB
    bench/gen_agents.py codex-10k OUT [N]  N (default 10,000) copies of the real Codex rollout
                                           vct_codex_vscode_0.39.jsonl, laid out as
                                           ~/.codex/sessions keeps them (YYYY/MM/DD/rollout-*.jsonl)

A copy keeps its file's bytes except the ids a session is named by, which get the copy's number
(a session id found in two files is an error): Codex's `session_meta` id, Gemini CLI's
`sessionId`, OpenHands' `instance_id`, inspect_ai's `task_id`/`run_id` (in every member of an
`.eval` zip too), ATIF's `session_id`, an OpenTelemetry trace's trace ids and conversation ids;
SWE-agent trajectories and OpenHands event streams are named by their file, which each copy has
of its own. Nothing is written by hand: every record is a real one.
"""
import io
import json
import os
import re
import sys
import zipfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "agents")
# Folder under tests/fixtures/agents of each format's files, by `--source-format` name.
FORMATS = {
    "codex": "codex",
    "gemini-cli": "gemini-cli",
    "openhands": "openhands",
    "swe-agent": "swe-agent",
    "inspect-ai": "inspect_ai",
    "otel": "otel",
    "atif": "atif",
}
DATA = (".jsonl", ".json", ".traj", ".eval")


def keyed(text, key, n):
    """Every string value of `key` suffixed with `-n`."""
    pattern = re.compile(r'("' + re.escape(key) + r'"\s*:\s*")((?:[^"\\]|\\.)*)(")')
    return pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}-{n}{m.group(3)}", text)


def codex(text, n):
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if '"session_meta"' in line:
            lines[i] = re.sub(r'("id"\s*:\s*")([^"]*)(")', lambda m: f"{m.group(1)}{m.group(2)}-{n}{m.group(3)}", line, count=1)
            break
    return "\n".join(lines)


def otel(text, n):
    doc_ids, conversations = set(), set()

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                if k in ("traceID", "traceId", "trace_id") and isinstance(x, (str, int)):
                    doc_ids.add(x)
                walk(x)
            if v.get("key") in ("gen_ai.conversation.id", "session.id"):
                value = v.get("value")
                if isinstance(value, dict):
                    value = value.get("stringValue")
                if isinstance(value, str):
                    conversations.add(value)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    try:
        walk(json.loads(text))
    except ValueError:  # OTLP JSON lines: one document a line
        for line in text.splitlines():
            if line.strip():
                walk(json.loads(line))
    for old in doc_ids:
        if isinstance(old, int):
            text = re.sub(r"(?<![0-9])" + str(old) + r"(?![0-9])", str(old + n * 7919), text)
        elif re.fullmatch(r"[0-9a-fA-F]+", old):
            new = format((int(old, 16) + n * 0x9E3779B97F4A7C15) % (16 ** len(old)), f"0{len(old)}x")
            text = text.replace(f'"{old}"', f'"{new}"')
        else:
            text = text.replace(f'"{old}"', f'"{old}-{n}"')
    for old in conversations:
        text = text.replace(f'"{old}"', f'"{old}-{n}"')
    return text


def renamed(fmt, name, text, n):
    if fmt == "codex":
        return codex(text, n)
    if fmt == "gemini-cli":
        return keyed(text, "sessionId", n)
    if fmt == "openhands":
        # The resolver's output names a session by its issue (`owner/repo#number`).
        return keyed(keyed(text, "instance_id", n), "repo", n)
    if fmt == "inspect-ai":
        return keyed(keyed(text, "task_id", n), "run_id", n)
    if fmt == "atif":
        return keyed(text, "session_id", n)
    if fmt == "otel":
        return otel(text, n)
    return text  # swe-agent: named by its file


def copy(fmt, path, n):
    """The bytes of copy `n` of the real file at `path`."""
    raw = open(path, "rb").read()
    if path.endswith(".eval"):
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for item in src.infolist():
                data = src.read(item)
                if item.filename.endswith(".json"):
                    data = renamed(fmt, item.filename, data.decode("utf-8"), n).encode("utf-8")
                dst.writestr(item, data)
        return out.getvalue()
    return renamed(fmt, path, raw.decode("utf-8"), n).encode("utf-8")


def real_files(fmt):
    folder = os.path.join(ROOT, FORMATS[fmt])
    return sorted(
        os.path.join(folder, f)
        for f in os.listdir(folder)
        if f.endswith(DATA) and f not in ("counts.json",)
    )


def split_name(name):
    for ext in (".atif.json", ".jsonl", ".json", ".traj", ".eval"):
        if name.endswith(ext):
            return name[: -len(ext)], ext
    return os.path.splitext(name)


def formats(out, mb):
    for fmt in FORMATS:
        folder = os.path.join(out, fmt)
        os.makedirs(folder, exist_ok=True)
        files = real_files(fmt)
        total, n = 0, 0
        while total < mb * 1_000_000:
            for path in files:
                data = copy(fmt, path, n)
                stem, ext = split_name(os.path.basename(path))
                with open(os.path.join(folder, f"{stem}-{n:05}{ext}"), "wb") as f:
                    f.write(data)
                total += len(data)
            n += 1
        print(f"{fmt}\t{total}\t{n * len(files)}", file=sys.stderr)


def codex_10k(out, count):
    path = os.path.join(ROOT, "codex", "vct_codex_vscode_0.39.jsonl")
    text = open(path, encoding="utf-8").read()
    total = 0
    for n in range(count):
        # A hundred sessions a day, as ~/.codex/sessions/YYYY/MM/DD lays them out.
        day = n // 100
        folder = os.path.join(out, "2026", f"{day // 28 + 1:02}", f"{day % 28 + 1:02}")
        os.makedirs(folder, exist_ok=True)
        data = codex(text, n).encode("utf-8")
        with open(os.path.join(folder, f"rollout-2026-{n:05}.jsonl"), "wb") as f:
            f.write(data)
        total += len(data)
    print(f"codex-10k\t{total}\t{count}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("formats", "codex-10k"):
        sys.exit(__doc__)
    if sys.argv[1] == "formats":
        formats(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 100)
    else:
        codex_10k(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 10_000)
