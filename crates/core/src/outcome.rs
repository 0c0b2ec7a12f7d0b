//! What one operation came to: its class, status and byte counts. The engine takes the times;
//! drivers only say what happened.

use serde::{Deserialize, Serialize};

/// The class of an operation's outcome. Counted as enum counters, never keyed by strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// The operation succeeded (HTTP 1xx–3xx, a query that returned).
    Ok,
    /// The server answered with a 4xx status.
    Http4xx,
    /// The server answered with a 5xx status.
    Http5xx,
    /// No connection could be made (refused, unreachable, DNS).
    Connect,
    /// The connection failed while reading the response (reset, EOF mid-response).
    Read,
    /// The connection failed while sending the request.
    Write,
    /// No complete response within the timeout.
    Timeout,
    /// The response was malformed or oversized (JSON and reports: `protocol`).
    Malformed,
    /// The server answered with an error of its own protocol (an SQL error, a Redis error
    /// reply); its code is in `detail` (JSON and reports: `driver`).
    ServerError,
    /// A journey's check on a response failed (the status, body or header was not what the
    /// plan asked for); the check's name is in `detail`.
    Check,
    /// A journey's capture found nothing in the response (a JSON pointer, header or regex
    /// with no match), so the steps after it cannot be sent; its name and rule in `detail`.
    Capture,
    /// A script's iteration failed in its own code: an exception, a loop or an allocation
    /// the runtime interrupted; the message and the script's stack are in `detail`.
    Script,
}

impl Class {
    /// Every class, in the order used for counters and reports.
    pub const ALL: [Class; 12] = [
        Class::Ok,
        Class::Http4xx,
        Class::Http5xx,
        Class::Connect,
        Class::Read,
        Class::Write,
        Class::Timeout,
        Class::Malformed,
        Class::ServerError,
        Class::Check,
        Class::Capture,
        Class::Script,
    ];
    /// Number of classes, the length of counter arrays.
    pub const COUNT: usize = Self::ALL.len();

    /// Index into counter arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The stable name used in JSON and reports.
    pub fn name(self) -> &'static str {
        match self {
            Class::Ok => "ok",
            Class::Http4xx => "http_4xx",
            Class::Http5xx => "http_5xx",
            Class::Connect => "connect",
            Class::Read => "read",
            Class::Write => "write",
            Class::Timeout => "timeout",
            Class::Malformed => "protocol",
            Class::ServerError => "driver",
            Class::Check => "check",
            Class::Capture => "capture",
            Class::Script => "script",
        }
    }

    /// Parses a stable name back (for reading stored results).
    pub fn from_name(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether the session that produced this outcome can no longer be trusted and must be
    /// dropped and reopened: after a transport failure or a timeout the connection's state
    /// (half-read response, dead socket) is unknown.
    pub fn breaks_session(self) -> bool {
        matches!(
            self,
            Class::Connect | Class::Read | Class::Write | Class::Timeout | Class::Malformed
        )
    }

    /// Whether this class counts as an error (everything but `ok`).
    pub fn is_error(self) -> bool {
        self != Class::Ok
    }
}

/// How an HTTP request used its connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ConnUse {
    /// Not split into phases (other protocols, a request that failed).
    #[default]
    Untimed,
    /// Opened for this request: its connect (and TLS handshake) time is its own.
    New,
    /// Kept alive from an earlier request.
    Reused,
}

/// Where an HTTP request's time went, in µs, as k6 and oha split it. The engine times
/// every operation from its (intended) start to its end; this is the one place a driver
/// reads the clock, because only it sees the connection, the first byte and the last.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timing {
    pub conn: ConnUse,
    /// TCP connect (0 on a reused connection).
    pub connect_us: u32,
    /// TLS handshake (0 on a reused or plain connection).
    pub tls_us: u32,
    /// From the request written to the response's first byte (time to first byte).
    pub waiting_us: u32,
    /// From the first byte to the last: the head's rest and the body.
    pub receiving_us: u32,
}

/// The outcome of one operation as a driver reports it. The engine adds the timing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub class: Class,
    /// Protocol status: the HTTP status code, 0 where the protocol has none or none arrived.
    pub status: u16,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// A human-readable cause for errors (kept only as a bounded sample by the recorder).
    pub detail: Option<Box<str>>,
    /// How many operations this outcome stands for: 1, or N for a pipelined batch sent and
    /// answered together (each is recorded with the batch's latency).
    pub batch: u32,
    /// In a batch of class other than `ok`: how many of its operations succeeded anyway.
    pub batch_ok: u32,
    /// Which of the driver's labelled kinds of operation this was (per endpoint figures): a
    /// 1-based index into [`Driver::labels`](crate::Driver::labels), 0 for none. The engine
    /// sets it from [`Driver::label`](crate::Driver::label); drivers leave it 0.
    pub label: u16,
    /// HTTP: where the time went ([`ConnUse::Untimed`] elsewhere).
    pub timing: Timing,
    /// A journey's checks on this response: which passed and which failed (bit i is the
    /// driver's [`check_names`](crate::Driver::check_names)`[i]`).
    pub checks: CheckBits,
    /// A streamed reply (gRPC server streams, HTTP event streams): its messages, when the first
    /// came and the µs between consecutive ones; None for a reply of one message. Allocated
    /// only for streams.
    pub stream: Option<Box<StreamReply>>,
    /// A script's own metrics: the values its code added since the previous step. Allocated
    /// only by a step that added one.
    pub samples: Option<Box<crate::metric::Samples>>,
    /// Requests sent together as one step (a script's `http.batch`), each with when its
    /// answer ended: the engine records each as a request of its own, timed from the step's
    /// start to that end. The step itself is then [`Outcome::nothing`]. Allocated only for a
    /// batch.
    pub parts: Option<Box<Vec<(Outcome, std::time::Instant)>>>,
}

pub use crate::stream::StreamReply;

/// The checks one response was put to, as bits over the driver's check names (at most
/// [`MAX_CHECKS`]): counted per name without a string or an allocation per response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckBits {
    pub passed: u64,
    pub failed: u64,
}

/// The most named checks a run counts apart (one bit each in [`CheckBits`]).
pub const MAX_CHECKS: usize = 64;

impl Outcome {
    /// A successful outcome without a status code.
    pub fn ok(bytes_in: u64, bytes_out: u64) -> Outcome {
        Outcome {
            class: Class::Ok,
            status: 0,
            bytes_in,
            bytes_out,
            detail: None,
            batch: 1,
            batch_ok: 0,
            label: 0,
            timing: Timing::default(),
            checks: CheckBits::default(),
            stream: None,
            samples: None,
            parts: None,
        }
    }

    /// An error of `class` with a message explaining it.
    pub fn error(class: Class, detail: impl Into<String>) -> Outcome {
        Outcome {
            class,
            status: 0,
            bytes_in: 0,
            bytes_out: 0,
            detail: Some(detail.into().into_boxed_str()),
            batch: 1,
            batch_ok: 0,
            label: 0,
            timing: Timing::default(),
            checks: CheckBits::default(),
            stream: None,
            samples: None,
            parts: None,
        }
    }

    /// An HTTP response with `status`, classed by its code. A status outside HTTP's 100–599
    /// (a broken server's `999`) is class `protocol`, never a success.
    pub fn http(status: u16, bytes_in: u64, bytes_out: u64) -> Outcome {
        let class = match status {
            100..=399 => Class::Ok,
            400..=499 => Class::Http4xx,
            500..=599 => Class::Http5xx,
            _ => {
                let why = format!("status {status:03} is outside HTTP's 100–599");
                return Outcome::error(Class::Malformed, why).with_bytes(bytes_in, bytes_out);
            }
        };
        Outcome {
            class,
            status,
            bytes_in,
            bytes_out,
            detail: None,
            batch: 1,
            batch_ok: 0,
            label: 0,
            timing: Timing::default(),
            checks: CheckBits::default(),
            stream: None,
            samples: None,
            parts: None,
        }
    }

    /// Makes this the outcome of a batch of `ops` operations, `ok` of which succeeded (all of
    /// them when the class is `ok`).
    pub fn batch_of(mut self, ops: u32, ok: u32) -> Outcome {
        self.batch = ops.max(1);
        self.batch_ok = if self.class == Class::Ok {
            0
        } else {
            ok.min(self.batch)
        };
        self
    }

    /// A step of a multi-step op that sent no request (a script's code before its first
    /// request, or its think time after its last): the engine records no latency for it.
    /// With an error class, the op failed there: counted, with no latency, as
    /// [`Recorder::count_unmeasured`](crate::Recorder::count_unmeasured) counts.
    pub fn nothing(failure: Option<(Class, String)>) -> Outcome {
        let mut o = match failure {
            Some((class, why)) => Outcome::error(class, why),
            None => Outcome::ok(0, 0),
        };
        o.batch = 0;
        o
    }

    /// Whether this is [`Outcome::nothing`]: no request was sent.
    pub fn is_nothing(&self) -> bool {
        self.batch == 0
    }

    /// Marks this as an operation of the driver's label `label` (1-based).
    pub fn with_label(mut self, label: u16) -> Outcome {
        self.label = label;
        self
    }

    /// Says where an HTTP request's time went.
    pub fn with_timing(mut self, timing: Timing) -> Outcome {
        self.timing = timing;
        self
    }

    /// Sets the bytes already exchanged when an error cut the operation short.
    pub fn with_bytes(mut self, bytes_in: u64, bytes_out: u64) -> Outcome {
        self.bytes_in = bytes_in;
        self.bytes_out = bytes_out;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_status_classes() {
        assert_eq!(Outcome::http(200, 0, 0).class, Class::Ok);
        assert_eq!(Outcome::http(302, 0, 0).class, Class::Ok);
        assert_eq!(Outcome::http(404, 0, 0).class, Class::Http4xx);
        assert_eq!(Outcome::http(503, 0, 0).class, Class::Http5xx);
        // A broken server's status is no success (and keeps its bytes).
        for status in [0, 99, 600, 999] {
            let o = Outcome::http(status, 7, 3);
            assert_eq!((o.class, o.bytes_in, o.bytes_out), (Class::Malformed, 7, 3));
        }
    }

    #[test]
    fn names_round_trip() {
        for c in Class::ALL {
            assert_eq!(Class::from_name(c.name()), Some(c));
            assert_eq!(Class::ALL[c.index()], c);
        }
    }
}
