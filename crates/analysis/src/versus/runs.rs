//! A-vs-B comparisons of results, with verdicts in the words people already use ("B is
//! faster", "B is slower"), or saying that the runs did not resolve a difference ("not
//! resolved with 5 runs (−4.2 %, p = 0.11)"), and rankings of several targets.
//!
//! **When is a difference real?** With at least two runs on both sides (a plan's
//! repetitions), a metric differs when Welch's t-test on the per-run values gives
//! p < `alpha` (0.05 by default; [`crate::versus::welch::welch`]). With a single run on either side
//! there is no spread to test, so a metric differs when it moved by more than `tolerance`
//! (5 % by default) of A's value; the comparison's `method` says which rule was used. A
//! baseline check further ignores significant changes smaller than the tolerance, so a CI
//! gate does not fail on a real but negligible shift.

use crate::verdict::{move_text, runs_text, wording};
use crate::versus::welch::p_text;
use crate::versus::welch::welch;
use perfbase_core::result::{Endpoint, Measurement};
use serde::{Deserialize, Serialize};

/// Which direction of a metric is good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Better {
    Lower,
    Higher,
}

/// The metrics compared, with the direction that is better.
pub const METRICS: [(&str, Better); 9] = [
    ("rps", Better::Higher),
    ("mean_ms", Better::Lower),
    ("min_ms", Better::Lower),
    ("p50_ms", Better::Lower),
    ("p90_ms", Better::Lower),
    ("p95_ms", Better::Lower),
    ("p99_ms", Better::Lower),
    ("max_ms", Better::Lower),
    ("error_rate", Better::Lower),
];

/// The value of `metric` in a measurement.
pub fn metric_value(m: &Measurement, metric: &str) -> f64 {
    match metric {
        "rps" => m.rps,
        "mean_ms" => m.latency_ms.mean,
        "min_ms" => m.latency_ms.min,
        "p50_ms" => m.latency_ms.p50,
        "p90_ms" => m.latency_ms.p90,
        "p95_ms" => m.latency_ms.p95,
        "p99_ms" => m.latency_ms.p99,
        "max_ms" => m.latency_ms.max,
        "error_rate" => 1.0 - m.success_ratio,
        _ => f64::NAN,
    }
}

/// One metric on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricComparison {
    pub metric: String,
    /// Mean over A's runs (the value itself for a single run).
    pub a: f64,
    pub b: f64,
    /// b − a.
    pub delta: f64,
    /// (b − a) / a; None when a is 0.
    pub delta_pct: Option<f64>,
    /// Welch's two-sided p-value, with ≥ 2 runs on both sides.
    pub p_value: Option<f64>,
    /// The difference is real by the comparison's rule.
    pub significant: bool,
    /// B is better / worse on this metric (significant and in that direction).
    pub better: bool,
    pub worse: bool,
    pub verdict: String,
}

/// One matched entry (a whole run, or a plan's scenario step).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntryComparison {
    pub name: String,
    pub runs_a: usize,
    pub runs_b: usize,
    pub metrics: Vec<MetricComparison>,
    /// "B is faster", "B is slower", "mixed", "not resolved with 4 runs (p99 +3.1 %,
    /// p = 0.21)" or "cannot be compared: …". Words for people: [`EntryComparison::moved`]
    /// and [`EntryComparison::comparable`] tell them apart for programs.
    pub verdict: String,
    /// B is worse beyond the tolerance on a latency, throughput or error metric.
    pub regression: bool,
}

/// The metrics an entry's verdict and regression are judged on.
fn key_metric(m: &MetricComparison) -> bool {
    matches!(
        m.metric.as_str(),
        "rps" | "mean_ms" | "p50_ms" | "p95_ms" | "p99_ms" | "error_rate"
    )
}

impl EntryComparison {
    /// A key metric (throughput, mean, p50, p95, p99 latency or error rate) moved by the
    /// comparison's rule: the verdict is "B is faster", "B is slower" or "mixed". False for an
    /// entry the runs did not resolve, and for one that could not be compared.
    pub fn moved(&self) -> bool {
        self.metrics
            .iter()
            .any(|m| key_metric(m) && (m.better || m.worse))
    }

    /// Both sides completed operations, so the entry has metrics to compare; false for a
    /// "cannot be compared: …" verdict.
    pub fn comparable(&self) -> bool {
        !self.metrics.is_empty()
    }
}

/// A whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    /// The rule used to call a difference real, in words.
    pub method: String,
    pub tolerance: f64,
    pub alpha: f64,
    /// Why A and B do not measure the same thing (another protocol, load model, plan or
    /// offered load), in words; empty when they are like for like. Their deltas are then
    /// differences of setup, not of the system under test.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_like_for_like: Vec<String>,
    pub entries: Vec<EntryComparison>,
}

impl Comparison {
    /// Any entry regressed (the baseline-check gate).
    pub fn regressed(&self) -> bool {
        self.entries.iter().any(|e| e.regression)
    }

    /// The verdicts worded with B's name ("GKE is faster", "GKE has lower throughput")
    /// rather than "B", for runs named by a label.
    pub fn worded_by_name(mut self) -> Comparison {
        let name = |v: &mut String, b: &str| {
            if let Some(rest) = v.strip_prefix("B ") {
                *v = format!("{b} {rest}");
            }
        };
        for e in &mut self.entries {
            name(&mut e.verdict, &self.b);
            for m in &mut e.metrics {
                name(&mut m.verdict, &self.b);
            }
        }
        self
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// One metric of an entry, side A against side B: its means, change, Welch p-value when
/// both sides have repetitions, and whether B is better or worse beyond chance.
fn compare_metric(
    metric: &str,
    direction: Better,
    (a, b): (&[&Measurement], &[&Measurement]),
    tolerance: f64,
    alpha: f64,
) -> MetricComparison {
    let tested = a.len() >= 2 && b.len() >= 2;
    let va: Vec<f64> = a.iter().map(|m| metric_value(m, metric)).collect();
    let vb: Vec<f64> = b.iter().map(|m| metric_value(m, metric)).collect();
    let (ma, mb) = (mean(&va), mean(&vb));
    let delta = mb - ma;
    let delta_pct = (ma != 0.0).then(|| delta / ma);
    // Beyond the tolerance: relative to A, or — for a metric that is 0 in A, such as an
    // error rate — an absolute move of more than tolerance / 100 (0.05 points at 5 %).
    let beyond = match delta_pct {
        Some(p) => p.abs() > tolerance,
        None => delta.abs() > tolerance / 100.0,
    };
    let p_value = if tested {
        welch(&va, &vb).map(|w| w.p_value)
    } else {
        None
    };
    let significant = match (tested, p_value) {
        (true, Some(p)) => p < alpha,
        // No spread on either side (identical runs): any change beyond tolerance is real.
        _ => beyond,
    };
    let b_higher = delta > 0.0;
    let better = significant && (b_higher == (direction == Better::Higher));
    let worse = significant && !better && delta != 0.0;
    MetricComparison {
        metric: metric.into(),
        a: ma,
        b: mb,
        delta,
        delta_pct,
        p_value,
        significant,
        better,
        worse,
        verdict: wording(
            metric,
            better,
            worse,
            (a.len(), b.len()),
            delta,
            delta_pct,
            p_value,
        ),
    }
}

/// Compares one entry: `a` and `b` are the runs of each side (one, or a plan's repetitions).
pub fn compare_entry(
    name: &str,
    a: &[&Measurement],
    b: &[&Measurement],
    tolerance: f64,
    alpha: f64,
) -> EntryComparison {
    if let Some(e) = not_comparable(name, a, b) {
        return e;
    }
    let mut metrics: Vec<MetricComparison> = METRICS
        .iter()
        .map(|&(metric, direction)| compare_metric(metric, direction, (a, b), tolerance, alpha))
        .collect();
    discount_failures(&mut metrics);
    let key = |m: &&MetricComparison| key_metric(m);
    let better = metrics.iter().filter(key).any(|m| m.better);
    let worse = metrics.iter().filter(key).any(|m| m.worse);
    let regression = metrics.iter().filter(key).any(|m| {
        let beyond = match m.delta_pct {
            Some(p) => p.abs() > tolerance,
            None => m.delta.abs() > tolerance / 100.0,
        };
        m.worse && beyond
    });
    let verdict = match (better, worse) {
        (true, false) => "B is faster".to_string(),
        (false, true) => "B is slower".to_string(),
        (true, true) => "mixed".to_string(),
        (false, false) => unresolved(&metrics, a.len(), b.len()),
    };
    EntryComparison {
        name: name.to_string(),
        runs_a: a.len(),
        runs_b: b.len(),
        metrics,
        verdict,
        regression,
    }
}

/// A side with more errors is not faster for it: failures (a refused connection, an
/// immediate 503) answer sooner than work, so a latency move in that side's favour is not
/// counted, and its verdict says why.
fn discount_failures(metrics: &mut [MetricComparison]) {
    let errors = metrics.iter().find(|m| m.metric == "error_rate");
    let Some((b_more, a_more)) = errors.map(|e| (e.worse, e.better)) else {
        return;
    };
    for m in metrics.iter_mut().filter(|m| m.metric.ends_with("_ms")) {
        let (side, favoured) = if b_more && m.better {
            ("B", &mut m.better)
        } else if a_more && m.worse {
            ("A", &mut m.worse)
        } else {
            continue;
        };
        *favoured = false;
        m.verdict = format!(
            "not counted: {side} has more errors, and failures answer sooner ({})",
            move_text(m.delta, m.delta_pct)
        );
    }
}

/// An entry no key metric of which moved: "not resolved with 4 runs", with the key metric
/// that came closest — the smallest p-value where a test was made, else the largest move —
/// so the reader sees how far from resolved it was ("(p99 +3.1 %, p = 0.21)").
fn unresolved(metrics: &[MetricComparison], na: usize, nb: usize) -> String {
    let keys = metrics
        .iter()
        .filter(|m| key_metric(m) && m.delta.is_finite());
    let closest = if na >= 2 && nb >= 2 {
        keys.filter(|m| m.p_value.is_some_and(|p| p.is_finite()))
            .min_by(|x, y| x.p_value.unwrap().total_cmp(&y.p_value.unwrap()))
    } else {
        keys.filter(|m| m.delta_pct.is_some_and(|p| p.is_finite()))
            // The first of equal moves, in METRICS order (throughput first).
            .min_by(|x, y| {
                let size = |m: &MetricComparison| m.delta_pct.unwrap_or(0.0).abs();
                size(y).total_cmp(&size(x))
            })
    };
    let runs = runs_text(na, nb, "B");
    match closest {
        Some(m) => {
            let name = m.metric.strip_suffix("_ms").unwrap_or(&m.metric);
            let p = m
                .p_value
                .map(|p| format!(", {}", p_text(p)))
                .unwrap_or_default();
            format!(
                "not resolved {runs} ({name} {}{p})",
                move_text(m.delta, m.delta_pct)
            )
        }
        None => format!("not resolved {runs}"),
    }
}

/// An entry with a side where nothing completed: it has no latency or throughput to compare
/// (an empty run's zeros would read as "B is faster"). A new run (B) that completed nothing
/// is a regression, so a baseline gate fails on it; an empty baseline (A) cannot judge.
fn not_comparable(name: &str, a: &[&Measurement], b: &[&Measurement]) -> Option<EntryComparison> {
    let empty = |side: &[&Measurement]| side.is_empty() || side.iter().any(|m| m.requests == 0);
    // Every operation failed: its latencies are times to failure, not the service's.
    let failed = |side: &[&Measurement]| side.iter().any(|m| m.success_ratio == 0.0);
    let verdict = match (empty(a), empty(b)) {
        (false, false) => match (failed(a), failed(b)) {
            (false, false) => return None,
            (true, true) => "cannot be compared: every operation of A and of B failed",
            (true, false) => "cannot be compared: every operation of A failed",
            (false, true) => "cannot be compared: every operation of B failed",
        },
        (true, true) => "cannot be compared: neither A nor B completed any operation",
        (true, false) => "cannot be compared: A completed no operation",
        (false, true) => "cannot be compared: B completed no operation",
    };
    Some(EntryComparison {
        name: name.to_string(),
        runs_a: a.len(),
        runs_b: b.len(),
        metrics: Vec::new(),
        verdict: verdict.into(),
        regression: empty(b) || failed(b),
    })
}

/// The rule a comparison with these run counts uses, in words.
pub fn method(tested: bool, tolerance: f64, alpha: f64) -> String {
    if tested {
        format!(
            "Welch's t-test on per-run values (two-sided, p < {alpha}); changes under {:.0} % are not regressions",
            tolerance * 100.0
        )
    } else {
        format!(
            "single runs: a change of more than {:.0} % of A's value counts (no repetitions to test; run a plan with repetitions for a statistical test)",
            tolerance * 100.0
        )
    }
}

// Rankings were first defined here; their callers still name them through this module.
pub use crate::ranking::{rank, rank_by, RankBy, RankRow};

/// The name a phase is compared under: its name without the repetition suffix (` #2`).
fn entry_name(p: &perfbase_core::result::PhaseResult) -> String {
    match p.name.rsplit_once(" #") {
        Some((base, rep)) if rep.chars().all(|c| c.is_ascii_digit()) => base.to_string(),
        _ => p.name.clone(),
    }
}

/// Groups a result's measured phases by scenario and step, in first-seen order.
fn grouped(r: &perfbase_core::result::RunResult) -> Vec<(String, Vec<&Measurement>)> {
    let mut out: Vec<(String, Vec<&Measurement>)> = Vec::new();
    for p in &r.phases {
        let name = entry_name(p);
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(&p.measurement),
            None => out.push((name, vec![&p.measurement])),
        }
    }
    out
}

/// An endpoint of a mix as a measurement of its own: its counts and latencies, its throughput
/// over the run's duration.
fn endpoint_measurement(m: &Measurement, e: &Endpoint) -> Measurement {
    let mut out = m.clone();
    out.requests = e.requests;
    out.rps = if m.duration_s > 0.0 {
        e.requests as f64 / m.duration_s
    } else {
        0.0
    };
    out.success_ratio = e.success_ratio;
    out.status = e.status.clone();
    out.errors = e.errors.clone();
    out.latency_ms = e.latency_ms;
    out.service_time_ms = None;
    out.histogram.response = e.histogram.clone();
    out.histogram.service = None;
    out.timeline = Vec::new();
    out.error_samples = Vec::new();
    out.endpoints = Vec::new();
    out
}

/// Compares `a` and `b` (the runs of one entry on each side) as a whole, then each endpoint
/// both sides have (`entry · endpoint`), so a regression of one endpoint of a mix is not
/// averaged away.
fn compare_with_endpoints(
    entries: &mut Vec<EntryComparison>,
    name: &str,
    a: &[&Measurement],
    b: &[&Measurement],
    tolerance: f64,
    alpha: f64,
) {
    entries.push(compare_entry(name, a, b, tolerance, alpha));
    let Some(first) = a.first() else { return };
    for e in &first.endpoints {
        let side = |runs: &[&Measurement]| -> Vec<Measurement> {
            runs.iter()
                .filter_map(|m| {
                    m.endpoints
                        .iter()
                        .find(|x| x.name == e.name)
                        .map(|x| endpoint_measurement(m, x))
                })
                .collect()
        };
        let (ea, eb) = (side(a), side(b));
        if ea.is_empty() || eb.is_empty() {
            continue;
        }
        let ra: Vec<&Measurement> = ea.iter().collect();
        let rb: Vec<&Measurement> = eb.iter().collect();
        entries.push(compare_entry(
            &format!("{name} · {}", e.name),
            &ra,
            &rb,
            tolerance,
            alpha,
        ));
    }
}

/// Why `a` and `b` do not measure the same thing, in words (empty when they do): another
/// protocol or load model, a plan against a single run, plans whose scenarios and steps
/// differ, or, for single runs, another offered rate or concurrency. Different targets, and
/// the same plan under two names (build A's and build B's), are what an A-vs-B comparison
/// is for, so they are not listed.
pub fn differences(
    a: &perfbase_core::result::RunResult,
    b: &perfbase_core::result::RunResult,
) -> Vec<String> {
    let mut out = Vec::new();
    if a.protocol != b.protocol {
        out.push(format!("protocol {} vs {}", a.protocol, b.protocol));
    }
    if a.model != b.model {
        out.push(format!(
            "load model {} vs {}",
            a.model.name(),
            b.model.name()
        ));
    }
    let entries = |r: &perfbase_core::result::RunResult| -> Vec<String> {
        grouped(r).into_iter().map(|(name, _)| name).collect()
    };
    let (ea, eb) = (entries(a), entries(b));
    let only = |x: &[String], y: &[String]| -> Vec<String> {
        x.iter().filter(|n| !y.contains(n)).cloned().collect()
    };
    let listed = |names: Vec<String>| {
        let more = names.len().saturating_sub(3);
        let mut text = names.into_iter().take(3).collect::<Vec<_>>().join(", ");
        if more > 0 {
            text.push_str(&format!(" and {more} more"));
        }
        text
    };
    match (ea.is_empty(), eb.is_empty()) {
        (false, true) => out.push("a plan vs a single run".into()),
        (true, false) => out.push("a single run vs a plan".into()),
        (false, false) => {
            let (oa, ob) = (only(&ea, &eb), only(&eb, &ea));
            if !oa.is_empty() {
                out.push(format!("steps only A ran ({})", listed(oa)));
            }
            if !ob.is_empty() {
                out.push(format!("steps only B ran ({})", listed(ob)));
            }
        }
        (true, true) => {}
    }
    if ea.is_empty() && eb.is_empty() && a.model == b.model {
        let (ca, cb) = (&a.config, &b.config);
        if ca.rate != cb.rate {
            let r = |v: Option<f64>| v.map_or("none".into(), |r| format!("{r}/s"));
            out.push(format!("offered rate {} vs {}", r(ca.rate), r(cb.rate)));
        }
        if ca.connections != cb.connections && a.model == perfbase_core::result::Model::Closed {
            let c = |v: Option<u64>| v.map_or("none".into(), |c| c.to_string());
            out.push(format!(
                "connections {} vs {}",
                c(ca.connections),
                c(cb.connections)
            ));
        }
    }
    out
}

/// Compares two results: a plan's phases are matched by scenario and step (repetitions become
/// the runs of each side); otherwise the whole runs are compared. Endpoints of a mix are
/// compared too, each as an entry of its own.
pub fn compare_results(
    a_label: &str,
    a: &perfbase_core::result::RunResult,
    b_label: &str,
    b: &perfbase_core::result::RunResult,
    tolerance: f64,
    alpha: f64,
) -> Comparison {
    let mut entries = Vec::new();
    if !a.phases.is_empty() && !b.phases.is_empty() {
        let gb = grouped(b);
        for (name, ra) in grouped(a) {
            if let Some((_, rb)) = gb.iter().find(|(n, _)| *n == name) {
                compare_with_endpoints(&mut entries, &name, &ra, rb, tolerance, alpha);
            }
        }
    }
    if entries.is_empty() {
        compare_with_endpoints(
            &mut entries,
            "run",
            &[&a.measurement],
            &[&b.measurement],
            tolerance,
            alpha,
        );
    }
    let tested = entries.iter().any(|e| e.runs_a >= 2 && e.runs_b >= 2);
    Comparison {
        a: a_label.to_string(),
        b: b_label.to_string(),
        method: method(tested, tolerance, alpha),
        tolerance,
        alpha,
        not_like_for_like: differences(a, b),
        entries,
    }
}

#[cfg(test)]
mod tests;
