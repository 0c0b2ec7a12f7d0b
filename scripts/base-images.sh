#!/usr/bin/env bash
# The two base images the Dockerfile names, made on this machine from Debian's packages, for
# building the Dockerfile where no image registry is reachable (a registry-less CI, this
# project's own machines). They go into buildah's local storage under the names the Dockerfile
# uses, so that `buildah bud` finds them there and pulls nothing:
#
#   docker.io/library/debian:bookworm-slim   debootstrap --variant=minbase bookworm
#   docker.io/library/rust:1.89-bookworm     the same, with gcc, libc6-dev, ca-certificates (and
#                                            the CAs this machine adds to its own store) and
#                                            pkg-config, and a Rust toolchain copied from this
#                                            machine's rustup (RUSTUP_TOOLCHAIN, default
#                                            stable; its version is printed, and need not be
#                                            1.89: the name is the Dockerfile's, the content
#                                            the local stand-in's)
#
#   scripts/base-images.sh [WORKDIR]        # then: buildah bud --layers=false -t perfbase:0.1.0 .
#
# As root, with Debian's debootstrap and buildah (installed with apt-get when missing). buildah
# runs with the vfs storage driver and chroot isolation (BUILDAH_ISOLATION=chroot,
# STORAGE_DRIVER=vfs, exported by this script for itself; give them to `buildah bud` too),
# which work inside a container where overlay mounts and user namespaces may not.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "scripts/base-images.sh: run as root (debootstrap, buildah)" >&2; exit 2; }
work=${1:-/var/tmp/perfbase-base-images}
export BUILDAH_ISOLATION=chroot STORAGE_DRIVER=vfs
for p in debootstrap buildah; do
  command -v "$p" >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y "$p" >&2
done
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
toolchain=${RUSTUP_TOOLCHAIN:-stable}
rustc_dir=$(rustup run "$toolchain" rustc --print sysroot)

# commit ROOTFS NAME ENV...: the tree ROOTFS as the one layer of image NAME in buildah's storage.
commit() {
  local rootfs=$1 name=$2 c mnt e
  shift 2
  c=$(buildah from scratch)
  mnt=$(buildah mount "$c")
  cp -a "$rootfs/." "$mnt/"
  buildah umount "$c" >/dev/null
  for e in "$@"; do buildah config --env "$e" "$c"; done
  buildah config --cmd /bin/bash "$c"
  buildah commit --rm "$c" "$name" >&2
  echo "scripts/base-images.sh: $name" >&2
}

mkdir -p "$work"
if [ ! -x "$work/slim/bin/bash" ]; then
  rm -rf "$work/slim"
  debootstrap --variant=minbase bookworm "$work/slim" "$mirror" >&2
  chroot "$work/slim" apt-get clean
fi
path=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
commit "$work/slim" docker.io/library/debian:bookworm-slim "$path"

if [ ! -x "$work/rust/usr/bin/gcc" ]; then
  rm -rf "$work/rust"
  cp -a "$work/slim" "$work/rust"
  cp /etc/resolv.conf "$work/rust/etc/resolv.conf"
  chroot "$work/rust" apt-get update >&2
  chroot "$work/rust" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    gcc libc6-dev ca-certificates pkg-config >&2
  chroot "$work/rust" apt-get clean
fi
# The stand-in trusts what this machine trusts: a registry-less network often reaches crates.io
# through a TLS proxy whose CA only the machine's own store (/usr/local/share/ca-certificates)
# holds, and `cargo build` in the Dockerfile fetches crates.
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$work/rust/usr/local/share/ca-certificates/"
  chroot "$work/rust" update-ca-certificates >&2
fi
# The toolchain without its documentation, where the official image has it.
rm -rf "$work/rust/usr/local/rust"
mkdir -p "$work/rust/usr/local/rust" "$work/rust/usr/local/cargo"
cp -a "$rustc_dir/bin" "$rustc_dir/lib" "$work/rust/usr/local/rust/"
echo "scripts/base-images.sh: the rust stand-in holds $("$rustc_dir/bin/rustc" --version)" >&2
commit "$work/rust" docker.io/library/rust:1.89-bookworm \
  "PATH=/usr/local/cargo/bin:/usr/local/rust/bin:${path#PATH=}" CARGO_HOME=/usr/local/cargo
