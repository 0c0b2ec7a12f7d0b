# shellcheck shell=bash
# scripts/services/redis_cluster.sh, sourced by scripts/services.sh: a three-node Redis
# cluster for the redis driver's cluster mode, run with redis.sh's rds_* helpers.
#
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

# rcl_alive N: node N's redis-server is alive.
rcl_alive() { rds_alive "$RCL_DIR/$1"; }

rcl_state_ok() {
  rds_cli "$(rcl_port "${RCL_NODES[0]}")" "" cluster info 2>/dev/null | tr -d '\r' |
    grep -q '^cluster_state:ok$'
}

rcl_up() {
  local n port bus next=$RCL_FIRST_PORT nextbus=$RCL_FIRST_BUS addrs=() i
  rds_ensure
  if all_running rcl_alive "${RCL_NODES[@]}" && rcl_state_ok; then
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
    if ! all_running rcl_alive "${RCL_NODES[@]}"; then
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
      if rcl_alive "$n"; then
        echo "redis_cluster node $n: running, pid $(rcl_pid "$n"), 127.0.0.1:$(rcl_port "$n")"
      else
        echo "redis_cluster node $n: stopped"
      fi
    done
    ;;
  esac
}
