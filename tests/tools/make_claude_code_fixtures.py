#!/usr/bin/env python3
"""Writes the verdict fixtures of rubrics/claude-code-v1/tests/rules/ that are shaped like the real transcripts in
tests/real/ (Claude Code 1.0.98 and 2.0.28 line shapes). Run by hand; CI reads the output.

    python3 tests/tools/make_claude_code_fixtures.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = os.path.join(HERE, "..", "..", "rubrics", "claude-code-v1", "tests", "rules")


class Session:
    def __init__(self, sid, version="2.0.28", cwd="/work/app"):
        self.sid, self.version, self.cwd = sid, version, cwd
        self.lines, self.n, self.prev = [], 0, None

    def _line(self, kind, message, sidechain=False, parent=None, extra=None):
        self.n += 1
        uuid = f"{self.sid}-{self.n:03d}"
        line = {
            "type": kind, "sessionId": self.sid, "uuid": uuid,
            "parentUuid": parent if parent is not None else self.prev,
            "isSidechain": sidechain, "cwd": self.cwd, "version": self.version,
            "timestamp": f"2025-10-01T09:{self.n // 60:02d}:{self.n % 60:02d}.000Z",
            "message": message,
        }
        if extra:
            line.update(extra)
        self.lines.append(line)
        self.prev = uuid
        return uuid

    def user(self, text, **kw):
        return self._line("user", {"role": "user", "content": text}, **kw)

    def say(self, text, **kw):
        return self._line("assistant", {
            "id": f"msg_{self.sid}_{self.n + 1}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": text}]}, **kw)

    def call(self, name, tool_input, result="ok", error=False, **kw):
        tid = f"toolu_{self.sid.replace('-', '_')}_{self.n + 1:03d}"
        self._line("assistant", {
            "id": f"msg_{self.sid}_{self.n + 1}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "tool_use", "id": tid, "name": name, "input": tool_input}]}, **kw)
        block = {"type": "tool_result", "tool_use_id": tid, "content": result}
        if error:
            block["is_error"] = True
        return self._line("user", {"role": "user", "content": [block]}, **kw)


def write(name, sessions):
    with open(os.path.join(RULES, name + ".jsonl"), "w") as f:
        for s in sessions:
            for line in s.lines:
                f.write(json.dumps(line) + "\n")


# `cat > file << 'EOF'` and `echo … > file` write files: the advice is Write, not Read. The
# here-document's body (which holds an `ls` line) is text, not a command; descriptors and
# /dev/null are no files.
s = Session("rule-bash-writes")
s.user("Add a CHANGELOG and note the port change")
s.call("Bash", {"command": "cat > CHANGELOG.md << 'EOF'\n# Changelog\n\n- ls -la no longer lists dotfiles\nEOF",
                "description": "Create CHANGELOG.md"})
s.call("Bash", {"command": "echo '- port is 8080' >> CHANGELOG.md", "description": "Append a line"})
s.call("Bash", {"command": "npm test 2>&1 && echo done > /dev/null", "description": "Run the tests"})
s.call("Bash", {"command": "git status", "description": "Show status"})
write("bash_writes", [s])

# A failed Bash call repeated with the same command and only a new description is a blind
# retry (Claude Code fills `description` in anew on every call).
s = Session("rule-retry-description")
s.user("Run the migrations")
s.call("Bash", {"command": "npm run migrate", "description": "Run migrations"},
       result="Error: connect ECONNREFUSED 127.0.0.1:5432", error=True)
s.call("Bash", {"command": "npm run migrate", "description": "Retry the migrations"},
       result="Error: connect ECONNREFUSED 127.0.0.1:5432", error=True)
s.call("Bash", {"command": "pg_isready -h 127.0.0.1", "description": "Check the database"},
       result="127.0.0.1:5432 - no response", error=True)
s.say("The database at 127.0.0.1:5432 is not running, so the migrations failed; start it and I will run them again.")
write("retry_description", [s])

# Claude Code 1.0.98 keeps subagents' lines in the main file, marked `isSidechain` and linked
# by `parentUuid`, without an `agentId`: two subagents reading the same file each read it
# once, which is no repeated read; one of them reading it twice is.
s = Session("rule-sidechain-reads", version="1.0.98")
root = s.user("Review config.py and settings.py with two reviewers")
s.call("Read", {"file_path": "/work/app/config.py"})
main = s.prev
s.prev = None
first = s.user("Review config.py for secrets", sidechain=True, parent=root)
s.call("Read", {"file_path": "/work/app/config.py"}, sidechain=True)
s.call("Read", {"file_path": "/work/app/config.py"}, sidechain=True)
s.prev = None
s.user("Review config.py for style", sidechain=True, parent=root)
s.call("Read", {"file_path": "/work/app/config.py"}, sidechain=True)
s.prev = main
s.say("Both reviews are done.")
write("sidechain_reads", [s])

# A failure left behind: the reply owned up to it (no deduction), and the user rejected a
# call (stopping is what they asked for). The real 1af7fc5e transcript has the third case: a
# Write refused for permission, a TodoWrite marking it done, and a reply claiming success.
s = Session("rule-failure-reported")
s.user("Write the release notes to docs/RELEASE.md")
s.call("Write", {"file_path": "/work/app/docs/RELEASE.md", "content": "# 1.2.0\n"},
       result="Claude requested permissions to write to /work/app/docs/RELEASE.md, but you haven't granted it yet.",
       error=True)
s.call("TodoWrite", {"todos": [{"content": "Write release notes", "status": "pending", "activeForm": "Writing release notes"}]},
       result="Todos have been modified successfully.")
s.say("I could not write docs/RELEASE.md: permission to write there was not granted. Grant it and I will try again.")
t = Session("rule-failure-rejected")
t.user("Delete the build folder")
t.call("Bash", {"command": "rm -rf build", "description": "Delete build"},
       result="The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
       error=True)
write("failure_left_behind", [s, t])
