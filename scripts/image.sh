#!/usr/bin/env bash
# The agent image, built here from the repository's own files with no registry and no image
# builder, and imported into the containerd of the node `scripts/services.sh up kubernetes`
# runs (or written as an OCI archive with --archive FILE, for `ctr images import`, `podman load`
# or `skopeo copy oci-archive:FILE …`).
#
#   scripts/image.sh [--archive FILE] [BINARY]
#
# BINARY: the perfbase binary to put in it (default target/release/perfbase, built with
# `cargo build --release` when missing). The image holds that binary (debug sections
# stripped), the shared libraries `ldd` names for it, the CA bundle, and a passwd entry for the
# unprivileged user 10001 it runs as: the same runtime the Dockerfile gives, in one layer. Its
# tag is the first 12 hex digits of the stripped binary's sha256, so a new binary is a new
# image (and never `latest`, which Kubernetes would always try to pull). Progress goes to
# stderr; the last line on stdout is the image's name, for `perfbase k8s --image`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=SCRIPTDIR/services/oci.sh
source "$ROOT/scripts/services/oci.sh"

archive= bin=
while [ $# -gt 0 ]; do
  case $1 in
  --archive)
    archive=${2:?--archive needs a FILE}
    shift 2
    ;;
  -h | --help)
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
    exit 0
    ;;
  -*)
    echo "scripts/image.sh: unknown option $1" >&2
    exit 2
    ;;
  *)
    bin=$1
    shift
    ;;
  esac
done
if [ -z "$bin" ]; then
  bin=$ROOT/target/release/perfbase
  [ -x "$bin" ] || (cd "$ROOT" && cargo build --release --locked --bin perfbase >&2)
fi
[ -x "$bin" ] || { echo "scripts/image.sh: $bin is not an executable" >&2; exit 2; }
sock=${PERFBASE_KUBE_CONTAINERD:-$ROOT/.services/kubernetes/node/containerd/containerd.sock}
if [ -z "$archive" ] && [ ! -S "$sock" ]; then
  echo "scripts/image.sh: no node's containerd at $sock: run scripts/services.sh up kubernetes, or give --archive FILE" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs
mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc/ssl/certs" "$rootfs/tmp" "$rootfs/work"
chmod 1777 "$rootfs/tmp"
objcopy --strip-debug "$bin" "$rootfs/usr/local/bin/perfbase"
tag=$(sha256sum "$rootfs/usr/local/bin/perfbase" | cut -c1-12)
name=$(oci_full_name "perfbase:$tag")
# The loader and every library the binary links, at the paths the loader looks in.
while read -r lib; do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done < <(ldd "$bin" | grep -o '/[^ ]*' | sort -u)
cp -L /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'perfbase:x:10001:10001:perfbase:/work:/sbin/nologin' >"$rootfs/etc/passwd"
printf '%s\n' 'root:x:0:' 'perfbase:x:10001:' >"$rootfs/etc/group"
chown 10001:10001 "$rootfs/work"

out=${archive:-$work/image.tar}
oci_archive "$out" "$name" "$rootfs" '["/usr/local/bin/perfbase"]' 10001 /work
echo "scripts/image.sh: $name, $(du -h "$out" | cut -f1) ($(basename "$bin") $(du -h "$rootfs/usr/local/bin/perfbase" | cut -f1))" >&2
if [ -z "$archive" ]; then
  ctr --address "$sock" --namespace k8s.io images import "$out" >&2
fi
echo "$name"
