#!/usr/bin/env python3
"""The table of bench/run.sh's case (m): RESULTS AGENTS RUNS FORMAT..., from GNU time's
`%e %U %S %M` of each run (m_NAME.R; round 0 is the warm-up and is left out)."""
import os
import statistics
import sys

res, agents, runs, formats = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]


def size(d):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)


def files(d):
    return sum(len(fs) for _, _, fs in os.walk(d))


def timed(name):
    """Median wall and CPU (user + system) seconds of the timed runs, and the highest peak."""
    rows = []
    for r in range(1, runs + 1):
        with open(os.path.join(res, f"m_{name}.{r}")) as f:
            rows.append(f.read().split()[-4:])
    wall = statistics.median(float(x[0]) for x in rows)
    cpu = statistics.median(float(x[1]) + float(x[2]) for x in rows)
    peak = max(int(x[3]) for x in rows) / 1024
    return wall, cpu, peak


print("(m) coding-agent readers: grade --rubric PACK --source DIR --all --format jsonl --no-record on one core")
print(f"    medians of {runs} runs; MB/CPU s is what one idle core would do. read: bench/packs/agents-read")
print(f"    (one declarative rule: the reader nearly alone); graded: coding-agent-v1 (six Rhai scripts)")
head = f"{'format':<11} {'files':>6} {'MB':>6}"
for pack in ("read", "graded"):
    head += f" | {pack + ' wall':>11} {'MB/s':>5} {'MB/CPU s':>8} {'MiB':>5}"
print(head + " | >= 100 MB/s (read)")
for f in formats:
    d = os.path.join(agents, "formats", f)
    mb = size(d) / 1e6
    line = f"{f:<11} {files(d):>6} {mb:>6.1f}"
    for name in (f"read_{f}", f):
        wall, cpu, peak = timed(name)
        line += f" | {wall:>9.2f} s {mb / wall:>5.0f} {mb / cpu:>8.0f} {peak:>5.0f}"
    wall, cpu, _ = timed(f"read_{f}")
    if mb / wall >= 100:
        verdict = "holds"
    elif mb / cpu >= 100:
        verdict = "MISSED in wall, holds in CPU"
    else:
        verdict = "MISSED"
    print(f"{line} | {verdict}")
d = os.path.join(agents, "codex-10k")
wall, cpu, peak = timed("codex-10k")
if wall < 10:
    verdict = "holds"
elif cpu / 2 < 10:
    verdict = "MISSED in wall, holds in CPU / 2"
else:
    verdict = "MISSED"
print(
    f"10,000 Codex rollouts ({size(d) / 1e6:.0f} MB), two cores: {wall:.2f} s wall, {cpu:.2f} s CPU "
    f"(user + system), {peak:.0f} MiB peak; < 10 s: {verdict}"
)
