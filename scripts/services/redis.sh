# shellcheck shell=bash
# scripts/services/redis.sh, sourced by scripts/services.sh: a standalone Redis for the redis
# driver's tests, the CLI's tests and bench/redis_vs_redis_benchmark.sh. Its rds_* helpers also
# run the nodes of redis_cluster.sh.
#
# redis: a standalone Redis from Debian's redis-server package (7.0 on Debian 12), password
# `perfbase`, no persistence (save "", appendonly no), listening on 127.0.0.1 from port 26379
# upward. Its config is written to .services/redis/redis.conf on every start.

RDS_DIR="$BASE/redis"
RDS_USER=redis
RDS_FIRST_PORT=26379

rds_ensure() {
  command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 ||
    ensure_pkg redis-server
  command -v redis-server >/dev/null 2>&1 || die "redis-server installed but not on PATH"
  if is_root; then ensure_user "$RDS_USER"; fi
}

# rds_alive DIR: the redis-server of DIR's pid file is alive (not a recycled pid, not a zombie).
rds_alive() {
  local pid
  pid=$(cat "$1/redis.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  case $(cat "/proc/$pid/comm" 2>/dev/null) in redis-server*) ;; *) return 1 ;; esac
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# rds_cli PORT [PASSWORD] ARGS...: redis-cli against 127.0.0.1:PORT (the password through the
# environment, so it is not on a command line).
rds_cli() {
  local port=$1 pass=$2
  shift 2
  if [ -n "$pass" ]; then
    REDISCLI_AUTH=$pass redis-cli -h 127.0.0.1 -p "$port" "$@"
  else
    redis-cli -h 127.0.0.1 -p "$port" "$@"
  fi
}

# rds_start DIR PORT PASSWORD [EXTRA CONFIG LINES]: writes DIR/redis.conf and starts a detached
# redis-server on it, waiting until it answers PING.
rds_start() {
  local dir=$1 port=$2 pass=$3 extra=${4:-} mark
  mkdir -p "$dir"
  {
    echo "bind 127.0.0.1"
    echo "port $port"
    echo "protected-mode no"
    echo "daemonize no"
    echo "pidfile $dir/redis.pid"
    echo "logfile $dir/redis.log"
    echo "dir $dir"
    echo 'save ""'
    echo "appendonly no"
    echo "maxclients 4064"
    if [ -n "$pass" ]; then echo "requirepass $pass"; fi
    if [ -n "$extra" ]; then printf '%s\n' "$extra"; fi
  } >"$dir/redis.conf"
  chmod 600 "$dir/redis.conf"
  touch "$dir/redis.log"
  if is_root; then chown -R "$RDS_USER:" "$dir"; fi
  rm -f "$dir/redis.pid"
  mark=$(stat -c %s "$dir/redis.log")
  log "starting redis-server on 127.0.0.1:$port (log $dir/redis.log)"
  # Detached (own session, no lock fd, no terminal) so that it outlives this script.
  # As root it runs as the redis user through setpriv, which execs (no root parent stays).
  if is_root; then
    (cd / && exec setsid setpriv --reuid="$RDS_USER" --regid="$RDS_USER" --init-groups \
      redis-server "$dir/redis.conf" </dev/null >>"$dir/redis.log" 2>&1) 9>&- &
  else
    (cd / && exec setsid redis-server "$dir/redis.conf" </dev/null >>"$dir/redis.log" 2>&1) 9>&- &
  fi
  wait_ready "redis-server on port $port" $! "$dir/redis.log" "$mark" 120 "answer PING" \
    rds_ready "$dir" "$port" "$pass"
}

# rds_ready DIR PORT PASS: DIR's server is up and answers PING with PONG.
rds_ready() { rds_alive "$1" && [ "$(rds_cli "$2" "$3" ping)" = PONG ]; }

# rds_stop DIR NAME: SIGTERM the server of DIR's pid file and wait for it to exit.
rds_stop() {
  local dir=$1 name=$2 pid
  if ! rds_alive "$dir"; then
    log "$name not running"
    return 0
  fi
  pid=$(cat "$dir/redis.pid")
  stop_pid "$name" "$pid" "$dir/redis.log"
}

rds_port() { cat "$RDS_DIR/port" 2>/dev/null; }

rds_up() {
  local port
  rds_ensure
  if rds_alive "$RDS_DIR"; then
    log "redis already running (pid $(cat "$RDS_DIR/redis.pid"), port $(rds_port))"
    return 0
  fi
  mkdir -p "$RDS_DIR"
  port=$(pick_port "$RDS_DIR/port" "$RDS_FIRST_PORT")
  rds_start "$RDS_DIR" "$port" perfbase
  log "redis up: pid $(cat "$RDS_DIR/redis.pid"), 127.0.0.1:$port, password perfbase"
}

svc_redis() {
  case $1 in
  up) rds_up ;;
  down) rds_stop "$RDS_DIR" redis ;;
  purge)
    log "removing $RDS_DIR"
    rm -rf "$RDS_DIR"
    ;;
  env)
    if ! rds_alive "$RDS_DIR"; then
      log "redis is not running: run scripts/services.sh up redis"
      return 1
    fi
    echo "export PERFBASE_REDIS_URL='redis://:perfbase@127.0.0.1:$(rds_port)'"
    echo "export PERFBASE_REDIS_PID=$(cat "$RDS_DIR/redis.pid")"
    ;;
  status)
    if rds_alive "$RDS_DIR"; then
      echo "redis: running, pid $(cat "$RDS_DIR/redis.pid"), 127.0.0.1:$(rds_port), dir $RDS_DIR"
    else
      echo "redis: stopped"
    fi
    ;;
  esac
}
