# shellcheck shell=bash
# scripts/services/mosquitto.sh, sourced by scripts/services.sh: the MQTT broker for the mqtt
# driver's tests and the CLI's broker tests.
#
# mosquitto: an MQTT broker from Debian's mosquitto package (2.0 on Debian 12), user `perfbase`
# password `perfbase` (a password file made by mosquitto_passwd), no anonymous access, no
# persistence, listening on 127.0.0.1 from port 21883 upward; config, password file, pid file
# and log in .services/mosquitto, written on every start. As root it runs as the `mosquitto`
# user (the broker drops to it itself).

MQ_DIR="$BASE/mosquitto"
MQ_USER=mosquitto
MQ_FIRST_PORT=21883

mq_pid() { cat "$MQ_DIR/mosquitto.pid" 2>/dev/null; }
mq_port() { cat "$MQ_DIR/port" 2>/dev/null; }

mq_running() {
  local pid
  pid=$(mq_pid) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  case $(cat "/proc/$pid/comm" 2>/dev/null) in mosquitto*) ;; *) return 1 ;; esac
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# mq_check PORT: publishes one message as perfbase (a refused login fails).
mq_check() {
  mosquitto_pub -h 127.0.0.1 -p "$1" -u perfbase -P perfbase -i "perfbase-services-check" \
    -t perfbase/services/check -m up -q 1 >/dev/null 2>&1
}

# mq_ready PORT: our server is up and accepts perfbase.
mq_ready() { mq_running && mq_check "$1"; }

mq_up() {
  local port mark bin
  if [ ! -x /usr/sbin/mosquitto ] && ! command -v mosquitto >/dev/null 2>&1; then ensure_pkg mosquitto; fi
  command -v mosquitto_pub >/dev/null 2>&1 || ensure_pkg mosquitto-clients
  bin=$(command -v mosquitto || echo /usr/sbin/mosquitto)
  if is_root; then ensure_user "$MQ_USER"; fi
  mkdir -p "$MQ_DIR"
  if mq_running; then
    log "mosquitto already running (pid $(mq_pid), port $(mq_port))"
    return 0
  fi
  port=$(pick_port "$MQ_DIR/port" "$MQ_FIRST_PORT")
  rm -f "$MQ_DIR/passwd"
  mosquitto_passwd -b -c "$MQ_DIR/passwd" perfbase perfbase >/dev/null 2>&1 ||
    die "mosquitto_passwd could not write $MQ_DIR/passwd"
  chmod 600 "$MQ_DIR/passwd"
  cat >"$MQ_DIR/mosquitto.conf" <<EOF
# Written by scripts/services.sh on every start.
per_listener_settings false
listener $port 127.0.0.1
allow_anonymous false
password_file $MQ_DIR/passwd
persistence false
pid_file $MQ_DIR/mosquitto.pid
log_dest file $MQ_DIR/mosquitto.log
log_type error
log_type warning
log_type notice
max_inflight_messages 0
max_queued_messages 100000
EOF
  if is_root; then echo "user $MQ_USER" >>"$MQ_DIR/mosquitto.conf"; fi
  rm -f "$MQ_DIR/mosquitto.pid"
  touch "$MQ_DIR/mosquitto.log"
  if is_root; then chown -R "$MQ_USER:" "$MQ_DIR"; fi
  mark=$(stat -c %s "$MQ_DIR/mosquitto.log")
  log "starting mosquitto on 127.0.0.1:$port (log $MQ_DIR/mosquitto.log)"
  (cd / && exec setsid "$bin" -c "$MQ_DIR/mosquitto.conf" </dev/null >>"$MQ_DIR/mosquitto.log" 2>&1) 9>&- &
  wait_ready mosquitto $! "$MQ_DIR/mosquitto.log" "$mark" 120 "accept perfbase" mq_ready "$port"
  log "mosquitto up: pid $(mq_pid), 127.0.0.1:$port, user perfbase"
}

mq_down() {
  local pid
  if ! mq_running; then
    log "mosquitto not running"
    return 0
  fi
  pid=$(mq_pid)
  stop_pid "mosquitto" "$pid" "$MQ_DIR/mosquitto.log"
}

svc_mosquitto() {
  case $1 in
  up) mq_up ;;
  down) mq_down ;;
  purge)
    log "removing $MQ_DIR"
    rm -rf "$MQ_DIR"
    ;;
  env)
    if ! mq_running; then
      log "mosquitto is not running: run scripts/services.sh up"
      return 1
    fi
    echo "export PERFBASE_MQTT_URL='mqtt://perfbase:perfbase@127.0.0.1:$(mq_port)'"
    echo "export PERFBASE_MOSQUITTO_PID=$(mq_pid)"
    ;;
  status)
    if mq_running; then
      echo "mosquitto: running, pid $(mq_pid), 127.0.0.1:$(mq_port), config $MQ_DIR/mosquitto.conf"
    else
      if [ -d "$MQ_DIR" ]; then echo "mosquitto: stopped, config kept in $MQ_DIR"; else echo "mosquitto: stopped, no data"; fi
    fi
    ;;
  esac
}
