//! The server's version for a report's test environment, from `INFO server`.
//!
//! One short exchange on its own connection rather than a session: sessions check their
//! replies by kind only and never keep a bulk string's bytes, and `INFO` is no load operation.

use super::resp::{self, Value};
use super::{Credentials, RedisDriver, RedisError, RedisOp, RedisOptions, Target};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The whole exchange (connect, login, `INFO`) must end within this; a server that accepts the
/// connection and then says nothing must not hang a report.
const TIMEOUT: Duration = Duration::from_secs(5);
/// `INFO server` is about 1.5 kB; a reply beyond this is no Redis talking.
const MAX_REPLY: usize = 1 << 20;

/// The product and version of the server at `url`, e.g. `Redis 7.0.15`, with ` (cluster)`
/// appended for a `redis+cluster://` URL (asked of its first seed). Connects once, logs in
/// with the URL's credentials and sends `INFO server`. Errors never contain the password.
pub async fn server_version(url: &str) -> Result<String, RedisError> {
    // The driver's own URL parsing, so the probe reads URLs exactly as the runs do.
    let driver = RedisDriver::new(url, RedisOp::Ping, RedisOptions::default())?;
    let shared = &driver.shared;
    let (addr, cluster) = match &shared.target {
        Target::Standalone { addr, .. } => (*addr, false),
        // `new` refuses a cluster URL without seeds.
        Target::Cluster { seeds } => (seeds[0], true),
    };
    let info = tokio::time::timeout(TIMEOUT, exchange(addr, shared.auth.as_ref()))
        .await
        .map_err(|_| {
            RedisError::Connect(format!(
                "{addr} did not answer INFO server within {} s",
                TIMEOUT.as_secs()
            ))
        })??;
    let version = info
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:"))
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            RedisError::Connect(format!("INFO server from {addr} has no redis_version line"))
        })?;
    Ok(if cluster {
        format!("Redis {version} (cluster)")
    } else {
        format!("Redis {version}")
    })
}

/// Sends `AUTH` (with credentials) and `INFO server` in one write and returns INFO's text.
async fn exchange(addr: SocketAddr, auth: Option<&Credentials>) -> Result<String, RedisError> {
    let fail = |what: &str, e: std::io::Error| RedisError::Connect(format!("{what} {addr}: {e}"));
    let mut stream = TcpStream::connect(addr).await.map_err(|e| {
        RedisError::Connect(format!(
            "connect {addr}: {e}; is redis-server running (scripts/services.sh up redis)?"
        ))
    })?;
    let mut out = Vec::with_capacity(128);
    if let Some((user, pass)) = auth {
        match user {
            Some(u) => resp::push_command(&mut out, &[b"AUTH", u.as_bytes(), pass.as_bytes()]),
            None => resp::push_command(&mut out, &[b"AUTH", pass.as_bytes()]),
        }
    }
    resp::push_command(&mut out, &[b"INFO", b"server"]);
    stream
        .write_all(&out)
        .await
        .map_err(|e| fail("write to", e))?;
    let secret = auth.map(|(_, p)| p.as_str()).unwrap_or("");
    let mut buf = Vec::with_capacity(4096);
    let mut start = 0;
    if auth.is_some() {
        if let Value::Error(e) = next_value(&mut stream, &mut buf, &mut start, addr).await? {
            // Redis does not echo the password; scrubbed anyway, as everywhere else.
            return Err(RedisError::Connect(format!(
                "login to {addr}: {}; check the password in the Redis URL \
                 (redis://:PASSWORD@host:port)",
                perfbase_core::redact::scrub(&e, &[secret])
            )));
        }
    }
    match next_value(&mut stream, &mut buf, &mut start, addr).await? {
        Value::Bulk(text) => Ok(String::from_utf8_lossy(&text).into_owned()),
        Value::Error(e) => {
            let hint = if e.starts_with("NOAUTH") {
                "; the server wants a password: redis://:PASSWORD@host:port"
            } else {
                ""
            };
            Err(RedisError::Connect(format!(
                "INFO server on {addr}: {}{hint}",
                perfbase_core::redact::scrub(&e, &[secret])
            )))
        }
        other => Err(RedisError::Connect(format!(
            "INFO server on {addr}: expected a bulk string, got {other:?}"
        ))),
    }
}

/// The next complete reply in `buf[*start..]`, reading more from `stream` until there is one.
async fn next_value(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    start: &mut usize,
    addr: SocketAddr,
) -> Result<Value, RedisError> {
    loop {
        match resp::parse_value(&buf[*start..]) {
            Ok(Some((v, n))) => {
                *start += n;
                return Ok(v);
            }
            Ok(None) => {}
            Err(m) => {
                return Err(RedisError::Connect(format!(
                    "malformed reply from {addr}: {}",
                    m.0
                )))
            }
        }
        if buf.len() >= MAX_REPLY {
            return Err(RedisError::Connect(format!(
                "a reply from {addr} is larger than {MAX_REPLY} bytes"
            )));
        }
        let n = stream
            .read_buf(buf)
            .await
            .map_err(|e| RedisError::Connect(format!("read from {addr}: {e}")))?;
        if n == 0 {
            return Err(RedisError::Connect(format!(
                "{addr} closed the connection before answering INFO server"
            )));
        }
    }
}
