# shellcheck shell=bash
# scripts/services/rabbitmq.sh, sourced by scripts/services.sh: the RabbitMQ node for the amqp
# driver's tests, the CLI's broker tests and bench/amqp_vs_*.sh.
#
# rabbitmq: RabbitMQ from Debian's rabbitmq-server package (3.10 on Debian 12), as a project-local
# node perfbase@localhost (not the package's own service), listening for AMQP on 127.0.0.1 from
# port 28672 upward, with its distribution port free from 29672 upward, its data, logs, config
# and Erlang cookie (HOME) under .services/rabbitmq, no plugins (management off), and a user
# `perfbase` (password `perfbase`) with full permissions on vhost `/`. Erlang's port mapper
# (epmd, loopback only) is started for it and stopped again by `down` when no other node uses it.

RMQ_DIR="$BASE/rabbitmq"
RMQ_NODE=perfbase@localhost
RMQ_USER=rabbitmq
RMQ_FIRST_PORT=28672
RMQ_FIRST_DIST_PORT=29672
RMQ_BIN=/usr/lib/rabbitmq/bin

rmq_run_user() { if is_root; then echo "$RMQ_USER"; else id -un; fi; }
rmq_port() { cat "$RMQ_DIR/port" 2>/dev/null; }
rmq_pid() { cat "$RMQ_DIR/rabbitmq.pid" 2>/dev/null; }

# rmq_env_args: the node's environment (as NAME=VALUE words for env) in RMQ_ENV.
rmq_env_args() {
  RMQ_ENV=(HOME="$RMQ_DIR/home"
    RABBITMQ_NODENAME="$RMQ_NODE"
    RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
    RABBITMQ_NODE_PORT="$(rmq_port)"
    RABBITMQ_DIST_PORT="$(cat "$RMQ_DIR/dist_port" 2>/dev/null)"
    # Erlang distribution (how rabbitmqctl reaches the node) listens on every address unless
    # told otherwise: loopback only, like everything services.sh starts.
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
    RABBITMQ_MNESIA_BASE="$RMQ_DIR/mnesia"
    RABBITMQ_LOG_BASE="$RMQ_DIR/log"
    RABBITMQ_CONFIG_FILE="$RMQ_DIR/rabbitmq.conf"
    RABBITMQ_ADVANCED_CONFIG_FILE="$RMQ_DIR/advanced.config"
    RABBITMQ_CONF_ENV_FILE="$RMQ_DIR/rabbitmq-env.conf"
    RABBITMQ_ENABLED_PLUGINS_FILE="$RMQ_DIR/enabled_plugins"
    RABBITMQ_PID_FILE="$RMQ_DIR/rabbitmq.pid"
    ERL_EPMD_ADDRESS=127.0.0.1)
}

# rmq_env CMD...: CMD with the node's environment, as the node's user.
rmq_env() {
  rmq_env_args
  as_user "$(rmq_run_user)" env "${RMQ_ENV[@]}" "$@"
}

rmq_ctl() { rmq_env "$RMQ_BIN/rabbitmqctl" -q -n "$RMQ_NODE" "$@"; }

# The node of our pid file is alive (and is an Erlang VM, not a recycled pid).
rmq_running() {
  local pid
  pid=$(rmq_pid) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  case $(cat "/proc/$pid/comm" 2>/dev/null) in
  beam* | erl*) ;;
  *) return 1 ;;
  esac
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# rmq_accounts: the perfbase user with full permissions on / (idempotent).
rmq_accounts() {
  if ! rmq_ctl list_users 2>/dev/null | awk '{print $1}' | grep -qx perfbase; then
    rmq_ctl add_user perfbase perfbase >&2 || die "cannot create the rabbitmq user perfbase"
  else
    rmq_ctl change_password perfbase perfbase >&2 || die "cannot set the perfbase password"
  fi
  rmq_ctl set_permissions -p / perfbase '.*' '.*' '.*' >&2 ||
    die "cannot give perfbase permissions on vhost /"
  rmq_ctl authenticate_user perfbase perfbase >/dev/null ||
    die "rabbitmq is up but the perfbase user cannot log in"
}

rmq_up() {
  local port user mark runas i starter
  [ -x "$RMQ_BIN/rabbitmq-server" ] || ensure_pkg rabbitmq-server
  [ -x "$RMQ_BIN/rabbitmq-server" ] || die "rabbitmq-server installed but no $RMQ_BIN/rabbitmq-server"
  # The package's own node (if its install started one despite policy-rc.d) is not ours.
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet rabbitmq-server 2>/dev/null; then
    log "stopping the package's rabbitmq-server service"
    systemctl stop rabbitmq-server >&2 || true
  fi
  user=$(rmq_run_user)
  if is_root; then ensure_user "$RMQ_USER"; fi
  mkdir -p "$RMQ_DIR/home" "$RMQ_DIR/mnesia" "$RMQ_DIR/log"
  if is_root; then chown -R "$RMQ_USER:" "$RMQ_DIR"; fi
  if rmq_running; then
    log "rabbitmq already running (pid $(rmq_pid), port $(rmq_port))"
    rmq_accounts
    return 0
  fi
  port=$(pick_port "$RMQ_DIR/port" "$RMQ_FIRST_PORT")
  # The distribution port is read back from dist_port (rmq_env_args), not printed here.
  pick_port "$RMQ_DIR/dist_port" "$RMQ_FIRST_DIST_PORT" >/dev/null
  # Our own config: no plugins, nothing read from /etc/rabbitmq.
  echo '[].' >"$RMQ_DIR/enabled_plugins"
  : >"$RMQ_DIR/rabbitmq-env.conf"
  cat >"$RMQ_DIR/rabbitmq.conf" <<CONF
listeners.tcp.default = 127.0.0.1:$port
log.console = false
log.file.level = info
CONF
  if is_root; then chown -R "$RMQ_USER:" "$RMQ_DIR"; fi
  # The port mapper, loopback only; a running one (another node's) is shared.
  if ! epmd -names >/dev/null 2>&1; then
    log "starting epmd"
    as_user "$user" env ERL_EPMD_ADDRESS=127.0.0.1 epmd -daemon </dev/null >/dev/null 2>&1 ||
      die "cannot start epmd"
    touch "$RMQ_DIR/epmd.ours"
  fi
  rm -f "$RMQ_DIR/rabbitmq.pid"
  touch "$RMQ_DIR/log/console.log"
  if is_root; then chown "$RMQ_USER:" "$RMQ_DIR/log/console.log"; fi
  mark=$(stat -c %s "$RMQ_DIR/log/console.log")
  log "starting rabbitmq node $RMQ_NODE on 127.0.0.1:$port (logs $RMQ_DIR/log)"
  # Detached (own session, no lock fd, no terminal) so that it outlives this script.
  rmq_env_args
  runas=()
  # setpriv, not runuser: runuser's PAM session would reset the file limit to 1024.
  if is_root; then runas=(setpriv --reuid="$RMQ_USER" --regid="$RMQ_USER" --init-groups); fi
  # Every AMQP connection costs the node a file descriptor: lift the soft limit (often 1024)
  # to the hard one, so a load test with many connections cannot run it out (emfile).
  (ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    cd / && exec setsid "${runas[@]}" env "${RMQ_ENV[@]}" "$RMQ_BIN/rabbitmq-server" \
    </dev/null >>"$RMQ_DIR/log/console.log" 2>&1) 9>&- &
  starter=$!
  # await_startup needs the node registered with epmd: wait for that (and the pid file) first.
  for ((i = 0; i < 240; i++)); do
    if rmq_running && epmd -names 2>/dev/null | grep -q "^name ${RMQ_NODE%@*} "; then break; fi
    if ! kill -0 "$starter" 2>/dev/null && ! rmq_running; then
      tail -c +$((mark + 1)) "$RMQ_DIR/log/console.log" | tail -20 >&2
      die "rabbitmq exited during startup; see $RMQ_DIR/log"
    fi
    sleep 0.25
  done
  if ! rmq_env "$RMQ_BIN/rabbitmqctl" -q -n "$RMQ_NODE" --timeout 120 await_startup >&2; then
    tail -c +$((mark + 1)) "$RMQ_DIR/log/console.log" | tail -20 >&2
    die "rabbitmq did not start; see $RMQ_DIR/log"
  fi
  rmq_running || die "rabbitmq started but wrote no pid file $RMQ_DIR/rabbitmq.pid"
  rmq_accounts
  log "rabbitmq up: pid $(rmq_pid), 127.0.0.1:$port, user perfbase"
}

# rmq_epmd_down: stops the port mapper we started, once no node is registered with it.
rmq_epmd_down() {
  [ -f "$RMQ_DIR/epmd.ours" ] || return 0
  if epmd -names 2>/dev/null | grep -q '^name '; then
    log "epmd still serves other nodes: left running"
  else
    log "stopping epmd"
    epmd -kill >/dev/null 2>&1 || true
  fi
  rm -f "$RMQ_DIR/epmd.ours"
}

rmq_down() {
  local pid i
  if ! rmq_running; then
    log "rabbitmq not running"
    rmq_epmd_down
    return 0
  fi
  pid=$(rmq_pid)
  log "stopping rabbitmq (pid $pid)"
  rmq_ctl stop "$RMQ_DIR/rabbitmq.pid" >&2 || kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 240; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      rmq_epmd_down
      return 0
    fi
    sleep 0.25
  done
  die "rabbitmq (pid $pid) did not stop within 60 s; see $RMQ_DIR/log"
}

svc_rabbitmq() {
  case $1 in
  up) rmq_up ;;
  down) rmq_down ;;
  purge)
    log "removing $RMQ_DIR"
    rm -rf "$RMQ_DIR"
    ;;
  env)
    if ! rmq_running; then
      log "rabbitmq is not running: run scripts/services.sh up rabbitmq"
      return 1
    fi
    echo "export PERFBASE_AMQP_URL='amqp://perfbase:perfbase@127.0.0.1:$(rmq_port)/%2f'"
    echo "export PERFBASE_RABBITMQ_PID=$(rmq_pid)"
    ;;
  status)
    if rmq_running; then
      echo "rabbitmq: running, pid $(rmq_pid), 127.0.0.1:$(rmq_port), node $RMQ_NODE, data $RMQ_DIR/mnesia"
    else
      if [ -d "$RMQ_DIR/mnesia" ]; then echo "rabbitmq: stopped, data kept in $RMQ_DIR/mnesia"; else echo "rabbitmq: stopped, no data"; fi
    fi
    ;;
  esac
}
