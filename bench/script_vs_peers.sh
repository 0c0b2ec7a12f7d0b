#!/usr/bin/env bash
# perfbase's scripted workload (JavaScript, bench/journey/script.js) beside Locust, Artillery and
# Gatling running the same journey, and beside perfbase's own TOML journey: log in once, then
# create, read and delete an item with the token, each status checked. Then 10,000 closed-model
# virtual users, each with a 1 s think time after its request, to measure the RSS a user costs.
#
#   bench/script_vs_peers.sh                         # both parts, journey_vs_peers.sh's defaults
#   D=5 REPS=1 TOOLS="locust script" bench/script_vs_peers.sh
#   PARTS=users VUS=10000 bench/script_vs_peers.sh   # only the 10,000 users
#
# Part 1 is bench/journey_vs_peers.sh with the tool `script` added (its knobs apply: D, REPS,
# MODES, RATE, USERS, ...): the service on CPU 0, the tool on CPU 1, every tool at RATE
# journeys/s and closed with USERS users; its tables land in bench/out/journey-<stamp>/.
# Part 2 (knobs VUS, default 10000; VU_D, seconds, default 20; BASE_VUS, default 100): perfbase
# script with -c VUS -t 1 against `perfbase serve`, each user GET / then sleep(1); peak RSS from
# /usr/bin/time, once with BASE_VUS users and once with VUS. RSS per VU = the difference over the
# users added (what one more user costs), also the whole RSS / VUS.
# The last line: perfbase script/locust: journeys/s xA, CPU per journey xB, RSS per VU C KB
# (journeys/s and CPU per journey: the closed runs' medians).
set -euo pipefail

BENCH_NAME=script_vs_peers
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

PARTS="${PARTS:-peers users}"
export TOOLS="${TOOLS:-locust artillery gatling perfbase script}"
VUS="${VUS:-10000}"
VU_D="${VU_D:-20}"
BASE_VUS="${BASE_VUS:-100}"
HOST=127.0.0.1
PORT="${VU_PORT:-18580}"
PERFBASE="${PERFBASE:-$ROOT/target/release/perfbase}"
[[ "$VUS" =~ ^[1-9][0-9]*$ && "$BASE_VUS" =~ ^[1-9][0-9]*$ ]] && (( BASE_VUS < VUS )) \
  || die "VUS and BASE_VUS must be whole numbers with BASE_VUS < VUS (got $VUS, $BASE_VUS)"
[[ "$VU_D" =~ ^[1-9][0-9]*$ ]] || die "VU_D must be a whole number of seconds (got '$VU_D')"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install time)"

JOURNEY_OUT=""
if [[ " $PARTS " == *" peers "* ]]; then
  before="$(ls -d "$HERE"/out/journey-* 2> /dev/null | tail -1 || true)"
  "$HERE/journey_vs_peers.sh"
  JOURNEY_OUT="$(ls -d "$HERE"/out/journey-* | tail -1)"
  [[ "$JOURNEY_OUT" != "$before" ]] || die "journey_vs_peers.sh left no new bench/out/journey-* folder"
fi

RSS_PER_VU=""
if [[ " $PARTS " == *" users "* ]]; then
  [[ -x "$PERFBASE" ]] || die "no $PERFBASE: cargo build --release --bin perfbase"
  # Each user holds a connection in each process (the tool, the service): the file limit of
  # each must cover them.
  ulimit -n $(( VUS + 1024 )) 2> /dev/null \
    || die "cannot raise the file limit to $(( VUS + 1024 )) (ulimit -n; hard limit $(ulimit -Hn))"
  OUT="$HERE/out/script-users-$(date -u +%Y%m%dT%H%M%SZ)"
  mkdir -p "$OUT"
  for _ in $(seq 20); do port_busy "$PORT" || break; PORT=$(( PORT + 1 )); done
  URL="http://$HOST:$PORT"
  taskset -c 0 "$PERFBASE" serve --host "$HOST" --port "$PORT" > "$OUT/server.out" 2>&1 < /dev/null &
  SERVER_PID=$!
  trap 'kill -INT "$SERVER_PID" 2> /dev/null || true; wait "$SERVER_PID" 2> /dev/null || true' EXIT
  for _ in $(seq 100); do port_busy "$PORT" && break; sleep 0.1; done
  port_busy "$PORT" || die "perfbase serve did not come up on $URL"
  cat > "$OUT/users.js" << 'JS'
import http from "perfbase/http";
import { sleep } from "perfbase";
export default async function () {
  await http.get("/", { name: "home" });
  sleep(1);
}
JS
  users_run() {   # users_run N: peak RSS in KiB of perfbase script with N users
    local n=$1
    taskset -c 1 /usr/bin/time -o "$OUT/time-$n.txt" -f '%M %U %S' \
      timeout -k 5 $(( VU_D + 60 )) "$PERFBASE" script "$OUT/users.js" --url "$URL" -c "$n" -t 1 \
      -d "${VU_D}s" --timeout 10s -q --no-store --json "$OUT/result-$n.json" \
      > "$OUT/stdout-$n" 2> "$OUT/stderr-$n" < /dev/null \
      || die "perfbase script with $n users failed; see $OUT/stderr-$n"
    awk 'NF == 3 { m = $1 } END { print m }' "$OUT/time-$n.txt"
  }
  log "$BASE_VUS users for ${VU_D}s"
  base_kib="$(users_run "$BASE_VUS")"
  log "$VUS users for ${VU_D}s"
  vus_kib="$(users_run "$VUS")"
  read -r iterations errors << EOF2
$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["iterations"]["count"], sum(r.get("errors", {}).values()))' "$OUT/result-$VUS.json")
EOF2
  RSS_PER_VU="$(awk -v a="$base_kib" -v b="$vus_kib" -v n="$BASE_VUS" -v m="$VUS" 'BEGIN { printf "%.1f", (b - a) * 1.024 / (m - n) }')"
  whole="$(awk -v b="$vus_kib" -v m="$VUS" 'BEGIN { printf "%.1f", b * 1.024 / m }')"
  {
    echo "## $VUS virtual users, each GET / then sleep(1), closed model, one worker thread, ${VU_D}s"
    echo
    echo "| users | peak RSS MiB | iterations | errors |"
    echo "|---|---|---|---|"
    echo "| $BASE_VUS | $(awk -v k="$base_kib" 'BEGIN { printf "%.1f", k / 1024 }') | $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["iterations"]["count"])' "$OUT/result-$BASE_VUS.json") | |"
    echo "| $VUS | $(awk -v k="$vus_kib" 'BEGIN { printf "%.1f", k / 1024 }') | $iterations | $errors |"
    echo
    echo "RSS per VU: $RSS_PER_VU KB for each user past $BASE_VUS (the whole RSS over $VUS users: $whole KB)"
  } | tee "$OUT/table.md"
fi

python3 - "$JOURNEY_OUT" "${RSS_PER_VU:-n/a}" << 'PYEOF'
import json, os, statistics, sys
out, rss = sys.argv[1], sys.argv[2]
def med(tool, key, mode="closed"):
    d = os.path.join(out, mode, tool)
    if not out or not os.path.isdir(d):
        return None
    vals = []
    for rep in sorted(os.listdir(d)):
        try:
            r = json.load(open(os.path.join(d, rep, "result.json")))
        except (OSError, ValueError):
            continue
        if r.get("ok") and r.get(key) is not None:
            vals.append(r[key])
    return statistics.median(vals) if vals else None
ratio = lambda a, b: f"x{a / b:.2f}" if a and b else "n/a"
s, l, t = (med(x, "jps") for x in ("script", "locust", "perfbase"))
sc, lc, tc = (med(x, "cpu_us_per_journey") for x in ("script", "locust", "perfbase"))
if out:
    print(f"closed: perfbase script/perfbase TOML journey: journeys/s {ratio(s, t)}, CPU per journey {ratio(sc, tc)}")
    r = med("script", "jps", "rate")
    print(f"rate: perfbase script achieved {r:.1f} journeys/s" if r else "rate: perfbase script: n/a")
print(f"perfbase script/locust: journeys/s {ratio(s, l)}, CPU per journey {ratio(sc, lc)}, RSS per VU {rss} KB")
PYEOF
