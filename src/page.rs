//! A plan's `[page]`: after the run, one dated "Performance Baselines" page
//! (`STEM-YYYYMMDD-HHMMSS.md` and `.html` in the run's folder) with the services' versions
//! as they reported them before the load, and a changelog against the previous baseline of
//! the same plan. The run is then made that baseline (`page:PLAN NAME` in the store), so the
//! next page compares with it; `perfbase baseline list` shows them.

use crate::exit::AppError;
use crate::plan::{PageSpec, Plan};
use crate::store::StoreOptions;
use anyhow::Context as _;
use perfbase_analysis::study::Study;
use perfbase_core::result::RunResult;
use perfbase_report::page::{Baseline, Changelog, PageInput, Service};
use std::path::{Path, PathBuf};

/// Each distinct service the plan loads, with the version it reports now: asked once per
/// address, before any load, so the page names what was measured.
pub fn services(plan: &Plan) -> Vec<Service> {
    let mut out: Vec<Service> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for s in &plan.scenarios {
        let backend = &plan.workloads[&s.workload].backend;
        let address = perfbase_core::redact::url(&backend.server_url());
        if seen.contains(&address) {
            continue;
        }
        seen.push(address.clone());
        out.push(Service {
            kind: backend.service_kind().to_string(),
            address,
            version: backend.server_version(),
        });
    }
    out
}

/// The baseline name a plan's pages share.
fn baseline_name(plan: &Plan) -> String {
    format!("page:{}", plan.name.trim())
}

/// What the page needs that only the run knows.
pub struct PageRun<'a> {
    pub plan: &'a Plan,
    pub spec: &'a PageSpec,
    pub dir: &'a Path,
    pub store: &'a StoreOptions,
    /// This run's id in the store, if it was saved.
    pub run_id: Option<i64>,
    pub result: &'a RunResult,
    pub study: &'a Study,
    pub services: Vec<Service>,
    /// What scenarios close with (pgbench's block, a cluster's nodes), by scenario.
    pub closing: Vec<(String, String)>,
}

/// Writes the page (Markdown and HTML); returns their paths.
pub fn write(p: PageRun<'_>) -> Result<(PathBuf, PathBuf), AppError> {
    let now = std::time::SystemTime::now();
    let generated_at = crate::env::rfc3339(now);
    let stamp = crate::env::format_utc(now, "%Y%m%d-%H%M%S");
    let changelog = changelog(&p);
    let sections = p
        .plan
        .scenarios
        .iter()
        .map(|s| {
            let kind = s.section.clone().unwrap_or_else(|| {
                p.plan.workloads[&s.workload]
                    .backend
                    .service_kind()
                    .to_string()
            });
            (s.name.clone(), kind)
        })
        .collect();
    let shown = with_process_names(p.result);
    let input = PageInput {
        title: p.spec.title.clone(),
        generated_at,
        run_id: p.run_id,
        result: &shown,
        study: p.study,
        sections,
        services: p.services,
        closing: p.closing,
        changelog,
        api: p
            .plan
            .scenarios
            .iter()
            .filter_map(|s| {
                let (implementation, endpoint, note) = s.api.clone()?;
                Some(perfbase_report::page::ApiRow {
                    scenario: s.name.clone(),
                    implementation,
                    endpoint,
                    note,
                })
            })
            .collect(),
        matrices: matrices(p.plan),
    };
    let page = perfbase_report::page::build(&input);
    let md = p.dir.join(format!("{}-{stamp}.md", p.spec.stem));
    let html = p.dir.join(format!("{}-{stamp}.html", p.spec.stem));
    perfbase_report::json::write_text_atomic(&md, &page.markdown())
        .with_context(|| format!("cannot write {}", md.display()))?;
    perfbase_report::json::write_text_atomic(&html, &page.html())
        .with_context(|| format!("cannot write {}", html.display()))?;
    Ok((md, html))
}

/// The plan's `[[matrices]]` with each member's label values and process under test.
fn matrices(plan: &Plan) -> Vec<perfbase_report::page::Matrix> {
    plan.matrices
        .iter()
        .map(|m| perfbase_report::page::Matrix {
            name: m.name.clone(),
            labels: m.labels.clone(),
            members: m
                .scenarios
                .iter()
                .filter_map(|name| plan.scenarios.iter().find(|s| &s.name == name))
                .map(|s| perfbase_report::page::Member {
                    scenario: s.name.clone(),
                    values: m
                        .labels
                        .iter()
                        .map(|l| {
                            let v = s.labels.iter().find(|(n, _)| n == l);
                            v.map_or_else(String::new, |(_, v)| v.clone())
                        })
                        .collect(),
                    app: s.app.clone(),
                })
                .collect(),
        })
        .collect()
}

/// The previous baseline of the plan and how this run compares with it; then this run
/// becomes the baseline. A store that cannot be read leaves the changelog empty, said on
/// stderr: the page and the result are written all the same.
fn changelog(p: &PageRun<'_>) -> Changelog {
    let (Some(id), false) = (p.run_id, p.store.disabled) else {
        return Changelog::default();
    };
    let name = baseline_name(p.plan);
    let mut store = match crate::store::open(p.store) {
        Ok(s) => s,
        Err(e) => {
            errln!("perfbase: page: no changelog: {e}");
            return Changelog::default();
        }
    };
    let previous = match store.baseline(&name) {
        Ok(prev) if prev.summary.id != id => {
            let cmp = perfbase_analysis::versus::runs::compare_results(
                &format!("run {}", prev.summary.id),
                &prev.result,
                &format!("run {id}"),
                p.result,
                0.05,
                0.05,
            );
            Some((
                Baseline {
                    run_id: prev.summary.id,
                    saved_at: prev.summary.saved_at.clone(),
                    tool_version: prev.result.tool.version.clone(),
                },
                cmp,
            ))
        }
        _ => None,
    };
    if let Err(e) = store.set_baseline(&name, id) {
        errln!("perfbase: page: could not make run {id} the baseline '{name}': {e}");
    }
    let history = store
        .baseline_history(&name)
        .unwrap_or_default()
        .into_iter()
        .take(20)
        .map(|(run, set_at)| Baseline {
            run_id: run,
            tool_version: store
                .get(&perfbase_store::RunRef::Id(run))
                .map(|r| r.result.tool.version)
                .unwrap_or_else(|_| "—".into()),
            saved_at: set_at,
        })
        .collect();
    let query = perfbase_store::TrendQuery {
        plan: Some(p.study.plan.clone()),
        metrics: vec!["p99".into(), "rps".into()],
        ..Default::default()
    };
    let trend = crate::series::stored_series(&mut store, &query).unwrap_or_else(|e| {
        errln!("perfbase: page: no history: {e}");
        Vec::new()
    });
    Changelog {
        previous,
        history,
        trend,
    }
}

/// The result as the page shows it: a watched process named by what it runs
/// (`postgres (pid:8339)`), read now, while the services still run.
fn with_process_names(r: &RunResult) -> RunResult {
    let mut shown = r.clone();
    if let Some(m) = shown.monitor.as_mut() {
        for t in m.targets.iter_mut().filter(|t| t.kind == "process") {
            let comm = t.pids.first().and_then(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .ok()
                    .map(|c| c.trim().to_string())
            });
            if let Some(comm) = comm.filter(|c| !c.is_empty() && !t.label.contains(c.as_str())) {
                t.label = format!("{comm} ({})", t.label);
            }
        }
    }
    shown
}
