#!/usr/bin/env bash
# perfbase kafka beside Kafka's own perf tools (org.apache.kafka.tools.ProducerPerformance and
# ConsumerPerformance, from the broker's kafka-tools jar, on the machine's Java 17): the same
# broker (scripts/services.sh up kafka, pinned to CPU 0), the tool pinned to CPU 1, the same
# records for both: N records of SIZE bytes, acks=ACKS, batch.size BATCH, linger LINGER ms,
# compression CODEC, on a topic of PARTITIONS partitions created afresh for each run.
#
# - produce: ProducerPerformance --throughput -1 (sends as fast as its buffer lets it; the
#   Java producer keeps up to 32 MB in flight) against perfbase's closed model with CONNS
#   sessions, each waiting for its record's acknowledgement (CONNS records in flight).
# - consume: the topic prefilled once with N records, then ConsumerPerformance --messages N
#   against perfbase -w consume -n N, one consumer each, each run in a new group.
# - open model: perfbase at RATE records/s for D seconds: the achieved rate against the
#   asked one.
# CPU per record is the tool's user+sys over the records (the medians of REPS runs), the JVM's
# start and JIT included, as a user running the tool pays them; a second ratio leaves out
# the CPU of the same tool run for one record (its start, connection and shutdown).
#
#   bench/kafka_vs_perftest.sh                  # N=500000 SIZE=1024 ACKS=1 REPS=3
#   CODEC=zstd ACKS=all bench/kafka_vs_perftest.sh
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
N=${N:-500000}
SIZE=${SIZE:-1024}
ACKS=${ACKS:-1}
BATCH=${BATCH:-16384}
LINGER=${LINGER:-5}
CODEC=${CODEC:-none}
PARTITIONS=${PARTITIONS:-1}
CONNS=${CONNS:-2000}
RATE=${RATE:-20000}
D=${D:-10}
REPS=${REPS:-3}
PERFBASE=${PERFBASE:-target/release/perfbase}
OUT=bench/out/kafka-perftest-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"
[ -x "$PERFBASE" ] || cargo build --release --bin perfbase
scripts/services.sh up kafka > /dev/null
eval "$(scripts/services.sh env kafka)"
URL=$PERFBASE_KAFKA_URL
case "$URL" in *@127.0.0.1:*) ;; *) die "refusing to load anything but 127.0.0.1" ;; esac
BOOT=${URL##*@}
taskset -a -p -c 0 "$PERFBASE_KAFKA_PID" > /dev/null
(umask 077 && cat > "$OUT/client.properties") << EOF
security.protocol=SASL_PLAINTEXT
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="perfbase" password="perfbase";
EOF
JAVA=(java -cp "$PERFBASE_KAFKA_LIB/*" -Dlog4j2.level=warn)

run() { local name=$1; shift; taskset -c 1 /usr/bin/time -f '%U %S' -o "$OUT/$name.time" timeout -k 5 600 "$@" > "$OUT/$name.out" 2>&1 || true; }
fresh() { "$PERFBASE" kafka "$URL" --topic "$1" --init --partitions "$PARTITIONS" -n 1 -q --no-store > /dev/null; }

for rep in $(seq 1 "$REPS"); do
  fresh pt-produce
  run "perftest.produce.$rep" "${JAVA[@]}" org.apache.kafka.tools.ProducerPerformance \
    --topic pt-produce --num-records "$N" --record-size "$SIZE" --throughput -1 \
    --command-config "$OUT/client.properties" \
    --producer-props bootstrap.servers="$BOOT" acks="$ACKS" batch.size="$BATCH" linger.ms="$LINGER" compression.type="$CODEC"
  fresh pb-produce
  run "perfbase.produce.$rep" "$PERFBASE" kafka "$URL" --topic pb-produce --acks "$ACKS" --size "$SIZE" \
    --batch-size "$BATCH" --linger "${LINGER}ms" --compression "$CODEC" -c "$CONNS" -n "$N" -q --no-store \
    --json "$OUT/perfbase.produce.$rep.json"
  log "rep $rep: produce done"
done

# The tools' fixed cost: one record each.
fresh pt-one
run "perftest.produce.one" "${JAVA[@]}" org.apache.kafka.tools.ProducerPerformance \
  --topic pt-one --num-records 1 --record-size "$SIZE" --throughput -1 \
  --command-config "$OUT/client.properties" --producer-props bootstrap.servers="$BOOT" acks="$ACKS"
run "perftest.consume.one" "${JAVA[@]}" org.apache.kafka.tools.ConsumerPerformance \
  --bootstrap-server "$BOOT" --topic pt-one --messages 1 --group "pt-one-$$" \
  --command-config "$OUT/client.properties" --timeout 60000

fresh consume
"$PERFBASE" kafka "$URL" --topic consume --prefill "$N" --size "$SIZE" -n 1 -q --no-store > /dev/null
for rep in $(seq 1 "$REPS"); do
  run "perftest.consume.$rep" "${JAVA[@]}" org.apache.kafka.tools.ConsumerPerformance \
    --bootstrap-server "$BOOT" --topic consume --messages "$N" --group "pt-$rep-$$" \
    --command-config "$OUT/client.properties" --timeout 60000
  run "perfbase.consume.$rep" "$PERFBASE" kafka "$URL" -w consume --topic consume --group "pb-$rep-$$" \
    -n "$N" -q --no-store --json "$OUT/perfbase.consume.$rep.json"
  log "rep $rep: consume done"
done

fresh open
run "perfbase.open" "$PERFBASE" kafka "$URL" --topic open --acks "$ACKS" --size "$SIZE" -r "$RATE" -d "${D}s" \
  -q --no-store --json "$OUT/perfbase.open.json"

python3 - "$OUT" "$REPS" "$N" "$SIZE" "$ACKS" "$CODEC" "$CONNS" "$RATE" << 'PY'
import json, re, statistics, sys
out, reps, n, size, acks, codec, conns, rate = sys.argv[1:9]
reps, n = int(reps), int(n)
cpu = lambda p: sum(map(float, open(p).read().split()[-2:]))
def pt_produce(path):
    # "500000 records sent, 123456.7 records/sec (120.56 MB/sec), 12.3 ms avg latency, ..."
    m = re.findall(r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency(?:, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th)?", open(path).read())
    last = m[-1]
    return float(last[1]), int(last[0]), float(last[3]), last[7] or "-"
def pt_consume(path):
    lines = [l for l in open(path).read().splitlines() if re.match(r"\d{4}-\d\d-\d\d", l)]
    f = [x.strip() for x in lines[-1].split(",")]
    # start, end, MB, MB/s, nMsg, nMsg/s, rebalance ms, fetch ms, fetch MB/s, fetch nMsg/s
    return float(f[5]), int(float(f[4])), float(f[3])
def pb(path):
    v = json.load(open(path))
    ok = v["requests"] - sum(v["errors"].values())
    return v["rps"], ok, v["latency_ms"]["mean"], v["latency_ms"]["p99"], v["bytes_read"] / v["duration_s"] / 1e6
rows = {}
for phase in ("produce", "consume"):
    for tool in ("perftest", "perfbase"):
        rs, cs, extra = [], [], []
        for rep in range(1, reps + 1):
            base = f"{out}/{tool}.{phase}.{rep}"
            try:
                if tool == "perftest":
                    r = pt_produce(base + ".out") if phase == "produce" else pt_consume(base + ".out")
                else:
                    r = pb(base + ".json")
            except Exception as e:
                print(f"{tool} {phase} rep {rep}: no result ({e}); see {base}.out", file=sys.stderr)
                continue
            rs.append(r[0]); cs.append(cpu(base + ".time") * 1e6 / max(r[1], 1)); extra.append(r)
        rows[(phase, tool)] = (statistics.median(rs) if rs else 0, statistics.median(cs) if cs else 0, extra)
print(f"## perfbase kafka vs Kafka's perf tools: {n:,} records of {size} B, acks={acks}, compression {codec}; perfbase produce with {conns} records in flight ({out})\n")
print("| phase | tool | records/s (median) | CPU µs/record | runs |")
print("|---|---|---|---|---|")
for (phase, tool), (r, c, extra) in rows.items():
    print(f"| {phase} | {'kafka-' + phase + '-perf-test' if tool == 'perftest' else 'perfbase'} | {r:,.0f} | {c:.2f} | {len(extra)} |")
try:
    v = json.load(open(f"{out}/perfbase.open.json"))
    o = v["open_model"]
    print(f"\nopen model at {float(rate):,.0f}/s: achieved {o['achieved_rate']:,.1f}/s "
          f"({(o['achieved_rate'] / float(rate) - 1) * 100:+.2f} %), late {o['late']}, unsent {o['unsent']}, "
          f"errors {sum(v['errors'].values())}, p99 {v['latency_ms']['p99']:.2f} ms")
except Exception as e:
    print(f"\nopen model: no result ({e})")
print()
for phase in ("produce", "consume"):
    (pr, pc, _), (br, bc, _) = rows[(phase, "perftest")], rows[(phase, "perfbase")]
    try:
        fixed = cpu(f"{out}/perftest.{phase}.one.time") * 1e6 / n
        print(f"{phase}: kafka-perf's start and stop (one record: {fixed * n / 1e6:.2f} s CPU) left out, "
              f"its CPU per record is {pc - fixed:.2f} µs: perfbase's is x{bc / (pc - fixed):.2f} of it")
    except Exception as e:
        print(f"{phase}: no one-record run ({e})")
print()
for phase in ("produce", "consume"):
    (pr, pc, _), (br, bc, _) = rows[(phase, "perftest")], rows[(phase, "perfbase")]
    if pr and br and pc:
        print(f"perfbase/kafka-perf {phase}: records/s x{br / pr:.2f}, CPU per record x{bc / pc:.2f}")
PY
