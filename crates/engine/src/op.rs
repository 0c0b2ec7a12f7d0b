//! One op on a session, from its first request to its last: one request for most drivers, a
//! journey's steps for others ([`Session::then`]). The engine takes every time here, so a
//! journey's latencies are measured as any request's: the first step's from the op's
//! intended start (open model) or its send (closed model), each later step's from the end
//! of the previous one plus its think time, which is slept here and charged to nobody.
//! Requests a step sends together (a script's `http.batch`) are each timed from the step's
//! start to their own end.

use crate::context::{PhaseCtx, Shared};
use perfbase_core::{Driver, Session as _, Then};
use std::time::Instant;

/// Runs op `n` on `session`, its latency from `intended` (open model) or from each send
/// (closed model), and records every request and, for journeys, the iteration. Returns
/// whether the session must be dropped (its last request failed in transport).
pub(crate) async fn run<D: Driver>(
    sh: &Shared<D>,
    ctx: &PhaseCtx,
    session: &mut D::Session,
    (n, intended): (u64, Instant),
    open: bool,
) -> bool {
    let mut label = None;
    let mut from = intended;
    let mut all_ok = true;
    // The group the steps so far are in, since when, and when its last step ended.
    let mut group = (0u16, intended, intended);
    loop {
        let sent = Instant::now();
        let mut outcome = sh.execute(session, n, label).await;
        let done = sh.end_of(session.arrived(), sent, Instant::now());
        let then = session.then(&mut outcome);
        let last = then == Then::Done;
        all_ok &= !outcome.class.is_error();
        let start = if open { from } else { sent };
        // Whether a request was sent (the next one's intended start moves to this one's end),
        // and whether the session must be dropped.
        let (moved, breaks) = if let Some(parts) = outcome.parts.take() {
            // Requests sent together: each timed from the step's start to its own end.
            for (part, end) in parts.iter() {
                all_ok &= !part.class.is_error();
                let response = end.saturating_duration_since(start);
                let service = end.saturating_duration_since(sent);
                ctx.record_request(sh, part, (response, service), *end, false);
            }
            ctx.record_nothing(sh, &outcome, done, last);
            let first = parts.first().map_or(0, |(p, _)| p.label);
            step_group(sh, ctx, &mut group, first, (start, done));
            (true, false)
        } else if outcome.is_nothing() {
            // No request: nothing timed, a failure counted; the next request's intended
            // start is still the last one's (the op's, or the previous request's end).
            ctx.record_nothing(sh, &outcome, done, last);
            (false, false)
        } else {
            let response = done.saturating_duration_since(start);
            ctx.record_request(sh, &outcome, (response, done - sent), done, last);
            step_group(sh, ctx, &mut group, outcome.label, (start, done));
            (true, outcome.class.breaks_session())
        };
        match then {
            Then::Done => {
                finish(sh, ctx, group, (intended, done), all_ok);
                return breaks;
            }
            Then::Next { think, label: next } => {
                if !think.is_zero() {
                    tokio::time::sleep(think).await;
                }
                // The next step was meant to start when the think time ended, however late
                // the timer woke: that lag is the tool's, and is charged to the step.
                from = if moved { done + think } else { from + think };
                label = Some(next);
            }
        }
    }
}

/// Ends an iteration: its last group and its duration from `intended` to `done`.
fn finish<D: Driver>(
    sh: &Shared<D>,
    ctx: &PhaseCtx,
    group: (u16, Instant, Instant),
    (intended, done): (Instant, Instant),
    all_ok: bool,
) {
    if sh.iteration_span.is_some() {
        close_group(ctx, group);
        ctx.rec
            .borrow_mut()
            .record_iteration(done.saturating_duration_since(intended), all_ok);
    }
}

/// Moves the op's group (its number, since when, its last step's end) on by a step of
/// `label` that ran from `start` to `done`: a new group closes the one before.
fn step_group<D: Driver>(
    sh: &Shared<D>,
    ctx: &PhaseCtx,
    group: &mut (u16, Instant, Instant),
    label: u16,
    (start, done): (Instant, Instant),
) {
    if sh.grouped() {
        let g = sh.setup.driver.group(label);
        if g != group.0 {
            close_group(ctx, *group);
            *group = (g, start, done);
        }
        group.2 = done;
    }
}

/// Records a pass through group `g` (none for 0) from `start` to `end`.
fn close_group(ctx: &PhaseCtx, (g, start, end): (u16, Instant, Instant)) {
    if g > 0 {
        ctx.rec
            .borrow_mut()
            .record_group(g, end.saturating_duration_since(start));
    }
}
