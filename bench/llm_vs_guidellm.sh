#!/usr/bin/env bash
# perfbase http beside guidellm (vLLM's LLM benchmark, PyPI) on an OpenAI-compatible token
# stream: the reference service's POST /v1/chat/completions (perfbase serve --first-token,
# --token-gap; pinned to CPU 0) streams TOKENS tokens per request, the first FIRST after the
# request, then one every GAP. Both tools send the same requests at the same constant rate,
# each pinned to CPU 1 (perfbase -t 1; guidellm with one worker process), and their time to
# first token (TTFT) and inter-token latency (ITL) percentiles are set side by side. They must
# agree within 5 %: the service's own figures are the truth both are measured against.
#
# guidellm's ITL is per request, (last token − first token) / (tokens − 1), its percentiles
# over those means: perfbase's `stream_gap_ms` is the same figure, and is what is compared.
# perfbase also keeps every gap (`gap_ms`, vLLM's ITL), printed apart: a stall inside a
# stream shows there and is averaged away in the per-stream means.
#
# CPU per stream is each tool's user+sys (/usr/bin/time) over a run of N requests less a run
# of N_SMALL, divided by the difference: guidellm spends about 7 s importing torch before its
# first request, which this leaves out, and perfbase is treated the same way.
#
#   bench/llm_vs_guidellm.sh                        # RATE=20 N=200 N_SMALL=40 TOKENS=32
#   RATE=10 N=100 N_SMALL=20 bench/llm_vs_guidellm.sh
#
# Knobs (environment): RATE (requests/s, 20), N (200), N_SMALL (40), TOKENS (32), FIRST (50ms),
# GAP (10ms), PORT (18300), PERFBASE (target/release/perfbase, built with cargo when
# missing), VENV (~/.cache/llmpeer: guidellm 0.8.1 is pip-installed there once). guidellm
# runs offline: prompts from a local text file, output length from max_tokens, so it loads no
# tokenizer. Raw outputs and summary.txt land in bench/out/llm-guidellm-<UTC stamp>/.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
RATE=${RATE:-20}
N=${N:-200}
N_SMALL=${N_SMALL:-40}
TOKENS=${TOKENS:-32}
FIRST=${FIRST:-50ms}
GAP=${GAP:-10ms}
PORT=${PORT:-18300}
PERFBASE=${PERFBASE:-target/release/perfbase}
VENV=${VENV:-$HOME/.cache/llmpeer}
GUIDELLM_VERSION=0.8.1
OUT=bench/out/llm-guidellm-$(date -u +%Y%m%dT%H%M%SZ)

for v in RATE N N_SMALL TOKENS PORT; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')"
done
(( N_SMALL < N )) || die "N_SMALL ($N_SMALL) must be below N ($N)"
(( $(nproc) >= 2 )) || die "need 2 CPUs (service on CPU 0, tool on CPU 1)"
for cmd in taskset python3 curl; do command -v "$cmd" > /dev/null || die "no $cmd"; done
need_apt /usr/bin/time time "no /usr/bin/time"
if [ ! -x "$PERFBASE" ]; then
  log "building $PERFBASE"
  cargo build --release --locked -q
fi
if [ ! -x "$VENV/bin/guidellm" ]; then
  log "installing guidellm $GUIDELLM_VERSION into $VENV (PyPI)"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "guidellm==$GUIDELLM_VERSION"
fi
mkdir -p "$OUT"

taskset -c 0 "$PERFBASE" serve --port "$PORT" --first-token "$FIRST" --token-gap "$GAP" \
  > "$OUT/serve.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
URL=http://127.0.0.1:$PORT
for _ in $(seq 50); do curl -sf "$URL/v1/models" > /dev/null && break; sleep 0.1; done
curl -sf "$URL/v1/models" > /dev/null || die "the service did not start (see $OUT/serve.log)"

for i in $(seq 1 $((N + 50))); do echo "Write a short story about the number $i."; done \
  > "$OUT/prompts.txt"
BODY=$(printf '{"model":"perfbase-reference","messages":[{"role":"user","content":"Write a short story."}],"stream":true,"max_tokens":%d,"stream_options":{"include_usage":true}}' "$TOKENS")

# CPU seconds (user+sys) of a command, its output to FILE.
cpu_of() {
  local file=$1; shift
  /usr/bin/time -f '%U %S' -o "$file.time" "$@" > "$file" 2>&1 || die "failed: $* (see $file)"
  awk '{print $1 + $2}' "$file.time"
}

perfbase_run() {
  cpu_of "$OUT/perfbase-$1.txt" taskset -c 1 "$PERFBASE" http "$URL/v1/chat/completions" \
    -m POST -H 'Content-Type: application/json' -b "$BODY" -r "$RATE" -n "$1" -t 1 \
    --json "$OUT/perfbase-$1.json" -q --no-store
}

guidellm_run() {
  GUIDELLM__MAX_WORKER_PROCESSES=1 cpu_of "$OUT/guidellm-$1.txt" taskset -c 1 \
    "$VENV/bin/guidellm" run \
    --backend "kind=openai_http,target=$URL,request_format=/v1/chat/completions,max_tokens=$TOKENS" \
    --profile "kind=constant,rate=$RATE" \
    --constraint "kind=max_requests,count=$1" \
    --data "kind=text_file,path=$OUT/prompts.txt" \
    --metrics kind=generative,sample_size=0 \
    --output "kind=json,path=$OUT/guidellm-$1.json" \
    --disable-console
}

log "perfbase: $N and $N_SMALL requests at $RATE/s"
P_BIG=$(perfbase_run "$N"); P_SMALL=$(perfbase_run "$N_SMALL")
log "guidellm: $N and $N_SMALL requests at $RATE/s"
G_BIG=$(guidellm_run "$N"); G_SMALL=$(guidellm_run "$N_SMALL")

python3 - "$OUT" "$N" "$N_SMALL" "$TOKENS" "$P_BIG" "$P_SMALL" "$G_BIG" "$G_SMALL" \
  << 'EOF' | tee "$OUT/summary.txt"
import json, sys
out, n, small, tokens = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
p_big, p_small, g_big, g_small = map(float, sys.argv[5:9])
p = json.load(open(f"{out}/perfbase-{n}.json"))
st = p["stream"]
g = json.load(open(f"{out}/guidellm-{n}.json"))["benchmarks"][0]["metrics"]
ttft = g["time_to_first_token_ms"]["successful"]
itl = g["inter_token_latency_ms"]["successful"]
ok = p["requests"] == n and p["success_ratio"] == 1.0 and st["messages"] == n * tokens
done = g["request_totals"]["successful"]
print(f"perfbase: {p['requests']} streams, {st['messages']} tokens "
      f"(expected {n * tokens}), success {p['success_ratio']:.3f}; guidellm: {done} successful")
rows = [("TTFT p50", st["first_ms"]["p50"], ttft["percentiles"]["p50"]),
        ("TTFT p90", st["first_ms"]["p90"], ttft["percentiles"]["p90"]),
        ("TTFT p99", st["first_ms"]["p99"], ttft["percentiles"]["p99"]),
        ("TTFT mean", st["first_ms"]["mean"], ttft["mean"]),
        ("ITL p50", st["stream_gap_ms"]["p50"], itl["percentiles"]["p50"]),
        ("ITL p90", st["stream_gap_ms"]["p90"], itl["percentiles"]["p90"]),
        ("ITL p99", st["stream_gap_ms"]["p99"], itl["percentiles"]["p99"]),
        ("ITL mean", st["stream_gap_ms"]["mean"], itl["mean"])]
gaps = st["gap_ms"]
print(f"{'ms':<10} {'perfbase':>9} {'guidellm':>9} {'delta':>8}")
agree = True
for name, a, b in rows:
    d = (a - b) / b * 100
    agree &= abs(d) <= 5.0
    print(f"{name:<10} {a:>9.2f} {b:>9.2f} {d:>+7.1f}%")
print(f"perfbase's every gap (vLLM's ITL; guidellm has none): p50 {gaps['p50']:.2f}, "
      f"p90 {gaps['p90']:.2f}, p99 {gaps['p99']:.2f}, max {gaps['max']:.2f} ms")
per_p = (p_big - p_small) / (n - small) * 1e3
per_g = (g_big - g_small) / (n - small) * 1e3
print(f"CPU per stream (marginal, {n} less {small} requests): perfbase {per_p:.2f} ms, "
      f"guidellm {per_g:.2f} ms (whole runs: perfbase {p_big:.2f} s, guidellm {g_big:.2f} s)")
print(f"perfbase/guidellm: TTFT and ITL {'within' if agree else 'NOT within'} 5 %, "
      f"CPU per stream x{per_p / per_g:.2f}")
sys.exit(0 if ok and done == n else 1)
EOF
