//! The open model: a dispatcher starts op n at `start + pacer.offset(n)` on an idle session
//! (opening a new one while under the in-flight cap), whatever the responses do. Response time
//! runs from the intended start, service time from the actual send. An op that cannot start
//! on time (no free session, or the worker fell behind) is sent late and counted as late.
//! Every op planned inside the window is started, even after the window closes, as long as
//! a session frees up within the timeout of its intended start; one that cannot is `unsent`,
//! recorded as a timeout error with its wait as a lower bound of its latency, never dropped.
//!
//! Waking once per op costs an idle→busy transition per op (measured: 42 CPU-µs per request
//! at 20k/s against oha's 13), so the schedule is quantised to a pacing granularity (1 ms by
//! default, as wrk2's and oha's timers are): see the comment in the dispatcher. When the
//! driver gives each response's kernel arrival time, the worker also stops waking for
//! responses between slots: see [`wait_for_slot`].

use crate::context::{PhaseCtx, Shared};
use crate::local::{Mailbox, Signal};
use crate::pacer::Pacer;
use perfbase_core::{Class, Driver, Outcome};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// An op that starts more than this after its intended time is late.
const LATE_AFTER: Duration = Duration::from_millis(1);

/// A connection slot: receives (op number, intended start) one at a time.
type Slot = Mailbox<(u64, Instant)>;

struct Slots {
    idle: RefCell<Vec<Rc<Slot>>>,
    all: RefCell<Vec<Rc<Slot>>>,
    freed: Signal,
}

/// Runs the dispatcher; returns when the last op it started was dispatched.
// Hot path: every op of the open model passes through this loop (pacing, the free-session
// hand-off, late and unsent accounting); it stays whole so the per-op state lives in one
// frame and the order of those steps reads in one place.
pub(crate) async fn run<D: Driver>(
    sh: &Rc<Shared<D>>,
    ctx: &Rc<PhaseCtx>,
    pacer: Pacer,
    max_inflight: u64,
    duration: Option<Duration>,
) -> Option<Instant> {
    let granularity = sh.setup.pacing;
    let slots = Rc::new(Slots {
        idle: RefCell::new(Vec::new()),
        all: RefCell::new(Vec::new()),
        freed: Signal::new(),
    });
    let mut set = JoinSet::new();
    let last_dispatch = Cell::new(None);
    let dispatched = Cell::new(0u64);
    let body = async {
        let mut k = 0u64;
        // The slot time of the current batch; the first op opens the first batch.
        let mut batch: Option<Instant> = None;
        loop {
            let n = ctx.op_number(k);
            if !ctx.within_count(n) || sh.interrupted() {
                break;
            }
            if !sh.setup.driver.admit(n) {
                ctx.exhausted.set(true);
                break;
            }
            let offset = pacer.offset(n);
            if duration.is_some_and(|d| offset >= d) {
                break;
            }
            // Quantise the schedule to the pacing granularity: ops due by the current batch's
            // slot go with it; a later op opens a new batch no sooner than one granularity
            // after the last. The rate is unchanged, the worker wakes at most once per
            // granularity instead of once per op, and latency runs from the slot time, so
            // the tool's batching is not charged to the server while every wait for a free
            // connection, and any lag of the tool behind its slots, still is.
            let planned = ctx.start + offset;
            let intended = match batch {
                Some(b) if planned <= b => b,
                Some(b) => planned.max(b + granularity),
                None => planned,
            };
            if batch != Some(intended) {
                batch = Some(intended);
                wait_for_slot(sh, intended).await;
            }
            // An op waits for a free session at most the timeout from its intended start,
            // inside the window or after it closed: a stall at the window's end must not
            // hide the ops queued behind it.
            let expires = intended + sh.setup.timeout;
            let mut waited = false;
            let mut read_first = sh.stamped.get();
            let slot = loop {
                if let Some(s) = slots.idle.borrow_mut().pop() {
                    break Some(s);
                }
                // Responses may wait unread in their sockets (see `wait_for_slot`): reading
                // them frees their sessions, so the batch reuses those rather than opening
                // more, or waiting for one as if the server were slow.
                if std::mem::take(&mut read_first) {
                    tokio::task::yield_now().await;
                    continue;
                }
                if (slots.all.borrow().len() as u64) < max_inflight {
                    let s = Rc::new(Slot::new());
                    slots.all.borrow_mut().push(s.clone());
                    let session = sh.pool.borrow_mut().pop();
                    set.spawn_local(slot_task(
                        sh.clone(),
                        ctx.clone(),
                        slots.clone(),
                        s.clone(),
                        session,
                    ));
                    break Some(s);
                }
                waited = true;
                if Instant::now() >= expires || sh.interrupted() {
                    break None;
                }
                // (Ctrl-C needs no wake-up here: the cut-off drops this whole loop.)
                tokio::select! {
                    _ = slots.freed.wait() => {}
                    _ = tokio::time::sleep_until(expires.into()) => {}
                }
            };
            let now = Instant::now();
            let Some(slot) = slot else {
                if sh.interrupted() {
                    break;
                }
                // Never sent: an error whose latency is at least the time it waited.
                let outcome = Outcome::error(
                    Class::Timeout,
                    format!(
                        "not sent: no free connection within the timeout ({:?}) of its intended \
                         start (the in-flight cap was reached)",
                        sh.setup.timeout
                    ),
                );
                ctx.record_unsent(sh, outcome, n, now - intended, now);
                dispatched.set(dispatched.get() + 1);
                k += 1;
                continue;
            };
            if waited || now.saturating_duration_since(intended) > LATE_AFTER {
                ctx.rec.borrow_mut().late += 1;
            }
            // Started inside the window (an op planned inside it whose batch slot falls just
            // after the deadline counts as inside).
            if ctx
                .deadline
                .is_none_or(|d| now < d.max(intended) + LATE_AFTER)
            {
                ctx.rec.borrow_mut().started_in_window += 1;
            }
            ctx.started();
            slot.put((n, intended));
            last_dispatch.set(Some(now));
            dispatched.set(dispatched.get() + 1);
            k += 1;
        }
        // No more ops: let every slot finish its current op and exit.
        for s in slots.all.borrow().iter() {
            s.close();
        }
        while set.join_next().await.is_some() {}
    };
    ctx.with_cutoff(sh, body).await;
    if let (Some(d), false, false) = (duration, sh.interrupted(), ctx.exhausted.get()) {
        // Ops planned inside the window that the dispatcher never reached (the cut-off
        // stopped it); each op it reached was started or recorded as unsent.
        let planned = pacer.ops_before(d);
        let planned = ctx.count_cap(planned);
        let mine = ctx.share_of(planned);
        ctx.rec.borrow_mut().unsent += mine.saturating_sub(dispatched.get());
    }
    last_dispatch.get()
}

/// The longest the worker thread sleeps with responses left unread in their sockets.
const BLOCK_AT_MOST: Duration = Duration::from_millis(2);

/// Waits for the slot of the next batch, at `at`.
///
/// While the sessions' responses come with the kernel's arrival times ([`Shared::stamped`])
/// and the slot is near, the thread itself sleeps: responses that arrive meanwhile wait in
/// their sockets, and are read, exactly timed, just after the next batch is sent. The
/// worker so wakes once per slot, not once per slot and again for each burst of responses:
/// those wake-ups were the open model's largest cost (bench/README.md, issue 52). Otherwise
/// the event loop waits, waking for each response as it comes.
async fn wait_for_slot<D: Driver>(sh: &Shared<D>, at: Instant) {
    let now = Instant::now();
    if sh.stamped.get() && at > now && at - now <= BLOCK_AT_MOST {
        // First the tasks that are ready run (the batch just dispatched writes its requests)
        // and what has arrived is read: tokio polls its sockets before it resumes a task
        // that yields.
        tokio::task::yield_now().await;
        if sh.timer.block_until(at).is_ok() {
            return;
        }
    }
    if sh.timer.sleep_until(at).await.is_err() {
        // A failing timerfd is not expected; fall back to tokio's coarser timer.
        tokio::time::sleep_until(at.into()).await;
    }
}

async fn slot_task<D: Driver>(
    sh: Rc<Shared<D>>,
    ctx: Rc<PhaseCtx>,
    slots: Rc<Slots>,
    me: Rc<Slot>,
    mut session: Option<D::Session>,
) {
    while let Some((n, intended)) = me.take().await {
        let s = match session {
            Some(ref mut s) => Some(s),
            None => match sh.open().await {
                Ok(s) => Some(session.insert(s)),
                Err(outcome) => {
                    let t = Instant::now();
                    ctx.record(&sh, &outcome, t - intended, Duration::ZERO, t);
                    None
                }
            },
        };
        if let Some(s) = s {
            if crate::op::run(&sh, &ctx, s, (n, intended), true).await {
                session = None;
            }
        }
        slots.idle.borrow_mut().push(me.clone());
        slots.freed.notify();
    }
    if let Some(s) = session {
        sh.pool.borrow_mut().push(s);
    }
}
