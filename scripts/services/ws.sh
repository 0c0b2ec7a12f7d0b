# shellcheck shell=bash
# scripts/services/ws.sh, sourced by scripts/services.sh: a real WebSocket echo server for the
# tests of perfbase's WebSocket driver. It is our own small Go program,
# scripts/services/ws/echo.go, on github.com/coder/websocket v1.8.15 (the module and go.sum
# beside it pin the version and its hash), built with Go (on PATH or in /usr/local/go/bin) from
# the Go module proxy into .services/ws/bin/ws_echo, once per machine (again when echo.go,
# go.mod or go.sum change: bin/VERSION holds their sha256). The caches are GO_SCRATCH's,
# deleted when `up` ends.
#
# ws: two processes of that binary, on 127.0.0.1 from port 15061 upward, one after the other:
#   plain  ws://127.0.0.1:PORT/echo and http://127.0.0.1:PORT/stats
#   tls    wss://127.0.0.1:PORT/echo and https://127.0.0.1:PORT/stats, with a serving
#          certificate from our own CA (EC P-256, subjectAltName IP:127.0.0.1, DNS:localhost)
#          made once with openssl in .services/ws/tls; TLS 1.2 or 1.3, ALPN http/1.1 only
# /echo writes every text or binary message back unchanged, in order; a text message holding
# "delay_ms":N is echoed N ms late (at most 60 s), holding up the connection's later ones.
# /stats is {"open","accepted","messages","bytes"} of its process since its start. `up` waits
# until each port accepts TCP, reads /stats with curl (the TLS one checked against our CA),
# then makes one real WebSocket round trip to each (python3's standard library: handshake,
# one masked text frame, its echo, a close), so each process starts counting at accepted 1,
# messages 1. `down --purge` keeps the binary. As root the servers run as a system user `ws`,
# with the open-files limit raised to at least WS_NOFILE (12,000 idle connections are tested).
# Logs in .services/ws/NAME.log.

WS_DIR="$BASE/ws"
WS_SRC="$ROOT/scripts/services/ws"
WS_BIN="$WS_DIR/bin"
WS_TLS="$WS_DIR/tls"
WS_USER=ws
WS_FIRST_PORT=15061
WS_MODULE=github.com/coder/websocket
WS_VERSION=v1.8.15
WS_NOFILE=65536
# The servers, in the order of their ports (the Nth from WS_FIRST_PORT + N - 1 upward).
WS_SERVERS=(plain tls)

ws_pid() { cat "$WS_DIR/$1.pid" 2>/dev/null; }
ws_port() { cat "$WS_DIR/$1.port" 2>/dev/null; }

# ws_stamp: what bin/VERSION holds after a build of the current sources.
ws_stamp() {
  local sum
  sum=$(cd "$WS_SRC" && cat echo.go go.mod go.sum | sha256sum) || return 1
  echo "$WS_MODULE $WS_VERSION src-sha256 ${sum%% *}"
}

# ws_running SERVER: the process of SERVER's pid file is alive and runs ws_echo, not a
# recycled pid, not a zombie.
ws_running() {
  local pid
  pid=$(ws_pid "$1") || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = ws_echo ] || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# ws_built: the binary is there, built from the current sources (bin/VERSION, written last).
ws_built() {
  [ -x "$WS_BIN/ws_echo" ] && [ "$(cat "$WS_BIN/VERSION" 2>/dev/null)" = "$(ws_stamp)" ]
}

# ws_build: ws_echo from scripts/services/ws, a module of its own whose go.sum pins
# coder/websocket's hash (so no checksum database is asked). Nothing is written beside the
# sources: -mod=readonly, the binary goes to WS_BIN.
ws_build() {
  local go start=$SECONDS out stamp
  go=$(find_go) || die "ws: the echo server is built from source and needs Go (https://go.dev/dl, into /usr/local/go)"
  stamp=$(ws_stamp) || die "ws: cannot read the sources in $WS_SRC"
  log "building the WebSocket echo server ($WS_MODULE $WS_VERSION) with $("$go" env GOVERSION) into $WS_BIN (once per machine)"
  mkdir -p "$WS_BIN"
  rm -f "$WS_BIN/VERSION"
  # Niced, as grpc's build; -buildvcs=false: the sources lie in this repository, whose state
  # the binary need not record; -trimpath keeps the repository's path out of it.
  (cd "$WS_SRC" && GOFLAGS=-mod=readonly GOWORK=off nice -n 10 "$go" build -buildvcs=false \
    -trimpath -o "$WS_BIN/ws_echo.new" .) >&2 || die "go build of $WS_SRC failed"
  mv -f "$WS_BIN/ws_echo.new" "$WS_BIN/ws_echo"
  out=$("$go" version -m "$WS_BIN/ws_echo") || die "go version -m $WS_BIN/ws_echo failed"
  grep -Eq "^[[:space:]]+dep[[:space:]]+${WS_MODULE//./\\.}[[:space:]]+${WS_VERSION//./\\.}([[:space:]]|$)" <<<"$out" ||
    die "$WS_BIN/ws_echo is not linked against $WS_MODULE $WS_VERSION (go version -m)"
  echo "$stamp" >"$WS_BIN/VERSION"
  log "WebSocket echo server built in $((SECONDS - start)) s"
}

# ws_pki: the CA and the TLS server's certificate (make_pki).
ws_pki() {
  make_pki "$WS_TLS" ws "$WS_USER"
}

# ws_accepts PORT: something accepts a TCP connection on 127.0.0.1:PORT.
ws_accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ws_ready SERVER PORT: our process runs and its port accepts TCP.
ws_ready() { ws_running "$1" && ws_accepts "$2"; }

# ws_start SERVER N: starts SERVER (the Nth, 0-based) on its port, detached (own session, no
# lock fd, no terminal) so that it outlives this script; setsid and setpriv exec, so $! is the
# server's pid. The open-files limit: the hard one raised to WS_NOFILE as root (the soft one
# follows in the server, which raises it to the hard one); waits until the port accepts TCP.
ws_start() {
  local s=$1 n=$2 port pid mark logf=$WS_DIR/$1.log run=() args
  port=$(pick_port "$WS_DIR/$s.port" $((WS_FIRST_PORT + n)))
  args=("$WS_BIN/ws_echo" -addr "127.0.0.1:$port")
  if [ "$s" = tls ]; then args+=(-tls-cert "$WS_TLS/server.crt" -tls-key "$WS_TLS/server.key"); fi
  touch "$logf"
  if is_root; then
    chown "$WS_USER:" "$logf"
    run=(setpriv --reuid="$WS_USER" --regid="$WS_USER" --init-groups)
  fi
  rm -f "$WS_DIR/$s.pid"
  mark=$(stat -c %s "$logf")
  log "starting ws $s on 127.0.0.1:$port (log $logf)"
  (
    if is_root && [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt $WS_NOFILE ]; then
      ulimit -Hn $WS_NOFILE 2>/dev/null || true
    fi
    cd / && exec setsid "${run[@]}" "${args[@]}" </dev/null >>"$logf" 2>&1
  ) 9>&- &
  pid=$!
  echo "$pid" >"$WS_DIR/$s.pid"
  wait_ready "ws $s" "$pid" "$logf" "$mark" 120 "accept TCP on 127.0.0.1:$port" ws_ready "$s" "$port"
}

# ws_schemes SERVER: sets WS_HTTP (http or https) and WS_WS (ws or wss) for SERVER.
ws_schemes() {
  if [ "$1" = tls ]; then WS_HTTP=https WS_WS=wss; else WS_HTTP=http WS_WS=ws; fi
}

# ws_stats URL: /stats's JSON, read with curl (our CA for https).
ws_stats() {
  curl --noproxy '*' -sS -f -m 5 --cacert "$WS_TLS/ca.crt" "$1"
}

# ws_roundtrip URL CA: one WebSocket round trip with python3's standard library: the opening
# handshake (101 and the right Sec-WebSocket-Accept), one masked text frame, its echo
# unchanged, then a close frame (1000) answered by the server's.
ws_roundtrip() {
  python3 - "$1" "$2" <<'EOF'
import base64, hashlib, os, socket, ssl, sys, urllib.parse

url, ca = sys.argv[1], sys.argv[2]
u = urllib.parse.urlsplit(url)
sock = socket.create_connection((u.hostname, u.port), timeout=5)
if u.scheme == "wss":
    sock = ssl.create_default_context(cafile=ca).wrap_socket(sock, server_hostname=u.hostname)

def fail(why):
    sys.exit("ws round trip to %s: %s" % (url, why))

def read_until(buf, n):
    while len(buf) < n:
        d = sock.recv(65536)
        if not d:
            fail("connection closed after %d bytes" % len(buf))
        buf += d
    return buf

def masked(opcode, data):
    mask = os.urandom(4)
    return bytes([0x80 | opcode, 0x80 | len(data)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))

key = base64.b64encode(os.urandom(16)).decode()
sock.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (u.path, u.netloc, key)).encode())
buf = b""
while b"\r\n\r\n" not in buf:
    buf = read_until(buf, len(buf) + 1)
head, buf = buf.split(b"\r\n\r\n", 1)
lines = head.decode("latin-1").split("\r\n")
if lines[0].split()[1:2] != ["101"]:
    fail("handshake answered %r" % lines[0])
headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l)}
want = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
if headers.get("sec-websocket-accept") != want:
    fail("wrong Sec-WebSocket-Accept %r" % headers.get("sec-websocket-accept"))

msg = b"perfbase services check"
sock.sendall(masked(0x1, msg))
buf = read_until(buf, 2 + len(msg))
if buf[:2] != bytes([0x81, len(msg)]) or buf[2:2 + len(msg)] != msg:
    fail("echo was %r" % buf[:2 + len(msg)])
buf = buf[2 + len(msg):]
sock.sendall(masked(0x8, (1000).to_bytes(2, "big")))
buf = read_until(buf, 2)
if buf[0] != 0x88:
    fail("close answered with %r" % buf[:2])
sock.close()
EOF
}

# ws_check: /stats of each server answers JSON, then one real WebSocket round trip to each.
ws_check() {
  local s p out
  command -v python3 >/dev/null 2>&1 || ensure_pkg python3
  for s in "${WS_SERVERS[@]}"; do
    p=$(ws_port "$s")
    ws_schemes "$s"
    out=$(ws_stats "$WS_HTTP://127.0.0.1:$p/stats") || out=""
    if [[ "$out" != '{"open":'* ]]; then
      die "ws: $s (127.0.0.1:$p) did not answer GET /stats${out:+ (got: $out)}; see $WS_DIR/$s.log"
    fi
    ws_roundtrip "$WS_WS://127.0.0.1:$p/echo" "$WS_TLS/ca.crt" >&2 ||
      die "ws: $s (127.0.0.1:$p) failed a WebSocket echo round trip; see $WS_DIR/$s.log"
  done
}

ws_up() {
  local start=$SECONDS i s
  if is_root; then ensure_user "$WS_USER"; fi
  mkdir -p "$WS_DIR"
  if all_running ws_running "${WS_SERVERS[@]}"; then
    log "ws already running (plain pid $(ws_pid plain), port $(ws_port plain); tls pid $(ws_pid tls), port $(ws_port tls))"
    return 0
  fi
  command -v curl >/dev/null 2>&1 || ensure_pkg curl
  ws_built || ws_build
  ws_pki
  # The servers keep no state that matters across a restart: the missing ones start.
  for i in "${!WS_SERVERS[@]}"; do
    s=${WS_SERVERS[$i]}
    if ws_running "$s"; then
      log "ws $s already running (pid $(ws_pid "$s"), port $(ws_port "$s"))"
    else
      ws_start "$s" "$i"
    fi
  done
  ws_check
  log "ws up in $((SECONDS - start)) s: plain 127.0.0.1:$(ws_port plain) (pid $(ws_pid plain)); tls 127.0.0.1:$(ws_port tls) (pid $(ws_pid tls))"
}

ws_down() {
  local s
  if ! any_running ws_running "${WS_SERVERS[@]}"; then
    log "ws not running"
    return 0
  fi
  for s in "${WS_SERVERS[@]}"; do
    if ws_running "$s"; then stop_pid "ws $s" "$(ws_pid "$s")" "$WS_DIR/$s.log"; fi
  done
}

svc_ws() {
  local s
  case $1 in
  up) ws_up ;;
  down) ws_down ;;
  purge)
    log "removing $WS_DIR but the binary in it (bin)"
    if [ -d "$WS_DIR" ]; then find "$WS_DIR" -mindepth 1 -maxdepth 1 ! -name bin -exec rm -rf {} +; fi
    ;;
  env)
    if ! all_running ws_running "${WS_SERVERS[@]}"; then
      log "ws is not running (both servers): run scripts/services.sh up ws"
      return 1
    fi
    echo "export PERFBASE_WS_URL='ws://127.0.0.1:$(ws_port plain)/echo'"
    echo "export PERFBASE_WS_TLS_URL='wss://127.0.0.1:$(ws_port tls)/echo'"
    echo "export PERFBASE_WS_CA='$WS_TLS/ca.crt'"
    echo "export PERFBASE_WS_STATS_URL='http://127.0.0.1:$(ws_port plain)/stats'"
    echo "export PERFBASE_WS_TLS_STATS_URL='https://127.0.0.1:$(ws_port tls)/stats'"
    echo "export PERFBASE_WS_PID=$(ws_pid plain)"
    echo "export PERFBASE_WS_TLS_PID=$(ws_pid tls)"
    ;;
  status)
    if any_running ws_running "${WS_SERVERS[@]}"; then
      for s in "${WS_SERVERS[@]}"; do
        if ws_running "$s"; then
          ws_schemes "$s"
          echo "ws $s: running, pid $(ws_pid "$s"), $WS_WS://127.0.0.1:$(ws_port "$s")/echo$([ "$s" = tls ] && echo ", CA $WS_TLS/ca.crt")"
        else
          echo "ws $s: stopped"
        fi
      done
    elif ws_built; then
      echo "ws: stopped, binary in $WS_BIN"
    else
      echo "ws: stopped, not built"
    fi
    ;;
  esac
}
