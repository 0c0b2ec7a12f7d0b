//! Reads one HTTP/1.1 response in place: the head is parsed (httparse) in a read buffer lent
//! for the response (see `buffers`), the body is counted and discarded as it arrives. Nothing
//! is allocated per response unless a head outgrows the buffer (then it grows once, up to the
//! head limit).

use super::chunked::{ChunkError, Decoder};
use super::conn::Conn;
use super::events::{Events, Format};
use perfbase_core::Class;
use std::fmt;
use std::future::Future;
use std::io;

/// Headers parsed per response; more is a protocol error.
const MAX_HEADERS: usize = 100;

pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) bytes_in: u64,
    /// The connection cannot carry another request.
    pub(crate) close: bool,
    /// When the response's first bytes were read (the end of waiting, time to first byte).
    pub(crate) first_byte: std::time::Instant,
    /// The start of a 4xx/5xx response's body (at most [`ERROR_BODY_LIMIT`] bytes), when the
    /// caller asked for it and the body's length was given: an API's error message (Vault's
    /// `{"errors":[…]}`) for the error samples. Successful bodies are never kept on the hot
    /// path; [`read_whole`] keeps every body's start here, up to its limit.
    pub(crate) error_body: Option<Vec<u8>>,
    /// The body's length (without chunk framing).
    pub(crate) body_len: u64,
    /// A streamed body's events (`text/event-stream`, JSON lines), counted as they came.
    pub(crate) events: Option<Box<Events>>,
    /// The stream was cut at its deadline, before its end: `events` holds what came.
    pub(crate) cut: bool,
}

/// How much of an error response's body is kept for its message.
pub(crate) const ERROR_BODY_LIMIT: usize = 1024;

/// Appends what fits of `bytes` to a kept body of at most `limit` bytes.
fn keep(body: &mut Option<Vec<u8>>, bytes: &[u8], limit: usize) {
    if let Some(b) = body {
        let room = limit.saturating_sub(b.len());
        b.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// What of a response is kept besides its status and length.
#[derive(Clone, Copy)]
enum Keep {
    /// The hot path: nothing, or with `true` the start of a 4xx or 5xx body (a driver that
    /// describes its errors).
    Errors(bool),
    /// Journeys and scripts: the headers, and the body's first bytes up to this many.
    All(usize),
}

#[derive(Debug)]
pub(crate) enum ReadError {
    /// The server closed the connection before sending a single byte.
    ClosedBeforeResponse,
    /// The server closed the connection part-way through the response: `got` bytes in all
    /// (head included); in the body, `body` of them, of `expected` when the length was given.
    Truncated {
        got: u64,
        stage: &'static str,
        body: u64,
        expected: Option<u64>,
    },
    /// The socket failed (reset…).
    Io { err: io::Error, got: u64 },
    /// The bytes are not an HTTP/1.x response.
    Malformed { what: String, got: u64 },
    /// The head exceeds the limit.
    HeadTooLarge { limit: usize, got: u64 },
}

impl ReadError {
    pub(crate) fn class_and_bytes(&self) -> (Class, u64) {
        match self {
            ReadError::ClosedBeforeResponse => (Class::Read, 0),
            ReadError::Truncated { got, .. } | ReadError::Io { got, .. } => (Class::Read, *got),
            ReadError::Malformed { got, .. } | ReadError::HeadTooLarge { got, .. } => {
                (Class::Malformed, *got)
            }
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::ClosedBeforeResponse => {
                write!(f, "connection closed before any response byte")
            }
            ReadError::Truncated {
                got,
                stage: "head",
                ..
            } => write!(
                f,
                "connection closed in the response head after {got} bytes (truncated response)"
            ),
            ReadError::Truncated {
                body,
                expected: Some(len),
                ..
            } => write!(
                f,
                "connection closed in the response body after {body} of its {len} bytes (truncated response)"
            ),
            ReadError::Truncated { body, .. } => write!(
                f,
                "connection closed in the chunked response body after {body} bytes of it (truncated response)"
            ),
            ReadError::Io { err, .. } => write!(f, "read: {err}"),
            ReadError::Malformed { what, .. } => write!(f, "malformed response: {what}"),
            ReadError::HeadTooLarge { limit, .. } => {
                write!(f, "response head larger than {limit} bytes")
            }
        }
    }
}

enum Framing {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

/// Where a response is read from: a connection, or bytes in memory (fuzzing and tests).
pub(crate) trait Source {
    /// Reads what has arrived; 0 at the end of the stream.
    fn read(&mut self, buf: &mut [u8]) -> impl Future<Output = io::Result<usize>>;
}

impl Source for Conn {
    fn read(&mut self, buf: &mut [u8]) -> impl Future<Output = io::Result<usize>> {
        Conn::read(self, buf)
    }
}

impl Source for &[u8] {
    fn read(&mut self, buf: &mut [u8]) -> impl Future<Output = io::Result<usize>> {
        let n = self.len().min(buf.len());
        buf[..n].copy_from_slice(&self[..n]);
        *self = &self[n..];
        std::future::ready(Ok(n))
    }
}

/// Parses `bytes` as the whole of what a server sent for one request: the status and the
/// bytes read, or the error message a run would record. For fuzzing and tests: the same code
/// as a real connection, over bytes in memory (a 16 KiB buffer, a 64 KiB head limit).
pub fn parse_response(bytes: &[u8], head_request: bool) -> Result<(u16, u64), String> {
    let mut source = bytes;
    let mut buf = super::buffers::Lent::take();
    let future = read_response(
        &mut source,
        buf.boxed(),
        64 * 1024,
        head_request,
        false,
        None,
    );
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    // Bytes in memory are always ready, so the first poll completes.
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(Ok(r)) => Ok((r.status, r.bytes_in)),
        std::task::Poll::Ready(Err(e)) => Err(e.to_string()),
        std::task::Poll::Pending => Err("pending on bytes in memory".into()),
    }
}

async fn fill(stream: &mut impl Source, buf: &mut [u8], got: u64) -> Result<usize, ReadError> {
    stream
        .read(buf)
        .await
        .map_err(|err| ReadError::Io { err, got })
}

fn header_has_token(value: &[u8], token: &str) -> bool {
    value
        .split(|b| *b == b',')
        .any(|part| part.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

/// Decides how the body is delimited (RFC 9112 §6.3), whether the connection closes and
/// whether the body is a stream of events.
fn framing(
    resp: &httparse::Response<'_, '_>,
    head_request: bool,
    got: u64,
) -> Result<(Framing, bool, Option<Format>), ReadError> {
    let code = resp.code.unwrap_or(0);
    let mut length: Option<u64> = None;
    let mut chunked = None;
    let mut close = resp.version == Some(0);
    let mut events = None;
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let v = std::str::from_utf8(h.value)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .ok_or_else(|| ReadError::Malformed {
                    what: "invalid Content-Length".into(),
                    got,
                })?;
            if length.is_some_and(|l| l != v) {
                return Err(ReadError::Malformed {
                    what: "conflicting Content-Length headers".into(),
                    got,
                });
            }
            length = Some(v);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            let last = h.value.rsplit(|b| *b == b',').next().unwrap_or(b"");
            chunked = Some(last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if h.name.eq_ignore_ascii_case("connection") {
            if header_has_token(h.value, "close") {
                close = true;
            } else if header_has_token(h.value, "keep-alive") {
                close = false;
            }
        } else if h.name.eq_ignore_ascii_case("content-type") {
            events = Format::of(h.value);
        }
    }
    let framing = if head_request || code == 204 || code == 304 {
        Framing::None
    } else if let Some(is_chunked) = chunked {
        if is_chunked {
            Framing::Chunked
        } else {
            Framing::UntilClose
        }
    } else if let Some(l) = length {
        Framing::Length(l)
    } else {
        Framing::UntilClose
    };
    if matches!(framing, Framing::UntilClose) {
        close = true;
    }
    if matches!(framing, Framing::None) {
        events = None;
    }
    Ok((framing, close, events))
}

fn chunk_error(e: ChunkError, got: u64) -> ReadError {
    ReadError::Malformed {
        what: e.to_string(),
        got,
    }
}

/// A response head, parsed in the read buffer.
struct Head {
    status: u16,
    /// The head's bytes at the start of the buffer.
    len: usize,
    /// The buffer's bytes read so far: the head's, then any of the body's that came with it.
    filled: usize,
    framing: Framing,
    /// The connection cannot carry another request, as far as the head says.
    close: bool,
    events: Option<Format>,
}

/// Reads one complete response from `stream`; with `keep_error_body`, the start of a 4xx or
/// 5xx response's body too. Per response on the HTTP/1.1 hot path: the head, then the body
/// as its framing says, each step a helper awaited once per response (the reads themselves
/// are the same as in one piece, and nothing is allocated).
pub(crate) async fn read_response(
    stream: &mut impl Source,
    buf: &mut Box<[u8]>,
    max_head: usize,
    head_request: bool,
    keep_error_body: bool,
    until: Option<std::time::Instant>,
) -> Result<Response, ReadError> {
    let keep = Keep::Errors(keep_error_body);
    read_parts(stream, buf, max_head, head_request, keep, until)
        .await
        .map(|(r, _)| r)
}

/// Reads one complete response as journeys and scripts need it: its headers, and its body's
/// first `limit` bytes (decoded, in `error_body`) with its whole length.
pub(crate) async fn read_whole(
    stream: &mut impl Source,
    buf: &mut Box<[u8]>,
    max_head: usize,
    head_request: bool,
    limit: usize,
) -> Result<(Response, hyper::HeaderMap), ReadError> {
    let keep = Keep::All(limit);
    let (r, headers) = read_parts(stream, buf, max_head, head_request, keep, None).await?;
    Ok((r, headers.unwrap_or_default()))
}

async fn read_parts(
    stream: &mut impl Source,
    buf: &mut Box<[u8]>,
    max_head: usize,
    head_request: bool,
    keep: Keep,
    until: Option<std::time::Instant>,
) -> Result<(Response, Option<hyper::HeaderMap>), ReadError> {
    let mut got = 0u64;
    let mut first_byte = None;
    let head = read_head(
        stream,
        buf,
        max_head,
        head_request,
        &mut got,
        &mut first_byte,
    )
    .await?;
    let mut close = head.close;
    let (mut kept, limit, headers) = match keep {
        Keep::Errors(k) => (
            (k && head.status >= 400).then(Vec::new),
            ERROR_BODY_LIMIT,
            None,
        ),
        // Read now: the body's reads reuse the buffer the head is in.
        Keep::All(limit) => (Some(Vec::new()), limit, Some(header_map(&buf[..head.len]))),
    };
    let mut events = head.events.map(|f| Box::new(Events::new(f)));
    let mut body_len = 0;
    let body = Body {
        got: &mut got,
        error_body: &mut kept,
        events: events.as_deref_mut(),
        limit,
        len: &mut body_len,
    };
    let framed = read_body(stream, buf, &head, keep, body);
    // An event stream is cut at its deadline, keeping what it brought; any other body is
    // the engine's to time out.
    let cut = match until.filter(|_| head.events.is_some()) {
        Some(at) => match tokio::time::timeout_at(at.into(), framed).await {
            Ok(closes) => {
                close |= closes?;
                false
            }
            Err(_) => {
                close = true;
                true
            }
        },
        None => {
            close |= framed.await?;
            false
        }
    };
    let response = Response {
        status: head.status,
        bytes_in: got,
        close,
        // Set by the first read, which the head needed.
        first_byte: first_byte.unwrap_or_else(std::time::Instant::now),
        error_body: kept,
        body_len,
        events,
        cut,
    };
    Ok((response, headers))
}

/// Reads the body as its framing says; whether the connection must close after it.
async fn read_body(
    stream: &mut impl Source,
    buf: &mut Box<[u8]>,
    head: &Head,
    keep: Keep,
    mut body: Body<'_>,
) -> Result<bool, ReadError> {
    Ok(match head.framing {
        Framing::None => head.filled > head.len,
        Framing::Length(len) => read_length_body(stream, buf, head, len, body).await?,
        Framing::Chunked => {
            // An error's body is kept only when its length was given (the hot path's rule).
            if matches!(keep, Keep::Errors(_)) {
                *body.error_body = None;
            }
            read_chunked_body(stream, buf, head, body).await?
        }
        Framing::UntilClose => {
            read_until_close(stream, buf, head, &mut body).await?;
            false
        }
    })
}

/// The headers of a complete head (`head`: its bytes, interim responses already dropped);
/// a header whose name or value `http` refuses is left out.
fn header_map(head: &[u8]) -> hyper::HeaderMap {
    let mut map = hyper::HeaderMap::new();
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    if resp.parse(head).is_ok() {
        for h in resp.headers.iter() {
            if let (Ok(n), Ok(v)) = (
                hyper::header::HeaderName::from_bytes(h.name.as_bytes()),
                hyper::header::HeaderValue::from_bytes(h.value),
            ) {
                map.append(n, v);
            }
        }
    }
    map
}

/// Reads until the head is complete (interim 1xx responses skipped), growing `buf` up to
/// `max_head` for a long one. Counts the bytes read into `got` and notes the first read's
/// time in `first_byte`.
async fn read_head(
    stream: &mut impl Source,
    buf: &mut Box<[u8]>,
    max_head: usize,
    head_request: bool,
    got: &mut u64,
    first_byte: &mut Option<std::time::Instant>,
) -> Result<Head, ReadError> {
    let mut filled = 0usize;
    loop {
        if filled == buf.len() {
            grow_for_head(buf, filled, max_head, *got)?;
        }
        let n = fill(stream, &mut buf[filled..], *got).await?;
        if n == 0 {
            return Err(closed_in_head(*got));
        }
        filled += n;
        *got += n as u64;
        first_byte.get_or_insert_with(std::time::Instant::now);
        if let Some(head) = parse_head(buf, &mut filled, head_request, *got)? {
            return Ok(head);
        }
    }
}

/// Doubles the buffer, up to `max_head`, for a head that filled it; an error at the limit.
fn grow_for_head(
    buf: &mut Box<[u8]>,
    filled: usize,
    max_head: usize,
    got: u64,
) -> Result<(), ReadError> {
    if buf.len() >= max_head {
        return Err(ReadError::HeadTooLarge {
            limit: max_head,
            got,
        });
    }
    let mut bigger = vec![0u8; (buf.len() * 2).min(max_head)].into_boxed_slice();
    bigger[..filled].copy_from_slice(&buf[..filled]);
    *buf = bigger;
    Ok(())
}

/// The connection closed before the head was complete, after `got` bytes.
fn closed_in_head(got: u64) -> ReadError {
    if got == 0 {
        ReadError::ClosedBeforeResponse
    } else {
        ReadError::Truncated {
            got,
            stage: "head",
            body: 0,
            expected: None,
        }
    }
}

/// Parses the `filled` bytes of `buf`: the head once it is complete, `None` while more is
/// needed. An interim response (100 Continue, 103 Early Hints) is dropped from the buffer
/// and parsing goes on with what follows it.
#[inline]
fn parse_head(
    buf: &mut [u8],
    filled: &mut usize,
    head_request: bool,
    got: u64,
) -> Result<Option<Head>, ReadError> {
    loop {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut headers);
        match resp.parse(&buf[..*filled]) {
            Ok(httparse::Status::Partial) => return Ok(None),
            Ok(httparse::Status::Complete(h)) => {
                let code = resp.code.unwrap_or(0);
                if code == 101 {
                    return Err(ReadError::Malformed {
                        what: "unexpected 101 Switching Protocols".into(),
                        got,
                    });
                }
                if (100..200).contains(&code) {
                    buf.copy_within(h..*filled, 0);
                    *filled -= h;
                    continue;
                }
                // httparse takes any three digits; HTTP's statuses are 100–599, and a 999
                // counted as a success would hide a broken server.
                if !(200..600).contains(&code) {
                    return Err(ReadError::Malformed {
                        what: format!("status {code:03} is outside HTTP's 100–599"),
                        got,
                    });
                }
                let (framing, close, events) = framing(&resp, head_request, got)?;
                return Ok(Some(Head {
                    status: code,
                    len: h,
                    filled: *filled,
                    framing,
                    close,
                    events,
                }));
            }
            Err(e) => {
                return Err(ReadError::Malformed {
                    what: format!("invalid response head ({e})"),
                    got,
                })
            }
        }
    }
}

/// Where a body's bytes go as they arrive: counted in `got` (framing included), the start of
/// an error's body kept, a stream's events found.
struct Body<'a> {
    got: &'a mut u64,
    error_body: &'a mut Option<Vec<u8>>,
    events: Option<&'a mut Events>,
    /// The most of the body kept.
    limit: usize,
    /// The body's bytes so far.
    len: &'a mut u64,
}

impl Body<'_> {
    /// Bytes of the body itself (without chunk framing).
    #[inline]
    fn take(&mut self, bytes: &[u8]) {
        *self.len += bytes.len() as u64;
        keep(self.error_body, bytes, self.limit);
        if let Some(e) = self.events.as_deref_mut() {
            e.feed(bytes);
        }
    }
}

/// Reads the rest of a body of `len` bytes (some may have come with the head), keeping what
/// fits of it in `error_body`. True when bytes beyond the response arrived: the server is out
/// of step, and the connection must start afresh.
async fn read_length_body(
    stream: &mut impl Source,
    buf: &mut [u8],
    head: &Head,
    len: u64,
    mut body: Body<'_>,
) -> Result<bool, ReadError> {
    let leftover = head.filled - head.len;
    let mut rem = len;
    let take = rem.min(leftover as u64);
    body.take(&buf[head.len..head.len + take as usize]);
    rem -= take;
    let mut beyond = leftover as u64 > take;
    while rem > 0 {
        let n = fill(stream, buf, *body.got).await? as u64;
        if n == 0 {
            return Err(ReadError::Truncated {
                got: *body.got,
                stage: "body",
                body: len - rem,
                expected: Some(len),
            });
        }
        *body.got += n;
        body.take(&buf[..n.min(rem) as usize]);
        if n > rem {
            beyond = true;
            rem = 0;
        } else {
            rem -= n;
        }
    }
    Ok(beyond)
}

/// Reads a chunked body to its end (trailer section included), counting it without keeping
/// it. True when bytes beyond the response arrived (the connection must start afresh).
async fn read_chunked_body(
    stream: &mut impl Source,
    buf: &mut [u8],
    head: &Head,
    mut body: Body<'_>,
) -> Result<bool, ReadError> {
    let leftover = head.filled - head.len;
    // Bytes of the head (and of any interim responses), so a body count leaves them out.
    let head_bytes = *body.got - leftover as u64;
    let mut d = Decoder::new();
    let used = d
        .feed_data(&buf[head.len..head.filled], |data| body.take(data))
        .map_err(|e| chunk_error(e, *body.got))?;
    let mut beyond = d.is_done() && used < leftover;
    while !d.is_done() {
        let n = fill(stream, buf, *body.got).await?;
        if n == 0 {
            return Err(ReadError::Truncated {
                got: *body.got,
                stage: "body",
                body: *body.got - head_bytes,
                expected: None,
            });
        }
        *body.got += n as u64;
        let used = d
            .feed_data(&buf[..n], |data| body.take(data))
            .map_err(|e| chunk_error(e, *body.got))?;
        beyond |= d.is_done() && used < n;
    }
    Ok(beyond)
}

/// Reads a body that ends when the server closes the connection, keeping what fits of it in
/// `error_body`.
async fn read_until_close(
    stream: &mut impl Source,
    buf: &mut [u8],
    head: &Head,
    body: &mut Body<'_>,
) -> Result<(), ReadError> {
    body.take(&buf[head.len..head.filled]);
    loop {
        let n = fill(stream, buf, *body.got).await?;
        if n == 0 {
            return Ok(());
        }
        *body.got += n as u64;
        body.take(&buf[..n]);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_status_outside_http_s_range_is_malformed() {
        for status in ["999 Weird", "000 Zero", "600 Over"] {
            let answer = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n");
            let e = super::parse_response(answer.as_bytes(), false).unwrap_err();
            assert!(e.contains("is outside HTTP's 100–599"), "{status}: {e}");
        }
        let ok = "HTTP/1.1 599 Last\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(
            super::parse_response(ok.as_bytes(), false).map(|r| r.0),
            Ok(599)
        );
    }
}
