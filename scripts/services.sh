#!/usr/bin/env bash
# Project-local servers for the tests and benchmarks that measure real services. Each runs from
# Debian's packages (installed with apt-get when missing), on a free loopback port, with its data
# under .services/NAME at the repo root (gitignored).
#
#   scripts/services.sh up     [SERVICE...]          start; idempotent; prints the env exports
#   scripts/services.sh down   [--purge] [SERVICE...] stop, keeping the data (--purge deletes it)
#   scripts/services.sh env    [SERVICE...]          print shell exports for the running ones
#   scripts/services.sh status [SERVICE...]
#
#   eval "$(scripts/services.sh up)"        # start and export in one go
#   eval "$(scripts/services.sh env)"       # export, for services already up
#
# Without SERVICE: all of them. Services: postgres (alias postgresql), mariadb (alias mysql).
#   postgres: PERFBASE_POSTGRES_URL=postgres://perfbase:perfbase@127.0.0.1:PORT/perfbase
#             PERFBASE_PG_PID=<postmaster pid>
#   mariadb:  PERFBASE_MYSQL_URL=mysql://perfbase:perfbase@127.0.0.1:PORT/perfbase
#             PERFBASE_MARIADB_PID=<mariadbd pid>
#
# Progress goes to stderr, exports to stdout. As root the servers run as their packages' system
# user (PostgreSQL refuses to run as root). A service is one function `svc_NAME ACTION` with
# ACTION one of up, down, purge, env, status; add one and list it in SERVICES.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE="$ROOT/.services"
SERVICES=(postgres mariadb)

log() { echo "services: $*" >&2; }
die() {
  log "$*"
  exit 1
}
is_root() { [ "$(id -u)" = 0 ]; }

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
}

# port_free PORT: nothing listens on PORT (any address).
port_free() {
  if command -v ss >/dev/null 2>&1; then
    [ -z "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
  else
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}

# free_port FROM: the first free port from FROM upward.
free_port() {
  local p=$1
  while [ "$p" -lt $(($1 + 500)) ]; do
    if port_free "$p"; then
      echo "$p"
      return 0
    fi
    p=$((p + 1))
  done
  die "no free port in $1..$(($1 + 499))"
}

# ensure_pkg PACKAGE: installs a Debian package when it is not installed.
ensure_pkg() {
  local pkg=$1 sudo=()
  if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    return 0
  fi
  if ! is_root; then
    command -v sudo >/dev/null 2>&1 || die "$pkg is not installed: apt-get install $pkg (as root)"
    sudo=(sudo)
  fi
  if ! apt-cache show "$pkg" >/dev/null 2>&1; then
    log "apt-get update (package $pkg unknown)"
    "${sudo[@]}" apt-get update >&2
  fi
  log "apt-get install -y $pkg"
  if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "$pkg" >&2; then
    # A stale package list names files the mirror no longer has: refresh it and try once more.
    log "apt-get install failed; apt-get update and retry"
    "${sudo[@]}" apt-get update >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "$pkg" >&2
  fi
}

# ensure_user NAME: the system user a server runs as when we are root.
ensure_user() {
  id "$1" >/dev/null 2>&1 || useradd --system --user-group --no-create-home \
    --home-dir /nonexistent --shell /usr/sbin/nologin "$1"
}

# as_user USER CMD...: runs CMD as USER when we are root (from a directory USER can read),
# else as ourselves. fd 9, the lock, is closed for it: a server must not inherit (and hold) it.
as_user() {
  local user=$1
  shift
  if is_root; then
    (cd / && runuser -u "$user" -- "$@" 9>&-)
  else
    "$@" 9>&-
  fi
}

# ---------------------------------------------------------------------------------------------
# postgres: PostgreSQL from Debian's postgresql package (15 on Debian 12), a database and user
# `perfbase` (password `perfbase`), listening on 127.0.0.1 from port 55432 upward and on a Unix
# socket in .services/postgres/run.

PG_DIR="$BASE/postgres"
PG_DATA="$PG_DIR/data"
PG_LOG="$PG_DIR/postgres.log"
PG_USER=postgres
PG_FIRST_PORT=55432
PG_SOCK="$PG_DIR/run"
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

pg_up() {
  local bin port user
  pg_bindir >/dev/null || ensure_pkg postgresql
  bin=$(pg_bindir) || die "postgresql installed but no /usr/lib/postgresql/*/bin/pg_ctl"
  user=$(pg_run_user)
  if is_root; then ensure_user "$PG_USER"; fi
  mkdir -p "$PG_DIR" "$PG_SOCK"
  if is_root; then chown "$PG_USER:" "$PG_DIR" "$PG_SOCK"; fi
  if pg_running; then
    log "postgres already running (pid $(pg_pidfile_line 1), port $(pg_pidfile_line 4))"
    return 0
  fi
  if [ ! -s "$PG_DATA/PG_VERSION" ]; then
    log "initdb $PG_DATA ($bin)"
    rm -rf "$PG_DATA"
    as_user "$user" "$bin/initdb" -D "$PG_DATA" -U postgres --auth-local=trust \
      --auth-host=scram-sha-256 --encoding=UTF8 --no-locale >>"$PG_LOG" 2>&1 ||
      die "initdb failed; see $PG_LOG"
  fi
  # The last port again when it is still free, so URLs stay the same across restarts.
  port=$(cat "$PG_DIR/port" 2>/dev/null || true)
  if [ -z "$port" ] || ! port_free "$port"; then port=$(free_port "$PG_FIRST_PORT"); fi
  echo "$port" >"$PG_DIR/port"
  log "starting postgres on 127.0.0.1:$port (log $PG_LOG)"
  if is_root; then touch "$PG_LOG" && chown "$PG_USER:" "$PG_LOG"; fi
  as_user "$user" "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 \
    -o "-p $port -k $PG_SOCK -c listen_addresses=127.0.0.1" start >&2 ||
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

# ---------------------------------------------------------------------------------------------
# mariadb: MariaDB from Debian's mariadb-server package (10.11 on Debian 12), a database and user
# `perfbase` (password `perfbase`, as 'perfbase'@'%' and 'perfbase'@'localhost', all privileges on
# perfbase.* and on scratch databases named perfbase_*, so that a test may create one and a
# missing one answers 1049 unknown database rather than 1044 access denied), listening on 127.0.0.1 from port 53306 upward and on a Unix socket in
# .services/mariadb. The server reads no option file (--no-defaults): every setting is on its
# command line in mdb_up, so nothing in /etc/mysql changes it. Its root account has no password
# and exists only as root@localhost, reachable through the socket (this script's admin path).

MDB_DIR="$BASE/mariadb"
MDB_DATA="$MDB_DIR/data"
MDB_LOG="$MDB_DIR/mariadb.log"
MDB_PID="$MDB_DIR/mariadb.pid"
MDB_USER=mysql
MDB_FIRST_PORT=53306
MDB_SOCK="$MDB_DIR/mariadb.sock"
# A Unix socket path has at most 107 bytes; from a deep checkout use a path in /tmp.
if [ ${#MDB_SOCK} -gt 107 ]; then
  MDB_SOCK="/tmp/perfbase-mariadb-$(printf %s "$ROOT" | cksum | cut -d' ' -f1).sock"
fi

mdb_run_user() { if is_root; then echo "$MDB_USER"; else id -un; fi; }

# mdb_bin NAME...: the path of the first of the named programs that is installed (MariaDB's
# names first, the older mysql* names of the same programs as fallbacks).
mdb_bin() {
  local n
  for n in "$@"; do
    if command -v "$n" >/dev/null 2>&1; then
      command -v "$n"
      return 0
    fi
    if [ -x "/usr/sbin/$n" ]; then
      echo "/usr/sbin/$n"
      return 0
    fi
  done
  return 1
}

# mdb_sql ARGS...: the command-line client as MariaDB's root, through the socket.
mdb_sql() {
  local client
  client=$(mdb_bin mariadb mysql) || die "no mariadb client (apt-get install mariadb-client)"
  "$client" --no-defaults --protocol=socket --socket="$MDB_SOCK" -uroot "$@"
}

mdb_pid() { cat "$MDB_PID" 2>/dev/null; }
mdb_port() { cat "$MDB_DIR/port" 2>/dev/null; }

# The server of our pid file is alive (and is a MariaDB server, not a recycled pid).
mdb_running() {
  local pid
  pid=$(mdb_pid) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  case $(cat "/proc/$pid/comm" 2>/dev/null) in
  mariadbd | mysqld) ;;
  *) return 1 ;;
  esac
  # A killed server that its parent has not reaped yet is a zombie: not running.
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# mdb_accounts PORT: the accounts and the database (idempotent, so a running server gets what a
# newer version of this script sets up), then a password login over TCP as the tests make it.
mdb_accounts() {
  local port=$1
  # Root only through the socket; no anonymous accounts (they would shadow perfbase@localhost).
  mdb_sql -N -e "SELECT CONCAT('DROP USER ', QUOTE(User), '@', QUOTE(Host), ';')
      FROM mysql.user WHERE User = '' OR (User = 'root' AND Host <> 'localhost')" |
    mdb_sql || die "cannot drop the default accounts; see $MDB_LOG"
  mdb_sql >&2 <<'SQL' || die "cannot create the perfbase database and user"
CREATE DATABASE IF NOT EXISTS perfbase;
CREATE USER IF NOT EXISTS 'perfbase'@'%' IDENTIFIED BY 'perfbase';
CREATE USER IF NOT EXISTS 'perfbase'@'localhost' IDENTIFIED BY 'perfbase';
ALTER USER 'perfbase'@'%' IDENTIFIED BY 'perfbase';
ALTER USER 'perfbase'@'localhost' IDENTIFIED BY 'perfbase';
GRANT ALL PRIVILEGES ON perfbase.* TO 'perfbase'@'%';
GRANT ALL PRIVILEGES ON perfbase.* TO 'perfbase'@'localhost';
GRANT ALL PRIVILEGES ON `perfbase\_%`.* TO 'perfbase'@'%';
GRANT ALL PRIVILEGES ON `perfbase\_%`.* TO 'perfbase'@'localhost';
SQL
  # The URL the tests get must work: password authentication over TCP.
  MYSQL_PWD=perfbase "$(mdb_bin mariadb mysql)" --no-defaults --protocol=tcp -h 127.0.0.1 \
    -P "$port" -u perfbase --connect-timeout=10 -N -e 'SELECT 1' perfbase >/dev/null ||
    die "mariadb is up but the perfbase user cannot log in"
}

mdb_up() {
  local bin install port user args mark i
  mdb_bin mariadbd mysqld >/dev/null || ensure_pkg mariadb-server
  bin=$(mdb_bin mariadbd mysqld) || die "mariadb-server installed but no mariadbd or mysqld"
  user=$(mdb_run_user)
  if is_root; then ensure_user "$MDB_USER"; fi
  mkdir -p "$MDB_DIR"
  if is_root; then chown "$MDB_USER:" "$MDB_DIR"; fi
  if mdb_running; then
    log "mariadb already running (pid $(mdb_pid), port $(mdb_port))"
    mdb_accounts "$(mdb_port)"
    return 0
  fi
  touch "$MDB_LOG"
  if is_root; then chown "$MDB_USER:" "$MDB_LOG"; fi
  if [ ! -d "$MDB_DATA/mysql" ]; then
    install=$(mdb_bin mariadb-install-db mysql_install_db) ||
      die "mariadb-server installed but no mariadb-install-db or mysql_install_db"
    log "mariadb-install-db $MDB_DATA"
    rm -rf "$MDB_DATA"
    as_user "$user" "$install" --no-defaults --user="$user" --datadir="$MDB_DATA" \
      --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
      >>"$MDB_LOG" 2>&1 || die "mariadb-install-db failed; see $MDB_LOG"
  fi
  # The last port again when it is still free, so URLs stay the same across restarts.
  port=$(mdb_port || true)
  if [ -z "$port" ] || ! port_free "$port"; then port=$(free_port "$MDB_FIRST_PORT"); fi
  echo "$port" >"$MDB_DIR/port"
  args=(--no-defaults --datadir="$MDB_DATA" --bind-address=127.0.0.1 --port="$port"
    --socket="$MDB_SOCK" --pid-file="$MDB_PID" --log-error="$MDB_LOG" --skip-name-resolve
    --max-connections=512 --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci)
  # As root the server switches to the mysql user itself (as mysqld_safe has it do), so that
  # no root process stays behind as its parent.
  if is_root; then args+=(--user="$MDB_USER"); fi
  rm -f "$MDB_PID"
  mark=$(stat -c %s "$MDB_LOG")
  log "starting mariadb on 127.0.0.1:$port (log $MDB_LOG)"
  # Detached (own session, no lock fd, no terminal) so that it outlives this script.
  (cd / && exec setsid "$bin" "${args[@]}" </dev/null >>"$MDB_LOG" 2>&1) 9>&- &
  for ((i = 0; i < 240; i++)); do
    if mdb_running && mdb_sql -e 'SELECT 1' >/dev/null 2>&1; then break; fi
    if tail -c +$((mark + 1)) "$MDB_LOG" | grep -q '\[ERROR\] Aborting'; then
      die "mariadb did not start; see $MDB_LOG"
    fi
    sleep 0.25
  done
  [ "$i" -lt 240 ] || die "mariadb did not answer within 60 s; see $MDB_LOG"
  mdb_accounts "$port"
  log "mariadb up: pid $(mdb_pid), 127.0.0.1:$port, database and user perfbase"
}

mdb_down() {
  local pid i
  if ! mdb_running; then
    log "mariadb not running"
    return 0
  fi
  pid=$(mdb_pid)
  log "stopping mariadb (pid $pid)"
  mdb_sql -e 'SHUTDOWN' >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 240; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.25
  done
  die "mariadb (pid $pid) did not stop within 60 s; see $MDB_LOG"
}

svc_mariadb() {
  case $1 in
  up) mdb_up ;;
  down) mdb_down ;;
  purge)
    log "removing $MDB_DIR"
    rm -rf "$MDB_DIR"
    case $MDB_SOCK in /tmp/*) rm -f "$MDB_SOCK" "$MDB_SOCK.lock" ;; esac
    ;;
  env)
    if ! mdb_running; then
      log "mariadb is not running: run scripts/services.sh up"
      return 1
    fi
    echo "export PERFBASE_MYSQL_URL='mysql://perfbase:perfbase@127.0.0.1:$(mdb_port)/perfbase'"
    echo "export PERFBASE_MARIADB_PID=$(mdb_pid)"
    ;;
  status)
    if mdb_running; then
      echo "mariadb: running, pid $(mdb_pid), 127.0.0.1:$(mdb_port), data $MDB_DATA"
    else
      if [ -d "$MDB_DATA" ]; then echo "mariadb: stopped, data kept in $MDB_DATA"; else echo "mariadb: stopped, no data"; fi
    fi
    ;;
  esac
}

# ---------------------------------------------------------------------------------------------

main() {
  local action=${1:-} purge=0 names=() n rc=0
  [ $# -gt 0 ] && shift
  for a in "$@"; do
    case $a in
    --purge) purge=1 ;;
    -h | --help)
      usage
      exit 0
      ;;
    -*) die "unknown option $a" ;;
    postgresql) names+=(postgres) ;;
    mysql) names+=(mariadb) ;;
    *) names+=("$a") ;;
    esac
  done
  [ ${#names[@]} -gt 0 ] || names=("${SERVICES[@]}")
  for n in "${names[@]}"; do
    declare -F "svc_$n" >/dev/null || die "unknown service $n (known: ${SERVICES[*]})"
  done
  if [ $purge = 1 ] && [ "$action" != down ]; then die "--purge goes with down"; fi

  case $action in
  up | down)
    mkdir -p "$BASE"
    exec 9>"$BASE/.lock"
    flock 9
    for n in "${names[@]}"; do
      "svc_$n" "$action"
      if [ $purge = 1 ]; then "svc_$n" purge; fi
    done
    if [ "$action" = up ]; then
      for n in "${names[@]}"; do "svc_$n" env; done
    fi
    ;;
  env)
    for n in "${names[@]}"; do "svc_$n" env || rc=1; done
    exit $rc
    ;;
  status)
    for n in "${names[@]}"; do "svc_$n" status; done
    ;;
  -h | --help | help)
    usage
    ;;
  *)
    usage
    exit 2
    ;;
  esac
}

main "$@"
