#!/usr/bin/env bash
# perfbase amqp beside a small Python pika publisher (the reference client that installs here;
# RabbitMQ PerfTest needs Maven Central and a JVM — see shared/bench/backends for its figures).
# The same RabbitMQ (scripts/services.sh, pinned to CPU 0), one connection, N messages of
# SIZE bytes, not persistent, no confirms, to a fresh queue; the tool pinned to CPU 1.
# Prints publish rate and client CPU µs per message.
#
#   bench/amqp_vs_pika.sh          # N=100000 SIZE=1024 REPS=3
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
N=${N:-100000}
SIZE=${SIZE:-1024}
REPS=${REPS:-3}
PERFBASE=${PERFBASE:-target/release/perfbase}
OUT=bench/out/amqp-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"
python3 -c 'import pika' 2>/dev/null || pip install -q pika || die "pika does not install"
[ -x "$PERFBASE" ] || cargo build --release --bin perfbase
scripts/services.sh up rabbitmq >/dev/null
eval "$(scripts/services.sh env rabbitmq)"
URL=$PERFBASE_AMQP_URL
case "$URL" in *@127.0.0.1:*) ;; *) die "refusing to load anything but 127.0.0.1" ;; esac
for pid in $PERFBASE_RABBITMQ_PID $(pgrep -P "$PERFBASE_RABBITMQ_PID"); do taskset -a -p -c 0 "$pid" >/dev/null 2>&1 || true; done

cat > "$OUT/pika_publish.py" <<'PY'
import os, sys, time, pika
url, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
conn = pika.BlockingConnection(pika.URLParameters(url))
ch = conn.channel()
q = ch.queue_declare(queue="", exclusive=True, auto_delete=True).method.queue
body = b"x" * size
t0 = time.monotonic()
for i in range(n):
    ch.basic_publish(exchange="", routing_key=q, body=body)
conn.process_data_events(0)
dt = time.monotonic() - t0
print(f"published {n} in {dt:.3f} s: {n / dt:.1f} msg/s")
conn.close()
PY
run() { local name=$1; shift; taskset -c 1 /usr/bin/time -f '%U %S' -o "$OUT/$name.time" timeout -k 3 300 "$@" > "$OUT/$name.out" 2>&1 || true; }
for rep in $(seq 1 "$REPS"); do
  run "pika.$rep" python3 "$OUT/pika_publish.py" "$URL" "$N" "$SIZE"
  run "perfbase.$rep" "$PERFBASE" amqp "$URL" --mode publish --size "$SIZE" -c 1 -t 1 -n "$N" -q --no-store --json "$OUT/perfbase.$rep.json"
  log "rep $rep done"
done
python3 - "$OUT" "$REPS" "$N" <<'PY'
import json, re, statistics, sys
out, reps, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cpu = lambda p: sum(map(float, open(p).read().split()[-2:]))
rows = {"pika": [], "perfbase": []}
for rep in range(1, reps + 1):
    try:
        rate = float(re.search(r": ([\d.]+) msg/s", open(f"{out}/pika.{rep}.out").read()).group(1))
        rows["pika"].append((rate, cpu(f"{out}/pika.{rep}.time") * 1e6 / n))
    except Exception as e:
        print(f"pika rep {rep}: {e}")
    try:
        r = json.load(open(f"{out}/perfbase.{rep}.json"))
        ok = r["requests"] - sum(r["errors"].values())
        rows["perfbase"].append((ok / r["duration_s"], cpu(f"{out}/perfbase.{rep}.time") * 1e6 / ok))
    except Exception as e:
        print(f"perfbase rep {rep}: {e}")
print(f"## perfbase amqp vs pika publisher ({out})\n\n| tool | runs | msg/s (median) | client CPU µs/msg |\n|---|---|---|---|")
med = {}
for k, v in rows.items():
    if v:
        med[k] = (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
        print(f"| {k} | {len(v)} | {med[k][0]:,.0f} | {med[k][1]:.1f} |")
if len(med) == 2:
    print(f"\nperfbase/pika: publish rate {med['perfbase'][0] / med['pika'][0]:.2f}, client CPU µs/msg {med['perfbase'][1] / med['pika'][1]:.2f}")
PY
