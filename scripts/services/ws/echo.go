// Command ws_echo is the WebSocket echo server that scripts/services.sh runs for perfbase's
// tests (service `ws`, see docs/services.md). It is our own, built on github.com/coder/websocket.
//
//	ws_echo [-addr 127.0.0.1:15061] [-tls-cert FILE -tls-key FILE]
//
// GET /echo is a WebSocket (no subprotocol, no compression, messages up to 16 MiB): every text
// or binary message comes back unchanged, in order. A text message holding "delay_ms":N (N an
// integer, cut to 60000) comes back N ms late, and the connection's later messages wait
// behind it.
//
// GET /stats answers {"open":O,"accepted":A,"messages":M,"bytes":B}: the WebSocket
// connections open now and accepted since the start, and the data messages and their payload
// bytes received since the start.
package main

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

const (
	readLimit = 16 << 20 // bytes of one message; a larger one closes the connection (1009)
	maxDelay  = 60000    // ms; a larger "delay_ms" is cut to this
)

var (
	open, accepted, messages, payload atomic.Int64

	delayKey = []byte(`"delay_ms"`)
	delayRe  = regexp.MustCompile(`"delay_ms"\s*:\s*(\d+)`)
)

// delayOf: the N of the first "delay_ms":N in a text message, in ms (0 when there is none).
func delayOf(msg []byte) time.Duration {
	if !bytes.Contains(msg, delayKey) {
		return 0
	}
	m := delayRe.FindSubmatch(msg)
	if m == nil {
		return 0
	}
	n, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil || n > maxDelay {
		n = maxDelay
	}
	return time.Duration(n) * time.Millisecond
}

func serveEcho(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		CompressionMode: websocket.CompressionDisabled,
		// Any Origin: a test server on the loopback interface, for clients that send one.
		InsecureSkipVerify: true,
	})
	if err != nil {
		// Accept has answered the request with an HTTP error.
		log.Printf("echo: %s %s: no WebSocket: %v", r.RemoteAddr, r.URL.Path, err)
		return
	}
	accepted.Add(1)
	open.Add(1)
	defer open.Add(-1)
	defer c.CloseNow()
	c.SetReadLimit(readLimit)

	ctx := r.Context()
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			return // the peer closed (the library answered its close frame) or went away
		}
		messages.Add(1)
		payload.Add(int64(len(msg)))
		if typ == websocket.MessageText {
			if d := delayOf(msg); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return
				}
			}
		}
		if err := c.Write(ctx, typ, msg); err != nil {
			return
		}
	}
}

func serveStats(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(struct {
		Open     int64 `json:"open"`
		Accepted int64 `json:"accepted"`
		Messages int64 `json:"messages"`
		Bytes    int64 `json:"bytes"`
	}{open.Load(), accepted.Load(), messages.Load(), payload.Load()})
}

// quietLog drops net/http's "TLS handshake error from ADDR: EOF", the trace of every bare TCP
// connect to the TLS port (scripts/services.sh's readiness probe); other lines go to stderr.
type quietLog struct{}

func (quietLog) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("http: TLS handshake error from ")) && bytes.HasSuffix(p, []byte(": EOF\n")) {
		return len(p), nil
	}
	return os.Stderr.Write(p)
}

// raiseNofile: the soft limit of open files up to the hard one (Go does this by itself since
// 1.19; done here to log the limit that the idle-connection tests depend on).
func raiseNofile() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		log.Printf("getrlimit: %v", err)
		return 0
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			log.Printf("setrlimit: %v", err)
		}
	}
	return rl.Cur
}

func main() {
	addr := flag.String("addr", "127.0.0.1:15061", "listen address")
	cert := flag.String("tls-cert", "", "serve wss:// and https:// with this PEM certificate (chain)")
	key := flag.String("tls-key", "", "the PEM private key of -tls-cert")
	flag.Parse()
	if (*cert == "") != (*key == "") {
		log.Fatal("-tls-cert and -tls-key go together")
	}
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	quiet := log.New(quietLog{}, "", log.LstdFlags|log.Lmicroseconds)
	nofile := raiseNofile()

	mux := http.NewServeMux()
	mux.HandleFunc("/echo", serveEcho)
	mux.HandleFunc("/stats", serveStats)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
		ErrorLog:          quiet,
		// HTTP/1.1 only, also over TLS (no "h2" in ALPN): a WebSocket handshake is an
		// HTTP/1.1 upgrade, and a client offering h2 and http/1.1 must end up on the latter.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	scheme := "ws"
	if *cert != "" {
		scheme = "wss"
	}
	log.Printf("ws_echo (pid %d) on %s://%s/echo, stats on /stats, open-files limit %d",
		os.Getpid(), scheme, ln.Addr(), nofile)
	if *cert != "" {
		err = srv.ServeTLS(ln, *cert, *key)
	} else {
		err = srv.Serve(ln)
	}
	log.Fatal(err)
}
