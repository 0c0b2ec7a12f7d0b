#!/usr/bin/env bash
# How fast `perfbase ui` answers over a big store: a SQLite store of RUNS runs (default
# 10,000) of two plans, then the median time of each page over REPS requests (default 20),
# and the server's memory after them. Goals (issue 53): the runs page < 200 ms, a run's page
# < 100 ms after the first.
#
# Two runs are measured for real (one per plan, against `perfbase serve`); the store is then
# filled to RUNS by copying them, each copy with its own figures, labels, source and outcome,
# written straight into the tables (10,000 real runs would take hours). Their result_json is
# the real one, so a run's page renders a real report. About a minute, and ~100 MB of disk.
#
# PG=postgres://user:pass@127.0.0.1:PORT/db also copies the store into the schema ui_bench of
# that database (dropped and made anew) and times the same pages over it.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-10000}
REPS=${REPS:-20}
PERFBASE=${PERFBASE:-target/release/perfbase}
OUT=bench/out/ui-store
mkdir -p "$OUT"
DB=$OUT/results.db
rm -f "$DB" "$DB-wal" "$DB-shm"
PORT=${PORT:-18391}
"$PERFBASE" serve --port 18390 >"$OUT/serve.log" 2>&1 &
SERVE=$!
trap 'kill $SERVE ${UI:-} 2>/dev/null || true' EXIT
sleep 0.5
for plan in checkout search; do
    cat >"$OUT/$plan.toml" <<EOF
[plan]
name = "$plan"
[targets.api]
url = "http://127.0.0.1:18390"
[workloads.w]
target = "api"
path = "/"
[[scenarios]]
name = "s"
workload = "w"
rate = 500
duration = "1s"
EOF
    "$PERFBASE" run "$OUT/$plan.toml" --store "$DB" -q --out "$OUT/out" >/dev/null 2>&1
done
python3 - "$DB" "$RUNS" <<'PY'
import json, random, sqlite3, sys
db, runs = sys.argv[1], int(sys.argv[2])
random.seed(53)
c = sqlite3.connect(db)
cols = [r[1] for r in c.execute("PRAGMA table_info(runs)") if r[1] != "id"]
models = list(c.execute(f"SELECT id, {', '.join(cols)} FROM runs ORDER BY id"))
points = {rid: list(c.execute("SELECT plan, scenario, step, metric, repetition, value FROM run_points WHERE run_id = ?", (rid,)))
          for rid, *_ in models}
env = {rid: c.execute("SELECT fingerprint FROM run_env WHERE run_id = ?", (rid,)).fetchone()[0] for rid, *_ in models}
outcomes = ["passed"] * 17 + ["failed", "invalid", "interrupted"]
with c:
    for i in range(len(models), runs):
        rid, *row = models[i % 2]
        row = dict(zip(cols, row))
        day = 1 + (i * 28) // runs
        row["started_at"] = row["saved_at"] = f"2026-10-{day:02d}T12:{i % 60:02d}:00Z"
        row["p50_ms"] = random.gauss(1.0, 0.05)
        row["p99_ms"] = random.gauss(4.0, 0.3)
        row["outcome"] = random.choice(outcomes)
        row["interrupted"] = row["outcome"] == "interrupted"
        labels = {"service": "orders", "env": random.choice(["ci", "staging"])}
        row["labels_json"] = json.dumps(labels)
        cur = c.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                        [row[k] for k in cols])
        new = cur.lastrowid
        for k, v in labels.items():
            c.execute("INSERT INTO run_labels (run_id, key, value) VALUES (?, ?, ?)", (new, k, v))
        source = {"GIT_COMMIT": f"{random.getrandbits(160):040x}", "GIT_BRANCH": random.choice(["main", "release"]),
                  "CI_BUILD": str(1000 + i)}
        c.execute("INSERT INTO run_env (run_id, fingerprint, source_json) VALUES (?, ?, ?)",
                  (new, env[rid], json.dumps(source)))
        c.executemany("INSERT INTO run_points (run_id, plan, scenario, step, metric, repetition, value) VALUES (?, ?, ?, ?, ?, ?, ?)",
                      [(new, p, s, st, m, r, v * random.gauss(1, 0.02)) for p, s, st, m, r, v in points[rid]])
    c.execute("INSERT INTO baselines (name, run_id, set_at) VALUES ('release', 1, '2026-10-01T00:00:00Z')")
    c.execute("INSERT INTO baseline_history (name, run_id, set_at) VALUES ('release', 1, '2026-10-01T00:00:00Z')")
PY
# The same store in PostgreSQL: perfbase makes the tables, the rows are copied with COPY.
pg_copy() {
    PGOPTIONS=--client-min-messages=warning psql -q "$PG" -c "DROP SCHEMA IF EXISTS ui_bench CASCADE; CREATE SCHEMA ui_bench" >/dev/null
    "$PERFBASE" history --store "$1" >/dev/null
    python3 - "$DB" <<'PY' | psql -q "$PG" -v ON_ERROR_STOP=1 >/dev/null
import csv, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
out = csv.writer(sys.stdout, lineterminator="\n")
print("SET search_path TO ui_bench;")
for table in ["runs", "run_labels", "run_env", "run_points", "baselines", "baseline_history"]:
    cols = [r[1] for r in c.execute(f"PRAGMA table_info({table})")]
    print(f"COPY {table} ({', '.join(cols)}) FROM STDIN WITH (FORMAT csv);")
    for row in c.execute(f"SELECT {', '.join(cols)} FROM {table}"):
        out.writerow(["t" if v is True else v for v in row])
    print("\\.")
print("SELECT setval(pg_get_serial_sequence('runs', 'id'), (SELECT max(id) FROM runs));")
print("SELECT setval(pg_get_serial_sequence('baseline_history', 'id'), (SELECT max(id) FROM baseline_history));")
print("ANALYZE runs; ANALYZE run_labels; ANALYZE run_env; ANALYZE run_points;")
PY
}

# Times every page of the UI over store $1 (named $2 in the output).
pages() {
"$PERFBASE" ui --store "$1" --listen "127.0.0.1:$PORT" 2>"$OUT/ui.log" &
UI=$!
sleep 1
BASE="http://127.0.0.1:$PORT"
# The median of REPS timings of one page, in ms (curl's own total time).
t() {
    for _ in $(seq "$REPS"); do
        curl -s -o /dev/null -w '%{time_total}\n' "$BASE$1"
    done | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)] * 1000}'
}
first_run=$(curl -s -o /dev/null -w '%{time_total}' "$BASE/runs/5000" | awk '{printf "%.1f", $1 * 1000}')
echo "store: $2, $RUNS runs of 2 plans; median of $REPS requests each"
printf '  %-44s %8s ms\n' \
    "runs page (newest 50 of $RUNS)" "$(t /)" \
    "runs page, plan=checkout" "$(t '/?plan=checkout')" \
    "runs page, outcome=failed, label env=ci" "$(t '/?outcome=failed&label=env%3Dci')" \
    "runs page, source=release, since 2026-10-10" "$(t '/?source=release&since=2026-10-10')" \
    "runs page, 100th page (before=5000)" "$(t '/?before=5000')" \
    "a run's page, first request" "$first_run" \
    "a run's page, after the first" "$(t /runs/5000)" \
    "compare with a baseline" "$(t '/compare?a=5000&b=baseline:release')" \
    "plans" "$(t /plans)" \
    "a plan's trend (its newest 500 runs)" "$(REPS=3 t /plans/checkout)"
echo "  ui's peak memory (VmHWM): $(awk '/VmHWM/ {print $2, $3}' /proc/$UI/status)"
kill $UI; wait $UI 2>/dev/null || true
}

pages "$DB" "SQLite ($(du -m "$DB" | cut -f1) MB)"
if [ -n "${PG:-}" ]; then
    sep='?'; case "$PG" in *\?*) sep='&';; esac
    pg_store="$PG${sep}options=-csearch_path%3Dui_bench"
    pg_copy "$pg_store"
    pages "$pg_store" "PostgreSQL"
fi
