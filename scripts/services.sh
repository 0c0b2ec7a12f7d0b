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
# Without SERVICE: all of them. Services: postgres (alias postgresql).
#   postgres: PERFBASE_POSTGRES_URL=postgres://perfbase:perfbase@127.0.0.1:PORT/perfbase
#             PERFBASE_PG_PID=<postmaster pid>
#
# Progress goes to stderr, exports to stdout. As root the servers run as their packages' system
# user (PostgreSQL refuses to run as root). A service is one function `svc_NAME ACTION` with
# ACTION one of up, down, purge, env, status; add one and list it in SERVICES.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE="$ROOT/.services"
SERVICES=(postgres)

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
