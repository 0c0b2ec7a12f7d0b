#!/usr/bin/env bash
# perfbase mysql beside sysbench on MariaDB: the same server (scripts/services.sh, pinned to
# CPU 0), 10 clients, the same duration, the tool pinned to CPU 1, alternating runs.
#
# Workload: one primary-key point SELECT per transaction. sysbench's oltp_point_select reads
# sbtest1 (10 000 rows); perfbase's select-pk reads perfbase_items (10 000 rows, same shape of
# query: SELECT … WHERE id = ?, prepared). Prints TPS, client CPU µs per query and the ratios.
#
#   bench/mysql_vs_sysbench.sh          # D=10 REPS=3 CLIENTS=10
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

D=${D:-10}
REPS=${REPS:-3}
CLIENTS=${CLIENTS:-10}
PERFBASE=${PERFBASE:-target/release/perfbase}
OUT=bench/out/mysql-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"

[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs (server on CPU 0, tool on CPU 1)"
need_apt sysbench sysbench "sysbench is missing (apt-get install sysbench)"
need_apt /usr/bin/time time "/usr/bin/time is missing"
[ -x "$PERFBASE" ] || cargo build --release --bin perfbase

scripts/services.sh up mariadb >/dev/null
eval "$(scripts/services.sh env mariadb)"
URL=$PERFBASE_MYSQL_URL
case "$URL" in *@127.0.0.1:*) ;; *) die "refusing to load anything but 127.0.0.1 ($URL)" ;; esac
PORT=${URL##*:}; PORT=${PORT%%/*}
taskset -a -p -c 0 "$PERFBASE_MARIADB_PID" > /dev/null

SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=perfbase --mysql-password=perfbase --mysql-db=perfbase --tables=1 --table-size=10000"
log "preparing sysbench's sbtest1 and perfbase's suite tables"
$SB oltp_point_select cleanup > /dev/null 2>&1 || true
$SB oltp_point_select prepare > "$OUT/prepare.txt" 2>&1
"$PERFBASE" mysql "$URL" --init -w select-pk --no-store > "$OUT/init.txt" 2>&1

run() {
  local name=$1; shift
  taskset -c 1 /usr/bin/time -f '%U %S' -o "$OUT/$name.time" timeout -k 3 $((D + 15)) "$@" > "$OUT/$name.out" 2>&1 || true
}
for rep in $(seq 1 "$REPS"); do
  run "sysbench.$rep" $SB --threads="$CLIENTS" --time="$D" --report-interval=0 oltp_point_select run
  run "perfbase.$rep" "$PERFBASE" mysql "$URL" -w select-pk -c "$CLIENTS" -t 1 -d "${D}s" -q --no-store --json "$OUT/perfbase.$rep.json"
  log "rep $rep done"
done

python3 - "$OUT" "$REPS" <<'PY'
import json, re, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
def cpu(p):
    u, s = open(p).read().split()[-2:]
    return float(u) + float(s)
rows = {"sysbench": [], "perfbase": []}
for rep in range(1, reps + 1):
    try:
        t = open(f"{out}/sysbench.{rep}.out").read()
        tps = float(re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", t).group(1))
        n = int(re.search(r"transactions:\s+(\d+)", t).group(1))
        p95 = float(re.search(r"95th percentile:\s+([\d.]+)", t).group(1))
        rows["sysbench"].append((tps, cpu(f"{out}/sysbench.{rep}.time") * 1e6 / n, p95))
    except Exception as e:
        print(f"sysbench rep {rep}: no result ({e})")
    try:
        r = json.load(open(f"{out}/perfbase.{rep}.json"))
        ok = r["requests"] - sum(r["errors"].values())
        rows["perfbase"].append((ok / r["duration_s"], cpu(f"{out}/perfbase.{rep}.time") * 1e6 / ok, r["latency_ms"]["p95"]))
    except Exception as e:
        print(f"perfbase rep {rep}: no result ({e})")
print(f"## perfbase mysql vs sysbench oltp_point_select ({out})\n")
print("| tool | runs | QPS (median, min–max) | client CPU µs/query | p95 ms |\n|---|---|---|---|---|")
med = {}
for tool, v in rows.items():
    if v:
        q = [x[0] for x in v]
        med[tool] = (statistics.median(q), statistics.median(x[1] for x in v))
        print(f"| {tool} | {len(v)} | {med[tool][0]:,.0f} ({min(q):,.0f}–{max(q):,.0f}) | {med[tool][1]:.1f} | {statistics.median(x[2] for x in v):.3f} |")
if len(med) == 2:
    print(f"\nperfbase/sysbench: QPS {med['perfbase'][0] / med['sysbench'][0]:.2f}, client CPU µs/query {med['perfbase'][1] / med['sysbench'][1]:.2f}")
PY
