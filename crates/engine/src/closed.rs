//! The closed model: N sessions per worker, each sending its next op as soon as the previous
//! one completes. Latency is measured from the actual send (there is no intended time).

use crate::context::{PhaseCtx, Shared};
use perfbase_core::Driver;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// Pause after a failed connect so a dead target is probed, not hammered in a busy loop.
const RECONNECT_BACKOFF: Duration = Duration::from_millis(10);

pub(crate) async fn run<D: Driver>(sh: &Rc<Shared<D>>, ctx: &Rc<PhaseCtx>, connections: u64) {
    let mut set = JoinSet::new();
    for _ in 0..connections {
        let session = sh.pool.borrow_mut().pop();
        set.spawn_local(connection(sh.clone(), ctx.clone(), session));
    }
    ctx.with_cutoff(sh, async { while set.join_next().await.is_some() {} })
        .await;
    // Dropping the set aborts whatever the cut-off left running.
}

/// The driver's pause between a session's ops (a held WebSocket's quiet time), cut short at
/// the phase's deadline so a paused session does not stretch the phase. Charged to nobody:
/// the next op's latency runs from its own send.
async fn pause<D: Driver>(sh: &Shared<D>, ctx: &PhaseCtx) {
    let pause = sh.setup.driver.pause();
    if pause.is_zero() {
        return;
    }
    let mut until = Instant::now() + pause;
    if let Some(d) = ctx.deadline {
        until = until.min(d);
    }
    tokio::time::sleep_until(until.into()).await;
}

async fn connection<D: Driver>(
    sh: Rc<Shared<D>>,
    ctx: Rc<PhaseCtx>,
    mut session: Option<D::Session>,
) {
    loop {
        let t0 = Instant::now();
        let Some(n) = ctx.claim(t0, sh.interrupted()) else {
            break;
        };
        if !sh.setup.driver.admit(n) {
            ctx.unclaim();
            break;
        }
        let s = match session {
            Some(ref mut s) => s,
            None => match sh.open().await {
                Ok(s) => session.insert(s),
                Err(outcome) => {
                    // The failed connect is this op's outcome: it counts, with its latency.
                    let t1 = Instant::now();
                    ctx.record(&sh, &outcome, t1 - t0, t1 - t0, t1);
                    tokio::time::sleep(RECONNECT_BACKOFF).await;
                    continue;
                }
            },
        };
        if crate::op::run(&sh, &ctx, s, (n, Instant::now()), false).await {
            session = None;
        }
        pause(&sh, &ctx).await;
    }
    if let Some(s) = session {
        sh.pool.borrow_mut().push(s);
    }
}
