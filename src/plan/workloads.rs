//! `[workloads]`: what each workload sends to its target. The target says which protocol the
//! workload is; its table is then read as that protocol's fields (`plan/NAME.rs`, through
//! the list in plan/mod.rs), and what those make becomes the plan's workloads: one, or a
//! suite's one per operation (`NAME/operation`).

use super::context::Ctx;
use super::fields::{At, Made, TargetInfo};
use super::file::PlanFile;
use super::model::*;
use perfbase_drivers::workload::Corpus;
use std::collections::BTreeMap;
use std::sync::Arc;
use toml::de::{DeTable, DeValue};

/// Every workload of the plan, by name.
pub(super) fn workloads(
    cx: &Ctx<'_>,
    raw: &PlanFile,
    targets: &BTreeMap<String, TargetInfo<'_>>,
    corpora: &[Arc<Corpus>],
) -> Result<BTreeMap<String, Workload>, PlanError> {
    let tables = tables(cx)?;
    let mut workloads = BTreeMap::new();
    for (name, w) in &raw.workloads {
        let field = format!("workloads.{name}");
        let target = targets.get(w.target.get_ref()).ok_or_else(|| {
            let known: Vec<&str> = targets.keys().map(|s| s.as_str()).collect();
            cx.err(
                &w.target,
                format!("{field}.target"),
                format!(
                    "no target named '{}' (targets: {})",
                    w.target.get_ref(),
                    known.join(", ")
                ),
            )
        })?;
        // Labels reach results and reports: a `${VAR}` that may hold a secret stays a name.
        let shown_url = cx.shown_url(
            &target.0.url,
            &format!("targets.{}.url", w.target.get_ref()),
        )?;
        let at = At {
            cx,
            name,
            field: &field,
            target_field: &w.target,
            target,
            shown_url: &shown_url,
            corpora,
        };
        let table = tables
            .iter()
            .find(|(k, _)| k.get_ref().as_ref() == name.as_str())
            .map(|(_, v)| v)
            .expect("the first reading found this workload");
        match super::protocols::read_workload(target.1, &at, table)? {
            Made::Workload(one) => {
                workloads.insert(name.clone(), one);
            }
            Made::One(backend, what) => {
                let one = workload(&at, format!("{shown_url} ({what})"), backend);
                workloads.insert(name.clone(), one);
            }
            Made::Suite(ops) => suite(&at, ops, &mut workloads),
        }
    }
    Ok(workloads)
}

/// A workload of `backend` with its label.
fn workload(at: &At<'_>, label: String, backend: Backend) -> Workload {
    Workload {
        name: at.name.to_string(),
        label,
        corpora: at.corpora.to_vec(),
        shown_headers: Vec::new(),
        backend,
        suite: Vec::new(),
    }
}

/// A suite: one workload per operation, `NAME/operation`, and the suite's own naming them in
/// order. Tables, collections and keys are set up once, before the first.
fn suite(at: &At<'_>, ops: Vec<(String, Backend)>, workloads: &mut BTreeMap<String, Workload>) {
    let mut names = Vec::new();
    for (i, (op, backend)) in ops.into_iter().enumerate() {
        let backend = if i > 0 {
            backend.without_setup()
        } else {
            backend
        };
        let op_name = format!("{}/{op}", at.name);
        let mut one = workload(at, format!("{} ({op})", at.shown_url), backend);
        one.name = op_name.clone();
        workloads.insert(op_name.clone(), one);
        names.push(op_name);
    }
    let first = workloads[&names[0]].backend.clone();
    let label = format!("{} (suite of {})", at.shown_url, names.len());
    let mut all = workload(at, label, first);
    all.suite = names;
    workloads.insert(at.name.to_string(), all);
}

/// The `[workloads]` tables as written, with the places of their fields (the first reading
/// has already refused a document that does not parse).
fn tables<'t>(cx: &Ctx<'t>) -> Result<DeTable<'t>, PlanError> {
    let doc = DeTable::parse(cx.text).map_err(|e| cx.err_at(1, "toml", e.message()))?;
    let workloads = doc
        .into_inner()
        .into_iter()
        .find(|(k, _)| k.get_ref().as_ref() == "workloads")
        .map(|(_, v)| v.into_inner());
    Ok(match workloads {
        Some(DeValue::Table(t)) => t,
        _ => DeTable::default(),
    })
}
