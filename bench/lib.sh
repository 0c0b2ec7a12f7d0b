# shellcheck shell=bash
# bench/lib.sh: the helpers the bench scripts share. Each sources it right after its own
# `set -euo pipefail` (so that a failed source stops it): source "$(dirname "$0")/lib.sh".
# It does not cd: some scripts stay in the caller's directory, so a relative PERFBASE holds.
#
# Two styles of messages, as the scripts always printed them: with BENCH_NAME set before
# sourcing, die prints "NAME: error: MSG" and log stamps UTC; without, die logs "error: MSG"
# and log stamps local time. die exits 1.

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck disable=SC2034 # used by the scripts that source this file
ROOT="$(cd "$HERE/.." && pwd)"

if [[ -n "${BENCH_NAME:-}" ]]; then
  log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
  die() { printf '%s: error: %s\n' "$BENCH_NAME" "$*" >&2; exit 1; }
else
  log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
  die() { log "error: $*"; exit 1; }
fi
have() { command -v "$1" > /dev/null 2>&1; }
# wants TOOL: TOOL is one of the words of $TOOLS.
wants() { [[ " $TOOLS " == *" $1 "* ]]; }
# port_busy PORT: something accepts TCP on $HOST:PORT.
port_busy() { (exec 3<> "/dev/tcp/$HOST/$1") 2> /dev/null; }

# need_apt CMD PKG MESSAGE: when CMD (a command, or an executable's path) is missing, one plain
# `apt-get install -y PKG`; dies with MESSAGE if that fails. CMD is not checked again after.
need_apt() { have "$1" || apt-get install -y "$2" > /dev/null || die "$3"; }

# apt_install PKG... and need_cmd COMMAND PKG: root only; apt-get update first, 5 tries.
APT_UPDATED=0
apt_install() {   # apt_install PKG...; waits for a busy dpkg lock, retries
  [[ "$(id -u)" == 0 ]] || die "$* missing and not root: install with apt-get install $*"
  have apt-get || die "$* missing and no apt-get here: install $* by hand"
  local try
  for try in 1 2 3 4 5; do
    if (( ! APT_UPDATED )); then
      apt-get -q -o DPkg::Lock::Timeout=300 update > /dev/null && APT_UPDATED=1 || true
    fi
    if DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 "$@" > /dev/null; then
      return 0
    fi
    log "apt-get install $* failed (try $try), retrying in 15 s (dpkg may be busy)"
    APT_UPDATED=0
    sleep 15
  done
  die "could not install $* with apt-get"
}
need_cmd() {      # need_cmd COMMAND DEBIAN_PACKAGE
  have "$1" || { log "installing $2 (for $1)"; apt_install "$2"; }
  have "$1" || die "$1 still missing after installing $2"
}
