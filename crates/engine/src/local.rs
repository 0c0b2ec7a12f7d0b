//! Single-threaded hand-off primitives for the open-model dispatcher: a one-value mailbox per
//! connection slot and a "something was freed" signal. They live on one worker thread, so a
//! `Cell` and a stored `Waker` are enough: no lock, no allocation per operation.

use std::cell::Cell;
use std::future::poll_fn;
use std::task::{Poll, Waker};

/// A mailbox holding at most one value, with a closed flag.
pub(crate) struct Mailbox<T> {
    value: Cell<Option<T>>,
    closed: Cell<bool>,
    waker: Cell<Option<Waker>>,
}

impl<T> Mailbox<T> {
    pub(crate) fn new() -> Self {
        Mailbox {
            value: Cell::new(None),
            closed: Cell::new(false),
            waker: Cell::new(None),
        }
    }

    pub(crate) fn put(&self, v: T) {
        self.value.set(Some(v));
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }

    pub(crate) fn close(&self) {
        self.closed.set(true);
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }

    /// The next value, or `None` once closed and empty.
    pub(crate) async fn take(&self) -> Option<T> {
        poll_fn(|cx| {
            if let Some(v) = self.value.take() {
                return Poll::Ready(Some(v));
            }
            if self.closed.get() {
                return Poll::Ready(None);
            }
            self.waker.set(Some(cx.waker().clone()));
            Poll::Pending
        })
        .await
    }
}

/// A level-triggered signal: `notify` sets it, `wait` consumes it.
pub(crate) struct Signal {
    set: Cell<bool>,
    waker: Cell<Option<Waker>>,
}

impl Signal {
    pub(crate) fn new() -> Self {
        Signal {
            set: Cell::new(false),
            waker: Cell::new(None),
        }
    }

    pub(crate) fn notify(&self) {
        self.set.set(true);
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }

    pub(crate) async fn wait(&self) {
        poll_fn(|cx| {
            if self.set.replace(false) {
                return Poll::Ready(());
            }
            self.waker.set(Some(cx.waker().clone()));
            Poll::Pending
        })
        .await
    }
}
