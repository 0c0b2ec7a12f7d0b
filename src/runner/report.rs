//! What a finished run shows: a plan file's study and report.md, a command's summary or
//! suite table, the monitor's table, and the protocol's closing lines.

use super::result::Progressive;
use super::{Output, RunOptions};
use crate::exit::AppError;
use crate::plan::Plan;
use anyhow::Context as _;
use perfbase_analysis::study::Study;
use perfbase_core::result::RunResult;

/// Prints (and for a plan file, writes report.md for) the finished `result`.
pub(super) fn present(
    plan: &Plan,
    o: &RunOptions,
    state: &Progressive<'_>,
    result: &RunResult,
    study: &Study,
) -> Result<(), AppError> {
    match &o.output {
        Output::Plan { dir } => {
            let report = dir.join("report.md");
            // Each protocol's closing figures (pgbench's block, a stream's consumers, a cluster's
            // replies per node), after the tables.
            let closing: String = closing_blocks(plan, state, result)
                .into_iter()
                .map(|(_, b)| b)
                .collect();
            let mut markdown = perfbase_report::markdown::render(result, study);
            if !closing.is_empty() {
                markdown.push_str(&format!("\n## Closing figures\n\n```\n{closing}```\n"));
            }
            perfbase_report::json::write_text_atomic(&report, &markdown)
                .with_context(|| format!("cannot write {}", report.display()))?;
            out!(
                "{}",
                perfbase_report::terminal::render_study(result, study, o.color)
            );
            if !closing.is_empty() {
                out!("\n{closing}");
            }
            outln!(
                "\nresults: {}  report: {}",
                dir.join("result.json").display(),
                report.display()
            );
            return Ok(());
        }
        Output::Single { .. } => {
            out!("{}", perfbase_report::terminal::render(result));
            crate::terminal::print_monitor(result);
        }
        Output::Suite { title, .. } => crate::terminal::print_suite(result, title),
    }
    if !plan.thresholds.is_empty() {
        out!(
            "{}",
            perfbase_report::terminal::render_verdicts(study, o.color)
        );
    }
    // A command's scenarios are all of one protocol: its first says the closing lines.
    let extras: Vec<_> = state.sides.values().map(|s| s.extras.clone()).collect();
    let single = matches!(o.output, Output::Single { .. });
    if let Some(s) = plan.scenarios.first() {
        let backend = &plan.workloads[&s.workload].backend;
        let closing = backend.closing(&extras, result, single);
        out!("{}", perfbase_report::closing::text(&closing));
    }
    Ok(())
}

/// What each of a plan's scenarios closes with beyond its tables, in its protocol's words:
/// pgbench's block per phase of TPC-B, a stream's consumers, a Redis Cluster's replies per
/// node.
pub(super) fn closing_blocks(
    plan: &Plan,
    state: &Progressive<'_>,
    result: &RunResult,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let none = crate::backend::Side::default();
    for (k, s) in plan.scenarios.iter().enumerate() {
        let side = state.sides.get(&k).unwrap_or(&none);
        let backend = &plan.workloads[&s.workload].backend;
        for block in backend.closing_blocks(&s.name, side, result) {
            let text = perfbase_report::closing::text(std::slice::from_ref(&block));
            out.push((s.name.clone(), text));
        }
    }
    out
}
