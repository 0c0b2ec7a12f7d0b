//! `perfbase merge`: the results of agents that each ran one segment of the same schedule
//! (`--segment I/N`) become the result of one run, exactly: histograms added, counts summed,
//! phases matched by position, durations and rates as one machine side by side would have
//! them. A missing or repeated segment is refused, naming it; an agent that was interrupted
//! (or fell short of its rate) makes the merged run say so, naming the agent.

use crate::cli::MergeArgs;
use crate::exit::{bad_input, AppError, Exit};
use crate::store::{load, StoreOptions};
use perfbase_core::merge::merge_concurrent;
use perfbase_core::result::RunResult;
use perfbase_engine::Segment;

pub use crate::store::{INTERRUPTED_LABEL, LOST_LABEL, MERGED_LABEL, RUN_LABEL};

/// How `--wait-for` waits: for how many agents, how long in all, and when an agent whose
/// heartbeat stopped counts as lost.
struct Wait {
    agents: u32,
    timeout: std::time::Duration,
    lost_after: std::time::Duration,
}

/// What the agents of one run left in the store: their results, oldest first, and the
/// segments of the agents that were lost.
struct Agents {
    runs: Vec<(String, RunResult)>,
    lost: Vec<String>,
}

/// The results the agents of run `id` saved; with `wait`, polled every second until all of
/// them are there, or all but the lost ones (whose heartbeat stopped with no result saved),
/// or the wait's timeout has passed.
fn agents_of(o: &StoreOptions, id: &str, wait: Option<Wait>) -> Result<Agents, AppError> {
    let mut store = crate::store::open(o)?;
    let err = |e: perfbase_store::StoreError| bad_input(e.to_string());
    let filter = vec![(RUN_LABEL.to_string(), id.to_string())];
    let deadline = wait.as_ref().map(|w| std::time::Instant::now() + w.timeout);
    let mut runs: std::collections::BTreeMap<i64, RunResult> = Default::default();
    let lost = loop {
        for s in store.history(&filter, 0).map_err(err)? {
            if let std::collections::btree_map::Entry::Vacant(e) = runs.entry(s.id) {
                e.insert(
                    store
                        .get(&perfbase_store::RunRef::Id(s.id))
                        .map_err(err)?
                        .result,
                );
            }
        }
        let Some(w) = &wait else { break Vec::new() };
        if runs.len() >= w.agents as usize {
            break Vec::new();
        }
        let saved: Vec<&str> = runs.values().filter_map(|r| r.segment.as_deref()).collect();
        let lost: Vec<String> = store
            .heartbeats(id)
            .map_err(err)?
            .into_iter()
            .filter(|(seg, age)| {
                *age as u128 > w.lost_after.as_millis() && !saved.contains(&seg.as_str())
            })
            .map(|(seg, _)| seg)
            .collect();
        if !lost.is_empty() && runs.len() + lost.len() >= w.agents as usize {
            break lost;
        }
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            return Err(bad_input(format!(
                "run {id}: {} of {} agents saved their results within {} (perfbase history --label {RUN_LABEL}={id} lists them)",
                runs.len(),
                w.agents,
                perfbase_core::units::format_duration(w.timeout)
            )));
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    };
    if runs.is_empty() {
        return Err(bad_input(format!(
            "run {id}: no agent saved a result with the label {RUN_LABEL}={id} in this store"
        )));
    }
    for seg in &lost {
        errln!(
            "perfbase: warning: run {id}: the agent of segment {seg} was lost (no heartbeat for \
             over {} and no result): the merged run is partial",
            perfbase_core::units::format_duration(
                wait.as_ref()
                    .map_or_else(Default::default, |w| w.lost_after)
            )
        );
    }
    Ok(Agents {
        runs: runs
            .into_iter()
            .map(|(id, r)| (format!("run {id}"), r))
            .collect(),
        lost,
    })
}

pub fn merge(a: MergeArgs, o: &StoreOptions) -> Result<Exit, AppError> {
    let watching = match &a.run_id {
        Some(id) => crate::live::follow::Watching::start(&a.web, o, id)?,
        None if a.web.dashboard.is_some() => {
            return Err(bad_input(
                "--dashboard needs --run-id: it follows the agents of one run",
            ))
        }
        None => None,
    };
    let Agents { runs, lost } = match &a.run_id {
        Some(id) => {
            let wait = a.wait_for.map(|agents| Wait {
                agents,
                timeout: a.wait_timeout,
                lost_after: a.lost_after,
            });
            agents_of(o, id, wait)?
        }
        None => {
            let mut store = None;
            let runs = a
                .runs
                .iter()
                .map(|r| load(&mut store, o, r))
                .collect::<Result<_, _>>()?;
            Agents {
                runs,
                lost: Vec::new(),
            }
        }
    };
    check_segments(&runs, &lost)?;
    check_distinct(&runs)?;
    check_one_run(&runs)?;
    let mut merged = merge_runs(&runs, &lost)?;
    let study = match &a.plan {
        Some(path) => {
            let plan = crate::plan::load(path, a.scale).map_err(|e| bad_input(e.to_string()))?;
            check_plan(&plan, &runs)?;
            Some(crate::runner::rejudge::study_of(&plan, &merged))
        }
        None => None,
    };
    merged.study = study.clone();
    if let Some(path) = &a.json {
        if path.as_os_str() == "-" {
            crate::out::give_stdout_to_data();
        }
        perfbase_report::json::write_atomic(path, &merged)
            .map_err(|e| bad_input(format!("--json {}: cannot write: {e}", path.display())))?;
    }
    print(&merged);
    if let Some(w) = watching {
        w.end(&merged);
    }
    let unsaved = match (a.save, &a.run_id) {
        (true, Some(id)) => {
            let labels = merged_labels(id, &runs, &lost).into_iter().collect();
            crate::store::save(o, "merged", &merged, &labels).is_err()
        }
        _ => false,
    };
    agents_said(&runs);
    if unsaved {
        return Ok(Exit::Failed);
    }
    Ok(Exit::of(&merged, study.is_none_or(|s| s.passed)))
}

/// Prints a merged run: judged by its plan's study when it has one, else as a run.
pub fn print(merged: &RunResult) {
    match &merged.study {
        Some(st) => out!(
            "{}",
            perfbase_report::terminal::render_study(
                merged,
                st,
                std::io::IsTerminal::is_terminal(&std::io::stdout())
            )
        ),
        None => out!("{}", perfbase_report::terminal::render(merged)),
    }
}

/// The labels a merged run is saved with: its run id, and the segments that were lost or
/// interrupted, so that nobody takes a partial run for a whole one (`perfbase history` shows
/// them).
fn merged_labels(id: &str, runs: &[(String, RunResult)], lost: &[String]) -> Vec<(String, String)> {
    let mut labels = vec![(MERGED_LABEL.to_string(), id.to_string())];
    if !lost.is_empty() {
        labels.push((LOST_LABEL.to_string(), lost.join(" ")));
    }
    let cut: Vec<String> = runs
        .iter()
        .filter(|(_, r)| r.interrupted)
        .map(|(_, r)| segment_of(r))
        .collect();
    if !cut.is_empty() {
        labels.push((INTERRUPTED_LABEL.to_string(), cut.join(" ")));
    }
    labels
}

/// What the agents' results say beside the merged run: their clocks against the store's,
/// and which were interrupted or fell short of their rate.
fn agents_said(runs: &[(String, RunResult)]) {
    let offsets: Vec<String> = runs
        .iter()
        .filter_map(|(label, r)| {
            r.clock_offset_ms
                .map(|o| format!("{label} (segment {}) {:+.1} ms", segment_of(r), -o))
        })
        .collect();
    if !offsets.is_empty() {
        errln!(
            "perfbase: the agents' clocks against the store's: {}",
            offsets.join(", ")
        );
    }
    for (label, r) in runs {
        if r.interrupted {
            errln!("perfbase: warning: {label} (segment {}) was interrupted: the merged run is partial", segment_of(r));
        }
        if let Some(o) = &r.measurement.open_model {
            if o.requested_rate > 0.0 && o.achieved_rate < 0.95 * o.requested_rate {
                errln!(
                    "perfbase: warning: {label} (segment {}) achieved {:.1}/s of its {:.1}/s: the merged rate falls short with it",
                    segment_of(r),
                    o.achieved_rate,
                    o.requested_rate
                );
            }
        }
    }
}

/// The segments that gave no result for phase `i`: agents that stopped before it, and the
/// lost ones; said on stderr, naming the step.
fn missing_from(
    runs: &[(String, RunResult)],
    lost: &[String],
    i: usize,
    step: &str,
) -> Vec<String> {
    let short = runs.iter().filter(|(_, r)| r.phases.len() <= i);
    let said: Vec<String> = short
        .clone()
        .map(|(_, r)| format!("segment {}", segment_of(r)))
        .chain(lost.iter().map(|s| format!("segment {s} (lost)")))
        .collect();
    if !said.is_empty() {
        errln!(
            "perfbase: step '{step}' is invalid: no result from {}",
            said.join(", ")
        );
    }
    short
        .map(|(_, r)| segment_of(r))
        .chain(lost.iter().cloned())
        .collect()
}

fn segment_of(r: &RunResult) -> String {
    r.segment.clone().unwrap_or_else(|| "none".into())
}

/// Every segment of one N exactly once, but the `lost` ones (their agents died); results
/// without a segment merge as they are (hand-split runs), but not mixed with segments.
fn check_segments(runs: &[(String, RunResult)], lost: &[String]) -> Result<(), AppError> {
    let parsed: Vec<Option<Segment>> = runs
        .iter()
        .map(|(label, r)| {
            r.segment
                .as_deref()
                .map(|s| {
                    s.parse::<Segment>()
                        .map_err(|e| bad_input(format!("{label}: segment {e}")))
                })
                .transpose()
        })
        .collect::<Result<_, _>>()?;
    if parsed.iter().all(Option::is_none) {
        return Ok(());
    }
    let Some(n) = parsed.iter().flatten().map(|s| s.count).next() else {
        return Ok(());
    };
    let mut seen = vec![None::<&str>; n as usize];
    for ((label, _), s) in runs.iter().zip(&parsed) {
        let s = s.ok_or_else(|| {
            bad_input(format!(
                "{label} ran no segment while the others did: merge the segments of one schedule"
            ))
        })?;
        if s.count != n {
            return Err(bad_input(format!(
                "{label} ran segment {s} but another ran one of {n}: merge the segments of one schedule"
            )));
        }
        if let Some(other) = seen[s.index as usize].replace(label) {
            return Err(bad_input(format!(
                "segment {s} is given twice: {other} and {label}"
            )));
        }
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, l)| l.is_none())
        .map(|(i, _)| format!("{i}/{n}"))
        .filter(|s| !lost.contains(s))
        .collect();
    if !missing.is_empty() {
        let (noun, verb) = if missing.len() == 1 {
            ("segment", "is")
        } else {
            ("segments", "are")
        };
        return Err(bad_input(format!(
            "{noun} {} {verb} missing: each agent's result is needed for an exact merge",
            missing.join(", ")
        )));
    }
    Ok(())
}

/// The plan a result ran, when it ran one.
fn plan_of(r: &RunResult) -> Option<&str> {
    r.study.as_ref().map(|s| s.plan.as_str())
}

/// Refuses results that are not parts of one run: another plan, another protocol, another
/// load model (as a whole or phase by phase), or a start too far from the others' to be the
/// same run (agents meet at a barrier or `--start-at`; a run of yesterday is not a segment
/// of today's). Each refusal names both results and what differs.
/// Refuses a result given twice (the same file, a copy of it, or the same run from the
/// store): merged with itself, it would be counted twice. Two results are one when they began
/// at the same moment on the same host, as the same segment, and measured the same histogram.
fn check_distinct(runs: &[(String, RunResult)]) -> Result<(), AppError> {
    let same = |a: &RunResult, b: &RunResult| {
        a.started_at == b.started_at
            && a.env.hostname == b.env.hostname
            && a.segment == b.segment
            && a.measurement.requests == b.measurement.requests
            && a.measurement.histogram.response == b.measurement.histogram.response
    };
    for (i, (a_label, a)) in runs.iter().enumerate() {
        if let Some((b_label, _)) = runs[i + 1..].iter().find(|(_, b)| same(a, b)) {
            return Err(bad_input(format!(
                "{a_label} and {b_label} are the same result (started {} on {}): merged with \
                 itself it would be counted twice; give each agent's result once",
                a.started_at, a.env.hostname
            )));
        }
    }
    Ok(())
}

fn check_one_run(runs: &[(String, RunResult)]) -> Result<(), AppError> {
    let (first_label, first) = &runs[0];
    let differ = |label: &str, what: &str, a: &str, b: &str| {
        bad_input(format!(
            "{first_label} and {label} are not parts of one run: {what} {a} and {b}; merge \
             the segments one run's agents saved (perfbase merge --run-id ID)"
        ))
    };
    let start = |r: &RunResult| {
        perfbase_core::clock::parse_time(&r.started_at)
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs_f64())
    };
    let longest = runs
        .iter()
        .map(|(_, r)| r.measurement.duration_s)
        .fold(0.0, f64::max);
    for (label, r) in &runs[1..] {
        if let (Some(a), Some(b)) = (plan_of(first), plan_of(r)) {
            if a != b {
                return Err(differ(
                    label,
                    "they ran the plans",
                    &format!("'{a}'"),
                    &format!("'{b}'"),
                ));
            }
        }
        if r.protocol != first.protocol {
            return Err(differ(
                label,
                "they loaded with",
                &first.protocol,
                &r.protocol,
            ));
        }
        if r.model != first.model {
            return Err(differ(
                label,
                "their load models are",
                first.model.name(),
                r.model.name(),
            ));
        }
        for (a, b) in first.phases.iter().zip(&r.phases) {
            if a.model != b.model {
                return Err(differ(
                    label,
                    &format!("phase '{}' ran the load models", a.name),
                    a.model.name(),
                    b.model.name(),
                ));
            }
        }
        if let (Some(a), Some(b)) = (start(first), start(r)) {
            let apart = a.max(b) - a.min(b);
            if apart > longest + START_SLACK_S {
                return Err(differ(
                    label,
                    "they started",
                    &first.started_at,
                    &format!(
                        "{} ({apart:.0} s apart, each ran at most {longest:.0} s)",
                        r.started_at
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// How much later than the longest run one segment may start after another and still be
/// part of it: agents started without a barrier start seconds apart, not minutes.
const START_SLACK_S: f64 = 300.0;

/// Refuses `--plan` naming a plan the agents did not run: another name, or scenarios and
/// checks their phases do not have.
fn check_plan(plan: &crate::plan::Plan, runs: &[(String, RunResult)]) -> Result<(), AppError> {
    for (label, r) in runs {
        if let Some(ran) = plan_of(r).filter(|ran| *ran != plan.name) {
            return Err(bad_input(format!(
                "--plan is plan '{}', but {label} ran plan '{ran}': give the plan the agents ran",
                plan.name
            )));
        }
        for p in &r.phases {
            if let Some(s) = p.scenario.as_deref() {
                // A check's phases carry `check NAME` as their scenario.
                if !plan.scenarios.iter().any(|x| x.name == s)
                    && !plan
                        .checks
                        .iter()
                        .any(|c| s.strip_prefix("check ") == Some(&c.name))
                {
                    return Err(bad_input(format!(
                        "--plan '{}' has no scenario '{s}', which {label} ran: give the plan \
                         the agents ran",
                        plan.name
                    )));
                }
            }
        }
    }
    Ok(())
}

fn merge_runs(runs: &[(String, RunResult)], lost: &[String]) -> Result<RunResult, AppError> {
    // The run with the most phases is the schedule; an agent killed or interrupted part way
    // has a prefix of it (its result is saved after every phase).
    let (_, longest) = runs
        .iter()
        .max_by_key(|(_, r)| r.phases.len())
        .expect("merge takes two runs or more");
    for (label, r) in runs {
        let prefix = r
            .phases
            .iter()
            .zip(&longest.phases)
            .all(|(a, b)| a.name == b.name);
        if r.target != longest.target || !prefix {
            return Err(bad_input(format!(
                "{label} ran another load ({}, phases {}): merge the segments of one schedule",
                r.target,
                r.phases
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let mut merged = longest.clone();
    // Where each agent ran, and on how much: the merged run ran on all their nodes.
    merged.env.agents = perfbase_core::merge::agents_env(runs.iter().map(|(_, r)| r));
    merged.env.node = None;
    merged.segment = None;
    merged.clock_offset_ms = None;
    merged.interrupted = runs.iter().any(|(_, r)| r.interrupted) || !lost.is_empty();
    merged.stop_reason = runs.iter().find_map(|(_, r)| r.stop_reason.clone());
    merged.lost_segments = lost.to_vec();
    merged.measurement =
        merge_concurrent(&runs.iter().map(|(_, r)| &r.measurement).collect::<Vec<_>>());
    for (i, phase) in merged.phases.iter_mut().enumerate() {
        phase.missing_segments = missing_from(runs, lost, i, &phase.name);
        // Without every segment the step is not the schedule it names: the run is partial.
        merged.interrupted |= !phase.missing_segments.is_empty();
        phase.measurement = merge_concurrent(
            &runs
                .iter()
                .filter_map(|(_, r)| r.phases.get(i).map(|p| &p.measurement))
                .collect::<Vec<_>>(),
        );
    }
    // Each agent records the whole schedule's load (its segment is its share of it), so the
    // merged run's is any agent's. A plan's run has no one load: its headline gives the peak
    // of its steps' instead of none.
    if merged.config.connections.is_none() {
        merged.config.connections = merged
            .phases
            .iter()
            .filter_map(|p| p.offered_connections)
            .max();
    }
    // Findings (knees, thresholds) were each agent's; they are not carried over.
    merged.study = None;
    merged.monitor = None;
    Ok(merged)
}
