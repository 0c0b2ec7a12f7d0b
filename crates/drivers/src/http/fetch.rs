//! One request with its whole answer, off the measured path: a protocol's set-up and checks
//! over HTTP (Vault's keys made before a run, the ciphertext its decrypts send). hyper's
//! HTTP/1.1 client on the same TCP and TLS connection code as the load, so a target that a
//! run can reach, a fetch can too; a new connection per request, for a few requests.

use super::conn::{self, Tls};
use super::{request, HttpError, TlsOptions};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use url::Url;

/// The largest answer read: set-up answers are small JSON documents.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// Sends single requests to one origin.
pub struct Fetcher {
    addr: SocketAddr,
    tls: Option<Tls>,
    /// `host:port`, the Host header.
    host: String,
    /// The base URL's path without its trailing `/`, put before every request's path.
    prefix: String,
}

/// A whole response.
#[derive(Debug)]
pub struct Fetched {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Fetcher {
    /// For the origin (and path prefix) of `base`, trusted as `tls` says.
    pub fn new(base: &Url, tls: &TlsOptions) -> Result<Fetcher, HttpError> {
        let host = request::authority(base)?;
        let addr = request::resolve(base)?;
        let tls = if base.scheme() == "https" {
            let name = base
                .host_str()
                .ok_or_else(|| HttpError::NoHost(base.to_string()))?;
            Some(Tls::new(name, tls, b"http/1.1")?)
        } else {
            None
        };
        Ok(Fetcher {
            addr,
            tls,
            host,
            prefix: base.path().trim_end_matches('/').to_string(),
        })
    }

    /// Sends `method path` (after the base's path) with `headers` and `body`; an error is a
    /// message naming the step that failed (no status arrived).
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<Fetched, String> {
        let tcp = conn::connect(self.addr)
            .await
            .map_err(|o| o.detail.unwrap_or_default().into_string())?;
        match &self.tls {
            None => self.exchange(tcp, method, path, headers, body).await,
            Some(tls) => {
                let stream = conn::handshake(tcp, tls, self.addr)
                    .await
                    .map_err(|o| o.detail.unwrap_or_default().into_string())?;
                self.exchange(stream, method, path, headers, body).await
            }
        }
    }

    async fn exchange<T>(
        &self,
        io: T,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<Fetched, String>
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let addr = self.addr;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
            .await
            .map_err(|e| format!("HTTP handshake with {addr}: {e}"))?;
        let driving = tokio::spawn(async move {
            let _ = connection.await;
        });
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.prefix))
            .header(hyper::header::HOST, &self.host)
            .header(hyper::header::USER_AGENT, "perfbase");
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("{method} {path}: {e}"))?;
        let result = async {
            let resp = sender
                .send_request(req)
                .await
                .map_err(|e| format!("{method} {path} to {addr}: {e}"))?;
            let status = resp.status().as_u16();
            let body = Limited::new(resp.into_body(), MAX_BODY)
                .collect()
                .await
                .map_err(|e| format!("{method} {path} from {addr}: reading the answer: {e}"))?
                .to_bytes()
                .to_vec();
            Ok(Fetched { status, body })
        }
        .await;
        driving.abort();
        result
    }
}
