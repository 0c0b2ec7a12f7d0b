# shellcheck shell=bash
# scripts/services/postgres.sh, sourced by scripts/services.sh: the PostgreSQL server that the
# postgres driver's tests, the store's, the CLI's SQL and study tests and bench/pg_vs_pgbench.sh
# measure (PERFBASE_PG_PID is the process the monitor's tests sample).
#
# postgres: PostgreSQL from Debian's postgresql package (15 on Debian 12), a database and user
# `perfbase` (password `perfbase`), listening on 127.0.0.1 from port 25432 upward and on a Unix
# socket in .services/postgres/run. pg_stat_statements is preloaded (PG_PRELOAD), so that a test
# can count the statements a client sent (the stacks' tests do, in the database `stacks`, where
# pgbouncer.sh creates the extension); a server found running without it is restarted by `up`.

PG_DIR="$BASE/postgres"
PG_DATA="$PG_DIR/data"
PG_LOG="$PG_DIR/postgres.log"
PG_USER=postgres
PG_FIRST_PORT=25432
PG_SOCK="$PG_DIR/run"
PG_PRELOAD=pg_stat_statements
# A Unix socket path has at most 107 bytes; from a deep checkout use a directory in /tmp.
if [ $((${#PG_SOCK} + 20)) -gt 107 ]; then
  PG_SOCK="/tmp/perfbase-pg-$(printf %s "$ROOT" | cksum | cut -d' ' -f1)"
fi

pg_run_user() { if is_root; then echo "$PG_USER"; else id -un; fi; }

# The binaries that match the cluster's version, or the newest installed.
pg_bindir() {
  local d
  if [ -s "$PG_DATA/PG_VERSION" ]; then
    d="/usr/lib/postgresql/$(cat "$PG_DATA/PG_VERSION")/bin"
    [ -x "$d/pg_ctl" ] && echo "$d" && return 0
  fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/pg_ctl" ] && echo "$d" && return 0
  done
  return 1
}

pg_running() {
  local bin
  [ -f "$PG_DATA/postmaster.pid" ] || return 1
  bin=$(pg_bindir) || return 1
  as_user "$(pg_run_user)" "$bin/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1
}

# pg_pidfile_line N: line N of postmaster.pid (1 pid, 4 port, 5 socket directory).
pg_pidfile_line() { sed -n "${1}p" "$PG_DATA/postmaster.pid"; }

# pg_preloaded: the running server has PG_PRELOAD in shared_preload_libraries (a setting read at
# start only: a server started before it was set needs a restart).
pg_preloaded() {
  local bin got
  bin=$(pg_bindir) || return 1
  got=$(as_user "$(pg_run_user)" "$bin/psql" -X -h "$(pg_pidfile_line 5)" -p "$(pg_pidfile_line 4)" \
    -U postgres -d postgres -qAt -c 'SHOW shared_preload_libraries' 2>/dev/null) || return 1
  [[ ",${got// /}," == *",$PG_PRELOAD,"* ]]
}

pg_up() {
  local bin port user
  pg_bindir >/dev/null || ensure_pkg postgresql
  bin=$(pg_bindir) || die "postgresql installed but no /usr/lib/postgresql/*/bin/pg_ctl"
  user=$(pg_run_user)
  if is_root; then ensure_user "$PG_USER"; fi
  mkdir -p "$PG_DIR" "$PG_SOCK"
  if is_root; then chown "$PG_USER:" "$PG_DIR" "$PG_SOCK"; fi
  if pg_running; then
    if pg_preloaded; then
      log "postgres already running (pid $(pg_pidfile_line 1), port $(pg_pidfile_line 4))"
      return 0
    fi
    log "postgres runs without shared_preload_libraries=$PG_PRELOAD: restarting it"
    pg_down
  fi
  if [ ! -s "$PG_DATA/PG_VERSION" ]; then
    log "initdb $PG_DATA ($bin)"
    rm -rf "$PG_DATA"
    as_user "$user" "$bin/initdb" -D "$PG_DATA" -U postgres --auth-local=trust \
      --auth-host=scram-sha-256 --encoding=UTF8 --no-locale >>"$PG_LOG" 2>&1 ||
      die "initdb failed; see $PG_LOG"
  fi
  port=$(pick_port "$PG_DIR/port" "$PG_FIRST_PORT")
  log "starting postgres on 127.0.0.1:$port (log $PG_LOG)"
  if is_root; then touch "$PG_LOG" && chown "$PG_USER:" "$PG_LOG"; fi
  as_user "$user" "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 \
    -o "-p $port -k $PG_SOCK -c listen_addresses=127.0.0.1 -c shared_preload_libraries=$PG_PRELOAD" start >&2 ||
    die "postgres did not start; see $PG_LOG"
  as_user "$user" "$bin/psql" -X -h "$PG_SOCK" -p "$port" -U postgres -d postgres -qAt \
    -v ON_ERROR_STOP=1 >&2 <<'SQL'
DO $$ BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'perfbase') THEN
    ALTER ROLE perfbase LOGIN PASSWORD 'perfbase';
  ELSE
    CREATE ROLE perfbase LOGIN PASSWORD 'perfbase';
  END IF;
END $$;
SELECT 'CREATE DATABASE perfbase OWNER perfbase'
  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'perfbase')\gexec
SQL
  # The URL the tests get must work: password authentication over TCP.
  PGCONNECT_TIMEOUT=10 "$bin/psql" -X "postgres://perfbase:perfbase@127.0.0.1:$port/perfbase" \
    -qAt -c 'SELECT 1' >/dev/null || die "postgres is up but the perfbase user cannot log in"
  log "postgres up: pid $(pg_pidfile_line 1), 127.0.0.1:$port, database and user perfbase"
}

pg_down() {
  local bin
  if pg_running; then
    bin=$(pg_bindir)
    log "stopping postgres (pid $(pg_pidfile_line 1))"
    as_user "$(pg_run_user)" "$bin/pg_ctl" -D "$PG_DATA" -m fast -w -t 60 stop >&2
  else
    log "postgres not running"
  fi
}

svc_postgres() {
  case $1 in
  up) pg_up ;;
  down) pg_down ;;
  purge)
    log "removing $PG_DIR"
    rm -rf "$PG_DIR"
    case $PG_SOCK in /tmp/*) rm -rf "$PG_SOCK" ;; esac
    ;;
  env)
    if ! pg_running; then
      log "postgres is not running: run scripts/services.sh up"
      return 1
    fi
    echo "export PERFBASE_POSTGRES_URL='postgres://perfbase:perfbase@127.0.0.1:$(pg_pidfile_line 4)/perfbase'"
    echo "export PERFBASE_PG_PID=$(pg_pidfile_line 1)"
    ;;
  status)
    if pg_running; then
      echo "postgres: running, pid $(pg_pidfile_line 1), 127.0.0.1:$(pg_pidfile_line 4), data $PG_DATA"
    else
      if [ -d "$PG_DATA" ]; then echo "postgres: stopped, data kept in $PG_DATA"; else echo "postgres: stopped, no data"; fi
    fi
    ;;
  esac
}
