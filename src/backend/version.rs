//! What each service says it is: product and version, asked once before a page's run so the
//! page names what was measured. A server that does not answer is said so in the table; it
//! never stops the run (the load itself will count its errors).

use super::{setup::block_on_local, Backend, HttpRequests};

impl Backend {
    /// The URL the backend loads (with its password: show it through `redact::url`).
    pub fn server_url(&self) -> String {
        match self {
            Backend::Http(h) => match &h.requests {
                HttpRequests::Targets(t) => t.first().map(|t| t.url.to_string()),
                HttpRequests::Mix { specs, .. } => specs.first().map(|s| s.base.to_string()),
            }
            .unwrap_or_default(),
            Backend::Sql(s) => s.url.clone(),
            Backend::Redis(r) => r.url.clone(),
            Backend::Amqp(a) => a.url.clone(),
            Backend::Nats(b) => b.url.clone(),
            Backend::Mqtt(b) => b.url.clone(),
            Backend::Mongo(m) => m.url.clone(),
            Backend::Vault(v) => v.url.clone(),
        }
    }

    /// Product and version as the server reports them, or why they are not known.
    pub fn server_version(&self) -> String {
        use perfbase_drivers::{amqp, mongo, nats, redis, sql};
        let url = self.server_url();
        let asked = block_on_local(async {
            match self {
                Backend::Http(_) => Ok(http_server(&url).await),
                Backend::Sql(s) => match s.dialect {
                    super::Dialect::Postgres => sql::postgres::server_version(&url)
                        .await
                        .map_err(|e| e.to_string()),
                    super::Dialect::Mysql => sql::mysql::server_version(&url)
                        .await
                        .map_err(|e| e.to_string()),
                },
                Backend::Redis(_) => redis::server_version(&url).await.map_err(|e| e.to_string()),
                Backend::Amqp(_) => amqp::server_version(&url).await.map_err(|e| e.to_string()),
                Backend::Nats(_) => nats::server_version(&url).await.map_err(|e| e.to_string()),
                Backend::Mqtt(_) => Ok("MQTT (the protocol carries no server version)".into()),
                Backend::Mongo(_) => mongo::server_version(&url).await.map_err(|e| e.to_string()),
                Backend::Vault(v) => perfbase_drivers::vault::server_version(&url, &v.http)
                    .await
                    .map_err(|e| e.to_string()),
            }
        });
        match asked {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => format!("not reported: {}", perfbase_core::redact::text(&e)),
            Err(e) => format!("not reported: {e}"),
        }
    }
}

/// An HTTP server's `Server` header from one GET of the URL (http:// only; a TLS server's
/// header would need the run's trust settings, so it is left unasked).
async fn http_server(url: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(u) = url::Url::parse(url) else {
        return "not reported: the URL does not parse".into();
    };
    if u.scheme() != "http" {
        return "not asked (https: the Server header is read over plain http only)".into();
    }
    let host = u.host_str().unwrap_or("").to_string();
    let port = u.port_or_known_default().unwrap_or(80);
    let ask = async {
        let mut s = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .ok()?;
        let req = format!(
            "GET {} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\nUser-Agent: perfbase\r\n\r\n",
            u.path()
        );
        s.write_all(req.as_bytes()).await.ok()?;
        let mut head = vec![0u8; 8192];
        let mut n = 0;
        while n < head.len() {
            let got = s.read(&mut head[n..]).await.ok()?;
            if got == 0 {
                break;
            }
            n += got;
            if head[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
        let text = String::from_utf8_lossy(&head[..n]).into_owned();
        Some(
            text.lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("server")
                        .then(|| v.trim().to_string())
                })
                .unwrap_or_else(|| "HTTP server (no Server header)".into()),
        )
    };
    match tokio::time::timeout(std::time::Duration::from_secs(3), ask).await {
        Ok(Some(v)) => v,
        _ => "not reported: no answer within 3 s".into(),
    }
}
