# shellcheck shell=bash
# scripts/services/pgbouncer.sh, sourced by scripts/services.sh: a PgBouncer in front of the
# postgres service, for the stacks (stacks.sh) that the benchmark study measures, and the
# database they query.
#
# pgbouncer: Debian's pgbouncer package (1.18 on Debian 12) on 127.0.0.1 from port 26432 upward
# (no Unix socket), in front of the postgres service (started first when it is not running).
# One database, `stacks`, whose server connections go to PostgreSQL over TCP as user perfbase.
# pool_mode = transaction: a server connection is lent to a client for one transaction only, so
# named prepared statements, which live on one server connection, do not work through it (1.18
# cannot track them; 1.21 learnt to): stacks.sh says, driver by driver, what it sets for that.
# The pool sizes are written down in PGB_POOL; clients authenticate with SCRAM-SHA-256 against
# auth_file (userlist.txt, mode 0600). The admin console (`SHOW POOLS`, `SHOW STATS`) is the
# database `pgbouncer`, for user perfbase (admin_users). The config is written on every `up`;
# a running PgBouncer whose config changed (the postgres service moved to another port) is
# restarted. As root it runs as a system user `pgbouncer`. Log in .services/pgbouncer/.
#
# The database `stacks` on the postgres service is ensured by every `up` (PgBouncer's URL names
# it): owned by perfbase; pgbench's tables at scale 1 (`pgbench -i -s 1`: 100,000 accounts,
# 10 tellers, 1 branch), made again only when pgbench_accounts lacks or has another number of
# rows; the function pgbench_tx (pgbench's TPC-B transaction in one call, below); and the
# extension pg_stat_statements (preloaded by postgres.sh), so a test counts what a stack sent.

PGB_DIR="$BASE/pgbouncer"
PGB_USER=pgbouncer
PGB_FIRST_PORT=26432
PGB_DB=stacks
# The pool sizes, as PgBouncer's settings: 20 server connections for the one (database, user)
# pair, none kept open when idle, no reserve; up to 2000 clients (the open-files limit is raised
# for them as root).
PGB_POOL="default_pool_size = 20
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 2000"
PGB_NOFILE=4096

pgb_pid() { cat "$PGB_DIR/pgbouncer.pid" 2>/dev/null; }
pgb_port() { cat "$PGB_DIR/port" 2>/dev/null; }
pgb_url() { echo "postgres://perfbase:perfbase@127.0.0.1:$(pgb_port)/$1"; }

# pgb_running: the process of our pid file is alive and is pgbouncer (not a recycled pid, not a
# zombie).
pgb_running() {
  local pid
  pid=$(pgb_pid) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = pgbouncer ] || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# pgb_config PORT PGPORT: the config file's text.
pgb_config() {
  cat <<EOF
; written by scripts/services/pgbouncer.sh on every up: edits are lost
[databases]
$PGB_DB = host=127.0.0.1 port=$2 dbname=$PGB_DB

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $1
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $PGB_DIR/userlist.txt
admin_users = perfbase
pool_mode = transaction
$PGB_POOL
; JDBC-style clients (r2dbc-postgresql) send it at startup; PgBouncer would refuse them.
ignore_startup_parameters = extra_float_digits
logfile =
syslog = 0
log_connections = 0
log_disconnections = 0
EOF
}

# pgb_psql_su DB ARGS...: psql as PostgreSQL's superuser over the postgres service's Unix socket
# (CREATE DATABASE, CREATE EXTENSION).
pgb_psql_su() {
  local db=$1
  shift
  PGOPTIONS="-c client_min_messages=warning" as_user "$(pg_run_user)" "$(pg_bindir)/psql" -X \
    -h "$(pg_pidfile_line 5)" -p "$(pg_pidfile_line 4)" \
    -U postgres -d "$db" -qAt -v ON_ERROR_STOP=1 "$@"
}

# pgb_stacks_db: the database `stacks` and what is in it (see the header), made where missing.
pgb_stacks_db() {
  local bin url n
  bin=$(pg_bindir) || die "pgbouncer: no PostgreSQL binaries"
  url="postgres://perfbase:perfbase@127.0.0.1:$(pg_pidfile_line 4)/$PGB_DB"
  pgb_psql_su postgres >&2 <<SQL || die "pgbouncer: cannot create the database $PGB_DB"
SELECT 'CREATE DATABASE $PGB_DB OWNER perfbase' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$PGB_DB')\gexec
SQL
  pgb_psql_su "$PGB_DB" -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' >&2 ||
    die "pgbouncer: cannot create the extension pg_stat_statements in $PGB_DB"
  n=$(PGCONNECT_TIMEOUT=10 "$bin/psql" -X "$url" -qAt -c 'SELECT count(*) FROM pgbench_accounts' 2>/dev/null) || n=0
  if [ "$n" != 100000 ]; then
    log "pgbouncer: pgbench -i -s 1 in the database $PGB_DB (100,000 accounts)"
    PGCONNECT_TIMEOUT=10 PGOPTIONS="-c client_min_messages=warning" "$bin/pgbench" -i -s 1 -q "$url" >&2 ||
      die "pgbench -i in $PGB_DB failed"
  fi
  # pgbench's TPC-B transaction ("tpcb-like") in one call, so a stack sends one statement:
  # the account's, teller's and branch's balances moved by delta, a row of history, the
  # account's new balance returned (which pgbench's script reads with a SELECT).
  PGCONNECT_TIMEOUT=10 "$bin/psql" -X "$url" -qAt -v ON_ERROR_STOP=1 >&2 <<'SQL' ||
CREATE OR REPLACE FUNCTION pgbench_tx(p_aid bigint, p_tid bigint, p_bid bigint, p_delta int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  v_abalance int;
BEGIN
  UPDATE pgbench_accounts SET abalance = abalance + p_delta WHERE aid = p_aid
    RETURNING abalance INTO v_abalance;
  UPDATE pgbench_tellers SET tbalance = tbalance + p_delta WHERE tid = p_tid;
  UPDATE pgbench_branches SET bbalance = bbalance + p_delta WHERE bid = p_bid;
  INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
    VALUES (p_tid, p_bid, p_aid, p_delta, CURRENT_TIMESTAMP);
  RETURN v_abalance;
END $$;
SQL
    die "pgbouncer: cannot create the function pgbench_tx in $PGB_DB"
}

# pgb_ready: PgBouncer answers a query on the database stacks, which it passes to PostgreSQL.
pgb_ready() {
  pgb_running && [ "$(PGCONNECT_TIMEOUT=5 "$(pg_bindir)/psql" -X "$(pgb_url "$PGB_DB")" -qAt -c 'SELECT 1' 2>/dev/null)" = 1 ]
}

# pgb_start: starts PgBouncer in the foreground of its own session (setsid, setpriv exec, so $!
# is its pid), detached, stderr (its log) to pgbouncer.log; waits until pgb_ready.
pgb_start() {
  local logf=$PGB_DIR/pgbouncer.log pid mark run=()
  touch "$logf"
  if is_root; then
    chown -R "$PGB_USER:" "$PGB_DIR"
    run=(setpriv --reuid="$PGB_USER" --regid="$PGB_USER" --init-groups)
  fi
  rm -f "$PGB_DIR/pgbouncer.pid"
  mark=$(stat -c %s "$logf")
  log "starting pgbouncer on 127.0.0.1:$(pgb_port) (log $logf)"
  (
    if is_root && [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt $PGB_NOFILE ]; then
      ulimit -Hn $PGB_NOFILE 2>/dev/null || true
    fi
    ulimit -Sn "$(ulimit -Hn)" 2>/dev/null || true
    cd / && exec setsid "${run[@]}" pgbouncer "$PGB_DIR/pgbouncer.ini" </dev/null >>"$logf" 2>&1
  ) 9>&- &
  pid=$!
  echo "$pid" >"$PGB_DIR/pgbouncer.pid"
  wait_ready pgbouncer "$pid" "$logf" "$mark" 120 "answer SELECT 1 through 127.0.0.1:$(pgb_port)" pgb_ready
}

pgb_up() {
  local port new
  command -v pgbouncer >/dev/null 2>&1 || ensure_pkg pgbouncer
  command -v pgbouncer >/dev/null 2>&1 || die "pgbouncer installed but not on PATH"
  if is_root; then ensure_user "$PGB_USER"; fi
  svc_postgres up
  pgb_stacks_db
  mkdir -p "$PGB_DIR"
  chmod 700 "$PGB_DIR"
  # The port in use when running (the config's), else a free one.
  if pgb_running; then port=$(pgb_port); else port=$(pick_port "$PGB_DIR/port" "$PGB_FIRST_PORT"); fi
  new=$(pgb_config "$port" "$(pg_pidfile_line 4)")
  write_private "$PGB_DIR/userlist.txt" '"perfbase" "perfbase"'
  if is_root; then chown -R "$PGB_USER:" "$PGB_DIR"; fi
  if pgb_running; then
    if [ "$new" = "$(cat "$PGB_DIR/pgbouncer.ini" 2>/dev/null)" ]; then
      log "pgbouncer already running (pid $(pgb_pid), port $port)"
      return 0
    fi
    log "pgbouncer's config changed (postgres moved?): restarting it"
    stop_pid pgbouncer "$(pgb_pid)" "$PGB_DIR/pgbouncer.log"
    port=$(pick_port "$PGB_DIR/port" "$PGB_FIRST_PORT")
    new=$(pgb_config "$port" "$(pg_pidfile_line 4)")
  fi
  write_private "$PGB_DIR/pgbouncer.ini" "$new"
  pgb_start
  log "pgbouncer up: pid $(pgb_pid), 127.0.0.1:$port, database $PGB_DB, pool_mode transaction"
}

pgb_down() {
  if pgb_running; then
    stop_pid pgbouncer "$(pgb_pid)" "$PGB_DIR/pgbouncer.log"
  else
    log "pgbouncer not running"
  fi
}

svc_pgbouncer() {
  case $1 in
  up) pgb_up ;;
  down) pgb_down ;;
  purge)
    log "removing $PGB_DIR"
    rm -rf "$PGB_DIR"
    ;;
  env)
    if ! pgb_running; then
      log "pgbouncer is not running: run scripts/services.sh up pgbouncer"
      return 1
    fi
    echo "export PERFBASE_PGBOUNCER_URL='$(pgb_url "$PGB_DB")'"
    echo "export PERFBASE_PGBOUNCER_ADMIN_URL='$(pgb_url pgbouncer)'"
    echo "export PERFBASE_PGBOUNCER_PID=$(pgb_pid)"
    ;;
  status)
    if pgb_running; then
      echo "pgbouncer: running, pid $(pgb_pid), $(pgb_url "$PGB_DB"), pool_mode transaction"
    else
      echo "pgbouncer: stopped"
    fi
    ;;
  esac
}
