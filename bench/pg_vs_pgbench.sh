#!/usr/bin/env bash
# perfbase pg beside pgbench: the same PostgreSQL (scripts/services.sh, pinned to CPU 0), the
# same pgbench tables and scale, the same clients and duration, the tool pinned to CPU 1,
# alternating runs. Prints TPS, client CPU µs per transaction and the ratios.
#
#   bench/pg_vs_pgbench.sh                     # D=10 REPS=3 SCALE=10 CLIENTS=10
#   D=5 REPS=1 SCENARIOS=tpcb bench/pg_vs_pgbench.sh
#
# pgbench runs with -M prepared (its fastest protocol, as perfbase prepares its statements).
# Scenarios: tpcb (pgbench's built-in script vs perfbase -w tpcb), tpcb-pK for K = 2, 8, 32 (K of
# its transactions per round trip: a \startpipeline script of K transactions vs perfbase
# --pipeline K), select-only (pgbench -S vs perfbase -w select-only), function (a custom pgbench
# script calling pgbench_tx() vs perfbase -w tpcb-function), function-pipelined (the same with
# perfbase --pipeline 8; pgbench has no equivalent for this script, shown beside plain pgbench).
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

D=${D:-10}
REPS=${REPS:-3}
SCALE=${SCALE:-10}
CLIENTS=${CLIENTS:-10}
SCENARIOS=${SCENARIOS:-"tpcb tpcb-p2 tpcb-p8 tpcb-p32 select-only function function-pipelined"}
PERFBASE=${PERFBASE:-target/release/perfbase}
OUT=bench/out/pg-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"

[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs (server on CPU 0, tool on CPU 1)"
need_apt pgbench postgresql-contrib "pgbench is missing"
command -v taskset >/dev/null || die "taskset (util-linux) is missing"
need_apt /usr/bin/time time "/usr/bin/time is missing"
[ -x "$PERFBASE" ] || cargo build --release --bin perfbase

scripts/services.sh up postgres >/dev/null
eval "$(scripts/services.sh env postgres)"
URL=$PERFBASE_POSTGRES_URL
case "$URL" in *@127.0.0.1:*) ;; *) die "refusing to load anything but 127.0.0.1 ($URL)" ;; esac

# Pin the server: the postmaster and every process it has forked (new backends inherit it).
for pid in $PERFBASE_PG_PID $(pgrep -P "$PERFBASE_PG_PID"); do taskset -a -p -c 0 "$pid" >/dev/null; done

log "perfbase pg --init --scale $SCALE (pgbench's tables, as pgbench -i makes them, and pgbench_tx())"
"$PERFBASE" pg "$URL" --init --scale "$SCALE" -w tpcb-function --no-store > "$OUT/init.txt" 2>&1
cat > "$OUT/tx.sql" <<SQL
\set aid random(1, 100000 * $SCALE)
\set bid random(1, 1 * $SCALE)
\set tid random(1, 10 * $SCALE)
\set delta random(-5000, 5000)
SELECT pgbench_tx(:aid, :tid, :bid, :delta);
SQL

# K TPC-B transactions (pgbench's built-in statements) in one pipeline: one round trip for
# all, as perfbase -w tpcb --pipeline K sends them. pgbench counts the script as one
# transaction, so its figures are multiplied by K below.
for k in 2 8 32; do
  {
    for i in $(seq 1 $k); do
      printf '\\set aid%s random(1, 100000 * %s)\n\\set bid%s random(1, 1 * %s)\n' "$i" "$SCALE" "$i" "$SCALE"
      printf '\\set tid%s random(1, 10 * %s)\n\\set delta%s random(-5000, 5000)\n' "$i" "$SCALE" "$i"
    done
    echo '\startpipeline'
    for i in $(seq 1 $k); do
      cat <<SQL
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta$i WHERE aid = :aid$i;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid$i;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta$i WHERE tid = :tid$i;
UPDATE pgbench_branches SET bbalance = bbalance + :delta$i WHERE bid = :bid$i;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid$i, :bid$i, :aid$i, :delta$i, CURRENT_TIMESTAMP);
END;
SQL
    done
    echo '\endpipeline'
  } > "$OUT/tpcb$k.sql"
done

run() { # run NAME CMD... : pinned to CPU 1, timed
  local name=$1; shift
  psql -q "$URL" -c CHECKPOINT > /dev/null 2>&1 || true
  taskset -c 1 /usr/bin/time -f '%U %S' -o "$OUT/$name.time" timeout -k 3 $((D + 15)) "$@" > "$OUT/$name.out" 2>&1 || true
}

for rep in $(seq 1 "$REPS"); do
  for sc in $SCENARIOS; do
    case $sc in
      tpcb)
        run "$sc.pgbench.$rep" pgbench -M prepared -c "$CLIENTS" -j 1 -T "$D" "$URL"
        run "$sc.perfbase.$rep" "$PERFBASE" pg "$URL" -w tpcb -s "$SCALE" -c "$CLIENTS" -t 1 -d "${D}s" -q --no-store --json "$OUT/$sc.perfbase.$rep.json" ;;
      tpcb-p2|tpcb-p8|tpcb-p32)
        k=${sc#tpcb-p}
        run "$sc.pgbench.$rep" pgbench -M prepared -c "$CLIENTS" -j 1 -T "$D" -f "$OUT/tpcb$k.sql" -n "$URL"
        run "$sc.perfbase.$rep" "$PERFBASE" pg "$URL" -w tpcb --pipeline "$k" -s "$SCALE" -c "$CLIENTS" -t 1 -d "${D}s" -q --no-store --json "$OUT/$sc.perfbase.$rep.json" ;;
      select-only)
        run "$sc.pgbench.$rep" pgbench -M prepared -S -c "$CLIENTS" -j 1 -T "$D" "$URL"
        run "$sc.perfbase.$rep" "$PERFBASE" pg "$URL" -w select-only -s "$SCALE" -c "$CLIENTS" -t 1 -d "${D}s" -q --no-store --json "$OUT/$sc.perfbase.$rep.json" ;;
      function)
        run "$sc.pgbench.$rep" pgbench -M prepared -c "$CLIENTS" -j 1 -T "$D" -f "$OUT/tx.sql" -n "$URL"
        run "$sc.perfbase.$rep" "$PERFBASE" pg "$URL" -w tpcb-function -s "$SCALE" -c "$CLIENTS" -t 1 -d "${D}s" -q --no-store --json "$OUT/$sc.perfbase.$rep.json" ;;
      function-pipelined)
        run "$sc.pgbench.$rep" pgbench -M prepared -c "$CLIENTS" -j 1 -T "$D" -f "$OUT/tx.sql" -n "$URL"
        run "$sc.perfbase.$rep" "$PERFBASE" pg "$URL" -w tpcb-function --pipeline 8 -s "$SCALE" -c "$CLIENTS" -t 1 -d "${D}s" -q --no-store --json "$OUT/$sc.perfbase.$rep.json" ;;
      *) die "unknown scenario $sc" ;;
    esac
    log "rep $rep $sc done"
  done
done

python3 - "$OUT" "$SCENARIOS" "$REPS" <<'PY'
import json, re, statistics, sys
out, scenarios, reps = sys.argv[1], sys.argv[2].split(), int(sys.argv[3])
def cpu(path):
    u, s = open(path).read().split()[-2:]
    return float(u) + float(s)
# TPC-B transactions per pgbench script run.
PER_SCRIPT = {"tpcb-p2": 2, "tpcb-p8": 8, "tpcb-p32": 32}
def pgbench(name):
    t = open(f"{out}/{name}.out").read()
    k = PER_SCRIPT.get(name.split(".")[0], 1)
    tps = k * float(re.search(r"tps = ([\d.]+)", t).group(1))
    n = k * int(re.search(r"number of transactions actually processed: (\d+)", t).group(1))
    lat = float(re.search(r"latency average = ([\d.]+) ms", t).group(1))
    return tps, n, lat, None
def perfbase(name):
    r = json.load(open(f"{out}/{name}.json"))
    ok = r["requests"] - sum(r["errors"].values())
    return ok / r["duration_s"], ok, r["latency_ms"]["mean"], r["latency_ms"]["p99"]
print(f"## perfbase pg vs pgbench ({out})\n")
for sc in scenarios:
    rows = {}
    for tool, parse in (("pgbench", pgbench), ("perfbase", perfbase)):
        vals = []
        for rep in range(1, reps + 1):
            name = f"{sc}.{tool}.{rep}"
            try:
                tps, n, lat, p99 = parse(name)
                vals.append((tps, cpu(f"{out}/{name}.time") * 1e6 / max(n, 1), lat, p99))
            except Exception as e:
                print(f"  {name}: no result ({e})")
        rows[tool] = vals
    print(f"### {sc}\n\n| tool | runs | TPS (median, min–max) | client CPU µs/tx | latency avg ms | p99 ms |\n|---|---|---|---|---|---|")
    med = {}
    for tool, vals in rows.items():
        if not vals:
            continue
        tps = [v[0] for v in vals]; c = [v[1] for v in vals]
        med[tool] = (statistics.median(tps), statistics.median(c))
        p99 = [v[3] for v in vals if v[3] is not None]
        print(f"| {tool} | {len(vals)} | {med[tool][0]:,.0f} ({min(tps):,.0f}–{max(tps):,.0f}) | {med[tool][1]:.1f} | {statistics.median(v[2] for v in vals):.3f} | {statistics.median(p99):.3f} |" if p99 else
              f"| {tool} | {len(vals)} | {med[tool][0]:,.0f} ({min(tps):,.0f}–{max(tps):,.0f}) | {med[tool][1]:.1f} | {statistics.median(v[2] for v in vals):.3f} | — |")
    if "pgbench" in med and "perfbase" in med:
        print(f"\nperfbase/pgbench: TPS {med['perfbase'][0] / med['pgbench'][0]:.2f}, client CPU µs/tx {med['perfbase'][1] / med['pgbench'][1]:.2f}\n")
PY
