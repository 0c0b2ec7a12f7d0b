# shellcheck shell=bash
# scripts/services/grpc.sh, sourced by scripts/services.sh: real gRPC servers for the grpc
# driver's tests and bench/grpc_vs_ghz.sh, gRPC-Go's own example servers (there is no Debian
# package of them: they are built here from the Go module of grpc-go's examples).
#
# grpc: five processes of four gRPC-Go example servers (google.golang.org/grpc/examples at
# v0.0.0-20260825154716-030ee8becb20, the newest the module proxy serves (the examples module
# has no tags), linked against google.golang.org/grpc v1.85.0, the release of that cycle),
# each on 127.0.0.1 from port 15051 upward, one port after the other in this order:
#   route_guide      routeguide.RouteGuide over h2c (GetFeature unary, ListFeatures server
#                    streaming, RecordRoute client streaming, RouteChat bidi), its 100
#                    features the copy of route_guide_db.json compiled into the server
#   route_guide_tls  the same server with -tls: a serving certificate from our own CA (EC
#                    P-256, subjectAltName IP:127.0.0.1, DNS:localhost), made once with openssl
#                    in .services/grpc/tls; gRPC-Go refuses a TLS client that negotiates no
#                    ALPN (h2), TLS 1.2 at least
#   greeter          helloworld.Greeter/SayHello (logs every request it gets)
#   deadline         grpc.examples.echo.Echo: UnaryEcho and BidirectionalStreamingEcho answer
#                    after 1.5 s when the message is exactly "delay", else at once
#   reflection       helloworld.Greeter and grpc.examples.echo.Echo (UnaryEcho) with the server
#                    reflection service (grpc.reflection.v1 and v1alpha)
# The .proto files they serve are copied into .services/grpc/proto, under their paths in the
# module (route_guide/routeguide/route_guide.proto, helloworld/helloworld/helloworld.proto,
# features/proto/echo/echo.proto), for a client's --proto. The first `up` builds the four
# binaries with Go (>= 1.26, on PATH or in /usr/local/go/bin, and the Go module proxy) into
# .services/grpc/bin (route_guide_server, greeter_server, deadline_server, reflection_server),
# once per machine: the examples module is copied out of the module cache into a throw-away
# module (.services/grpc/build, `module local/grpcbuild`, a `replace` of the examples module by
# that copy, `go get google.golang.org/grpc@v1.85.0`), where the servers' listen addresses are
# set to 127.0.0.1 (upstream, greeter, deadline and reflection listen on every interface), and
# each command gets a `go build -o` of its own (two of the packages are named `server`, so one
# `go build -o DIR/` of all four would give them the same file name; the build cache makes the
# later ones cheap). The caches are GO_SCRATCH's, deleted when `up` ends. `up` waits until each
# port accepts TCP, then makes one real call of each server with curl (HTTP/2; the TLS one
# checked against our CA). `down --purge` keeps the binaries and the protos. As root the
# servers run as a system user `grpc`. Logs in .services/grpc/NAME.log.

GRPC_DIR="$BASE/grpc"
GRPC_EXAMPLES_MODULE=google.golang.org/grpc/examples
GRPC_EXAMPLES_VERSION=v0.0.0-20260825154716-030ee8becb20
GRPC_VERSION=v1.85.0
GRPC_BIN="$GRPC_DIR/bin"
GRPC_PROTO="$GRPC_DIR/proto"
GRPC_TLS="$GRPC_DIR/tls"
GRPC_USER=grpc
GRPC_FIRST_PORT=15051
# The servers, in the order of their ports (the Nth from GRPC_FIRST_PORT + N - 1 upward).
GRPC_SERVERS=(route_guide route_guide_tls greeter deadline reflection)
# The commands built, each `binary-name=package`.
GRPC_COMMANDS=(
  route_guide_server=google.golang.org/grpc/examples/route_guide/server
  greeter_server=google.golang.org/grpc/examples/helloworld/greeter_server
  deadline_server=google.golang.org/grpc/examples/features/deadline/server
  reflection_server=google.golang.org/grpc/examples/features/reflection/server
)
# The .proto files copied into GRPC_PROTO, by their path in the examples module.
GRPC_PROTOS=(route_guide/routeguide/route_guide.proto helloworld/helloworld/helloworld.proto
  features/proto/echo/echo.proto)
# What bin/VERSION holds after a build of these pins (another content rebuilds).
GRPC_STAMP="$GRPC_EXAMPLES_MODULE $GRPC_EXAMPLES_VERSION google.golang.org/grpc $GRPC_VERSION listen 127.0.0.1"

grpc_pid() { cat "$GRPC_DIR/$1.pid" 2>/dev/null; }
grpc_port() { cat "$GRPC_DIR/$1.port" 2>/dev/null; }

# grpc_bin_name SERVER: the binary that SERVER runs.
grpc_bin_name() {
  case $1 in
  route_guide | route_guide_tls) echo route_guide_server ;;
  greeter) echo greeter_server ;;
  deadline) echo deadline_server ;;
  reflection) echo reflection_server ;;
  *) die "grpc: unknown server $1" ;;
  esac
}

# grpc_running SERVER: the process of SERVER's pid file is alive and runs its binary (the
# kernel's comm keeps 15 characters of the name), not a recycled pid, not a zombie.
grpc_running() {
  local pid bin
  pid=$(grpc_pid "$1") || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  bin=$(grpc_bin_name "$1")
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "${bin:0:15}" ] || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# grpc_built: the four binaries and the protos are there, from a build of the pinned versions
# (bin/VERSION, written last by grpc_build).
grpc_built() {
  local c p
  [ "$(cat "$GRPC_BIN/VERSION" 2>/dev/null)" = "$GRPC_STAMP" ] || return 1
  for c in "${GRPC_COMMANDS[@]}"; do [ -x "$GRPC_BIN/${c%%=*}" ] || return 1; done
  for p in "${GRPC_PROTOS[@]}"; do [ -s "$GRPC_PROTO/$p" ] || return 1; done
}

# grpc_patch_listen SRC: the examples' servers listen on 127.0.0.1 only. Upstream, greeter,
# deadline and reflection listen on ":PORT" (every interface) and route_guide on
# "localhost:PORT"; each file must come out with exactly one 127.0.0.1 listen address, so a
# new pinned version whose code moved fails here instead of listening everywhere. (The
# deadline server's own client, which it dials at localhost:PORT, is left as it is.)
grpc_patch_listen() {
  local src=$1 f
  sed -i 's/fmt\.Sprintf("\(localhost\)\{0,1\}:%d", \*port)/fmt.Sprintf("127.0.0.1:%d", *port)/' \
    "$src/route_guide/server/server.go" "$src/helloworld/greeter_server/main.go" \
    "$src/features/reflection/server/main.go"
  sed -i 's/address := fmt\.Sprintf(":%v", \*port)/address := fmt.Sprintf("127.0.0.1:%v", *port)/' \
    "$src/features/deadline/server/main.go"
  for f in route_guide/server/server.go helloworld/greeter_server/main.go \
    features/reflection/server/main.go features/deadline/server/main.go; do
    [ "$(grep -c '"127\.0\.0\.1:%[dv]"' "$src/$f")" = 1 ] ||
      die "grpc: could not set the listen address of $f to 127.0.0.1 (in $src): check the pinned version's code"
  done
}

# grpc_build: the four example servers from the examples module, in a throw-away module that
# replaces it by a patched copy, and the protos copied out of it.
grpc_build() {
  local go moddir dir=$GRPC_DIR/build start=$SECONDS c name pkg p out
  go=$(find_go) || die "grpc: the example servers are built from source and need Go >= 1.26 (https://go.dev/dl, into /usr/local/go)"
  log "building gRPC-Go's example servers ($GRPC_EXAMPLES_MODULE $GRPC_EXAMPLES_VERSION, grpc $GRPC_VERSION) with $("$go" env GOVERSION) into $GRPC_BIN (once per machine)"
  moddir=$(cd / && "$go" mod download -json "$GRPC_EXAMPLES_MODULE@$GRPC_EXAMPLES_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p') || moddir=
  if [ -z "$moddir" ] || [ ! -d "$moddir" ]; then
    die "go mod download $GRPC_EXAMPLES_MODULE@$GRPC_EXAMPLES_VERSION failed"
  fi
  rm -rf "$dir"
  mkdir -p "$dir" "$GRPC_BIN"
  # A copy, since the module cache is read-only; the replace makes the build use it.
  cp -R "$moddir" "$dir/examples"
  chmod -R u+w "$dir/examples"
  grpc_patch_listen "$dir/examples"
  printf 'module local/grpcbuild\n\ngo 1.26.0\n\nrequire %s %s\n\nreplace %s => ./examples\n' \
    "$GRPC_EXAMPLES_MODULE" "$GRPC_EXAMPLES_VERSION" "$GRPC_EXAMPLES_MODULE" >"$dir/go.mod"
  # The examples' go.mod requires an older grpc (their own tree's, by a replace that applies
  # only when they are the main module): the release is asked for here.
  (cd "$dir" && GOFLAGS=-mod=mod "$go" get "google.golang.org/grpc@$GRPC_VERSION") >&2 ||
    die "go get google.golang.org/grpc@$GRPC_VERSION failed (in $dir)"
  rm -f "$GRPC_BIN/VERSION"
  for c in "${GRPC_COMMANDS[@]}"; do
    name=${c%%=*} pkg=${c#*=}
    # Niced: the build must not starve whatever else the machine runs (the servers are not
    # niced). -buildvcs=false: .services lies in this repository, whose commit is not grpc's.
    # -trimpath is harmless here: the only runtime path the examples derive from their source
    # (data.Path) is route_guide's default TLS certificate, and -cert_file/-key_file are given.
    (cd "$dir" && GOFLAGS=-mod=mod nice -n 10 "$go" build -buildvcs=false -trimpath \
      -o "$GRPC_BIN/$name.new" "$pkg") >&2 || die "go build of $pkg failed (in $dir)"
    mv -f "$GRPC_BIN/$name.new" "$GRPC_BIN/$name"
    out=$("$go" version -m "$GRPC_BIN/$name") || die "go version -m $GRPC_BIN/$name failed"
    grep -Eq "^[[:space:]]+dep[[:space:]]+google\.golang\.org/grpc[[:space:]]+$GRPC_VERSION([[:space:]]|$)" <<<"$out" ||
      die "$GRPC_BIN/$name is not linked against google.golang.org/grpc $GRPC_VERSION (go version -m)"
  done
  rm -rf "$GRPC_PROTO"
  for p in "${GRPC_PROTOS[@]}"; do
    mkdir -p "$GRPC_PROTO/$(dirname "$p")"
    cp "$moddir/$p" "$GRPC_PROTO/$p" || die "grpc: the examples module has no $p"
    chmod 644 "$GRPC_PROTO/$p"
  done
  rm -rf "$dir"
  echo "$GRPC_STAMP" >"$GRPC_BIN/VERSION"
  grpc_built || die "grpc: the build left the binaries or protos incomplete in $GRPC_DIR"
  log "gRPC-Go's example servers built in $((SECONDS - start)) s"
}

# grpc_pki: the CA and route_guide_tls's serving certificate (make_pki).
grpc_pki() {
  make_pki "$GRPC_TLS" grpc "$GRPC_USER"
}

# grpc_args SERVER PORT: SERVER's command line (its binary, then its flags).
grpc_args() {
  local s=$1 port=$2
  GRPC_ARGS=("$GRPC_BIN/$(grpc_bin_name "$s")" -port "$port")
  if [ "$s" = route_guide_tls ]; then
    GRPC_ARGS+=(-tls -cert_file "$GRPC_TLS/server.crt" -key_file "$GRPC_TLS/server.key")
  fi
}

# grpc_accepts PORT: something accepts a TCP connection on 127.0.0.1:PORT.
grpc_accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# grpc_ready SERVER PORT: our process runs and its port accepts TCP.
grpc_ready() { grpc_running "$1" && grpc_accepts "$2"; }

# grpc_start SERVER N: starts SERVER (the Nth, 0-based) on its port, detached (own session, no
# lock fd, no terminal) so that it outlives this script; setsid and setpriv exec, so $! is the
# server's pid (the examples write no pid file). Waits until the port accepts TCP.
grpc_start() {
  local s=$1 n=$2 port pid mark logf=$GRPC_DIR/$1.log run=()
  port=$(pick_port "$GRPC_DIR/$s.port" $((GRPC_FIRST_PORT + n)))
  grpc_args "$s" "$port"
  touch "$logf"
  if is_root; then
    chown "$GRPC_USER:" "$logf"
    run=(setpriv --reuid="$GRPC_USER" --regid="$GRPC_USER" --init-groups)
  fi
  rm -f "$GRPC_DIR/$s.pid"
  mark=$(stat -c %s "$logf")
  log "starting grpc $s on 127.0.0.1:$port (log $logf)"
  (cd / && exec setsid "${run[@]}" "${GRPC_ARGS[@]}" </dev/null >>"$logf" 2>&1) 9>&- &
  pid=$!
  echo "$pid" >"$GRPC_DIR/$s.pid"
  wait_ready "grpc $s" "$pid" "$logf" "$mark" 120 "accept TCP on 127.0.0.1:$port" grpc_ready "$s" "$port"
}

# grpc_call URL METHOD FRAME EXPECT...: one gRPC call with curl over HTTP/2 (h2c with prior
# knowledge for http://; ALPN h2 and our CA for https://): FRAME, printf's escapes of the
# length-prefixed request message, POSTed to URL/METHOD; the answer must be HTTP 200 and its
# body hold each EXPECT (strings of the protobuf reply).
grpc_call() {
  local url=$1 method=$2 frame=$3 body e opts=(--http2-prior-knowledge)
  shift 3
  case $url in https://*) opts=(--http2 --cacert "$GRPC_TLS/ca.crt") ;; esac
  # Read whole, then matched: grep -q would stop reading early, and pipefail fail on SIGPIPE.
  # tr drops the NUL bytes of the binary reply (bash variables cannot hold them).
  # shellcheck disable=SC2059 # the frame is printf's escapes, on purpose
  body=$(printf "$frame" | curl --noproxy '*' -sS -m 5 "${opts[@]}" -X POST \
    -H 'content-type: application/grpc' -H 'te: trailers' --data-binary @- \
    -w '\n%{http_code}' "$url/$method" | tr -d '\0') || return 1
  [ "${body##*$'\n'}" = 200 ] || return 1
  for e in "$@"; do
    case $body in *"$e"*) ;; *) return 1 ;; esac
  done
}

# grpc_check: one real call of each server (the frames are the serialized requests below,
# behind gRPC's 5-byte prefix: not compressed, 4-byte big-endian length).
grpc_check() {
  local p
  # routeguide.Point{latitude: 409146138, longitude: -746188906}, a feature of the database.
  local point='\x00\x00\x00\x00\x11\x08\x9a\xa6\x8c\xc3\x01\x10\x96\x9f\x98\x9c\xfd\xff\xff\xff\xff\x01'
  # helloworld.HelloRequest{name: "perfbase"} and grpc.examples.echo.EchoRequest{message:
  # "perfbase"} (both field 1, a string: the same bytes).
  local name='\x00\x00\x00\x00\x0a\x0a\x08perfbase'
  # grpc.reflection.v1.ServerReflectionRequest{list_services: ""}.
  local list='\x00\x00\x00\x00\x02\x3a\x00'
  p=$(grpc_port route_guide)
  grpc_call "http://127.0.0.1:$p" routeguide.RouteGuide/GetFeature "$point" \
    'Berkshire Valley Management Area Trail' ||
    die "grpc: route_guide (127.0.0.1:$p) did not answer GetFeature; see $GRPC_DIR/route_guide.log"
  p=$(grpc_port route_guide_tls)
  grpc_call "https://127.0.0.1:$p" routeguide.RouteGuide/GetFeature "$point" \
    'Berkshire Valley Management Area Trail' ||
    die "grpc: route_guide_tls (127.0.0.1:$p) did not answer GetFeature over TLS with our CA; see $GRPC_DIR/route_guide_tls.log"
  p=$(grpc_port greeter)
  grpc_call "http://127.0.0.1:$p" helloworld.Greeter/SayHello "$name" 'Hello perfbase' ||
    die "grpc: greeter (127.0.0.1:$p) did not answer SayHello; see $GRPC_DIR/greeter.log"
  p=$(grpc_port deadline)
  grpc_call "http://127.0.0.1:$p" grpc.examples.echo.Echo/UnaryEcho "$name" perfbase ||
    die "grpc: deadline (127.0.0.1:$p) did not answer UnaryEcho; see $GRPC_DIR/deadline.log"
  p=$(grpc_port reflection)
  grpc_call "http://127.0.0.1:$p" grpc.reflection.v1.ServerReflection/ServerReflectionInfo "$list" \
    helloworld.Greeter grpc.examples.echo.Echo ||
    die "grpc: reflection (127.0.0.1:$p) did not list helloworld.Greeter and grpc.examples.echo.Echo; see $GRPC_DIR/reflection.log"
}

# grpc_proto3: a proto3 copy of route_guide.proto in $GRPC_PROTO/proto3 (same path under it).
# Upstream writes it in edition 2023 (`edition = "2023";` with `option
# features.field_presence = IMPLICIT;`), which neither perfbase's compiler (protox 0.10) nor
# ghz v0.121.0 reads. Those two lines say what proto3 says for this file (implicit presence for
# scalars; every other 2023 default is proto3's, and it has no enums), so the copy with `syntax
# = "proto3";` describes the same messages on the wire. Any other edition feature stops here.
grpc_proto3() {
  local src="$GRPC_PROTO/route_guide/routeguide/route_guide.proto"
  local dst="$GRPC_PROTO/proto3/route_guide/routeguide/route_guide.proto"
  mkdir -p "$(dirname "$dst")"
  sed -e 's/^edition = "2023";$/syntax = "proto3";/' -e '/^option features\.field_presence = IMPLICIT;$/d' \
    "$src" >"$dst.new"
  if grep -Eq '^edition|features\.[a-z_]+[[:space:]]*=' "$dst.new" ||
    [ "$(grep -c '^syntax = "proto3";$' "$dst.new")" != 1 ]; then
    rm -f "$dst.new"
    die "grpc: $src uses edition features beyond field_presence = IMPLICIT: no proto3 copy"
  fi
  chmod 644 "$dst.new"
  mv -f "$dst.new" "$dst"
}

grpc_up() {
  local start=$SECONDS i s
  if is_root; then ensure_user "$GRPC_USER"; fi
  mkdir -p "$GRPC_DIR"
  if all_running grpc_running "${GRPC_SERVERS[@]}"; then
    grpc_proto3
    log "grpc already running (route_guide pid $(grpc_pid route_guide), port $(grpc_port route_guide))"
    return 0
  fi
  command -v curl >/dev/null 2>&1 || ensure_pkg curl
  grpc_built || grpc_build
  grpc_proto3
  grpc_pki
  # The servers keep no state: those still running stay, the others start.
  for i in "${!GRPC_SERVERS[@]}"; do
    s=${GRPC_SERVERS[$i]}
    if grpc_running "$s"; then
      log "grpc $s already running (pid $(grpc_pid "$s"), port $(grpc_port "$s"))"
    else
      grpc_start "$s" "$i"
    fi
  done
  grpc_check
  log "grpc up in $((SECONDS - start)) s: $(for s in "${GRPC_SERVERS[@]}"; do printf '%s 127.0.0.1:%s (pid %s); ' "$s" "$(grpc_port "$s")" "$(grpc_pid "$s")"; done | sed 's/; $//')"
}

grpc_down() {
  local s
  if ! any_running grpc_running "${GRPC_SERVERS[@]}"; then
    log "grpc not running"
    return 0
  fi
  for s in "${GRPC_SERVERS[@]}"; do
    if grpc_running "$s"; then stop_pid "grpc $s" "$(grpc_pid "$s")" "$GRPC_DIR/$s.log"; fi
  done
}

svc_grpc() {
  local s
  case $1 in
  up) grpc_up ;;
  down) grpc_down ;;
  purge)
    log "removing $GRPC_DIR but the binaries and protos in it (bin, proto)"
    if [ -d "$GRPC_DIR" ]; then find "$GRPC_DIR" -mindepth 1 -maxdepth 1 ! -name bin ! -name proto -exec rm -rf {} +; fi
    ;;
  env)
    if ! all_running grpc_running "${GRPC_SERVERS[@]}"; then
      log "grpc is not running (all five servers): run scripts/services.sh up grpc"
      return 1
    fi
    echo "export PERFBASE_GRPC_URL='grpc://127.0.0.1:$(grpc_port route_guide)'"
    echo "export PERFBASE_GRPC_TLS_URL='grpcs://127.0.0.1:$(grpc_port route_guide_tls)'"
    echo "export PERFBASE_GRPC_CA='$GRPC_TLS/ca.crt'"
    echo "export PERFBASE_GRPC_GREETER_URL='grpc://127.0.0.1:$(grpc_port greeter)'"
    echo "export PERFBASE_GRPC_DEADLINE_URL='grpc://127.0.0.1:$(grpc_port deadline)'"
    echo "export PERFBASE_GRPC_REFLECTION_URL='grpc://127.0.0.1:$(grpc_port reflection)'"
    echo "export PERFBASE_GRPC_PROTO_DIR='$GRPC_PROTO'"
    echo "export PERFBASE_GRPC_BIN_DIR='$GRPC_BIN'"
    echo "export PERFBASE_GRPC_PID=$(grpc_pid route_guide)"
    echo "export PERFBASE_GRPC_TLS_PID=$(grpc_pid route_guide_tls)"
    echo "export PERFBASE_GRPC_GREETER_PID=$(grpc_pid greeter)"
    echo "export PERFBASE_GRPC_DEADLINE_PID=$(grpc_pid deadline)"
    echo "export PERFBASE_GRPC_REFLECTION_PID=$(grpc_pid reflection)"
    ;;
  status)
    if any_running grpc_running "${GRPC_SERVERS[@]}"; then
      for s in "${GRPC_SERVERS[@]}"; do
        if grpc_running "$s"; then
          echo "grpc $s: running, pid $(grpc_pid "$s"), 127.0.0.1:$(grpc_port "$s")$([ "$s" = route_guide_tls ] && echo ", TLS, CA $GRPC_TLS/ca.crt")"
        else
          echo "grpc $s: stopped"
        fi
      done
    elif grpc_built; then
      echo "grpc: stopped (no data), binaries in $GRPC_BIN, protos in $GRPC_PROTO"
    else
      echo "grpc: stopped, not built"
    fi
    ;;
  esac
}
