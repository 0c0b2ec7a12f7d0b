#!/usr/bin/env bash
# Where each protocol is named in src/ outside its own files: the measure of issue 45's seam.
# A protocol's own files are those with its name in their path (its src/backend/ module, its
# src/cli/ and src/plan/ files); anywhere else in src/ it may be named in at most $MAX files
# (the registry, src/backend/mod.rs, and one more). Comments and unit-test folders are not
# counted, nor HTTP: the base every other layer speaks (the dashboard, the reference service).
# Usage: scripts/protocol-names.sh [-v]   (-v lists the files)
set -euo pipefail
cd "$(dirname "$0")/.."
MAX=${MAX:-2}
verbose=${1:-}
protocols=$(sed -n 's/^every-protocol = \[\(.*\)\]/\1/p' Cargo.toml | tr -d '",' )
[ -n "$protocols" ] || { echo "protocol-names: no every-protocol feature in Cargo.toml" >&2; exit 2; }
worst=0 total=0 failed=()
for p in $protocols; do
  [ "$p" = http ] && continue
  cap="$(tr '[:lower:]' '[:upper:]' <<<"${p:0:1}")${p:1}"
  up=$(tr '[:lower:]' '[:upper:]' <<<"$p")
  # The name as a word or the head of an identifier: `redis::`, `"redis"`, `RedisTarget`,
  # `Family::Redis`, `REDIS`; not `credis` nor `wsx`.
  # Code only: a comment may name a protocol as an example; a unit test folder tries them all.
  files=$(grep -rnP "(?<![A-Za-z])($p|$cap|$up)(?![a-z])" src --include='*.rs' |
    grep -vP '^[^:]+:\d+:\s*//' | cut -d: -f1 | sort -u | grep -v -e "$p" -e '/tests/' || true)
  n=$(grep -c . <<<"$files" || true)
  total=$((total + n))
  [ "$n" -gt "$worst" ] && worst=$n
  printf '%-6s %2d files outside its own\n' "$p" "$n"
  [ -n "$verbose" ] && [ -n "$files" ] && sed 's/^/         /' <<<"$files"
  [ "$n" -gt "$MAX" ] && failed+=("$p")
done
echo "protocol-names: $total in all, at most $worst per protocol (allowed: $MAX)"
if [ ${#failed[@]} -gt 0 ]; then
  echo "protocol-names: named in more than $MAX src/ files outside their own: ${failed[*]} (run scripts/protocol-names.sh -v)" >&2
  exit 1
fi
