#!/bin/sh
# Seeds each fuzz target's corpus (fuzz/corpus/TARGET) from the repository's test fixtures
# and shipped packs. Run from anywhere; existing corpus files are kept, so a corpus grown by
# earlier runs is not lost. Seeds are named by content hash, so rerunning adds nothing twice.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
corpus="$here/corpus"

add() { # add TARGET FILE
    mkdir -p "$corpus/$1"
    name=$(sha1sum "$2" | cut -c1-40)
    cp "$2" "$corpus/$1/$name"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# CLEO audit logs: every pack test, the conformance sample and the example log. The
# conformance audit log is large, so only its first 200 lines are a seed.
for f in "$root"/rubrics/cleo-v*/tests/*.jsonl "$root"/examples/cleo-audit.jsonl; do
    case "$f" in *.expected.jsonl) continue ;; esac
    add source_cleo_jsonl "$f"
    add source_detect "$f"
done
head -n 200 "$root/tests/fixtures/conformance/audit.jsonl" >"$tmp/conformance-head.jsonl"
add source_cleo_jsonl "$tmp/conformance-head.jsonl"

# Single CLEO lines, for the fast line reader against serde: every 60th line of the
# conformance sample (its escapes, nulls and odd spellings) and the example log's lines.
awk 'NR % 60 == 1' "$root/tests/fixtures/conformance/audit.jsonl" "$root/examples/cleo-audit.jsonl" |
    while IFS= read -r line; do
        printf '%s\n' "$line" >"$tmp/line"
        add cleo_line "$tmp/line"
    done
grep -h '\\' "$root/tests/fixtures/conformance/audit.jsonl" | head -n 5 | while IFS= read -r line; do
    printf '%s\n' "$line" >"$tmp/line"
    add cleo_line "$tmp/line"
done

# The same lines for the skimming reader, each behind the two bytes that choose what is
# kept (`projection_of` in engine/src/source/cleo_jsonl/fast.rs): as cleo-v1 keeps them
# (`R`: exit codes, metadata and some params keys, `h` naming `gateway`, `x` and `a`), whole
# fields (`2`), and everything (`\001`).
awk 'NR % 60 == 1' "$root/tests/fixtures/conformance/audit.jsonl" "$root/examples/cleo-audit.jsonl" |
    head -n 40 | while IFS= read -r line; do
        for kept in 'Rh' '2~' "$(printf '\001\001')"; do
            printf '%s%s\n' "$kept" "$line" >"$tmp/line"
            add cleo_projection "$tmp/line"
        done
    done

# Params objects alone, as a `tasks.db` row's `details_json` holds them.
grep -o '"params": *{[^{}]*}' "$root/tests/fixtures/conformance/audit.jsonl" | sed 's/^"params": *//' |
    awk 'NR % 40 == 1' | head -n 20 | while IFS= read -r params; do
        printf '%s' "$params" >"$tmp/line"
        add cleo_line "$tmp/line"
    done

# Claude Code transcripts (JSONL and the {loglines} wrapper).
find "$root/rubrics/claude-code-v1/tests" -name '*.jsonl' ! -name '*.expected.jsonl' \
    ! -path '*/langfuse_traces/*' | while read -r f; do
    add source_claude_code "$f"
    add source_detect "$f"
done
for f in "$root"/rubrics/claude-code-v1/tests/real/claude_code_transcripts/synthetic/*/*.json; do
    add source_claude_code "$f"
    add source_detect "$f"
done

# Langfuse traces.
for f in "$root"/rubrics/claude-code-v1/tests/real/langfuse_traces/*.json \
    "$root"/rubrics/langfuse-v1/tests/*.jsonl "$root"/tests/fixtures/not-a-source/*.json; do
    case "$f" in *.expected.jsonl) continue ;; esac
    add source_langfuse "$f"
    add source_detect "$f"
done

# Other agents' real sessions (tests/fixtures/agents), each to its reader and to detection.
# The larger ones are cut to their first lines (a JSONL) so that a seed stays small.
for pair in codex:source_codex gemini-cli:source_gemini_cli openhands:source_openhands \
    swe-agent:source_swe_agent; do
    dir=${pair%%:*}
    target=${pair#*:}
    for f in "$root/tests/fixtures/agents/$dir"/*; do
        case "$f" in */LICENSE*) continue ;; esac
        if [ "$(wc -c <"$f")" -gt 200000 ] && [ "${f%.jsonl}" != "$f" ]; then
            head -n 40 "$f" >"$tmp/head.jsonl"
            f="$tmp/head.jsonl"
        fi
        add "$target" "$f"
        add source_detect "$f"
    done
done
if command -v zstd >/dev/null 2>&1; then
    zstd -q -c "$root/tests/fixtures/agents/codex/localpush_redacted_20-34-25.jsonl" >"$tmp/rollout.jsonl.zst"
    add source_codex "$tmp/rollout.jsonl.zst"
fi

# CLEO databases, made from the example logs with the fixture script when Python is there.
if command -v python3 >/dev/null 2>&1; then
    for f in "$root"/rubrics/cleo-v1/tests/example.jsonl "$tmp/conformance-head.jsonl"; do
        db="$tmp/$(basename "$f" .jsonl).db"
        if python3 "$root/tests/fixtures/conformance/jsonl_to_cleo_db.py" "$f" "$db" >/dev/null 2>&1; then
            add source_cleo_db "$db"
            add source_detect "$db"
        fi
    done
fi
printf 'SQLite format 3\000' >"$tmp/header.db"
add source_cleo_db "$tmp/header.db"

# Packs: rubric.yaml, then NUL, file name, newline, content for each other pack file.
for pack in "$root"/rubrics/* "$root"/tests/packs/* "$root"/tests/fixtures/packs/*; do
    [ -f "$pack/rubric.yaml" ] || continue
    out="$tmp/pack"
    cat "$pack/rubric.yaml" >"$out"
    for f in "$pack"/*.rhai "$pack"/*.prompt.md; do
        [ -f "$f" ] || continue
        printf '\000%s\n' "$(basename "$f")" >>"$out"
        cat "$f" >>"$out"
    done
    add pack_compile "$out"
done

# Agent runs: the real files of each format (tests/fixtures/agents/<format>/).
for f in "$root"/tests/fixtures/agents/inspect_ai/*.eval "$root"/tests/fixtures/agents/inspect_ai/*.json; do
    add source_inspect_ai "$f"
done
for f in "$root"/tests/fixtures/agents/atif/*.json; do
    add source_atif "$f"
done
for f in "$root"/tests/fixtures/agents/otel/*.json; do
    case "$f" in */counts.json) continue ;; esac
    add source_otel "$f"
    add source_detect "$f"
done

# Judgments: the langfuse-v1 fixtures, whole and one dimension set at a time.
for f in "$root"/rubrics/langfuse-v1/tests/*.judgments.json; do
    add judgment "$f"
done
printf 'Here is my verdict:\n```json\n{"task_completion": {"score": 3, "rationale": "ok"}}\n```\n' >"$tmp/fenced"
add judgment "$tmp/fenced"

# Human labels for `grade calibrate`: the committed batch's, and its first lines.
add calibrate_labels "$root/tests/fixtures/calibrate/labels.jsonl"
head -n 3 "$root/tests/fixtures/calibrate/labels.jsonl" >"$tmp/labels-head.jsonl"
add calibrate_labels "$tmp/labels-head.jsonl"

# Templates: an evidence template line, then a prompt template.
i=0
grep -ho "\(evidence\|flag\|message\): .*{.*" "$root"/rubrics/*/rubric.yaml "$root"/tests/packs/*/rubric.yaml 2>/dev/null |
    sed 's/^[a-z]*: //; s/^"//; s/"$//' | while IFS= read -r line; do
    i=$((i + 1))
    { printf '%s\n' "$line"; cat "$root/rubrics/langfuse-v1/scorer.prompt.md"; } >"$tmp/template"
    add template "$tmp/template"
done
printf '{metric.big} {metric.tiny} {percent.ratio} {score} {entry.params.x|none} {entry.position} {{x}}\n{{session_id}} {{session_summary}}\n' >"$tmp/template"
add template "$tmp/template"

# Grades files for the mender: a split byte (how many of the bytes go before the target's own
# grade lines), then each pack test's expected grades, whole and cut short.
for f in "$root"/rubrics/*/tests/*.expected.jsonl; do
    { printf '\000'; cat "$f"; } >"$tmp/grades"
    add grades_mend "$tmp/grades"
    { printf '\020'; head -c 300 "$f"; } >"$tmp/grades"
    add grades_mend "$tmp/grades"
done

# Reference trajectories: the example's, the pack test's, and the reference-value fixture's
# first lines (toolCalls and OpenAI-style messages).
for f in "$root"/examples/trajectory/reference.jsonl "$root"/examples/trajectory/pack/tests/*.reference.jsonl; do
    add reference_file "$f"
done
# The reference-value cases' references, each as the example session's.
head -n 40 "$root/tests/fixtures/trajectory/reference.jsonl" | python3 -c '
import json, sys
for line in sys.stdin:
    case = json.loads(line)
    print(json.dumps(dict(sessionId="1af7fc5e-8455-4414-9ccd-011d40f70b2a", **case["reference"])))
' >"$tmp/reference"
add reference_file "$tmp/reference"
printf '{"sessionId":"1af7fc5e-8455-4414-9ccd-011d40f70b2a","messages":[{"role":"assistant","tool_calls":[{"function":{"name":"Bash","arguments":"{\\"command\\":\\"ls -la\\"}"}}]}]}\n' >"$tmp/reference"
add reference_file "$tmp/reference"

for d in "$corpus"/*; do
    echo "$(basename "$d"): $(ls "$d" | wc -l) seeds"
done
