#!/usr/bin/env bash
# perfbase mongo beside pymongo (the official Python driver) in a loop, against the same
# FerretDB (scripts/services.sh up mongodb, pinned to CPU 0), one connection each, the client
# pinned to CPU 1, alternating runs of D seconds. Both do the same operations on the same
# collections: find_one by a random _id of the keyspace, and insert_one of a small document.
# FerretDB, not the client, is the limit here (it matches _id without an index), so the
# figures to compare are the client CPU per operation as much as the throughput.
#
#   bench/mongo_vs_peer.sh        # D=5 REPS=3 OPS="find-one insert-one" KEYSPACE=1000
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

D=${D:-5}
REPS=${REPS:-3}
OPS=${OPS:-"find-one insert-one"}
KEYSPACE=${KEYSPACE:-1000}
PERFBASE=${PERFBASE:-target/release/perfbase}
OUT=bench/out/mongo-$(date -u +%Y%m%dT%H%M%SZ)
VENV=.services/bench-pymongo
mkdir -p "$OUT"

[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs"
need_apt /usr/bin/time time "/usr/bin/time is missing"
[ -x "$PERFBASE" ] || cargo build --release --bin perfbase
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV" && "$VENV/bin/pip" install -q pymongo || die "cannot install pymongo into $VENV"
fi

scripts/services.sh up mongodb >/dev/null
eval "$(scripts/services.sh env mongodb)"
URL=${PERFBASE_MONGODB_URL%/}/perfbase_bench
case "$URL" in mongodb://127.0.0.1:*) ;; *) die "refusing to load anything but 127.0.0.1 ($URL)" ;; esac
taskset -a -p -c 0 "$PERFBASE_MONGODB_PID" > /dev/null
"$PERFBASE" mongo "$URL" --init --keyspace "$KEYSPACE" --scan-docs 10 -w find-one -n 1 -q --no-store > /dev/null

# The peer: the same operations, timed per call; prints ops, seconds and p50/p99 in ms.
cat > "$OUT/peer.py" <<'PY'
import random, sys, time
from pymongo import MongoClient
url, op, seconds, keyspace = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
db = MongoClient(url, maxPoolSize=1).get_default_database()
docs, inserts = db["perfbase_docs"], db["perfbase_inserts"]
pad = "x" * 100
lat, n, start = [], 0, time.perf_counter()
end = start + seconds
while True:
    t0 = time.perf_counter()
    if t0 >= end:
        break
    if op == "find-one":
        docs.find_one({"_id": "k%012d" % random.randrange(keyspace)})
    else:
        inserts.insert_one({"n": n, "pad": pad})
    lat.append(time.perf_counter() - t0)
    n += 1
lat.sort()
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000
print(n, time.perf_counter() - start, q(0.5), q(0.99))
PY

run() {
  local name=$1; shift
  taskset -c 1 /usr/bin/time -f '%U %S' -o "$OUT/$name.time" timeout -k 3 $((D + 60)) "$@" > "$OUT/$name.out" 2>&1 || true
}
for rep in $(seq 1 "$REPS"); do
  for op in $OPS; do
    run "py.$op.$rep" "$VENV/bin/python" "$OUT/peer.py" "$URL" "$op" "$D" "$KEYSPACE"
    run "pb.$op.$rep" "$PERFBASE" mongo "$URL" -w "$op" -c 1 -t 1 -d "${D}s" --keyspace "$KEYSPACE" -q --no-store --json "$OUT/pb.$op.$rep.json"
  done
  log "rep $rep done"
done

python3 - "$OUT" "$REPS" "$OPS" <<'PY'
import json, statistics, sys
out, reps, ops = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
def cpu(p):
    u, s = open(p).read().split()[-2:]
    return float(u) + float(s)
print(f"## perfbase mongo vs pymongo, one connection, FerretDB ({out})\n")
print("| op | pymongo ops/s | perfbase ops/s | ratio | client CPU µs/op (pymongo → perfbase) | p50 ms (pymongo → perfbase) |\n|---|---|---|---|---|---|")
for op in ops:
    py, pb = [], []
    for rep in range(1, reps + 1):
        try:
            n, secs, p50, p99 = map(float, open(f"{out}/py.{op}.{rep}.out").read().split()[-4:])
            py.append((n / secs, cpu(f"{out}/py.{op}.{rep}.time") * 1e6 / n, p50))
        except Exception as e:
            print(f"pymongo {op} rep {rep}: {e}")
        try:
            r = json.load(open(f"{out}/pb.{op}.{rep}.json"))
            ok = r["requests"] - sum(r["errors"].values())
            pb.append((ok / r["duration_s"], cpu(f"{out}/pb.{op}.{rep}.time") * 1e6 / max(ok, 1), r["latency_ms"]["p50"]))
        except Exception as e:
            print(f"perfbase {op} rep {rep}: {e}")
    if py and pb:
        m = lambda xs, i: statistics.median(x[i] for x in xs)
        print(f"| {op} | {m(py, 0):,.0f} | {m(pb, 0):,.0f} | {m(pb, 0) / m(py, 0):.2f} | {m(py, 1):.0f} → {m(pb, 1):.0f} | {m(py, 2):.2f} → {m(pb, 2):.2f} |")
PY
