//! A worker's state as the load loops see it: [`Shared`] (what it keeps between phases: its
//! setup, idle sessions, timer) and [`PhaseCtx`] (one phase on one worker: op numbering, stop
//! conditions, the recorder, progress publication and the cut-off).

use crate::message::Setup;
use crate::phase::PhaseSpec;
use crate::timer::PreciseTimer;
use perfbase_core::{Driver, Outcome, Recorder};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a cut-off (Ctrl-C, hard deadline) is checked while operations are in flight.
const CUTOFF_POLL: Duration = Duration::from_millis(50);
/// Extra time after deadline + timeout before in-flight operations are abandoned.
const CUTOFF_GRACE: Duration = Duration::from_millis(250);
/// How often a worker publishes its progress. The coordinator reads it once a second; at a
/// whole second the reading would race the publication and lag a second behind.
const PUBLISH_EVERY_MS: u128 = 250;

/// What a worker keeps between phases.
pub(crate) struct Shared<D: Driver> {
    pub(crate) setup: Setup<D>,
    /// Idle sessions, reused by the next phase (connections stay warm after a warm-up).
    pub(crate) pool: RefCell<Vec<D::Session>>,
    pub(crate) timer: PreciseTimer,
    /// The driver's [`Driver::labels`]: recorders keep figures per label when not empty.
    labels: Vec<String>,
    /// The driver's [`Driver::check_names`], counted by every recorder.
    checks: Vec<String>,
    /// The driver's [`Driver::groups`], timed by every recorder.
    pub(crate) groups: Vec<String>,
    /// [`Driver::iteration_span`] under the run's timeout: set when ops are journeys.
    pub(crate) iteration_span: Option<Duration>,
    /// [`Driver::names_grow`]: labels, checks and groups are named as the run finds them.
    pub(crate) grows: bool,
    /// Whether the last request's end came stamped by the kernel ([`Session::arrived`]):
    /// only then may the open model leave responses unread until its next slot.
    ///
    /// [`Session::arrived`]: perfbase_core::Session::arrived
    pub(crate) stamped: Cell<bool>,
}

impl<D: Driver> Shared<D> {
    pub(crate) fn new(setup: Setup<D>, timer: PreciseTimer) -> Shared<D> {
        let labels = setup.driver.labels();
        let checks = setup.driver.check_names();
        let groups = setup.driver.groups();
        let iteration_span = setup.driver.iteration_span(setup.timeout);
        let grows = setup.driver.names_grow();
        Shared {
            setup,
            pool: RefCell::new(Vec::new()),
            timer,
            labels,
            checks,
            groups,
            iteration_span,
            grows,
            stamped: Cell::new(false),
        }
    }

    /// The end of a request that `execute` returned at `now`: its kernel arrival time when
    /// the session gives one (kept within `sent`..`now`), else `now`.
    pub(crate) fn end_of(&self, arrived: Option<Instant>, sent: Instant, now: Instant) -> Instant {
        self.stamped.set(arrived.is_some());
        arrived.map_or(now, |t| t.clamp(sent, now))
    }

    /// Whether steps are timed by group: the driver names groups, or may name them later.
    pub(crate) fn grouped(&self) -> bool {
        self.grows || !self.groups.is_empty()
    }

    pub(crate) fn interrupted(&self) -> bool {
        self.setup.interrupt.load(Ordering::Relaxed)
    }

    /// Opens a session within the timeout; a failure becomes the outcome to record.
    pub(crate) async fn open(&self) -> Result<D::Session, Outcome> {
        match tokio::time::timeout(self.setup.timeout, self.setup.driver.open(self.setup.id)).await
        {
            Ok(r) => r,
            Err(_) => Err(Outcome::error(
                perfbase_core::Class::Connect,
                format!("connect timed out after {:?}", self.setup.timeout),
            )),
        }
    }

    /// Executes the next request of op `n` within the timeout, on its endpoint `label` (the
    /// driver's label of `n` for its first request).
    pub(crate) async fn execute(
        &self,
        session: &mut D::Session,
        n: u64,
        label: Option<u16>,
    ) -> Outcome {
        use perfbase_core::Session as _;
        let outcome = match tokio::time::timeout(self.setup.timeout, session.execute(n)).await {
            Ok(o) => o,
            Err(_) => {
                let (read, written) = session.bytes_of_abandoned_op();
                Outcome::error(
                    perfbase_core::Class::Timeout,
                    format!("no complete response within {:?}", self.setup.timeout),
                )
                .with_bytes(read, written)
            }
        };
        if self.grows {
            // The session named its request; a timeout the engine imposed has the label the
            // session gave for the step.
            match label {
                Some(l) if outcome.label == 0 => outcome.with_label(l),
                _ => outcome,
            }
        } else if self.labels.is_empty() {
            outcome
        } else {
            outcome.with_label(label.unwrap_or_else(|| self.setup.driver.label(n)))
        }
    }

    pub(crate) fn recorder(&self, open_model: bool) -> Recorder {
        let driver = &self.setup.driver;
        let rec = if self.grows {
            // The names found so far (a script's earlier phases named its requests).
            Recorder::new(open_model)
                .with_labels(&driver.labels())
                .with_checks(&driver.check_names())
                .with_groups(&driver.groups())
                .with_metrics(&driver.metrics())
        } else {
            Recorder::new(open_model)
                .with_labels(&self.labels)
                .with_checks(&self.checks)
                .with_groups(&self.groups)
                .with_metrics(&driver.metrics())
        };
        if self.iteration_span.is_some() {
            rec.with_iterations()
        } else {
            rec
        }
    }
}

/// Reads the driver's names again when the outcome's label, a check bit or a metric is past
/// those the recorder knows (a driver whose names grow as the run finds them). A label's
/// group is named with it, so a new group comes with a new label; known names cost a few
/// comparisons, no lock.
pub(crate) fn grow<D: Driver>(sh: &Shared<D>, rec: &mut Recorder, outcome: &Outcome) {
    let bits = outcome.checks.passed | outcome.checks.failed;
    let known = rec.checks().len();
    let new_check = known < perfbase_core::MAX_CHECKS && bits >> known != 0;
    let metrics = rec.metrics().len();
    let new_metric = outcome.samples.as_ref().is_some_and(|s| {
        metrics < perfbase_core::metric::MAX_METRICS
            && s.0.iter().any(|m| m.metric as usize >= metrics)
    });
    if outcome.label as usize > rec.labels().len() || new_check || new_metric {
        let driver = &sh.setup.driver;
        rec.grow(
            &driver.labels(),
            &driver.check_names(),
            &driver.groups(),
            &driver.metrics(),
        );
    }
}

/// The state of one phase on one worker.
pub(crate) struct PhaseCtx {
    pub(crate) start: Instant,
    pub(crate) deadline: Option<Instant>,
    hard_deadline: Option<Instant>,
    count: Option<u64>,
    first: u64,
    stride: u64,
    segment: crate::Segment,
    /// The closed model's op numbers, shared by the phase's workers.
    shared_ops: Arc<AtomicU64>,
    /// Where the phase starts on the run's clock, which the timeline counts seconds on.
    offset: Duration,
    pub(crate) rec: RefCell<Recorder>,
    pub(crate) in_flight: Cell<u64>,
    /// The driver admitted no more ops ([`Driver::admit`]): its input is used up.
    pub(crate) exhausted: Cell<bool>,
    end: Cell<Instant>,
    next_publish: Cell<Duration>,
}

impl PhaseCtx {
    /// Worker `sh`'s part of `spec` starting at `start` (`offset` into the run), op numbers
    /// shared by `active` workers (the closed model's through `shared_ops`), recorded into
    /// `rec`.
    pub(crate) fn new<D: Driver>(
        sh: &Shared<D>,
        spec: &PhaseSpec,
        (start, active, shared_ops, offset): (Instant, usize, Arc<AtomicU64>, Duration),
        rec: Recorder,
    ) -> PhaseCtx {
        let deadline = spec.duration.map(|d| start + d);
        // The open model may start an op planned just before the deadline up to a timeout
        // after it (waiting for a free session), and that op may take a timeout more.
        let timeouts = match spec.load {
            crate::phase::Load::Open { .. } => 2,
            _ => 1,
        };
        // A journey's iteration in flight at the deadline may still send its later steps.
        let span = sh.iteration_span.unwrap_or(sh.setup.timeout);
        PhaseCtx {
            start,
            deadline,
            hard_deadline: deadline.and_then(|d| {
                d.checked_add(
                    sh.setup
                        .timeout
                        .saturating_mul(timeouts - 1)
                        .saturating_add(span)
                        .saturating_add(CUTOFF_GRACE),
                )
            }),
            exhausted: Cell::new(false),
            count: spec.count,
            // Global op numbers: this worker's of this process's segment.
            first: sh.setup.segment.op(sh.setup.id as u64),
            stride: u64::from(sh.setup.segment.count.max(1)) * active as u64,
            segment: sh.setup.segment,
            shared_ops,
            offset,
            rec: RefCell::new(rec),
            in_flight: Cell::new(0),
            end: Cell::new(start),
            next_publish: Cell::new(Duration::from_millis(PUBLISH_EVERY_MS as u64)),
        }
    }

    /// The global number of this worker's k-th op.
    pub(crate) fn op_number(&self, k: u64) -> u64 {
        self.first + k * self.stride
    }

    /// Whether op number `n` is within the count limit.
    pub(crate) fn within_count(&self, n: u64) -> bool {
        self.count.is_none_or(|c| n < c)
    }

    /// Claims the next op for a closed-model connection, or `None` when the phase is over.
    pub(crate) fn claim(&self, now: Instant, interrupted: bool) -> Option<u64> {
        if interrupted || self.deadline.is_some_and(|d| now >= d) {
            return None;
        }
        // One relaxed increment per op; the number only orders ops, it guards no memory.
        let n = self
            .segment
            .op(self.shared_ops.fetch_add(1, Ordering::Relaxed));
        if !self.within_count(n) {
            return None;
        }
        self.in_flight.set(self.in_flight.get() + 1);
        Some(n)
    }

    /// `planned` capped by the phase's count limit.
    pub(crate) fn count_cap(&self, planned: u64) -> u64 {
        self.count.map_or(planned, |c| planned.min(c))
    }

    /// How many of the op numbers `0..planned` belong to this worker.
    pub(crate) fn share_of(&self, planned: u64) -> u64 {
        if planned <= self.first {
            0
        } else {
            (planned - self.first).div_ceil(self.stride)
        }
    }

    pub(crate) fn started(&self) {
        self.in_flight.set(self.in_flight.get() + 1);
    }

    /// Gives back a claimed op that the driver did not admit.
    pub(crate) fn unclaim(&self) {
        self.in_flight.set(self.in_flight.get().saturating_sub(1));
        self.exhausted.set(true);
    }

    /// Records a completed op and, every [`PUBLISH_EVERY_MS`], publishes progress.
    pub(crate) fn record<D: Driver>(
        &self,
        sh: &Shared<D>,
        outcome: &Outcome,
        response: Duration,
        service: Duration,
        end: Instant,
    ) {
        self.record_request(sh, outcome, (response, service), end, true);
    }

    /// Records a step that sent no request ([`Outcome::is_nothing`]): its checks, and its
    /// failure with no latency; `ends_op` as for [`PhaseCtx::record_request`].
    pub(crate) fn record_nothing<D: Driver>(
        &self,
        sh: &Shared<D>,
        outcome: &Outcome,
        end: Instant,
        ends_op: bool,
    ) {
        if ends_op {
            self.in_flight.set(self.in_flight.get().saturating_sub(1));
        }
        let mut rec = self.rec.borrow_mut();
        if sh.grows {
            grow(sh, &mut rec, outcome);
        }
        rec.count_checks(outcome.checks);
        let at = end.saturating_duration_since(self.start);
        if let Some(samples) = &outcome.samples {
            rec.add_samples(samples, self.offset + at);
        }
        if outcome.class.is_error() {
            rec.count_unmeasured(outcome, self.offset + at);
        }
        if end > self.end.get() {
            self.end.set(end);
        }
    }

    /// Records one request of an op; `ends_op` when it was the op's last (a journey's other
    /// steps leave the op in flight).
    pub(crate) fn record_request<D: Driver>(
        &self,
        sh: &Shared<D>,
        outcome: &Outcome,
        (response, service): (Duration, Duration),
        end: Instant,
        ends_op: bool,
    ) {
        if ends_op {
            self.in_flight.set(self.in_flight.get().saturating_sub(1));
        }
        let at = end.saturating_duration_since(self.start);
        let mut rec = self.rec.borrow_mut();
        if sh.grows {
            grow(sh, &mut rec, outcome);
        }
        rec.record(outcome, response, service, self.offset + at);
        if end > self.end.get() {
            self.end.set(end);
        }
        if at >= self.next_publish.get() {
            let next = (at.as_millis() / PUBLISH_EVERY_MS + 1) * PUBLISH_EVERY_MS;
            self.next_publish.set(Duration::from_millis(next as u64));
            let p = sh.setup.progress.worker(sh.setup.id);
            p.completed.store(rec.requests(), Ordering::Relaxed);
            p.errors.store(rec.errors(), Ordering::Relaxed);
            // p99 of everything so far in this phase (one pass over the histogram's buckets,
            // four times a second).
            p.p99_us
                .store(rec.response.value_at_quantile(0.99), Ordering::Relaxed);
            p.in_flight.store(self.in_flight.get(), Ordering::Relaxed);
            // A live copy once a second (every fourth publication): a few hundred KB of
            // histograms copied, which the coordinator reads once a second anyway.
            if sh.setup.live && next.is_multiple_of(4 * PUBLISH_EVERY_MS) {
                if let Ok(mut live) = p.live.lock() {
                    *live = Some((at, rec.live_copy()));
                }
            }
        }
    }

    /// Records op `n`, which never started: `outcome` says why, `waited` how long it waited
    /// for a session (a lower bound of its latency), `now` when it gave up.
    pub(crate) fn record_unsent<D: Driver>(
        &self,
        sh: &Shared<D>,
        outcome: Outcome,
        n: u64,
        waited: Duration,
        now: Instant,
    ) {
        let outcome = if sh.labels.is_empty() {
            outcome
        } else {
            outcome.with_label(sh.setup.driver.label(n))
        };
        let at = self.offset + now.saturating_duration_since(self.start);
        self.rec.borrow_mut().record_unsent(&outcome, waited, at);
        if now > self.end.get() {
            self.end.set(now);
        }
    }

    /// The phase's finished recorder and when its last operation ended.
    pub(crate) fn finish(&self) -> (Recorder, Instant) {
        let mut recorder = self.rec.replace(Recorder::new(false));
        recorder.finish();
        (recorder, self.end.get())
    }

    /// Runs `body` until it completes, or cuts it off on Ctrl-C or at the hard deadline
    /// (deadline + timeout + grace), counting what was still in flight as aborted (the phase
    /// then ends at the cut-off).
    pub(crate) async fn with_cutoff<D: Driver>(
        &self,
        sh: &Shared<D>,
        body: impl Future<Output = ()>,
    ) {
        let cutoff = async {
            loop {
                if sh.interrupted() || self.hard_deadline.is_some_and(|d| Instant::now() >= d) {
                    return;
                }
                tokio::time::sleep(CUTOFF_POLL).await;
            }
        };
        tokio::select! {
            _ = body => {}
            _ = cutoff => {
                let mut rec = self.rec.borrow_mut();
                let aborted = self.in_flight.replace(0);
                rec.aborted += aborted;
                // The aborted ops were in flight until now: the phase lasted until its cut-off,
                // so its duration (and the rate over it) must not drop that time.
                if aborted > 0 {
                    self.end.set(self.end.get().max(Instant::now()));
                }
            }
        }
    }
}
