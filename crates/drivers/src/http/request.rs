//! Targets and the request bytes built from them once, before any load is sent.

use super::HttpError;
use crate::workload::{Corpus, Mix, Template};
use std::io::Write as _;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use url::Url;

/// One request to send: method, URL, extra headers and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub method: String,
    pub url: Url,
    pub headers: Vec<(String, String)>,
    pub body: Arc<[u8]>,
}

/// A request body in a plan: text with `{{corpus}}` placeholders, or bytes from a file.
#[derive(Debug, Clone, PartialEq)]
pub enum BodySpec {
    Text(String),
    Bytes(Arc<[u8]>),
}

/// One request of a workload mix: its path, header values and text body may hold
/// `{{corpus}}` placeholders; `weight` is its share of the mix.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestSpec {
    pub method: String,
    /// Scheme, host, port and an optional path prefix (`http://127.0.0.1:8080/api`).
    pub base: Url,
    /// Path and query after the base, e.g. `/lookup/{{keys}}`. Empty: the base URL itself,
    /// path and query as given (`ab http://host/health` asks for `/health`, not `/health/`).
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<BodySpec>,
    pub weight: u64,
    /// The name in per-endpoint figures; `METHOD path` when absent.
    pub name: Option<String>,
}

impl RequestSpec {
    /// The name in per-endpoint figures.
    pub fn label(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("{} {}", self.method, self.request_path()))
    }

    /// The request target sent: the base's path prefix joined with `path`, or the base's own
    /// path and query when `path` is empty.
    pub fn request_path(&self) -> String {
        if self.path.is_empty() {
            let mut p = self.base.path().to_string();
            if let Some(q) = self.base.query() {
                p.push('?');
                p.push_str(q);
            }
            return p;
        }
        let prefix = self.base.path().trim_end_matches('/');
        let sep = if self.path.starts_with('/') { "" } else { "/" };
        format!("{prefix}{sep}{}", self.path)
    }
}

impl Target {
    /// The name in per-endpoint figures: `METHOD path?query`.
    pub fn label(&self) -> String {
        let mut name = format!("{} {}", self.method, self.url.path());
        if let Some(q) = self.url.query() {
            name.push('?');
            name.push_str(q);
        }
        name
    }
}

/// Settings shared by all targets.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Reuse connections (HTTP/1.1 keep-alive); false opens a new one per request.
    pub keepalive: bool,
    /// Headers added to every request (a target's own header of the same name wins).
    pub headers: Vec<(String, String)>,
    /// The largest response head accepted before it counts as a protocol error.
    pub max_head_bytes: usize,
    /// How https:// targets are trusted.
    pub tls: super::TlsOptions,
    /// HTTP/1.1 or HTTP/2.
    pub version: HttpVersion,
    /// Statuses of 400 and above that count as success, as k6's expected statuses do: the
    /// 404 of a lookup that is meant to miss. Their counts are still kept by status.
    pub ok_status: Vec<u16>,
    /// Turns a 4xx/5xx response's status and the start of its body into the message its
    /// error sample keeps (an API's own error text, as Vault's driver reads it); none keeps
    /// no body. HTTP/1.1 with a Content-Length body only.
    pub describe_error: Option<fn(u16, &[u8]) -> String>,
    /// The run's timeout: an event stream still arriving close to it is ended by the driver
    /// (see `events::stream_deadline`), which then reports what it brought, where the
    /// engine's own cut would lose it. None leaves every response to the engine.
    pub stream_timeout: Option<std::time::Duration>,
    /// A 3xx response fails (class `driver`) instead of counting as a success: for an API
    /// whose every answer is a 2xx, where a redirect means the request was not served (a
    /// Vault standby that cannot forward it to an active node sends the client elsewhere).
    pub redirect_fails: bool,
}

/// The HTTP version sessions speak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HttpVersion {
    /// HTTP/1.1, one request at a time per connection.
    #[default]
    Http1,
    /// HTTP/2: h2c with prior knowledge for http://, ALPN h2 for https://; up to `streams`
    /// sessions share each connection.
    Http2 { streams: usize },
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            keepalive: true,
            headers: Vec::new(),
            max_head_bytes: 64 * 1024,
            tls: super::TlsOptions::default(),
            version: HttpVersion::Http1,
            ok_status: Vec::new(),
            describe_error: None,
            stream_timeout: None,
            redirect_fails: false,
        }
    }
}

/// A request serialised once and reused for every send.
pub(crate) struct Prepared {
    pub(crate) bytes: Box<[u8]>,
    /// A HEAD request: the response has no body whatever its headers say.
    pub(crate) head: bool,
    /// Safe to send again when a reused connection turned out to be closed (RFC 9110 §9.2.2).
    pub(crate) idempotent: bool,
}

pub(crate) fn authority(url: &Url) -> Result<String, HttpError> {
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(HttpError::Scheme {
                url: url.to_string(),
                scheme: other.to_string(),
            })
        }
    }
    let host = url
        .host_str()
        .ok_or_else(|| HttpError::NoHost(url.to_string()))?;
    Ok(match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    })
}

/// `scheme://host[:port]`: every target of one run must share it.
pub(crate) fn origin(url: &Url) -> Result<String, HttpError> {
    Ok(format!("{}://{}", url.scheme(), authority(url)?))
}

pub(crate) fn resolve(url: &Url) -> Result<SocketAddr, HttpError> {
    let host = url
        .host_str()
        .ok_or_else(|| HttpError::NoHost(url.to_string()))?;
    // IPv6 literals come bracketed from the URL; the resolver wants them bare.
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let port = url.port_or_known_default().unwrap_or(80);
    (bare, port)
        .to_socket_addrs()
        .and_then(|mut a| {
            a.next()
                .ok_or_else(|| std::io::Error::other("no address found"))
        })
        .map_err(|source| HttpError::Resolve {
            host: host.to_string(),
            source,
        })
}

/// Whether `s` is an HTTP token: a valid method or header name.
pub fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether byte `b` may not stand in a header value: a control other than tab (CR and LF
/// would end the header and start another, or a second request; NUL is refused by servers).
pub fn unsafe_in_header(b: u8) -> bool {
    (b < b' ' && b != b'\t') || b == 0x7f
}

/// A header that can be sent as written, or why not. The value is never quoted in the error:
/// a token read with a stray line break is still a token. A secret-named header's value is
/// remembered, so that a server echoing it back never gets it into a sample.
fn check_header(name: &str, value: &str) -> Result<(), HttpError> {
    if !is_token(name) {
        return Err(HttpError::Header(format!(
            "'{}': the name is not a token (letters, digits and !#$%&'*+-.^_`|~)",
            perfbase_core::redact::printable(name)
        )));
    }
    if value.bytes().any(unsafe_in_header) {
        return Err(HttpError::Header(format!(
            "'{name}': its value holds a line break or another control character (the value \
             is not shown)"
        )));
    }
    if perfbase_core::redact::is_secret_name(name) {
        perfbase_core::redact::remember(value);
    }
    Ok(())
}

/// The header lines of a request after its request line, without Content-Length and the
/// blank line that ends the head: shared by fixed targets and templates, so both send the
/// same headers. Returns the text and whether the caller set Content-Length itself.
fn header_lines(
    method: &str,
    host: &str,
    own: &[(String, String)],
    o: &HttpOptions,
) -> Result<(String, bool), HttpError> {
    if !is_token(method) {
        return Err(HttpError::Method(method.to_string()));
    }
    let has = |name: &str| {
        own.iter()
            .chain(o.headers.iter())
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    // perfbase frames every body with Content-Length: a Transfer-Encoding of the user's would
    // send both, which servers and proxies read differently (RFC 9112 §6.3: request
    // smuggling), and a body that is not chunked.
    if has("transfer-encoding") {
        return Err(HttpError::Header(
            "'Transfer-Encoding': perfbase frames every body with Content-Length itself; remove \
             the header"
                .into(),
        ));
    }
    let mut head = String::new();
    if !has("host") {
        head.push_str(&format!("Host: {host}\r\n"));
    }
    if !has("user-agent") {
        head.push_str(concat!(
            "User-Agent: perfbase/",
            env!("CARGO_PKG_VERSION"),
            "\r\n"
        ));
    }
    for (n, v) in own {
        check_header(n, v)?;
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    for (n, v) in &o.headers {
        check_header(n, v)?;
        if !own.iter().any(|(on, _)| on.eq_ignore_ascii_case(n)) {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
    }
    if !o.keepalive && !has("connection") {
        head.push_str("Connection: close\r\n");
    }
    Ok((head, has("content-length")))
}

/// `own` with `Authorization: Basic …` from the URL's user info (`http://user:pw@host`), as
/// curl and browsers send it, unless the request sets Authorization itself. The user info is
/// never sent in the request line.
fn with_userinfo(url: &Url, own: &[(String, String)], o: &HttpOptions) -> Vec<(String, String)> {
    let mut all = own.to_vec();
    let set = own
        .iter()
        .chain(o.headers.iter())
        .any(|(n, _)| n.eq_ignore_ascii_case("authorization"));
    if (!url.username().is_empty() || url.password().is_some()) && !set {
        use base64::Engine as _;
        let decode = perfbase_core::percent::decode;
        let mut pair = decode(url.username());
        pair.push(b':');
        pair.extend(decode(url.password().unwrap_or("")));
        let value = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        );
        all.push(("Authorization".into(), value));
    }
    all
}

/// Refuses a Content-Length of the user's that is not the body's length (a larger one made
/// the server wait for bytes never sent: a timeout, not a measurement).
fn check_length(
    own: &[(String, String)],
    o: &HttpOptions,
    body: Option<usize>,
) -> Result<(), HttpError> {
    let Some((_, v)) = own
        .iter()
        .chain(o.headers.iter())
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
    else {
        return Ok(());
    };
    match body {
        Some(len) if v.trim().parse::<usize>() == Ok(len) => Ok(()),
        Some(len) => Err(HttpError::Header(format!(
            "'Content-Length: {}': the body is {len} bytes; remove the header (perfbase sets \
             it)",
            v.trim()
        ))),
        None => Err(HttpError::Header(
            "'Content-Length': the body is filled per request, so its length varies; remove the \
             header (perfbase sets it)"
                .into(),
        )),
    }
}

impl Prepared {
    pub(crate) fn build(t: &Target, o: &HttpOptions) -> Result<Prepared, HttpError> {
        let host = authority(&t.url)?;
        let mut path = t.url.path().to_string();
        if let Some(q) = t.url.query() {
            path.push('?');
            path.push_str(q);
        }
        perfbase_core::redact::remember_url(t.url.as_str());
        let own = with_userinfo(&t.url, &t.headers, o);
        check_length(&own, o, Some(t.body.len()))?;
        let (headers, user_length) = header_lines(&t.method, &host, &own, o)?;
        // The URL parser has encoded the path already.
        let mut head = format!("{} {path} HTTP/1.1\r\n{headers}", t.method);
        let (is_head, idempotent, length_always) = method_flags(&t.method);
        if (!t.body.is_empty() || length_always) && !user_length {
            head.push_str(&format!("Content-Length: {}\r\n", t.body.len()));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&t.body);
        Ok(Prepared {
            bytes: bytes.into_boxed_slice(),
            head: is_head,
            idempotent,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(method: &str, url: &str, body: &[u8]) -> Target {
        Target {
            method: method.into(),
            url: Url::parse(url).unwrap(),
            headers: vec![("X-Test".into(), "1".into())],
            body: body.into(),
        }
    }

    #[test]
    fn builds_the_bytes_once() {
        let o = HttpOptions {
            headers: vec![("Accept".into(), "*/*".into())],
            ..HttpOptions::default()
        };
        let p = Prepared::build(&target("POST", "http://127.0.0.1:8080/a?b=1", b"hi"), &o).unwrap();
        let text = String::from_utf8(p.bytes.to_vec()).unwrap();
        assert!(
            text.starts_with("POST /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"),
            "{text}"
        );
        assert!(
            text.contains("X-Test: 1\r\nAccept: */*\r\nContent-Length: 2\r\n\r\nhi"),
            "{text}"
        );
        assert!(!p.idempotent);
    }

    #[test]
    fn no_keepalive_asks_the_server_to_close() {
        let o = HttpOptions {
            keepalive: false,
            ..HttpOptions::default()
        };
        let p = Prepared::build(&target("GET", "http://127.0.0.1/", b""), &o).unwrap();
        let text = String::from_utf8(p.bytes.to_vec()).unwrap();
        assert!(text.contains("Connection: close\r\n"));
        assert!(!text.contains("Content-Length"));
    }

    #[test]
    fn rejects_header_injection() {
        let mut t = target("GET", "http://127.0.0.1/", b"");
        t.headers.push(("X-Bad".into(), "a\r\nEvil: 1".into()));
        assert!(Prepared::build(&t, &HttpOptions::default()).is_err());
    }

    #[test]
    fn framing_is_perfbases_and_user_info_is_sent_as_basic() {
        // Issue 30's judgement calls: a Transfer-Encoding of the user's, and a Content-Length
        // that is not the body's, are refused; `user:pw@` becomes Basic credentials.
        let o = HttpOptions::default();
        let mut t = target("POST", "http://127.0.0.1/", b"x");
        t.headers
            .push(("Transfer-Encoding".into(), "chunked".into()));
        let e = Prepared::build(&t, &o).err().unwrap().to_string();
        assert!(e.contains("'Transfer-Encoding'"), "{e}");
        let mut t = target("GET", "http://127.0.0.1/", b"");
        t.headers.push(("Content-Length".into(), "5".into()));
        let e = Prepared::build(&t, &o).err().unwrap().to_string();
        assert!(e.contains("the body is 0 bytes"), "{e}");
        let mut t = target("POST", "http://127.0.0.1/", b"hello");
        t.headers.push(("Content-Length".into(), "5".into()));
        assert!(Prepared::build(&t, &o).is_ok());
        let t = target("GET", "http://al%40ice:p%3Aw@127.0.0.1/a", b"");
        let p = Prepared::build(&t, &o).unwrap();
        let text = String::from_utf8(p.bytes.to_vec()).unwrap();
        // base64("al@ice:p:w")
        assert!(
            text.contains("Authorization: Basic YWxAaWNlOnA6dw==\r\n"),
            "{text}"
        );
        assert!(
            text.starts_with("GET /a HTTP/1.1\r\nHost: 127.0.0.1\r\n"),
            "{text}"
        );
    }

    #[test]
    fn origins_tell_http_from_https_and_name_the_default_port_not() {
        let t = |u: &str| target("GET", u, b"").url;
        assert_eq!(
            origin(&t("https://127.0.0.1/")).unwrap(),
            "https://127.0.0.1"
        );
        assert_eq!(
            origin(&t("http://127.0.0.1:8443/")).unwrap(),
            "http://127.0.0.1:8443"
        );
        assert_eq!(resolve(&t("https://127.0.0.1/")).unwrap().port(), 443);
        assert!(matches!(
            authority(&t("ftp://127.0.0.1/")),
            Err(HttpError::Scheme { .. })
        ));
    }
}

fn method_flags(method: &str) -> (bool, bool, bool) {
    let m = method.to_ascii_uppercase();
    (
        m == "HEAD",
        matches!(
            m.as_str(),
            "GET" | "HEAD" | "PUT" | "DELETE" | "OPTIONS" | "TRACE"
        ),
        matches!(m.as_str(), "POST" | "PUT" | "PATCH"),
    )
}

enum TemplateBody {
    Text(Template),
    Bytes(Arc<[u8]>),
}

/// One request template, split so that only the placeholders are filled per op.
struct TemplateRequest {
    /// Request line and header lines, without Content-Length and the final blank line.
    head: Template,
    body: Option<TemplateBody>,
    /// Send a Content-Length even without a body (POST, PUT, PATCH).
    length_always: bool,
    /// The user set Content-Length themselves.
    user_length: bool,
    is_head: bool,
    idempotent: bool,
}

/// A weighted mix of request templates and the corpora they draw from.
pub(crate) struct Templated {
    pub(crate) mix: Mix,
    requests: Vec<TemplateRequest>,
    corpora: Vec<Arc<Corpus>>,
}

/// Refuses a corpus that fills a header with a value a header cannot hold (a line break
/// would end it and add another: the request would no longer be the one counted).
fn refuse_breaking_values(headers: &Template, corpora: &[Arc<Corpus>]) -> Result<(), HttpError> {
    for i in headers.corpora_used() {
        let c = &corpora[i];
        if let Some((row, _)) = c.find_value(unsafe_in_header) {
            return Err(HttpError::Template(format!(
                "corpus '{}', value {}: it fills a header and holds a line break or another \
                 control character, which would end the header and add another; remove it from \
                 the corpus, or use the corpus in the path or body instead",
                c.name,
                row + 1
            )));
        }
    }
    Ok(())
}

impl Templated {
    pub(crate) fn build(
        specs: &[RequestSpec],
        corpora: Vec<Arc<Corpus>>,
        mix: Mix,
        o: &HttpOptions,
    ) -> Result<Templated, HttpError> {
        let mut requests = Vec::with_capacity(specs.len());
        for spec in specs {
            let host = authority(&spec.base)?;
            let template =
                |text: &str| Template::parse(text, &corpora).map_err(HttpError::Template);
            perfbase_core::redact::remember_url(spec.base.as_str());
            let own = with_userinfo(&spec.base, &spec.headers, o);
            let literal_body = match &spec.body {
                Some(BodySpec::Text(t)) => {
                    let parsed = Template::parse(t, &corpora).map_err(HttpError::Template)?;
                    parsed.is_literal().then_some(t.len())
                }
                Some(BodySpec::Bytes(b)) => Some(b.len()),
                None => Some(0),
            };
            check_length(&own, o, literal_body)?;
            let (headers, user_length) = header_lines(&spec.method, &host, &own, o)?;
            let headers = template(&headers)?;
            refuse_breaking_values(&headers, &corpora)?;
            // A plan's path and the values that fill it are percent-encoded where they could
            // not stand in a request line: a space, a '#' or a line break from a corpus row
            // would end the line, add a header or start a second request.
            let head = Template::literal(&format!("{} ", spec.method))
                .then(template(&spec.request_path())?.as_target())
                .then(Template::literal(" HTTP/1.1\r\n"))
                .then(headers);
            let body = match &spec.body {
                Some(BodySpec::Text(t)) => Some(TemplateBody::Text(
                    Template::parse(t, &corpora).map_err(HttpError::Template)?,
                )),
                Some(BodySpec::Bytes(b)) => Some(TemplateBody::Bytes(b.clone())),
                None => None,
            };
            let (is_head, idempotent, length_always) = method_flags(&spec.method);
            requests.push(TemplateRequest {
                head,
                body,
                length_always,
                user_length,
                is_head,
                idempotent,
            });
        }
        Ok(Templated {
            mix,
            requests,
            corpora,
        })
    }

    /// Whether no template has a placeholder (then every request can be serialised once).
    pub(crate) fn is_literal(&self) -> bool {
        self.requests.iter().all(|r| {
            r.head.is_literal()
                && match &r.body {
                    Some(TemplateBody::Text(t)) => t.is_literal(),
                    _ => true,
                }
        })
    }

    /// Serialises every request once (for literal templates).
    pub(crate) fn prepare_all(&self, _o: &HttpOptions) -> Result<Box<[Prepared]>, HttpError> {
        let mut out = Vec::with_capacity(self.requests.len());
        for (i, r) in self.requests.iter().enumerate() {
            let mut bytes = Vec::new();
            let mut scratch = Vec::new();
            self.render_one(r, i as u64, &mut bytes, &mut scratch);
            out.push(Prepared {
                bytes: bytes.into_boxed_slice(),
                head: r.is_head,
                idempotent: r.idempotent,
            });
        }
        Ok(out.into_boxed_slice())
    }

    fn render_one(&self, r: &TemplateRequest, op: u64, out: &mut Vec<u8>, scratch: &mut Vec<u8>) {
        out.clear();
        r.head.write(op, &self.corpora, out);
        let body: &[u8] = match &r.body {
            Some(TemplateBody::Text(t)) => {
                scratch.clear();
                t.write(op, &self.corpora, scratch);
                scratch
            }
            Some(TemplateBody::Bytes(b)) => b,
            None => &[],
        };
        if !r.user_length && (!body.is_empty() || r.length_always) {
            // Writing into a Vec cannot fail.
            let _ = write!(out, "Content-Length: {}\r\n", body.len());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(body);
    }

    /// Renders op `op`'s request into `out`; returns (HEAD request, idempotent).
    pub(crate) fn render(&self, op: u64, out: &mut Vec<u8>, scratch: &mut Vec<u8>) -> (bool, bool) {
        let r = &self.requests[self.mix.choose(op)];
        self.render_one(r, op, out, scratch);
        (r.is_head, r.idempotent)
    }
}

#[cfg(test)]
mod template_tests {
    use super::*;
    use crate::workload::Pick;

    #[test]
    fn templated_requests_fill_path_headers_and_body() {
        let keys = Arc::new(
            Corpus::new(
                "k",
                crate::workload::Values::List(vec!["a".into(), "b".into()]),
                None,
                Pick::Sequential,
                0.0,
            )
            .unwrap(),
        );
        let spec = RequestSpec {
            method: "POST".into(),
            base: Url::parse("http://127.0.0.1:9/api/").unwrap(),
            path: "/items/{{k}}".into(),
            headers: vec![("X-Key".into(), "{{k}}".into())],
            body: Some(BodySpec::Text("{\"key\":\"{{k}}\"}".into())),
            weight: 1,
            name: None,
        };
        let t = Templated::build(
            &[spec],
            vec![keys],
            Mix::new(&[1]).unwrap(),
            &HttpOptions::default(),
        )
        .unwrap();
        assert!(!t.is_literal());
        let (mut out, mut scratch) = (Vec::new(), Vec::new());
        let (head, idem) = t.render(1, &mut out, &mut scratch);
        assert!(!head && !idem);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("POST /api/items/b HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"),
            "{text}"
        );
        assert!(text.contains("X-Key: b\r\n"), "{text}");
        assert!(
            text.ends_with("Content-Length: 11\r\n\r\n{\"key\":\"b\"}"),
            "{text}"
        );
    }
}
