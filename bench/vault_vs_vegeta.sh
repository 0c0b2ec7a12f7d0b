#!/usr/bin/env bash
# perfbase vault beside vegeta (the Go HTTP load tool, v12 from the Go module proxy): the same
# local Vault dev server (scripts/services.sh, pinned to CPU 0), the same four transit
# operations with the same requests (encrypt and decrypt with perfbase-aes256-gcm96, sign and
# verify with perfbase-ecdsa-p256, 128 bytes of payload), C concurrent requests as fast as the
# server answers (perfbase: C connections, closed model, 1 thread; vegeta: -rate=0 with C
# workers), D seconds each; the tool pinned to CPU 1. Prints successful ops/s, mean and p99
# latency, client CPU µs per op (user+sys of the whole tool process over its successful ops;
# vegeta's attack process only, its report is made afterwards) and the ratios perfbase/vegeta,
# and checks that no run had an error.
#
#   bench/vault_vs_vegeta.sh                                  # D=10 REPS=2 C=32 TARGET=vault
#   TARGET=openbao bench/vault_vs_vegeta.sh                   # the OpenBao dev server instead
#   PERFBASE=target/debug/perfbase D=2 REPS=1 bench/vault_vs_vegeta.sh   # quick check
#   OPS="encrypt sign" C=64 bench/vault_vs_vegeta.sh
#
# Knobs (environment): D (seconds per run, 10), REPS (2; each repetition runs both tools once
# per operation, in alternating order), C (concurrency, 32), TARGET (vault or openbao), OPS
# ("encrypt decrypt sign verify"), PAUSE (1 s between runs), PERFBASE
# (target/release/perfbase, built with cargo when missing), VEGETA (a vegeta binary; default:
# v12.13.0, go-installed once into ~/.cache/vegeta-v12.13.0/bin). The token never sits on a
# command line: perfbase reads VAULT_TOKEN, curl and vegeta read it from files in a private
# temporary folder that is deleted on exit. Raw outputs and summary.txt land in
# bench/out/vault-vegeta-<UTC stamp>/.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
D=${D:-10}
REPS=${REPS:-2}
C=${C:-32}
TARGET=${TARGET:-vault}
OPS=${OPS:-encrypt decrypt sign verify}
PAUSE=${PAUSE:-1}
PERFBASE=${PERFBASE:-target/release/perfbase}
VEGETA_VERSION=v12.13.0
VEGETA=${VEGETA:-$HOME/.cache/vegeta-$VEGETA_VERSION/bin/vegeta}
ENC_KEY=perfbase-aes256-gcm96
SIGN_KEY=perfbase-ecdsa-p256
SERVER_CPU=0
TOOL_CPU=1
OUT=bench/out/vault-vegeta-$(date -u +%Y%m%dT%H%M%SZ)

[[ "$D" =~ ^[1-9][0-9]*$ ]] || die "D must be a whole number of seconds (got '$D')"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer (got '$REPS')"
[[ "$C" =~ ^[1-9][0-9]*$ ]] || die "C must be a positive integer (got '$C')"
[[ "$PAUSE" =~ ^[0-9]+$ ]] || die "PAUSE must be a whole number of seconds (got '$PAUSE')"
[[ "$TARGET" == vault || "$TARGET" == openbao ]] || die "TARGET must be vault or openbao (got '$TARGET')"
for op in $OPS; do
  [[ "$op" =~ ^(encrypt|decrypt|sign|verify)$ ]] || die "unknown op '$op' (known: encrypt decrypt sign verify)"
done
[[ -n "${OPS// /}" ]] || die "OPS must not be empty"
(( $(nproc) >= 2 )) || die "need 2 CPUs (server on CPU $SERVER_CPU, tool on CPU $TOOL_CPU); nproc=$(nproc)"
for cmd in taskset timeout python3 curl; do command -v "$cmd" > /dev/null || die "no $cmd"; done
need_apt /usr/bin/time time "no /usr/bin/time (apt-get install time)"

# vegeta, once per machine, from the Go module proxy (pinned version).
if [ ! -x "$VEGETA" ]; then
  [[ "$VEGETA" == "$HOME/.cache/vegeta-$VEGETA_VERSION/bin/vegeta" ]] || die "VEGETA=$VEGETA is not an executable file"
  GO=$(command -v go || echo /usr/local/go/bin/go)
  [ -x "$GO" ] || die "vegeta is missing and there is no Go to install it (https://go.dev/dl, into /usr/local/go)"
  log "go install github.com/tsenart/vegeta/v12@$VEGETA_VERSION (once; about 20 s)"
  GOBIN=$(dirname "$VEGETA") nice -n 10 "$GO" install "github.com/tsenart/vegeta/v12@$VEGETA_VERSION" \
    || die "go install of vegeta $VEGETA_VERSION failed"
  [ -x "$VEGETA" ] || die "go install finished but $VEGETA does not exist"
fi
if [ ! -x "$PERFBASE" ]; then
  [ "$PERFBASE" = target/release/perfbase ] || die "PERFBASE=$PERFBASE is not an executable file"
  log "building perfbase: cargo build --release --bin perfbase"
  cargo build --release --bin perfbase || die "cargo build --release failed"
fi

scripts/services.sh up "$TARGET" > /dev/null
eval "$(scripts/services.sh env "$TARGET")"
T=${TARGET^^}
url_var=PERFBASE_${T}_URL token_var=PERFBASE_${T}_TOKEN pid_var=PERFBASE_${T}_PID
URL=${!url_var:-} TOKEN=${!token_var:-} SERVER_PID=${!pid_var:-}
URL=${URL%/}
[[ "$URL" =~ ^http://127\.0\.0\.1:[0-9]+$ ]] || die "refusing to load '$URL': this benchmark only sends load to http://127.0.0.1"
[ -n "$TOKEN" ] || die "scripts/services.sh env $TARGET gave no token"
[[ "$SERVER_PID" =~ ^[0-9]+$ ]] && kill -0 "$SERVER_PID" 2> /dev/null || die "no running $TARGET server (pid '$SERVER_PID')"

# Pin the server (every thread) to CPU 0 for the runs, and give it its old CPUs back on exit.
SERVER_PIDS="$SERVER_PID $( (pgrep -P "$SERVER_PID" || true) | tr "\n" " ")"
OLD_CPUS=$(taskset -c -p "$SERVER_PID" | sed 's/.*: *//')
PRIV=$(mktemp -d)   # token-bearing files only: the header file for curl, vegeta's targets
cleanup() {
  rm -rf "$PRIV"
  for pid in $SERVER_PIDS; do taskset -a -p -c "$OLD_CPUS" "$pid" > /dev/null 2>&1 || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
chmod 700 "$PRIV"
mkdir -p "$OUT"

# The keys (perfbase-aes256-gcm96, perfbase-ecdsa-p256): made by perfbase, kept when there.
VAULT_TOKEN=$TOKEN timeout -k 3 60 "$PERFBASE" vault "$URL" --init -w encrypt -n 1 -q --no-store \
  > "$OUT/init.out" 2>&1 || { cat "$OUT/init.out" >&2; die "perfbase vault --init failed"; }

# The requests vegeta sends, as perfbase builds them: one fixed 128-byte payload, one
# ciphertext of it for decrypt and one signature of it for verify (each made once, with curl).
printf 'X-Vault-Token: %s\nContent-Type: application/json\n' "$TOKEN" > "$PRIV/headers"
PAYLOAD=$(head -c 128 /dev/urandom | base64 -w0)
echo "$PAYLOAD" > "$OUT/payload.b64"
vault_post() {   # vault_post PATH BODY FIELD: POST to /v1/PATH, print .data.FIELD of the answer
  local resp
  resp=$(curl -sS --max-time 10 -H @"$PRIV/headers" -d "$2" "$URL/v1/$1") || die "curl POST /v1/$1 failed"
  python3 -c 'import json, sys; print(json.loads(sys.argv[1])["data"][sys.argv[2]])' "$resp" "$3" \
    || die "POST /v1/$1: no data.$3 in the answer: $resp"
}
CIPHERTEXT=$(vault_post "transit/encrypt/$ENC_KEY" "{\"plaintext\":\"$PAYLOAD\"}" ciphertext)
SIGNATURE=$(vault_post "transit/sign/$SIGN_KEY" "{\"input\":\"$PAYLOAD\"}" signature)
[ "$(vault_post "transit/decrypt/$ENC_KEY" "{\"ciphertext\":\"$CIPHERTEXT\"}" plaintext)" = "$PAYLOAD" ] \
  || die "decrypt of the ciphertext does not give the payload back"
[ "$(vault_post "transit/verify/$SIGN_KEY" "{\"input\":\"$PAYLOAD\",\"signature\":\"$SIGNATURE\"}" valid)" = True ] \
  || die "verify of the signature is not valid"

# vegeta's JSON targets, one per op (one line each); a copy with the token redacted goes to $OUT.
mkdir -p "$OUT/targets"
python3 - "$PRIV" "$OUT/targets" "$URL" "$ENC_KEY" "$SIGN_KEY" "$PAYLOAD" "$CIPHERTEXT" "$SIGNATURE" << 'PY'
import base64, json, os, sys
priv, pub, url, enc, sign, payload, ct, sig = sys.argv[1:]
token = open(f"{priv}/headers").readline().split(": ", 1)[1].strip()
bodies = {
    "encrypt": (f"transit/encrypt/{enc}", {"plaintext": payload}),
    "decrypt": (f"transit/decrypt/{enc}", {"ciphertext": ct}),
    "sign": (f"transit/sign/{sign}", {"input": payload}),
    "verify": (f"transit/verify/{sign}", {"input": payload, "signature": sig}),
}
for op, (path, body) in bodies.items():
    t = {"method": "POST", "url": f"{url}/v1/{path}",
         "body": base64.b64encode(json.dumps(body, separators=(",", ":")).encode()).decode(),
         "header": {"X-Vault-Token": [token], "Content-Type": ["application/json"]}}
    with open(f"{priv}/{op}.json", "w") as f:
        f.write(json.dumps(t) + "\n")
    t["header"]["X-Vault-Token"] = ["<redacted>"]
    with open(f"{pub}/{op}.json", "w") as f:
        f.write(json.dumps(t) + "\n")
PY

for pid in $SERVER_PIDS; do taskset -a -p -c "$SERVER_CPU" "$pid" > /dev/null 2>&1 || true; done
VEGETA_MOD=$(go version -m "$VEGETA" 2> /dev/null || /usr/local/go/bin/go version -m "$VEGETA" 2> /dev/null || true)
{
  echo "date_utc: ${OUT##*-}"
  echo "host: $(uname -srm), nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "D=${D}s REPS=$REPS C=$C TARGET=$TARGET OPS='$OPS' PAUSE=${PAUSE}s"
  echo "server: $TARGET pid $SERVER_PID at $URL, $(curl -sS --max-time 5 "$URL/v1/sys/health" | python3 -c 'import json, sys; print("version", json.load(sys.stdin).get("version"))' 2> /dev/null || echo 'version ?'), CPU $SERVER_CPU"
  echo "perfbase: $PERFBASE ($("$PERFBASE" --version 2>&1 | head -1))"
  echo "vegeta: $VEGETA ($(awk '$1 == "mod" {print $2, $3}' <<< "$VEGETA_MOD"), built with $(head -1 <<< "$VEGETA_MOD" | awk '{print $NF}'))"
} > "$OUT/env.txt"

CLK_TCK=$(getconf CLK_TCK)
ticks() { local t=0 pid; for pid in $SERVER_PIDS; do t=$(( t + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2> /dev/null || echo 0) )); done; echo "$t"; }
FIRST=1
run() {   # run OP TOOL REP
  local op=$1 tool=$2 rep=$3 dir="$OUT/$1/$2/rep$3" rc=0 t0 t1 w0 w1
  mkdir -p "$dir"
  if [ "$tool" = perfbase ]; then
    CMD=("$PERFBASE" vault "$URL" -w "$op" -c "$C" -t 1 -d "${D}s" -q --no-store --json "$dir/perfbase.json")
  else
    # -max-body=0: vegeta still reads every response body but keeps none of it in its results.
    CMD=("$VEGETA" attack -format=json -targets "$PRIV/$op.json" -rate=0 -workers="$C" -max-workers="$C"
      -duration="${D}s" -keepalive=true -timeout=5s -max-body=0 -output "$dir/vegeta.bin")
  fi
  (( FIRST )) || sleep "$PAUSE"
  FIRST=0
  printf '%q ' "${CMD[@]}" | sed "s#$PRIV/#<private>/#g" > "$dir/cmd.txt"; echo >> "$dir/cmd.txt"
  t0=$(ticks); w0=$(date +%s%N)
  VAULT_TOKEN=$TOKEN taskset -c "$TOOL_CPU" /usr/bin/time -f '%U %S' -o "$dir/time.txt" \
    timeout -k 3 $(( D + 30 )) "${CMD[@]}" > "$dir/stdout" 2> "$dir/stderr" < /dev/null || rc=$?
  w1=$(date +%s%N); t1=$(ticks)
  echo "$rc $(( t1 - t0 )) $CLK_TCK $(( (w1 - w0) / 1000 ))" > "$dir/run.txt"   # rc, server ticks, ticks/s, wall µs
  if [ "$tool" = vegeta ] && [ -s "$dir/vegeta.bin" ]; then
    timeout -k 3 120 "$VEGETA" report -type=json "$dir/vegeta.bin" > "$dir/vegeta.json" 2>> "$dir/stderr" || true
    rm -f "$dir/vegeta.bin"
  fi
  log "rep $rep: $op $tool done (rc $rc)"
}
for rep in $(seq 1 "$REPS"); do
  if (( rep % 2 )); then order="perfbase vegeta"; else order="vegeta perfbase"; fi
  for op in $OPS; do
    for tool in $order; do run "$op" "$tool" "$rep"; done
  done
done
for pid in $SERVER_PIDS; do taskset -a -p -c "$OLD_CPUS" "$pid" > /dev/null 2>&1 || true; done

rc=0
python3 - "$OUT" "$REPS" "$D" "$C" "$TARGET" "$OPS" << 'PY' | tee "$OUT/summary.txt" || rc=$?
import json, os, statistics, sys
out, reps, d, c, target, ops = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6].split()
TOOLS = ("perfbase", "vegeta")

def perfbase(dir):
    j = json.load(open(f"{dir}/perfbase.json"))
    # An op is ok when perfbase counted it neither as an error nor outside its success ratio.
    ok = min(j["requests"] - sum((j.get("errors") or {}).values()), round(j["requests"] * j["success_ratio"]))
    errors = j["requests"] - ok
    lat = j["latency_ms"]
    return {"requests": j["requests"], "ok": ok, "errors": errors, "secs": j["duration_s"],
            "mean": lat["mean"], "p99": lat["p99"], "what": ", ".join(f"{k} {v}" for k, v in (j.get("errors") or {}).items())}

def vegeta(dir):
    j = json.load(open(f"{dir}/vegeta.json"))
    ok = round(j["requests"] * j["success"])
    lat = j["latencies"]
    bad = {k: v for k, v in (j.get("status_codes") or {}).items() if not k.startswith("2")}
    what = ", ".join(f"status {k}: {v}" for k, v in bad.items()) + "".join(f"; {e}" for e in (j.get("errors") or [])[:3])
    return {"requests": j["requests"], "ok": ok, "errors": j["requests"] - ok, "secs": (j["duration"] + j["wait"]) / 1e9,
            "mean": lat["mean"] / 1e6, "p99": lat["99th"] / 1e6, "what": what}

runs, problems = {}, []
for op in ops:
    for tool in TOOLS:
        for rep in range(1, reps + 1):
            dir = f"{out}/{op}/{tool}/rep{rep}"
            try:
                rc, ticks, hz, wall_us = map(int, open(f"{dir}/run.txt").read().split())
                r = (perfbase if tool == "perfbase" else vegeta)(dir)
                user, sys_ = map(float, open(f"{dir}/time.txt").read().split()[-2:])
            except Exception as e:
                problems.append(f"{op} {tool} rep {rep}: no result ({type(e).__name__}: {e}); see {dir}")
                continue
            if rc != 0:
                problems.append(f"{op} {tool} rep {rep}: exit code {rc}")
            if r["errors"] or r["ok"] == 0:
                problems.append(f"{op} {tool} rep {rep}: {r['errors']} errors of {r['requests']} requests ({r['what'] or 'no successes'})")
            if r["ok"] == 0:
                continue
            r["ops"] = r["ok"] / r["secs"]
            r["cpu"] = (user + sys_) * 1e6 / r["ok"]
            r["server"] = ticks / hz / (wall_us / 1e6) * 100
            runs.setdefault((op, tool), []).append(r)

med = lambda op, tool, k: statistics.median(r[k] for r in runs[(op, tool)])
each = lambda op, tool, k, f: ", ".join(f.format(r[k]) for r in runs[(op, tool)])
print(f"## perfbase vault vs vegeta {os.path.basename(out)}: {target}, transit, {c} concurrent, {d} s x {reps} reps\n")
for line in open(f"{out}/env.txt"):
    print(f"    {line.rstrip()}")
print()
print("| op | tool | runs | ok ops | errors | ops/s (each run) | mean ms | p99 ms | CPU µs/op | server CPU % |")
print("|---|---|---|---|---|---|---|---|---|---|")
for op in ops:
    for tool in TOOLS:
        if (op, tool) not in runs:
            print(f"| {op} | {tool} | 0/{reps} | | | | | | | |")
            continue
        rs = runs[(op, tool)]
        errs = sum(r["errors"] for r in rs)
        print(f"| {op} | {tool} | {len(rs)}/{reps} | {sum(r['ok'] for r in rs):,} | {errs}{' ⚠' if errs else ''} | "
              f"{med(op, tool, 'ops'):,.0f} ({each(op, tool, 'ops', '{:,.0f}')}) | {med(op, tool, 'mean'):.3f} | "
              f"{med(op, tool, 'p99'):.3f} | {med(op, tool, 'cpu'):.1f} | {med(op, tool, 'server'):.0f} |")
print()
print("| op | ops/s perfbase/vegeta | CPU µs/op perfbase/vegeta |")
print("|---|---|---|")
for op in ops:
    if (op, "perfbase") in runs and (op, "vegeta") in runs:
        print(f"| {op} | {med(op, 'perfbase', 'ops') / med(op, 'vegeta', 'ops'):.2f} | "
              f"{med(op, 'perfbase', 'cpu') / med(op, 'vegeta', 'cpu'):.2f} |")
    else:
        print(f"| {op} | n/a | n/a |")
print("\nCells: medians over the runs. ops/s = successful ops / the tool's own measured span (vegeta: duration + wait). "
      "CPU µs/op = the tool process's user+sys (/usr/bin/time) / its successful ops. "
      "server CPU % = the server's utime+stime over the run's wall time, 100 = its one core.")
if problems:
    print("\nCHECK FAILED: every run must finish with 0 errors:")
    for p in problems:
        print(f"- {p}")
    sys.exit(1)
print("\ncheck: every run exited 0 with 0 errors")
PY
log "raw outputs: $OUT"
exit "$rc"
