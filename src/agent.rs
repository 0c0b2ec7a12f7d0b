//! `perfbase agent`: one segment of a plan, saved in the shared store under the run's id;
//! with `--barrier`, started together with the other agents through the store, whose clock
//! every agent reads (and records its own clock's offset from).

use crate::exit::{bad_input, AppError};
use crate::runner::ClockOffset;
use crate::store::StoreOptions;
use crate::store::RUN_LABEL;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long after the last agent arrives they all start: time for each to read the barrier.
const BARRIER_MARGIN_MS: i64 = 2000;

/// The store options of `perfbase agent`: its segment must be given (an agent runs a share,
/// never the whole), and its result goes to the store, labelled with the run's id.
pub fn store_options(a: &crate::cli::AgentArgs) -> Result<StoreOptions, AppError> {
    if a.run.segment.segment.is_none() && a.run.segment.segments.is_none() {
        return Err(bad_input(
            "perfbase agent runs one segment: give --segment I/N, or --segments N in an \
             Indexed Job (JOB_COMPLETION_INDEX); `perfbase run` runs a whole plan",
        ));
    }
    if a.run.save.no_store {
        return Err(bad_input(
            "perfbase agent saves its result in the shared store for `perfbase merge --run-id`: \
             drop --no-store",
        ));
    }
    let id = a.run_id.trim();
    if id.is_empty() || id.contains([',', '=']) {
        return Err(bad_input(format!(
            "--run-id '{id}': give a non-empty id without ',' or '=' (e.g. nightly-42)"
        )));
    }
    let mut o = a.run.save.options()?;
    o.labels.retain(|(k, _)| k != RUN_LABEL);
    o.labels.push((RUN_LABEL.into(), id.into()));
    Ok(o)
}

fn ms_of(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// `--barrier`: says this segment has arrived, waits until all N have, and gives the time to
/// start (2 s after the last arrival, on the store's clock, turned into this machine's) and
/// this machine's clock offset from the store.
pub fn barrier(
    a: &crate::cli::AgentArgs,
    o: &StoreOptions,
) -> Result<(SystemTime, ClockOffset), AppError> {
    let segment = a.run.segment.segment()?;
    let mut store = crate::store::open(o)?;
    let err = |e: perfbase_store::StoreError| bad_input(format!("--barrier: {e}"));
    // The offset from the quickest of a few readings, the one with the least round trip.
    let mut best: Option<ClockOffset> = None;
    for _ in 0..5 {
        let before = SystemTime::now();
        let store_ms = store.clock_ms().map_err(err)? as f64;
        let after = SystemTime::now();
        let (t0, t1) = (ms_of(before), ms_of(after));
        let reading = ClockOffset {
            offset_ms: store_ms - (t0 + t1) / 2.0,
            round_trip_ms: t1 - t0,
        };
        if best.is_none_or(|b| reading.round_trip_ms < b.round_trip_ms) {
            best = Some(reading);
        }
    }
    let clock = best.expect("five readings");
    store.arrive(&a.run_id, &segment.to_string()).map_err(err)?;
    let deadline = std::time::Instant::now() + a.barrier_timeout;
    let arrivals = loop {
        let arrivals = store.arrivals(&a.run_id).map_err(err)?;
        if arrivals.len() >= segment.count as usize {
            break arrivals;
        }
        if std::time::Instant::now() >= deadline {
            let here: Vec<&str> = arrivals.iter().map(|(s, _)| s.as_str()).collect();
            return Err(bad_input(format!(
                "--barrier: run {}: {} of {} agents arrived within {} ({})",
                a.run_id,
                arrivals.len(),
                segment.count,
                perfbase_core::units::format_duration(a.barrier_timeout),
                here.join(", ")
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let last = arrivals.iter().map(|(_, at)| *at).max().unwrap_or(0);
    let start_local_ms = (last + BARRIER_MARGIN_MS) as f64 - clock.offset_ms;
    let start =
        UNIX_EPOCH + perfbase_core::units::saturating_secs(start_local_ms.max(0.0) / 1000.0);
    errln!(
        "perfbase: segment {segment} of run {}: all {} agents arrived; this clock is {:+.1} ms from the store's (round trip {:.1} ms); starting at {}",
        a.run_id,
        segment.count,
        -clock.offset_ms,
        clock.round_trip_ms,
        perfbase_core::clock::rfc3339(start)
    );
    Ok((start, clock))
}

/// How often an agent beats and looks for a stop request: a stop reaches every agent within
/// this, plus the engine's own stop (within a second).
const WATCH_EVERY: Duration = Duration::from_millis(250);

/// Starts the agent's watcher, on its own thread and store connection, for the agent's whole
/// life: it beats in the store (so `perfbase merge --wait-for` can tell a lost agent from a
/// slow one) and, when the run is asked to stop there, stops this agent as Ctrl-C would,
/// with the reason. A store that fails now and then costs beats, not the run.
pub fn watch(a: &crate::cli::AgentArgs, o: &StoreOptions) -> Result<(), AppError> {
    let segment = a.run.segment.segment()?.to_string();
    let run = a.run_id.clone();
    let mut store = crate::store::open(o)?;
    store
        .heartbeat(&run, &segment)
        .map_err(|e| bad_input(format!("the store: {e}")))?;
    std::thread::Builder::new()
        .name("perfbase-watch".into())
        .spawn(move || {
            let mut stopped = false;
            loop {
                std::thread::sleep(WATCH_EVERY);
                let _ = store.heartbeat(&run, &segment);
                if stopped {
                    continue;
                }
                if let Ok(Some((reason, _))) = store.stop_request(&run) {
                    errln!("perfbase: segment {segment} of run {run}: stopping: {reason}");
                    crate::interrupt::stop(format!("stopped through the store: {reason}"));
                    stopped = true;
                }
            }
        })
        .map_err(|e| bad_input(format!("cannot start the agent's watcher thread: {e}")))?;
    Ok(())
}
