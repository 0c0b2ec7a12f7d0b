//! One worker thread: a single-threaded tokio runtime, its own sessions (kept across phases),
//! its own recorder per phase and a precise timer. It runs the phases the coordinator sends,
//! one at a time, and reports one merged-ready recorder per phase.

use crate::context::{PhaseCtx, Shared};
use crate::message::{Command, Report, Setup, WorkerReport};
use crate::phase::{EngineError, Load};
use crate::timer::PreciseTimer;
use crate::{closed, open};
use perfbase_core::Driver;
use std::rc::Rc;
use std::sync::mpsc::{Receiver, Sender};
use tokio::task::LocalSet;

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
    let shared = Rc::new(Shared::new(setup, timer));
    while let Ok(cmd) = commands.recv() {
        let report = local.block_on(&rt, run_phase(shared.clone(), cmd));
        if reports.send(Ok(report)).is_err() {
            break;
        }
    }
    close_sessions(&local, &rt, &shared);
}

/// How long the sessions left at the end may take to close, all together.
const CLOSE_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Closes the sessions left in the pool, concurrently, within [`CLOSE_LIMIT`]: a dead server
/// cannot hold the run.
fn close_sessions<D: perfbase_core::Driver>(
    local: &LocalSet,
    rt: &tokio::runtime::Runtime,
    shared: &Shared<D>,
) {
    use perfbase_core::Session as _;
    let sessions: Vec<D::Session> = shared.pool.borrow_mut().drain(..).collect();
    if sessions.is_empty() {
        return;
    }
    local.block_on(rt, async {
        let mut set = tokio::task::JoinSet::new();
        for s in sessions {
            set.spawn_local(s.close());
        }
        let _ = tokio::time::timeout(CLOSE_LIMIT, async {
            while set.join_next().await.is_some() {}
        })
        .await;
    });
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
        ops,
        offset,
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
    let ctx = Rc::new(PhaseCtx::new(
        &sh,
        &spec,
        (start, active, ops, offset),
        sh.recorder(open_model),
    ));
    let last_dispatch = match spec.load {
        Load::Idle => {
            if let Some(d) = ctx.deadline {
                ctx.with_cutoff(&sh, tokio::time::sleep_until(d.into()))
                    .await;
            }
            None
        }
        Load::Closed { connections } => {
            let connections = sh.setup.segment.connections(connections, spec.count);
            closed::run(&sh, &ctx, share(connections, id, active)).await;
            None
        }
        Load::Open {
            pacer,
            max_inflight,
        } => {
            let last = open::run(
                &sh,
                &ctx,
                pacer,
                share(max_inflight, id, active),
                spec.duration,
            )
            .await;
            // A timed open phase lasts its window even when its last op came back early,
            // so the next phase (a stage, a step) starts where the schedule says; one whose
            // driver's input ran out ends there.
            if let (Some(d), false) = (ctx.deadline, ctx.exhausted.get()) {
                ctx.with_cutoff(&sh, tokio::time::sleep_until(d.into()))
                    .await;
            }
            last
        }
    };
    let (recorder, end) = ctx.finish();
    WorkerReport {
        recorder,
        end,
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
