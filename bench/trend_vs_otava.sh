#!/usr/bin/env bash
# Change-point detection, side by side: `perfbase trend` beside Apache Otava (apache-otava 0.8.0,
# compute_change_points) and MongoDB's signal-processing-algorithms (2.1.6, e_divisive), each with
# its defaults, on the same labelled series.
#
# Series: 7 shapes made by otava-test-data 0.1.9's generators (step, drift, outliers, variance,
# multistep, regfix, none) and 6 of our own (late, late2, bursts, burst-step, ar1, ar1-step; see
# bench/trend/gen_series.py), x noise sigma 2, 5 and 10 x PER series each (200-500 points, fixed
# seeds) -> bench/out/trend/series.jsonl.
# Measures, per shape and pooled: precision and recall of the detected change points (a hit is
# within +-5 points of a true one), false detections per 100 points, and the mean in-process
# time of one series' detection call.
# The last line compares perfbase with Otava over all shapes.
#
# Takes about 2 min with PER=20 on 2 cores (E-Divisive's permutation test is 50 s of it), plus
# under 1 min the first time, to install the two Python venvs under bench/out/. No network but
# pip's (and apt-get's, only if python3 -m venv lacks ensurepip).
#
#   bench/trend_vs_otava.sh                      # PER=20: 780 series
#   PER=5 bench/trend_vs_otava.sh                # quick look: 195 series
#   SPA_EVERY=3 bench/trend_vs_otava.sh          # e_divisive on every 3rd series only
#   PERFBASE=/path/to/perfbase bench/trend_vs_otava.sh
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
# A PERFBASE given relative to the caller's directory still names the same file after the cd.
if [ -n "${PERFBASE:-}" ]; then PERFBASE=$(realpath -m -- "$PERFBASE"); fi
cd "$(dirname "$0")/.."

PER=${PER:-20}
SPA_EVERY=${SPA_EVERY:-1}
PERFBASE=${PERFBASE:-target/release/perfbase}
PYTHON=${PYTHON:-python3}
OUT=bench/out/trend
OTAVA_VENV=bench/out/venv-otava
SPA_VENV=bench/out/venv-spa

# Two venvs, because the pins conflict (apache-otava 0.8.0 pins numpy 2.2.0,
# signal-processing-algorithms 2.1.6 wants numpy < 2). A venv that already has the pinned
# versions is left alone, so later runs install nothing.
venv_ok() { # venv "dist==ver ..."
  [ -x "$1/bin/python" ] && "$1/bin/python" - "$2" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
for pin in sys.argv[1].split():
    name, want = pin.split("==")
    if version(name) != want:
        sys.exit(1)
PY
}
setup_venv() { # venv "dist==ver ..."
  venv_ok "$1" "$2" && return 0
  log "installing $2 into $1"
  if ! "$PYTHON" -m venv "$1" 2>/dev/null; then
    # Debian splits ensurepip out of python3 into python3-venv.
    [ "$(id -u)" = 0 ] || die "$PYTHON -m venv failed; install python3-venv"
    apt-get install -y python3-venv >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y python3-venv >/dev/null; }
    rm -rf "$1"
    "$PYTHON" -m venv "$1"
  fi
  # shellcheck disable=SC2086 # $2 is a list of pins
  "$1/bin/pip" install --disable-pip-version-check --no-input -q $2
  venv_ok "$1" "$2" || die "$1 does not import $2 after pip install"
}
setup_venv "$OTAVA_VENV" "apache-otava==0.8.0 otava-test-data==0.1.9"
setup_venv "$SPA_VENV" "signal-processing-algorithms==2.1.6"

start=$SECONDS
mkdir -p "$OUT"
# Stale results from an earlier run must not be scored as this run's.
rm -f "$OUT"/otava.json "$OUT"/spa.json "$OUT"/perfbase.json "$OUT"/perfbase.log "$OUT"/summary.json

# One thread per tool: the machine has 2 cores and is shared, and timings should not depend
# on how many of them were idle.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

"$OTAVA_VENV/bin/python" bench/trend/gen_series.py "$OUT/series.jsonl" "$PER"

# One tool at a time, each timing its own detection calls in-process.
log "otava: compute_change_points (window_len=50, max_pvalue=0.001, min_magnitude=0)"
"$OTAVA_VENV/bin/python" bench/trend/detect.py otava "$OUT/series.jsonl" "$OUT/otava.json"
which="every series"; [ "$SPA_EVERY" = 1 ] || which="every ${SPA_EVERY}th series (SPA_EVERY)"
log "signal-processing-algorithms: e_divisive (pvalue=0.05, permutations=100) on $which"
"$SPA_VENV/bin/python" bench/trend/detect.py spa "$OUT/series.jsonl" "$OUT/spa.json" "$SPA_EVERY"

# perfbase reads the whole file in one run and times each series itself (compute_us). The
# script never builds it: a missing binary or one without `trend` is reported and skipped.
if [ ! -x "$PERFBASE" ]; then
  log "perfbase: $PERFBASE not found (cargo build --release, or set PERFBASE); skipped"
elif ! "$PERFBASE" trend --help >/dev/null 2>&1; then
  log "perfbase: $PERFBASE has no 'trend' command; skipped"
else
  log "perfbase: trend (its own output in $OUT/perfbase.log)"
  if ! "$PERFBASE" trend --series "$OUT/series.jsonl" --json "$OUT/perfbase.json" > "$OUT/perfbase.log" 2>&1; then
    tail -n 20 "$OUT/perfbase.log" >&2
    die "perfbase trend failed"
  fi
  [ -s "$OUT/perfbase.json" ] || die "perfbase trend wrote no $OUT/perfbase.json"
fi
log "series and detection took $((SECONDS - start)) s"

python3 bench/trend/score.py "$OUT/series.jsonl" \
  perfbase="$OUT/perfbase.json" otava="$OUT/otava.json" spa="$OUT/spa.json" \
  --summary "$OUT/summary.json"
