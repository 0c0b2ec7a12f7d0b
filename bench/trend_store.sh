#!/usr/bin/env bash
# How fast `perfbase trend` answers from a big store: a SQLite store of RUNS runs (default
# 10,000) of one plan, each with 20 figures (5 steps x p50, p99, rps, error_rate), a 5 % step
# in p50 at run RUNS*0.6 and noise elsewhere, two labels and a source (commit, branch, CI
# build) as CI runs have; then the wall time of one plan's trend (all 20
# series, change points included) and of the gate (--check). Goal: under 1 s.
#
# The runs are written straight into the store's tables (after perfbase has created them), as
# 10,000 real runs would take hours to measure; their result_json is a stub, which trend never
# reads. Each command is timed REPS times (default 5) and the median printed; `--json` also
# writes every run's labels into each of the 20 series (71 MB with labels). About a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-10000}
PERFBASE=${PERFBASE:-target/release/perfbase}
# LABELS=0 leaves out the labels and source.
LABELS=${LABELS:-1}
REPS=${REPS:-5}
OUT=bench/out/trend-store
mkdir -p "$OUT"
DB=$OUT/results.db
rm -f "$DB" "$DB-wal" "$DB-shm"
# perfbase creates the schema (at its current version).
"$PERFBASE" history --store "$DB" >/dev/null
python3 - "$DB" "$RUNS" "$LABELS" <<'PY'
import json, random, sqlite3, sys
db, runs, with_labels = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
random.seed(7)
c = sqlite3.connect(db)
steps = ["insert", "select", "update", "delete", "scan"]
labels = {"service": "orders", "host": "ci-runner-1"} if with_labels else {}
with c:
    for i in range(runs):
        at = f"2026-01-01T00:00:00Z"
        cur = c.execute(
            "INSERT INTO runs (saved_at, started_at, kind, target, model, requests, rps, success_ratio, "
            "p50_ms, p95_ms, p99_ms, interrupted, labels_json, result_json) VALUES "
            "(?, ?, 'plan', 'pg', 'closed', 1000, 1000, 1, 1, 1, 1, 0, ?, '{}')",
            (at, at, json.dumps(labels)))
        rid = cur.lastrowid
        for k, v in labels.items():
            c.execute("INSERT INTO run_labels (run_id, key, value) VALUES (?, ?, ?)", (rid, k, v))
        source = {"GIT_COMMIT": f"{random.getrandbits(160):040x}", "GIT_BRANCH": "main",
                  "CI_BUILD": str(1000 + i)} if with_labels else {}
        c.execute("INSERT INTO run_env (run_id, fingerprint, source_json) VALUES (?, 'cpu x 2', ?)",
                  (rid, json.dumps(source)))
        for s in steps:
            p50 = random.gauss(1.0, 0.01) * (1.05 if i >= runs * 0.6 else 1.0)
            for metric, v in (("p50", p50), ("p99", random.gauss(5, 0.2)), ("rps", random.gauss(1000, 10)), ("error_rate", 0.0)):
                c.execute("INSERT INTO run_points (run_id, plan, scenario, step, metric, repetition, value) "
                          "VALUES (?, 'nightly', 'ops', ?, ?, 1, ?)", (rid, s, metric, v))
PY
# The median of REPS timings of one command, in ms.
t() {
    local s e all=()
    for _ in $(seq "$REPS"); do
        s=$(date +%s%N); "$@" >"$OUT/last.txt" || true; e=$(date +%s%N)
        all+=($(( (e - s) / 1000000 )))
    done
    printf '%s\n' "${all[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
trend_ms=$(t "$PERFBASE" trend --store "$DB" --plan nightly)
check_ms=$(t "$PERFBASE" trend --store "$DB" --plan nightly --check)
json_ms=$(t "$PERFBASE" trend --store "$DB" --plan nightly --json "$OUT/trend.json")
json_mb=$(( $(stat -c %s "$OUT/trend.json") / 1000000 ))
series=$(python3 -c "import json;t=json.load(open('$OUT/trend.json'));print(len(t['series']), sum(len(s['change_points']) for s in t['series']))")
echo "store: $RUNS runs x 20 figures, labels $LABELS; series and change points found: $series"
echo "perfbase trend over $RUNS runs, median of $REPS: ${trend_ms} ms, --check ${check_ms} ms (goal < 1000 ms for each); --json ${json_ms} ms (${json_mb} MB written)"
