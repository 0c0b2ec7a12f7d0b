// The Go stacks of the benchmark study (scripts/services/stacks.sh): net/http's server, one
// binary for two PostgreSQL drivers, chosen with -driver: pgx (jackc/pgx/v5's pgxpool) or pq
// (lib/pq under database/sql). Redis through go-redis. Configured from the environment:
// DATABASE_URL (PgBouncer's, in transaction mode), REDIS_URL, PORT, POOL_SIZE (default 10).
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/lib/pq"
	"github.com/redis/go-redis/v9"
)

const (
	acquireTimeout = 2 * time.Second  // how long a request waits for a pooled connection
	queryTimeout   = 10 * time.Second // how long a statement may take once it has one
	dbQuery        = "SELECT aid, bid, abalance FROM pgbench_accounts WHERE aid = $1"
	txQuery        = "SELECT pgbench_tx($1, $2, $3, $4)"
)

// errPoolExhausted: no connection could be had from the pool within acquireTimeout.
var errPoolExhausted = errors.New("pool exhausted: no connection within 2 s")

// row is one queryable connection of either driver, taken from its pool and given back with
// release.
type row interface {
	Scan(dest ...any) error
}

type store interface {
	// queryRow runs one statement on a connection acquired within acquireTimeout.
	queryRow(ctx context.Context, query string, args ...any) (row, func(), error)
}

// pgxStore: pgxpool, whose connections run every statement in QueryExecModeExec: the unnamed
// prepared statement, with Parse, Bind, Describe, Execute and Sync sent at once. pgx's default
// (QueryExecModeCacheStatement) prepares a named statement on the first use and reuses it by
// name; through PgBouncer in transaction mode the next transaction may get another server
// connection, where that name does not exist ("prepared statement ... does not exist").
type pgxStore struct{ pool *pgxpool.Pool }

func (s pgxStore) queryRow(ctx context.Context, query string, args ...any) (row, func(), error) {
	actx, cancel := context.WithTimeout(ctx, acquireTimeout)
	conn, err := s.pool.Acquire(actx)
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, nil, errPoolExhausted
		}
		return nil, nil, err
	}
	qctx, qcancel := context.WithTimeout(ctx, queryTimeout)
	return conn.QueryRow(qctx, query, args...), func() { qcancel(); conn.Release() }, nil
}

// pqStore: lib/pq under database/sql, with binary_parameters=yes in the URL: a statement with
// parameters is then sent as Parse, Bind, Describe, Execute and Sync at once. Without it lib/pq
// prepares the unnamed statement and syncs before binding it, and PgBouncer in transaction mode
// may hand the Bind to another server connection, which has no such statement.
type pqStore struct{ db *sql.DB }

func (s pqStore) queryRow(ctx context.Context, query string, args ...any) (row, func(), error) {
	actx, cancel := context.WithTimeout(ctx, acquireTimeout)
	conn, err := s.db.Conn(actx)
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, nil, errPoolExhausted
		}
		return nil, nil, err
	}
	qctx, qcancel := context.WithTimeout(ctx, queryTimeout)
	return conn.QueryRowContext(qctx, query, args...), func() { qcancel(); conn.Close() }, nil
}

// app: the handlers' shared state.
type app struct {
	db     store
	redis  *redis.Client
	server string
}

// moduleVersion: the version of module path linked into this binary.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "unknown"
}

func (a *app) writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// dbError answers a failed database call: 503 when the pool had no connection, else 500 with
// the error's text.
func (a *app) dbError(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if errors.Is(err, errPoolExhausted) {
		w.WriteHeader(http.StatusServiceUnavailable)
	} else {
		w.WriteHeader(http.StatusInternalServerError)
	}
	fmt.Fprintln(w, err.Error())
}

func (a *app) scanOne(ctx context.Context, query string, args []any, dest ...any) error {
	r, release, err := a.db.queryRow(ctx, query, args...)
	if err != nil {
		return err
	}
	defer release()
	return r.Scan(dest...)
}

func (a *app) hello(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("Hello, World!"))
}

func (a *app) dbOne(w http.ResponseWriter, r *http.Request) {
	aid := 1 + rand.IntN(100000)
	var gotAid, bid, abalance int64
	if err := a.scanOne(r.Context(), dbQuery, []any{aid}, &gotAid, &bid, &abalance); err != nil {
		a.dbError(w, err)
		return
	}
	a.writeJSON(w, http.StatusOK, map[string]int64{"aid": gotAid, "bid": bid, "abalance": abalance})
}

func (a *app) tx(w http.ResponseWriter, r *http.Request) {
	aid, tid, bid, delta := int64(1+rand.IntN(100000)), int64(1+rand.IntN(10)), int64(1), int32(rand.IntN(10001)-5000)
	var abalance int64
	if err := a.scanOne(r.Context(), txQuery, []any{aid, tid, bid, delta}, &abalance); err != nil {
		a.dbError(w, err)
		return
	}
	a.writeJSON(w, http.StatusOK, map[string]int64{"aid": aid, "tid": tid, "bid": bid, "delta": int64(delta), "abalance": abalance})
}

// checkPostgres: SELECT 1 through the pool; checkRedis: PING; each bounded by queryTimeout.
func (a *app) checkPostgres(ctx context.Context) error {
	var one int
	return a.scanOne(ctx, "SELECT 1", nil, &one)
}

func (a *app) checkRedis(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	return a.redis.Ping(ctx).Err()
}

func verdict(err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

func (a *app) healthAll(w http.ResponseWriter, r *http.Request) {
	mode := r.URL.Query().Get("mode")
	if mode == "" {
		mode = "sequential"
	}
	var pgErr, rdErr error
	switch mode {
	case "sequential":
		pgErr = a.checkPostgres(r.Context())
		rdErr = a.checkRedis(r.Context())
	case "concurrent":
		done := make(chan error, 1)
		go func() { done <- a.checkRedis(r.Context()) }()
		pgErr = a.checkPostgres(r.Context())
		rdErr = <-done
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintln(w, "mode is sequential or concurrent")
		return
	}
	code := http.StatusOK
	if pgErr != nil || rdErr != nil {
		code = http.StatusServiceUnavailable
	}
	a.writeJSON(w, code, map[string]string{"postgres": verdict(pgErr), "redis": verdict(rdErr), "mode": mode})
}

// withServer sets the Server header on every response, before the handler writes.
func (a *app) withServer(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", a.server)
		h.ServeHTTP(w, r)
	})
}

// withParam: URL with one more query parameter, unless it has it already.
func withParam(raw, key, value string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	q := u.Query()
	if !q.Has(key) {
		q.Set(key, value)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func main() {
	driver := flag.String("driver", "pgx", "pgx or pq")
	flag.Parse()
	dbURL, redisURL, port := os.Getenv("DATABASE_URL"), os.Getenv("REDIS_URL"), os.Getenv("PORT")
	if dbURL == "" || redisURL == "" || port == "" {
		log.Fatal("DATABASE_URL, REDIS_URL and PORT must be set")
	}
	poolSize := 10
	if v := os.Getenv("POOL_SIZE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			log.Fatalf("POOL_SIZE %q is not a positive number", v)
		}
		poolSize = n
	}
	a := &app{}
	framework := "go-net-http/" + runtime.Version()
	switch *driver {
	case "pgx":
		cfg, err := pgxpool.ParseConfig(dbURL)
		if err != nil {
			log.Fatalf("DATABASE_URL: %v", err)
		}
		cfg.MaxConns = int32(poolSize)
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
		pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
		if err != nil {
			log.Fatalf("pgxpool: %v", err)
		}
		a.db = pgxStore{pool}
		a.server = framework + " pgx/" + moduleVersion("github.com/jackc/pgx/v5")
	case "pq":
		u, err := withParam(dbURL, "binary_parameters", "yes")
		if err == nil {
			// lib/pq's default is sslmode=require; PgBouncer here speaks no TLS.
			u, err = withParam(u, "sslmode", "disable")
		}
		if err != nil {
			log.Fatalf("DATABASE_URL: %v", err)
		}
		db, err := sql.Open("postgres", u)
		if err != nil {
			log.Fatalf("lib/pq: %v", err)
		}
		db.SetMaxOpenConns(poolSize)
		db.SetMaxIdleConns(poolSize)
		a.db = pqStore{db}
		a.server = framework + " pq/" + moduleVersion("github.com/lib/pq")
	default:
		log.Fatalf("-driver is pgx or pq, not %q", *driver)
	}
	ropts, err := redis.ParseURL(redisURL)
	if err != nil {
		log.Fatalf("REDIS_URL: %v", err)
	}
	a.redis = redis.NewClient(ropts)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /", a.hello)
	mux.HandleFunc("GET /db", a.dbOne)
	mux.HandleFunc("GET /tx", a.tx)
	mux.HandleFunc("GET /health/all", a.healthAll)
	srv := &http.Server{
		Addr:              "127.0.0.1:" + port,
		Handler:           a.withServer(mux),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	log.Printf("%s listening on %s (pool %d)", a.server, srv.Addr, poolSize)
	if err := srv.ListenAndServe(); err != nil && !strings.Contains(err.Error(), "closed") {
		log.Fatal(err)
	}
}
