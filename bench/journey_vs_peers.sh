#!/usr/bin/env bash
# perfbase's multi-step "journey" beside Locust (PyPI), Artillery 2.x (npm) and Gatling 3.x (Maven
# Central, Java DSL), against the reference service `perfbase serve` on 127.0.0.1. The journey:
# once for the whole run, POST /login -> token; then per iteration, with `Authorization: Bearer
# <token>`:
# POST /items (201, {"id":ID}) -> GET /items/{ID} (200) -> DELETE /items/{ID} (204).
# The peers' scripts: bench/journey/locustfile.py, bench/journey/artillery.yml (+ processor),
# bench/journey/gatling/JourneySimulation.java (+ gatling.conf, logback.xml).
#
#   bench/journey_vs_peers.sh                              # rate + closed, 4 tools x 3 reps, 10 s each
#   D=5 REPS=1 TOOLS="locust artillery" bench/journey_vs_peers.sh
#   MODES=closed USERS=20 bench/journey_vs_peers.sh
#
# Modes: rate   = RATE journeys/s for D s (open model: Locust paces one shared schedule with at
#                 most RATE_USERS journeys in flight; Artillery starts RATE new VUs/s, one
#                 journey each, uncapped; Gatling likewise: constantUsersPerSec(RATE) for D s,
#                 one journey per virtual user, uncapped);
#        closed = USERS users each looping the journey back to back for D s (Locust: USERS
#                 users, wait_time constant(0); Artillery: USERS VUs arriving within 1 s, each
#                 looping until D s after the first started; Gatling: atOnceUsers(USERS), each
#                 looping in during(D s), a journey under way at the end being finished).
# Knobs (environment): D (seconds of load per run, 10), REPS (3), MODES ("rate closed"), TOOLS
# ("locust artillery gatling perfbase"), RATE (journeys/s in the rate mode, 200), USERS (closed-loop
# users, 50), RATE_USERS (Locust's in-flight cap in the rate mode, USERS), ARTILLERY_POOL
# (empty: a connection per VU, Artillery's default; N: all VUs share N connections), BASELINE
# (1: one short run per tool first to measure its start-up CPU; 0: none), PORT (18480, first
# free port from there on), PAUSE (2 s between runs), PERFBASE (target/release/perfbase),
# HOST (only 127.0.0.1 is accepted), LOCUST_VERSION (2.47.0), ARTILLERY_VERSION (2.0.21: the
# last 2.x that runs on Node 20; 2.0.22 and later need Node >= 22.13), GATLING_VERSION (3.13.5),
# GATLING_JAVA_OPTS (-Xmx1g; JIT and GC left to the JVM; see -XX:ActiveProcessorCount below).
#
# `perfbase serve` runs on CPU 0, the load tool on CPU 1. The peers are installed when missing:
# Locust into a venv at ~/.cache/bench-locust, Artillery with npm into ~/.cache/bench-artillery,
# Gatling's jars (io.gatling.highcharts:gatling-charts-highcharts and its dependencies, from
# Maven Central with mvn) into ~/.cache/bench-gatling-VERSION/lib and the simulation compiled
# with javac into .../classes (python3-venv, nodejs, npm, default-jdk-headless and maven from
# apt-get). Raw outputs and the tables land in bench/out/journey-<UTC stamp>/.
set -euo pipefail

BENCH_NAME=journey_vs_peers
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
export PATH="${HOME:-/root}/.cargo/bin:$PATH"

D="${D:-10}"
REPS="${REPS:-3}"
MODES="${MODES:-rate closed}"
TOOLS="${TOOLS:-locust artillery gatling perfbase}"
RATE="${RATE:-200}"
USERS="${USERS:-50}"
RATE_USERS="${RATE_USERS:-$USERS}"
ARTILLERY_POOL="${ARTILLERY_POOL:-}"
BASELINE="${BASELINE:-1}"
PORT="${PORT:-18480}"
PAUSE="${PAUSE:-2}"
HOST="${HOST:-127.0.0.1}"
PERFBASE="${PERFBASE:-$ROOT/target/release/perfbase}"
LOCUST_VERSION="${LOCUST_VERSION:-2.47.0}"
ARTILLERY_VERSION="${ARTILLERY_VERSION:-2.0.21}"
GATLING_VERSION="${GATLING_VERSION:-3.13.5}"
GATLING_JAVA_OPTS="${GATLING_JAVA_OPTS:--Xmx1g}"
LOCUST_VENV="${LOCUST_VENV:-${HOME:-/root}/.cache/bench-locust}"
ARTILLERY_DIR="${ARTILLERY_DIR:-${HOME:-/root}/.cache/bench-artillery}"
GATLING_DIR="${GATLING_DIR:-${HOME:-/root}/.cache/bench-gatling-$GATLING_VERSION}"
LOCUSTFILE="$HERE/journey/locustfile.py"
ARTILLERY_YML="$HERE/journey/artillery.yml"
GATLING_SRC="$HERE/journey/gatling"
SERVER_CPU=0
TOOL_CPU=1

# ---------------------------------------------------------------- checks
[[ "$HOST" == "127.0.0.1" ]] \
  || die "refusing to target '$HOST': this benchmark only sends load to 127.0.0.1"
[[ "$D" =~ ^[1-9][0-9]*$ ]] || die "D must be a whole number of seconds (got '$D')"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer (got '$REPS')"
[[ "$RATE" =~ ^[1-9][0-9]*$ ]] || die "RATE must be a positive whole number of journeys/s (got '$RATE')"
[[ "$USERS" =~ ^[1-9][0-9]*$ ]] || die "USERS must be a positive integer (got '$USERS')"
[[ "$RATE_USERS" =~ ^[1-9][0-9]*$ ]] || die "RATE_USERS must be a positive integer (got '$RATE_USERS')"
[[ "$GATLING_VERSION" =~ ^3\.[0-9]+\.[0-9]+$ ]] || die "GATLING_VERSION must be a Gatling 3.x version such as 3.13.5 (got '$GATLING_VERSION')"
[[ -z "$ARTILLERY_POOL" || "$ARTILLERY_POOL" =~ ^[1-9][0-9]*$ ]] || die "ARTILLERY_POOL must be empty or a positive integer (got '$ARTILLERY_POOL')"
[[ "$BASELINE" == 0 || "$BASELINE" == 1 ]] || die "BASELINE must be 0 or 1 (got '$BASELINE')"
[[ "$PAUSE" =~ ^[0-9]+$ ]] || die "PAUSE must be a whole number of seconds (got '$PAUSE')"
[[ "$PORT" =~ ^[1-9][0-9]*$ ]] && (( PORT >= 1024 && PORT <= 65000 )) \
  || die "PORT must be between 1024 and 65000 (got '$PORT')"
for m in $MODES; do
  [[ "$m" == rate || "$m" == closed ]] || die "unknown mode '$m' (known: rate closed)"
done
for t in $TOOLS; do
  [[ "$t" == locust || "$t" == artillery || "$t" == gatling || "$t" == perfbase || "$t" == script ]] \
    || die "unknown tool '$t' (known: locust artillery gatling perfbase script)"
done
[[ -n "${MODES// /}" && -n "${TOOLS// /}" ]] || die "MODES and TOOLS must not be empty"
[[ -f "$LOCUSTFILE" && -f "$ARTILLERY_YML" && -f "$HERE/journey/artillery-processor.js" && -f "$HERE/journey/artillery-no-telemetry.js" ]] \
  || die "bench/journey/ is incomplete (locustfile.py, artillery.yml, artillery-processor.js, artillery-no-telemetry.js)"
[[ -f "$GATLING_SRC/JourneySimulation.java" && -f "$GATLING_SRC/gatling.conf" && -f "$GATLING_SRC/logback.xml" ]] \
  || die "bench/journey/gatling/ is incomplete (JourneySimulation.java, gatling.conf, logback.xml)"
(( $(nproc) >= 2 )) || die "need 2 CPUs (server on CPU $SERVER_CPU, tool on CPU $TOOL_CPU); nproc=$(nproc)"
CAP=$(( D + 30 ))   # every run is killed after this: D + start-up (Node, Python, the JVM) + drain

# ---------------------------------------------------------------- installs
need_cmd taskset util-linux
need_cmd timeout coreutils
need_cmd python3 python3
[[ -x /usr/bin/time ]] || { log "installing time (for /usr/bin/time)"; apt_install time; }
[[ -x /usr/bin/time ]] || die "/usr/bin/time still missing after installing the 'time' package"

LOCUST="$LOCUST_VENV/bin/locust"
if wants locust; then
  if [[ ! -x "$LOCUST" ]] || [[ "$("$LOCUST" --version 2>/dev/null | awk '{print $2}')" != "$LOCUST_VERSION" ]]; then
    if [[ ! -x "$LOCUST_VENV/bin/pip" ]]; then
      # Debian's python3 has no venv/ensurepip without python3-venv
      python3 -m venv "$LOCUST_VENV" 2> /dev/null || { rm -rf "$LOCUST_VENV"; log "installing python3-venv"; apt_install python3-venv; python3 -m venv "$LOCUST_VENV"; } \
        || die "python3 -m venv $LOCUST_VENV failed"
    fi
    log "pip install locust==$LOCUST_VERSION into $LOCUST_VENV (log: $LOCUST_VENV.install.log)"
    "$LOCUST_VENV/bin/pip" install -q "locust==$LOCUST_VERSION" > "$LOCUST_VENV.install.log" 2>&1 \
      || die "pip install locust==$LOCUST_VERSION failed; see $LOCUST_VENV.install.log"
  fi
  "$LOCUST" -f "$LOCUSTFILE" --list > /dev/null 2>&1 || die "locust cannot load $LOCUSTFILE (try: $LOCUST -f $LOCUSTFILE --list)"
fi

ARTILLERY="$ARTILLERY_DIR/node_modules/.bin/artillery"
art_version() { node -p "require('$ARTILLERY_DIR/node_modules/artillery/package.json').version" 2> /dev/null || true; }
if wants artillery; then
  need_cmd node nodejs
  need_cmd npm npm
  if [[ ! -x "$ARTILLERY" || "$(art_version)" != "$ARTILLERY_VERSION" ]]; then
    mkdir -p "$ARTILLERY_DIR"
    # --ignore-scripts: artillery pulls in @playwright/browser-chromium, whose install script
    # downloads a Chrome build from a CDN (unreachable here: "getaddrinfo ENOTFOUND
    # cdn.playwright.dev"); none of the install scripts is needed for HTTP tests.
    log "npm install artillery@$ARTILLERY_VERSION into $ARTILLERY_DIR (about 1 min, 600 MB; log: $ARTILLERY_DIR.install.log)"
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$ARTILLERY_DIR" --no-audit --no-fund --ignore-scripts \
      "artillery@$ARTILLERY_VERSION" > "$ARTILLERY_DIR.install.log" 2>&1 \
      || die "npm install artillery@$ARTILLERY_VERSION failed; see $ARTILLERY_DIR.install.log"
  fi
  [[ -x "$ARTILLERY" ]] || die "no $ARTILLERY after npm install"
fi
# Artillery: no telemetry. ARTILLERY_DISABLE_TELEMETRY alone still posts an anonymised event
# to app.posthog.com at exit (DNS look-ups seen with strace) and waits ~12 s for it to fail;
# the preload stubs that client out. One worker thread (WORKERS; its default on 2 CPUs is
# cpus-1 = 1 anyway).
export ARTILLERY_DISABLE_TELEMETRY=true
ART_ENV=(env WORKERS=1 "NODE_OPTIONS=--require \"$HERE/journey/artillery-no-telemetry.js\"")

# Gatling: its jars from Maven Central (a throwaway pom and `mvn dependency:copy-dependencies`,
# as bench/amqp_vs_perftest.sh fetches PerfTest; not the bundle zip), the simulation compiled
# with javac, run as `java -cp CLASSES:bench/journey/gatling:LIB/* io.gatling.app.Gatling -s
# JourneySimulation -nr` (-nr: no HTML report; bench/journey/gatling is on the class path for its
# gatling.conf and logback.xml). Nothing but 127.0.0.1 may be contacted, and by default Gatling
# 3.13 would (seen with strace):
#  - usage analytics, posted to an analytics service at the start of every run: off in
#    gatling.conf (gatling.data.enableAnalytics = false), and as -D too;
#  - an HTTP warm-up request to https://gatling.io: off in gatling.conf and disableWarmUp();
#  - a look-up of its latest release on search.maven.org at every start, which no setting turns
#    off; it is skipped while a recent check is recorded in Java's user preferences. Those live
#    in GATLING_DIR/prefs (-Djava.util.prefs.userRoot; not ~/.java), seeded with a check dated
#    2100, so none is made;
#  - should any of these come back: -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=9 sends the
#    JDK's own HTTPS clients to a closed port on loopback (no DNS look-up either). Gatling's load
#    goes through its Netty client, which ignores those properties, and the login in before()
#    is plain http to 127.0.0.1.
# --add-opens java.base/java.lang: Gatling's simulation.log writer needs it on Java 17 ("module
# java.base does not open java.lang to unnamed module"); its own launchers pass it.
# -XX:ActiveProcessorCount=2: Gatling 3.13 deadlocks at start where the JVM sees one CPU, as it
# does pinned to CPU $TOOL_CPU (its actor pool has one thread per CPU, and the controller blocks
# that one thread waiting for the data writers: "TimeoutException: Future timed out after [5
# seconds]" at DataWritersStatsEngine.start, then a hang; gatling/gatling issue 4620). The JVM
# is told of two CPUs (so also sizes its GC, G1 then, and Netty's event loops for two) and still
# runs on one.
GATLING_LIB="$GATLING_DIR/lib"
GATLING_CLASSES="$GATLING_DIR/classes"
GATLING_PREFS="$GATLING_DIR/prefs"
GATLING=()
if wants gatling; then
  need_cmd java default-jdk-headless
  need_cmd javac default-jdk-headless
  java_spec="$(java -XshowSettings:properties -version 2>&1 | awk -F' = ' '/java.specification.version/ {print $2}')"
  [[ "$java_spec" =~ ^[0-9]+$ ]] && (( java_spec >= 11 )) \
    || die "Gatling $GATLING_VERSION needs Java 11 or later (java here: ${java_spec:-unknown}); apt-get install default-jdk-headless"
  if [[ ! -f "$GATLING_LIB/gatling-app-$GATLING_VERSION.jar" || ! -f "$GATLING_LIB/gatling-charts-highcharts-$GATLING_VERSION.jar" ]]; then
    need_cmd mvn maven
    pom_dir="$(mktemp -d)"
    cat > "$pom_dir/pom.xml" << POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>local.bench</groupId><artifactId>gatling</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies><dependency><groupId>io.gatling.highcharts</groupId><artifactId>gatling-charts-highcharts</artifactId>
    <version>$GATLING_VERSION</version></dependency></dependencies></project>
POM
    log "mvn dependency:copy-dependencies io.gatling.highcharts:gatling-charts-highcharts:$GATLING_VERSION into $GATLING_LIB (about 30 s, 120 MB; log: $GATLING_DIR.install.log)"
    # -Dmaven.repo.local: Maven's download cache under GATLING_DIR too, not ~/.m2
    (cd "$pom_dir" && mvn -q -B "-Dmaven.repo.local=$GATLING_DIR/m2" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$GATLING_LIB") \
      > "$GATLING_DIR.install.log" 2>&1 \
      || { rm -rf "$pom_dir"; die "mvn could not fetch Gatling $GATLING_VERSION; see $GATLING_DIR.install.log"; }
    rm -rf "$pom_dir"
    [[ -f "$GATLING_LIB/gatling-app-$GATLING_VERSION.jar" ]] || die "no gatling-app-$GATLING_VERSION.jar in $GATLING_LIB after mvn"
  fi
  if [[ ! -f "$GATLING_CLASSES/JourneySimulation.class" || "$GATLING_SRC/JourneySimulation.java" -nt "$GATLING_CLASSES/JourneySimulation.class" ]]; then
    log "javac $GATLING_SRC/JourneySimulation.java into $GATLING_CLASSES"
    rm -rf "$GATLING_CLASSES"
    mkdir -p "$GATLING_CLASSES"
    javac -cp "$GATLING_LIB/*" -d "$GATLING_CLASSES" "$GATLING_SRC/JourneySimulation.java" > "$GATLING_DIR.javac.log" 2>&1 \
      || die "javac JourneySimulation.java against Gatling $GATLING_VERSION failed; see $GATLING_DIR.javac.log"
  fi
  prefs="$GATLING_PREFS/.java/.userPrefs/io/gatling/latestVersion/prefs.xml"
  if ! grep -q 'key="lastCheckTimestamp" value="4102444800000"' "$prefs" 2> /dev/null; then
    mkdir -p "$(dirname "$prefs")"
    cat > "$prefs" << 'XML'
<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE map SYSTEM "http://java.sun.com/dtd/preferences.dtd">
<map MAP_XML_VERSION="1.0">
  <entry key="lastCheckTimestamp" value="4102444800000"/>
</map>
XML
  fi
  read -r -a gatling_opts <<< "$GATLING_JAVA_OPTS"
  GATLING=(java -XX:ActiveProcessorCount=2 "${gatling_opts[@]}" --add-opens=java.base/java.lang=ALL-UNNAMED
           "-Djava.util.prefs.userRoot=$GATLING_PREFS" -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=9
           -Dgatling.data.enableAnalytics=false -cp "$GATLING_CLASSES:$GATLING_SRC:$GATLING_LIB/*")
fi

if [[ ! -x "$PERFBASE" ]]; then
  [[ "$PERFBASE" == "$ROOT/target/release/perfbase" ]] || die "PERFBASE=$PERFBASE is not an executable file"
  have cargo || die "perfbase is not built and there is no cargo to build it"
  log "building perfbase: cargo build --release --bin perfbase"
  cargo build --release --bin perfbase || die "cargo build --release failed; no perfbase binary"
  [[ -x "$PERFBASE" ]] || die "cargo build --release finished but $PERFBASE does not exist"
fi

# ---------------------------------------------------------------- output dir
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
OUT="$HERE/out/journey-$STAMP"
mkdir -p "$OUT"
{
  echo "date_utc: $STAMP"
  echo "host: $(uname -srm), nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "D=${D}s cap=${CAP}s REPS=$REPS PAUSE=${PAUSE}s MODES='$MODES' TOOLS='$TOOLS' RATE=$RATE/s USERS=$USERS RATE_USERS=$RATE_USERS ARTILLERY_POOL=${ARTILLERY_POOL:-per-VU} BASELINE=$BASELINE"
  echo "server: $PERFBASE serve ($("$PERFBASE" --version 2>&1 | head -1))"
  wants locust && echo "locust: $("$LOCUST" --version 2>&1 | head -1)"
  wants artillery && echo "artillery: $(art_version) on node $(node --version)"
  wants gatling && echo "gatling: $GATLING_VERSION (Java DSL) on $(java -version 2>&1 | head -1), java opts: $GATLING_JAVA_OPTS"
  { wants perfbase || wants script; } && echo "perfbase: $PERFBASE ($("$PERFBASE" --version 2>&1 | head -1))"
  true
} > "$OUT/env.txt"

# ---------------------------------------------------------------- the server
for _ in $(seq 20); do port_busy "$PORT" || break; PORT=$(( PORT + 1 )); done
port_busy "$PORT" && die "no free port found near ${PORT}; set PORT"
URL="http://$HOST:$PORT"
[[ "$URL" =~ ^http://127\.0\.0\.1:[0-9]+$ ]] || die "refusing to target $URL"

SRV="$OUT/server"
mkdir -p "$SRV"
SERVER_PID=""
stop_server() {
  [[ -n "$SERVER_PID" ]] || return 0
  if kill -0 "$SERVER_PID" 2> /dev/null; then
    kill -INT "$SERVER_PID" 2> /dev/null || true
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2> /dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2> /dev/null || true
  fi
  wait "$SERVER_PID" 2> /dev/null || true
  SERVER_PID=""
}
trap stop_server EXIT
trap 'exit 130' INT TERM

taskset -c "$SERVER_CPU" "$PERFBASE" serve --host "$HOST" --port "$PORT" > "$SRV/stdout" 2> "$SRV/stderr" < /dev/null &
SERVER_PID=$!
for _ in $(seq 100); do
  grep -q "listening on http://$HOST:$PORT" "$SRV/stdout" 2> /dev/null && port_busy "$PORT" && break
  kill -0 "$SERVER_PID" 2> /dev/null || break
  sleep 0.1
done
if ! grep -q "listening on http://$HOST:$PORT" "$SRV/stdout" 2> /dev/null || ! port_busy "$PORT"; then
  cat "$SRV/stdout" "$SRV/stderr" >&2 2> /dev/null || true
  die "perfbase serve did not come up on $URL"
fi
log "perfbase serve pid $SERVER_PID on CPU $SERVER_CPU, $URL"

# One login by hand: the journey routes must be there before any tool is run.
python3 - "$URL" << 'PYEOF' || die "POST $URL/login did not answer 200 with an access_token: is this perfbase serve new enough to have the journey routes?"
import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/login", data=b'{"user":"bench","password":"bench"}',
                             headers={"Content-Type": "application/json"}, method="POST")
with urllib.request.urlopen(req, timeout=5) as r:
    assert r.status == 200 and json.load(r)["access_token"]
PYEOF

# ---------------------------------------------------------------- perfbase (TODO: the lead)
# run_perfbase MODE DIR: set the global array CMD to perfbase's command for MODE against $URL,
# writing into DIR whatever p_perfbase (in $PY below) reads. The caller runs CMD like the
# peers': pinned to CPU $TOOL_CPU, under /usr/bin/time and `timeout $CAP`, stdout and stderr to
# DIR/stdout and DIR/stderr. Return 1 to skip the run (the table then says so).
#   MODE rate:     RATE journeys/s for D s, at most RATE_USERS journeys in flight
#   MODE closed:   USERS virtual users, each looping the journey back to back, for D s
#   MODE baseline: the smallest run (1 s, 1 journey/s): its CPU is the tool's start-up cost
# The journey: in setup, once: POST /login {"user":"bench","password":"bench"} -> 200
# {"access_token":...}; per iteration with "Authorization: Bearer <token>": POST /items
# {"name":"x"} -> 201 {"id":ID}, GET /items/{ID} -> 200, DELETE /items/{ID} -> 204.
# scenario_of MODE: the [[scenarios]] lines of MODE's load (perfbase's TOML and script runs).
scenario_of() {
  case "$1" in
    rate)     printf '%s\n' "rate = $RATE" "duration = \"${D}s\"" "max_inflight = $RATE_USERS" ;;
    closed)   printf '%s\n' "concurrency = $USERS" "duration = \"${D}s\"" ;;
    baseline) printf '%s\n' "rate = 1" "duration = \"1s\"" ;;
    *) return 1 ;;
  esac
}

run_perfbase() {
  local mode=$1 dir=$2 scenario
  scenario="$(scenario_of "$mode")" || return 1
  # The same journey as the peers': log in once, then create, read and delete with the token
  # and the id, each step's status checked (as Locust's script checks it).
  cat > "$dir/plan.toml" << PLAN
[plan]
name = "journey bench"

[targets.api]
url = "$URL"

[workloads.j]
target = "api"
cookies = false
setup = [
  { name = "login", method = "POST", path = "/login", body = '{"user":"bench","password":"bench"}',
    headers = { Content-Type = "application/json" }, capture = { token = { json = "/access_token" } } },
]
steps = [
  { name = "create", method = "POST", path = "/items", body = '{"name":"x"}',
    headers = { Authorization = "Bearer {{token}}", Content-Type = "application/json" },
    capture = { id = { json = "/id" } }, check = { created = { status = [201] } } },
  { name = "read", path = "/items/{{id}}", headers = { Authorization = "Bearer {{token}}" },
    check = { read = { status = [200] } } },
  { name = "delete", method = "DELETE", path = "/items/{{id}}", headers = { Authorization = "Bearer {{token}}" },
    check = { deleted = { status = [204] } } },
]

[[scenarios]]
name = "$mode"
workload = "j"
$scenario
PLAN
  # One worker thread: the tool has one CPU, as Locust's one process and Artillery's one.
  CMD=("$PERFBASE" run "$dir/plan.toml" -t 1 -q --no-store --out "$dir/out")
}

# run_script MODE DIR: as run_perfbase, with the journey written as a perfbase script
# (bench/journey/script.js) instead of the plan's steps: the scripted workload's cost beside the
# declarative one's (bench/script_vs_peers.sh).
run_script() {
  local mode=$1 dir=$2 scenario
  scenario="$(scenario_of "$mode")" || return 1
  cat > "$dir/plan.toml" << PLAN
[plan]
name = "journey bench (script)"

[targets.api]
url = "$URL"

[workloads.j]
target = "api"
script = "$HERE/journey/script.js"

[[scenarios]]
name = "$mode"
workload = "j"
$scenario
PLAN
  CMD=("$PERFBASE" run "$dir/plan.toml" -t 1 -q --no-store --out "$dir/out")
}

# ---------------------------------------------------------------- the peers' commands
tool_cmd() {      # tool_cmd MODE TOOL DIR -> CMD array; false if TOOL has no such run
  local mode=$1 tool=$2 dir=$3 phases pool=""
  [[ -n "$ARTILLERY_POOL" ]] && pool=",\"http\":{\"pool\":$ARTILLERY_POOL}"
  case "$mode/$tool" in
    rate/locust)
      CMD=("$LOCUST" -f "$LOCUSTFILE" --headless --host "$URL" -u "$RATE_USERS" -r "$RATE_USERS"
           -t "${D}s" --stop-timeout 0 --journey-rate "$RATE" --only-summary --exit-code-on-error 0
           --json-file "$dir/locust") ;;
    closed/locust)
      CMD=("$LOCUST" -f "$LOCUSTFILE" --headless --host "$URL" -u "$USERS" -r "$USERS"
           -t "${D}s" --stop-timeout 0 --journey-rate 0 --only-summary --exit-code-on-error 0
           --json-file "$dir/locust") ;;
    baseline/locust)
      CMD=("$LOCUST" -f "$LOCUSTFILE" --headless --host "$URL" -u 1 -r 1
           -t 1s --stop-timeout 0 --journey-rate 1 --only-summary --exit-code-on-error 0
           --json-file "$dir/locust") ;;
    rate/artillery)
      phases="[{\"duration\":$D,\"arrivalRate\":$RATE}]"
      CMD=("${ART_ENV[@]}" JOURNEY_LOOP_SECONDS=0 "$ARTILLERY" run -t "$URL"
           --overrides "{\"config\":{\"phases\":$phases$pool}}" -o "$dir/report.json" "$ARTILLERY_YML") ;;
    closed/artillery)
      phases="[{\"duration\":1,\"arrivalCount\":$USERS}]"
      CMD=("${ART_ENV[@]}" JOURNEY_LOOP_SECONDS="$D" "$ARTILLERY" run -t "$URL"
           --overrides "{\"config\":{\"phases\":$phases$pool}}" -o "$dir/report.json" "$ARTILLERY_YML") ;;
    baseline/artillery)
      phases="[{\"duration\":1,\"arrivalCount\":1}]"
      CMD=("${ART_ENV[@]}" JOURNEY_LOOP_SECONDS=0 "$ARTILLERY" run -t "$URL"
           --overrides "{\"config\":{\"phases\":$phases$pool}}" -o "$dir/report.json" "$ARTILLERY_YML") ;;
    rate/gatling)
      CMD=("${GATLING[@]}" "-Djourney.url=$URL" -Djourney.mode=rate "-Djourney.rate=$RATE" "-Djourney.duration=$D"
           io.gatling.app.Gatling -s JourneySimulation -nr -rf "$dir/results") ;;
    closed/gatling)
      CMD=("${GATLING[@]}" "-Djourney.url=$URL" -Djourney.mode=closed "-Djourney.users=$USERS" "-Djourney.duration=$D"
           io.gatling.app.Gatling -s JourneySimulation -nr -rf "$dir/results") ;;
    baseline/gatling)
      CMD=("${GATLING[@]}" "-Djourney.url=$URL" -Djourney.mode=baseline -Djourney.duration=1
           io.gatling.app.Gatling -s JourneySimulation -nr -rf "$dir/results") ;;
    */perfbase)
      CMD=()
      run_perfbase "$mode" "$dir" || return 1
      (( ${#CMD[@]} )) || return 1 ;;
    */script)
      CMD=()
      run_script "$mode" "$dir" || return 1 ;;
    *) return 1 ;;
  esac
}

# ---------------------------------------------------------------- runs
CLK_TCK="$(getconf CLK_TCK)"
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2> /dev/null || echo 0; }
server_deletes() {  # the service's own count of DELETE /items/{id} answered (its /stats), or -1
  python3 - "$URL" << 'PYEOF' 2> /dev/null || echo -1
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1] + "/stats", timeout=5) as r:
    print(int(json.load(r)["routes"]["items_delete"]))
PYEOF
}

FIRST_RUN=1
run_one() {       # run_one MODE TOOL REP
  local mode=$1 tool=$2 rep=$3
  local dir="$OUT/$mode/$tool/rep$rep"
  mkdir -p "$dir"
  if ! tool_cmd "$mode" "$tool" "$dir"; then
    log "$mode $tool rep$rep: skipped (no command: run_perfbase is still a TODO?)"
    echo '{"skipped": true}' > "$dir/result.json"
    return 0
  fi
  (( FIRST_RUN )) || sleep "$PAUSE"
  FIRST_RUN=0
  printf '%q ' "${CMD[@]}" > "$dir/cmd.txt"; echo >> "$dir/cmd.txt"
  local rc=0 t0 t1 w0 w1 s0 s1
  s0=$(server_deletes)
  t0=$(ticks "$SERVER_PID"); w0=$(date +%s%N)
  taskset -c "$TOOL_CPU" /usr/bin/time -o "$dir/time.txt" -f '%U %S %M' \
    timeout -k 5 "$CAP" "${CMD[@]}" > "$dir/stdout" 2> "$dir/stderr" < /dev/null || rc=$?
  w1=$(date +%s%N); t1=$(ticks "$SERVER_PID")
  kill -0 "$SERVER_PID" 2> /dev/null || die "perfbase serve ($SERVER_PID) died during $mode/$tool rep $rep"
  s1=$(server_deletes)
  local line
  line="$(python3 -c "$PY" run "$dir" "$tool" "$mode" "$rc" "$(( (w1 - w0) / 1000 ))" "$(( t1 - t0 ))" "$CLK_TCK" \
          "$RATE" "$D" "$(( s0 < 0 || s1 < 0 ? -1 : s1 - s0 ))")" \
    || line="$mode $tool rep$rep: could not summarise the run (see $dir)"
  log "$line"
}

PY="$(cat << 'PYEOF'
import json, os, re, statistics, sys

def read(p):
    try:
        with open(p, errors="replace") as f:
            return f.read()
    except OSError:
        return ""

def p_locust(d):
    # --json-file DIR/locust -> DIR/locust.json: a list of stats entries
    # {"name", "method", "num_requests", "num_failures", ...}; the DELETE entry is
    # "DELETE /items/[id]". Failures include an unexpected status (see the locustfile).
    entries = json.loads(read(f"{d}/locust.json"))
    r = {"journeys": sum(e["num_requests"] - e["num_failures"] for e in entries if e["method"] == "DELETE"),
         "errors": sum(e["num_failures"] for e in entries)}
    err = read(f"{d}/stderr")
    if not any("/login" in e["name"] and e["num_requests"] > e["num_failures"] for e in entries):
        m = re.search(r"ERROR/\S+: (journey: .*)", err)
        raise ValueError(m.group(1) if m else "no successful login")
    notes = []
    m = re.search(r"journey-pacer: scheduled=(\d+) late=(\d+) max_lag_ms=([\d.]+)", err)
    if m and int(m.group(2)):
        notes.append(f"{m.group(2)} journeys started >1 ms late (max {float(m.group(3)):.0f} ms)")
    timed = [e for e in entries if "/login" not in e["name"] and e.get("start_time") and e.get("last_request_timestamp")]
    if timed:  # Locust's own load window: its -t timer runs on gevent's loop clock, a bit short of D
        r["load_s"] = max(e["last_request_timestamp"] for e in timed) - min(e["start_time"] for e in timed)
    if "CPU usage above 90%" in err:
        notes.append("locust warned: CPU above 90%")
    if notes: r["note"] = ", ".join(notes)
    return r

def p_artillery(d):
    # -o DIR/report.json: aggregate.counters: "http.codes.204" (only DELETE answers 204),
    # "errors.<code or message>", "vusers.created", "vusers.failed", "http.codes.<status>".
    text = read(f"{d}/report.json")
    if not text:
        m = re.search(r"^\w*Error: .*", read(f"{d}/stdout") + read(f"{d}/stderr"), re.M)
        raise ValueError(f"no report.json ({m.group(0)})" if m else "no report.json")
    c = json.loads(text)["aggregate"]["counters"]
    codes = {k: v for k, v in c.items() if re.fullmatch(r"http\.codes\.\d+", k)}
    errs = {k[len("errors."):]: v for k, v in c.items() if k.startswith("errors.")}
    r = {"journeys": c.get("http.codes.204", 0),
         "errors": sum(errs.values()) + sum(v for k, v in codes.items() if k[-3] in "45")}
    notes = []
    if c.get("vusers.failed"): notes.append(f"{c['vusers.failed']} of {c.get('vusers.created', 0)} VUs failed")
    if errs: notes.append(", ".join(f"{k} {v}" for k, v in sorted(errs.items())))
    if notes: r["note"] = "; ".join(notes)
    return r

def p_gatling(d):
    # Gatling's console summary on stdout, printed every 5 s (gatling.conf) and once more at the
    # end of the run: the last "---- Requests ----" block counts the whole run, one row per
    # request name, "> NAME | total | OK | KO" (thousands with commas); "delete" is OK only when
    # answered 204 (its check), so its OK count is the completed journeys, and Global's KO every
    # failed request (a status, a missing id, a connection error). "---- Errors ----" rows:
    # "> MESSAGE  COUNT (PCT%)". (Gatling 3.13's simulation.log is a binary format.)
    out, err = read(f"{d}/stdout"), read(f"{d}/stderr")
    if "journey: logged in once" not in out:
        m = re.search(r"journey: POST .*|\w+(?:Exception|Error): .*", out + err)
        raise ValueError(m.group(0)[:200] if m else "no login (see stdout, stderr)")
    blocks = out.split("---- Requests ")
    if len(blocks) < 2:
        m = re.search(r"\w+(?:Exception|Error): .*", out + err)
        raise ValueError("no console summary" + (f" ({m.group(0)[:200]})" if m else ""))
    last = blocks[-1]
    num = lambda x: int(x.replace(",", ""))
    rows = {m.group(1): (num(m.group(2)), num(m.group(3)), num(m.group(4))) for m in
            re.finditer(r"^> (\S.*?)\s*\|\s*([\d,]+) \|\s*([\d,]+) \|\s*([\d,]+)\s*$", last, re.M)}
    if "Global" not in rows:
        raise ValueError("no Global row in the last console summary")
    r = {"journeys": rows.get("delete", (0, 0, 0))[1], "errors": rows["Global"][2]}
    notes = []
    m = re.search(r"waiting:\s*(\d+) / active:\s*(\d+)\s*/ done:\s*(\d+)", last)
    if m and (int(m.group(1)) or int(m.group(2))):
        notes.append(f"{m.group(1)} users waiting, {m.group(2)} active at the end")
    if "---- Errors " in last:
        errs = last.split("---- Errors ", 1)[1].split("\n\n", 1)[0]
        errs = re.findall(r"^> (.*?)\s+([\d,]+)\s+\(\s*[\d.]+%\)\s*$", errs, re.M)
        if errs: notes.append(", ".join(f"{e.strip()[:80]} {n}" for e, n in errs[:3]))
    if notes: r["note"] = "; ".join(notes)
    return r

def p_perfbase(d):
    # perfbase's result: completed journeys are the DELETE step's 204s (as the peers' are);
    # errors every request that failed (a status, a check, a capture, a transport error).
    with open(os.path.join(d, "out", "result.json")) as f:
        r = json.load(f)
    deletes = next((e for e in r.get("endpoints", []) if e["name"] == "delete"), None)
    journeys = int(deletes["status"].get("204", 0)) if deletes else 0
    errors = int(sum(r.get("errors", {}).values()))
    it = r.get("iterations") or {}
    note = "iterations %s (%s failed)" % (it.get("count"), it.get("failed"))
    return {"journeys": journeys, "errors": errors, "note": note}

def run(d, tool, mode, rc, wall_us, nticks, clk, rate, dur, server_dels):
    r = {"tool": tool, "mode": mode, "rep": os.path.basename(d), "rc": int(rc),
         "wall_s": int(wall_us) / 1e6, "d_s": int(dur)}
    try:
        r.update({"locust": p_locust, "artillery": p_artillery, "gatling": p_gatling, "perfbase": p_perfbase,
                  "script": p_perfbase}[tool](d))
    except Exception as e:
        r["parse_error"] = f"{type(e).__name__}: {e}"
    if r.get("load_s") and mode != "baseline" and abs(r["load_s"] - int(dur)) > 0.02 * int(dur):
        r["note"] = ", ".join(x for x in (r.get("note"), f"load window {r['load_s']:.2f} s of D={dur} s") if x)
    nums = [l.split() for l in read(f"{d}/time.txt").splitlines()]
    nums = [l for l in nums if len(l) == 3 and all(re.fullmatch(r"[\d.]+", x) for x in l)]
    if nums:
        u, s, m = nums[-1]
        r["cpu_s"] = float(u) + float(s)
        r["rss_mib"] = int(m) / 1024
    if r.get("journeys") is not None:
        r["jps"] = r["journeys"] / r["d_s"]
        if r["journeys"] and "cpu_s" in r:
            r["cpu_us_per_journey"] = r["cpu_s"] * 1e6 / r["journeys"]
    r["server_cpu_pct"] = int(nticks) / int(clk) / r["wall_s"] * 100 if r["wall_s"] > 0 else None
    if int(server_dels) >= 0: r["server_deletes"] = int(server_dels)
    if mode == "rate": r["requested_jps"] = int(rate)
    # rc 124/137: killed by timeout; anything else non-zero: the tool failed
    r["ok"] = r["rc"] == 0 and "parse_error" not in r and bool(r.get("journeys")) and "cpu_s" in r
    with open(f"{d}/result.json", "w") as f:
        json.dump(r, f, indent=1)
    f = lambda k, nd: "-" if r.get(k) is None else f"{r[k]:.{nd}f}"
    print(f"{mode:8} {tool:9} {r['rep']:5} rc={r['rc']} journeys={r.get('journeys', '-')} journeys/s={f('jps', 1)} "
          f"errors={r.get('errors', '-')} cpu_s={f('cpu_s', 2)} cpu_us/journey={f('cpu_us_per_journey', 1)} "
          f"rss_MiB={f('rss_mib', 1)} server={f('server_cpu_pct', 0)}% server_deletes={r.get('server_deletes', '-')}"
          + ("" if r["ok"] else "  FAILED") + (f"  [{r['parse_error']}]" if "parse_error" in r else ""))

def spread(vals, fmt):
    if not vals: return "n/a"
    med = fmt(statistics.median(vals))
    return med if len(vals) == 1 else f"{med} ({fmt(min(vals))}–{fmt(max(vals))})"

def load(base):
    runs = []
    if os.path.isdir(base):
        for rep in sorted(os.listdir(base)):
            try:
                runs.append(json.loads(read(f"{base}/{rep}/result.json")))
            except ValueError:
                runs.append({"ok": False, "rep": rep})
    return runs

def table(out, modes, tools, rate, users, rate_users):
    n0 = lambda v: f"{v:,.0f}"
    n1 = lambda v: f"{v:.1f}"
    print(f"## perfbase vs peers, HTTP journey: login once; POST /items, GET and DELETE /items/{{id}} ({out})\n")
    for l in read(f"{out}/env.txt").splitlines(): print(f"    {l}")
    startup = {}
    for tool in tools:
        b = [r for r in load(f"{out}/baseline/{tool}") if r.get("cpu_s") is not None and not r.get("skipped")]
        if b: startup[tool] = b[0]["cpu_s"]
    meds = {}
    for mode in modes:
        rows = []
        meds[mode] = {}
        for tool in tools:
            runs = load(f"{out}/{mode}/{tool}")
            if not runs: continue
            if all(r.get("skipped") for r in runs):
                rows.append([tool, "skipped"] + ["-"] * (8 if mode == "rate" else 7) + ["not run (run_perfbase is a TODO)" if tool == "perfbase" else "not run"])
                continue
            ok = [r for r in runs if r.get("ok")]
            col = lambda k: [r[k] for r in ok if r.get(k) is not None]
            meds[mode][tool] = {k: statistics.median(col(k)) for k in ("jps", "cpu_us_per_journey") if col(k)}
            notes = []
            bad = [f"{r.get('rep', '?')} rc={r.get('rc', '?')}" + (f" {r['parse_error']}" if r.get("parse_error") else "")
                   for r in runs if not r.get("ok")]
            if bad: notes.append("failed: " + ", ".join(bad))
            notes += [f"{r.get('rep', '?')}: {r['note']}" if len(runs) > 1 else r["note"] for r in ok if r.get("note")][:3]
            net = [(r["cpu_s"] - startup[tool]) * 1e6 / r["journeys"] for r in ok
                   if tool in startup and r.get("journeys") and r.get("cpu_s") is not None]
            cells = [tool, f"{len(ok)}/{len(runs)}", spread(col("jps"), n1)]
            if mode == "rate":
                cells.append(spread([r["jps"] / rate * 100 for r in ok if r.get("jps") is not None], n1))
            cells += [spread(col("errors"), n0), spread(col("cpu_us_per_journey"), n1), spread(net, n1),
                      spread(col("rss_mib"), n1), spread(col("server_cpu_pct"), n0),
                      spread(col("server_deletes"), n0), "; ".join(notes)]
            rows.append(cells)
        if not rows: continue
        if mode == "rate":
            print(f"\n### rate: fixed {rate:,} journeys/s (Locust: at most {rate_users} in flight; Artillery, Gatling: a new VU per journey)\n")
            head = ["tool", "ok runs", "journeys/s", "% of requested", "errors", "CPU µs/journey",
                    "CPU µs/journey less start-up", "peak RSS MiB", "server CPU %", "server DELETEs", "notes"]
        else:
            print(f"\n### closed: {users} users looping the journey back to back, full speed\n")
            head = ["tool", "ok runs", "journeys/s", "errors", "CPU µs/journey",
                    "CPU µs/journey less start-up", "peak RSS MiB", "server CPU %", "server DELETEs", "notes"]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for c in rows: print("| " + " | ".join(c) + " |")
    if startup:
        print("\nStart-up CPU (one 1 s run of 1 journey/s): " + ", ".join(f"{t} {s:.2f} s" for t, s in startup.items()))
    print("\nCells: median over the ok runs (min–max). journeys = DELETEs answered 204 as each tool counts them; "
          "journeys/s = journeys / D. CPU µs/journey = the tool's user+sys (/usr/bin/time, whole process, start-up "
          "included) / journeys. server CPU % = perfbase serve's process, 100 = one core. server DELETEs = the "
          "service's own /stats count over the run (404s included).\n")
    pb = lambda mode: meds.get(mode, {}).get("perfbase", {})
    ratio = lambda a, b, k: f"x{a[k] / b[k]:.2f}" if a.get(k) and b.get(k) else "n/a"
    if "rate" in meds:
        for peer, m in meds["rate"].items():
            if peer not in ("perfbase", "script"):
                print(f"rate {rate}/s: perfbase/{peer}: journeys/s {ratio(pb('rate'), m, 'jps')}, "
                      f"CPU per journey {ratio(pb('rate'), m, 'cpu_us_per_journey')}")
    closed = {t: m for t, m in meds.get("closed", {}).items() if t not in ("perfbase", "script") and m.get("jps")}
    if closed:
        best = max(closed, key=lambda t: closed[t]["jps"])
        print(f"perfbase/{best}: journeys/s {ratio(pb('closed'), closed[best], 'jps')}, "
              f"CPU per journey {ratio(pb('closed'), closed[best], 'cpu_us_per_journey')}")
    else:
        print("perfbase/PEER: n/a (no peer completed a closed run)")

if sys.argv[1] == "run":
    run(*sys.argv[2:])
else:
    table(sys.argv[2], sys.argv[3].split(), sys.argv[4].split(), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]))
PYEOF
)"

if (( BASELINE )); then
  for tool in $TOOLS; do run_one baseline "$tool" 1; done
fi
# round-robin: every repetition runs each tool once, so slow drift hits them alike
for rep in $(seq "$REPS"); do
  for mode in $MODES; do
    for tool in $TOOLS; do
      run_one "$mode" "$tool" "$rep"
    done
  done
done
stop_server

python3 -c "$PY" table "$OUT" "$MODES" "$TOOLS" "$RATE" "$USERS" "$RATE_USERS" | tee "$OUT/results.md"
log "raw outputs: $OUT"
