# shellcheck shell=bash
# scripts/services/prometheus.sh, sourced by scripts/services.sh: the Prometheus server that
# the tests of perfbase's Prometheus outputs (scrape and remote write) query back.
#
# prometheus: a Prometheus server from Debian's prometheus package (2.42 on Debian 12), our own
# instance (not the package's service: if the package's postinst started one on :9090 it is left
# alone and not used), listening for HTTP on 127.0.0.1 from port 20090 upward, with
#   --web.enable-remote-write-receiver   POST /api/v1/write accepts remote-write pushes
#   --enable-feature=native-histograms   ingests native histograms; the scraper then asks
#                                        for the protobuf exposition first (2.42 has no
#                                        scrape_classic_histograms: a histogram with native
#                                        buckets is stored as a native one only)
#   --web.enable-lifecycle               POST /-/reload (rereads prometheus.yml) and /-/quit
# and a small retention (6 h, 256 MB) of its TSDB in .services/prometheus/data. Its config,
# .services/prometheus/prometheus.yml, is written on every start: scrape and rule evaluation
# every 1 s, and one scrape job `perfbase` whose targets come from the JSON files in
# .services/prometheus/targets (file_sd, *.json, reread within 1 s of a change; the scraper
# takes up changed targets every 5 s): a test writes [{"targets":["127.0.0.1:PORT"],
# "labels":{...}}] there to have a running perfbase's --metrics-listen scraped, and removes it
# after. A fresh start clears the files left there (by
# tests that died); a running server's are left alone. Log in .services/prometheus/prometheus.log.
# As root it runs as the package's `prometheus` user.

PROM_DIR="$BASE/prometheus"
PROM_TARGETS="$PROM_DIR/targets"
PROM_LOG="$PROM_DIR/prometheus.log"
PROM_USER=prometheus
PROM_FIRST_PORT=20090

prom_pid() { cat "$PROM_DIR/prometheus.pid" 2>/dev/null; }
prom_port() { cat "$PROM_DIR/port" 2>/dev/null; }

# The server of our pid file is alive (not a recycled pid, not a zombie).
prom_running() {
  local pid
  pid=$(prom_pid) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  case $(cat "/proc/$pid/comm" 2>/dev/null) in prometheus*) ;; *) return 1 ;; esac
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# prom_http PORT METHOD PATH [HEADERS [BODY]]: the HTTP status code of a request to
# 127.0.0.1:PORT over bash's /dev/tcp, or nothing when there is no answer within 5 s. HEADERS
# are extra header lines, each ending in \r\n; BODY is a printf format (for bytes as escapes).
prom_http() {
  local port=$1 method=$2 path=$3 headers=${4:-} body=${5:-} code
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  # shellcheck disable=SC2059 # BODY is a format, for the bytes printf makes of its escapes
  { printf '%s %s HTTP/1.0\r\nHost: 127.0.0.1:%s\r\n%bContent-Length: %s\r\n\r\n' \
    "$method" "$path" "$port" "$headers" "$(printf "$body" | wc -c)" && printf "$body"; } >&3
  IFS=' ' read -r -t 5 _ code _ <&3 || code=
  exec 3<&-
  echo "$code"
}

# prom_check PORT: ready (GET /-/ready answers 200), and the remote-write receiver is on: an
# empty WriteRequest (an empty protobuf message, snappy-compressed: one byte, 0) is accepted
# with 204 (without --web.enable-remote-write-receiver the answer is 404).
prom_check() {
  [ "$(prom_http "$1" GET /-/ready)" = 200 ] || return 1
  [ "$(prom_http "$1" POST /api/v1/write 'Content-Type: application/x-protobuf\r\nContent-Encoding: snappy\r\nX-Prometheus-Remote-Write-Version: 0.1.0\r\n' '\0')" = 204 ]
}

prom_bin() { command -v prometheus || echo /usr/bin/prometheus; }

# prom_ready PORT: our server is up, ready, with the remote-write receiver on.
prom_ready() { prom_running && prom_check "$1"; }

prom_up() {
  local port pid mark run=()
  [ -x "$(prom_bin)" ] || ensure_pkg prometheus
  [ -x "$(prom_bin)" ] || die "prometheus installed but no prometheus binary"
  # The data directory and the targets glob go into YAML and a flag: keep the path plain.
  case $PROM_DIR in *[[:space:]\"\\]*) die "Prometheus cannot take the path $PROM_DIR in its config" ;; esac
  if is_root; then ensure_user "$PROM_USER"; fi
  mkdir -p "$PROM_DIR/data" "$PROM_TARGETS"
  if prom_running; then
    log "prometheus already running (pid $(prom_pid), port $(prom_port))"
    return 0
  fi
  port=$(pick_port "$PROM_DIR/port" "$PROM_FIRST_PORT")
  cat >"$PROM_DIR/prometheus.yml" <<EOF_YML
# Written by scripts/services.sh on every start.
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: perfbase
    file_sd_configs:
      - files:
          - "$PROM_TARGETS/*.json"
        refresh_interval: 1s
EOF_YML
  # Target files of an earlier run name perfbase processes that are gone.
  find "$PROM_TARGETS" -mindepth 1 -maxdepth 1 -name '*.json' -delete
  touch "$PROM_LOG"
  if is_root; then chown -R "$PROM_USER:" "$PROM_DIR"; fi
  rm -f "$PROM_DIR/prometheus.pid"
  mark=$(stat -c %s "$PROM_LOG")
  log "starting prometheus on 127.0.0.1:$port (log $PROM_LOG)"
  # Detached (own session, no lock fd, no terminal) so that it outlives this script; setsid and
  # setpriv exec, so $! is the server's pid (it writes no pid file of its own).
  if is_root; then run=(setpriv --reuid="$PROM_USER" --regid="$PROM_USER" --init-groups); fi
  (cd / && exec setsid "${run[@]}" "$(prom_bin)" --config.file="$PROM_DIR/prometheus.yml" \
    --storage.tsdb.path="$PROM_DIR/data" --storage.tsdb.retention.time=6h \
    --storage.tsdb.retention.size=256MB --web.listen-address="127.0.0.1:$port" \
    --web.enable-remote-write-receiver --enable-feature=native-histograms \
    --web.enable-lifecycle </dev/null >>"$PROM_LOG" 2>&1) 9>&- &
  pid=$!
  echo "$pid" >"$PROM_DIR/prometheus.pid"
  # Ready once its TSDB is open (the write-ahead log of the last run replayed).
  wait_ready prometheus "$pid" "$PROM_LOG" "$mark" 240 \
    "answer 200 on /-/ready (with the remote-write receiver on)" prom_ready "$port"
  log "prometheus up: pid $pid, http://127.0.0.1:$port, remote write on, native histograms on"
}

prom_down() {
  local pid
  if ! prom_running; then
    log "prometheus not running"
    return 0
  fi
  pid=$(prom_pid)
  stop_pid "prometheus" "$pid" "$PROM_LOG"
}

svc_prometheus() {
  case $1 in
  up) prom_up ;;
  down) prom_down ;;
  purge)
    log "removing $PROM_DIR"
    rm -rf "$PROM_DIR"
    ;;
  env)
    if ! prom_running; then
      log "prometheus is not running: run scripts/services.sh up prometheus"
      return 1
    fi
    echo "export PERFBASE_PROMETHEUS_URL='http://127.0.0.1:$(prom_port)'"
    echo "export PERFBASE_PROMETHEUS_PID=$(prom_pid)"
    echo "export PERFBASE_PROMETHEUS_TARGETS='$PROM_TARGETS'"
    ;;
  status)
    if prom_running; then
      echo "prometheus: running, pid $(prom_pid), http://127.0.0.1:$(prom_port), data $PROM_DIR/data, targets $PROM_TARGETS"
    else
      if [ -d "$PROM_DIR/data" ]; then echo "prometheus: stopped, data kept in $PROM_DIR/data"; else echo "prometheus: stopped, no data"; fi
    fi
    ;;
  esac
}
