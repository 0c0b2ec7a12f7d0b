# shellcheck shell=bash
# scripts/services/kubernetes.sh, sourced by scripts/services.sh: a Kubernetes API server and
# its etcd for the tests of `perfbase k8s --apply`, built here from their Go modules, with the
# binaries of the node that kube_node.sh starts beside them (kubelet, kube-controller-manager,
# kube-scheduler), so that the agents' pods really run.
#
# kubernetes: a real Kubernetes API server (kube-apiserver v1.34.3) and its etcd (v3.6.6), for
# the tests of `perfbase k8s PLAN --apply` (a ConfigMap and Jobs applied server-side through the
# kube crate), and one node (scripts/services/kube_node.sh). The garbage collector is on, as in
# any cluster: the controller-manager runs it.
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
# The Kubernetes commands built here: the API server, and the node's kubelet, controller-manager
# (the Job controller, the garbage collector, service-account tokens) and scheduler.
KUBE_COMMANDS=(kube-apiserver kubelet kube-controller-manager kube-scheduler)
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
kube_token() { head -1 "$KUBE_TOKENS" 2>/dev/null | cut -d, -f1; }
# kube_node_token: the kubelet's token (the second line: user system:node:perfbase-node).
kube_node_token() { sed -n 2p "$KUBE_TOKENS" 2>/dev/null | cut -d, -f1; }

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
kube_etcd_built() { kube_built "$KUBE_ETCD_BIN" "etcd Version: ${KUBE_ETCD_VERSION#v}"; }

# go_command_name PACKAGE: the file name `go build -o DIR/` gives PACKAGE's command: its last
# path element, or the one before a major-version suffix (go.etcd.io/etcd/server/v3 → server).
go_command_name() {
  local p=$1 last=${1##*/}
  if [[ $last =~ ^v[0-9]+$ ]]; then p=${p%/*}; fi
  printf '%s\n' "${p##*/}"
}

# kube_go_build NAME DIR GOMOD VERSION PACKAGE...: the PACKAGEs (at VERSION) built in one `go
# build` in a throw-away module DIR whose go.mod is GOMOD, each into .services/kubernetes/bin
# under the name `go build` gives it; the array KUBE_GO_FLAGS holds extra flags for `go build`.
kube_go_build() {
  local name=$1 dir=$2 gomod=$3 ver=$4 go start=$SECONDS p
  shift 4
  go=$(find_go) || die "kubernetes: $name is built from source and needs Go >= 1.24 (https://go.dev/dl, into /usr/local/go)"
  log "building $name $ver with $("$go" env GOVERSION) into $KUBE_DIR/bin (once per machine)"
  rm -rf "$dir"
  mkdir -p "$dir/out" "$KUBE_DIR/bin"
  printf '%s' "$gomod" >"$dir/go.mod"
  (cd "$dir" && GOFLAGS=-mod=mod "$go" get "${@/%/@$ver}") >&2 || die "go get $* at $ver failed (in $dir)"
  # Niced: the build must not starve whatever else the machine runs (the servers are not niced).
  # -buildvcs=false: .services lies in this repository, whose commit is not theirs. One `go
  # build` of several commands compiles the packages they share once.
  (cd "$dir" && GOFLAGS=-mod=mod nice -n 10 "$go" build -buildvcs=false -trimpath \
    "${KUBE_GO_FLAGS[@]}" -o "$dir/out/" "$@") >&2 || die "go build of $name failed (in $dir)"
  for p in "$@"; do
    p=$(go_command_name "$p")
    mv -f "$dir/out/$p" "$KUBE_DIR/bin/$p" || die "go build of $name left no $dir/out/$p"
  done
  rm -rf "$dir"
  log "$name $ver built in $((SECONDS - start)) s"
}

# kube_build: builds the binaries that are missing or of another version: the Kubernetes
# commands together (they share most of their packages), then etcd.
kube_build() {
  local gomod m v pkg c missing=()
  for c in "${KUBE_COMMANDS[@]}"; do
    kube_built "$KUBE_DIR/bin/$c" "Kubernetes $KUBE_VERSION" || missing+=("k8s.io/kubernetes/cmd/$c")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    gomod=$(printf 'module local/kubebuild\n\ngo 1.24.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$KUBE_VERSION")
    for m in "${KUBE_STAGING[@]}"; do
      gomod+=$(printf '\n\tk8s.io/%s => k8s.io/%s %s' "$m" "$m" "$KUBE_STAGING_VERSION")
    done
    gomod+=$'\n)\n'
    # The version variables Kubernetes' release build sets (hack/lib/version.sh); the commit and
    # build date stay unset (the module proxy's sources carry no commit).
    v=${KUBE_VERSION#v}
    local ldflags=()
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags+=("-X $pkg.gitVersion=$KUBE_VERSION" "-X $pkg.gitMajor=${v%%.*}"
        "-X $pkg.gitMinor=$(cut -d. -f2 <<<"$v")")
    done
    KUBE_GO_FLAGS=(-ldflags="${ldflags[*]}")
    kube_go_build "${missing[*]##*/}" "$KUBE_DIR/build-kubernetes" "$gomod" "$KUBE_VERSION" "${missing[@]}"
    for c in "${KUBE_COMMANDS[@]}"; do
      kube_built "$KUBE_DIR/bin/$c" "Kubernetes $KUBE_VERSION" || die "$KUBE_DIR/bin/$c does not report Kubernetes $KUBE_VERSION"
    done
  fi
  if ! kube_etcd_built; then
    KUBE_GO_FLAGS=()
    kube_go_build etcd "$KUBE_DIR/build-etcd" $'module local/etcdbuild\n\ngo 1.24.0\n' \
      "$KUBE_ETCD_VERSION" go.etcd.io/etcd/server/v3
    mv -f "$KUBE_DIR/bin/server" "$KUBE_ETCD_BIN"
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
  local port token node_token logf=$KUBE_DIR/kube-apiserver.log mark
  port=$(pick_port "$KUBE_DIR/port" "$KUBE_FIRST_PORT")
  draw_token token
  draw_token node_token
  # The kubelet's own user is in system:masters too: RBAC alone (no Node authorizer here)
  # grants system:nodes nothing.
  write_private "$KUBE_TOKENS" "$token,perfbase,perfbase,system:masters
$node_token,system:node:$KUBE_NODE_NAME,$KUBE_NODE_NAME,\"system:nodes,system:masters\""
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
    --service-cluster-ip-range=10.96.0.0/16
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
    kube_node_up
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
  kube_node_up
  log "kubernetes up in $((SECONDS - start)) s: kube-apiserver $KUBE_VERSION pid $(kube_apiserver_pid), https://127.0.0.1:$(kube_port), etcd $KUBE_ETCD_VERSION pid $(kube_etcd_pid), node $KUBE_NODE_NAME, kubeconfig $KUBE_CONFIG"
}

# kube_stop NAME PIDFILE COMM LOG: SIGTERM the process of PIDFILE and wait for it to exit.
kube_stop() {
  local name=$1 pid
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
  kube_node_down
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
    if kube_node_running; then
      echo "export PERFBASE_KUBE_NODE=$KUBE_NODE_NAME"
      echo "export PERFBASE_KUBE_CONTAINERD='$KUBE_CTRD_SOCK'"
      echo "export PERFBASE_KUBELET_PID=$(cat "$KUBE_NODE/kubelet.pid")"
    fi
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
