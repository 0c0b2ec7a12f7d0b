//! The engine on multi-step ops (journeys) over an in-memory driver: each op is three
//! requests with a think time between them. Checks that each step is recorded on its own
//! endpoint with its own latency (think time excluded, a stall charged to the step it hit),
//! that iterations are counted and timed from the op's intended start, that a failed step
//! ends its iteration when the session says so, and that a driver that admits no more ops
//! ends the phase.

use perfbase_core::recorder::HIGHEST_US;
use perfbase_core::{CheckBits, Class, Driver, Outcome, Session, Then};
use perfbase_engine::{run, EngineConfig, Load, Pacer, PhaseOutcome, PhaseSpec, Segment};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

const STEPS: u16 = 3;
const THINK: Duration = Duration::from_millis(20);
const STEP_TIME: Duration = Duration::from_millis(5);
const STALL: Duration = Duration::from_millis(150);

/// Op `stall_op`'s last step stalls; odd ops fail at step 2 when `fail_odd`; at most
/// `admit` ops start.
struct Journeys {
    stall_op: u64,
    fail_odd: bool,
    admit: u64,
    admitted: AtomicU64,
}

struct Walk {
    fail_odd: bool,
    stall_op: u64,
    op: u64,
    step: u16,
}

impl Driver for Journeys {
    type Session = Walk;

    async fn open(&self, _worker: usize) -> Result<Walk, Outcome> {
        Ok(Walk {
            fail_odd: self.fail_odd,
            stall_op: self.stall_op,
            op: u64::MAX,
            step: 0,
        })
    }

    fn labels(&self) -> Vec<String> {
        (1..=STEPS).map(|s| format!("step {s}")).collect()
    }

    fn label(&self, _op: u64) -> u16 {
        1
    }

    fn iteration_span(&self, timeout: Duration) -> Option<Duration> {
        Some((timeout + THINK) * u32::from(STEPS))
    }

    fn check_names(&self) -> Vec<String> {
        vec!["answered".into()]
    }

    fn admit(&self, _op: u64) -> bool {
        self.admitted.fetch_add(1, SeqCst) < self.admit
    }
}

impl Session for Walk {
    async fn execute(&mut self, op: u64) -> Outcome {
        if op != self.op {
            (self.op, self.step) = (op, 1);
        }
        let stall = self.step == STEPS && op == self.stall_op;
        tokio::time::sleep(if stall { STALL } else { STEP_TIME }).await;
        if self.fail_odd && op % 2 == 1 && self.step == 2 {
            let mut o = Outcome::error(Class::Check, "check 'answered' failed");
            o.checks = CheckBits {
                passed: 0,
                failed: 1,
            };
            return o;
        }
        let mut o = Outcome::ok(10, 5);
        o.checks = CheckBits {
            passed: 1,
            failed: 0,
        };
        o
    }

    fn then(&mut self, last: &mut Outcome) -> Then {
        if last.class.is_error() || self.step == STEPS {
            self.op = u64::MAX;
            return Then::Done;
        }
        self.step += 1;
        Then::Next {
            think: THINK,
            label: self.step,
        }
    }
}

fn driver(stall_op: u64, fail_odd: bool, admit: u64) -> Journeys {
    Journeys {
        stall_op,
        fail_odd,
        admit,
        admitted: AtomicU64::new(0),
    }
}

fn config() -> EngineConfig {
    EngineConfig {
        threads: 1,
        timeout: Duration::from_secs(2),
        pacing: perfbase_engine::DEFAULT_PACING,
        clock: Default::default(),
        live: false,
        segment: Segment::default(),
    }
}

fn one(d: Journeys, load: Load, duration: Option<Duration>, count: Option<u64>) -> PhaseOutcome {
    let spec = PhaseSpec {
        name: "journeys".into(),
        load,
        duration,
        count,
        record: true,
    };
    let mut out = run(Arc::new(d), &config(), &[spec], Arc::default(), &mut ()).expect("ran");
    out.remove(0)
}

fn max_ms(l: &perfbase_core::recorder::LabelStats) -> u64 {
    l.response.max() / 1000
}

#[test]
fn each_step_is_timed_apart_from_the_think_time_and_a_stall_shows_on_its_step() {
    // 20 journeys at 50/s: op 4's last step stalls for 150 ms.
    let o = one(
        driver(4, false, u64::MAX),
        Load::Open {
            pacer: Pacer::constant(50.0),
            max_inflight: 100,
        },
        None,
        Some(20),
    );
    let r = &o.recorder;
    assert_eq!(r.requests(), 60, "three requests per journey");
    let steps: Vec<u64> = r.labels().iter().map(|l| l.requests()).collect();
    assert_eq!(steps, [20, 20, 20]);
    let it = r.iterations.as_ref().expect("journeys keep iterations");
    assert_eq!((it.ok, it.failed), (20, 0));
    // An iteration spans its three steps and two think times, from its intended start.
    let least = (STEP_TIME * 3 + THINK * 2).as_micros() as u64;
    assert!(
        it.duration.min() >= least,
        "{} < {least}",
        it.duration.min()
    );
    // The think time is nobody's latency: the first two steps stay well under it.
    for l in &r.labels()[..2] {
        assert!(max_ms(l) < 60, "{}: {} ms", l.name, max_ms(l));
    }
    // The stall lands on the step it hit, and only there.
    let last = &r.labels()[2];
    assert!(max_ms(last) >= STALL.as_millis() as u64, "{}", max_ms(last));
    assert_eq!(last.response.count_between(140_000, HIGHEST_US), 1);
    assert!(it.duration.max() >= (STALL + THINK * 2).as_micros() as u64);
    assert_eq!(r.checks()[0].passed, 60);
}

#[test]
fn a_failed_step_ends_its_iteration_and_counts_as_a_failed_one() {
    let o = one(
        driver(u64::MAX, true, u64::MAX),
        Load::Closed { connections: 2 },
        None,
        Some(10),
    );
    let r = &o.recorder;
    // Even ops: 3 requests; odd ops stop after their failed second.
    assert_eq!(r.requests(), 5 * 3 + 5 * 2);
    assert_eq!(r.count(Class::Check), 5);
    let it = r.iterations.as_ref().expect("iterations");
    assert_eq!((it.ok, it.failed), (5, 5));
    let c = &r.checks()[0];
    assert_eq!((c.passed, c.failed), (20, 5));
    assert_eq!(r.aborted, 0);
}

#[test]
fn a_driver_that_admits_no_more_ops_ends_the_phase_early() {
    for load in [
        Load::Closed { connections: 3 },
        Load::Open {
            pacer: Pacer::constant(200.0),
            max_inflight: 100,
        },
    ] {
        let t0 = Instant::now();
        let o = one(
            driver(u64::MAX, false, 7),
            load,
            Some(Duration::from_secs(10)),
            None,
        );
        let r = &o.recorder;
        assert_eq!(r.iterations.as_ref().map(|i| i.count()), Some(7));
        assert_eq!(r.requests(), 21);
        assert_eq!(r.unsent, 0, "ops never planned are not unsent");
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    }
}
