//! Plan files (`perfbase run PLAN.toml`): a whole performance characterisation described once
//! in TOML — targets, corpora, workloads, scenarios (constant load, stages, rate and
//! concurrency ladders, repetitions), SLO, thresholds and exact checks. Documented with
//! examples in `docs/plans.md`.
//!
//! Everything is validated before any load is sent; every error names the file, the line and
//! the field (`plans/x.toml:14: scenarios[2].rate: invalid rate '0': …`). Each section is
//! read by its own file; `model.rs` holds what they make.

/// `$body` in a binary built with protocol `$feature`; without it, `targets()` has refused
/// the target already (naming the feature), so the arm is never reached. The arms stay
/// explicit per protocol, so a new one is still named by the compiler at every match.
macro_rules! built {
    ($feature:literal, $body:expr) => {{
        #[cfg(feature = $feature)]
        let value = $body;
        #[cfg(not(feature = $feature))]
        let value = crate::plan::not_built($feature);
        value
    }};
}

/// Never called: `targets()` refuses a target whose protocol this binary lacks. A function
/// of any type rather than `unreachable!()` in place, so the arms after it are not dead code.
#[allow(dead_code)]
fn not_built<T>(feature: &str) -> T {
    unreachable!("a {feature} target in a build without the feature")
}

mod checks;
mod context;
mod corpus;
mod describe;
mod faults;
mod fields;
mod file;
mod http_fields;
mod http_target;
mod journeys;
mod matrix;
mod meta;
mod model;
mod protocols;
mod publish;
mod repeat;
mod scenarios;
mod script;
mod targets;
mod url_vars;

/// Each protocol's plan file, `plan/NAME.rs` (its workload fields), from the one list.
macro_rules! plan_files {
    ($($(#[$doc:meta])* $m:ident => $variant:ident($target:ident), $feature:literal,
       [$($scheme:literal),*], $shown:literal, $above_http:literal;)*) => {
        $(#[cfg(feature = $feature)] mod $m;)*
    };
}
crate::backend::each_protocol!(plan_files);

pub use url_vars::expand_url;
mod workloads;

use context::Ctx;
pub use describe::{describe, planned_duration};
use file::PlanFile;
pub use model::*;
pub use repeat::MAX_STRETCH;
use std::path::Path;

/// Reads and validates a plan file. `scale` overrides `[plan] scale`.
/// A plan's name as a file or object name: lower-case letters and digits, anything else
/// `-`, none at either end (`API sweep v2` → `api-sweep-v2`).
pub fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    s.trim_matches('-').to_string()
}

pub fn load(path: &Path, scale: Option<f64>) -> Result<Plan, PlanError> {
    let file = path.display().to_string();
    let text = perfbase_drivers::input::read_text(path).map_err(|e| {
        match perfbase_drivers::input::bad_text_line(&e) {
            // Text that is not UTF-8: where it stops being text.
            Some(line) => PlanError {
                file: file.clone(),
                line,
                field: "file".into(),
                message: format!("cannot read the plan: {e}"),
            },
            // A missing or unreadable file has no line to name.
            None => PlanError {
                file: file.clone(),
                line: 0,
                field: String::new(),
                message: format!("cannot read the plan: {e}"),
            },
        }
    })?;
    let base = path
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .to_path_buf();
    parse(&text, &file, &base, scale)
}

/// Validates plan `text`; `file` names it in errors and `base` resolves relative files.
pub fn parse(text: &str, file: &str, base: &Path, scale: Option<f64>) -> Result<Plan, PlanError> {
    let cx = Ctx {
        text,
        file: file.to_string(),
        base: base.to_path_buf(),
    };
    let raw: PlanFile = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        cx.err_at(
            cx.line(at),
            context::toml_field(text, at),
            context::toml_message(e.message()),
        )
    })?;
    if let Some(name) = &raw.plan.name {
        cx.name(name, "plan.name")?;
    }
    let settings = meta::settings(&cx, &raw, scale)?;
    let corpora = corpus::corpora(&cx, &raw)?;
    let targets = targets::targets(&cx, &raw)?;
    let workloads = workloads::workloads(&cx, &raw, &targets, &corpora)?;
    let scenarios = scenarios::scenarios(&cx, &raw, &workloads, settings.scale)?;
    let checks = checks::checks(&cx, &raw, &workloads)?;
    let mut monitor = checks::monitor(&cx, &raw)?;
    matrix::watch_apps(&mut monitor, &scenarios);
    let rankings = publish::rankings(&cx, &raw, &scenarios)?;
    let versus = publish::versus(&cx, &raw, &scenarios)?;
    let matrices = matrix::matrices(&cx, &raw, &scenarios)?;
    let page = publish::page(&cx, &raw, meta_name(&raw, file))?;
    if scenarios.is_empty() && checks.is_empty() {
        return Err(cx.err_at(
            1,
            "scenarios",
            "the plan has no [[scenarios]] and no [[checks]]: nothing to run",
        ));
    }
    let meta = &raw.plan;
    Ok(Plan {
        name: meta_name(&raw, file),
        file: file.to_string(),
        description: meta.description.clone(),
        threads: settings.threads,
        timeout: settings.timeout,
        pacing: settings.pacing,
        scale: settings.scale,
        buckets_ms: settings.buckets_ms,
        knee: settings.knee,
        slo: settings.slo,
        thresholds: settings.thresholds,
        labels: settings.labels,
        workloads,
        scenarios,
        checks,
        monitor,
        rankings,
        versus,
        matrices,
        page,
        seed: match &meta.seed {
            Some(seed) => cx.count(seed, "plan.seed", i64::MAX as u64, "a seed may be")?,
            None => 0,
        },
        interleave: meta.interleave.unwrap_or(true),
        min_run: repeat::min_run(&cx, &raw)?,
    })
}

/// The plan's name: `[plan] name`, else the file's stem.
fn meta_name(raw: &PlanFile, file: &str) -> String {
    raw.plan.name.as_ref().map_or_else(
        || {
            // A file name is whatever the file system allows: printable, or escaped.
            Path::new(file).file_stem().map_or("plan".into(), |s| {
                perfbase_core::redact::printable(&s.to_string_lossy()).into_owned()
            })
        },
        |n| n.get_ref().clone(),
    )
}

#[cfg(test)]
mod tests;
