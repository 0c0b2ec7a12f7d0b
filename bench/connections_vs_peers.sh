#!/usr/bin/env bash
# Many connections at once: perfbase, wrk and oha each hold N keep-alive connections to one
# local nginx for D seconds, closed model, one thread. Per tool: peak RSS, req/s, CPU µs per
# request, and the memory each held connection costs (the RSS growth from the smallest count
# to the largest, per added connection). See bench/README.md.
#
#   bench/connections_vs_peers.sh                        # 1k, 10k, 50k x wrk, oha, perfbase x 2 reps, 8 s each
#   COUNTS="10000" REPS=1 TOOLS="wrk perfbase" bench/connections_vs_peers.sh
#   PERFBASE=/path/to/perfbase bench/connections_vs_peers.sh
#
# Knobs (environment): COUNTS ("1000 10000 50000"), D (8 s), REPS (2), TOOLS ("wrk oha
# perfbase"), PORT (18180, first free port from there on), PAUSE (3 s between runs),
# PROFILE (dist, or release: the build bench/build.sh makes when the binary is missing),
# PERFBASE (target/$PROFILE/perfbase), HOST (only
# 127.0.0.1 is accepted).
#
# nginx (one worker, 200k descriptors, backlog 65535) runs on CPU 0, the tool on CPU 1. Over
# 28,000 connections from one address to one port need more ephemeral ports than Linux's
# default range: as root the script widens net.ipv4.ip_local_port_range to 1024-65535 for the
# run and puts it back at the end. Raw outputs and the tables land in bench/out/<UTC stamp>-conns/.
set -euo pipefail

BENCH_NAME=connections_vs_peers
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
export PATH="${HOME:-/root}/.cargo/bin:$PATH"

COUNTS="${COUNTS:-1000 10000 50000}"
D="${D:-8}"
REPS="${REPS:-2}"
TOOLS="${TOOLS:-wrk oha perfbase}"
PORT="${PORT:-18180}"
PAUSE="${PAUSE:-3}"
HOST="${HOST:-127.0.0.1}"
PROFILE="${PROFILE:-dist}"
PERFBASE="${PERFBASE:-$ROOT/target/$PROFILE/perfbase}"
SERVER_CPU=0
TOOL_CPU=1
FDS=200000

[[ "$HOST" == "127.0.0.1" ]] \
  || die "refusing to target '$HOST': this benchmark only sends load to 127.0.0.1"
[[ "$D" =~ ^[1-9][0-9]*$ ]] || die "D must be a whole number of seconds (got '$D')"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer (got '$REPS')"
[[ "$PAUSE" =~ ^[0-9]+$ ]] || die "PAUSE must be a whole number of seconds (got '$PAUSE')"
for n in $COUNTS; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] && (( n <= 60000 )) || die "COUNTS must be whole numbers up to 60000 (got '$n')"
done
for t in $TOOLS; do
  [[ "$t" == wrk || "$t" == oha || "$t" == perfbase ]] || die "unknown tool '$t' (known: wrk oha perfbase)"
done
(( $(nproc) >= 2 )) || die "need 2 CPUs (nginx on CPU $SERVER_CPU, tool on CPU $TOOL_CPU); nproc=$(nproc)"
MAX=0; for n in $COUNTS; do (( n > MAX )) && MAX=$n; done

# ---------------------------------------------------------------- limits and installs
ulimit -n "$FDS" 2> /dev/null || ulimit -n "$(ulimit -Hn)" || true
# A count the descriptor limit cannot hold is skipped and said so in the results (a container
# without CAP_SYS_RESOURCE cannot raise its hard limit, even as root).
SKIPPED=""
kept=""
for n in $COUNTS; do
  if (( n + 100 > $(ulimit -n) )); then SKIPPED+="$n "; else kept+="$n "; fi
done
[[ -n "$SKIPPED" ]] && log "skipping ${SKIPPED% }: ulimit -n is $(ulimit -n) here (hard limit $(ulimit -Hn)), too few descriptors"
COUNTS="${kept% }"
[[ -n "$COUNTS" ]] || die "no count fits ulimit -n $(ulimit -n)"
MAX=0; for n in $COUNTS; do (( n > MAX )) && MAX=$n; done
OLD_RANGE=""
if (( MAX > 28000 )); then
  read -r lo hi < /proc/sys/net/ipv4/ip_local_port_range
  if (( hi - lo < MAX + 1000 )); then
    [[ "$(id -u)" == 0 ]] || die "$MAX connections need more ephemeral ports than $lo-$hi: run as root, or lower COUNTS"
    OLD_RANGE="$lo $hi"
    echo "1024 65535" > /proc/sys/net/ipv4/ip_local_port_range
    log "ephemeral ports widened from $lo-$hi to 1024-65535 for the run"
  fi
fi
if [[ "$(id -u)" == 0 ]]; then
  # A full accept queue would drop SYNs and stretch the connect phase of large counts.
  for k in net.core.somaxconn net.ipv4.tcp_max_syn_backlog; do
    f="/proc/sys/${k//.//}"
    (( $(cat "$f") >= 65535 )) || echo 65535 > "$f"
  done
fi

# Its own apt_install and need_cmd replace lib.sh's: one try, apt-get update only after it fails.
apt_install() {
  [[ "$(id -u)" == 0 ]] && have apt-get || die "$* missing: install it with apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 "$@" > /dev/null \
    || { apt-get -q update > /dev/null; DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" > /dev/null; } \
    || die "could not install $* with apt-get"
}
need_cmd() { have "$1" || { log "installing $2 (for $1)"; apt_install "$2"; }; have "$1" || die "$1 missing"; }
need_cmd taskset util-linux
need_cmd python3 python3
[[ -x /usr/bin/time ]] || apt_install time
need_cmd nginx nginx
wants wrk && need_cmd wrk wrk
if wants oha && ! have oha; then
  have cargo || die "oha is missing and there is no cargo to build it (cargo install oha --locked)"
  log "cargo install oha --locked (about 5 min on 2 cores; log: /tmp/oha-install.log)"
  CARGO_TARGET_DIR="${OHA_TARGET_DIR:-/tmp/oha-target}" cargo install oha --locked > /tmp/oha-install.log 2>&1 \
    || die "cargo install oha --locked failed; see /tmp/oha-install.log"
fi
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
OUT="$HERE/out/$STAMP-conns"
mkdir -p "$OUT"
# The default binary is (re)built from this tree, so it is never stale, and the build's time
# and memory are said; PERFBASE=FILE runs FILE as it is.
if wants perfbase && [[ "$PERFBASE" == "$ROOT/target/$PROFILE/perfbase" ]]; then
  log "building perfbase: bench/build.sh $PROFILE"
  "$HERE/build.sh" "$PROFILE" | tee "$OUT/build.txt" >&2 || die "the build failed; no perfbase binary"
fi
wants perfbase && { [[ -x "$PERFBASE" ]] || die "PERFBASE=$PERFBASE is not an executable file"; }

# ---------------------------------------------------------------- nginx
for _ in $(seq 20); do port_busy "$PORT" || break; PORT=$(( PORT + 1 )); done
port_busy "$PORT" && die "no free port found near ${PORT}; set PORT"
URL="http://$HOST:$PORT/"
NGX="$OUT/nginx"
mkdir -p "$NGX/tmp"
cat > "$NGX/nginx.conf" << EOF
worker_processes 1;
worker_rlimit_nofile $FDS;
daemon off;
pid $NGX/nginx.pid;
error_log $NGX/error.log warn;
events { worker_connections $((MAX + 1000)); multi_accept on; }
http {
    access_log off;
    keepalive_timeout 120s;
    keepalive_requests 100000000;
    client_body_temp_path $NGX/tmp/client_body;
    proxy_temp_path $NGX/tmp/proxy;
    fastcgi_temp_path $NGX/tmp/fastcgi;
    uwsgi_temp_path $NGX/tmp/uwsgi;
    scgi_temp_path $NGX/tmp/scgi;
    server {
        listen $HOST:$PORT backlog=65535;
        location / {
            default_type text/plain;
            return 200 "ok\n";
        }
    }
}
EOF
NGINX_PID=""
cleanup() {
  if [[ -n "$NGINX_PID" ]]; then
    kill -QUIT "$NGINX_PID" 2> /dev/null || true
    for _ in $(seq 50); do kill -0 "$NGINX_PID" 2> /dev/null || break; sleep 0.1; done
    kill -TERM "$NGINX_PID" 2> /dev/null || true
    NGINX_PID=""
  fi
  if [[ -n "$OLD_RANGE" ]]; then
    echo "$OLD_RANGE" > /proc/sys/net/ipv4/ip_local_port_range
    log "ephemeral ports back to ${OLD_RANGE/ /-}"
    OLD_RANGE=""
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
taskset -c "$SERVER_CPU" nginx -p "$NGX/" -e "$NGX/error.log" -c "$NGX/nginx.conf" > "$NGX/stdout" 2>&1 &
NGINX_PID=$!
for _ in $(seq 50); do port_busy "$PORT" && break; sleep 0.1; done
port_busy "$PORT" || { cat "$NGX/error.log" >&2 2> /dev/null || true; die "nginx did not listen on $URL"; }
WORKER="$(pgrep -P "$NGINX_PID" | head -1)"
[[ -n "$WORKER" ]] || die "could not find nginx's worker process"
{
  echo "date_utc: $STAMP"
  echo "host: $(uname -srm), nproc $(nproc); D=${D}s REPS=$REPS COUNTS='$COUNTS' TOOLS='$TOOLS'"
  echo "nginx: $(nginx -v 2>&1 | sed 's/^nginx version: //'), 1 worker on CPU $SERVER_CPU; tools on CPU $TOOL_CPU, 1 thread"
  wants wrk && echo "wrk: $(dpkg-query -W -f '${Version}' wrk 2>/dev/null)"
  wants oha && echo "oha: $(oha --version 2>&1 | head -1)"
  wants perfbase && echo "perfbase: $PERFBASE ($("$PERFBASE" --version 2>&1 | head -1))"
  [[ -f "$OUT/build.txt" ]] && cat "$OUT/build.txt"
  [[ -n "$SKIPPED" ]] && echo "skipped: ${SKIPPED% } connections (ulimit -n $(ulimit -n), hard limit $(ulimit -Hn))"
  true
} > "$OUT/env.txt"
log "nginx worker $WORKER on CPU $SERVER_CPU, $URL; output in $OUT"

# ---------------------------------------------------------------- runs
OHA_JSON=(-j)
wants oha && oha --help 2>&1 | grep -q -- '--output-format' && OHA_JSON=(--output-format json)
tool_cmd() {      # tool_cmd TOOL N RUNDIR -> CMD array
  case "$1" in
    wrk)      CMD=(wrk -t1 -c"$2" -d"${D}s" --timeout 10s --latency "$URL") ;;
    oha)      CMD=(oha --no-tui -z "${D}s" -c "$2" --worker-threads 1 "${OHA_JSON[@]}" "$URL") ;;
    perfbase) CMD=("$PERFBASE" http "$URL" -c "$2" -t 1 -d "${D}s" --quiet --no-store --json "$3/perfbase.json") ;;
  esac
}
FIRST=1
for n in $COUNTS; do
  for rep in $(seq "$REPS"); do
    for tool in $TOOLS; do
      dir="$OUT/$n/$tool/rep$rep"; mkdir -p "$dir"
      tool_cmd "$tool" "$n" "$dir"
      (( FIRST )) || sleep "$PAUSE"
      FIRST=0
      printf '%q ' "${CMD[@]}" > "$dir/cmd.txt"
      rc=0
      taskset -c "$TOOL_CPU" /usr/bin/time -o "$dir/time.txt" -f '%U %S %M %e' \
        timeout -k 3 $(( D + 60 )) "${CMD[@]}" > "$dir/stdout" 2> "$dir/stderr" < /dev/null || rc=$?
      echo "$rc" > "$dir/rc"
      kill -0 "$WORKER" 2> /dev/null || die "nginx worker died during $n/$tool rep $rep"
      log "$(python3 "$HERE/connections_report.py" run "$dir" "$tool" "$n")"
    done
  done
done
cleanup
python3 "$HERE/connections_report.py" table "$OUT" "$COUNTS" "$TOOLS" | tee "$OUT/results.md"
log "raw outputs: $OUT"
