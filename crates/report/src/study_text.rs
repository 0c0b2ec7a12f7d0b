//! Words and numbers shared by the terminal and Markdown renderings of a study.

use perfbase_analysis::knee::Knee;
use perfbase_analysis::study::{CheckVerdict, RepetitionStats, ScenarioStudy, Study};
use perfbase_analysis::sweep::{Offered, StepRow};
use perfbase_core::result::{Measurement, RunResult};

/// `20/s` or `c=8`.
pub fn offered(o: &Offered) -> String {
    match o {
        Offered::Rate(r) if r.fract() == 0.0 => format!("{r:.0}/s"),
        Offered::Rate(r) => format!("{r:.2}/s"),
        Offered::Concurrency(c) => format!("c={c}"),
    }
}

/// A sweep row's latency column heads, as every report prints them: avg and min as the
/// VU-ladder studies report them, then the percentiles and max.
pub const LATENCY_HEADS: [&str; 7] = [
    "avg ms", "min ms", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "max ms",
];

/// A sweep row's latency cells, in the order of [`LATENCY_HEADS`].
pub fn latency_cells(row: &StepRow) -> [String; 7] {
    [
        row.mean_ms,
        row.min_ms,
        row.p50_ms,
        row.p90_ms,
        row.p95_ms,
        row.p99_ms,
        row.max_ms,
    ]
    .map(ms)
}

/// A summary's 95 % interval of the median run, its values printed by `f`: "9.10 – 11.2", with
/// the coverage when it is not 95 % ("1.00 – 5.00 (93.8 %)": 5 runs, their range), or that
/// there were too few runs for one ("— (3 runs: too few for an interval)") rather than a
/// made-up one.
pub fn interval(sm: &perfbase_analysis::stats::Summary, f: &dyn Fn(f64) -> String) -> String {
    let (lo, hi) = sm.ci95;
    if lo.is_nan() || hi.is_nan() {
        let runs = if sm.n == 1 { "run" } else { "runs" };
        return format!("— ({} {runs}: too few for an interval)", sm.n);
    }
    // Results saved before the median's interval have no median: theirs is the mean's
    // t-interval, and is named so.
    let coverage = if sm.median.is_nan() {
        " (of the mean)".to_string()
    } else if sm.coverage.is_finite() && (sm.coverage - 0.95).abs() > 1e-9 {
        format!(" ({:.1} %)", sm.coverage * 100.0)
    } else {
        String::new()
    };
    format!("{} – {}{coverage}", f(lo), f(hi))
}

/// Latency in ms with sensible precision.
pub fn ms(v: f64) -> String {
    if v.is_nan() {
        "—".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A measurement's streamed replies in words: `1,000 messages in 10 streams (100.0 each,
/// 2,500/s); first ms p50 50.2, p99 61; gaps ms p50 0.010, p99 1.2, max 250`.
pub fn stream_line(st: &perfbase_core::stream::StreamFigures) -> String {
    let each = if st.streams > 0 {
        st.messages as f64 / st.streams as f64
    } else {
        0.0
    };
    let rate = if st.messages_per_s.is_finite() {
        format!(", {}/s", crate::thousands(st.messages_per_s.round() as u64))
    } else {
        String::new()
    };
    let first = if st.first_ms.is_defined() {
        format!(
            "first ms p50 {}, p99 {}; ",
            ms(st.first_ms.p50),
            ms(st.first_ms.p99)
        )
    } else {
        String::new()
    };
    let gaps = if st.gap_ms.p50.is_nan() {
        "no gaps (one message each)".to_string()
    } else {
        format!(
            "gaps ms p50 {}, p99 {}, max {}",
            ms(st.gap_ms.p50),
            ms(st.gap_ms.p99),
            ms(st.gap_ms.max)
        )
    };
    format!(
        "{} messages in {} streams ({} each{rate}); {first}{gaps}",
        crate::thousands(st.messages),
        crate::thousands(st.streams),
        crate::thousands_f(each)
    )
}

/// A measurement's availability in words, when something was out (an outage, or a stretch
/// of a second or more without success): `no success for 6.41 s from 12.30 s; back 6.20 s after
/// the first failure; 1,234 failed in it: 1,200 connect, 34 http_5xx; first successes after
/// 45 ms, 52 ms, … max 310 ms (1 outage)`. None for a run that never stopped succeeding.
pub fn availability_line(a: &perfbase_core::result::AvailabilityOut) -> Option<String> {
    if !a.was_out() {
        return None;
    }
    let mut out = format!(
        "no success for {} s from {} s into the run",
        crate::figure(a.outage_s),
        crate::figure(a.outage_at_s)
    );
    let longest = a.outages.first();
    if let Some(o) = longest {
        match (o.recovery_s, o.to_s) {
            (Some(r), Some(_)) => {
                out += &format!("; back {} s after the first failure", crate::figure(r))
            }
            (Some(r), None) => {
                out += &format!(
                    "; not back by the end, {} s after the first failure",
                    crate::figure(r)
                )
            }
            (None, _) => {}
        }
        if o.failures() > 0 {
            let by: Vec<String> = o
                .errors
                .iter()
                .map(|(k, v)| format!("{} {k}", crate::thousands(*v)))
                .collect();
            out += &format!(
                "; {} failed in it: {}",
                crate::thousands(o.failures()),
                by.join(", ")
            );
        }
        if !o.first_successes_ms.is_empty() {
            let firsts: Vec<String> = o
                .first_successes_ms
                .iter()
                .take(3)
                .map(|v| format!("{} ms", ms(*v)))
                .collect();
            let max = o.first_successes_ms.iter().copied().fold(0.0, f64::max);
            out += &format!(
                "; first successes after {}, … max {} ms",
                firsts.join(", "),
                ms(max)
            );
        }
    }
    let n = a.outages_total;
    out += &format!(
        " ({} outage{})",
        crate::thousands(n),
        if n == 1 { "" } else { "s" }
    );
    if a.recovery_s > longest.and_then(|o| o.recovery_s).unwrap_or(0.0) {
        out += &format!("; longest recovery {} s", crate::figure(a.recovery_s));
    }
    Some(out)
}

/// A verdict's measured value in its threshold's unit (`12.3 ms`, `0.52 %`, `1,234.5/s`), or
/// None when nothing was measured (no operation completed). Every report says it this way.
pub fn threshold_value(threshold: &str, v: f64) -> Option<String> {
    use perfbase_analysis::{parse_threshold, Metric};
    if v.is_nan() {
        return None;
    }
    Some(match parse_threshold(threshold).map(|t| t.metric) {
        Ok(Metric::LatencyMs(_)) => format!("{} ms", ms(v)),
        Ok(Metric::ErrorRate | Metric::SuccessRatio | Metric::Checks) => {
            format!("{:.2} %", v * 100.0)
        }
        Ok(Metric::Rps) => format!("{}/s", crate::thousands_f(v)),
        Ok(Metric::OutageS | Metric::RecoveryS) => format!("{} s", crate::figure(v)),
        // A script metric's own unit, which perfbase does not know.
        Ok(Metric::Custom(_)) => crate::figure(v),
        // A threshold this version cannot read (another version's result): its bare figure.
        Err(_) => format!("{v}"),
    })
}

/// Status counts as `120 × 200, 10 × 429`.
pub fn counts(m: &std::collections::BTreeMap<String, u64>) -> String {
    m.iter()
        .map(|(k, v)| format!("{} × {k}", crate::thousands(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per finding of a scenario: knee, operating point, each step's stability over
/// its runs, thresholds.
pub fn findings(s: &ScenarioStudy, study: &Study) -> Vec<String> {
    let mut out = shape(s, study);
    out.extend(stability(s));
    out.extend(availability(s));
    out.extend(thresholds(s));
    out
}

/// Each step that had something out: its availability line.
fn availability(s: &ScenarioStudy) -> Vec<String> {
    s.steps
        .iter()
        .filter_map(|row| {
            let line = availability_line(row.availability.as_ref()?)?;
            Some(if s.steps.len() > 1 {
                format!("step {}: {line}", row.name)
            } else {
                line
            })
        })
        .collect()
}

/// The findings without the stability lines, for a report that shows stability in a column
/// of its own (the baselines page's ±).
pub fn judgements(s: &ScenarioStudy, study: &Study) -> Vec<String> {
    let mut out = shape(s, study);
    out.extend(availability(s));
    out.extend(thresholds(s));
    out
}

/// What the steps' figures say about the scenario's shape: knee, invalid steps, operating
/// point.
fn shape(s: &ScenarioStudy, study: &Study) -> Vec<String> {
    let mut out: Vec<String> = s.knee.as_ref().map(|k| knee(s, k)).into_iter().collect();
    for row in &s.steps {
        if let Some(why) = &row.invalid {
            out.push(format!(
                "step {} is invalid: it {why}; its figures are not those of the load it names",
                row.name
            ));
        }
    }
    if s.kind.ends_with("ladder") && !study.slo.is_empty() {
        out.push(operating_point(s, study));
    }
    out
}

/// Each step's stability over its runs, a line each: a suite's operations vary each in their
/// own way.
fn stability(s: &ScenarioStudy) -> Vec<String> {
    let mut out = Vec::new();
    for r in s.repetition_stats.iter().filter(|_| s.repetitions > 1) {
        out.push(format!(
            "stability over {} runs ({}): rps mean {:.1} (sd {:.2}); p99 mean {} ms, variance {:.3}{}, 95 % interval {}; {}",
            r.runs,
            r.step,
            r.rps.mean,
            r.rps.stdev,
            ms(r.p99_ms.mean),
            r.p99_ms.variance,
            // Results saved before the median have none to give.
            if r.p99_ms.median.is_nan() {
                String::new()
            } else {
                format!(", median {} ms", ms(r.p99_ms.median))
            },
            interval(&r.p99_ms, &|v| format!("{} ms", ms(v))),
            precision(r, s.precision_target)
        ));
        if r.warmup_runs > 0 {
            out.push(format!(
                "warm-up ({}): the first {} run{} ({:.2} s) started cold and are left out",
                r.step,
                r.warmup_runs,
                if r.warmup_runs == 1 { "" } else { "s" },
                r.warmup_s
            ));
        }
    }
    out
}

/// Where a ladder saturated, or that it never did.
fn knee(s: &ScenarioStudy, k: &Knee) -> String {
    match (k.last_good, k.first_bad) {
        (_, None) => format!(
            "no knee: every step kept up (highest step {})",
            s.steps
                .last()
                .map(|r| offered(&r.offered))
                .unwrap_or_default()
        ),
        (Some(g), Some(b)) => format!(
            "knee: last good step {}, first bad step {} ({})",
            offered(&s.steps[g].offered),
            offered(&s.steps[b].offered),
            k.reason.clone().unwrap_or_default()
        ),
        (None, Some(b)) => format!(
            "knee: already at the first step {} ({})",
            offered(&s.steps[b].offered),
            k.reason.clone().unwrap_or_default()
        ),
    }
}

/// The highest load that met the SLO and its headroom to the knee, or that none did.
fn operating_point(s: &ScenarioStudy, study: &Study) -> String {
    let slo = study.slo.join(", ");
    match &s.operating_point {
        Some(op) => format!(
            "operating point under the SLO ({slo}): {}{}",
            offered(&op.offered),
            op.headroom
                .map(|h| if h <= 0.0 {
                    ", at the knee itself: no headroom".to_string()
                } else {
                    format!(", headroom {:.0} % to the knee", h * 100.0)
                })
                .unwrap_or_default()
        ),
        None => format!("no step meets the SLO ({slo})"),
    }
}

/// How many thresholds passed, naming those that failed; nothing without thresholds.
fn thresholds(s: &ScenarioStudy) -> Option<String> {
    if s.thresholds.is_empty() {
        return None;
    }
    let failed: Vec<&str> = s
        .thresholds
        .iter()
        .filter(|t| !t.verdict.passed)
        .map(|t| t.verdict.threshold.as_str())
        .collect();
    Some(if failed.is_empty() {
        format!("thresholds: all {} passed", s.thresholds.len())
    } else {
        format!(
            "thresholds: {} of {} FAILED ({})",
            failed.len(),
            s.thresholds.len(),
            failed.join("; ")
        )
    })
}

/// The heads of a plan's summary table: one row per scenario and check.
pub const SUMMARY_HEADS: [&str; 9] = [
    "scenario", "kind", "steps", "requests", "success", "p50 ms", "p99 ms", "max ms", "verdict",
];

/// A plan's summary: one row per scenario (its own figures, never mixed with another's: a
/// ladder's latency is the range over its steps) and one per check (its expected statuses are
/// not errors), each with its verdict; and whether the row failed.
pub fn summary_rows(r: &RunResult, study: &Study) -> Vec<(Vec<String>, bool)> {
    let scenarios = study.scenarios.iter().map(|s| scenario_row(r, s));
    let checks = study.checks.iter().map(|c| check_row(r, c));
    scenarios.chain(checks).collect()
}

/// A scenario's row: requests and success over its own phases, latency as the range over
/// its steps.
fn scenario_row(r: &RunResult, s: &ScenarioStudy) -> (Vec<String>, bool) {
    let phases: Vec<&Measurement> = scenario_parts(r, &s.name)
        .into_iter()
        .map(|(_, m)| m)
        .collect();
    let requests: u64 = phases.iter().map(|m| m.requests).sum();
    let ok: f64 = phases
        .iter()
        .map(|m| m.success_ratio * m.requests as f64)
        .sum();
    let verdict = if !s.passed {
        "FAIL"
    } else if s.thresholds.is_empty() {
        "—"
    } else {
        "pass"
    };
    let cells = vec![
        s.name.clone(),
        s.kind.clone(),
        s.steps.len().to_string(),
        crate::thousands(requests),
        if requests == 0 {
            "—".into()
        } else {
            format!("{:.2} %", 100.0 * ok / requests as f64)
        },
        step_range(s, |row| row.p50_ms),
        step_range(s, |row| row.p99_ms),
        step_range(s, |row| row.max_ms),
        verdict.into(),
    ];
    (cells, !s.passed)
}

/// The measurements of scenario `name` with their step numbers: its phases, or the run's
/// own measurement when the run has no phases (one load from the command line, judged as
/// one scenario).
pub fn scenario_parts<'a>(r: &'a RunResult, name: &str) -> Vec<(u32, &'a Measurement)> {
    if r.phases.is_empty() {
        return vec![(0, &r.measurement)];
    }
    r.phases
        .iter()
        .filter(|p| p.scenario.as_deref() == Some(name))
        .map(|p| (p.step.unwrap_or(0), &p.measurement))
        .collect()
}

/// A figure's range over a scenario's steps (`2.10–9.80`), one value when they agree, a
/// dash when no step has it.
fn step_range(s: &ScenarioStudy, f: fn(&StepRow) -> f64) -> String {
    let values: Vec<f64> = s.steps.iter().map(f).filter(|v| !v.is_nan()).collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    match values.len() {
        0 => "—".to_string(),
        _ if lo == hi => ms(lo),
        _ => format!("{}–{}", ms(lo), ms(hi)),
    }
}

/// A check's row: its requests, what came back when it failed, and the latency of its own
/// phase when one was kept.
fn check_row(r: &RunResult, c: &CheckVerdict) -> (Vec<String>, bool) {
    let phase = r
        .phases
        .iter()
        .find(|p| p.scenario.as_deref() == Some(format!("check {}", c.name).as_str()));
    let l = phase.map(|p| &p.measurement.latency_ms);
    let cells = vec![
        format!("check {}", c.name),
        "check".into(),
        "1".into(),
        crate::thousands(c.requests),
        // The statuses a check expects (a rate limiter's 429s) are its point, not errors.
        if c.passed {
            "as expected".into()
        } else {
            format!("got {}", counts(&c.actual))
        },
        l.map_or("—".into(), |l| ms(l.p50)),
        l.map_or("—".into(), |l| ms(l.p99)),
        l.map_or("—".into(), |l| ms(l.max)),
        if c.passed { "pass" } else { "FAIL" }.into(),
    ];
    (cells, !c.passed)
}

/// The statistic as studies print it: `Mean`, `P99`, `Max`, `Min`.
pub fn stat_title(stat: &str) -> String {
    match stat {
        "p99" => "P99".into(),
        s => {
            let mut c = s.chars();
            c.next()
                .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
        }
    }
}

/// Variance of latencies in ms², with enough digits for small ones.
pub fn variance(v: f64) -> String {
    if v.is_nan() {
        "—".into()
    } else if v == 0.0 || v >= 0.01 {
        format!("{v:.4}")
    } else {
        format!("{v:.3e}")
    }
}

/// The lines of one A-vs-B step, as published studies word them: per side
/// `LABEL — Mean: mean X ms, variance V; P99: …; Max: …; Min: …`, then per statistic B's
/// difference in percent and its sentence ("B is 12.3 % faster").
pub fn versus_lines(
    v: &perfbase_analysis::versus::Versus,
    s: &perfbase_analysis::versus::VersusStep,
) -> Vec<String> {
    use perfbase_analysis::versus::VersusStat;
    let side =
        |label: &str, runs: usize, pick: fn(&VersusStat) -> &perfbase_analysis::stats::Summary| {
            let parts: Vec<String> = s
                .stats
                .iter()
                .map(|st| {
                    let sm = pick(st);
                    format!(
                        "{}: mean {} ms, variance {}",
                        stat_title(&st.stat),
                        ms(sm.mean),
                        variance(sm.variance)
                    )
                })
                .collect();
            format!("{label} ({runs} runs) — {}", parts.join("; "))
        };
    let mut lines = vec![
        side(&v.a_label, s.runs_a.len(), |st| &st.a),
        side(&v.b_label, s.runs_b.len(), |st| &st.b),
    ];
    for st in &s.stats {
        // The sentence carries the p-value, or says the runs did not resolve the difference.
        lines.push(format!(
            "{}, against {}: {}",
            stat_title(&st.stat),
            v.a_label,
            st.sentence
        ));
    }
    lines
}

/// How precisely a step's runs pin its key figures (throughput, mean and p99 latency) down:
/// the widest interval's wider side over its median, against the scenario's target —
/// `±3.1 % (target ±5 %: met)`, `⚠ ±18.0 % (target ±5 %: missed)` — or why there is none.
pub fn precision(r: &RepetitionStats, target: Option<f64>) -> String {
    let Some(p) = r.precision() else {
        let runs = r.runs;
        let missed = if target.is_some() { "⚠ " } else { "" };
        return format!("{missed}precision unknown ({runs} runs: too few for an interval)");
    };
    match target {
        Some(t) if p <= t => format!("precision ±{:.1} % (target ±{}: met)", p * 100.0, pct(t)),
        Some(t) => format!(
            "⚠ precision ±{:.1} % (target ±{}: missed)",
            p * 100.0,
            pct(t)
        ),
        None => format!("precision ±{:.1} %", p * 100.0),
    }
}

/// A share as a percentage without needless decimals: 5 %, 2.5 %.
fn pct(share: f64) -> String {
    format!("{} %", perfbase_core::study::fmt_amount(share * 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfbase_analysis::stats::describe;

    #[test]
    fn intervals_name_their_coverage_or_say_there_are_too_few_runs() {
        let with_ms = |v: f64| format!("{} ms", ms(v));
        let three = describe(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(
            interval(&three, &with_ms),
            "— (3 runs: too few for an interval)"
        );
        let one = describe(&[1.0]).unwrap();
        assert_eq!(interval(&one, &ms), "— (1 run: too few for an interval)");
        // Five runs: their range, which covers the median in 93.75 % of samples.
        let five = describe(&[5.0, 1.0, 4.0, 2.0, 3.0]).unwrap();
        assert_eq!(interval(&five, &with_ms), "1.00 ms – 5.00 ms (93.8 %)");
        // At 95 % the coverage goes without saying.
        let eight = describe(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(interval(&eight, &ms), "3.87 – 7.13");
        // A result saved before the median's interval: its mean's interval, named so.
        let mut old = eight;
        old.median = f64::NAN;
        old.coverage = f64::NAN;
        old.ci95 = (4.0, 6.0);
        assert_eq!(interval(&old, &ms), "4.00 – 6.00 (of the mean)");
    }
}
