//! The driver seam. A protocol is a [`Driver`] that opens [`Session`]s; a session executes
//! operations and reports [`Outcome`]s. The engine owns the clock, so every protocol measures
//! latency the same way, and dispatch is static (no boxing on the hot path).
//!
//! Sessions live on one single-threaded worker, so neither they nor their futures need `Send`.

use crate::outcome::Outcome;
use std::future::Future;
use std::time::Duration;

/// What follows a request in a multi-step operation (a journey's iteration). The engine
/// asks after each request, so it alone takes every time: the next request's latency runs
/// from the end of this one plus `think`, and the pause is nobody's latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// The operation is over.
    Done,
    /// Another request of the same operation follows after `think`; it counts on the
    /// driver's label `label` (1-based, as [`Driver::label`]).
    Next { think: Duration, label: u16 },
}

/// A protocol: knows how to open sessions (connections) to the target.
pub trait Driver: Send + Sync + 'static {
    /// One connection or virtual user.
    type Session: Session;

    /// Opens a session for worker `worker`. A failure is reported as the outcome that the
    /// engine records (typically class `connect`).
    fn open(&self, worker: usize) -> impl Future<Output = Result<Self::Session, Outcome>>;

    /// Closed model: how long a session waits after each op before its next (the quiet time
    /// of a held connection, as a k6 user's `sleep()` at the end of an iteration); no one's
    /// latency. None by default.
    fn pause(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }

    /// Names of the kinds of operation reported apart (the endpoints of a request mix), in
    /// the order of [`Outcome::label`] (label 1 is the first name). Empty, the default, when
    /// the run has one kind only. At most [`MAX_LABELS`](crate::recorder::MAX_LABELS) names.
    fn labels(&self) -> Vec<String> {
        Vec::new()
    }

    /// The label of op `op` (1-based index into [`labels`](Driver::labels), 0 for none). The
    /// engine asks for it, not the session, so that an op the engine timed out is charged to
    /// its endpoint too. Called only when `labels` is not empty.
    fn label(&self, op: u64) -> u16 {
        let _ = op;
        0
    }

    /// Whether an op is an iteration of several requests (a journey), and if so the longest
    /// one may take when each request may take `timeout` (its requests' timeouts and its
    /// longest think times): the engine lets an iteration in flight at the end of a phase
    /// finish within it, and the recorder keeps each iteration's duration. `None`, the
    /// default, for one request per op.
    fn iteration_span(&self, timeout: Duration) -> Option<Duration> {
        let _ = timeout;
        None
    }

    /// The names of groups of consecutive journey steps whose duration is kept apart (k6's
    /// `group`), in the order of [`Driver::group`]'s numbers. Empty, the default, without.
    fn groups(&self) -> Vec<String> {
        Vec::new()
    }

    /// The group (1-based into [`Driver::groups`], 0 for none) that the steps of label
    /// `label` belong to. Asked only when `groups` is not empty.
    fn group(&self, label: u16) -> u16 {
        let _ = label;
        0
    }

    /// The names of the checks responses are put to, in the order of
    /// [`CheckBits`](crate::outcome::CheckBits)' bits. Empty, the default, without checks.
    fn check_names(&self) -> Vec<String> {
        Vec::new()
    }

    /// A script's own metrics, in the order of [`Sample::metric`](crate::metric::Sample)'s
    /// numbers. Empty, the default, without.
    fn metrics(&self) -> Vec<(String, crate::metric::MetricKind)> {
        Vec::new()
    }

    /// Whether the names of [`labels`](Driver::labels), [`groups`](Driver::groups),
    /// [`check_names`](Driver::check_names) and [`metrics`](Driver::metrics) grow as the run
    /// finds them (a script names its requests, groups, checks and metrics as it makes them):
    /// the engine then reads them again when an outcome has a number beyond those it knows,
    /// and the session stamps each outcome's label itself. False by default: the names are known before the run.
    fn names_grow(&self) -> bool {
        false
    }

    /// Whether op `op` may start: false once the run's input is used up (a journey's queue
    /// feeder gives each row once), which ends the phase as its duration would. The engine
    /// asks once per op, before it starts; true by default.
    fn admit(&self, op: u64) -> bool {
        let _ = op;
        true
    }

    /// Cleans up what the run left on the server (a JetStream stream, a scratch queue) once
    /// the engine is done with the driver, measured or not. The default has nothing to clean.
    /// An error is a message for a warning: the measurement stands.
    fn finish(&self) -> impl Future<Output = Result<(), String>> {
        async { Ok(()) }
    }
}

/// One connection: executes operation number `op` (a global sequence number the session maps
/// to a request, e.g. `op % targets`).
pub trait Session: 'static {
    fn execute(&mut self, op: u64) -> impl Future<Output = Outcome>;

    /// After each request of an op: whether another request of the same op follows (a
    /// journey's next step) or the op is over, the default. `last` is the request's outcome
    /// as the engine recorded it (a timeout the engine imposed included), so the session
    /// can end the iteration on a failure. The session may add to it what it learns only
    /// now (a script's checks on the response it just gave).
    fn then(&mut self, last: &mut Outcome) -> Then {
        let _ = last;
        Then::Done
    }

    /// When the response to the request `execute` just completed arrived, as the kernel
    /// stamped it on the socket, if the session knows: the engine takes it as the request's
    /// end, so a worker that reads responses in batches still times each one exactly (the
    /// open model then lets responses wait in their sockets between pacing slots). None,
    /// the default: the request ends when `execute` returns, by the engine's clock.
    fn arrived(&self) -> Option<std::time::Instant> {
        None
    }

    /// Bytes (read, written) that the last op moved before the engine gave up on it (it
    /// timed out, and its future was dropped): a request that was written counts as written
    /// even if no answer came. The default knows of none.
    fn bytes_of_abandoned_op(&mut self) -> (u64, u64) {
        (0, 0)
    }

    /// Ends the session once the engine is done with it, by the protocol's own close (for
    /// AMQP, the handshake after which the broker has handled every message sent before
    /// it: a connection that just drops loses what the broker had not read yet). The engine
    /// bounds the wait. The default drops the connection.
    fn close(self) -> impl Future<Output = ()>
    where
        Self: Sized,
    {
        async {}
    }
}
