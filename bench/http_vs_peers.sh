#!/usr/bin/env bash
# perfbase's HTTP load generator side by side with wrk and oha, against one
# local nginx. See bench/README.md for what is measured and how to read it.
#
#   bench/http_vs_peers.sh                         # full run: closed, open, tls x wrk, oha, perfbase x 3 reps, 10 s each
#   SCENARIOS=h2 TOOLS="h2load oha perfbase" bench/http_vs_peers.sh   # HTTP/2 (h2c) side by side
#   D=3 REPS=1 TOOLS="wrk oha" bench/http_vs_peers.sh
#   SCENARIOS=open TOOLS="oha perfbase" PERFBASE=/path/to/perfbase bench/http_vs_peers.sh
#   SCENARIOS="closed open" TOOLS="perfbase perfbase-dashboard perfbase-tui" bench/http_vs_peers.sh   # the live views' cost
#
# Knobs (environment): D (seconds of load per run, 10), REPS (3), SCENARIOS
# ("closed open tls"; tls = the closed scenario over https:// with a self-signed
# certificate made by openssl; h2 = HTTP/2 with prior knowledge, 4 connections x 25
# streams), TOOLS ("wrk oha perfbase"; h2load, perfbase-dashboard and perfbase-tui too), PORT (18080, first free port
# from there on), PAUSE (2 s between runs), PROFILE (dist: the build bench/build.sh makes when
# the binary is missing; release for the quick build), PERFBASE (target/$PROFILE/perfbase),
# HOST (only 127.0.0.1 is accepted).
#
# nginx (one worker) runs on CPU 0, the load tool on CPU 1. Missing peers are
# installed (Debian: apt-get; oha: cargo install --locked). Raw outputs and the
# final tables land in bench/out/<UTC stamp>/.
set -euo pipefail

BENCH_NAME=http_vs_peers
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
export BENCH_DIR="$HERE"   # where the summaries find bench/peers.py
export PATH="${HOME:-/root}/.cargo/bin:$PATH"

D="${D:-10}"
REPS="${REPS:-3}"
SCENARIOS="${SCENARIOS:-closed open tls}"
TOOLS="${TOOLS:-wrk oha perfbase}"
PORT="${PORT:-18080}"
PAUSE="${PAUSE:-2}"
HOST="${HOST:-127.0.0.1}"
PROFILE="${PROFILE:-dist}"
PERFBASE="${PERFBASE:-$ROOT/target/$PROFILE/perfbase}"
CONNS=50          # connections (closed) / connection cap (open)
RATE=20000        # requested req/s in the open scenario
H2_CONNS=4        # h2: connections
H2_STREAMS=25     # h2: concurrent streams per connection
SERVER_CPU=0
TOOL_CPU=1

# ---------------------------------------------------------------- checks
[[ "$HOST" == "127.0.0.1" ]] \
  || die "refusing to target '$HOST': this benchmark only sends load to 127.0.0.1"
[[ "$D" =~ ^[1-9][0-9]*$ ]] || die "D must be a whole number of seconds (got '$D')"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer (got '$REPS')"
[[ "$PAUSE" =~ ^[0-9]+$ ]] || die "PAUSE must be a whole number of seconds (got '$PAUSE')"
[[ "$PORT" =~ ^[1-9][0-9]*$ ]] && (( PORT >= 1024 && PORT <= 65000 )) \
  || die "PORT must be between 1024 and 65000 (got '$PORT')"
for s in $SCENARIOS; do
  [[ "$s" == closed || "$s" == open || "$s" == tls || "$s" == h2 ]] || die "unknown scenario '$s' (known: closed open tls h2)"
done
for t in $TOOLS; do
  [[ "$t" == wrk || "$t" == oha || "$t" == perfbase || "$t" == h2load || "$t" == perfbase-dashboard || "$t" == perfbase-tui ]] \
    || die "unknown tool '$t' (known: wrk oha perfbase h2load perfbase-dashboard perfbase-tui)"
done
[[ -n "${SCENARIOS// /}" && -n "${TOOLS// /}" ]] || die "SCENARIOS and TOOLS must not be empty"
(( $(nproc) >= 2 )) || die "need 2 CPUs (nginx on CPU $SERVER_CPU, tool on CPU $TOOL_CPU); nproc=$(nproc)"
CAP=$(( D + 5 ))

# ---------------------------------------------------------------- installs
need_cmd taskset util-linux
need_cmd timeout coreutils
need_cmd python3 python3
[[ -x /usr/bin/time ]] || { log "installing time (for /usr/bin/time)"; apt_install time; }
[[ -x /usr/bin/time ]] || die "/usr/bin/time still missing after installing the 'time' package"
need_cmd nginx nginx
wants wrk && need_cmd wrk wrk
wants h2load && need_cmd h2load nghttp2-client
if wants oha && ! have oha; then
  have cargo || die "oha is missing and there is no cargo to build it (install Rust, then: cargo install oha --locked)"
  have cc || { log "installing build-essential (C compiler for oha's dependencies)"; apt_install build-essential; }
  log "cargo install oha --locked (about 5 min on 2 cores; log: /tmp/oha-install.log)"
  CARGO_TARGET_DIR="${OHA_TARGET_DIR:-/tmp/oha-target}" cargo install oha --locked > /tmp/oha-install.log 2>&1 \
    || die "cargo install oha --locked failed; see /tmp/oha-install.log"
  have oha || die "oha still not on PATH after cargo install (is ~/.cargo/bin on PATH?)"
fi
if wants perfbase || wants perfbase-dashboard || wants perfbase-tui; then
  # The default binary is (re)built from this tree, so it is never stale, and the build's
  # time and memory are said; PERFBASE=FILE runs FILE as it is.
  if [[ "$PERFBASE" == "$ROOT/target/$PROFILE/perfbase" ]]; then
    have cargo || die "perfbase is not built and there is no cargo to build it"
    log "building perfbase: bench/build.sh $PROFILE"
    BUILD_LINE="$("$HERE/build.sh" "$PROFILE")" || die "the build failed; no perfbase binary"
    log "$BUILD_LINE"
  fi
  [[ -x "$PERFBASE" ]] || die "PERFBASE=$PERFBASE is not an executable file"
  if [[ " $SCENARIOS " == *" open "* ]] && ! "$PERFBASE" http --help 2>&1 | grep -q -- '--max-inflight'; then
    die "$PERFBASE http --help has no --max-inflight: this perfbase cannot run the open scenario"
  fi
fi
OHA_JSON=()
if wants oha; then
  if oha --help 2>&1 | grep -q -- '--output-format'; then OHA_JSON=(--output-format json); else OHA_JSON=(-j); fi
fi

# ---------------------------------------------------------------- output dir
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
OUT="$HERE/out/$STAMP"
mkdir -p "$OUT"
{
  echo "date_utc: $STAMP"
  echo "host: $(uname -srm), nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "D=${D}s cap=${CAP}s REPS=$REPS PAUSE=${PAUSE}s SCENARIOS='$SCENARIOS' TOOLS='$TOOLS' conns=$CONNS open_rate=$RATE"
  echo "nginx: $(nginx -v 2>&1 | sed 's/^nginx version: //')"
  wants wrk && echo "wrk: $(dpkg-query -W -f '${Version} (Debian package)' wrk 2>/dev/null || wrk -v 2>&1 | head -1)"
  wants oha && echo "oha: $(oha --version 2>&1 | head -1)"
  wants h2load && echo "h2load: $(dpkg-query -W -f '${Version} (Debian package)' nghttp2-client 2>/dev/null)"
  wants perfbase && echo "perfbase: $PERFBASE ($("$PERFBASE" --version 2>&1 | head -1))"
  [[ -n "${BUILD_LINE:-}" ]] && echo "$BUILD_LINE"
  true
} > "$OUT/env.txt"

# ---------------------------------------------------------------- nginx
http_ok() {       # one GET / over bash's /dev/tcp; true on a 200
  local line
  exec 3<> "/dev/tcp/$HOST/$PORT" || return 1
  printf 'GET / HTTP/1.0\r\nHost: %s\r\n\r\n' "$HOST" >&3
  IFS= read -r -t 2 line <&3 || line=""
  exec 3<&- 3>&-
  [[ "$line" == "HTTP/1."?" 200"* ]]
}

for _ in $(seq 20); do port_busy "$PORT" || break; PORT=$(( PORT + 1 )); done
port_busy "$PORT" && die "no free port found near ${PORT}; set PORT"
URL="http://$HOST:$PORT/"
[[ "$URL" =~ ^http://127\.0\.0\.1:[0-9]+/$ ]] || die "refusing to target $URL"
TLS_PORT=$(( PORT + 1 ))
for _ in $(seq 20); do port_busy "$TLS_PORT" || break; TLS_PORT=$(( TLS_PORT + 1 )); done
TLS_URL="https://$HOST:$TLS_PORT/"
H2_PORT=$(( TLS_PORT + 1 ))
for _ in $(seq 20); do port_busy "$H2_PORT" || break; H2_PORT=$(( H2_PORT + 1 )); done
H2_URL="http://$HOST:$H2_PORT/"

NGX="$OUT/nginx"
mkdir -p "$NGX/tmp"
# The tls scenario's certificate: P-256, self-signed for 127.0.0.1, not a CA (webpki refuses
# a CA certificate as a server's own). wrk does not check it, oha runs with --insecure,
# perfbase trusts it with --cacert.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -keyout "$NGX/key.pem" -out "$NGX/cert.pem" -subj "/CN=$HOST" \
  -addext "subjectAltName=IP:$HOST" -addext "basicConstraints=critical,CA:FALSE" \
  > /dev/null 2>&1 || die "openssl could not make a certificate"
cat > "$NGX/nginx.conf" << EOF
worker_processes 1;
daemon off;
pid $NGX/nginx.pid;
error_log $NGX/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_timeout 65s;
    keepalive_requests 1000000;
    client_body_temp_path $NGX/tmp/client_body;
    proxy_temp_path $NGX/tmp/proxy;
    fastcgi_temp_path $NGX/tmp/fastcgi;
    uwsgi_temp_path $NGX/tmp/uwsgi;
    scgi_temp_path $NGX/tmp/scgi;
    server {
        listen $HOST:$PORT backlog=4096;
        location / {
            default_type text/plain;
            return 200 "ok\n";
        }
    }
    server {
        # HTTP/2 with prior knowledge (h2c): every client of this port speaks HTTP/2 at once.
        listen $HOST:$H2_PORT http2 backlog=4096;
        http2_max_concurrent_streams 256;
        location / {
            default_type text/plain;
            return 200 "ok\n";
        }
    }
    server {
        listen $HOST:$TLS_PORT ssl backlog=4096;
        ssl_certificate $NGX/cert.pem;
        ssl_certificate_key $NGX/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        location / {
            default_type text/plain;
            return 200 "ok\n";
        }
    }
}
EOF

NGINX_PID=""
stop_nginx() {
  [[ -n "$NGINX_PID" ]] || return 0
  if kill -0 "$NGINX_PID" 2> /dev/null; then
    kill -QUIT "$NGINX_PID" 2> /dev/null || true
    for _ in $(seq 50); do kill -0 "$NGINX_PID" 2> /dev/null || break; sleep 0.1; done
    kill -TERM "$NGINX_PID" 2> /dev/null || true
  fi
  wait "$NGINX_PID" 2> /dev/null || true
  NGINX_PID=""
}
trap stop_nginx EXIT
trap 'exit 130' INT TERM

taskset -c "$SERVER_CPU" nginx -p "$NGX/" -e "$NGX/error.log" -c "$NGX/nginx.conf" > "$NGX/stdout" 2>&1 &
NGINX_PID=$!
for _ in $(seq 50); do http_ok 2> /dev/null && break; sleep 0.1; done
http_ok 2> /dev/null || { cat "$NGX/error.log" "$NGX/stdout" >&2 2> /dev/null || true; die "nginx did not answer on $URL"; }
WORKER="$(pgrep -P "$NGINX_PID" | head -1)"
[[ -n "$WORKER" ]] || die "could not find nginx's worker process"
log "nginx master $NGINX_PID, worker $WORKER on CPU $SERVER_CPU, $URL"

# ---------------------------------------------------------------- runs
CLK_TCK="$(getconf CLK_TCK)"
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2> /dev/null || echo 0; }

tool_cmd() {      # tool_cmd SCENARIO TOOL RUNDIR -> CMD array
  local scen=$1 tool=$2 dir=$3
  # The live views' cost: perfbase's own run with a dashboard (no browser on it) or the
  # terminal view (on a pseudo-terminal that script(1) gives it; its CPU counts, as a child).
  case "$tool" in
    perfbase-dashboard) tool_cmd "$scen" perfbase "$dir" || return 1; CMD+=(--dashboard 127.0.0.1:0); return 0 ;;
    perfbase-tui) tool_cmd "$scen" perfbase "$dir" || return 1
      CMD=(script -qefc "$(printf '%q ' "${CMD[@]}")--tui" /dev/null); return 0 ;;
  esac
  case "$scen/$tool" in
    closed/wrk)      CMD=(wrk -t1 -c"$CONNS" -d"${D}s" --latency "$URL") ;;
    closed/oha)      CMD=(oha --no-tui -z "${D}s" -c "$CONNS" --worker-threads 1 "${OHA_JSON[@]}" "$URL") ;;
    closed/perfbase) CMD=("$PERFBASE" http "$URL" -c "$CONNS" -t 1 -d "${D}s" --quiet --json "$dir/perfbase.json") ;;
    open/oha)        CMD=(oha --no-tui -z "${D}s" -c "$CONNS" -q "$RATE" --worker-threads 1 "${OHA_JSON[@]}" "$URL") ;;
    open/perfbase)   CMD=("$PERFBASE" http "$URL" -r "$RATE" --max-inflight "$CONNS" -t 1 -d "${D}s" --quiet --json "$dir/perfbase.json") ;;
    tls/wrk)         CMD=(wrk -t1 -c"$CONNS" -d"${D}s" --latency "$TLS_URL") ;;
    tls/oha)         CMD=(oha --no-tui --insecure -z "${D}s" -c "$CONNS" --worker-threads 1 "${OHA_JSON[@]}" "$TLS_URL") ;;
    tls/perfbase)    CMD=("$PERFBASE" http "$TLS_URL" --cacert "$NGX/cert.pem" -c "$CONNS" -t 1 -d "${D}s" --quiet --json "$dir/perfbase.json") ;;
    h2/h2load)       CMD=(h2load -c "$H2_CONNS" -m "$H2_STREAMS" -t 1 -D "$D" "$H2_URL") ;;
    h2/oha)          CMD=(oha --no-tui --http2 -z "${D}s" -c "$H2_CONNS" -p "$H2_STREAMS" --worker-threads 1 "${OHA_JSON[@]}" "$H2_URL") ;;
    h2/perfbase)     CMD=("$PERFBASE" http "$H2_URL" --http2 -c "$H2_CONNS" --streams "$H2_STREAMS" -t 1 -d "${D}s" --quiet --json "$dir/perfbase.json") ;;
    *) return 1 ;;
  esac
}

FIRST_RUN=1
run_one() {       # run_one SCENARIO TOOL REP
  local scen=$1 tool=$2 rep=$3
  local dir="$OUT/$scen/$tool/rep$rep"
  mkdir -p "$dir"
  tool_cmd "$scen" "$tool" "$dir"
  (( FIRST_RUN )) || sleep "$PAUSE"
  FIRST_RUN=0
  printf '%q ' "${CMD[@]}" > "$dir/cmd.txt"; echo >> "$dir/cmd.txt"
  local rc=0 t0 t1 w0 w1
  t0=$(ticks "$WORKER"); w0=$(date +%s%N)
  taskset -c "$TOOL_CPU" /usr/bin/time -o "$dir/time.txt" -f '%U %S %M' \
    timeout -k 3 "$CAP" "${CMD[@]}" > "$dir/stdout" 2> "$dir/stderr" < /dev/null || rc=$?
  w1=$(date +%s%N); t1=$(ticks "$WORKER")
  kill -0 "$WORKER" 2> /dev/null || die "nginx worker $WORKER died during $scen/$tool rep $rep"
  local line
  line="$(python3 -c "$PY" run "$dir" "$tool" "$scen" "$rc" "$(( (w1 - w0) / 1000 ))" "$(( t1 - t0 ))" "$CLK_TCK" "$RATE")" \
    || line="$scen $tool rep$rep: could not summarise the run (see $dir)"
  log "$line"
}

PY="$(cat << 'PYEOF'
import json, os, re, statistics, sys

sys.path.insert(0, os.environ["BENCH_DIR"])
from peers import read, to_ms, p_wrk, p_oha, p_perfbase, spread

def p_h2load(d):
    # h2load prints throughput and counts, and latency as min/max/mean/sd (no percentiles).
    out, r = read(f"{d}/stdout"), {}
    m = re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", out)
    if m: r["rps"] = float(m.group(1))
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout", out)
    if m:
        r["requests"] = int(m.group(3))
        r["errors"] = int(m.group(5)) + int(m.group(6)) + int(m.group(7))
    m = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    if m: r["errors"] = r.get("errors", 0) + int(m.group(3)) + int(m.group(4))
    m = re.search(r"time for request:\s+([\d.]+)(\w+)\s+([\d.]+)(\w+)\s+([\d.]+)(\w+)", out)
    if m: r["note"] = f"mean {to_ms(m.group(5), m.group(6)):.3f} ms (no percentiles)"
    return r

def run(d, tool, scen, rc, wall_us, nticks, clk, rate):
    r = {"tool": tool, "scenario": scen, "rep": os.path.basename(d), "rc": int(rc), "wall_s": int(wall_us) / 1e6}
    try:
        r.update({"wrk": p_wrk, "oha": p_oha, "perfbase": p_perfbase, "h2load": p_h2load,
                  "perfbase-dashboard": p_perfbase, "perfbase-tui": p_perfbase}[tool](d))
    except Exception as e:
        r["parse_error"] = f"{type(e).__name__}: {e}"
    nums = [l.split() for l in read(f"{d}/time.txt").splitlines()]
    nums = [l for l in nums if len(l) == 3 and all(re.fullmatch(r"[\d.]+", x) for x in l)]
    if nums:
        u, s, m = nums[-1]
        r["cpu_s"] = float(u) + float(s)
        r["rss_mib"] = int(m) / 1024
        if r.get("requests"): r["cpu_us_per_req"] = r["cpu_s"] * 1e6 / r["requests"]
    r["nginx_cpu_pct"] = int(nticks) / int(clk) / r["wall_s"] * 100 if r["wall_s"] > 0 else None
    if scen == "open": r["requested_rps"] = int(rate)
    r["ok"] = r["rc"] == 0 and "parse_error" not in r and bool(r.get("requests")) and "cpu_s" in r
    with open(f"{d}/result.json", "w") as f:
        json.dump(r, f, indent=1)
    f = lambda k, nd: "-" if r.get(k) is None else f"{r[k]:.{nd}f}"
    print(f"{scen:6} {tool:8} {os.path.basename(d):5} rc={r['rc']} req/s={f('rps', 0)} "
          f"cpu_us/req={f('cpu_us_per_req', 2)} rss_MiB={f('rss_mib', 1)} p50={f('p50', 3)}ms "
          f"p99={f('p99', 3)}ms nginx={f('nginx_cpu_pct', 0)}%" + ("" if r["ok"] else "  FAILED")
          + (f"  [{r['parse_error']}]" if "parse_error" in r else ""))

def table(out, scenarios, tools, rate):
    n0 = lambda v: f"{v:,.0f}"
    n1 = lambda v: f"{v:.1f}"
    n2 = lambda v: f"{v:.2f}"
    n3 = lambda v: f"{v:.3f}"
    env = read(f"{out}/env.txt").splitlines()
    print(f"## perfbase vs peers, HTTP ({out})\n")
    for l in env: print(f"    {l}")
    for scen in scenarios:
        rows, meds = [], {}
        for tool in tools:
            base = f"{out}/{scen}/{tool}"
            if not os.path.isdir(base): continue
            runs = []
            for rep in sorted(os.listdir(base)):
                try:
                    runs.append(json.loads(read(f"{base}/{rep}/result.json")))
                except ValueError:
                    runs.append({"ok": False})
            ok = [r for r in runs if r.get("ok")]
            col = lambda k: [r[k] for r in ok if r.get(k) is not None]
            meds[tool] = {k: statistics.median(col(k)) for k in ("rps", "cpu_us_per_req") if col(k)}
            notes = []
            bad = [f"{r.get('rep', '?')} rc={r.get('rc', '?')}" for r in runs if not r.get("ok")]
            if bad: notes.append("failed: " + ", ".join(bad))
            errs = col("errors")
            if errs and max(errs) > 0: notes.append(f"errors {spread(errs, n0)}")
            notes += [f"{r.get('rep', '?')}: {r['note']}" if len(runs) > 1 else r["note"]
                      for r in ok if r.get("note")][:3]
            cells = [tool, f"{len(ok)}/{len(runs)}", spread(col("rps"), n0)]
            if scen == "open":
                cells.append(spread([r["rps"] / rate * 100 for r in ok if r.get("rps")], n1))
            cells += [spread(col("cpu_us_per_req"), n2), spread(col("rss_mib"), n1),
                      spread(col("p50"), n3), spread(col("p99"), n3),
                      spread(col("nginx_cpu_pct"), n0), "; ".join(notes)]
            rows.append(cells)
        if not rows: continue
        if scen in ("closed", "tls", "h2"):
            over = " over https (TLS 1.3, P-256)" if scen == "tls" else ""
            what = f"{H2_CONNS} HTTP/2 connections x {H2_STREAMS} streams (h2c)" if scen == "h2" else f"{CONNS} connections{over}"
            print(f"\n### {scen}: {what}, 1 thread, max throughput\n")
            head = ["tool", "ok runs", "req/s", "CPU µs/req", "peak RSS MiB", "p50 ms", "p99 ms", "nginx CPU %", "notes"]
        else:
            print(f"\n### open: fixed rate {rate:,} req/s, at most {CONNS} connections, 1 thread\n")
            head = ["tool", "ok runs", "req/s", "% of requested", "CPU µs/req", "peak RSS MiB", "p50 ms", "p99 ms", "nginx CPU %", "notes"]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for c in rows: print("| " + " | ".join(c) + " |")
        peer = {"open": "oha", "h2": "h2load"}.get(scen, "wrk")
        pb, pr = meds.get("perfbase", {}), meds.get(peer, {})
        ratio = lambda k: f"{pb[k] / pr[k]:.2f}" if pb.get(k) and pr.get(k) else "n/a"
        print()
        if scen == "h2":
            o = meds.get("oha", {})
            vs_oha = lambda k: f"{pb[k] / o[k]:.2f}" if pb.get(k) and o.get(k) else "n/a"
            print(f"perfbase/h2load (medians): req/s {ratio('rps')}, CPU µs/req {ratio('cpu_us_per_req')}; "
                  f"perfbase/oha: req/s {vs_oha('rps')}, CPU µs/req {vs_oha('cpu_us_per_req')}")
        elif scen != "open":
            print(f"perfbase/wrk (medians): req/s {ratio('rps')}, CPU µs/req {ratio('cpu_us_per_req')}")
        else:
            pct = lambda m: f"{m['rps'] / rate * 100:.1f} %" if m.get("rps") else "n/a"
            print(f"perfbase/oha (medians): achieved rate {ratio('rps')} (perfbase {pct(pb)}, oha {pct(pr)} "
                  f"of requested), CPU µs/req {ratio('cpu_us_per_req')}")
        for view in ("perfbase-dashboard", "perfbase-tui"):
            v = meds.get(view, {})
            if v.get("cpu_us_per_req") and pb.get("cpu_us_per_req"):
                print(f"{view}/perfbase (medians): req/s {v['rps'] / pb['rps']:.3f}, "
                      f"CPU µs/req {v['cpu_us_per_req'] / pb['cpu_us_per_req']:.3f}")
    print("\nCells: median over the ok runs (min–max). CPU µs/req = tool user+sys / requests completed. "
          "nginx CPU % = its one worker, 100 = one core.")

CONNS = 50
H2_CONNS, H2_STREAMS = 4, 25
if sys.argv[1] == "run":
    run(*sys.argv[2:])
else:
    CONNS = int(sys.argv[5])
    table(sys.argv[2], sys.argv[3].split(), sys.argv[4].split(), int(sys.argv[6]))
PYEOF
)"

for scen in $SCENARIOS; do
  tools=()
  for tool in $TOOLS; do
    if tool_cmd "$scen" "$tool" /dev/null; then tools+=("$tool"); else log "$scen: $tool has no $scen model, skipped"; fi
  done
  (( ${#tools[@]} )) || continue
  # round-robin: every repetition runs each tool once, so slow drift hits them alike
  for rep in $(seq "$REPS"); do
    for tool in "${tools[@]}"; do
      run_one "$scen" "$tool" "$rep"
    done
  done
done
stop_nginx

python3 -c "$PY" table "$OUT" "$SCENARIOS" "$TOOLS" "$CONNS" "$RATE" | tee "$OUT/results.md"
log "raw outputs: $OUT"
