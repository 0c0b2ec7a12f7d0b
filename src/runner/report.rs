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
            let pgbench: String = closing_blocks(plan, state, result)
                .into_iter()
                .map(|(_, b)| b)
                .collect();
            let mut markdown = perfbase_report::markdown::render(result, study);
            if !pgbench.is_empty() {
                markdown.push_str(&format!("\n## Closing figures\n\n```\n{pgbench}```\n"));
            }
            perfbase_report::json::write_text_atomic(&report, &markdown)
                .with_context(|| format!("cannot write {}", report.display()))?;
            out!(
                "{}",
                perfbase_report::terminal::render_study(result, study, o.color)
            );
            if !pgbench.is_empty() {
                out!("\n{pgbench}");
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
            crate::show::print_monitor(result);
        }
        Output::Suite { title, .. } => crate::show::print_suite(result, title),
    }
    if !plan.thresholds.is_empty() {
        out!(
            "{}",
            perfbase_report::terminal::render_verdicts(study, o.color)
        );
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

/// pgbench's closing block for each measured phase of a plan's TPC-B scenarios, so a plan's
/// figures can be set beside pgbench's as a command's can.
pub(super) fn pgbench_blocks(
    plan: &Plan,
    state: &Progressive<'_>,
    result: &RunResult,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, s) in plan.scenarios.iter().enumerate() {
        let crate::backend::Backend::Sql(sql) = &plan.workloads[&s.workload].backend else {
            continue;
        };
        if sql.workload.tpcb_scale().is_none() {
            continue;
        }
        let scale = state
            .sides
            .get(&k)
            .and_then(|side| side.extras.get("scale"))
            .and_then(serde_json::Value::as_u64);
        for p in result
            .phases
            .iter()
            .filter(|p| p.scenario.as_ref() == Some(&s.name))
        {
            let load = crate::backend::PgbenchLoad {
                clients: p.offered_connections,
                rate: p.offered_rate,
                threads: result.config.threads,
                scale,
            };
            let block = crate::backend::pgbench_block(&p.measurement, sql, &load);
            out.push((s.name.clone(), format!("pgbench, {}:\n{block}", p.name)));
        }
    }
    out
}

/// What a plan's scenarios close with beyond their tables, by scenario: pgbench's block for
/// TPC-B, redirects and replies per node for a Redis Cluster.
pub(super) fn closing_blocks(
    plan: &Plan,
    state: &Progressive<'_>,
    result: &RunResult,
) -> Vec<(String, String)> {
    let mut out = pgbench_blocks(plan, state, result);
    for (k, s) in plan.scenarios.iter().enumerate() {
        if let crate::backend::Backend::Amqp(crate::backend::AmqpTarget {
            stream: Some(side),
            ..
        }) = &plan.workloads[&s.workload].backend
        {
            let Some(ran) = state.sides.get(&k) else {
                continue;
            };
            if let Some(consumed) = &ran.consumed {
                let unconsumed = ran
                    .extras
                    .get("unconsumed")
                    .and_then(serde_json::Value::as_u64)
                    .unwrap_or(0);
                let text = perfbase_report::terminal::render_consumed(
                    consumed,
                    side.consumers,
                    unconsumed,
                );
                out.push((s.name.clone(), format!("consumers of {}:\n{text}", s.name)));
            }
        }
    }
    for (k, s) in plan.scenarios.iter().enumerate() {
        let crate::backend::Backend::Redis(r) = &plan.workloads[&s.workload].backend else {
            continue;
        };
        if !r.url.starts_with("redis+cluster://") {
            continue;
        }
        if let Some(side) = state.sides.get(&k) {
            let lines = crate::backend::cluster_lines(std::slice::from_ref(&side.extras));
            out.push((s.name.clone(), lines));
        }
    }
    out
}
