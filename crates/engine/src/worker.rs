//! One worker thread: a single-threaded tokio runtime, its own sessions (kept across phases),
//! its own recorder per phase and a precise timer. It runs the phases the coordinator sends,
//! one at a time, and reports one merged-ready recorder per phase.

use crate::runtime::{EngineError, Load, PhaseSpec, Progress};
use crate::timer::PreciseTimer;
use crate::{closed, open};
use perfbase_core::{Driver, Outcome, Recorder};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::LocalSet;

/// How often a cut-off (Ctrl-C, hard deadline) is checked while operations are in flight.
const CUTOFF_POLL: Duration = Duration::from_millis(50);
/// Extra time after deadline + timeout before in-flight operations are abandoned.
const CUTOFF_GRACE: Duration = Duration::from_millis(250);
/// How often a worker publishes its progress. The coordinator reads it once a second; at a
/// whole second the reading would race the publication and lag a second behind.
const PUBLISH_EVERY_MS: u128 = 250;

pub(crate) struct Setup<D> {
    pub(crate) id: usize,
    pub(crate) driver: Arc<D>,
    pub(crate) timeout: Duration,
    pub(crate) pacing: Duration,
    pub(crate) interrupt: Arc<AtomicBool>,
    pub(crate) progress: Arc<Progress>,
}

pub(crate) struct Command {
    pub(crate) spec: PhaseSpec,
    pub(crate) start: Instant,
    /// Workers `0..active` take part; op n goes to worker n % active.
    pub(crate) active: usize,
}

pub(crate) struct WorkerReport {
    pub(crate) recorder: Recorder,
    pub(crate) end: Instant,
    pub(crate) last_dispatch: Option<Instant>,
}

pub(crate) type Report = Result<WorkerReport, EngineError>;

/// What a worker keeps between phases.
pub(crate) struct Shared<D: Driver> {
    pub(crate) setup: Setup<D>,
    /// Idle sessions, reused by the next phase (connections stay warm after a warm-up).
    pub(crate) pool: RefCell<Vec<D::Session>>,
    pub(crate) timer: PreciseTimer,
    /// The driver's [`Driver::labels`]: recorders keep figures per label when not empty.
    labels: Vec<String>,
}

impl<D: Driver> Shared<D> {
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

    /// Executes op `n` within the timeout.
    pub(crate) async fn execute(&self, session: &mut D::Session, n: u64) -> Outcome {
        use perfbase_core::Session as _;
        let outcome = match tokio::time::timeout(self.setup.timeout, session.execute(n)).await {
            Ok(o) => o,
            Err(_) => Outcome::error(
                perfbase_core::Class::Timeout,
                format!("no complete response within {:?}", self.setup.timeout),
            ),
        };
        if self.labels.is_empty() {
            outcome
        } else {
            outcome.with_label(self.setup.driver.label(n))
        }
    }

    fn recorder(&self, open_model: bool) -> Recorder {
        Recorder::new(open_model).with_labels(&self.labels)
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
    next: Cell<u64>,
    pub(crate) rec: RefCell<Recorder>,
    pub(crate) in_flight: Cell<u64>,
    end: Cell<Instant>,
    next_publish: Cell<Duration>,
}

impl PhaseCtx {
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
        let k = self.next.get();
        let n = self.op_number(k);
        if !self.within_count(n) {
            return None;
        }
        self.next.set(k + 1);
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

    /// Records a completed op and, every [`PUBLISH_EVERY_MS`], publishes progress.
    pub(crate) fn record<D: Driver>(
        &self,
        sh: &Shared<D>,
        outcome: &Outcome,
        response: Duration,
        service: Duration,
        end: Instant,
    ) {
        self.in_flight.set(self.in_flight.get().saturating_sub(1));
        let at = end.saturating_duration_since(self.start);
        let mut rec = self.rec.borrow_mut();
        rec.record(outcome, response, service, at);
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
        }
    }

    /// Runs `body` until it completes, or cuts it off on Ctrl-C or at the hard deadline
    /// (deadline + timeout + grace), counting what was still in flight as aborted.
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
                rec.aborted += self.in_flight.replace(0);
            }
        }
    }
}

pub(crate) fn main<D: Driver>(
    setup: Setup<D>,
    commands: Receiver<Command>,
    reports: Sender<Report>,
) {
    let id = setup.id;
    let fail = |source| {
        let _ = reports.send(Err(EngineError::Start { worker: id, source }));
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(e),
    };
    let local = LocalSet::new();
    let timer = match local.block_on(&rt, async { PreciseTimer::new() }) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let labels = setup.driver.labels();
    let shared = Rc::new(Shared {
        setup,
        pool: RefCell::new(Vec::new()),
        timer,
        labels,
    });
    while let Ok(cmd) = commands.recv() {
        let report = local.block_on(&rt, run_phase(shared.clone(), cmd));
        if reports.send(Ok(report)).is_err() {
            break;
        }
    }
}

/// This worker's share of `total` when split over `active` workers.
fn share(total: u64, id: usize, active: usize) -> u64 {
    let (id, active) = (id as u64, active as u64);
    total / active + u64::from(id < total % active)
}

async fn run_phase<D: Driver>(sh: Rc<Shared<D>>, cmd: Command) -> WorkerReport {
    let Command {
        spec,
        start,
        active,
    } = cmd;
    let id = sh.setup.id;
    let open_model = matches!(spec.load, Load::Open { .. });
    if id >= active {
        return WorkerReport {
            recorder: sh.recorder(open_model),
            end: start,
            last_dispatch: None,
        };
    }
    tokio::time::sleep_until(start.into()).await;
    let deadline = spec.duration.map(|d| start + d);
    let ctx = Rc::new(PhaseCtx {
        start,
        deadline,
        hard_deadline: deadline.map(|d| d + sh.setup.timeout + CUTOFF_GRACE),
        count: spec.count,
        first: id as u64,
        stride: active as u64,
        next: Cell::new(0),
        rec: RefCell::new(sh.recorder(open_model)),
        in_flight: Cell::new(0),
        end: Cell::new(start),
        next_publish: Cell::new(Duration::from_millis(PUBLISH_EVERY_MS as u64)),
    });
    let last_dispatch = match spec.load {
        Load::Idle => {
            if let Some(d) = deadline {
                ctx.with_cutoff(&sh, tokio::time::sleep_until(d.into()))
                    .await;
            }
            None
        }
        Load::Closed { connections } => {
            closed::run(&sh, &ctx, share(connections, id, active)).await;
            None
        }
        Load::Open {
            pacer,
            max_inflight,
        } => {
            open::run(
                &sh,
                &ctx,
                pacer,
                share(max_inflight, id, active),
                spec.duration,
            )
            .await
        }
    };
    let mut recorder = ctx.rec.replace(Recorder::new(false));
    recorder.finish();
    WorkerReport {
        recorder,
        end: ctx.end.get(),
        last_dispatch,
    }
}

#[cfg(test)]
mod tests {
    use super::share;

    #[test]
    fn shares_add_up() {
        for total in 0..50u64 {
            for active in 1..7usize {
                let sum: u64 = (0..active).map(|id| share(total, id, active)).sum();
                assert_eq!(sum, total);
            }
        }
    }
}
