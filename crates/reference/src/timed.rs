//! A response body of frames, each sent at its offset from the request's arrival (`/stream`,
//! streamed completions): the deadlines are absolute, so a late wake-up does not push the
//! later frames back.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::Frame;
use tokio::time::{Instant, Sleep};

/// A body of frames, each sent at its offset from the request's arrival.
pub(crate) struct Timed {
    start: Instant,
    frames: Vec<(Duration, Bytes)>,
    next: usize,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Timed {
    pub(crate) fn new(frames: Vec<(Duration, Bytes)>) -> Timed {
        Timed {
            start: Instant::now(),
            frames,
            next: 0,
            sleep: None,
        }
    }

    pub(crate) fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Frame<Bytes>>> {
        let Some((at, bytes)) = self.frames.get(self.next) else {
            return Poll::Ready(None);
        };
        let due = self.start + *at;
        if due > Instant::now() {
            let sleep = self
                .sleep
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
            ready!(sleep.as_mut().poll(cx));
        }
        self.sleep = None;
        self.next += 1;
        Poll::Ready(Some(Frame::data(bytes.clone())))
    }

    pub(crate) fn is_end_stream(&self) -> bool {
        self.next >= self.frames.len()
    }
}
