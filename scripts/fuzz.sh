#!/usr/bin/env bash
# Fuzzes every parser of outside input for as long as asked:
#   scripts/fuzz.sh [SECONDS_PER_HARNESS] [HARNESS...]     (default 60 s each, all harnesses)
# Built with the `fuzz` profile (optimised, panics unwind so they are caught, integer
# overflow checked). Findings are saved in crates/fuzz/crashes/ and make the exit code 1;
# each one becomes a regression test (see crates/fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
seconds=${1:-60}
shift || true
cargo build --profile fuzz -p perfbase-fuzz --locked
exec target/fuzz/perfbase-fuzz --seconds "$seconds" "$@"
