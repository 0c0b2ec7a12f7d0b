//! What a plan would run, phase by phase: `perfbase run --dry-run`.

use super::model::Plan;
use perfbase_core::units::format_duration;
use perfbase_engine::Load;
use std::time::Duration;

/// A step's load in words: the model, its rate or connections, and the open model's cap.
fn load(load: &Load) -> String {
    match load {
        Load::Open {
            pacer,
            max_inflight,
        } => format!(
            "open model at {:.2}/s, at most {max_inflight} in flight",
            pacer.mean_rate()
        ),
        Load::Closed { connections } => format!("closed model, {connections} connection(s)"),
        Load::Idle => "idle".to_string(),
    }
}

/// What a plan would run, phase by phase (for `perfbase run --dry-run`).
pub fn describe(plan: &Plan) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let mut total = Duration::ZERO;
    let _ = writeln!(
        out,
        "plan {} ({}), scale {}",
        plan.name,
        perfbase_core::redact::printable(&plan.file),
        plan.scale
    );
    let _ = writeln!(
        out,
        "timeout {}, pacing granularity {}, threads {}",
        format_duration(plan.timeout),
        format_duration(plan.pacing),
        plan.threads.map_or("auto".to_string(), |t| t.to_string())
    );
    for s in &plan.scenarios {
        let _ = writeln!(
            out,
            "scenario {}: {} on {}, {} step(s) × {} repetition(s){}",
            s.name,
            s.kind.name(),
            plan.workloads[&s.workload].label,
            s.steps.len(),
            s.repetitions,
            precision(s)
        );
        if let Some(w) = s.warmup {
            let _ = writeln!(
                out,
                "  warm-up {}",
                perfbase_core::units::format_duration(w)
            );
            total = total.saturating_add(w);
        }
        for step in &s.steps {
            let bound = match (step.duration, step.count) {
                (Some(d), Some(n)) => format!(
                    "{} or {n} requests",
                    perfbase_core::units::format_duration(d)
                ),
                (Some(d), None) => perfbase_core::units::format_duration(d),
                (None, Some(n)) => format!("{n} requests"),
                (None, None) => String::new(),
            };
            let _ = writeln!(out, "  step {}: {bound}, {}", step.name, load(&step.load));
            total = total.saturating_add(
                step.duration
                    .unwrap_or_default()
                    .saturating_mul(s.repetitions),
            );
        }
        if let Some(c) = s.cooldown {
            let gaps = (s.steps.len() as u32)
                .saturating_mul(s.repetitions)
                .saturating_sub(1);
            total = total.saturating_add(c.saturating_mul(gaps));
        }
    }
    for c in &plan.checks {
        let expect: Vec<String> = c.expect.iter().map(|(k, v)| format!("{v} × {k}")).collect();
        let _ = writeln!(
            out,
            "check {}: {} requests on {} connection(s), expect {}",
            c.name,
            c.requests,
            c.connections,
            expect.join(" + ")
        );
    }
    let _ = writeln!(
        out,
        "at least {} of load",
        perfbase_core::units::format_duration(Duration::from_secs(total.as_secs()))
    );
    out
}

/// How a precision target extends a scenario's repetitions, or nothing without one.
fn precision(s: &crate::plan::Scenario) -> String {
    let Some(p) = s.precision else {
        return String::new();
    };
    format!(
        " or more, until within ±{} % (at most {}{})",
        perfbase_core::study::fmt_amount(p * 100.0),
        s.max_repetitions,
        s.max_time.map_or(String::new(), |t| format!(
            " or {} measured",
            perfbase_core::units::format_duration(t)
        ))
    )
}

/// How long the plan's load lasts at most, warm-ups and cool-downs included: each step's
/// duration times its scenario's repetitions; with a precision target, its most repetitions,
/// each run lengthened up to [`MAX_STRETCH`](super::MAX_STRETCH) times, and no more than
/// `max_time` and one more round. None when a step is bounded by a count alone, whose length
/// depends on the service. Checks, a few requests each, are left out.
pub fn planned_duration(plan: &Plan) -> Option<Duration> {
    let mut total = Duration::ZERO;
    for s in &plan.scenarios {
        let (reps, stretch) = match s.precision {
            Some(_) => (s.max_repetitions.max(s.repetitions), super::MAX_STRETCH),
            None => (s.repetitions, 1),
        };
        let mut round = Duration::ZERO;
        for step in &s.steps {
            round = round.saturating_add(step.duration?.saturating_mul(stretch));
        }
        let mut measured = round.saturating_mul(reps);
        if let (Some(t), Some(_)) = (s.max_time, s.precision) {
            // Checked between rounds: the last one may start just before max_time.
            measured = measured.min(t.saturating_add(round));
        }
        // A cool-down before every step's run (but the very first when there is no warm-up).
        let runs = (s.steps.len() as u32).saturating_mul(reps);
        total = total
            .saturating_add(measured)
            .saturating_add(s.warmup.unwrap_or_default())
            .saturating_add(s.cooldown.unwrap_or_default().saturating_mul(runs));
    }
    Some(total)
}
