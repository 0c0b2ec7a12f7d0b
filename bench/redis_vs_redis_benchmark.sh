#!/usr/bin/env bash
# perfbase redis beside redis-benchmark: the same Redis (scripts/services.sh, pinned to CPU 0),
# the same clients (50), pipeline, value size (3 bytes) and request count, one client thread
# pinned to CPU 1, alternating runs. At pipeline 1 the client is the limit on this machine,
# so compare throughput (ops/s); at pipeline 16 both sides are busy.
#
#   bench/redis_vs_redis_benchmark.sh        # N=500000 REPS=3 PIPELINES="1 16" OPS="set get"
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

N=${N:-500000}
REPS=${REPS:-3}
PIPELINES=${PIPELINES:-"1 16"}
OPS=${OPS:-"set get"}
CLIENTS=${CLIENTS:-50}
PERFBASE=${PERFBASE:-target/release/perfbase}
OUT=bench/out/redis-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"

[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs"
need_apt redis-benchmark redis-tools "redis-benchmark is missing"
need_apt /usr/bin/time time "/usr/bin/time is missing"
[ -x "$PERFBASE" ] || cargo build --release --bin perfbase

scripts/services.sh up redis >/dev/null
eval "$(scripts/services.sh env redis)"
URL=$PERFBASE_REDIS_URL
case "$URL" in *@127.0.0.1:*) ;; *) die "refusing to load anything but 127.0.0.1 ($URL)" ;; esac
PORT=${URL##*:}; PASS=${URL#redis://:}; PASS=${PASS%%@*}
taskset -a -p -c 0 "$PERFBASE_REDIS_PID" > /dev/null
# GET must hit: redis-benchmark's key:__rand_int__ keys and perfbase's keyspace both exist.
"$PERFBASE" redis "$URL" --prefill -w ping -n 1 -q --no-store --keyspace 100000 > /dev/null

run() {
  local name=$1; shift
  taskset -c 1 /usr/bin/time -f '%U %S' -o "$OUT/$name.time" timeout -k 3 120 "$@" > "$OUT/$name.out" 2>&1 || true
}
for rep in $(seq 1 "$REPS"); do
  for p in $PIPELINES; do
    for op in $OPS; do
      run "rb.$op.P$p.$rep" redis-benchmark -h 127.0.0.1 -p "$PORT" -a "$PASS" -c "$CLIENTS" -n "$N" -P "$p" -d 3 -r 100000 -t "$op" --csv
      run "pb.$op.P$p.$rep" "$PERFBASE" redis "$URL" -w "$op" -c "$CLIENTS" -n "$N" -P "$p" -t 1 --value-size 3 --keyspace 100000 -q --no-store --json "$OUT/pb.$op.P$p.$rep.json"
    done
  done
  log "rep $rep done"
done

python3 - "$OUT" "$REPS" "$PIPELINES" "$OPS" "$N" <<'PY'
import csv, io, json, statistics, sys
out, reps, pipes, ops, total = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split(), int(sys.argv[5])
def cpu(p):
    u, s = open(p).read().split()[-2:]
    return float(u) + float(s)
print(f"## perfbase redis vs redis-benchmark ({out})\n")
print("| op | pipeline | redis-benchmark ops/s | perfbase ops/s | ratio | client CPU µs/op (rb → perfbase) |\n|---|---|---|---|---|---|")
for p in pipes:
    for op in ops:
        rb, pb = [], []
        for rep in range(1, reps + 1):
            try:
                rows = list(csv.reader(io.StringIO(open(f"{out}/rb.{op}.P{p}.{rep}.out").read())))
                rps = float(rows[1][1])
                rb.append((rps, cpu(f"{out}/rb.{op}.P{p}.{rep}.time") * 1e6 / total))
            except Exception as e:
                print(f"rb {op} P{p} rep {rep}: {e}")
            try:
                r = json.load(open(f"{out}/pb.{op}.P{p}.{rep}.json"))
                ok = r["requests"] - sum(r["errors"].values())
                pb.append((ok / r["duration_s"], cpu(f"{out}/pb.{op}.P{p}.{rep}.time") * 1e6 / max(ok, 1)))
            except Exception as e:
                print(f"pb {op} P{p} rep {rep}: {e}")
        if rb and pb:
            rbr = statistics.median(x[0] for x in rb); pbr = statistics.median(x[0] for x in pb)
            print(f"| {op} | {p} | {rbr:,.0f} | {pbr:,.0f} | {pbr / rbr:.2f} | {statistics.median(x[1] for x in rb):.2f} → {statistics.median(x[1] for x in pb):.2f} |")
PY
