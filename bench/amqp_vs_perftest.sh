#!/usr/bin/env bash
# perfbase amqp --mode stream beside RabbitMQ PerfTest (com.rabbitmq:perf-test from Maven
# Central, on Debian's JRE): the same RabbitMQ (scripts/services.sh, pinned to CPU 0), one
# producer and one consumer, D seconds, each of: 1 KB transient, 1 KB persistent, 10 KB
# transient; the tool pinned to CPU 1. Prints consumed msg/s and client CPU µs per message
# (user+sys of the whole process over the messages consumed; PerfTest's includes its JVM
# start and JIT) and the ratios perfbase/PerfTest. PerfTest's producer publishes without
# waiting for anything but its socket; perfbase hands PIPELINE messages at once to its
# connection (--pipeline; 1 = one at a time, waiting until each is written) and, with
# MAX_LAG, waits while that many messages are published and not yet consumed (--max-lag), so
# that it does not bury the consumer under a backlog the broker then serves more slowly.
#
#   bench/amqp_vs_perftest.sh              # D=10 REPS=2 PIPELINE=32 MAX_LAG=1000
#   PIPELINE=1 MAX_LAG= bench/amqp_vs_perftest.sh   # perfbase's defaults
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
D=${D:-10}
REPS=${REPS:-2}
PIPELINE=${PIPELINE:-32}
MAX_LAG=${MAX_LAG-1000}
PERFBASE=${PERFBASE:-target/release/perfbase}
PT_VERSION=2.22.1
PT_LIB="$HOME/.cache/perf-test-$PT_VERSION/lib"
OUT=bench/out/amqp-perftest-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"
need_apt java default-jre-headless "no Java (apt-get install default-jre-headless)"
if [ ! -f "$PT_LIB/perf-test-$PT_VERSION.jar" ]; then
  need_apt mvn maven "no mvn (apt-get install maven)"
  tmp=$(mktemp -d)
  cat > "$tmp/pom.xml" << POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>local.bench</groupId><artifactId>perftest</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies><dependency><groupId>com.rabbitmq</groupId><artifactId>perf-test</artifactId>
    <version>$PT_VERSION</version></dependency></dependencies></project>
POM
  (cd "$tmp" && mvn -q -B dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$PT_LIB") || die "PerfTest did not download"
fi
[ -x "$PERFBASE" ] || cargo build --release --bin perfbase
scripts/services.sh up rabbitmq > /dev/null
eval "$(scripts/services.sh env rabbitmq)"
URL=$PERFBASE_AMQP_URL
case "$URL" in *@127.0.0.1:*) ;; *) die "refusing to load anything but 127.0.0.1" ;; esac
for pid in $PERFBASE_RABBITMQ_PID $(pgrep -P "$PERFBASE_RABBITMQ_PID"); do taskset -a -p -c 0 "$pid" > /dev/null 2>&1 || true; done

run() { local name=$1; shift; taskset -c 1 /usr/bin/time -f '%U %S' -o "$OUT/$name.time" timeout -k 5 $(( D + 60 )) "$@" > "$OUT/$name.out" 2>&1 || true; }
SCENARIOS=("1024 transient" "1024 persistent" "10240 transient")
for rep in $(seq 1 "$REPS"); do
  for sc in "${SCENARIOS[@]}"; do
    read -r size kind <<< "$sc"
    pt=(-h "$URL" -x 1 -y 1 -z "$D" -s "$size")
    pb=(amqp "$URL" --mode stream --consumers 1 -c 1 -d "${D}s" --size "$size" --pipeline "$PIPELINE" -q --no-store)
    if [ "$kind" = persistent ]; then pt+=(-f persistent); pb+=(--persistent); fi
    if [ -n "$MAX_LAG" ]; then pb+=(--max-lag "$MAX_LAG"); fi
    run "perftest.$size-$kind.$rep" java -cp "$PT_LIB/*" com.rabbitmq.perf.PerfTest "${pt[@]}"
    run "perfbase.$size-$kind.$rep" "$PERFBASE" "${pb[@]}"
    log "rep $rep: $size $kind done"
  done
done
python3 - "$OUT" "$REPS" "$D" "$PIPELINE" "${MAX_LAG:-none}" << 'PY'
import re, statistics, sys
out, reps, d, pipeline, lag = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
cpu = lambda p: sum(map(float, open(p).read().split()[-2:]))
def perftest(path):
    text = open(path).read()
    # The per-second lines' received counts, summed: what the consumer really got.
    got = sum(int(x) for x in re.findall(r"received: (\d+) msg/s", text))
    return got / d, got
def perfbase(path):
    m = re.search(r"Consumed\s+([\d,]+) in ([\d.]+)s, ([\d,.]+) msg/s", open(path).read())
    n = int(m.group(1).replace(",", ""))
    return float(m.group(3).replace(",", "")), n
print(f"## perfbase amqp --mode stream --pipeline {pipeline} --max-lag {lag} vs RabbitMQ PerfTest, 1 producer + 1 consumer, {d} s ({out})\n")
print("| scenario | PerfTest msg/s | PerfTest CPU µs/msg | perfbase msg/s | perfbase CPU µs/msg | msg/s ratio | CPU/msg ratio |")
print("|---|---|---|---|---|---|---|")
for sc in ["1024-transient", "1024-persistent", "10240-transient"]:
    rows = {"perftest": [], "perfbase": []}
    for rep in range(1, reps + 1):
        for tool, parse in (("perftest", perftest), ("perfbase", perfbase)):
            try:
                rate, n = parse(f"{out}/{tool}.{sc}.{rep}.out")
                rows[tool].append((rate, cpu(f"{out}/{tool}.{sc}.{rep}.time") * 1e6 / n))
            except Exception as e:
                print(f"{tool} {sc} rep {rep}: {e}", file=sys.stderr)
    if not rows["perftest"] or not rows["perfbase"]:
        continue
    med = {k: (statistics.median(r for r, _ in v), statistics.median(c for _, c in v)) for k, v in rows.items()}
    runs = lambda k, i: ", ".join(f"{x[i]:,.0f}" if i == 0 else f"{x[i]:.1f}" for x in rows[k])
    print(f"| {sc} | {med['perftest'][0]:,.0f} ({runs('perftest', 0)}) | {med['perftest'][1]:.1f} | "
          f"{med['perfbase'][0]:,.0f} ({runs('perfbase', 0)}) | {med['perfbase'][1]:.1f} | "
          f"{med['perfbase'][0] / med['perftest'][0]:.2f} | {med['perfbase'][1] / med['perftest'][1]:.2f} |")
PY
