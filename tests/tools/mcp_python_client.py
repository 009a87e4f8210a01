"""Drive `grade mcp` with the official MCP Python SDK's stdio client, as a real agent host would.

Not run by CI (it needs `pip install mcp`). Run from the repository root after `cargo build`:

    python3 -m venv /tmp/mcpvenv && /tmp/mcpvenv/bin/pip install mcp
    /tmp/mcpvenv/bin/python tests/tools/mcp_python_client.py target/debug/grade .

It lists the tools, grades a session of examples/cleo-audit.jsonl and checks the structured
result equals `grade --format json` for the same session, provokes two errors (a bad rubric, a
missing source) and shows the server still answers after them. It exits 1 when any of that fails.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

EXAMPLE = "examples/cleo-audit.jsonl"
SESSION = "session-demo-sloppy"


async def main(grade: str, repo: str) -> int:
    grades = os.path.join(tempfile.mkdtemp(), "GRADES.jsonl")
    params = StdioServerParameters(command=grade, args=["mcp", "--grades", grades], cwd=repo)
    failures = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print("server:", init.server_info.name, init.server_info.version,
                  "protocol", init.protocol_version)
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            for t in tools.tools:
                print("tool:", t.name, "| required:", t.input_schema.get("required"),
                      "| output schema:", bool(t.output_schema))
            if names != ["grade", "grade_list", "rubric_list", "rubric_show"]:
                failures.append(f"tools: {names}")

            r = await session.call_tool("grade", {"sessionId": SESSION, "source": EXAMPLE})
            print("grade isError:", r.is_error)
            print(r.content[0].text.split("\n\n")[0])
            cli = json.loads(subprocess.run(
                [grade, "--rubric", "cleo-v1", "--source", EXAMPLE, "--format", "json",
                 "--no-record", SESSION],
                cwd=repo, capture_output=True, text=True, check=True).stdout)
            got = dict(r.structured_content or {})
            got.pop("timestamp", None)
            cli.pop("timestamp", None)
            same = got == cli
            print("structuredContent == grade --format json:", same)
            if r.is_error or not same:
                failures.append("grade differs from the CLI")

            for args in ({"sessionId": SESSION, "rubric": "cleo-v9", "source": EXAMPLE},
                         {"sessionId": SESSION, "source": "nowhere.jsonl"}):
                r = await session.call_tool("grade", args)
                print("error isError:", r.is_error, "|", r.content[0].text)
                if not r.is_error:
                    failures.append(f"no tool error for {args}")

            r = await session.call_tool("grade_list", {"sessionId": SESSION})
            count = len((r.structured_content or {}).get("grades", []))
            print("grade_list after the errors:", count, "grade(s)")
            if count != 1:
                failures.append(f"grade_list: {count} grades")
            r = await session.call_tool("rubric_show", {"rubric": "cleo-v1"})
            print("rubric_show:", r.content[0].text.splitlines()[0])
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(os.path.abspath(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else ".")))
