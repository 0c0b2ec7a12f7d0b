//! A deliberately plain raw-HTTP/1.1 client for the tests: it writes requests by hand and
//! parses responses itself, so the tests check the bytes on the wire.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Generous bound on any single test read, so a broken server fails a test instead of hanging.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    /// Header names lower-cased, values trimmed.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Number of non-empty chunks when the body was chunked.
    pub chunks: Option<usize>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct Client {
    pub stream: TcpStream,
    /// Bytes received but not consumed yet.
    pub buf: Vec<u8>,
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_owned())
}

impl Client {
    pub async fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        Client {
            stream,
            buf: Vec::new(),
        }
    }

    pub async fn send(&mut self, method: &str, path: &str) {
        let req = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        self.stream.write_all(req.as_bytes()).await.unwrap();
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.unwrap();
    }

    /// Read more bytes into `buf`; returns how many (0 = end of stream).
    pub async fn fill(&mut self) -> io::Result<usize> {
        let mut chunk = [0u8; 16 * 1024];
        let n = tokio::time::timeout(READ_TIMEOUT, self.stream.read(&mut chunk))
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "test read timed out"))??;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }

    /// Take exactly `n` bytes, reading as needed.
    pub async fn take(&mut self, n: usize) -> io::Result<Vec<u8>> {
        while self.buf.len() < n {
            if self.fill().await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(self.buf.drain(..n).collect())
    }

    /// Take one CRLF-terminated line (without the CRLF).
    async fn line(&mut self) -> io::Result<String> {
        loop {
            if let Some(pos) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line: Vec<u8> = self.buf.drain(..pos + 2).take(pos).collect();
                return String::from_utf8(line).map_err(|_| invalid("non-UTF-8 line"));
            }
            if self.fill().await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
    }

    /// Read one response; `head_only` for answers to HEAD requests.
    pub async fn response_for(&mut self, head_only: bool) -> io::Result<Resp> {
        let status_line = self.line().await?;
        let mut parts = status_line.splitn(3, ' ');
        if parts.next() != Some("HTTP/1.1") {
            return Err(invalid("bad status line"));
        }
        let status = parts
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| invalid("bad status code"))?;
        let mut headers = Vec::new();
        loop {
            let line = self.line().await?;
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').ok_or_else(|| invalid("bad header"))?;
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
        let mut resp = Resp {
            status,
            headers,
            body: Vec::new(),
            chunks: None,
        };
        if head_only || matches!(status, 204 | 304) {
            return Ok(resp);
        }
        if resp.header("transfer-encoding") == Some("chunked") {
            let mut chunks = 0;
            loop {
                let size_line = self.line().await?;
                let size = usize::from_str_radix(size_line.trim(), 16)
                    .map_err(|_| invalid("bad chunk size"))?;
                if size == 0 {
                    // No trailers expected: just the final CRLF.
                    if !self.line().await?.is_empty() {
                        return Err(invalid("unexpected trailer"));
                    }
                    break;
                }
                let data = self.take(size).await?;
                resp.body.extend_from_slice(&data);
                if self.take(2).await? != b"\r\n" {
                    return Err(invalid("chunk not followed by CRLF"));
                }
                chunks += 1;
            }
            resp.chunks = Some(chunks);
        } else if let Some(len) = resp.header("content-length") {
            let len = len.parse().map_err(|_| invalid("bad content-length"))?;
            resp.body = self.take(len).await?;
        } else {
            return Err(invalid("response without framing"));
        }
        Ok(resp)
    }

    pub async fn response(&mut self) -> io::Result<Resp> {
        self.response_for(false).await
    }

    pub async fn get(&mut self, path: &str) -> Resp {
        self.send("GET", path).await;
        self.response().await.unwrap()
    }

    /// Send `method path` with extra header lines (each `Name: value`) and `body` (with its
    /// `Content-Length`), then read the answer.
    pub async fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[&str],
        body: &[u8],
    ) -> Resp {
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n",
            body.len()
        );
        for h in headers {
            req.push_str(h);
            req.push_str("\r\n");
        }
        req.push_str("\r\n");
        let mut bytes = req.into_bytes();
        bytes.extend_from_slice(body);
        self.send_raw(&bytes).await;
        self.response_for(method == "HEAD").await.unwrap()
    }

    /// Wait for the peer to close: `Ok(bytes read before EOF)`, or the read error.
    pub async fn until_closed(&mut self) -> io::Result<Vec<u8>> {
        while self.fill().await? > 0 {}
        Ok(std::mem::take(&mut self.buf))
    }
}
