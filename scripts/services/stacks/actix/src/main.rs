//! The actix_sqlx stack of the benchmark study (scripts/services/stacks.sh): actix-web 4, a
//! sqlx PgPool and redis-rs. Configured from the environment: DATABASE_URL (PgBouncer's, in
//! transaction mode), REDIS_URL, PORT, POOL_SIZE (default 10). Its statements go as the
//! simple query protocol (sqlx::raw_sql): see main() for why.

use actix_web::{http::StatusCode, middleware::DefaultHeaders, web, App, HttpResponse, HttpServer};
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{AssertSqlSafe, Row};
use std::future::Future;
use std::time::Duration;

const SERVER: &str = concat!(
    "actix-web/",
    env!("STACK_ACTIX_VERSION"),
    " sqlx/",
    env!("STACK_SQLX_VERSION")
);
/// How long a request waits for a pooled connection, then how long its statement may take.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(2);
const QUERY_TIMEOUT: Duration = Duration::from_secs(10);

struct State {
    pool: PgPool,
    redis: redis::aio::ConnectionManager,
}

/// A failed call's answer: 503 when the pool gave no connection in time, else 500 with the
/// error's text.
fn db_error(e: sqlx::Error) -> HttpResponse {
    match e {
        sqlx::Error::PoolTimedOut => HttpResponse::ServiceUnavailable()
            .content_type("text/plain; charset=utf-8")
            .body("pool exhausted: no connection within 2 s\n"),
        e => HttpResponse::InternalServerError()
            .content_type("text/plain; charset=utf-8")
            .body(format!("{e}\n")),
    }
}

/// f bounded by QUERY_TIMEOUT (plus the pool's own ACQUIRE_TIMEOUT inside it).
async fn bounded<T>(f: impl Future<Output = Result<T, sqlx::Error>>) -> Result<T, sqlx::Error> {
    tokio::time::timeout(ACQUIRE_TIMEOUT + QUERY_TIMEOUT, f)
        .await
        .unwrap_or_else(|_| Err(sqlx::Error::Protocol("statement timed out".into())))
}

async fn hello() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; charset=utf-8")
        .body("Hello, World!")
}

async fn db(st: web::Data<State>) -> HttpResponse {
    let aid = fastrand::i32(1..=100_000);
    let q = sqlx::raw_sql(AssertSqlSafe(format!(
        "SELECT aid, bid, abalance FROM pgbench_accounts WHERE aid = {aid}"
    )));
    match bounded(q.fetch_one(&st.pool)).await {
        Ok(r) => HttpResponse::Ok().json(json!({
            "aid": r.get::<i32, _>(0), "bid": r.get::<i32, _>(1), "abalance": r.get::<i32, _>(2)
        })),
        Err(e) => db_error(e),
    }
}

async fn tx(st: web::Data<State>) -> HttpResponse {
    let (aid, tid, bid) = (fastrand::i64(1..=100_000), fastrand::i64(1..=10), 1i64);
    let delta = fastrand::i32(-5000..=5000);
    let q = sqlx::raw_sql(AssertSqlSafe(format!(
        "SELECT pgbench_tx({aid}, {tid}, {bid}, {delta})"
    )));
    match bounded(q.fetch_one(&st.pool)).await {
        Ok(r) => HttpResponse::Ok().json(json!({
            "aid": aid, "tid": tid, "bid": bid, "delta": delta, "abalance": r.get::<i32, _>(0)
        })),
        Err(e) => db_error(e),
    }
}

async fn check_postgres(st: &State) -> Result<(), String> {
    let q = sqlx::raw_sql("SELECT 1");
    bounded(q.fetch_one(&st.pool))
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

async fn check_redis(st: &State) -> Result<(), String> {
    let mut c = st.redis.clone();
    let cmd = redis::cmd("PING");
    let ping = cmd.query_async::<String>(&mut c);
    match tokio::time::timeout(QUERY_TIMEOUT, ping).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("PING timed out".into()),
    }
}

fn verdict(r: &Result<(), String>) -> String {
    match r {
        Ok(()) => "ok".into(),
        Err(e) => format!("error: {e}"),
    }
}

async fn health_all(st: web::Data<State>, q: web::Query<Vec<(String, String)>>) -> HttpResponse {
    let mode = q
        .iter()
        .find(|(k, _)| k == "mode")
        .map(|(_, v)| v.as_str())
        .unwrap_or("sequential");
    let (pg, rd) = match mode {
        "sequential" => (check_postgres(&st).await, check_redis(&st).await),
        "concurrent" => tokio::join!(check_postgres(&st), check_redis(&st)),
        _ => {
            return HttpResponse::BadRequest()
                .content_type("text/plain; charset=utf-8")
                .body("mode is sequential or concurrent\n")
        }
    };
    let code = if pg.is_ok() && rd.is_ok() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    HttpResponse::build(code)
        .json(json!({"postgres": verdict(&pg), "redis": verdict(&rd), "mode": mode}))
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} must be set"))
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = env("PORT").parse().expect("PORT is a port number");
    let pool_size: u32 = match std::env::var("POOL_SIZE") {
        Ok(v) => v.parse().expect("POOL_SIZE is a positive number"),
        Err(_) => 10,
    };
    // Through PgBouncer in transaction mode (1.18) no statement may outlive a Sync, since the
    // next message may go to another server connection. sqlx's default keeps named prepared
    // statements per connection: "prepared statement sqlx_s_1 does not exist". Nor does
    // .persistent(false) do: sqlx 0.9 then parses into the unnamed statement with Parse,
    // Describe and Sync, waits, and sends Bind and Execute after that Sync, so under concurrency
    // PgBouncer hands the Bind to another server connection ("unnamed prepared statement does
    // not exist", 3 and 6 in 3000 requests to /db and /tx from 40 clients here). So the
    // queries go as sqlx::raw_sql, the simple query protocol, one round trip, with the integers
    // written into the text (drawn here, never taken from the request); and the statement
    // cache is off, since nothing would use it.
    let opts: PgConnectOptions = env("DATABASE_URL").parse().expect("DATABASE_URL");
    let pool = PgPoolOptions::new()
        .max_connections(pool_size)
        .min_connections(0)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_lazy_with(opts.statement_cache_capacity(0));
    let client = redis::Client::open(env("REDIS_URL")).expect("REDIS_URL");
    let redis = redis::aio::ConnectionManager::new(client)
        .await
        .expect("cannot connect to Redis");
    let state = web::Data::new(State { pool, redis });
    eprintln!("{SERVER} listening on 127.0.0.1:{port} (pool {pool_size})");
    HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .wrap(DefaultHeaders::new().add(("Server", SERVER)))
            .route("/", web::get().to(hello))
            .route("/db", web::get().to(db))
            .route("/tx", web::get().to(tx))
            .route("/health/all", web::get().to(health_all))
    })
    .bind(("127.0.0.1", port))?
    .run()
    .await
}
