//! The tables of a plan run that both markup reports show, Markdown and HTML: the plan's
//! summary, a scenario's sweep, each step's statistics over its repetitions, a scenario's
//! thresholds, the plan's checks and every measured phase. Decided here once, drawn by
//! `crate::table`.

use crate::study_text::{counts, latency_cells, ms, offered, threshold_value, LATENCY_HEADS};
use crate::table::{Cell, Look, Table, Tag};
use crate::{thousands, thousands_f};
use perfbase_analysis::stats::Summary;
use perfbase_analysis::study::{ScenarioStudy, Study};
use perfbase_analysis::sweep::Offered;
use perfbase_core::result::RunResult;
use perfbase_core::study::RankRow;

/// The plan's summary: one row per scenario and per check, a failed one marked.
pub fn summary(r: &RunResult, study: &Study) -> Table {
    let mut rows = Vec::new();
    let mut classes = Vec::new();
    for (cells, failed) in crate::study_text::summary_rows(r, study) {
        let last = cells.len().saturating_sub(1);
        rows.push(
            cells
                .into_iter()
                .enumerate()
                .map(|(i, c)| {
                    let look = if failed && i == last {
                        Look::Fail
                    } else {
                        Look::Plain
                    };
                    Cell::new(c, look)
                })
                .collect(),
        );
        classes.push(failed.then_some("fail"));
    }
    Table::new(&crate::study_text::SUMMARY_HEADS, rows, 2)
        .class("summary")
        .row_classes(classes)
}

/// A ranking, best first: each entry's rank, its label (a column headed `what`), req/s,
/// mean and p99 latency and success. The one table of rankings: a plan's in report.md and on
/// the page, and `perfbase compare`'s of three runs or more.
pub fn ranking(rows: &[RankRow], what: &str) -> Table {
    let rows = rows
        .iter()
        .map(|r| {
            vec![
                r.rank.to_string().into(),
                r.label.as_str().into(),
                thousands_f(r.rps).into(),
                ms(r.mean_ms).into(),
                ms(r.p99_ms).into(),
                format!("{:.2} %", r.success_ratio * 100.0).into(),
            ]
        })
        .collect();
    Table::new(
        &["rank", what, "req/s", "mean ms", "p99 ms", "success"],
        rows,
        2,
    )
}

/// A scenario's sweep: one row per step with its load, latency and the share of operations
/// under each SLO bucket; the knee, the operating point and invalid steps tagged.
pub fn sweep(s: &ScenarioStudy) -> Table {
    let buckets: Vec<String> = s
        .steps
        .first()
        .map(|row| {
            row.under_ms
                .iter()
                .map(|(b, _)| format!("< {b} ms"))
                .collect()
        })
        .unwrap_or_default();
    let mut head = vec!["step", "offered", "achieved/s", "success"];
    head.extend(LATENCY_HEADS);
    head.extend(buckets.iter().map(String::as_str));
    let mut rows = Vec::new();
    let mut classes = Vec::new();
    for (i, row) in s.steps.iter().enumerate() {
        let knee = s.knee.as_ref().is_some_and(|k| k.first_bad == Some(i));
        let op = s.operating_point.as_ref().is_some_and(|p| p.index == i);
        let mut step = Cell::from(row.name.as_str());
        if let Some(why) = &row.invalid {
            step = step.tag(Tag {
                text: "invalid",
                class: "knee",
                title: Some(why.clone()),
            });
        }
        if knee {
            step = step.tag(Tag {
                text: "knee",
                class: "knee",
                title: None,
            });
        }
        if op {
            step = step.tag(Tag {
                text: "operating point",
                class: "op",
                title: None,
            });
        }
        let mut cells = vec![
            step,
            offered(&row.offered).into(),
            thousands_f(row.achieved_rps).into(),
            format!("{:.2} %", row.success_ratio * 100.0).into(),
        ];
        cells.extend(latency_cells(row).map(Cell::from));
        cells.extend(row.under_ms.iter().map(|(_, share)| {
            Cell::from(if share.is_nan() {
                "-".to_string()
            } else {
                format!("{:.1} %", share * 100.0)
            })
        }));
        rows.push(cells);
        classes.push(match (knee, op) {
            (true, _) => Some("knee"),
            (false, true) => Some("op"),
            _ => None,
        });
    }
    Table::new(&head, rows, 1).row_classes(classes)
}

/// A repetition statistic: its name, its summary and how to print its values.
type StatRow<'a> = (&'a str, &'a Summary, &'a dyn Fn(f64) -> String);

/// Each step's statistics over the repetitions: mean, sample variance, standard deviation, the
/// median run and its 95 % interval (or that there were too few runs for one), min and max.
pub fn repetitions(s: &ScenarioStudy) -> Table {
    let per_s = |v: f64| format!("{v:.1}");
    let pct = |v: f64| format!("{:.2} %", v * 100.0);
    let mut rows = Vec::new();
    for st in &s.repetition_stats {
        let stats: [StatRow; 8] = [
            ("requests/s", &st.rps, &per_s),
            ("success", &st.success_ratio, &pct),
            ("min ms", &st.min_ms, &ms),
            ("mean ms", &st.mean_ms, &ms),
            ("p50 ms", &st.p50_ms, &ms),
            ("p90 ms", &st.p90_ms, &ms),
            ("p99 ms", &st.p99_ms, &ms),
            ("max ms", &st.max_ms, &ms),
        ];
        for (name, sm, f) in stats {
            rows.push(vec![
                Cell::from(st.step.as_str()),
                name.into(),
                f(sm.mean).into(),
                format!("{:.4}", sm.variance).into(),
                format!("{:.4}", sm.stdev).into(),
                // Results saved before the median have none (NaN): a dash, not "NaN".
                if sm.median.is_nan() {
                    "—".to_string()
                } else {
                    f(sm.median)
                }
                .into(),
                crate::study_text::interval(sm, f).into(),
                f(sm.min).into(),
                f(sm.max).into(),
            ]);
        }
    }
    Table::new(
        &[
            "step",
            "statistic",
            "mean",
            "variance",
            "stdev",
            "median",
            "95 % interval of the median",
            "min",
            "max",
        ],
        rows,
        2,
    )
}

/// A scenario's thresholds: the phase judged, the threshold, its actual value and the verdict.
pub fn thresholds(s: &ScenarioStudy) -> Table {
    let rows = s
        .thresholds
        .iter()
        .map(|t| {
            vec![
                Cell::from(t.phase.as_str()),
                Cell::code(t.verdict.threshold.as_str()),
                threshold_value(&t.verdict.threshold, t.verdict.actual)
                    .unwrap_or_else(|| "-".into())
                    .into(),
                Cell::verdict(t.verdict.passed),
            ]
        })
        .collect();
    Table::new(&["phase", "threshold", "actual", "verdict"], rows, 2)
}

/// The plan's checks: the statuses expected and those counted.
pub fn checks(study: &Study) -> Table {
    let rows = study
        .checks
        .iter()
        .map(|c| {
            vec![
                Cell::from(c.name.as_str()),
                thousands(c.requests).into(),
                counts(&c.expect).into(),
                counts(&c.actual).into(),
                Cell::verdict(c.passed),
            ]
        })
        .collect();
    Table::new(
        &["check", "requests", "expected", "actual", "verdict"],
        rows,
        1,
    )
    .words_in(&[2, 3])
}

/// Every measured phase, one row each: where it belongs in the plan and its figures.
pub fn phases(r: &RunResult) -> Table {
    let rows = r
        .phases
        .iter()
        .map(|p| {
            let m = &p.measurement;
            let offered = match (p.offered_rate, p.offered_connections) {
                (Some(rate), _) => offered(&Offered::Rate(rate)),
                (None, Some(c)) => offered(&Offered::Concurrency(c)),
                _ => "-".to_string(),
            };
            vec![
                Cell::from(p.name.as_str()),
                p.scenario.as_deref().unwrap_or("-").into(),
                p.step
                    .map_or("-".to_string(), |s| (s + 1).to_string())
                    .into(),
                p.repetition
                    .map_or("-".to_string(), |r| r.to_string())
                    .into(),
                offered.into(),
                p.model.name().into(),
                thousands(m.requests).into(),
                format!("{:.2}", m.duration_s).into(),
                thousands_f(m.rps).into(),
                Cell::success(m.success_ratio),
                ms(m.latency_ms.p50).into(),
                ms(m.latency_ms.p95).into(),
                ms(m.latency_ms.p99).into(),
                ms(m.latency_ms.max).into(),
            ]
        })
        .collect();
    Table::new(
        &[
            "phase",
            "scenario",
            "step",
            "rep.",
            "offered",
            "model",
            "requests",
            "duration s",
            "req/s",
            "success",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "max ms",
        ],
        rows,
        2,
    )
    .words_in(&[5])
}
