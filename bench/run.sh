#!/usr/bin/env bash
# End-to-end benchmark of `grade` against the peer commands, on generated CLEO traffic.
#
#   bench/run.sh            build in release, generate the data once, time, print the table
#   RUNS=10 bench/run.sh    more runs per command (default 5, plus one warm-up)
#   BENCH_DATA=/tmp/d bench/run.sh   where the generated data lives (default target/bench-data)
#   REGEN=1 bench/run.sh    generate the data again
#
# Needs hyperfine, sqlite3, python3 and GNU time (/usr/bin/time). Times are wall-clock means
# of hyperfine runs (input files warm in the page cache); peak memory is GNU time's maximum
# resident set size of one run. Nothing here is a test: it reports, it does not fail.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
data=${BENCH_DATA:-$root/target/bench-data}
runs=${RUNS:-5}
mkdir -p "$data"

for tool in hyperfine sqlite3 python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench/run.sh needs $tool (apt-get install hyperfine sqlite3 time)" >&2; exit 2; }
done

echo "== build (release)" >&2
cargo build --release -q -p grade-cli -p grade-bench
cargo build --release -q -p grade-engine --example grade_only
grade=$root/target/release/grade
gen=$root/target/release/gen
grade_only=$root/target/release/examples/grade_only

# name sessions entries
sizes=("10k 500 10000" "100k 5000 100000" "1m 50000 1000000")
for s in "${sizes[@]}"; do
  read -r name sessions entries <<<"$s"
  if [[ -n ${REGEN:-} || ! -f $data/$name.db || ! -f $data/$name.jsonl ]]; then
    echo "== generate $name: $entries entries in $sessions sessions (seed 1)" >&2
    "$gen" --sessions "$sessions" --entries "$entries" --seed 1 \
      --jsonl "$data/$name.jsonl" --db "$data/$name.db" --sessions-out "$data/$name.sessions"
  fi
done
big_db=$data/1m.db
big_jsonl=$data/1m.jsonl
# A session from the middle of the log, for the one-session case.
one=$(sed -n "$(( $(wc -l <"$data/1m.sessions") / 2 ))p" "$data/1m.sessions")

results=$data/results
rm -rf "$results"
mkdir -p "$results"

# hyperfine NAME CMD... : mean wall time of each command into $results/NAME.json
time_cmds() {
  local name=$1
  shift
  hyperfine --style none --warmup 1 --runs "$runs" --export-json "$results/$name.json" "$@" >&2
}
# peak NAME CMD : peak RSS (KiB) of one run into $results/NAME.rss
peak() {
  local name=$1
  shift
  /usr/bin/time -f "%M" -o "$results/$name.rss" sh -c "$* > /dev/null"
}

all() { echo "$grade --rubric $1 --source $2 --all --format jsonl --no-record"; }

echo "== (a) whole database vs sqlite3 select *" >&2
time_cmds a "$(all cleo-v1 "$big_db") > /dev/null" "sqlite3 $big_db 'select * from audit_log' > /dev/null"
peak a_grade "$(all cleo-v1 "$big_db")"
peak a_sqlite "sqlite3 $big_db 'select * from audit_log'"

echo "== (b) whole JSONL log" >&2
time_cmds b "$(all cleo-v1 "$big_jsonl") > /dev/null" "cat $big_jsonl > /dev/null"
peak b_grade "$(all cleo-v1 "$big_jsonl")"

echo "== (c) one session out of the database ($one)" >&2
time_cmds c "$grade --rubric cleo-v1 --source $big_db --format jsonl --no-record $one > /dev/null" \
  "sqlite3 $big_db \"select * from audit_log where session_id='$one'\" > /dev/null"

echo "== (d) Rhai vs declarative" >&2
time_cmds d "$(all cleo-v1 "$big_jsonl") > /dev/null" "$(all tests/packs/cleo-v1-scripted "$big_jsonl") > /dev/null"
"$grade_only" "$data/100k.jsonl" cleo-v1 tests/packs/cleo-v1-scripted > "$results/d_engine.txt"
# A whole run's worth of sessions: what scripts remember warms up once per run.
PASSES=3 "$grade_only" "$data/1m.jsonl" cleo-v1 tests/packs/cleo-v1-scripted > "$results/d_engine_1m.txt"

echo "== (e) scaling" >&2
for s in "${sizes[@]}"; do
  read -r name _ _ <<<"$s"
  time_cmds "e_$name" "$(all cleo-v1 "$data/$name.jsonl") > /dev/null" "$(all cleo-v1 "$data/$name.db") > /dev/null"
  peak "e_${name}_jsonl" "$(all cleo-v1 "$data/$name.jsonl")"
  peak "e_${name}_db" "$(all cleo-v1 "$data/$name.db")"
done

echo "== (f) compare two packs vs grade with one (1M entries, alternated)" >&2
# hyperfine runs each command's repeats back to back; on shared cores the load drifts between
# them, so these are alternated run by run and compared by median.
python3 - "$results/f.json" "$runs" \
  "$grade compare --rubric cleo-v1 --rubric cleo-v2 --source $big_jsonl --all --format json" \
  "$(all cleo-v1 "$big_jsonl")" \
  "$grade compare --rubric cleo-v1 --rubric cleo-v2 --source $big_db --all --format json" \
  "$(all cleo-v1 "$big_db")" <<'EOF'
import json, subprocess, sys, time
out, runs, cmds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
times = [[] for _ in cmds]
for r in range(runs + 1):
    for i, c in enumerate(cmds):
        t = time.perf_counter()
        subprocess.run(c + " > /dev/null", shell=True, check=True)
        if r > 0:  # the first round warms the page cache
            times[i].append(time.perf_counter() - t)
json.dump({"commands": cmds, "times": times}, open(out, "w"))
EOF

python3 - "$results" "$data" <<'EOF'
import json, os, statistics, sys
res, data = sys.argv[1], sys.argv[2]
def means(name):
    r = json.load(open(os.path.join(res, name + ".json")))["results"]
    return [(x["mean"], x["stddev"] or 0.0) for x in r]
def rss(name):
    return int(open(os.path.join(res, name + ".rss")).read().split()[-1]) / 1024.0
def fmt(m): return f"{m[0]:.3f} s ± {m[1]:.3f}"
def verdict(ok): return "holds" if ok else "MISSED"
rows = []
a = means("a"); ra = a[0][0] / a[1][0]
rows.append(("(a) tasks.db, 1M entries, --all", fmt(a[0]), "sqlite3 select *: " + fmt(a[1]), f"{ra:.2f}x", "<= 1.00x", verdict(ra <= 1.0)))
b = means("b"); mb = rss("b_grade")
rows.append(("(b) JSONL, 1M entries, --all", fmt(b[0]), "cat: " + fmt(b[1]), f"{b[0][0]:.2f} s", "<= 0.90 s", verdict(b[0][0] <= 0.9)))
# The issue sets 0.9 s on a machine where `sqlite3 select *` took about 2.0 s; the shared
# cores here run at different speeds from one hour to the next, so the same bar as a ratio.
rb = b[0][0] / a[1][0]
rows.append(("(b) JSONL, as a share of sqlite3 select *", fmt(b[0]), "sqlite3 select *: " + fmt(a[1]), f"{rb:.2f}x", "<= 0.45x", verdict(rb <= 0.45)))
rows.append(("(b) JSONL peak memory", f"{mb:.0f} MiB", "", f"{mb:.0f} MiB", "<= 300 MiB", verdict(mb <= 300)))
c = means("c"); rc = c[0][0] / c[1][0]
rows.append(("(c) one session of tasks.db", fmt(c[0]), "sqlite3 where session_id: " + fmt(c[1]), f"{rc:.2f}x", "<= 1.30x", verdict(rc <= 1.3)))
d = means("d"); rd = d[1][0] / d[0][0]
def engine(name):
    return [l.split("\t") for l in open(os.path.join(res, name)).read().splitlines()]
eng = engine("d_engine.txt")
for size, e in (("100k", eng), ("1M", engine("d_engine_1m.txt"))):
    r = float(e[1][3].rstrip("x"))
    rows.append((f"(d) Rhai/declarative, grading only ({size})", e[1][2] + " vs " + e[0][2], "", f"{r:.2f}x", "<= 3.00x", verdict(r <= 3.0)))
rows.append(("(d) Rhai/declarative, end to end (1M JSONL)", fmt(d[1]) + " vs " + fmt(d[0]), "", f"{rd:.2f}x", "<= 3.00x", verdict(rd <= 3.0)))
f = json.load(open(os.path.join(res, "f.json")))
def spread(ts):
    return statistics.median(ts), min(ts), max(ts)
for label, c, g in (("JSONL", 0, 1), ("tasks.db", 2, 3)):
    mc, mg = spread(f["times"][c]), spread(f["times"][g])
    ratios = [a / b for a, b in zip(f["times"][c], f["times"][g])]
    r = spread(ratios)
    rows.append((f"(f) compare 2 packs / grade 1, {label} 1M", f"{mc[0]:.3f} s ({mc[1]:.3f}-{mc[2]:.3f})", f"grade cleo-v1: {mg[0]:.3f} s ({mg[1]:.3f}-{mg[2]:.3f})", f"{r[0]:.2f}x ({r[1]:.2f}-{r[2]:.2f})", "<= 1.50x", verdict(r[0] <= 1.5)))
w = [max(len(str(r[i])) for r in rows) for i in range(6)]
head = ("target", "grade", "peer", "figure", "target", "")
w = [max(w[i], len(head[i])) for i in range(6)]
line = lambda r: "  ".join(str(x).ljust(w[i]) for i, x in enumerate(r)).rstrip()
print(line(head)); print(line(tuple("-" * x for x in w)))
for r in rows: print(line(r))
print()
print("(e) scaling, cleo-v1 --all")
print(f"{'entries':>9}  {'JSONL wall':>14}  {'µs/entry':>8}  {'peak MiB':>8}  {'tasks.db wall':>14}  {'µs/entry':>8}  {'peak MiB':>8}")
for name, n in (("10k", 10_000), ("100k", 100_000), ("1m", 1_000_000)):
    e = means("e_" + name)
    print(f"{n:>9}  {fmt(e[0]):>14}  {e[0][0]/n*1e6:>8.2f}  {rss('e_'+name+'_jsonl'):>8.0f}  {fmt(e[1]):>14}  {e[1][0]/n*1e6:>8.2f}  {rss('e_'+name+'_db'):>8.0f}")
print()
print(f"(a) peak memory: grade {rss('a_grade'):.0f} MiB, sqlite3 {rss('a_sqlite'):.0f} MiB")
print("grading only, 100k entries (best of 5) and 1M entries (best of 3), a fresh pack each pass:")
for l in eng + engine("d_engine_1m.txt"): print("  " + "  ".join(l))
EOF
