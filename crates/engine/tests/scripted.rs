//! The engine on ops whose steps are found as they run (a script's): a first step that sends
//! nothing (the code before the first request), a request named only once it is made
//! (`Driver::names_grow`), and a last step that sends nothing (the think time after the last
//! request, or the iteration's failure). Checks that nothing-steps record no latency, that a
//! failure is counted once without one, that the request's latency runs from the op's
//! intended start through the code before it (open model), and that the late name reaches
//! the per-endpoint figures.

use perfbase_core::{CheckBits, Class, Driver, Outcome, Session, Then};
use perfbase_engine::{run, EngineConfig, Load, Pacer, PhaseSpec, Segment};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

const CODE: Duration = Duration::from_millis(30);
const REQUEST: Duration = Duration::from_millis(5);
const THINK: Duration = Duration::from_millis(20);

/// Names its one request when it is first made.
#[derive(Default)]
struct Scripted {
    named: Arc<AtomicBool>,
}

/// Where an op is: 0 the code before the request, 1 the request, 2 the end.
struct User {
    named: Arc<AtomicBool>,
    op: u64,
    step: u8,
}

impl Driver for Scripted {
    type Session = User;

    async fn open(&self, _worker: usize) -> Result<User, Outcome> {
        Ok(User {
            named: self.named.clone(),
            op: u64::MAX,
            step: 0,
        })
    }

    fn labels(&self) -> Vec<String> {
        match self.named.load(SeqCst) {
            true => vec!["req".into()],
            false => Vec::new(),
        }
    }

    fn check_names(&self) -> Vec<String> {
        self.labels()
            .iter()
            .map(|_| "answered".to_string())
            .collect()
    }

    fn names_grow(&self) -> bool {
        true
    }

    fn iteration_span(&self, timeout: Duration) -> Option<Duration> {
        Some(timeout * 2)
    }
}

impl Session for User {
    async fn execute(&mut self, op: u64) -> Outcome {
        if op != self.op {
            (self.op, self.step) = (op, 0);
        }
        match self.step {
            0 => {
                tokio::time::sleep(CODE).await;
                Outcome::nothing(None)
            }
            1 => {
                self.named.store(true, SeqCst);
                tokio::time::sleep(REQUEST).await;
                Outcome::ok(10, 5).with_label(1)
            }
            _ => Outcome::nothing((op % 2 == 1).then(|| (Class::Script, "boom".to_string()))),
        }
    }

    fn then(&mut self, last: &mut Outcome) -> Then {
        self.step += 1;
        match self.step {
            1 => Then::Next {
                think: Duration::ZERO,
                label: 1,
            },
            2 => {
                // A check the code made on the response, added after the fact.
                last.checks = CheckBits {
                    passed: 1,
                    failed: 0,
                };
                Then::Next {
                    think: THINK,
                    label: 0,
                }
            }
            _ => Then::Done,
        }
    }
}

#[test]
fn steps_without_requests_record_no_latency_and_names_grow() {
    let config = EngineConfig {
        threads: 1,
        timeout: Duration::from_secs(2),
        pacing: perfbase_engine::DEFAULT_PACING,
        clock: Default::default(),
        live: false,
        segment: Segment::default(),
    };
    let spec = PhaseSpec {
        name: "scripted".into(),
        load: Load::Open {
            pacer: Pacer::constant(10.0),
            max_inflight: 100,
        },
        duration: Some(Duration::from_secs(1)),
        count: None,
        record: true,
    };
    let d = Arc::new(Scripted::default());
    let mut out = run(d, &config, &[spec], Arc::default(), &mut ()).expect("ran");
    let rec = &out.remove(0).recorder;
    assert_eq!(
        rec.response.len(),
        10,
        "one latency per request, none per nothing-step"
    );
    assert_eq!(rec.count(Class::Ok), 10);
    assert_eq!(
        rec.count(Class::Script),
        5,
        "the odd ops' failures, once each"
    );
    let labels = rec.labels();
    assert_eq!(labels.len(), 1, "the name found during the run");
    assert_eq!(
        (labels[0].name.as_str(), labels[0].response.len()),
        ("req", 10)
    );
    assert_eq!(
        rec.checks()[0].passed,
        10,
        "checks added in then() are counted"
    );
    // The request's latency runs from the op's intended start, through the code before it.
    let min_ms = rec.response.min() / 1000;
    assert!(min_ms >= (CODE + REQUEST).as_millis() as u64, "{min_ms}");
    let it = rec.iterations.as_ref().expect("iterations kept");
    assert_eq!((it.ok + it.failed, it.failed), (10, 5));
    let shortest = it.duration.min() / 1000;
    assert!(
        shortest >= (CODE + REQUEST + THINK).as_millis() as u64,
        "{shortest}"
    );
}
