"""The Python module against the binary on one log: `Pack.grade_source(LOG)` and
`Pack.grade_entries(TABLE)` (a pyarrow Table of the same entries, read before the clock
starts) against `grade --rubric PACK --source LOG --all --format jsonl --no-record`,
in alternated rounds, each run's wall time and CPU time (user + system, all threads), and
for the module the CPU time of the calling thread alone ("main"): the thread that holds the
GIL and makes the results' objects while other threads grade.

    python bench/python_speed.py LOG --grade target/release/grade [--rounds 5] [--rubric cleo-v1]

The module is whatever `import grade` finds (build it with `maturin build --release` for a
measurement). Prints each run, then the median of each and the ratios to the binary's. On a
shared machine the wall times move with the load; the CPU times move less, and are the
figures to compare there.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

import grade


def cpu_self():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_cli(binary, rubric, log):
    start = time.perf_counter()
    proc = subprocess.Popen(
        [binary, "--rubric", rubric, "--source", log, "--all", "--format", "jsonl", "--no-record"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"{binary} exited with status {status}")
    return wall, usage.ru_utime + usage.ru_stime


def run_py(f):
    cpu = cpu_self()
    main = time.thread_time()
    start = time.perf_counter()
    results = f()
    wall = time.perf_counter() - start
    main = time.thread_time() - main
    cpu = cpu_self() - cpu
    # Freed off the clock, as the binary's process leaves its memory to the system.
    n = len(results)
    del results
    return wall, cpu, main, n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--grade", required=True, help="the binary to compare with")
    ap.add_argument("--rubric", default="cleo-v1")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", choices=["source", "entries"], help="time one of the two calls")
    args = ap.parse_args()

    pack = grade.load_pack(args.rubric)
    runs = {"cli": [], "grade_source": [], "grade_entries": []}
    mains = {}
    calls = {}
    if args.only != "entries":
        calls["grade_source"] = lambda: pack.grade_source(args.log)
    if args.only != "source":
        import pyarrow.json as pj

        table = pj.read_json(args.log)
        calls["grade_entries"] = lambda: pack.grade_entries(table)
    for round_ in range(args.rounds):
        wall, cpu = run_cli(args.grade, args.rubric, args.log)
        runs["cli"].append((wall, cpu))
        print(f"round {round_ + 1}: cli {wall:.2f} s wall {cpu:.2f} s cpu", flush=True)
        for name, f in calls.items():
            wall, cpu, main, n = run_py(f)
            runs[name].append((wall, cpu))
            mains.setdefault(name, []).append(main)
            print(
                f"round {round_ + 1}: {name} {wall:.2f} s wall {cpu:.2f} s cpu "
                f"{main:.2f} s main ({n} results)",
                flush=True,
            )
    cli_wall = statistics.median(w for w, _ in runs["cli"])
    cli_cpu = statistics.median(c for _, c in runs["cli"])
    print(f"median cli: {cli_wall:.2f} s wall, {cli_cpu:.2f} s cpu")
    for name in calls:
        wall = statistics.median(w for w, _ in runs[name])
        cpu = statistics.median(c for _, c in runs[name])
        main = statistics.median(mains[name])
        print(
            f"median {name}: {wall:.2f} s wall ({wall / cli_wall:.2f}x), "
            f"{cpu:.2f} s cpu ({cpu / cli_cpu:.2f}x), {main:.2f} s main"
        )


if __name__ == "__main__":
    main()
