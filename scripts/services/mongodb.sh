# shellcheck shell=bash
# scripts/services/mongodb.sh, sourced by scripts/services.sh: FerretDB, the MongoDB wire
# protocol server for the mongo driver's tests, the CLI's tests and bench/mongo_vs_peer.sh (there
# is no MongoDB in Debian, and FerretDB has no package: it is built here from its Go module).
#
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
  local pid
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
