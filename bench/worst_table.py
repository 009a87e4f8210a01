"""The rows of bench/run.sh's cases (g), the worst-case interleaving (every session open from
the first line of the 1M-entry log to the last: `grade`'s wall time and peak, as a tasks.db
against sqlite3's scan, and, when the run timed it (CLEO set), against CLEO's own grader in
Node on the same file), and (n), 50,000 named sessions against `--all`, with issue 47's bars.
The full run adds these rows to its table; `ONLY=worst,named bench/run.sh` prints them alone.

    python3 bench/worst_table.py RESULTS   (prints the rows as a table)
"""

import json
import os
import statistics
import sys


def verdict(ok):
    return "holds" if ok else "MISSED"


def rss(res, name):
    with open(os.path.join(res, name + ".rss"), encoding="utf-8") as f:
        return int(f.read().split()[-1]) / 1024.0


def times(res, name):
    with open(os.path.join(res, name + ".json"), encoding="utf-8") as f:
        return json.load(f)["times"]


def spread(ts):
    return f"{statistics.median(ts):.3f} s ({min(ts):.3f}-{max(ts):.3f})"


def exists(res, name):
    return os.path.exists(os.path.join(res, name))


def ratio(t, i, j):
    """The median of run-by-run ratios: both commands of a round ran under the same load."""
    return statistics.median([a / b for a, b in zip(t[i], t[j])])


def rows(res):
    out = []
    if exists(res, "g.json"):
        g = times(res, "g")
        mg = statistics.median(g[0])
        against = f"sqlite3 select * (load): {statistics.median(g[1]):.3f} s" if len(g) > 1 else ""
        out.append(("(g) worst-case interleaving, 1M, wall", spread(g[0]), against, f"{mg:.2f} s", "", ""))
        if exists(res, "g_node.json"):
            t = times(res, "g_node")
            r = ratio(t, 0, 1)
            out.append((
                "(g) worst case / CLEO's grader in Node",
                spread(t[0]),
                f"CLEO's grader: {spread(t[1])}",
                f"{r:.3f}x ({1 / r:.1f}x faster)",
                "<= 0.10x",
                verdict(r <= 0.10),
            ))
            with open(os.path.join(res, "g_agree.txt"), encoding="utf-8") as f:
                agree = f.read().strip()
            out.append(("(g) CLEO's grader, peak; results", f"{rss(res, 'g_node'):.0f} MiB", agree, "", "", ""))
        else:
            out.append(("(g) worst case / CLEO's grader in Node", "not timed: set CLEO", "", "", "<= 0.10x", ""))
        mgp = rss(res, "g_grade")
        out.append(("(g) worst-case interleaving, 1M, peak", f"{mgp:.0f} MiB", "", f"{mgp:.0f} MiB", "<= 150 MiB", verdict(mgp <= 150)))
    if exists(res, "g_db.json"):
        t = times(res, "g_db")
        r = ratio(t, 0, 1)
        out.append(("(g) worst case as a tasks.db / sqlite3 select *", spread(t[0]), f"sqlite3 select *: {spread(t[1])}", f"{r:.2f}x", "<= 0.60x", verdict(r <= 0.60)))
    if exists(res, "n.json"):
        t = times(res, "n")
        r = ratio(t, 0, 1)
        out.append(("(n) 50,000 named sessions / --all, 1M JSONL", spread(t[0]), f"--all: {spread(t[1])}", f"{r:.2f}x", "<= 1.20x", verdict(r <= 1.20)))
        out.append(("(n) 50,000 named sessions, peak", f"{rss(res, 'n_named'):.0f} MiB", "", "", "", ""))
    return out


def print_table(table):
    head = ("case", "grade", "against", "figure", "bar", "verdict")
    w = [max(len(str(r[i])) for r in (head, *table)) for i in range(len(head))]
    for r in (head, tuple("-" * x for x in w), *table):
        print("  ".join(str(c).ljust(x) for c, x in zip(r, w)).rstrip())


if __name__ == "__main__":
    print_table(rows(sys.argv[1]))
