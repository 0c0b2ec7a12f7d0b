//! What a request's response becomes: its outcome, timed by the clock or by the kernel's
//! arrival stamps, and its connection's timing.

use super::conn::{self, Conn};
use super::events;
use super::response::Response;
use super::Shared;
use perfbase_core::{Class, ConnUse, Outcome, Timing};
use std::time::{Duration, Instant};

/// When a response ended, with its waiting and receiving times: read late (the open model's
/// slots), it still ends when it came, by the kernel's stamps (`true`); an event stream's
/// messages are timed as they are read, so it keeps the clock.
pub(super) fn ended(
    stream: &Conn,
    resp: &mut Response,
    sent: Instant,
    timing: &mut Timing,
) -> (Instant, bool) {
    let mut end = Instant::now();
    let mut stamped = false;
    if let (Some((first, last)), None) = (stream.arrivals(), &resp.events) {
        resp.first_byte = first.clamp(sent, end);
        end = last.clamp(sent, end);
        stamped = true;
    }
    timing.waiting_us = conn::micros(resp.first_byte.saturating_duration_since(sent));
    timing.receiving_us = conn::micros(end.saturating_duration_since(resp.first_byte));
    (end, stamped)
}

/// A whole response's outcome: its status and bytes, an error body's message when the
/// protocol describes it, and an event stream's messages.
pub(super) fn answered(
    shared: &Shared,
    resp: Response,
    out: u64,
    timing: Timing,
    (sent, end): (Instant, Instant),
) -> Outcome {
    let mut o = Outcome::http(resp.status, resp.bytes_in, out).with_timing(timing);
    if let (Some(describe), Some(body)) = (shared.describe_error, &resp.error_body) {
        o.detail = Some(describe(resp.status, body).into_boxed_str());
    }
    o.stream = resp.events.map(|e| Box::new(e.reply(sent, end)));
    o
}

/// An event stream cut at its deadline: a timeout that keeps the messages that came.
pub(super) fn cut_off(
    resp: Response,
    sent: Instant,
    out: u64,
    timing: Timing,
    length: Duration,
) -> Outcome {
    let end = Instant::now();
    let messages = resp.events.as_ref().map_or(0, |e| e.clock.count);
    let mut o = Outcome::error(Class::Timeout, events::cut(length, messages))
        .with_bytes(resp.bytes_in, out)
        .with_timing(timing);
    o.status = resp.status;
    o.stream = resp.events.map(|e| Box::new(e.reply(sent, end)));
    o
}

/// A request's connection timing: a connection opened for it (or before it, for a session's
/// first) brings its connect and TLS times (µs); any other was reused.
pub(super) fn timing_of(opened: Option<(u32, u32)>) -> Timing {
    match opened {
        Some((connect_us, tls_us)) => Timing {
            conn: ConnUse::New,
            connect_us,
            tls_us,
            ..Timing::default()
        },
        None => Timing {
            conn: ConnUse::Reused,
            ..Timing::default()
        },
    }
}
