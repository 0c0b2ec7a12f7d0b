//! The little HTTP/1.1 `perfbase ui` speaks: one request per connection, its head read with
//! caps (16 KiB, 64 header lines, 10 s), a whole response written with the headers every page
//! carries (no caching, no sniffing, no framing, no referrer, a content policy that lets a
//! page load nothing from elsewhere) and never a CORS header.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// The most a request's head may take.
const HEAD_LIMIT: u64 = 16 * 1024;
const HEADER_LINES: usize = 64;
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// A request as the pages need it.
#[derive(Debug, Default)]
pub struct Request {
    pub method: String,
    /// The path, percent-decoded.
    pub path: String,
    /// The query's pairs, percent-decoded (`+` as a space, as forms send it).
    pub query: Vec<(String, String)>,
    pub host: Option<String>,
    pub authorization: Option<String>,
    pub cookie: Option<String>,
}

impl Request {
    /// The first value of query parameter `name`, trimmed; empty when absent.
    pub fn param(&self, name: &str) -> String {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default()
    }
}

/// Reads one request's head: None when nothing came (closed without an answer), or an error
/// that says why it is not one this server reads (answered 400 by the caller).
pub fn read(stream: &TcpStream) -> Result<Option<Request>, &'static str> {
    read_from(stream)
}

/// [`read`] from any input (the fuzzer's bytes).
pub fn read_from(input: impl Read) -> Result<Option<Request>, &'static str> {
    let mut reader = BufReader::new(input.take(HEAD_LIMIT));
    let mut line = String::new();
    match reader.read_line(&mut line) {
        // Bytes that are not text are no request, and get their 400.
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => return Err("not an HTTP request"),
        // A browser opens connections ahead of its requests; one that sent nothing before
        // the timeout is closed without an answer, which the browser could take for its next
        // request's.
        Ok(0) | Err(_) if line.is_empty() => return Ok(None),
        _ => {}
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err("not an HTTP request");
    };
    let mut req = Request {
        method: method.to_string(),
        ..Request::default()
    };
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    req.path = decode(path, false);
    req.query = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k, true), decode(v, true))
        })
        .collect();
    let mut lines = 0;
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) => return Err("the request's head was cut short or too long"),
            Ok(_) if header.trim().is_empty() => return Ok(Some(req)),
            Ok(_) => {}
            Err(_) => return Err("the request's head did not come"),
        }
        lines += 1;
        if lines > HEADER_LINES {
            return Err("too many header lines");
        }
        if let Some((name, value)) = header.split_once(':') {
            let value = Some(value.trim().to_string());
            match name.trim().to_ascii_lowercase().as_str() {
                "host" => req.host = value,
                "authorization" => req.authorization = value,
                "cookie" => req.cookie = value,
                _ => {}
            }
        }
    }
}

fn decode(text: &str, form: bool) -> String {
    let text = if form {
        text.replace('+', " ")
    } else {
        text.to_string()
    };
    String::from_utf8_lossy(&perfbase_core::percent::decode(&text)).into_owned()
}

/// A whole response.
pub struct Response {
    pub status: &'static str,
    pub kind: &'static str,
    pub body: Vec<u8>,
    /// Headers of its own (a redirect's Location, a download's name, a cookie).
    pub headers: Vec<(&'static str, String)>,
    /// Whether the page runs its own script (the live view).
    pub scripted: bool,
}

impl Response {
    pub fn new(status: &'static str, kind: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            kind,
            body: body.into(),
            headers: Vec::new(),
            scripted: false,
        }
    }

    pub fn html(body: String) -> Response {
        Response::new("200 OK", "text/html; charset=utf-8", body)
    }

    pub fn text(status: &'static str, body: impl Into<String>) -> Response {
        let mut body = body.into();
        body.push('\n');
        Response::new(status, "text/plain; charset=utf-8", body)
    }

    /// A download named `name`.
    pub fn download(kind: &'static str, name: String, body: String) -> Response {
        let mut r = Response::new("200 OK", kind, body);
        r.headers.push((
            "Content-Disposition",
            format!("attachment; filename=\"{name}\""),
        ));
        r
    }

    /// See `location` (a path of this server).
    pub fn redirect(location: String) -> Response {
        let mut r = Response::new("303 See Other", "text/plain; charset=utf-8", "");
        r.headers.push(("Location", location));
        r
    }

    pub fn with(mut self, name: &'static str, value: String) -> Response {
        self.headers.push((name, value));
        self
    }
}

/// Writes `r` (without its body for a HEAD request).
pub fn write(out: &mut impl Write, r: &Response, head_only: bool) -> std::io::Result<()> {
    let script = if r.scripted {
        "'unsafe-inline'"
    } else {
        "'none'"
    };
    let mut head = format!(
        "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n\
         Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
         script-src {script}; connect-src 'self'; form-action 'self'; base-uri 'none'; \
         frame-ancestors 'none'\r\nConnection: close\r\n",
        r.status,
        r.kind,
        r.body.len()
    );
    for (name, value) in &r.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes())?;
    if !head_only {
        out.write_all(&r.body)?;
    }
    out.flush()
}

/// After an answer to a request not read whole: stops writing and reads (and drops) up to
/// 64 KiB more for a second, so that closing does not reset the connection before the
/// client has read the answer.
pub fn linger(stream: &TcpStream) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let _ = std::io::copy(&mut stream.take(64 * 1024), &mut std::io::sink());
}
