//! What a finished run shows: a plan file's study and report.md, a command's summary or
//! suite table, the monitor's table, and the protocol's closing lines.

use super::record::Progressive;
use super::{Output, StudyOptions};
use crate::exit::AppError;
use crate::plan::Plan;
use anyhow::Context as _;
use perfbase_analysis::study::Study;
use perfbase_core::result::RunResult;

/// Prints (and for a plan file, writes report.md for) the finished `result`.
pub(super) fn present(
    plan: &Plan,
    o: &StudyOptions,
    state: &Progressive<'_>,
    result: &RunResult,
    study: &Study,
) -> Result<(), AppError> {
    match &o.output {
        Output::Study { dir } => {
            let report = dir.join("report.md");
            perfbase_report::json::write_text_atomic(
                &report,
                &perfbase_report::markdown::render(result, study),
            )
            .with_context(|| format!("cannot write {}", report.display()))?;
            out!(
                "{}",
                perfbase_report::terminal::render_study(result, study, o.color)
            );
            outln!(
                "\nresults: {}  report: {}",
                dir.join("result.json").display(),
                report.display()
            );
            return Ok(());
        }
        Output::Single { .. } => {
            out!("{}", perfbase_report::terminal::render(result));
            crate::show::print_monitor(result);
        }
        Output::Suite { title, .. } => crate::show::print_suite(result, title),
    }
    let backends: Vec<&crate::backend::Backend> = plan
        .scenarios
        .iter()
        .map(|s| &plan.workloads[&s.workload].backend)
        .collect();
    let extras: Vec<_> = state.sides.values().map(|s| s.extras.clone()).collect();
    let single = matches!(o.output, Output::Single { .. });
    crate::backend::epilogue(&backends, &extras, result, single);
    Ok(())
}
