# shellcheck shell=bash
# scripts/services/kube_node.sh, sourced by scripts/services.sh after kubernetes.sh: one real
# Kubernetes node beside the API server, so that the pods of `perfbase k8s --apply` run. All of
# it lives in .services/kubernetes/node and runs as root (a node mounts, makes bridges and
# starts containers):
#   containerd:   Debian's containerd 1.6 with its own config, root, state and socket (not the
#                 system's /run/containerd), the runtime runc (io.containerd.runc.v2; crun
#                 refuses this kind of machine's hybrid cgroups), and restrict_oom_score_adj:
#                 without CAP_SYS_RESOURCE the pause container's oom_score_adj of -998 is
#                 refused, which runc reports only as "can't get final child's PID from pipe".
#   pause image:  registry.k8s.io/pause:3.6, the sandbox containerd asks for, cannot be pulled
#                 here: an image of that name holding Debian's busybox-static running `sleep`
#                 is written as an OCI archive (scripts/services/oci.sh) and imported.
#   CNI:          a bridge (pbcni0) + host-local + loopback conflist with Debian's
#                 containernetworking-plugins: the node is not Ready without one. The pods of
#                 the tests use the host's network (perfbase k8s --host-network).
#   kubelet:      cgroupfs driver without QoS cgroups or node-allocatable enforcement (the
#                 sandbox's cgroups are shared), swap allowed, its API on 127.0.0.1 only (x509
#                 clients of our CA), node name perfbase-node; it registers with a token of its
#                 own from the API server's token file. No eviction for disk ("0%" turns a
#                 signal off): the node shares the machine's disk, and a disk 99 % full after a
#                 fresh build would otherwise refuse every pod with only a taint to say why. Not --node-ip 127.0.0.1 ("nodeIP can't
#                 be loopback address"): it takes the host's address.
#   kube-controller-manager: the Job controller, the garbage collector (so the API server's
#                 is on too), the TTL-after-finished controller and service accounts, signing
#                 with the service-account key; --leader-elect=false.
#   kube-scheduler: --leader-elect=false.
# `down` stops the kubelet, kills and deletes every container and sandbox it left in our
# containerd, stops the controllers and containerd, unmounts whatever is still mounted under
# .services/kubernetes/node and deletes the bridge; `up` then starts clean. Logs in
# .services/kubernetes/node/*.log.

KUBE_NODE="$KUBE_DIR/node"
KUBE_NODE_NAME=perfbase-node
KUBE_CTRD="$KUBE_NODE/containerd"
KUBE_CTRD_SOCK="$KUBE_CTRD/containerd.sock"
KUBE_PAUSE_IMAGE=registry.k8s.io/pause:3.6
KUBE_BRIDGE=pbcni0
KUBE_POD_CIDR=10.244.0.0/24
KUBE_FIRST_KUBELET_PORT=10250
KUBE_NODE_PROCS=(containerd kubelet kube-controller-manager kube-scheduler)

# kube_node_alive PROC: the node's process PROC (one of KUBE_NODE_PROCS) is alive (comm keeps
# 15 characters of its name).
kube_node_alive() { kube_alive "$KUBE_NODE/$1.pid" "${1:0:15}"; }
kube_node_running() { all_running kube_node_alive "${KUBE_NODE_PROCS[@]}"; }

# kube_node_start NAME BIN ARGS...: BIN detached as root (own session, no lock fd), its pid in
# node/NAME.pid and its output in node/NAME.log (mode 600).
kube_node_start() {
  local name=$1 logf=$KUBE_NODE/$1.log
  shift
  touch "$logf"
  chmod 600 "$logf"
  (cd / && exec setsid "$@" </dev/null >>"$logf" 2>&1) 9>&- &
  echo $! >"$KUBE_NODE/$name.pid"
}

kube_ctr() { ctr --address "$KUBE_CTRD_SOCK" --namespace k8s.io "$@"; }
kube_ctrd_answers() { kube_ctr version >/dev/null; }

kube_containerd_up() {
  local mark
  mkdir -p "$KUBE_CTRD/root" "$KUBE_CTRD/state" "$KUBE_NODE/cni"
  cat >"$KUBE_CTRD/config.toml" <<EOF_CONTAINERD
# Written by scripts/services.sh: the node's own containerd, beside any other on the machine.
version = 2
root = "$KUBE_CTRD/root"
state = "$KUBE_CTRD/state"
[grpc]
  address = "$KUBE_CTRD_SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$KUBE_CTRD/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$KUBE_PAUSE_IMAGE"
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$KUBE_NODE/cni"
EOF_CONTAINERD
  cat >"$KUBE_NODE/cni/10-perfbase.conflist" <<EOF_CNI
{"cniVersion": "0.4.0", "name": "perfbase", "plugins": [
  {"type": "bridge", "bridge": "$KUBE_BRIDGE", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$KUBE_POD_CIDR"}]],
            "dataDir": "$KUBE_NODE/cni-ipam", "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "loopback"}]}
EOF_CNI
  mark=$(stat -c %s "$KUBE_NODE/containerd.log" 2>/dev/null || echo 0)
  log "starting containerd $(containerd --version | awk '{print $3}') (socket $KUBE_CTRD_SOCK)"
  kube_node_start containerd containerd --config "$KUBE_CTRD/config.toml"
  wait_ready containerd "$(cat "$KUBE_NODE/containerd.pid")" "$KUBE_NODE/containerd.log" "$mark" 120 \
    "answer on its socket" kube_ctrd_answers
}

# kube_pause_image: the sandbox image, written and imported once per containerd root.
kube_pause_image() {
  local rootfs=$KUBE_NODE/pause-rootfs
  if kube_ctr images check "name==$KUBE_PAUSE_IMAGE" 2>/dev/null | grep -q complete; then return 0; fi
  rm -rf "$rootfs"
  mkdir -p "$rootfs/bin"
  cp /bin/busybox "$rootfs/bin/busybox"
  ln -s busybox "$rootfs/bin/sleep"
  oci_archive "$KUBE_NODE/pause.tar" "$KUBE_PAUSE_IMAGE" "$rootfs" '["/bin/sleep","2147483647"]' "" / ||
    die "kubernetes: cannot write the pause image"
  kube_ctr images import "$KUBE_NODE/pause.tar" >&2 || die "kubernetes: ctr could not import $KUBE_NODE/pause.tar"
  rm -rf "$rootfs" "$KUBE_NODE/pause.tar"
}

# kube_node_kubeconfig FILE TOKEN: a kubeconfig for the node's components (mode 600).
kube_node_kubeconfig() {
  (
    umask 077
    printf '%s\n' "apiVersion: v1" "kind: Config" "clusters:" "  - name: perfbase" "    cluster:" \
      "      server: https://127.0.0.1:$(kube_port)" \
      "      certificate-authority-data: $(base64 -w0 "$KUBE_PKI/ca.crt")" \
      "users:" "  - name: node" "    user:" "      token: $2" "contexts:" "  - name: node" \
      "    context: {cluster: perfbase, user: node}" "current-context: node" >"$1"
  )
}

kube_kubelet_up() {
  local port health mark dir=$KUBE_NODE/kubelet
  port=$(pick_port "$KUBE_NODE/kubelet_port" "$KUBE_FIRST_KUBELET_PORT")
  health=$(pick_port "$KUBE_NODE/kubelet_healthz_port" $((port + 1000)))
  mkdir -p "$dir" "$KUBE_NODE/pod-logs"
  kube_node_kubeconfig "$KUBE_NODE/kubelet.kubeconfig" "$(kube_node_token)"
  cat >"$KUBE_NODE/kubelet.yaml" <<EOF_KUBELET
# Written by scripts/services.sh.
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $health
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: "$KUBE_PKI/ca.crt"}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: "unix://$KUBE_CTRD_SOCK"
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
failCgroupV1: false
podLogsDir: "$KUBE_NODE/pod-logs"
evictionHard: {memory.available: "100Mi", nodefs.available: "0%", imagefs.available: "0%", nodefs.inodesFree: "0%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
resolvConf: /etc/resolv.conf
EOF_KUBELET
  mark=$(stat -c %s "$KUBE_NODE/kubelet.log" 2>/dev/null || echo 0)
  log "starting kubelet $KUBE_VERSION as node $KUBE_NODE_NAME (port $port, log $KUBE_NODE/kubelet.log)"
  kube_node_start kubelet "$KUBE_DIR/bin/kubelet" --config "$KUBE_NODE/kubelet.yaml" \
    --kubeconfig "$KUBE_NODE/kubelet.kubeconfig" --root-dir "$dir" \
    --cert-dir "$dir/pki" --hostname-override "$KUBE_NODE_NAME"
  wait_ready kubelet "$(cat "$KUBE_NODE/kubelet.pid")" "$KUBE_NODE/kubelet.log" "$mark" 240 \
    "answer ok on /healthz" kube_kubelet_healthz "$health"
}

kube_kubelet_healthz() { [ "$(curl --noproxy '*' -s -m 5 "http://127.0.0.1:$1/healthz")" = ok ]; }

kube_controllers_up() {
  local cfg=$KUBE_NODE/controllers.kubeconfig
  kube_node_kubeconfig "$cfg" "$(kube_token)"
  log "starting kube-controller-manager and kube-scheduler $KUBE_VERSION"
  kube_node_start kube-controller-manager "$KUBE_DIR/bin/kube-controller-manager" \
    --kubeconfig "$cfg" --authentication-kubeconfig "$cfg" --authorization-kubeconfig "$cfg" \
    --bind-address 127.0.0.1 --secure-port 0 --leader-elect=false \
    --service-account-private-key-file "$KUBE_PKI/sa.key" --root-ca-file "$KUBE_PKI/ca.crt" \
    --use-service-account-credentials=false --cluster-cidr "$KUBE_POD_CIDR" \
    --service-cluster-ip-range 10.96.0.0/16 --concurrent-job-syncs 5
  kube_node_start kube-scheduler "$KUBE_DIR/bin/kube-scheduler" \
    --kubeconfig "$cfg" --authentication-kubeconfig "$cfg" --authorization-kubeconfig "$cfg" \
    --bind-address 127.0.0.1 --secure-port 0 --leader-elect=false
}

# kube_node_ready: the API server says node perfbase-node is Ready.
kube_node_ready() {
  local out
  out=$(kube_curl "https://127.0.0.1:$(kube_port)/api/v1/nodes/$KUBE_NODE_NAME") || return 1
  tr -d ' \n' <<<"$out" | grep -q '"type":"Ready","status":"True"'
}

kube_node_up() {
  local start=$SECONDS p
  command -v containerd >/dev/null 2>&1 || ensure_pkg containerd
  command -v runc >/dev/null 2>&1 || ensure_pkg runc
  [ -x /usr/lib/cni/bridge ] || ensure_pkg containernetworking-plugins
  # Debian's busybox package has a /bin/busybox too, but linked to libc: the image needs the static one.
  dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || ensure_pkg busybox-static
  command -v iptables >/dev/null 2>&1 || ensure_pkg iptables
  is_root || die "kubernetes: the node (containerd, kubelet) runs as root"
  mkdir -p "$KUBE_NODE"
  chmod 700 "$KUBE_NODE"
  # A node half up (one piece died) is started again whole.
  if ! kube_node_running; then kube_node_down; fi
  if kube_node_running; then
    log "kubernetes node already running (kubelet pid $(cat "$KUBE_NODE/kubelet.pid"))"
    return 0
  fi
  kube_containerd_up
  kube_pause_image
  kube_controllers_up
  kube_kubelet_up
  wait_ready kubelet "$(cat "$KUBE_NODE/kubelet.pid")" "$KUBE_NODE/kubelet.log" 0 480 \
    "see node $KUBE_NODE_NAME Ready in the API server" kube_node_ready
  for p in kube-controller-manager kube-scheduler; do
    kube_node_alive "$p" || { tail -20 "$KUBE_NODE/$p.log" >&2; die "$p exited; see $KUBE_NODE/$p.log"; }
  done
  log "kubernetes node $KUBE_NODE_NAME Ready in $((SECONDS - start)) s"
}

# kube_node_clean: every container and sandbox in our containerd killed and deleted.
kube_node_clean() {
  local id
  kube_ctr version >/dev/null 2>&1 || return 0
  for id in $(kube_ctr tasks ls -q 2>/dev/null); do
    kube_ctr tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
  done
  sleep 0.5
  for id in $(kube_ctr tasks ls -q 2>/dev/null); do kube_ctr tasks delete -f "$id" >/dev/null 2>&1 || true; done
  for id in $(kube_ctr containers ls -q 2>/dev/null); do kube_ctr containers delete "$id" >/dev/null 2>&1 || true; done
}

kube_node_down() {
  local p pid m
  [ -d "$KUBE_NODE" ] || return 0
  for p in kubelet kube-scheduler kube-controller-manager; do
    kube_stop "$p" "$KUBE_NODE/$p.pid" "${p:0:15}" "$KUBE_NODE/$p.log"
  done
  kube_node_clean
  kube_stop containerd "$KUBE_NODE/containerd.pid" containerd "$KUBE_NODE/containerd.log"
  # Shims whose containerd is gone (their command line names our socket's state).
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $KUBE_CTRD_SOCK" 2>/dev/null); do
    kill -KILL "$pid" 2>/dev/null || true
  done
  # What the kubelet and containerd mounted (secrets, shm, snapshots), deepest first.
  while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done < <(findmnt -rn -o TARGET | grep -F "$KUBE_NODE/" | sort -r)
  if ip link show "$KUBE_BRIDGE" >/dev/null 2>&1; then ip link delete "$KUBE_BRIDGE" || true; fi
  rm -rf "$KUBE_NODE/cni-ipam"
}
