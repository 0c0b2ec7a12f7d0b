# shellcheck shell=bash
# scripts/services/vault_ha.sh, sourced by scripts/services.sh (after vault.sh, whose binaries,
# install functions and vlt_* helpers it uses): five-node clusters of both Vault API servers, for
# the Vault driver's failover tests (svc_vault_ha and svc_openbao_ha, the vha_* helpers).
#
# vault_ha and openbao_ha: five nodes each of the binary that the vault service builds
# (.services/vault/bin/vault) or the openbao service installs (.services/openbao/venv), not in
# dev mode: integrated storage (raft) in .services/NAME/nodeN/data, which survives `down`, and
# Shamir's seal with 5 key shares, threshold 3. Each node has its own config, written by every
# `up` to .services/NAME/nodeN/server.hcl: listener on 127.0.0.1:PORT without TLS, api_addr
# http://127.0.0.1:PORT, cluster listener and cluster_addr on 127.0.0.1:PORT+1 (the nodes'
# request forwarding and raft traffic; TLS with the cluster's own certificates), node_id nodeN,
# a retry_join block for each other node's API address, no UI (and Vault's disable_mlock).
# Ports from 18300 (vault_ha) or 19300 (openbao_ha) upward, two consecutive free ones per node,
# kept in .services/NAME/nodeN/port: once the cluster exists, raft's membership holds these
# addresses, so a node whose ports another process took is not moved but refused (free them,
# or purge).
#
# First `up`: node1 starts alone, `operator init -key-shares=5 -key-threshold=3` (its output
# is parsed in memory: only the keys go to .services/NAME/unseal_keys, one a line, and the root
# token to .services/NAME/token, both mode 600; neither is ever logged), node1 is unsealed with
# keys 1-3 and becomes active, nodes 2-5 start and join it by retry_join, and each is unsealed
# (a joining node reports itself initialized once it holds the leader's challenge, takes the
# keys, and unseals itself once the barrier has come over by raft). `up` waits (up to 120 s) for one node answering 200 on /v1/sys/health, four answering 429
# with "standby":true, five voters in `operator raft list-peers` and autopilot reporting the
# cluster healthy (a joining node stays a non-voter until it has been healthy for autopilot's
# server_stabilization_time, 10 s by default: most of the first `up`'s time). It then enables,
# where missing (they persist in raft), transit/ and KV v2 at secret/, and checks a transit
# round trip (key `check`) through the active node with the CLI and through a standby with
# curl: standbys forward requests to the active node over the cluster port in Vault's
# open-source edition and in OpenBao, so the standby answers 200 itself (no redirect; OpenBao's
# standbys also serve some reads themselves). Later `up`s start the nodes that are not running
# (after `down`, or the node `kill-active` killed), unseal them with the stored keys and wait as
# above; with five nodes running and unsealed, `up` only reports.
# `down` sends SIGTERM to all five at once, then waits for each; `down --purge` deletes
# .services/NAME (the binaries live in the vault and openbao services' directories).
#
# `scripts/services.sh kill-active NAME` asks each node's /v1/sys/health which is active,
# takes the time (`date +%s.%3N`), sends that node's server SIGKILL and prints, and appends to
# .services/NAME/failover.log, `killed nodeN pid PID http://127.0.0.1:PORT at UNIXTIME`. It
# does not restart the node: the next `up` does. The four left elect a new leader within
# seconds thanks to performance_multiplier = 1 (see vha_config).
#
# Node logs: .services/NAME/nodeN/NAME.log (mode 600), the server's own lines at log_level
# info, timestamped in UTC with milliseconds (the servers run with TZ=UTC), e.g.
# `2025-11-30T11:20:01.234Z [INFO]  core: post-unseal setup complete`. The node that takes
# over logs, in this order:
#   storage.raft: entering leader state: leader="Node at 127.0.0.1:PORT+1 [Leader]"
#   core: acquired lock, enabling active operation
#   core: post-unseal setup starting
#   core: post-unseal setup complete        <- it serves as the active node from here on
# On OpenBao every standby logs `post-unseal setup complete` as well when it is unsealed
# (after `entering read-enabled standby mode`; Vault's standbys log `entering standby mode`
# only), and the new active node a `pre-seal teardown` between the lock and its setup: the
# new leader's mark is the first `post-unseal setup complete` after `acquired lock, enabling
# active operation` in the same log.
#
# Measured on a 2-core machine (binaries already there), one service at a time:
#   first `up`, from nothing: 25 s for either (17 s of it after the last unseal, waiting for
#     the voters: autopilot promotes a joiner after 10 s of stabilization)
#   `up` after `down`: 8-9 s vault_ha, 7-10 s openbao_ha (6 s of it after the last unseal,
#     waiting for a leader and autopilot); after kill-active, restarting the one node: 6-7 s
#   `down`: 2-4 s
#   idle, the ten nodes: RSS (ps -o rss) 115-126 MB a Vault node, 591 MB the five; 123-130 MB
#     an OpenBao node, 629 MB the five; 1.22 GB in all, and 14 % of one core in all
#   kill-active to the new active node's `post-unseal setup complete`: Vault 2.5-2.9 s, OpenBao
#     1.7-2.6 s (four kills each; the first follower notices the dead leader after 1.0-1.4 s)
# As root the nodes run as the system user of their server (vault, openbao); HOME is
# .services/NAME/home for the servers and the CLI. No secret is on a command line: the CLI gets
# the root token from VAULT_TOKEN / BAO_TOKEN, curl from a config on its stdin, and the unseal
# keys go to /v1/sys/unseal on curl's stdin.

VHA_NODES=(1 2 3 4 5)
VHA_SHARES=5
VHA_THRESHOLD=3
VAULT_HA_DIR="$BASE/vault_ha"
VAULT_HA_FIRST_PORT=18300
BAO_HA_DIR="$BASE/openbao_ha"
BAO_HA_FIRST_PORT=19300

# vha_conf NAME: vlt_conf of NAME's server (V_BIN, V_USER, V_COMM, V_ENV, V_LABEL) and NAME's
# own H_NAME, H_DIR, H_FIRST (first port), H_EXPORT (of our exports), H_READY and H_INSTALL
# (vault.sh's check and install of the binary).
vha_conf() {
  case $1 in
  vault_ha)
    vlt_conf vault
    H_DIR=$VAULT_HA_DIR H_FIRST=$VAULT_HA_FIRST_PORT H_EXPORT=VAULT_HA
    H_READY=vault_built H_INSTALL=vault_build
    ;;
  openbao_ha)
    vlt_conf openbao
    H_DIR=$BAO_HA_DIR H_FIRST=$BAO_HA_FIRST_PORT H_EXPORT=OPENBAO_HA
    H_READY=bao_installed H_INSTALL=bao_install
    ;;
  *) die "vha_conf: unknown service $1" ;;
  esac
  H_NAME=$1
}

vha_ndir() { echo "$H_DIR/node$1"; }
vha_port() { cat "$H_DIR/node$1/port" 2>/dev/null; }
vha_pid() { cat "$H_DIR/node$1/server.pid" 2>/dev/null; }
vha_log() { echo "$H_DIR/node$1/$H_NAME.log"; }
vha_url() { echo "http://127.0.0.1:$(vha_port "$1")"; }
vha_token() { cat "$H_DIR/token" 2>/dev/null; }

# vha_initialized: `operator init` ran and its keys were saved (the token right after them).
vha_initialized() { [ -s "$H_DIR/unseal_keys" ]; }

# vha_alive N: node N's server of our pid file is alive (not a recycled pid, not a zombie).
vha_alive() {
  local pid
  pid=$(vha_pid "$1") || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$V_COMM" ] || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# vha_get N PATH: GET /v1/PATH of node N without a token: the body, then the status code on a
# line of its own (000 when nothing answers).
vha_get() {
  curl --noproxy '*' -s -m 5 -w '\n%{http_code}' "$(vha_url "$1")/v1/$2" || true
}

# vha_state N: node N as /v1/sys/health sees it: active (200), standby (429 and "standby":true;
# 473, a performance standby, is Enterprise's only), sealed (503), uninitialized (501),
# silent (alive but no answer within 5 s), down (not running).
vha_state() {
  local out code
  vha_alive "$1" || {
    echo down
    return 0
  }
  out=$(vha_get "$1" sys/health)
  code=${out##*$'\n'}
  case $code in
  200) echo active ;;
  429) if [[ $out == *'"standby":true'* ]]; then echo standby; else echo "http-$code"; fi ;;
  503) echo sealed ;;
  501) echo uninitialized ;;
  000) echo silent ;;
  *) echo "http-$code" ;;
  esac
}

# vha_is N STATE: node N is in STATE.
vha_is() { [ "$(vha_state "$1")" = "$2" ]; }

# vha_active: the number of the node that answers 200 on /v1/sys/health, if one does.
vha_active() {
  local n
  for n in "${VHA_NODES[@]}"; do
    if vha_is "$n" active; then
      echo "$n"
      return 0
    fi
  done
  return 1
}

# vha_cli N ARGS...: the server's own CLI against node N, with the root token.
vha_cli() {
  local n=$1
  shift
  env HOME="$H_DIR/home" "${V_ENV}_ADDR=$(vha_url "$n")" "${V_ENV}_TOKEN=$(vha_token)" "$V_BIN" "$@"
}

# vha_api N METHOD PATH [JSON]: the HTTP API of node N with the root token, which curl reads
# from a config on stdin (not its command line): the body, then the status code on its own line.
vha_api() {
  local n=$1 method=$2 path=$3
  local args=(--noproxy '*' -s -m 10 -K - -X "$method" -w '\n%{http_code}')
  if [ $# -gt 3 ]; then args+=(-H 'Content-Type: application/json' --data-binary "$4"); fi
  printf 'header = "X-Vault-Token: %s"\n' "$(vha_token)" | curl "${args[@]}" "$(vha_url "$n")/v1/$path" || true
}

# vha_config N: node N's server.hcl, for the ports in the nodes' port files.
vha_config() {
  local n=$1 m port dir
  port=$(vha_port "$n")
  dir=$(vha_ndir "$n")
  {
    echo "# Written by scripts/services/vault_ha.sh at every up; edits are overwritten."
    echo 'ui            = false'
    if [ "$H_NAME" = vault_ha ]; then
      # An unprivileged user has no CAP_IPC_LOCK. (OpenBao 2 dropped mlock and warns on the field.)
      echo 'disable_mlock = true'
    fi
    echo 'log_level     = "info"'
    echo "api_addr      = \"http://127.0.0.1:$port\""
    echo "cluster_addr  = \"https://127.0.0.1:$((port + 1))\""
    echo
    echo 'listener "tcp" {'
    echo "  address         = \"127.0.0.1:$port\""
    echo "  cluster_address = \"127.0.0.1:$((port + 1))\""
    echo '  tls_disable     = true'
    echo '}'
    echo
    echo 'storage "raft" {'
    echo "  path    = \"$dir/data\""
    echo "  node_id = \"node$n\""
    echo '  # HashiCorp recommends 1 for production (the best performance): raft'"'"'s timeouts are'
    echo '  # multiplied by it, and the default, 5, makes a leader election five times slower.'
    echo '  performance_multiplier = 1'
    for m in "${VHA_NODES[@]}"; do
      [ "$m" != "$n" ] || continue
      echo "  retry_join {"
      echo "    leader_api_addr = \"$(vha_url "$m")\""
      echo "  }"
    done
    echo '}'
  } >"$dir/server.hcl.new"
  mv -f "$dir/server.hcl.new" "$dir/server.hcl"
}

# vha_ports: every node's port. Before init, picked (two free in a row, from the last node's
# upward, the port files' again where free); after it, a stopped node's must still be free:
# raft's membership holds it.
vha_ports() {
  local n port next=$H_FIRST
  for n in "${VHA_NODES[@]}"; do
    mkdir -p "$(vha_ndir "$n")"
    if ! vha_initialized; then
      port=$(vlt_pick_port "$(vha_ndir "$n")/port" "$next")
    else
      port=$(vha_port "$n")
      [[ "$port" =~ ^[0-9]+$ ]] || die "$H_NAME: node$n has no port file; down --purge $H_NAME and up again"
      if ! vha_alive "$n" && { ! port_free "$port" || ! port_free $((port + 1)); }; then
        die "$H_NAME: node$n's port $port or $((port + 1)) is taken by another process (ss -ltnp); the cluster's raft membership holds node$n's address, so free the port or \`down --purge $H_NAME\`"
      fi
    fi
    next=$((port + 2))
  done
}

# vha_start N: starts node N's server, detached, and waits until its API answers.
vha_start() {
  local n=$1 dir log pid mark run=()
  dir=$(vha_ndir "$n")
  log=$(vha_log "$n")
  mkdir -p "$dir/data"
  if is_root; then chown "$V_USER:" "$dir/data"; fi
  chmod 700 "$dir/data"
  touch "$log"
  chmod 600 "$log"
  rm -f "$dir/server.pid"
  mark=$(stat -c %s "$log")
  log "starting $H_NAME node$n ($V_LABEL) on $(vha_url "$n") (log $log)"
  # As vault.sh's vlt_up: own session, no lock fd, setsid and setpriv exec (so $! is the
  # server). TZ=UTC: log timestamps that compare with kill-active's unix time at a glance.
  if is_root; then run=(setpriv --reuid="$V_USER" --regid="$V_USER" --init-groups); fi
  (cd / && export HOME="$H_DIR/home" TZ=UTC &&
    exec setsid "${run[@]}" "$V_BIN" server -config="$dir/server.hcl" </dev/null >>"$log" 2>&1) 9>&- &
  pid=$!
  echo "$pid" >"$dir/server.pid"
  wait_ready "$H_NAME node$n" "$pid" "$log" "$mark" 120 "answer on /v1/sys/seal-status" vha_answers "$n"
}

vha_answers() { [ "$(vha_get "$1" sys/seal-status | tail -n 1)" = 200 ]; }

# vha_init: `operator init` on node1; its output is parsed here and only the keys and the token
# are kept, in files of mode 600.
vha_init() {
  local out keys token
  log "$H_NAME: operator init on node1 ($VHA_SHARES key shares, threshold $VHA_THRESHOLD)"
  out=$(vha_cli 1 operator init -key-shares=$VHA_SHARES -key-threshold=$VHA_THRESHOLD 2>&1) ||
    die "$H_NAME: operator init failed: $(grep -v -i -e 'unseal key' -e 'root token' <<<"$out" | head -5)"
  keys=$(sed -n 's/^Unseal Key [0-9]*: //p' <<<"$out")
  token=$(sed -n 's/^Initial Root Token: //p' <<<"$out")
  if [ "$(grep -c . <<<"$keys")" != $VHA_SHARES ] || [ -z "$token" ]; then
    die "$H_NAME: cannot read $VHA_SHARES unseal keys and a root token from operator init's output"
  fi
  write_private "$H_DIR/unseal_keys" "$keys"
  write_private "$H_DIR/token" "$token"
}

# vha_unseal N: node N unsealed with the first THRESHOLD keys, sent to /v1/sys/unseal on curl's
# stdin. A node that joins is uninitialized until it holds the leader's challenge: waited for.
# An unsealed node is passed over.
vha_unseal() {
  local n=$1 key out i=0 state
  for ((i = 0; i < 240; i++)); do
    state=$(vha_state "$n")
    case $state in
    sealed) break ;;
    active | standby) return 0 ;;
    esac
    vha_alive "$n" || vha_died "$n"
    sleep 0.25
  done
  [ "$state" = sealed ] || die "$H_NAME node$n: $state after 60 s, not sealed and initialized (joined); see $(vha_log "$n")"
  log "$H_NAME: unsealing node$n"
  i=0
  while read -r key && [ $i -lt $VHA_THRESHOLD ]; do
    out=$(printf '{"key":"%s"}' "$key" | curl --noproxy '*' -s -m 30 -X PUT --data-binary @- -w '\n%{http_code}' \
      "$(vha_url "$n")/v1/sys/unseal") || true
    [ "${out##*$'\n'}" = 200 ] || die "$H_NAME node$n: unseal answered ${out##*$'\n'}: $(head -n 1 <<<"$out" | cut -c1-300)"
    i=$((i + 1))
  done <"$H_DIR/unseal_keys"
  # A joining node still answers "sealed":true here: the keys answered the leader's challenge,
  # and it unseals itself once the barrier has come over by raft (about 1 s later; waited for
  # with the others). A wrong key would have failed above.
}

# vha_died N: dies with the tail of node N's log.
vha_died() {
  tail -n 20 "$(vha_log "$1")" >&2
  die "$H_NAME node$1 exited; see $(vha_log "$1")"
}

# vha_voters: the number of voters in `operator raft list-peers` (asked of the active node).
vha_voters() {
  local n out
  n=$(vha_active) || return 1
  out=$(vha_cli "$n" operator raft list-peers 2>/dev/null) || return 1
  awk '$4 == "true"' <<<"$out" | wc -l
}

# vha_autopilot_healthy: autopilot (asked of the active node) reports the cluster healthy: every
# server in contact with the leader and caught up with its log.
vha_autopilot_healthy() {
  local n out
  n=$(vha_active) || return 1
  out=$(vha_cli "$n" operator raft autopilot state 2>/dev/null) || return 1
  grep -q '^Healthy:[[:space:]]*true' <<<"$out"
}

# vha_settled: all five nodes up, one active, four standbys.
vha_settled() {
  local n s active=0
  for n in "${VHA_NODES[@]}"; do
    s=$(vha_state "$n")
    case $s in
    active) active=$((active + 1)) ;;
    standby) ;;
    *) return 1 ;;
    esac
  done
  [ $active = 1 ]
}

# vha_wait_settled: waits (120 s) until vha_settled, 5 voters and autopilot healthy.
vha_wait_settled() {
  local i n
  for ((i = 0; i < 480; i++)); do
    for n in "${VHA_NODES[@]}"; do vha_alive "$n" || vha_died "$n"; done
    if vha_settled && [ "$(vha_voters)" = ${#VHA_NODES[@]} ] && vha_autopilot_healthy; then return 0; fi
    sleep 0.25
  done
  for n in "${VHA_NODES[@]}"; do log "$H_NAME node$n: $(vha_state "$n")"; done
  die "$H_NAME: not one active node, four standbys, ${#VHA_NODES[@]} voters and autopilot healthy within 120 s; see $H_DIR/node*/$H_NAME.log"
}

# vha_setup: transit/ and KV v2 at secret/ where missing (they persist in raft).
vha_setup() {
  local a mounts
  a=$(vha_active) || die "$H_NAME: no active node"
  mounts=$(vha_cli "$a" secrets list) || die "$H_NAME: secrets list failed"
  if ! grep -q '^transit/ ' <<<"$mounts"; then vha_enable "$a" transit; fi
  if ! grep -q '^secret/ ' <<<"$mounts"; then vha_enable "$a" -path=secret -version=2 kv; fi
}

# vha_enable N ARGS...: `secrets enable ARGS` on node N, its output shown only when it fails.
vha_enable() {
  local n=$1 out
  shift
  log "$H_NAME: secrets enable $*"
  if ! out=$(vha_cli "$n" secrets enable "$@" 2>&1); then
    printf '%s\n' "$out" >&2
    die "$H_NAME: secrets enable $* failed; see $(vha_log "$n")"
  fi
}

# vha_check: KV v2 at secret/, then a transit round trip (key `check`) through the active node
# with the CLI and one through the first standby with the HTTP API, which must answer 200
# itself (forwarded to the active node, not redirected), and its ciphertext decrypted by the
# active node.
vha_check() {
  local a s n out
  a=$(vha_active) || die "$H_NAME: no active node"
  for n in "${VHA_NODES[@]}"; do
    if vha_is "$n" standby; then
      s=$n
      break
    fi
  done
  [ -n "${s:-}" ] || die "$H_NAME: no standby node"
  vlt_kv_transit_check "$H_NAME, through the active node$a" vha_cli "$a"
  out=$(vha_api "$s" POST transit/encrypt/check '{"plaintext":"cGVyZmJhc2U="}')
  [ "${out##*$'\n'}" = 200 ] ||
    die "$H_NAME: transit encrypt through the standby node$s answered ${out##*$'\n'}, not 200 (forwarded to the active node): $(head -n 1 <<<"$out" | cut -c1-300)"
  ct=$(head -n 1 <<<"$out" | sed -n 's/.*"ciphertext":"\([^"]*\)".*/\1/p')
  [ -n "$ct" ] || die "$H_NAME: transit encrypt through the standby node$s returned no ciphertext"
  pt=$(vha_cli "$a" write -field=plaintext transit/decrypt/check ciphertext="$ct") ||
    die "$H_NAME: the active node$a cannot decrypt the standby node$s's ciphertext"
  [ "$pt" = cGVyZmJhc2U= ] || die "$H_NAME: node$s's ciphertext decrypted to '$pt', not cGVyZmJhc2U="
  log "$H_NAME: transit round trips through the active node$a and the standby node$s (HTTP 200, forwarded)"
}

# vha_wipe: what a first `up` that failed before its keys were saved left (data that no key
# can unseal) removed, its nodes stopped first.
vha_wipe() {
  local n
  for n in "${VHA_NODES[@]}"; do
    if vha_alive "$n"; then stop_pid "$H_NAME node$n" "$(vha_pid "$n")" "$(vha_log "$n")"; fi
    if [ -d "$(vha_ndir "$n")/data" ]; then
      log "$H_NAME: removing node$n's data (no unseal keys saved for it)"
      rm -rf "$(vha_ndir "$n")/data"
    fi
  done
}

vha_up() {
  local n i start=$SECONDS
  vha_conf "$1"
  command -v curl >/dev/null 2>&1 || ensure_pkg curl
  if is_root; then ensure_user "$V_USER"; fi
  if ! "$H_READY"; then
    "$H_INSTALL"
    vha_conf "$1"
  fi
  if [ -z "$V_BIN" ] || [ ! -x "$V_BIN" ]; then die "$H_NAME: no binary to run"; fi
  if vha_initialized && vha_settled; then
    log "$H_NAME already running: $(vha_summary)"
    return 0
  fi
  if vha_initialized && [ ! -s "$H_DIR/token" ]; then
    die "$H_NAME: $H_DIR/unseal_keys is there but not the root token ($H_DIR/token): put it back, or \`down --purge $H_NAME\` for a new cluster"
  fi
  mkdir -p "$H_DIR/home"
  if is_root; then chown "$V_USER:" "$H_DIR/home"; fi
  if ! vha_initialized; then
    vha_wipe
    vha_ports
    for n in "${VHA_NODES[@]}"; do vha_config "$n"; done
    vha_start 1
    vha_init
    vha_unseal 1
    for ((i = 0; i < 240; i++)); do
      if vha_is 1 active; then break; fi
      vha_alive 1 || vha_died 1
      sleep 0.25
    done
    vha_is 1 active || die "$H_NAME node1 did not become active within 60 s; see $(vha_log 1)"
  fi
  vha_ports
  for n in "${VHA_NODES[@]}"; do
    vha_config "$n"
    if ! vha_alive "$n"; then vha_start "$n"; fi
  done
  for n in "${VHA_NODES[@]}"; do vha_unseal "$n"; done
  vha_wait_settled
  vha_setup
  vha_check
  log "$H_NAME up in $((SECONDS - start)) s: $(vha_summary)"
}

# vha_summary: how many nodes run, which is active, which are standbys (and what the others are).
vha_summary() {
  local n s running=0 active="" standbys=() other=()
  for n in "${VHA_NODES[@]}"; do
    s=$(vha_state "$n")
    [ "$s" = down ] || running=$((running + 1))
    case $s in
    active) active=$n ;;
    standby) standbys+=("node$n") ;;
    *) other+=("node$n $s") ;;
    esac
  done
  printf '%s of %s nodes running' "$running" ${#VHA_NODES[@]}
  if [ -n "$active" ]; then
    printf ', active node%s (pid %s, %s)' "$active" "$(vha_pid "$active")" "$(vha_url "$active")"
  else
    printf ', no active node'
  fi
  if [ ${#standbys[@]} -gt 0 ]; then printf ', standbys %s' "${standbys[*]}"; fi
  for s in "${other[@]}"; do printf ', %s' "$s"; done
  echo
}

# vha_down: SIGTERM to every running node at once (one by one, each stop of the active node
# would make the others elect another), then waits for each.
vha_down() {
  local n pids=()
  for n in "${VHA_NODES[@]}"; do
    if vha_alive "$n"; then
      pids+=("$n")
      log "stopping $H_NAME node$n (pid $(vha_pid "$n"))"
      kill -TERM "$(vha_pid "$n")" 2>/dev/null || true
    fi
  done
  if [ ${#pids[@]} = 0 ]; then
    log "$H_NAME not running"
    return 0
  fi
  for n in "${pids[@]}"; do wait_gone "$H_NAME node$n" "$(vha_pid "$n")" "$(vha_log "$n")"; done
}

# vha_kill_active: SIGKILL to the active node's server, for failover tests; the line on stdout
# and in failover.log, the time taken just before the kill.
vha_kill_active() {
  local n pid t line i
  n=$(vha_active) || die "$H_NAME: no active node to kill ($(vha_summary))"
  pid=$(vha_pid "$n")
  t=$(date +%s.%3N)
  kill -KILL "$pid" || die "$H_NAME: kill -KILL $pid (node$n) failed"
  line="killed node$n pid $pid $(vha_url "$n") at $t"
  echo "$line" >>"$H_DIR/failover.log"
  echo "$line"
  for ((i = 0; i < 40; i++)); do
    vha_alive "$n" || return 0
    sleep 0.25
  done
  die "$H_NAME node$n (pid $pid) still alive 10 s after SIGKILL"
}

vha_svc() {
  local name=$1 n urls=() pids=() stopped=() s
  vha_conf "$name"
  case $2 in
  up) vha_up "$name" ;;
  down) vha_down ;;
  kill-active) vha_kill_active ;;
  purge)
    log "removing $H_DIR (the $V_LABEL binary is the ${name%_ha} service's)"
    rm -rf "$H_DIR"
    ;;
  env)
    if ! any_running vha_alive "${VHA_NODES[@]}"; then
      log "$name is not running: run scripts/services.sh up $name"
      return 1
    fi
    s=""
    for n in "${VHA_NODES[@]}"; do
      urls+=("$(vha_url "$n")")
      if vha_alive "$n"; then pids+=("$(vha_pid "$n")"); else stopped+=("node$n"); fi
      if [ -z "$s" ] && vha_is "$n" standby; then s=$n; fi
    done
    n=$(vha_active) || {
      log "$name has no active node ($(vha_summary)): run scripts/services.sh up $name"
      return 1
    }
    if [ ${#stopped[@]} -gt 0 ]; then
      log "$name: ${stopped[*]} not running (PERFBASE_${H_EXPORT}_PIDS lists the running nodes); scripts/services.sh up $name restarts them"
    fi
    echo "export PERFBASE_${H_EXPORT}_URLS='$(IFS=,; echo "${urls[*]}")'"
    echo "export PERFBASE_${H_EXPORT}_ACTIVE_URL='$(vha_url "$n")'"
    if [ -n "$s" ]; then echo "export PERFBASE_${H_EXPORT}_STANDBY_URL='$(vha_url "$s")'"; fi
    echo "export PERFBASE_${H_EXPORT}_TOKEN='$(vha_token)'"
    echo "export PERFBASE_${H_EXPORT}_PIDS='${pids[*]}'"
    echo "export PERFBASE_${H_EXPORT}_ACTIVE_PID=$(vha_pid "$n")"
    echo "export PERFBASE_${H_EXPORT}_DIR='$H_DIR'"
    ;;
  status)
    if any_running vha_alive "${VHA_NODES[@]}"; then
      echo "$name: $(vha_summary)"
    elif vha_initialized; then
      echo "$name: stopped, data kept in $H_DIR ($V_LABEL, ${#VHA_NODES[@]} nodes, raft)"
    else
      echo "$name: stopped, no cluster yet"
    fi
    ;;
  esac
}

svc_vault_ha() { vha_svc vault_ha "$1"; }
svc_openbao_ha() { vha_svc openbao_ha "$1"; }
