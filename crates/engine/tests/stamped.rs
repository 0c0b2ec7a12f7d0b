//! Requests whose sessions tell when their response arrived ([`Session::arrived`], the
//! kernel's stamps for HTTP/1.1): the engine ends each request there, not when it read it.
//! The open model then lets responses wait between its slots (the worker thread sleeps
//! through them), and the latencies must not move.

use perfbase_core::{Class, Driver, Outcome, Session};
use perfbase_engine::{run, EngineConfig, Load, Pacer, PhaseSpec, Segment, DEFAULT_PACING};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Each response "arrives" `arrives` after its request, and is read `read` after it.
struct Late {
    arrives: Duration,
    read: Duration,
}

struct LateSession {
    arrives: Duration,
    read: Duration,
    arrived: Option<Instant>,
}

impl Driver for Late {
    type Session = LateSession;

    async fn open(&self, _worker: usize) -> Result<LateSession, Outcome> {
        Ok(LateSession {
            arrives: self.arrives,
            read: self.read,
            arrived: None,
        })
    }
}

impl Session for LateSession {
    async fn execute(&mut self, _op: u64) -> Outcome {
        let sent = Instant::now();
        tokio::time::sleep(self.read).await;
        self.arrived = Some(sent + self.arrives);
        Outcome::ok(1, 1)
    }

    fn arrived(&self) -> Option<Instant> {
        self.arrived
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// 1000/s for 300 ms; every response arrives 200 µs after its request but is read 5 ms
/// later. Every latency is the 200 µs (plus the dispatch's own lag), none the 5 ms, and the
/// schedule holds: all 300 ops start, in their window.
#[test]
fn a_response_read_late_ends_when_it_arrived() {
    let driver = Arc::new(Late {
        arrives: Duration::from_micros(200),
        read: ms(5),
    });
    let cfg = EngineConfig {
        threads: 1,
        timeout: ms(1000),
        pacing: DEFAULT_PACING,
        clock: Default::default(),
        live: false,
        segment: Segment::default(),
    };
    let spec = PhaseSpec {
        name: "open".into(),
        load: Load::Open {
            pacer: Pacer::constant(1000.0),
            max_inflight: 50,
        },
        duration: Some(ms(300)),
        count: None,
        record: true,
    };
    let out = run(
        driver,
        &cfg,
        &[spec],
        Arc::new(AtomicBool::new(false)),
        &mut (),
    )
    .unwrap();
    let r = &out[0].recorder;
    assert_eq!(r.requests(), 300);
    assert_eq!(r.count(Class::Ok), 300);
    assert_eq!(r.unsent, 0);
    // The service time is the stamp's 200 µs exactly (the histogram's precision).
    let service = r
        .service
        .as_ref()
        .expect("the open model keeps service times");
    let service_us = service.value_at_quantile(0.5);
    assert!(
        (190..=210).contains(&service_us),
        "service p50 {service_us} µs"
    );
    assert!(service.max() < 2_000, "service max {} µs", service.max());
    // From the intended start: the stamp plus how late the send was, far below the 5 ms read.
    let p99 = r.response.value_at_quantile(0.99);
    assert!(
        p99 < 2_500,
        "response p99 {p99} µs: the read time leaked in"
    );
}
