#!/usr/bin/env bash
# perfbase grpc beside ghz: the same gRPC server (gRPC-Go's route_guide example, built by
# scripts/services.sh; the script starts its own instance on a free loopback port, pinned to
# CPU 0), the same calls, concurrency and call count for both tools, each pinned to CPU 1 with
# one thread (perfbase -t 1, ghz --cpus 1), runs alternating. Two call kinds:
#   unary             routeguide.RouteGuide/GetFeature {"latitude":409146138,"longitude":-746188906}
#                     (a point of the database: the reply is a named feature)
#   server-streaming  routeguide.RouteGuide/ListFeatures over the rectangle lo (40.0, -75.0),
#                     hi (42.0, -73.0), which holds all 100 features of the server's database:
#                     every call streams 100 replies
# Prints calls/s (successful calls over the tool's own measured span), the tool's CPU seconds
# (user+sys of the whole process, /usr/bin/time), CPU µs per call, the server's CPU %, and ends
# with one line per call kind: `perfbase/ghz KIND: calls/s xA, CPU per call xB` (ratios of the
# medians over the reps). Every run must finish with 0 errors, else the script says which and
# exits 1.
#
#   bench/grpc_vs_ghz.sh                                   # C=50 N_UNARY=200000 N_STREAM=20000 REPS=2
#   KINDS=unary REPS=1 N_UNARY=50000 bench/grpc_vs_ghz.sh
#   TOOLS=ghz bench/grpc_vs_ghz.sh                          # ghz alone (no perfbase needed)
#   PERFBASE=target/debug/perfbase REPS=1 N_UNARY=20000 N_STREAM=2000 bench/grpc_vs_ghz.sh
#
# Knobs (environment): C (concurrent calls, 50), CONNS (HTTP/2 connections they share: ghz's
# --connections, perfbase -c CONNS --streams C/CONNS; default C, one call per connection, which
# is perfbase's default shape for -c C), N_UNARY (calls per unary run, 200000), N_STREAM (calls
# per server-streaming run, 20000), REPS (2; each repetition runs both tools once per kind, the
# order alternating), KINDS ("unary server-streaming"), TOOLS ("perfbase ghz"), PAUSE (1 s
# between runs), CAP (300 s: each run is stopped after it), PORT (17051: the first port tried for
# the server), PERFBASE (target/release/perfbase, built with cargo when missing), GHZ (a ghz
# binary; default: v0.121.0, go-installed once into ~/.cache/ghz-v0.121.0/bin). Raw outputs and
# summary.txt land in bench/out/grpc-ghz-<UTC stamp>/.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
C=${C:-50}
CONNS=${CONNS:-$C}
N_UNARY=${N_UNARY:-200000}
N_STREAM=${N_STREAM:-20000}
REPS=${REPS:-2}
KINDS=${KINDS:-unary server-streaming}
TOOLS=${TOOLS:-perfbase ghz}
PAUSE=${PAUSE:-1}
CAP=${CAP:-300}
PORT=${PORT:-17051}
PERFBASE=${PERFBASE:-target/release/perfbase}
GHZ_VERSION=v0.121.0
GHZ=${GHZ:-$HOME/.cache/ghz-$GHZ_VERSION/bin/ghz}
SERVER_CPU=0
TOOL_CPU=1
UNARY_CALL=routeguide.RouteGuide/GetFeature
UNARY_DATA='{"latitude":409146138,"longitude":-746188906}'
STREAM_CALL=routeguide.RouteGuide/ListFeatures
STREAM_DATA='{"lo":{"latitude":400000000,"longitude":-750000000},"hi":{"latitude":420000000,"longitude":-730000000}}'
OUT=bench/out/grpc-ghz-$(date -u +%Y%m%dT%H%M%SZ)

for v in C CONNS N_UNARY N_STREAM REPS CAP; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')"
done
[[ "$PAUSE" =~ ^[0-9]+$ ]] || die "PAUSE must be a whole number of seconds (got '$PAUSE')"
if ! [[ "$PORT" =~ ^[1-9][0-9]*$ ]] || (( PORT < 1024 || PORT >= 32768 )); then
  die "PORT must be between 1024 and 32767, below the ephemeral range (got '$PORT')"
fi
(( C % CONNS == 0 )) || die "C ($C) must be a multiple of CONNS ($CONNS): each connection carries C/CONNS calls"
for k in $KINDS; do
  [[ "$k" == unary || "$k" == server-streaming ]] || die "unknown kind '$k' (known: unary server-streaming)"
done
for t in $TOOLS; do
  [[ "$t" == perfbase || "$t" == ghz ]] || die "unknown tool '$t' (known: perfbase ghz)"
done
[[ -n "${KINDS// /}" && -n "${TOOLS// /}" ]] || die "KINDS and TOOLS must not be empty"
(( $(nproc) >= 2 )) || die "need 2 CPUs (server on CPU $SERVER_CPU, tool on CPU $TOOL_CPU); nproc=$(nproc)"
for cmd in taskset timeout python3 ss; do command -v "$cmd" > /dev/null || die "no $cmd"; done
need_apt /usr/bin/time time "no /usr/bin/time (apt-get install time)"

# ghz, once per machine, from the Go module proxy (pinned version).
if wants ghz && [ ! -x "$GHZ" ]; then
  [[ "$GHZ" == "$HOME/.cache/ghz-$GHZ_VERSION/bin/ghz" ]] || die "GHZ=$GHZ is not an executable file"
  GO=$(command -v go || echo /usr/local/go/bin/go)
  [ -x "$GO" ] || die "ghz is missing and there is no Go to install it (https://go.dev/dl, into /usr/local/go)"
  log "go install github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION (once)"
  start=$SECONDS
  GOBIN=$(dirname "$GHZ") nice -n 10 "$GO" install "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION" \
    || die "go install of ghz $GHZ_VERSION failed"
  [ -x "$GHZ" ] || die "go install finished but $GHZ does not exist"
  log "ghz $GHZ_VERSION installed in $((SECONDS - start)) s"
fi
if wants perfbase; then
  if [ ! -x "$PERFBASE" ]; then
    [ "$PERFBASE" = target/release/perfbase ] || die "PERFBASE=$PERFBASE is not an executable file"
    log "building perfbase: cargo build --release --bin perfbase"
    cargo build --release --bin perfbase || die "cargo build --release failed"
  fi
  "$PERFBASE" grpc --help > /dev/null 2>&1 || die "$PERFBASE has no grpc command"
fi

# The server's binary and the proto from scripts/services.sh (built by its first `up grpc`).
scripts/services.sh up grpc > /dev/null
eval "$(scripts/services.sh env grpc)"
SERVER_BIN=$PERFBASE_GRPC_BIN_DIR/route_guide_server
[ -x "$SERVER_BIN" ] || die "no $SERVER_BIN (scripts/services.sh up grpc)"
mkdir -p "$OUT/proto"

# The proto both tools get: the services' proto3 copy of route_guide.proto (upstream writes it
# in edition 2023, which neither perfbase's protox nor ghz v0.121.0 reads; see
# scripts/services/grpc.sh's grpc_proto3).
PROTO=$PERFBASE_GRPC_PROTO_DIR/proto3/route_guide/routeguide/route_guide.proto
[ -s "$PROTO" ] || die "no $PROTO (scripts/services.sh up grpc)"

# Our own route_guide server on the first free port from PORT, on CPU 0 (taskset execs it, so
# $! is the server; its threads inherit the CPU), stopped on exit.
port_free() { [ -z "$(ss -Hltn "sport = :$1" 2> /dev/null)" ]; }
while ! port_free "$PORT"; do
  PORT=$((PORT + 1))
  (( PORT < 32768 )) || die "no free port below 32768"
done
mkdir -p "$OUT"
SERVER_PID=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2> /dev/null || true
    wait "$SERVER_PID" 2> /dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
taskset -c "$SERVER_CPU" "$SERVER_BIN" -port "$PORT" < /dev/null > "$OUT/server.log" 2>&1 &
SERVER_PID=$!
for ((i = 0; i < 100; i++)); do
  (exec 3<> "/dev/tcp/127.0.0.1/$PORT") 2> /dev/null && break
  kill -0 "$SERVER_PID" 2> /dev/null || die "the route_guide server exited at start; see $OUT/server.log"
  sleep 0.1
done
(( i < 100 )) || die "the route_guide server does not accept on 127.0.0.1:$PORT after 10 s; see $OUT/server.log"
TARGET=127.0.0.1:$PORT

GHZ_MOD=
wants ghz && GHZ_MOD=$(go version -m "$GHZ" 2> /dev/null || /usr/local/go/bin/go version -m "$GHZ" 2> /dev/null || true)
{
  echo "date_utc: ${OUT##*-}"
  echo "host: $(uname -srm), nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "C=$C CONNS=$CONNS N_UNARY=$N_UNARY N_STREAM=$N_STREAM REPS=$REPS KINDS='$KINDS' TOOLS='$TOOLS' PAUSE=${PAUSE}s CAP=${CAP}s"
  echo "server: route_guide_server pid $SERVER_PID at $TARGET (h2c), CPU $SERVER_CPU; $(cat "$PERFBASE_GRPC_BIN_DIR/VERSION" 2> /dev/null)"
  wants perfbase && echo "perfbase: $PERFBASE ($("$PERFBASE" --version 2>&1 | head -1))"
  wants ghz && echo "ghz: $GHZ ($(awk '$1 == "mod" {print $2, $3}' <<< "$GHZ_MOD"), built with $(head -1 <<< "$GHZ_MOD" | awk '{print $NF}'))"
  true
} > "$OUT/env.txt"

CLK_TCK=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat" 2> /dev/null || echo 0; }
FIRST=1
run() {   # run KIND TOOL REP
  local kind=$1 tool=$2 rep=$3 dir="$OUT/$1/$2/rep$3" rc=0 t0 t1 w0 w1 call data n
  if [ "$kind" = unary ]; then call=$UNARY_CALL data=$UNARY_DATA n=$N_UNARY; else call=$STREAM_CALL data=$STREAM_DATA n=$N_STREAM; fi
  mkdir -p "$dir"
  if [ "$tool" = perfbase ]; then
    CMD=("$PERFBASE" grpc "grpc://$TARGET" --call "$call" --proto "$PROTO" --data "$data"
      -c "$CONNS" -n "$n" -t 1 -q --no-store --json "$dir/perfbase.json")
    (( C == CONNS )) || CMD+=(--streams $((C / CONNS)))
  else
    # The summary format: ghz's JSON would also hold every call's details (n of them), whose
    # encoding would be charged to ghz's CPU. The call data has no template: the template
    # engine is off, as ghz advises for performance.
    CMD=("$GHZ" --insecure --proto "$PROTO" --call "$call" -d "$data" -c "$C" --connections "$CONNS"
      -n "$n" --cpus 1 --disable-template-functions --disable-template-data "$TARGET")
  fi
  (( FIRST )) || sleep "$PAUSE"
  FIRST=0
  printf '%q ' "${CMD[@]}" > "$dir/cmd.txt"; echo >> "$dir/cmd.txt"
  t0=$(ticks); w0=$(date +%s%N)
  taskset -c "$TOOL_CPU" /usr/bin/time -f '%U %S %M' -o "$dir/time.txt" \
    timeout -k 3 "$CAP" "${CMD[@]}" > "$dir/stdout" 2> "$dir/stderr" < /dev/null || rc=$?
  w1=$(date +%s%N); t1=$(ticks)
  echo "$rc $(( t1 - t0 )) $CLK_TCK $(( (w1 - w0) / 1000 ))" > "$dir/run.txt"   # rc, server ticks, ticks/s, wall µs
  log "rep $rep: $kind $tool done (rc $rc)"
}
for rep in $(seq 1 "$REPS"); do
  if (( rep % 2 )); then order="perfbase ghz"; else order="ghz perfbase"; fi
  for kind in $KINDS; do
    for tool in $order; do
      wants "$tool" && run "$kind" "$tool" "$rep"
    done
  done
done

rc=0
python3 - "$OUT" "$REPS" "$KINDS" "$TOOLS" << 'PY' | tee "$OUT/summary.txt" || rc=$?
import json, os, re, statistics, sys
out, reps, kinds, tools = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
TOOLS = [t for t in ("perfbase", "ghz") if t in tools]

def perfbase(dir):
    j = json.load(open(f"{dir}/perfbase.json"))
    m = j if "requests" in j else j["phases"][0]   # the measurement fields: top level, else a plan's phase
    errors = sum((m.get("errors") or {}).values())
    ok = m["requests"] - errors
    what = ", ".join(f"{k} {v}" for k, v in (m.get("errors") or {}).items())
    # A server-streaming call must have brought all 100 features (no warm-up here, so the
    # messages received are this run's).
    got = ((j.get("config") or {}).get("protocol") or {}).get("messages_received")
    if "server-streaming" in dir and got is not None and got != 100 * m["requests"]:
        errors += 1
        what += ("; " if what else "") + f"{got} replies for {m['requests']} calls, not 100 each"
    return {"calls": m["requests"], "ok": ok, "errors": errors, "secs": m["duration_s"], "what": what}

def ghz(dir):
    s = open(f"{dir}/stdout").read()
    count = int(re.search(r"^\s*Count:\s+(\d+)", s, re.M).group(1))
    rps = float(re.search(r"^\s*Requests/sec:\s+([\d.]+)", s, re.M).group(1))
    codes = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s*\[(\w+)\]\s+(\d+) responses", s, re.M)}
    ok = codes.get("OK", 0)
    errs = re.search(r"Error distribution:\n((?:\s+\[\d+\].*\n?)+)", s)
    what = ", ".join(f"{k} {v}" for k, v in codes.items() if k != "OK")
    if errs:
        what += ("; " if what else "") + "; ".join(l.strip() for l in errs.group(1).splitlines()[:3])
    # Requests/sec is count / total (2 decimals, more precise than Total's); ok calls at that span.
    return {"calls": count, "ok": ok, "errors": count - ok, "secs": count / rps if rps else 0, "what": what}

runs, problems = {}, []
for kind in kinds:
    for tool in TOOLS:
        for rep in range(1, reps + 1):
            dir = f"{out}/{kind}/{tool}/rep{rep}"
            try:
                rc, ticks, hz, wall_us = map(int, open(f"{dir}/run.txt").read().split())
                r = (perfbase if tool == "perfbase" else ghz)(dir)
                user, sys_, rss = open(f"{dir}/time.txt").read().split()[-3:]
            except Exception as e:
                problems.append(f"{kind} {tool} rep {rep}: no result ({type(e).__name__}: {e}); see {dir}")
                continue
            if rc != 0:
                problems.append(f"{kind} {tool} rep {rep}: exit code {rc}")
            if r["errors"] or r["ok"] == 0:
                problems.append(f"{kind} {tool} rep {rep}: {r['errors']} errors of {r['calls']} calls ({r['what'] or 'no successes'})")
            if r["ok"] == 0 or r["secs"] <= 0:
                continue
            r["rate"] = r["ok"] / r["secs"]
            r["cpu_s"] = float(user) + float(sys_)
            r["cpu"] = r["cpu_s"] * 1e6 / r["ok"]
            r["rss"] = int(rss) / 1024
            r["server"] = ticks / hz / (wall_us / 1e6) * 100
            runs.setdefault((kind, tool), []).append(r)

med = lambda kind, tool, k: statistics.median(r[k] for r in runs[(kind, tool)])
each = lambda kind, tool, k, f: ", ".join(f.format(r[k]) for r in runs[(kind, tool)])
print(f"## perfbase grpc vs ghz {os.path.basename(out)}\n")
for line in open(f"{out}/env.txt"):
    print(f"    {line.rstrip()}")
print()
print("| kind | tool | runs | ok calls | errors | calls/s (each run) | CPU s | CPU µs/call | peak RSS MiB | server CPU % |")
print("|---|---|---|---|---|---|---|---|---|---|")
for kind in kinds:
    for tool in TOOLS:
        if (kind, tool) not in runs:
            print(f"| {kind} | {tool} | 0/{reps} | | | | | | | |")
            continue
        rs = runs[(kind, tool)]
        errs = sum(r["errors"] for r in rs)
        print(f"| {kind} | {tool} | {len(rs)}/{reps} | {sum(r['ok'] for r in rs):,} | {errs}{' ⚠' if errs else ''} | "
              f"{med(kind, tool, 'rate'):,.0f} ({each(kind, tool, 'rate', '{:,.0f}')}) | {med(kind, tool, 'cpu_s'):.2f} | "
              f"{med(kind, tool, 'cpu'):.2f} | {med(kind, tool, 'rss'):.1f} | {med(kind, tool, 'server'):.0f} |")
print("\nCells: medians over the runs. calls/s = successful calls / the tool's own measured span (perfbase: "
      "duration_s; ghz: count / Requests/sec). CPU s = the tool process's user+sys (/usr/bin/time, start-up "
      "included); CPU µs/call = that / its successful calls. server CPU % = route_guide_server's utime+stime "
      "over the run's wall time, 100 = its one core. A server-streaming call is one ListFeatures with its 100 replies.")
if problems:
    print("\nCHECK FAILED: every run must finish with 0 errors:")
    for p in problems:
        print(f"- {p}")
print()
for kind in kinds:
    if (kind, "perfbase") in runs and (kind, "ghz") in runs:
        print(f"perfbase/ghz {kind}: calls/s x{med(kind, 'perfbase', 'rate') / med(kind, 'ghz', 'rate'):.2f}, "
              f"CPU per call x{med(kind, 'perfbase', 'cpu') / med(kind, 'ghz', 'cpu'):.2f}")
    else:
        print(f"perfbase/ghz {kind}: calls/s n/a, CPU per call n/a")
sys.exit(1 if problems else 0)
PY
log "raw outputs: $OUT"
exit "$rc"
