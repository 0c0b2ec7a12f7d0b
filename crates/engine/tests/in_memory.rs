//! The engine against an in-memory driver: no network, no server. A session answers op n
//! after a delay chosen by a function of n (none, a constant, a stall for chosen ops, or
//! never, so the engine's timeout ends it), with a chosen class, and logs the op numbers it
//! was given. This tests the scheduler itself in milliseconds: intended starts, late and
//! unsent ops, the cut-off, the closed model's stops, segments and error classes.
//!
//! Counts, op sets and classes are asserted exactly where the engine promises exactness; times
//! only as bounds wide enough for a loaded two-core machine.

use perfbase_core::recorder::HIGHEST_US;
use perfbase_core::{Class, Driver, Outcome, Session};
use perfbase_engine::{
    run, EngineConfig, Load, Pacer, PhaseOutcome, PhaseSpec, Segment, DEFAULT_PACING,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ---- the in-memory driver -------------------------------------------------------------

/// What a session does with one op: answer `class` after `after`, or never (`None`).
#[derive(Clone, Copy, Debug)]
struct Step {
    after: Option<Duration>,
    class: Class,
}

fn ok() -> Step {
    Step {
        after: Some(Duration::ZERO),
        class: Class::Ok,
    }
}

fn ok_after(d: Duration) -> Step {
    Step {
        after: Some(d),
        class: Class::Ok,
    }
}

fn never() -> Step {
    Step {
        after: None,
        class: Class::Ok,
    }
}

fn fail(class: Class) -> Step {
    Step {
        after: Some(Duration::ZERO),
        class,
    }
}

/// Bytes an ok op moves, and bytes an op the engine timed out had moved.
const OK_BYTES: (u64, u64) = (10, 5);
const ABANDONED_BYTES: (u64, u64) = (7, 3);

type Plan = Arc<dyn Fn(u64) -> Step + Send + Sync>;
/// The k-th open attempt (0-based): `Some(delay)` opens after `delay`, `None` is refused.
type Connect = Arc<dyn Fn(u64) -> Option<Duration> + Send + Sync>;

/// What the driver and its sessions saw, shared with the test.
#[derive(Default)]
struct Log {
    executed: Mutex<Vec<u64>>,
    open_attempts: AtomicU64,
    opened: AtomicU64,
    closed: AtomicU64,
}

impl Log {
    fn executed(&self) -> Vec<u64> {
        let mut v = self.executed.lock().unwrap().clone();
        v.sort_unstable();
        v
    }
}

struct Mock {
    plan: Plan,
    connect: Connect,
    labels: Vec<String>,
    log: Arc<Log>,
}

impl Mock {
    fn new(plan: impl Fn(u64) -> Step + Send + Sync + 'static) -> Mock {
        Mock {
            plan: Arc::new(plan),
            connect: Arc::new(|_| Some(Duration::ZERO)),
            labels: Vec::new(),
            log: Arc::default(),
        }
    }

    fn connect(mut self, f: impl Fn(u64) -> Option<Duration> + Send + Sync + 'static) -> Mock {
        self.connect = Arc::new(f);
        self
    }

    /// Two labels: even ops are label 1, odd ops label 2.
    fn even_odd(mut self) -> Mock {
        self.labels = vec!["even".into(), "odd".into()];
        self
    }
}

struct MockSession {
    plan: Plan,
    log: Arc<Log>,
}

impl Driver for Mock {
    type Session = MockSession;

    async fn open(&self, _worker: usize) -> Result<MockSession, Outcome> {
        let k = self.log.open_attempts.fetch_add(1, SeqCst);
        let Some(delay) = (self.connect)(k) else {
            return Err(Outcome::error(Class::Connect, "mock: connection refused"));
        };
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        self.log.opened.fetch_add(1, SeqCst);
        Ok(MockSession {
            plan: self.plan.clone(),
            log: self.log.clone(),
        })
    }

    fn labels(&self) -> Vec<String> {
        self.labels.clone()
    }

    fn label(&self, op: u64) -> u16 {
        1 + (op % 2) as u16
    }
}

impl Session for MockSession {
    async fn execute(&mut self, op: u64) -> Outcome {
        self.log.executed.lock().unwrap().push(op);
        let step = (self.plan)(op);
        match step.after {
            None => std::future::pending::<()>().await,
            Some(d) if !d.is_zero() => tokio::time::sleep(d).await,
            Some(_) => {}
        }
        match step.class {
            Class::Ok => Outcome::ok(OK_BYTES.0, OK_BYTES.1),
            Class::Http4xx => Outcome::http(404, 0, 0),
            Class::Http5xx => Outcome::http(503, 0, 0),
            c => Outcome::error(c, format!("mock: {}", c.name())),
        }
    }

    fn bytes_of_abandoned_op(&mut self) -> (u64, u64) {
        ABANDONED_BYTES
    }

    async fn close(self) {
        self.log.closed.fetch_add(1, SeqCst);
    }
}

// ---- helpers --------------------------------------------------------------------------

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn config(threads: usize, timeout: Duration) -> EngineConfig {
    EngineConfig {
        threads,
        timeout,
        pacing: DEFAULT_PACING,
        clock: Default::default(),
        live: false,
        segment: Segment::default(),
    }
}

fn open(
    pacer: Pacer,
    max_inflight: u64,
    duration: Option<Duration>,
    count: Option<u64>,
) -> PhaseSpec {
    PhaseSpec {
        name: "open".into(),
        load: Load::Open {
            pacer,
            max_inflight,
        },
        duration,
        count,
        record: true,
    }
}

fn closed(connections: u64, duration: Option<Duration>, count: Option<u64>) -> PhaseSpec {
    PhaseSpec {
        name: "closed".into(),
        load: Load::Closed { connections },
        duration,
        count,
        record: true,
    }
}

/// Runs `phases` on `mock`; returns the outcomes, the wall time of the whole run and the log.
fn run_with(
    mock: Mock,
    cfg: &EngineConfig,
    phases: &[PhaseSpec],
    interrupt: Arc<AtomicBool>,
) -> (Vec<PhaseOutcome>, Duration, Arc<Log>) {
    let log = mock.log.clone();
    let t0 = Instant::now();
    let outcomes = run(Arc::new(mock), cfg, phases, interrupt, &mut ()).expect("engine ran");
    (outcomes, t0.elapsed(), log)
}

/// Runs one phase.
fn run_one(mock: Mock, cfg: &EngineConfig, phase: PhaseSpec) -> (PhaseOutcome, Duration, Arc<Log>) {
    let (mut outcomes, wall, log) = run_with(mock, cfg, &[phase], Arc::default());
    assert_eq!(outcomes.len(), 1);
    (outcomes.remove(0), wall, log)
}

fn us(d: Duration) -> u64 {
    d.as_micros() as u64
}

/// Recorded response times of at least `d` (to the histogram's resolution).
fn responses_at_least(o: &PhaseOutcome, d: Duration) -> u64 {
    o.recorder.response.count_between(us(d), HIGHEST_US)
}

/// Recorded service times of at least `d`.
fn services_at_least(o: &PhaseOutcome, d: Duration) -> u64 {
    let h = o
        .recorder
        .service
        .as_ref()
        .expect("open model keeps service times");
    h.count_between(us(d), HIGHEST_US)
}

/// Open model: of `planned` ops, those not started inside the window were started after it,
/// so late (exactly all of them when the worker kept up; a loaded machine may lag at the end).
fn assert_in_window(o: &PhaseOutcome, planned: u64) {
    let r = &o.recorder;
    assert!(r.started_in_window <= planned, "{}", r.started_in_window);
    assert!(
        r.started_in_window + r.late >= planned,
        "{} of {planned} started in the window, {} late",
        r.started_in_window,
        r.late
    );
}

fn range(r: std::ops::Range<u64>) -> Vec<u64> {
    r.collect()
}

// ---- open model -----------------------------------------------------------------------

/// One session, 1000/s for 300 ms, op 50 stalls 100 ms: the ~100 ops queued behind it are
/// charged their wait (response time from the intended start), not only their service time.
#[test]
fn open_latency_runs_from_the_intended_start_through_a_stall() {
    let stall = ms(100);
    let mock = Mock::new(move |n| if n == 50 { ok_after(stall) } else { ok() });
    let spec = open(Pacer::constant(1000.0), 1, Some(ms(300)), None);
    let (o, _, log) = run_one(mock, &config(1, ms(1000)), spec);
    let r = &o.recorder;

    // Every planned op was sent, once, in order (one session), and succeeded.
    assert_eq!(*log.executed.lock().unwrap(), range(0..300));
    assert_eq!(r.requests(), 300);
    assert_eq!(r.count(Class::Ok), 300);
    assert_eq!((r.unsent, r.aborted), (0, 0));
    assert_in_window(&o, 300);

    // The stalled op itself took at least the stall, from its intended start.
    assert!(r.response.max() >= us(stall), "max {}", r.response.max());
    // Op 50 ends at >= 150 ms, so ops 50..=100 (intended at 50..=100 ms) all waited >= 50 ms:
    // 51, plus a few more only as far as the stall overran or the catch-up lagged.
    let slow = responses_at_least(&o, ms(50));
    assert!((51..=90).contains(&slow), "{slow} responses >= 50 ms");
    // Measured from the actual send, only the stalled op is slow: the difference is what
    // coordinated omission would have hidden.
    assert_eq!(services_at_least(&o, ms(50)), 1);
    // Ops 51..=149 waited for the session: each is late (others may be too, by the jitter
    // of a loaded machine, since 1 ms after the intended start is late).
    assert!(r.late >= 99, "late {}", r.late);

    // The measurement says the same: 300 started in the 300 ms window, requested 1000/s.
    let m = o.measurement();
    let om = m.open_model.expect("open model stats");
    assert_eq!(om.requested_rate, 1000.0);
    let achieved = r.started_in_window as f64 / 0.3;
    assert!(
        (om.achieved_rate - achieved).abs() < 1e-6,
        "{}",
        om.achieved_rate
    );
    assert_eq!((om.late, om.unsent, om.max_inflight), (r.late, 0, 1));
    assert_eq!(o.window, ms(300));
    assert!(o.elapsed >= ms(300));
}

/// A timed open phase sends exactly the ops its pacer plans before the end (rate × duration
/// for a constant rate, the area under a ramp), each once, over two workers.
#[test]
fn open_sends_exactly_the_planned_ops_over_two_workers() {
    let d = ms(100);
    let ramp = Pacer::Ramp {
        from: 0.0,
        to: 4000.0,
        over: d,
    };
    for (pacer, planned) in [(Pacer::constant(2000.0), 200), (ramp, 200)] {
        assert_eq!(pacer.ops_before(d), planned);
        let (o, _, log) = run_one(
            Mock::new(|_| ok()),
            &config(2, ms(1000)),
            open(pacer, 8, Some(d), None),
        );
        assert_eq!(log.executed(), range(0..planned), "{pacer:?}");
        assert_eq!(o.recorder.requests(), planned);
        assert_eq!(o.recorder.count(Class::Ok), planned);
        assert_in_window(&o, planned);
        assert_eq!((o.recorder.unsent, o.recorder.aborted), (0, 0));
        // The sessions went back to the pool at the phase end and were closed at the run's.
        assert_eq!(log.closed.load(SeqCst), log.opened.load(SeqCst));
    }
}

/// A counted open phase (no duration) sends ops 0..count and stops.
#[test]
fn open_counted_phase_stops_at_the_count() {
    let spec = open(Pacer::constant(1000.0), 4, None, Some(37));
    let (o, wall, log) = run_one(Mock::new(|_| ok()), &config(2, ms(1000)), spec);
    assert_eq!(log.executed(), range(0..37));
    assert_eq!(o.recorder.requests(), 37);
    assert_eq!(o.recorder.started_in_window, 37);
    // 37 ops at 1000/s: the last starts at 36 ms, the window closes one interval later.
    assert!(
        o.window >= ms(37) && o.window < ms(100),
        "window {:?}",
        o.window
    );
    assert!(wall < ms(500), "wall {wall:?}");
}

/// 1000/s on two sessions whose ops take 20 ms (capacity 100/s), timeout 30 ms: an op that
/// found no free session within the timeout of its intended start is unsent, recorded as a
/// timeout with its wait as latency; one that waited and then got a session is late. Every
/// planned op is accounted for exactly once.
#[test]
fn open_overload_counts_late_and_unsent_ops() {
    let timeout = ms(30);
    let mock = Mock::new(|_| ok_after(ms(20)));
    let spec = open(Pacer::constant(1000.0), 2, Some(ms(100)), None);
    let (o, _, log) = run_one(mock, &config(1, timeout), spec);
    let r = &o.recorder;
    let sent = r.count(Class::Ok);

    assert_eq!(r.requests(), 100, "every planned op is recorded once");
    assert_eq!(sent + r.unsent, 100);
    assert_eq!(r.count(Class::Timeout), r.unsent);
    assert_eq!(log.executed.lock().unwrap().len() as u64, sent);
    // Each session sends at most one op per 20 ms, the last possible send being op 99's
    // at 99 + 30 ms: at most 7 per session.
    assert!((6..=14).contains(&sent), "sent {sent}");
    // Only ops 0 and 1 found a free session; every other op sent had waited.
    assert!(
        r.late <= sent && r.late + 2 >= sent,
        "late {} of {sent}",
        r.late
    );
    // An unsent op waited the whole timeout: its recorded latency is at least that.
    assert!(responses_at_least(&o, timeout) >= r.unsent);
    // No service time for unsent ops.
    assert_eq!(r.service.as_ref().unwrap().len(), sent);
    assert!(r.started_in_window <= sent);
    assert_eq!(r.aborted, 0);

    let om = o.measurement().open_model.unwrap();
    assert_eq!((om.late, om.unsent, om.max_inflight), (r.late, r.unsent, 2));
    let achieved = r.started_in_window as f64 / 0.1;
    assert!((om.achieved_rate - achieved).abs() < 1e-6);
}

/// Ops in flight when the window closes run on: the last two never answer and time out
/// 100 ms after they were sent; the phase ends then, not at the hard deadline, and nothing
/// is aborted. A timed-out op keeps the bytes it had moved.
#[test]
fn open_ops_in_flight_at_the_window_end_time_out_and_the_phase_ends() {
    let timeout = ms(100);
    let mock = Mock::new(|n| if n >= 8 { never() } else { ok() });
    // 200/s for 50 ms: ops 0..10, op 9 sent at 45 ms.
    let spec = open(Pacer::constant(200.0), 10, Some(ms(50)), None);
    let (o, wall, log) = run_one(mock, &config(1, timeout), spec);
    let r = &o.recorder;

    assert_eq!(log.executed(), range(0..10));
    assert_eq!(r.class_counts(), vec![(Class::Ok, 8), (Class::Timeout, 2)]);
    assert_eq!((r.unsent, r.aborted), (0, 0));
    assert_eq!(responses_at_least(&o, timeout), 2);
    assert_eq!(r.bytes_in, 8 * OK_BYTES.0 + 2 * ABANDONED_BYTES.0);
    assert_eq!(r.bytes_out, 8 * OK_BYTES.1 + 2 * ABANDONED_BYTES.1);
    // Op 9 timed out at >= 45 + 100 ms; the phase lasted until then.
    assert!(o.elapsed >= ms(145), "elapsed {:?}", o.elapsed);
    // ... and not to the hard deadline (50 + 2 × 100 + 250 ms).
    assert!(wall < ms(300), "wall {wall:?}");
    let samples = r.error_samples();
    assert!(samples.iter().any(|s| s.class == Class::Timeout
        && s.count == 2
        && s.message.contains("no complete response")));
}

/// A refused connect is the outcome of the op that needed it (class `connect`, the op never
/// reaches a session); a timeout breaks the session, which is reopened for the next op.
#[test]
fn open_connect_failures_and_timeouts_have_their_own_class() {
    let timeout = ms(30);
    let mock = Mock::new(|n| if n == 10 { never() } else { ok() })
        .connect(|k| (k != 0).then_some(Duration::ZERO));
    // 100/s for 200 ms: ops 0..20, 10 ms apart; op 10 times out at 130 ms.
    let spec = open(Pacer::constant(100.0), 4, Some(ms(200)), None);
    let (o, _, log) = run_one(mock, &config(1, timeout), spec);
    let r = &o.recorder;

    assert_eq!(log.executed(), range(1..20));
    assert_eq!(
        r.class_counts(),
        vec![(Class::Ok, 18), (Class::Connect, 1), (Class::Timeout, 1)]
    );
    assert_eq!((r.unsent, r.aborted), (0, 0));
    assert_eq!(responses_at_least(&o, timeout), 1);
    // The refused attempt, the first session and at least one reopened after the timeout.
    let (attempts, opened) = (log.open_attempts.load(SeqCst), log.opened.load(SeqCst));
    assert_eq!(attempts, opened + 1);
    assert!(opened >= 2, "opened {opened}");
}

// ---- cut-off and interrupt ------------------------------------------------------------

/// Closed model, 50 ms, timeout 500 ms: op 0 breaks its session at 10 ms, op 1 waits 450 ms
/// for a new one and then never answers. Its own timeout would end it at ~960 ms, but the
/// hard deadline (50 + 500 + 250 ms) cuts it off first: counted as aborted, not recorded.
#[test]
fn cut_off_at_the_hard_deadline_counts_the_op_in_flight_as_aborted() {
    let mock = Mock::new(|n| match n {
        0 => Step {
            after: Some(ms(10)),
            class: Class::Read,
        },
        _ => never(),
    })
    .connect(|k| Some(if k == 0 { Duration::ZERO } else { ms(450) }));
    let (o, wall, log) = run_one(mock, &config(1, ms(500)), closed(1, Some(ms(50)), None));
    let r = &o.recorder;

    assert_eq!(log.executed(), vec![0, 1]);
    assert_eq!(r.class_counts(), vec![(Class::Read, 1)]);
    assert_eq!(r.aborted, 1);
    assert_eq!(o.measurement().aborted_in_flight, 1);
    assert_eq!(log.opened.load(SeqCst), 2);
    assert!(!o.interrupted);
    assert!(wall >= ms(800) && wall < ms(960), "wall {wall:?}");
    // The phase lasted until the cut-off, not until op 0 ended at 10 ms: its duration (and
    // the rate over it) keeps the time the aborted op was in flight.
    assert!(o.elapsed >= ms(800), "elapsed {:?}", o.elapsed);
}

/// An interrupt (Ctrl-C) ends the phase within the poll interval: the ops in flight are
/// aborted, the phase is marked interrupted and the next phase does not run.
#[test]
fn interrupt_aborts_the_ops_in_flight_and_stops_the_run() {
    let interrupt = Arc::new(AtomicBool::new(false));
    let flag = interrupt.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(ms(100));
        flag.store(true, SeqCst);
    });
    let phase = open(Pacer::constant(1000.0), 20, Some(ms(10_000)), None);
    let phases = [phase.clone(), phase];
    let (outcomes, wall, log) = run_with(
        Mock::new(|_| never()),
        &config(1, ms(10_000)),
        &phases,
        interrupt,
    );
    stopper.join().unwrap();

    assert_eq!(outcomes.len(), 1, "the second phase must not run");
    let o = &outcomes[0];
    assert!(o.interrupted);
    // Ops 0..20 filled the in-flight cap; op 20 was waiting for a session.
    assert_eq!(log.executed(), range(0..20));
    assert_eq!(o.recorder.aborted, 20);
    assert_eq!(o.recorder.requests(), 0);
    assert_eq!(o.recorder.unsent, 0);
    assert!(wall >= ms(100) && wall < ms(400), "wall {wall:?}");
    // The ops were in flight until the interrupt: the phase lasted that long.
    assert!(o.elapsed >= ms(95), "elapsed {:?}", o.elapsed);
}

// ---- closed model ---------------------------------------------------------------------

/// A counted closed phase sends ops 0..count exactly once over its connections, opening one
/// session per connection and closing them at the end of the run.
#[test]
fn closed_stops_at_the_count_exactly() {
    let mock = Mock::new(|n| ok_after(ms(if n % 3 == 0 { 2 } else { 1 })));
    let (o, _, log) = run_one(mock, &config(2, ms(1000)), closed(4, None, Some(100)));
    assert_eq!(log.executed(), range(0..100));
    assert_eq!(o.recorder.requests(), 100);
    assert_eq!(o.recorder.count(Class::Ok), 100);
    assert_eq!(o.recorder.aborted, 0);
    assert_eq!(log.opened.load(SeqCst), 4);
    assert_eq!(log.closed.load(SeqCst), 4);
}

/// A timed closed phase stops claiming ops at its duration: two connections whose ops take
/// at least 5 ms can start at most 20 each in 100 ms, and every op claimed is recorded.
#[test]
fn closed_stops_at_the_duration() {
    let mock = Mock::new(|_| ok_after(ms(5)));
    let (o, wall, log) = run_one(mock, &config(1, ms(1000)), closed(2, Some(ms(100)), None));
    let n = o.recorder.requests();
    assert!((10..=40).contains(&n), "{n} ops");
    assert_eq!(log.executed(), range(0..n));
    assert_eq!(o.recorder.count(Class::Ok), n);
    assert_eq!(o.recorder.aborted, 0);
    assert_eq!(log.opened.load(SeqCst), 2);
    // The last op was claimed before 100 ms and ended at most one op (plus jitter) after.
    assert!(
        o.elapsed >= ms(90) && o.elapsed < ms(150),
        "elapsed {:?}",
        o.elapsed
    );
    assert!(wall < ms(300), "wall {wall:?}");
}

/// Sessions are opened once per connection and kept across phases (a warm-up warms them);
/// each phase numbers its ops from 0.
#[test]
fn closed_sessions_are_opened_once_and_kept_across_phases() {
    let mock = Mock::new(|_| ok_after(ms(1)));
    let mut warm = closed(3, None, Some(20));
    warm.record = false;
    let phases = [warm, closed(3, None, Some(30))];
    let (outcomes, _, log) = run_with(mock, &config(1, ms(1000)), &phases, Arc::default());
    assert_eq!(outcomes.len(), 2);
    assert_eq!(outcomes[0].recorder.requests(), 20);
    assert_eq!(outcomes[1].recorder.requests(), 30);
    let mut expected: Vec<u64> = (0..20).chain(0..30).collect();
    expected.sort_unstable();
    assert_eq!(log.executed(), expected);
    assert_eq!(log.opened.load(SeqCst), 3);
    assert_eq!(log.closed.load(SeqCst), 3);
}

// ---- segments -------------------------------------------------------------------------

/// Runs `spec` as each segment I/N; asserts that segment I ran exactly the planned ops
/// n ≡ I (mod N), so the segments are disjoint and their union is the whole plan, and that
/// their counts add up to it. Returns the outcomes.
fn run_segments(spec: &PhaseSpec, threads: usize, n: u32, planned: u64) -> Vec<PhaseOutcome> {
    let mut union = Vec::new();
    let mut outcomes = Vec::new();
    for index in 0..n {
        let segment = Segment { index, count: n };
        let cfg = EngineConfig {
            segment,
            ..config(threads, ms(1000))
        };
        let mock = Mock::new(|_| ok_after(ms(1)));
        let (o, _, log) = run_one(mock, &cfg, spec.clone());
        let ops = log.executed();
        let mine: Vec<u64> = (0..planned)
            .filter(|k| k % u64::from(n) == u64::from(index))
            .collect();
        assert_eq!(ops, mine, "segment {segment}");
        assert_eq!(o.recorder.requests(), segment.share(planned));
        assert_eq!(o.segment, segment);
        union.extend(ops);
        outcomes.push(o);
    }
    union.sort_unstable();
    assert_eq!(union, range(0..planned), "the union of {n} segments");
    let total: u64 = outcomes.iter().map(|o| o.recorder.requests()).sum();
    assert_eq!(total, planned);
    outcomes
}

#[test]
fn closed_segments_partition_the_count() {
    run_segments(&closed(2, None, Some(31)), 1, 3, 31);
    run_segments(&closed(5, None, Some(31)), 2, 4, 31);
    // One connection over three agents: each agent with ops to send gets one.
    run_segments(&closed(1, None, Some(10)), 1, 3, 10);
}

#[test]
fn open_segments_partition_the_schedule() {
    let spec = open(Pacer::constant(1000.0), 8, Some(ms(60)), None);
    for (n, threads) in [(3, 2), (2, 1)] {
        let outcomes = run_segments(&spec, threads, n, 60);
        for o in &outcomes {
            let om = o.measurement().open_model.unwrap();
            assert_eq!(om.requested_rate, 1000.0 / f64::from(n));
            assert_eq!(om.unsent, 0);
        }
        let started: u64 = outcomes.iter().map(|o| o.recorder.started_in_window).sum();
        let late: u64 = outcomes.iter().map(|o| o.recorder.late).sum();
        assert!(
            started <= 60 && started + late >= 60,
            "{started} in window, {late} late"
        );
    }
}

// ---- error classes ----------------------------------------------------------------------

/// Every class a session returns is counted as that class, with its status; a timeout is the
/// engine's own, with its latency; transport classes (read, timeout) break the session, so
/// the driver reopens it once for each; classes and timeouts count on the op's label.
#[test]
fn error_classes_and_timeouts_are_counted_in_their_class() {
    let timeout = ms(50);
    let plan = |n: u64| match (n, n % 10) {
        (42, _) => never(),
        (_, 3) => fail(Class::Http5xx),
        (_, 5) => fail(Class::ServerError),
        (_, 7) => fail(Class::Read),
        (_, 9) => fail(Class::Http4xx),
        _ => ok(),
    };
    let mut want = [0u64; Class::COUNT];
    for n in 0..60 {
        let class = match plan(n) {
            Step { after: None, .. } => Class::Timeout,
            s => s.class,
        };
        want[class.index()] += 1;
    }
    let mock = Mock::new(plan).even_odd();
    let (o, _, log) = run_one(mock, &config(1, timeout), closed(1, None, Some(60)));
    let r = &o.recorder;

    assert_eq!(log.executed(), range(0..60));
    for c in Class::ALL {
        assert_eq!(r.count(c), want[c.index()], "{}", c.name());
    }
    assert_eq!(
        r.class_counts(),
        vec![
            (Class::Ok, 35),
            (Class::Http4xx, 6),
            (Class::Http5xx, 6),
            (Class::Read, 6),
            (Class::Timeout, 1),
            (Class::ServerError, 6),
        ]
    );
    assert_eq!(r.errors(), 25);
    assert_eq!(r.status_counts(), vec![(0, 48), (404, 6), (503, 6)]);
    // The timed-out op waited the timeout; nothing else came near it.
    assert_eq!(responses_at_least(&o, timeout), 1);
    // One session, reopened after each of the 6 reads and the timeout.
    assert_eq!(log.opened.load(SeqCst), 8);
    // Op 42 (even, label 1) timed out; the reads are ops 7, 17, … (odd, label 2).
    let labels = r.labels();
    assert_eq!(labels.len(), 2);
    assert_eq!(labels[0].count(Class::Timeout), 1);
    assert_eq!(labels[1].count(Class::Read), 6);
    assert_eq!(labels[0].requests() + labels[1].requests(), 60);
    // Errors with a message keep a sample of it (HTTP statuses have none).
    for class in [Class::ServerError, Class::Read, Class::Timeout] {
        assert!(
            r.error_samples().iter().any(|s| s.class == class),
            "no sample of {}",
            class.name()
        );
    }
}
