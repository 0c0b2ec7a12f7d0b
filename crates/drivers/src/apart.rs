//! Consumers on a thread of their own, measured apart from the engine's sessions (AMQP's
//! stream mode, Kafka's end to end): the runtime they run on, what their tasks record into,
//! each message's end-to-end latency from the send stamp perfbase wrote into it, and what
//! they hand back.
//!
//! A message from perfbase starts with the op (u64, little-endian) and a send stamp
//! (nanoseconds since the Unix epoch, u64): producers and consumers share this machine's
//! clock.

use perfbase_core::{Class, Outcome, Recorder};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Bytes at the start of each message: the op and the send stamp.
pub const HEADER: usize = 16;

/// What the consumers measured.
#[derive(Debug)]
pub struct Consumed {
    /// One outcome per message, its latency the end-to-end latency; the consumers' errors.
    pub recorder: Recorder,
    /// From the moment the consumers were ready until the last message.
    pub elapsed: Duration,
    /// Messages received.
    pub received: u64,
}

impl Consumed {
    /// Nothing measured (the consumers never started, or their thread failed).
    pub(crate) fn nothing(received: u64) -> Consumed {
        Consumed {
            recorder: Recorder::new(false),
            elapsed: Duration::ZERO,
            received,
        }
    }
}

/// The consumers' thread's runtime: current-thread, its tasks local to it.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the consumers' runtime: {e}"))
}

/// The current time as a send stamp.
pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The send stamp of a perfbase message (bytes 8..16), if it has the header.
pub(crate) fn stamp_of(data: &[u8]) -> Option<u64> {
    if data.len() < HEADER {
        return None;
    }
    data.get(8..HEADER)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(u64::from_le_bytes)
}

/// What the consumer tasks of a thread record into.
pub(crate) struct Shared {
    recorder: RefCell<Recorder>,
    /// The latest message.
    last: RefCell<Instant>,
    start: Instant,
}

impl Shared {
    /// Starts the clock: the consumers are ready.
    pub(crate) fn start() -> Rc<Shared> {
        let start = Instant::now();
        Rc::new(Shared {
            recorder: RefCell::new(Recorder::new(false)),
            last: RefCell::new(start),
            start,
        })
    }

    /// Records a message: its end-to-end latency from its send stamp, or, for one without
    /// perfbase's header, a `protocol` error whose words `unmarked` gives; and notes it as
    /// the latest. Whether it had the header.
    pub(crate) fn message(&self, data: &[u8], unmarked: impl FnOnce(usize) -> String) -> bool {
        let now = Instant::now();
        let at = now.saturating_duration_since(self.start);
        let stamped = stamp_of(data);
        {
            let mut recorder = self.recorder.borrow_mut();
            match stamped {
                Some(sent_ns) => {
                    let latency = Duration::from_nanos(now_ns().saturating_sub(sent_ns));
                    let ok = Outcome::ok(data.len() as u64, 0);
                    recorder.record(&ok, latency, latency, at);
                }
                None => recorder
                    .count_unmeasured(&Outcome::error(Class::Malformed, unmarked(data.len())), at),
            }
        }
        *self.last.borrow_mut() = now;
        stamped.is_some()
    }

    /// Counts a consumer's error (no latency).
    pub(crate) fn error(&self, outcome: &Outcome) {
        let at = Instant::now().saturating_duration_since(self.start);
        self.recorder.borrow_mut().count_unmeasured(outcome, at);
    }

    /// How long since the latest message (or the start).
    pub(crate) fn quiet_for(&self) -> Duration {
        self.last.borrow().elapsed()
    }

    /// What the consumers recorded, once their tasks ended.
    pub(crate) fn finish(&self, received: u64) -> Consumed {
        let mut recorder = self.recorder.replace(Recorder::new(false));
        recorder.finish();
        Consumed {
            recorder,
            elapsed: self.last.borrow().saturating_duration_since(self.start),
            received,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_message_is_timed_and_an_unmarked_one_is_an_error() {
        let shared = Shared::start();
        let mut v = vec![0u8; 32];
        v[8..16].copy_from_slice(&(now_ns() - 2_000_000).to_le_bytes());
        assert!(shared.message(&v, |_| unreachable!()));
        assert!(!shared.message(&v[..10], |n| format!("{n} bytes")));
        let c = shared.finish(1);
        let m = perfbase_core::result::Measurement::from_recorder(&c.recorder, c.elapsed, None);
        assert_eq!(m.requests, 2);
        assert_eq!(m.errors.values().sum::<u64>(), 1);
        assert!(m.latency_ms.max >= 2.0, "{:?}", m.latency_ms);
    }
}
