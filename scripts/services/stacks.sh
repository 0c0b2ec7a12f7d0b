# shellcheck shell=bash
# scripts/services/stacks.sh, sourced by scripts/services.sh: the systems under test of the
# benchmark study of web stacks (plans/web-stacks.toml): small apps of ours, one process each,
# on real frameworks and PostgreSQL drivers, all querying the database `stacks` through the
# pgbouncer service (transaction pooling) and pinging the redis service.
#
# stacks: one process per stack, on 127.0.0.1 from port 26101 upward (in the order of
# STK_STACKS), each serving
#   GET /                  200 text/plain "Hello, World!"
#   GET /db                one SELECT of pgbench_accounts by a random aid (1..100000) through the
#                          driver's pool: {"aid","bid","abalance"}
#   GET /tx                SELECT pgbench_tx(aid, tid, 1, delta), pgbench's TPC-B transaction
#   GET /health/all?mode=sequential|concurrent   SELECT 1 and Redis PING, one after the other or
#                          at once: 200 {"postgres":"ok","redis":"ok","mode"}, else 503
# with the header `Server: <framework>/<version> <driver>/<version>` (the versions linked in),
# 503 "pool exhausted..." when the pool gives no connection within 2 s, 500 and the error's text
# on another database error. Each gets DATABASE_URL (PgBouncer's), REDIS_URL, PORT and POOL_SIZE
# (STK_POOL_SIZE connections per stack). The sources lie in scripts/services/stacks/UNIT, one
# unit per language, each with its lockfile; what each driver needs to work through PgBouncer in
# transaction mode is said in its source, beside the setting.
#   go_pgx, go_pq                    go/: net/http, pgx v5 (pgxpool) or lib/pq (database/sql)
#   actix_sqlx                       actix/: actix-web 4, sqlx 0.9, redis-rs
#   fastapi_asyncpg, fastapi_psycopg fastapi/: FastAPI on uvicorn, asyncpg or psycopg 3's pool
#   express_pg, express_postgres     express/: Express 5, node-postgres or porsager's postgres
#   webflux_r2dbc                    webflux/: Spring Boot WebFlux, r2dbc-postgresql, r2dbc-pool
# Each unit is built once per machine into .services/stacks/bin/UNIT (again when its sources
# change: bin/UNIT/VERSION holds their sha256), niced; the build's scratch (Cargo's target dir,
# Maven's repository, npm's and pip's caches, Go's GO_SCRATCH) is deleted after it. Everything in
# bin/ is relocatable (a fresh clone copies it from the machine's cache, lib.sh's built_dirs): the
# Python venv is run as venv/bin/python -m uvicorn, never through its scripts' #! lines.
#
# One stack that fails to build or start does not stop the others: `up` says which and why
# (and exits non-zero for it only under PERFBASE_REQUIRE_SERVICES=1), and `env` leaves it out.
# `down --purge` keeps bin/ and drops the database stacks (pgbouncer's `up` makes it again).
# As root the apps run as a system user `stacks`. Logs in .services/stacks/NAME.log, the
# builds' in .services/stacks/build-UNIT.log.

STK_DIR="$BASE/stacks"
STK_SRC="$ROOT/scripts/services/stacks"
STK_BIN="$STK_DIR/bin"
STK_SCRATCH="$STK_DIR/build"
STK_USER=stacks
STK_FIRST_PORT=26101
STK_POOL_SIZE=10
# The stacks, in the order of their ports (the Nth from STK_FIRST_PORT + N - 1 upward).
STK_STACKS=(go_pgx go_pq actix_sqlx fastapi_asyncpg fastapi_psycopg express_pg express_postgres webflux_r2dbc)
# Debian's python3, not one under /root (pyenv's), which the user `stacks` could not run.
STK_PYTHON=/usr/bin/python3

stk_pid() { cat "$STK_DIR/$1.pid" 2>/dev/null; }
stk_port() { cat "$STK_DIR/$1.port" 2>/dev/null; }
stk_url() { echo "http://127.0.0.1:$(stk_port "$1")"; }

# stk_unit STACK: the unit (source directory, build) that STACK runs.
stk_unit() {
  case $1 in
  go_*) echo go ;;
  actix_*) echo actix ;;
  fastapi_*) echo fastapi ;;
  express_*) echo express ;;
  webflux_*) echo webflux ;;
  *) return 1 ;;
  esac
}

# stk_comm UNIT: the process name (/proc/PID/comm) of UNIT's servers.
stk_comm() {
  case $1 in
  go) echo stacks_go ;;
  actix) echo stacks_actix ;;
  fastapi) echo python ;;
  express) echo node ;;
  webflux) echo java ;;
  esac
}

# stk_running STACK: the process of STACK's pid file is alive and is its unit's server, not a
# recycled pid, not a zombie.
stk_running() {
  local pid
  pid=$(stk_pid "$1") || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$(stk_comm "$(stk_unit "$1")")" ] || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# stk_stamp UNIT: what bin/UNIT/VERSION holds after a build of the current sources (every file
# of scripts/services/stacks/UNIT, lockfiles included; for the venv also Python's version, which
# it is bound to).
stk_stamp() {
  local unit=$1 sum extra=""
  sum=$(cd "$STK_SRC/$unit" && find . -type f ! -name '*.pyc' -print0 | LC_ALL=C sort -z |
    xargs -0 sha256sum | sha256sum) || return 1
  if [ "$unit" = fastapi ]; then extra=" $("$STK_PYTHON" --version 2>&1)"; fi
  echo "$unit src-sha256 ${sum%% *}$extra"
}

# stk_built UNIT: bin/UNIT is there, built from the current sources (VERSION, written last).
stk_built() {
  [ "$(cat "$STK_BIN/$1/VERSION" 2>/dev/null)" = "$(stk_stamp "$1")" ]
}

# stk_need CMD PKG...: CMD is on PATH, else Debian's PKGs are installed for it.
stk_need() {
  local cmd=$1 p
  shift
  command -v "$cmd" >/dev/null 2>&1 && return 0
  for p in "$@"; do ensure_pkg "$p"; done
  command -v "$cmd" >/dev/null 2>&1 || die "stacks: $cmd not found after installing $*"
}

# stk_cargo: the cargo command (PATH, else rustup's default place).
stk_cargo() {
  if command -v cargo >/dev/null 2>&1; then
    command -v cargo
  elif [ -x "${HOME:-/root}/.cargo/bin/cargo" ]; then
    echo "${HOME:-/root}/.cargo/bin/cargo"
  else
    return 1
  fi
}

# stk_build_UNIT NEW SCRATCH: builds UNIT into the empty directory NEW, using SCRATCH for what
# the build alone needs. Output to stdout/stderr (the build log).

stk_build_go() {
  local new=$1 go
  go=$(find_go) || die "stacks: the Go stacks need Go (https://go.dev/dl, into /usr/local/go)"
  # -mod=readonly with the committed go.sum: no checksum database asked, nothing written beside
  # the sources; -trimpath keeps the repository's path out of the binary.
  (cd "$STK_SRC/go" && GOFLAGS=-mod=readonly GOWORK=off nice -n 10 "$go" build -buildvcs=false \
    -trimpath -o "$new/stacks_go" .)
}

stk_build_actix() {
  local new=$1 scratch=$2 cargo
  cargo=$(stk_cargo) || die "stacks: actix_sqlx needs a Rust toolchain (cargo)"
  # Its own lockfile (--locked), its own target dir under .services, release profile.
  CARGO_TARGET_DIR="$scratch/target" nice -n 10 "$cargo" build --release --locked \
    --manifest-path "$STK_SRC/actix/Cargo.toml"
  cp "$scratch/target/release/stacks_actix" "$new/stacks_actix"
}

stk_build_fastapi() {
  local new=$1 scratch=$2
  [ -x "$STK_PYTHON" ] || ensure_pkg python3
  "$STK_PYTHON" -c 'import ensurepip, venv' 2>/dev/null || ensure_pkg python3-venv
  "$STK_PYTHON" -m venv "$new/venv"
  # Wheels only (every pinned package has one for CPython 3.11 on x86-64 Linux): no compiler.
  PIP_CACHE_DIR="$scratch/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 nice -n 10 "$new/venv/bin/python" \
    -m pip install -q --only-binary :all: -r "$STK_SRC/fastapi/requirements.txt"
  cp "$STK_SRC/fastapi/app.py" "$new/"
}

stk_build_express() {
  local new=$1 scratch=$2
  stk_need node nodejs
  stk_need npm npm
  # node_modules in the copy, never beside the sources; exactly package-lock.json's tree.
  cp "$STK_SRC/express/package.json" "$STK_SRC/express/package-lock.json" "$STK_SRC/express/app.js" "$new/"
  (cd "$new" && npm_config_cache="$scratch/npm" nice -n 10 npm ci --omit=dev --ignore-scripts \
    --no-audit --no-fund --loglevel=error)
}

stk_build_webflux() {
  local new=$1 scratch=$2
  stk_need java openjdk-17-jdk-headless
  stk_need mvn maven
  # Built in a copy (target/ is Maven's), with a repository of its own, deleted afterwards.
  cp -a "$STK_SRC/webflux" "$scratch/src"
  (cd "$scratch/src" && nice -n 10 mvn -B -q -Dmaven.repo.local="$scratch/m2" -DskipTests package)
  cp "$scratch/src/target/stacks-webflux.jar" "$new/"
}

# stk_build UNIT: bin/UNIT built (into bin/UNIT.new, renamed when whole), VERSION written last,
# the scratch deleted; the build's output in build-UNIT.log, its tail shown when it fails.
stk_build() {
  local unit=$1 start=$SECONDS stamp new=$STK_BIN/$1.new scratch=$STK_SCRATCH/$1 blog=$STK_DIR/build-$1.log
  stamp=$(stk_stamp "$unit") || die "stacks: cannot read the sources in $STK_SRC/$unit"
  log "stacks: building $unit (log $blog)"
  rm -rf "$new"
  mkdir -p "$new" "$scratch"
  stk_isolated "stk_build_$unit" "$new" "$scratch" >"$blog" 2>&1
  if [ "$STK_RC" != 0 ]; then
    tail -20 "$blog" >&2
    die "stacks: the build of $unit failed after $((SECONDS - start)) s; see $blog"
  fi
  chmod -R go+rX "$new"
  echo "$stamp" >"$new/VERSION"
  rm -rf "${STK_BIN:?}/$unit"
  mv "$new" "$STK_BIN/$unit"
  rm -rf "$scratch"
  log "stacks: $unit built in $((SECONDS - start)) s"
}

# stk_command STACK PORT: sets STK_CMD to the command line that serves STACK on PORT.
stk_command() {
  local s=$1 port=$2 b
  b=$STK_BIN/$(stk_unit "$1")
  case $s in
  go_pgx) STK_CMD=("$b/stacks_go" -driver pgx) ;;
  go_pq) STK_CMD=("$b/stacks_go" -driver pq) ;;
  actix_sqlx) STK_CMD=("$b/stacks_actix") ;;
  fastapi_*)
    # One uvicorn process (no --workers: no supervisor), its own Server header only.
    STK_CMD=("$b/venv/bin/python" -m uvicorn app:asgi --app-dir "$b" --host 127.0.0.1
      --port "$port" --no-access-log --no-server-header)
    ;;
  express_*) STK_CMD=("$(command -v node)" "$b/app.js") ;;
  webflux_r2dbc) STK_CMD=("$(command -v java)" -Xmx256m -jar "$b/stacks-webflux.jar") ;;
  esac
}

# stk_config: what a stack is started with (its database and Redis URLs and pool size): a stack
# running with another is restarted.
stk_config() {
  echo "DATABASE_URL=$(pgb_url "$PGB_DB") REDIS_URL=redis://:perfbase@127.0.0.1:$(rds_port) POOL_SIZE=$STK_POOL_SIZE"
}

# stk_ready STACK PORT: STACK's process runs and answers GET / and GET /db with 200.
stk_ready() {
  local u=http://127.0.0.1:$2
  stk_running "$1" &&
    [ "$(curl --noproxy '*' -s -o /dev/null -w '%{http_code}' -m 5 "$u/")" = 200 ] &&
    [ "$(curl --noproxy '*' -s -o /dev/null -w '%{http_code}' -m 5 "$u/db")" = 200 ]
}

# stk_start STACK N: starts STACK (the Nth, 0-based) on its port, detached (own session, no lock
# fd, no terminal) with a clean environment; setsid and setpriv exec, so $! is the server's pid.
# Waits until it answers / and /db.
stk_start() {
  local s=$1 n=$2 port pid mark logf=$STK_DIR/$1.log run=() driver
  port=$(pick_port "$STK_DIR/$s.port" $((STK_FIRST_PORT + n)))
  stk_command "$s" "$port"
  driver=${s#*_}
  touch "$logf"
  if is_root; then
    chown "$STK_USER:" "$logf"
    run=(setpriv --reuid="$STK_USER" --regid="$STK_USER" --init-groups)
  fi
  rm -f "$STK_DIR/$s.pid"
  mark=$(stat -c %s "$logf")
  log "starting stack $s on 127.0.0.1:$port (log $logf)"
  # shellcheck disable=SC2046 # stk_config's words are the variables, one each
  (cd / && exec setsid "${run[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent \
    LANG=C.UTF-8 PORT="$port" DB_DRIVER="$driver" NODE_ENV=production PYTHONDONTWRITEBYTECODE=1 \
    $(stk_config) "${STK_CMD[@]}" </dev/null >>"$logf" 2>&1) 9>&- &
  pid=$!
  echo "$pid" >"$STK_DIR/$s.pid"
  stk_config >"$STK_DIR/$s.config"
  wait_ready "stack $s" "$pid" "$logf" "$mark" 480 "answer GET / and GET /db with 200 on 127.0.0.1:$port" \
    stk_ready "$s" "$port"
}

# stk_isolated CMD...: runs CMD in a subshell of its own and sets STK_RC to its exit status, so
# that errexit and die stop CMD alone. Not to be called in an `if`, `!`, `&&` or `||`: bash turns
# errexit off in all that such a command runs, subshells included, and a failing step would then
# go on to the next.
stk_isolated() {
  ("$@") &
  if wait $!; then STK_RC=0; else STK_RC=$?; fi
}

# stk_failed STACK WHY: notes that STACK is not up, and why, for up's closing words.
stk_failed() {
  echo "$1: $2" >>"$STK_DIR/failed"
  log "stacks: $1 FAILED: $2"
}

stk_up() {
  local start=$SECONDS i s unit units=() stopped
  mkdir -p "$STK_DIR" "$STK_BIN"
  rm -f "$STK_DIR/failed"
  if is_root; then ensure_user "$STK_USER"; fi
  command -v curl >/dev/null 2>&1 || ensure_pkg curl
  svc_redis up
  svc_pgbouncer up
  # The units to build: those of a stack that is not running, or runs a stale build.
  for s in "${STK_STACKS[@]}"; do
    unit=$(stk_unit "$s")
    if ! stk_built "$unit" && [[ " ${units[*]} " != *" $unit "* ]]; then units+=("$unit"); fi
  done
  for unit in "${units[@]}"; do
    stk_isolated stk_build "$unit"
    if [ "$STK_RC" != 0 ]; then stk_failed "$unit" "its build failed; see $STK_DIR/build-$unit.log"; fi
  done
  rmdir "$STK_SCRATCH" 2>/dev/null || true
  for i in "${!STK_STACKS[@]}"; do
    s=${STK_STACKS[$i]}
    unit=$(stk_unit "$s")
    if ! stk_built "$unit"; then
      if stk_running "$s"; then stop_pid "stack $s" "$(stk_pid "$s")" "$STK_DIR/$s.log"; fi
      stk_failed "$s" "$unit is not built"
      continue
    fi
    if stk_running "$s"; then
      # Running: kept, unless it runs an older build or with other URLs.
      stopped=0
      if [ "$(stat -c %Y "$STK_BIN/$unit/VERSION")" -gt "$(stat -c %Y "$STK_DIR/$s.pid")" ] ||
        [ "$(cat "$STK_DIR/$s.config" 2>/dev/null)" != "$(stk_config)" ]; then
        stop_pid "stack $s (new build or URLs)" "$(stk_pid "$s")" "$STK_DIR/$s.log"
        stopped=1
      fi
      if [ $stopped = 0 ]; then
        log "stack $s already running (pid $(stk_pid "$s"), port $(stk_port "$s"))"
        continue
      fi
    fi
    stk_isolated stk_start "$s" "$i"
    if [ "$STK_RC" != 0 ]; then stk_failed "$s" "did not start; see $STK_DIR/$s.log"; fi
  done
  if [ -s "$STK_DIR/failed" ]; then
    log "stacks: NOT ALL UP after $((SECONDS - start)) s; these failed:"
    sed 's/^/services:   /' "$STK_DIR/failed" >&2
    if [ "${PERFBASE_REQUIRE_SERVICES:-}" = 1 ]; then die "stacks: failed (PERFBASE_REQUIRE_SERVICES=1)"; fi
  else
    log "stacks up in $((SECONDS - start)) s: ${STK_STACKS[*]}"
  fi
}

stk_down() {
  local s any=0
  for s in "${STK_STACKS[@]}"; do
    if stk_running "$s"; then
      stop_pid "stack $s" "$(stk_pid "$s")" "$STK_DIR/$s.log"
      any=1
    fi
  done
  if [ $any = 0 ]; then log "stacks not running"; fi
}

# stk_purge: .services/stacks but bin/, and the database stacks when postgres runs (the apps'
# /tx writes there).
stk_purge() {
  log "removing $STK_DIR but the builds in it (bin)"
  if [ -d "$STK_DIR" ]; then find "$STK_DIR" -mindepth 1 -maxdepth 1 ! -name bin -exec rm -rf {} +; fi
  if pg_running; then
    log "dropping the database $PGB_DB"
    pgb_psql_su postgres -c "DROP DATABASE IF EXISTS $PGB_DB WITH (FORCE)" >&2 ||
      log "stacks: could not drop the database $PGB_DB"
  fi
}

svc_stacks() {
  local s up=() hdr
  case $1 in
  up) stk_up ;;
  down) stk_down ;;
  purge) stk_purge ;;
  env)
    for s in "${STK_STACKS[@]}"; do
      if stk_running "$s"; then
        up+=("$s")
        echo "export PERFBASE_STACK_${s^^}_URL='$(stk_url "$s")'"
        echo "export PERFBASE_STACK_${s^^}_PID=$(stk_pid "$s")"
      fi
    done
    if [ ${#up[@]} = 0 ]; then
      log "stacks are not running: run scripts/services.sh up stacks"
      return 1
    fi
    if [ ${#up[@]} != ${#STK_STACKS[@]} ]; then log "stacks: not running, so left out: $(for s in "${STK_STACKS[@]}"; do stk_running "$s" || printf '%s ' "$s"; done)"; fi
    echo "export PERFBASE_STACKS='${up[*]}'"
    ;;
  status)
    for s in "${STK_STACKS[@]}"; do
      if stk_running "$s"; then
        hdr=$(curl --noproxy '*' -sS -m 5 -o /dev/null -D - "$(stk_url "$s")/" 2>/dev/null |
          tr -d '\r' | sed -n 's/^[Ss]erver: //p')
        echo "stacks $s: running, pid $(stk_pid "$s"), $(stk_url "$s"), Server: ${hdr:-?}"
      elif grep -q "^$s:\|^$(stk_unit "$s"):" "$STK_DIR/failed" 2>/dev/null; then
        echo "stacks $s: stopped, failed at the last up ($(grep "^$s:\|^$(stk_unit "$s"):" "$STK_DIR/failed" | head -1))"
      elif stk_built "$(stk_unit "$s")"; then
        echo "stacks $s: stopped, built in $STK_BIN/$(stk_unit "$s")"
      else
        echo "stacks $s: stopped, not built"
      fi
    done
    ;;
  esac
}
