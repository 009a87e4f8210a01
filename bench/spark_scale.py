#!/usr/bin/env python3
"""Grading generated CLEO traffic on Spark against `grade --all`: the figures of
docs/scale.md.

    bench/spark_scale.py LOG.jsonl [--grade target/release/grade] [--master local[2]]

writes LOG.jsonl as Parquet partitioned by date (with each entry's line number, `line`),
grades it with `grade.spark.grade_dataframe` on Spark, grades the JSONL with `grade --all
--format jsonl`, and compares the two results of every session (the grading instant aside).
Prints wall times and peak memory: the resident memory of the whole process tree (driver,
JVM, Python workers), sampled every 0.2 s; `grade`'s from GNU time. Needs pyspark, pyarrow and
the `grade` module installed. A benchmark, not a test: it reports, and fails only when a
result differs.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path


def tree_rss(pid):
    """Resident bytes of `pid` and every process below it."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except OSError:
            continue
    total, todo = 0, [pid]
    page = os.sysconf("SC_PAGE_SIZE")
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * page
        except OSError:
            pass
        todo.extend(children.get(p, []))
    return total


class Peak:
    """The largest resident size of this process's tree while it runs."""

    def __init__(self):
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss(os.getpid()))
            self._stop.wait(0.2)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def to_parquet(log, out):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    from pyarrow import json as pj

    started = time.perf_counter()
    schema = pa.schema([("timestamp", pa.string())])
    table = pj.read_json(log, parse_options=pj.ParseOptions(explicit_schema=schema))
    table = table.append_column("line", pa.array(range(1, table.num_rows + 1), pa.int64()))
    table = table.append_column("date", pc.utf8_slice_codeunits(table["timestamp"], 0, 10))
    ds.write_dataset(
        table, out, format="parquet", partitioning=["date"], partitioning_flavor="hive",
        existing_data_behavior="overwrite_or_ignore",
    )
    return table.num_rows, time.perf_counter() - started


def untimed(result):
    return {k: v for k, v in result.items() if k != "timestamp"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--grade", default="target/release/grade")
    ap.add_argument("--rubric", default="cleo-v1")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--work", default=None, help="folder for the Parquet data and outputs")
    args = ap.parse_args()
    log = Path(args.log)
    work = Path(args.work or log.with_suffix(".scale"))
    work.mkdir(parents=True, exist_ok=True)
    parquet = work / "parquet"

    if not parquet.exists():
        rows, secs = to_parquet(log, parquet)
        print(f"parquet: {rows} entries written in {secs:.1f} s to {parquet}")

    # The binary over the same entries as JSONL.
    cli_out = work / "cli.jsonl"
    started = time.perf_counter()
    cmd = ["/usr/bin/time", "-f", "%M", args.grade, "--rubric", args.rubric, "--source", str(log),
           "--all", "--format", "jsonl", "--no-record", "-o", str(cli_out)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    cli_wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(done.stderr)
    cli_kib = int(done.stderr.strip().splitlines()[-1])
    print(f"grade --all: {cli_wall:.2f} s, peak {cli_kib / 1024:.0f} MiB")

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import grade.spark

    with Peak() as peak:
        started = time.perf_counter()
        spark = (
            SparkSession.builder.master(args.master).appName("grade-scale")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.memory", "2g")
            .getOrCreate()
        )
        up = time.perf_counter() - started
        started = time.perf_counter()
        frame = spark.read.parquet(str(parquet))
        graded = grade.spark.grade_dataframe(frame, args.rubric, order_col="line")
        spark_out = work / "spark"
        graded.select("sessionId", "result", "error").write.mode("overwrite").json(str(spark_out))
        spark_wall = time.perf_counter() - started
        spark.stop()
    print(f"spark {args.master}: {spark_wall:.2f} s grading (+{up:.1f} s starting Spark), "
          f"peak {peak.peak / 2**20:.0f} MiB (driver, JVM and workers)")

    ours = {}
    errors = []
    for part in sorted(spark_out.glob("part-*")):
        for line in part.read_text().splitlines():
            row = json.loads(line)
            if row.get("error"):
                errors.append((row.get("sessionId"), row["error"]))
            else:
                ours[row["sessionId"]] = untimed(json.loads(row["result"]))
    theirs = {}
    for line in cli_out.read_text().splitlines():
        r = json.loads(line)
        theirs[r["sessionId"]] = untimed(r)
    differ = [s for s in theirs if ours.get(s) != theirs[s]]
    print(f"sessions: {len(theirs)} by grade, {len(ours)} by Spark, {len(errors)} error rows, "
          f"{len(differ)} differ")
    print(f"ratio Spark/grade: {spark_wall / cli_wall:.2f}x")
    if differ or errors or set(ours) != set(theirs):
        sys.exit(f"results differ: {differ[:5]} {errors[:3]}")


if __name__ == "__main__":
    main()
