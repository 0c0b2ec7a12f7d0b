#!/usr/bin/env bash
# Agents on one machine: the same load run by 1, 2 and 4 perfbase processes (each one
# segment, --segment I/N, started together with --start-at) against one local nginx, and
# merged by `perfbase merge`. Prints merged throughput, the agents' CPU per request, and the
# ratio of merged to single-process throughput.
#
#   bench/agents_scaling.sh                 # D=8 s per run, REPS=2, AGENTS="1 2 4"
#   D=5 REPS=1 PERFBASE=target/release/perfbase bench/agents_scaling.sh
#
# On this 2-core machine nginx has CPU 0 and every agent shares CPU 1, so this measures the
# overhead of splitting a load over processes, not a speed-up: more agents cannot add cores.
# Two loads: closed (-c 50) and open (-r RATE, default 20000/s), to loopback only.
set -euo pipefail
BENCH_NAME=agents_scaling
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
D="${D:-8}"
REPS="${REPS:-2}"
AGENTS="${AGENTS:-1 2 4}"
RATE="${RATE:-20000}"
PORT="${PORT:-18280}"
PERFBASE="${PERFBASE:-$ROOT/target/release/perfbase}"
HOST=127.0.0.1

[[ "$D" =~ ^[1-9][0-9]*$ ]] || die "D must be whole seconds"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer"
[[ -x "$PERFBASE" ]] || die "no perfbase at $PERFBASE (cargo build --release, or set PERFBASE)"
command -v nginx > /dev/null || { apt-get install -y nginx > /dev/null 2>&1 || die "nginx missing (apt-get install nginx)"; }
(( $(nproc) >= 2 )) || die "need 2 CPUs"

for _ in $(seq 20); do port_busy "$PORT" || break; PORT=$(( PORT + 1 )); done
URL="http://$HOST:$PORT/"
[[ "$URL" =~ ^http://127\.0\.0\.1:[0-9]+/$ ]] || die "refusing to target $URL"
OUT="$ROOT/bench/out/agents-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT/nginx/tmp"
cat > "$OUT/nginx/nginx.conf" << CONF
worker_processes 1;
daemon off;
pid $OUT/nginx/nginx.pid;
error_log $OUT/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path $OUT/nginx/tmp/b;
    proxy_temp_path $OUT/nginx/tmp/p;
    fastcgi_temp_path $OUT/nginx/tmp/f;
    uwsgi_temp_path $OUT/nginx/tmp/u;
    scgi_temp_path $OUT/nginx/tmp/s;
    server {
        listen $HOST:$PORT backlog=4096;
        location / { default_type text/plain; return 200 "ok\n"; }
    }
}
CONF
taskset -c 0 nginx -p "$OUT/nginx/" -c "$OUT/nginx/nginx.conf" > /dev/null 2>&1 &
NGINX=$!
trap 'kill -QUIT $NGINX 2> /dev/null || true; wait $NGINX 2> /dev/null || true' EXIT
for _ in $(seq 50); do port_busy "$PORT" && break; sleep 0.1; done
port_busy "$PORT" || die "nginx did not start"
log "nginx on CPU 0 at $URL; agents on CPU 1; results in $OUT"

# run LOAD N REP: N agents at once; prints "requests rps cpu_s"
run() {
  local load="$1" n="$2" rep="$3" dir="$OUT/$1-$2-$3" at files=() pids=() me=$BASHPID
  mkdir -p "$dir"
  at=$(( $(date +%s) + 2 ))
  for (( i = 0; i < n; i++ )); do
    local args=(http "$URL" -d "${D}s" --segment "$i/$n" --start-at "$at" --json "$dir/a$i.json" -q --no-store)
    if [[ "$load" == closed ]]; then args+=(-c 50); else args+=(-r "$RATE" --max-inflight 200); fi
    ( cd "$dir" && exec taskset -c 1 "$PERFBASE" "${args[@]}" ) > /dev/null 2> "$dir/a$i.err" &
    pids+=($!)
    files+=("$dir/a$i.json")
  done
  # The agents' CPU: what this subshell's reaped children used (cutime + cstime).
  local before after
  before=$(awk '{print $16 + $17}' "/proc/$me/stat")
  for p in "${pids[@]}"; do wait "$p" || die "an agent failed: $(cat "$dir"/a*.err)"; done
  after=$(awk '{print $16 + $17}' "/proc/$me/stat")
  if (( n > 1 )); then
    "$PERFBASE" merge "${files[@]}" --json "$dir/merged.json" > /dev/null
  else
    cp "${files[0]}" "$dir/merged.json"
  fi
  python3 - "$dir/merged.json" "$before" "$after" "$(getconf CLK_TCK)" << 'PY'
import json, sys
m = json.load(open(sys.argv[1]))
ticks = int(sys.argv[3]) - int(sys.argv[2])
print(m["requests"], round(m["rps"]), ticks / int(sys.argv[4]))
PY
}

declare -A RPS CPU
for load in closed open; do
  for n in $AGENTS; do
    for (( rep = 1; rep <= REPS; rep++ )); do
      read -r req rps cpu < <(run "$load" "$n" "$rep")
      log "$load agents=$n rep=$rep: $req requests, $rps req/s, ${cpu}s CPU"
      RPS[$load-$n]+="$rps "
      CPU[$load-$n]+="$(python3 -c "print(round($cpu * 1e6 / $req, 2))") "
    done
  done
done

printf '\n| load | agents | merged req/s (runs) | CPU µs/req (runs) | merged / 1 agent |\n|---|---|---|---|---|\n'
for load in closed open; do
  first=""
  for n in $AGENTS; do
    med=$(python3 -c "import statistics,sys; print(round(statistics.median(map(float, sys.argv[1:]))))" ${RPS[$load-$n]})
    cpu=$(python3 -c "import statistics,sys; print(round(statistics.median(map(float, sys.argv[1:])), 2))" ${CPU[$load-$n]})
    [[ -n "$first" ]] || first=$med
    printf '| %s | %s | %s (%s) | %s (%s) | %s |\n' "$load" "$n" "$med" "${RPS[$load-$n]% }" "$cpu" "${CPU[$load-$n]% }" \
      "$(python3 -c "print(f'{$med / $first:.3f}')")"
  done
done
echo
echo "CPU µs/req = all agents' user+sys / merged requests (medians over REPS). Open: $RATE/s requested."
