# shellcheck shell=bash
# scripts/services/mariadb.sh, sourced by scripts/services.sh: the MariaDB server for the mysql
# driver's tests, the CLI's SQL tests and bench/mysql_vs_sysbench.sh.
#
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
