//! The reference service's response body type and the helpers that build responses, shared by
//! the plain routes (`service`) and the demo routes (`demo`).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Response, StatusCode};

/// Size of each frame of a `/bytes/{n}` body.
pub(crate) const BYTES_FRAME: usize = 64 * 1024;

/// The filler that generated bodies are sliced from, so no request allocates its body.
static FILL: [u8; BYTES_FRAME] = [b'x'; BYTES_FRAME];

/// Response body of the reference service: a single buffer, or `remaining` filler bytes
/// produced `frame` bytes at a time, with (`exact`) or without a known length. Without a known
/// length hyper sends the body with `Transfer-Encoding: chunked`, one chunk per frame.
pub(crate) enum RefBody {
    Once(Option<Bytes>),
    Fill {
        remaining: u64,
        frame: usize,
        exact: bool,
    },
    /// Frames sent each at its time (`/stream`, streamed completions).
    Timed(Box<crate::timed::Timed>),
}

impl RefBody {
    pub(crate) fn text(s: &'static str) -> Self {
        RefBody::Once(Some(Bytes::from_static(s.as_bytes())).filter(|b| !b.is_empty()))
    }
}

impl Body for RefBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            RefBody::Timed(t) => t.poll_frame(cx).map(|f| f.map(Ok)),
            RefBody::Once(data) => Poll::Ready(data.take().map(|b| Ok(Frame::data(b)))),
            RefBody::Fill {
                remaining, frame, ..
            } => {
                if *remaining == 0 {
                    return Poll::Ready(None);
                }
                // `frame` is at most FILL.len(), so `n` fits in usize and in FILL.
                let n = (*remaining).min(*frame as u64) as usize;
                *remaining -= n as u64;
                Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(&FILL[..n])))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            RefBody::Once(data) => data.is_none(),
            RefBody::Fill { remaining, .. } => *remaining == 0,
            RefBody::Timed(t) => t.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            RefBody::Once(data) => {
                SizeHint::with_exact(data.as_ref().map_or(0, |b| b.len() as u64))
            }
            RefBody::Fill {
                remaining,
                exact: true,
                ..
            } => SizeHint::with_exact(*remaining),
            RefBody::Fill { .. } | RefBody::Timed(_) => SizeHint::default(),
        }
    }
}

/// A response with `status`, `Content-Type: content_type` and `body`.
pub(crate) fn response(
    status: StatusCode,
    content_type: &'static str,
    body: RefBody,
) -> Response<RefBody> {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

/// 200 `ok\n`, the answer of most routes.
pub(crate) fn ok_text() -> Response<RefBody> {
    response(StatusCode::OK, "text/plain", RefBody::text("ok\n"))
}

/// A JSON response with `status`.
pub(crate) fn json(status: StatusCode, body: String) -> Response<RefBody> {
    response(
        status,
        "application/json",
        RefBody::Once(Some(Bytes::from(body))),
    )
}
