#!/usr/bin/env bash
# Builds perfbase for the benchmarks and says what the build cost:
#
#   bench/build.sh [release|dist]     # default: release
#
# prints "build: cargo build --profile P: 6 min 1 s, peak memory 1.9 GB (largest process
# 1.2 GB)". Peak memory is the most the compiler and linker processes held at once, sampled
# every half second; the largest process is /usr/bin/time's figure for the biggest of them.
# A build with nothing to do says so: the figures are only a fresh build's from a clean
# target/ (CLEAN=1 removes target/<profile> first).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROFILE="${1:-release}"
[[ "$PROFILE" == release || "$PROFILE" == dist ]] || { echo "build.sh: profile must be release or dist" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "build.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
cd "$ROOT"
[[ "${CLEAN:-0}" == 1 ]] && rm -rf "target/$PROFILE"

peak_file="$(mktemp)"
echo 0 > "$peak_file"
(   # the sum of the build's processes' RSS, every half second
  peak=0
  while sleep 0.5; do
    kb=$(ps -C rustc,cc,ld,cargo,build-script-build -o rss= 2> /dev/null | awk '{s += $1} END {print s + 0}')
    (( kb > peak )) && { peak=$kb; echo "$peak" > "$peak_file"; }
  done
) &
sampler=$!
start=$(date +%s)
rc=0
/usr/bin/time -o "$peak_file.time" -f '%M' cargo build --locked --profile "$PROFILE" --bin perfbase >&2 || rc=$?
secs=$(( $(date +%s) - start ))
kill "$sampler" 2> /dev/null || true
wait "$sampler" 2> /dev/null || true
(( rc == 0 )) || { echo "build: cargo build --profile $PROFILE failed (exit $rc)"; exit "$rc"; }
largest_kb=$(tail -1 "$peak_file.time")
peak_kb=$(cat "$peak_file")
rm -f "$peak_file" "$peak_file.time"
size=$(stat -c %s "target/$PROFILE/perfbase")
if (( secs < 5 )); then
  echo "build: cargo build --profile $PROFILE: up to date (${secs} s); binary $((size / 1000000)) MB; CLEAN=1 for a fresh build's figures"
else
  printf 'build: cargo build --profile %s: %d min %d s, peak memory %.1f GB (largest process %.1f GB); binary %d MB\n' \
    "$PROFILE" $((secs / 60)) $((secs % 60)) "$(awk "BEGIN {print $peak_kb / 1000000}")" \
    "$(awk "BEGIN {print $largest_kb / 1000000}")" $((size / 1000000))
fi
