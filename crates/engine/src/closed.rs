//! The closed model: N sessions per worker, each sending its next op as soon as the previous
//! one completes, or, for a driver that pauses between ops (held connections), once its pause
//! is over. Latency is measured from the actual send (there is no intended time).

use crate::context::{PhaseCtx, Shared};
use perfbase_core::Driver;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// Pause after a failed connect so a dead target is probed, not hammered in a busy loop.
const RECONNECT_BACKOFF: Duration = Duration::from_millis(10);

pub(crate) async fn run<D: Driver>(sh: &Rc<Shared<D>>, ctx: &Rc<PhaseCtx>, connections: u64) {
    let mut set = JoinSet::new();
    let pause = sh.setup.driver.pause();
    for i in 0..connections {
        let session = sh.pool.borrow_mut().pop();
        if pause.is_zero() {
            set.spawn_local(connection(sh.clone(), ctx.clone(), session));
        } else {
            // Held connections speak once per pause, spread over it rather than all at once:
            // connection i's first pause is i/N of it.
            let first = pause.mul_f64(i as f64 / connections as f64);
            set.spawn_local(held(sh.clone(), ctx.clone(), session, first));
        }
    }
    ctx.with_cutoff(sh, async { while set.join_next().await.is_some() {} })
        .await;
    // Dropping the set aborts whatever the cut-off left running.
}

/// What a session does next.
enum Next {
    /// Op `n` (the session is open).
    Op(u64),
    /// Its connect failed (recorded): try again.
    Retry,
    /// The phase is over for it.
    Stop,
}

/// Claims the next op and makes sure the session is open for it.
async fn next<D: Driver>(
    sh: &Rc<Shared<D>>,
    ctx: &PhaseCtx,
    session: &mut Option<D::Session>,
) -> Next {
    let t0 = Instant::now();
    let Some(n) = ctx.claim(t0, sh.interrupted()) else {
        return Next::Stop;
    };
    if !sh.setup.driver.admit(n) {
        ctx.unclaim();
        return Next::Stop;
    }
    if session.is_none() {
        match sh.open().await {
            Ok(s) => *session = Some(s),
            Err(outcome) => {
                // The failed connect is this op's outcome: it counts, with its latency.
                let t1 = Instant::now();
                ctx.record(sh, &outcome, t1 - t0, t1 - t0, t1);
                tokio::time::sleep(RECONNECT_BACKOFF).await;
                return Next::Retry;
            }
        }
    }
    Next::Op(n)
}

async fn connection<D: Driver>(
    sh: Rc<Shared<D>>,
    ctx: Rc<PhaseCtx>,
    mut session: Option<D::Session>,
) {
    loop {
        let n = match next(&sh, &ctx, &mut session).await {
            Next::Op(n) => n,
            Next::Retry => continue,
            Next::Stop => break,
        };
        let Some(s) = session.as_mut() else { continue };
        if crate::op::run(&sh, &ctx, s, (n, Instant::now()), false).await {
            session = None;
        }
    }
    if let Some(s) = session {
        sh.pool.borrow_mut().push(s);
    }
}

/// A held connection: as [`connection`], with the driver's pause after each op (the first
/// `first`), charged to nobody and cut short at the phase's deadline. The connect and the op
/// are boxed, so a connection waiting out its pause keeps only this small loop alive, not the
/// largest state of a driver's op: 10,000 held WebSockets took 46 MB of op futures before
/// their first message otherwise.
async fn held<D: Driver>(
    sh: Rc<Shared<D>>,
    ctx: Rc<PhaseCtx>,
    mut session: Option<D::Session>,
    mut pause: Duration,
) {
    loop {
        let n = match Box::pin(next(&sh, &ctx, &mut session)).await {
            Next::Op(n) => n,
            Next::Retry => continue,
            Next::Stop => break,
        };
        let Some(s) = session.as_mut() else { continue };
        if Box::pin(crate::op::run(&sh, &ctx, s, (n, Instant::now()), false)).await {
            session = None;
        }
        let mut until = Instant::now() + pause;
        if let Some(d) = ctx.deadline {
            until = until.min(d);
        }
        tokio::time::sleep_until(until.into()).await;
        pause = sh.setup.driver.pause();
    }
    if let Some(s) = session {
        sh.pool.borrow_mut().push(s);
    }
}
