# shellcheck shell=bash
# scripts/services/nats.sh, sourced by scripts/services.sh: the NATS server (with JetStream) for
# the nats driver's tests and the CLI's broker tests.
#
# nats: a NATS server from Debian's nats-server package (2.9 on Debian 12) with JetStream
# (store in .services/nats/js), user `perfbase` password `perfbase` (from the config file
# .services/nats/nats.conf, written on every start), listening on 127.0.0.1 from port 24222
# upward. As root it runs as the package's `nats` user.

NATS_DIR="$BASE/nats"
NATS_USER=nats
NATS_FIRST_PORT=24222

nats_pid() { cat "$NATS_DIR/nats.pid" 2>/dev/null; }
nats_port() { cat "$NATS_DIR/port" 2>/dev/null; }

# The server of our pid file is alive (not a recycled pid, not a zombie).
nats_running() {
  local pid
  pid=$(nats_pid) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  case $(cat "/proc/$pid/comm" 2>/dev/null) in nats-server*) ;; *) return 1 ;; esac
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# nats_check PORT: logs in as perfbase over the NATS protocol (bash's /dev/tcp) and wants a
# PONG, and the server's INFO must announce JetStream.
nats_check() {
  local port=$1 info reply
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  IFS= read -r -t 5 info <&3 || {
    exec 3<&-
    return 1
  }
  printf 'CONNECT {"verbose":false,"pedantic":false,"user":"perfbase","pass":"perfbase"}\r\nPING\r\n' >&3
  IFS= read -r -t 5 reply <&3 || reply=
  exec 3<&-
  case $info in *'"jetstream":true'*) ;; *) return 1 ;; esac
  [ "${reply%$'\r'}" = PONG ]
}

# nats_ready PORT: our server is up and answers perfbase with JetStream on.
nats_ready() { nats_running && nats_check "$1"; }

nats_up() {
  local port mark
  command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || ensure_pkg nats-server
  if is_root; then ensure_user "$NATS_USER"; fi
  mkdir -p "$NATS_DIR/js"
  if nats_running; then
    log "nats already running (pid $(nats_pid), port $(nats_port))"
    return 0
  fi
  port=$(pick_port "$NATS_DIR/port" "$NATS_FIRST_PORT")
  cat >"$NATS_DIR/nats.conf" <<EOF
# Written by scripts/services.sh on every start.
listen: 127.0.0.1:$port
authorization {
  user: perfbase
  password: perfbase
}
EOF
  chmod 600 "$NATS_DIR/nats.conf"
  rm -f "$NATS_DIR/nats.pid"
  touch "$NATS_DIR/nats.log"
  if is_root; then chown -R "$NATS_USER:" "$NATS_DIR"; fi
  mark=$(stat -c %s "$NATS_DIR/nats.log")
  log "starting nats on 127.0.0.1:$port (log $NATS_DIR/nats.log)"
  # Detached (own session, no lock fd, no terminal) so that it outlives this script; setpriv
  # execs the server itself, so the pid file names the server.
  local run=()
  if is_root; then run=(setpriv --reuid="$NATS_USER" --regid="$NATS_USER" --init-groups); fi
  (cd / && exec setsid "${run[@]}" "$(command -v nats-server || echo /usr/sbin/nats-server)" \
    -c "$NATS_DIR/nats.conf" -js -sd "$NATS_DIR/js" -P "$NATS_DIR/nats.pid" \
    -l "$NATS_DIR/nats.log" </dev/null >>"$NATS_DIR/nats.log" 2>&1) 9>&- &
  wait_ready nats $! "$NATS_DIR/nats.log" "$mark" 120 "answer (with JetStream, as perfbase)" \
    nats_ready "$port"
  log "nats up: pid $(nats_pid), 127.0.0.1:$port, JetStream on, user perfbase"
}

nats_down() {
  local pid
  if ! nats_running; then
    log "nats not running"
    return 0
  fi
  pid=$(nats_pid)
  stop_pid "nats" "$pid" "$NATS_DIR/nats.log"
}

svc_nats() {
  case $1 in
  up) nats_up ;;
  down) nats_down ;;
  purge)
    log "removing $NATS_DIR"
    rm -rf "$NATS_DIR"
    ;;
  env)
    if ! nats_running; then
      log "nats is not running: run scripts/services.sh up"
      return 1
    fi
    echo "export PERFBASE_NATS_URL='nats://perfbase:perfbase@127.0.0.1:$(nats_port)'"
    echo "export PERFBASE_NATS_PID=$(nats_pid)"
    ;;
  status)
    if nats_running; then
      echo "nats: running, pid $(nats_pid), 127.0.0.1:$(nats_port), JetStream store $NATS_DIR/js"
    else
      if [ -d "$NATS_DIR" ]; then echo "nats: stopped, data kept in $NATS_DIR"; else echo "nats: stopped, no data"; fi
    fi
    ;;
  esac
}
