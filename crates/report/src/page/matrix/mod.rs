//! A plan's `[[matrices]]`: scenarios that form a matrix (web servers × SQL drivers) in one
//! table, as a published study tables them — the labels, then each step's load, throughput,
//! latency (avg, min, max, p90, p95), its ±, errors, the thresholds' verdict and the CPU and
//! memory of the scenario's own process under test — and the like-for-like observations below
//! it (see [`observe`]).

mod observe;

use super::markup::{Block, Section};
use super::{api, precision, table_cells, PageInput};
use crate::study_text::{ms, offered};
use crate::table::{Cell, Look};
use crate::{bytes, thousands_f};
use perfbase_core::monitor::TargetReport;
use perfbase_core::result::PhaseResult;
use perfbase_core::study::{Offered, ScenarioStudy, StepRow};

/// A matrix as the plan declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub name: String,
    /// The row heads, outermost first.
    pub labels: Vec<String>,
    /// Its scenarios, in plan order.
    pub members: Vec<Member>,
}

/// A scenario of a matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub scenario: String,
    /// Its values of the matrix's labels, in their order.
    pub values: Vec<String>,
    /// The monitor target that is its process under test, as the plan wrote it (`pid:123`).
    pub app: Option<String>,
}

impl Member {
    /// "Go net/http · jackc/pgx": the member as sentences name it.
    pub(crate) fn title(&self) -> String {
        self.values.join(" · ")
    }
}

/// One row: a step of a member's scenario.
pub(crate) struct Row<'a> {
    pub member: &'a Member,
    pub scenario: &'a ScenarioStudy,
    pub index: usize,
    pub step: &'a StepRow,
    /// The step's measured phases (one per repetition).
    pub phases: Vec<&'a PhaseResult>,
    /// Every threshold that failed on a run of the step (see [`failed_thresholds`]).
    pub failed: Vec<String>,
    /// Whether the step had thresholds to judge at all.
    pub judged: bool,
}

impl Row<'_> {
    /// The step's load in a sentence: "16 VUs", "500/s".
    pub(crate) fn load(&self) -> String {
        load_words(&self.step.offered)
    }

    /// Where it was measured in a sentence: its load, and a suite's operation ("13 VUs,
    /// verify").
    pub(crate) fn at(&self) -> String {
        if self.is_suite() {
            format!("{}, {}", self.load(), self.step.name)
        } else {
            self.load()
        }
    }

    /// Whether `other` ran the same step: the same load, and for a suite the same operation
    /// (a suite's steps are its operations at one load).
    pub(crate) fn same_step(&self, other: &Row<'_>) -> bool {
        self.step.offered == other.step.offered
            && (!self.is_suite() || self.step.name == other.step.name)
    }

    /// Whether its scenario is a suite, whose steps are operations at one load.
    pub(crate) fn is_suite(&self) -> bool {
        self.scenario.kind == "suite"
    }

    /// The step's errors by class over its runs, most frequent first.
    pub(crate) fn error_classes(&self) -> Vec<(String, u64)> {
        let mut classes: Vec<(String, u64)> = Vec::new();
        for (class, n) in self.phases.iter().flat_map(|p| &p.measurement.errors) {
            match classes.iter_mut().find(|(c, _)| c == class) {
                Some(c) => c.1 += n,
                None => classes.push((class.clone(), *n)),
            }
        }
        classes.retain(|(_, n)| *n > 0);
        classes.sort_by_key(|c| std::cmp::Reverse(c.1));
        classes
    }
}

/// Every threshold that failed on a run of the step, with how many of its runs it failed:
/// "error_rate < 1% (3 of 5 runs)". The runs' figures differ; the errors column has the
/// step's over all of them.
fn failed_thresholds(s: &ScenarioStudy, phases: &[&PhaseResult]) -> Vec<String> {
    let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
    let judged: Vec<_> = s
        .thresholds
        .iter()
        .filter(|v| names.contains(&v.phase.as_str()))
        .collect();
    let mut out: Vec<(String, usize, usize)> = Vec::new();
    for v in &judged {
        let t = &v.verdict.threshold;
        let at = match out.iter().position(|(o, _, _)| o == t) {
            Some(i) => i,
            None => {
                out.push((t.clone(), 0, 0));
                out.len() - 1
            }
        };
        out[at].2 += 1;
        if !v.verdict.passed {
            out[at].1 += 1;
        }
    }
    out.into_iter()
        .filter(|(_, failed, _)| *failed > 0)
        .map(|(t, failed, runs)| match runs {
            1 => t,
            _ => format!("{t} ({failed} of {runs} runs)"),
        })
        .collect()
}

/// "16", "500/s": a step's load in the matrix's load column.
pub(crate) fn load_text(o: &Offered) -> String {
    match o {
        Offered::Concurrency(c) => c.to_string(),
        other => offered(other),
    }
}

/// "16 VUs", "500/s": a load in a sentence.
pub(crate) fn load_words(o: &Offered) -> String {
    match o {
        Offered::Concurrency(c) => format!("{c} VU{}", if *c == 1 { "" } else { "s" }),
        other => offered(other),
    }
}

/// Requests per second as a study's table writes them: whole above 100/s.
pub(crate) fn rps(v: f64) -> String {
    if v >= 100.0 {
        crate::thousands(v.round() as u64)
    } else {
        thousands_f(v)
    }
}

/// The matrix's rows, grouped as a study groups them: by the first label's values in the
/// order the plan first gives them, then the second's, and so on; steps in load order.
pub(crate) fn rows<'a>(input: &'a PageInput<'_>, m: &'a Matrix) -> Vec<Row<'a>> {
    let mut members: Vec<&Member> = m.members.iter().collect();
    let rank = |depth: usize, v: &str| {
        m.members
            .iter()
            .position(|x| x.values[depth] == v)
            .unwrap_or(usize::MAX)
    };
    members.sort_by(|a, b| {
        (0..m.labels.len())
            .map(|d| rank(d, &a.values[d]).cmp(&rank(d, &b.values[d])))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut out = Vec::new();
    for member in members {
        let Some(s) = input
            .study
            .scenarios
            .iter()
            .find(|s| s.name == member.scenario)
        else {
            continue; // interrupted before it ran
        };
        for (index, step) in s.steps.iter().enumerate() {
            let phases: Vec<&PhaseResult> = input
                .result
                .phases
                .iter()
                .filter(|p| {
                    p.scenario.as_deref() == Some(s.name.as_str())
                        && p.step.unwrap_or(0) as usize == index
                })
                .collect();
            out.push(Row {
                member,
                scenario: s,
                index,
                step,
                failed: failed_thresholds(s, &phases),
                judged: s
                    .thresholds
                    .iter()
                    .any(|v| phases.iter().any(|p| p.name == v.phase)),
                phases,
            });
        }
    }
    out
}

/// The monitor's report of `app` (`pid:123`, shown on the page as `python3 (pid:123)`).
pub(crate) fn target<'a>(input: &'a PageInput<'_>, app: &str) -> Option<&'a TargetReport> {
    let m = input.result.monitor.as_ref()?;
    let named = format!("({app})");
    m.targets
        .iter()
        .find(|t| t.label == app || t.label.ends_with(&named))
}

/// The app's CPU (mean over the step's samples, % of one core) and peak RSS during `row`.
pub(crate) fn usage(input: &PageInput<'_>, row: &Row<'_>) -> Option<(f64, u64)> {
    let t = target(input, row.member.app.as_deref()?)?;
    let stats: Vec<_> = row.phases.iter().filter_map(|p| t.phase(&p.name)).collect();
    let n: usize = stats.iter().map(|p| p.samples).sum();
    if n == 0 {
        return None;
    }
    let cpu = stats
        .iter()
        .map(|p| p.cpu_pct.mean * p.samples as f64)
        .sum::<f64>()
        / n as f64;
    let rss = stats.iter().map(|p| p.rss_bytes.max).fold(0.0, f64::max);
    Some((cpu, rss as u64))
}

fn at_ms(v: f64) -> String {
    if v.is_finite() {
        ms(v)
    } else {
        "—".into()
    }
}

/// A row's cells; a label's value is written on the first row of its group only.
fn cells(
    input: &PageInput<'_>,
    row: &Row<'_>,
    previous: Option<&Row<'_>>,
    operations: bool,
) -> Vec<Cell> {
    let mut out: Vec<Cell> = Vec::new();
    let mut same = previous.is_some();
    for (d, v) in row.member.values.iter().enumerate() {
        same = same && previous.is_some_and(|p| p.member.values[d] == *v);
        out.push(Cell::from(if same { String::new() } else { v.clone() }));
    }
    let st = row.step;
    if operations {
        out.push(Cell::from(st.name.clone()));
    }
    out.push(Cell::from(load_text(&st.offered)));
    out.push(Cell::from(rps(st.achieved_rps)));
    for v in [st.mean_ms, st.min_ms, st.max_ms, st.p90_ms, st.p95_ms] {
        out.push(Cell::from(at_ms(v)));
    }
    out.push(api::precision_cell(precision::cell(row.scenario, &st.name)));
    out.push(Cell::from(errors_text(row)));
    out.push(if !row.failed.is_empty() {
        Cell::new(format!("FAIL {}", row.failed.join("; ")), Look::Fail)
    } else if row.judged {
        Cell::from("pass")
    } else {
        Cell::from("—")
    });
    match usage(input, row) {
        Some((cpu, rss)) => {
            out.push(Cell::from(format!("{cpu:.0} %")));
            out.push(Cell::from(bytes(rss)));
        }
        None => {
            out.push(Cell::from("—"));
            out.push(Cell::from("—"));
        }
    }
    out
}

/// The step's share of failed requests, with its most frequent class when any failed:
/// "0.00 %", "12.31 % connect".
fn errors_text(row: &Row<'_>) -> String {
    let share = format!("{:.2} %", (1.0 - row.step.success_ratio) * 100.0);
    match row.error_classes().first() {
        Some((class, _)) => format!("{share} {class}"),
        None => share,
    }
}

/// The head of the load column: VUs when every row is a concurrency.
fn load_head(rows: &[Row<'_>]) -> &'static str {
    if rows
        .iter()
        .all(|r| matches!(r.step.offered, Offered::Concurrency(_)))
    {
        "VUs"
    } else {
        "load"
    }
}

/// A section per matrix: the table, what its columns mean, then the observations.
pub(crate) fn sections(input: &PageInput<'_>) -> Vec<Section> {
    let mut out = Vec::new();
    for m in &input.matrices {
        let rows = rows(input, m);
        if rows.is_empty() {
            continue;
        }
        let mut head: Vec<&str> = m.labels.iter().map(String::as_str).collect();
        // A suite's steps are its operations at one load: the row names its operation.
        let operations = rows.iter().any(Row::is_suite);
        if operations {
            head.push("operation");
        }
        let labels = head.len();
        head.push(load_head(&rows));
        head.extend([
            "RPS",
            "avg ms",
            "min ms",
            "max ms",
            "p90 ms",
            "p95 ms",
            "±",
            "errors",
            "thresholds",
            "app CPU",
            "app RSS",
        ]);
        let table: Vec<Vec<Cell>> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| cells(input, r, i.checked_sub(1).map(|p| &rows[p]), operations))
            .collect();
        let mut blocks = vec![
            Block::Text(
                "One row per scenario and step. RPS: completed requests per second of the \
                 step (errors included); latency over the step's runs; ±: how far the runs \
                 agree (95 % interval, worst of throughput, mean and p99); errors: the share \
                 that failed; thresholds: the scenario's, judged on each run of the step; \
                 app CPU: the process under test's mean over the step (% of one core), app \
                 RSS: its peak."
                    .into(),
            ),
            table_cells(&head, table, labels, &[labels + 8, labels + 9]),
        ];
        let found = observe::observations(input, m, &rows);
        if !found.is_empty() {
            blocks.push(Block::Heading(format!("{} — observations", m.name)));
            blocks.push(Block::List(found));
        }
        out.push(Section {
            title: m.name.clone(),
            blocks,
        });
    }
    out
}

/// Whether scenario `name` is tabled in a matrix (and so not again in its service's section).
pub(crate) fn in_matrix(input: &PageInput<'_>, name: &str) -> bool {
    input
        .matrices
        .iter()
        .any(|m| m.members.iter().any(|x| x.scenario == name))
}
