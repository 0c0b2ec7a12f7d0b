//! A journey's own tables, for every report: its iterations (count, failures, rate and
//! duration percentiles, k6's `iterations` and `iteration_duration`), its checks by name
//! (k6's `checks`) and a script's own metrics, per step of a scenario or for a whole run.

use crate::study_text::ms;
use crate::table::{Cell, Table};
use crate::{figure, thousands, thousands_f};
use perfbase_core::merge::merge_measurements;
use perfbase_core::metric::{MetricKind, MetricResult};
use perfbase_core::result::{CheckResult, GroupResult, Iterations, Measurement, RunResult};

/// A step's journey figures: its name, iterations, checks and groups.
pub struct JourneyRow {
    pub step: String,
    pub iterations: Option<Iterations>,
    pub checks: Vec<CheckResult>,
    pub groups: Vec<GroupResult>,
    pub metrics: Vec<MetricResult>,
}

impl JourneyRow {
    fn of(step: String, m: &Measurement) -> JourneyRow {
        JourneyRow {
            step,
            iterations: m.iterations.clone(),
            checks: m.checks.clone(),
            groups: m.groups.clone(),
            metrics: m.metrics.clone(),
        }
    }
}

/// The journey figures of a plan scenario, per step, repetitions merged; empty when its
/// workload was no journey.
pub fn scenario_journeys(r: &RunResult, scenario: &str, steps: &[String]) -> Vec<JourneyRow> {
    let mut by_step: std::collections::BTreeMap<u32, Vec<&Measurement>> = Default::default();
    for (step, m) in crate::study_text::scenario_parts(r, scenario) {
        if m.iterations.is_some() || !m.checks.is_empty() || !m.metrics.is_empty() {
            by_step.entry(step).or_default().push(m);
        }
    }
    by_step
        .into_iter()
        .map(|(step, parts)| {
            let m = merge_measurements(&parts);
            let name = steps
                .get(step as usize)
                .cloned()
                .unwrap_or_else(|| step.to_string());
            JourneyRow::of(name, &m)
        })
        .collect()
}

/// The rows of a whole run (one unnamed step).
pub fn run_journeys(m: &Measurement) -> Vec<JourneyRow> {
    if m.iterations.is_none() && m.checks.is_empty() && m.groups.is_empty() && m.metrics.is_empty()
    {
        return Vec::new();
    }
    vec![JourneyRow::of(String::new(), m)]
}

/// One row per step: iterations, how many failed, their rate and duration percentiles.
pub fn iterations(step_col: bool, rows: &[JourneyRow]) -> Option<Table> {
    let mut head = vec![
        "count", "failed", "per s", "p50 ms", "p95 ms", "p99 ms", "max ms",
    ];
    if step_col {
        head.insert(0, "step");
    }
    let cells: Vec<Vec<Cell>> = rows
        .iter()
        .filter_map(|r| {
            let (step, it) = (&r.step, r.iterations.as_ref()?);
            let mut row = Vec::new();
            if step_col {
                row.push(Cell::from(step.as_str()));
            }
            let d = &it.duration_ms;
            row.extend([
                thousands(it.count).into(),
                thousands(it.failed).into(),
                thousands_f(it.rate).into(),
                ms(d.p50).into(),
                ms(d.p95).into(),
                ms(d.p99).into(),
                ms(d.max).into(),
            ]);
            Some(row)
        })
        .collect();
    (!cells.is_empty()).then(|| Table::new(&head, cells, usize::from(step_col)).class("iterations"))
}

/// One row per check (per step with `step_col`): passes, failures and the pass rate.
pub fn checks(step_col: bool, rows: &[JourneyRow]) -> Option<Table> {
    let mut head = vec!["check", "passed", "failed", "pass rate"];
    if step_col {
        head.insert(0, "step");
    }
    let mut cells = Vec::new();
    for JourneyRow { step, checks, .. } in rows {
        for c in checks {
            let mut row = Vec::new();
            if step_col {
                row.push(Cell::from(step.as_str()));
            }
            let all = c.passed + c.failed;
            row.extend([
                Cell::code(c.name.as_str()),
                thousands(c.passed).into(),
                thousands(c.failed).into(),
                if all == 0 {
                    Cell::from("—")
                } else {
                    Cell::success(c.passed as f64 / all as f64)
                },
            ]);
            cells.push(row);
        }
    }
    let words = 1 + usize::from(step_col);
    (!cells.is_empty()).then(|| Table::new(&head, cells, words).class("checks"))
}

/// One row per group of steps (per step with `step_col`): passes and duration percentiles.
pub fn groups(step_col: bool, rows: &[JourneyRow]) -> Option<Table> {
    let mut head = vec!["group", "count", "p50 ms", "p95 ms", "p99 ms", "max ms"];
    if step_col {
        head.insert(0, "step");
    }
    let mut cells = Vec::new();
    for JourneyRow { step, groups, .. } in rows {
        for g in groups {
            let mut row = Vec::new();
            if step_col {
                row.push(Cell::from(step.as_str()));
            }
            let d = &g.duration_ms;
            row.extend([
                Cell::from(g.name.as_str()),
                thousands(g.count).into(),
                ms(d.p50).into(),
                ms(d.p95).into(),
                ms(d.p99).into(),
                ms(d.max).into(),
            ]);
            cells.push(row);
        }
    }
    let words = 1 + usize::from(step_col);
    (!cells.is_empty()).then(|| Table::new(&head, cells, words).class("groups"))
}

/// One row per script metric (per step with `step_col`): its kind, how many values, its
/// value (a counter's sum and rate, a rate's share, a gauge's last, a trend's mean), and its
/// spread: a trend's percentiles, any kind's extremes.
pub fn metrics(step_col: bool, rows: &[JourneyRow]) -> Option<Table> {
    let mut head = vec![
        "metric", "kind", "values", "value", "min", "p50", "p95", "p99", "max",
    ];
    if step_col {
        head.insert(0, "step");
    }
    let mut cells = Vec::new();
    for JourneyRow { step, metrics, .. } in rows {
        for m in metrics {
            let mut row = Vec::new();
            if step_col {
                row.push(Cell::from(step.as_str()));
            }
            let value = match m.kind {
                MetricKind::Counter => format!("{} ({}/s)", figure(m.value), thousands_f(m.rate)),
                MetricKind::Rate if m.value.is_finite() => format!("{:.2} %", m.value * 100.0),
                _ => figure(m.value),
            };
            let at = |p: fn(&perfbase_core::result::LatencyMs) -> f64| {
                Cell::from(m.values.as_ref().map_or("—".into(), |v| figure(p(v))))
            };
            row.extend([
                Cell::code(m.name.as_str()),
                Cell::from(m.kind.name()),
                thousands(m.samples).into(),
                value.into(),
                figure(m.min).into(),
                at(|v| v.p50),
                at(|v| v.p95),
                at(|v| v.p99),
                figure(m.max).into(),
            ]);
            cells.push(row);
        }
    }
    let words = 2 + usize::from(step_col);
    (!cells.is_empty()).then(|| Table::new(&head, cells, words).class("metrics"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfbase_core::result::LatencyMs;

    #[test]
    fn iterations_and_checks_make_a_row_each_and_nothing_without_a_journey() {
        let it = Iterations {
            count: 1000,
            ok: 990,
            failed: 10,
            rate: 100.0,
            duration_ms: LatencyMs::NONE,
            histogram: String::new(),
        };
        let check = CheckResult {
            name: "created".into(),
            passed: 900,
            failed: 100,
        };
        let mut stats = perfbase_core::metric::MetricStats::new("waiting", MetricKind::Trend);
        for v in [1.5, 2.5, 1200.0] {
            stats.add(v, std::time::Duration::ZERO);
        }
        let trend = MetricResult::from_stats(&stats, 1.0);
        let rows = vec![JourneyRow {
            step: "c=4".into(),
            iterations: Some(it),
            checks: vec![check],
            groups: Vec::new(),
            metrics: vec![trend],
        }];
        let mut md = String::new();
        iterations(true, &rows).expect("a row").markdown(&mut md);
        assert!(md.contains("| c=4 | 1,000 | 10 | 100.0 |"), "{md}");
        let mut md = String::new();
        checks(false, &rows).expect("a row").markdown(&mut md);
        assert!(
            md.contains("`created` | 900 | 100 |") && md.contains("90.00 %"),
            "{md}"
        );
        assert!(iterations(false, &[]).is_none() && checks(true, &[]).is_none());
        assert!(groups(true, &rows).is_none());
        let mut md = String::new();
        metrics(false, &rows).expect("a row").markdown(&mut md);
        assert!(
            md.contains("`waiting` | trend | 3 | 401.333 | 1.5 | 2.5") && md.contains("| 1,200 |"),
            "{md}"
        );
    }
}
