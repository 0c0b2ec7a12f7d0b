//! `[[matrices]]` and the scenario fields they read (`labels`, `app`): a study of several
//! systems under several settings (web servers × SQL drivers, clients × brokers) tabled as one
//! matrix, each row headed by its scenario's labels, with the CPU and memory of the scenario's
//! own process under test beside the figures.

use super::context::Ctx;
use super::file::{self, PlanFile};
use super::model::{MatrixSpec, PlanError, Scenario};
use crate::monitoring::MonitorOptions;

/// The scenario's `labels`, in the order of their names; names and values are shown in the
/// matrix's head and rows, so they are names (printable, no `${`).
pub(super) fn scenario_labels(
    cx: &Ctx<'_>,
    field: &str,
    sd: &file::ScenarioDef,
) -> Result<Vec<(String, String)>, PlanError> {
    let Some(labels) = &sd.labels else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (name, value) in labels.get_ref() {
        let at = format!("{field}.labels.{name}");
        if name.trim().is_empty() || value.get_ref().trim().is_empty() {
            return Err(cx.err(value, at, "a label needs a name and a value"));
        }
        cx.name(&toml::Spanned::new(value.span(), name.clone()), &at)?;
        cx.name(value, &at)?;
        out.push((name.trim().to_string(), value.get_ref().trim().to_string()));
    }
    Ok(out)
}

/// The scenario's `app`: a monitor target (`pid:${APP_PID}`, `cmd:uvicorn`), checked here so a
/// bad one names its line.
pub(super) fn app(
    cx: &Ctx<'_>,
    field: &str,
    sd: &file::ScenarioDef,
) -> Result<Option<String>, PlanError> {
    let Some(a) = &sd.app else {
        return Ok(None);
    };
    let at = format!("{field}.app");
    let text = cx.env(a, &at)?;
    text.parse::<perfbase_monitor::Selector>()
        .map_err(|e| cx.err(a, &at, format!("{e} (app is a monitor target)")))?;
    Ok(Some(text))
}

/// Every scenario's `app` is watched for the whole run, with the plan's `[monitor]` targets
/// (once, however many scenarios name it); without `[monitor]`, with its default idle time.
pub(super) fn watch_apps(monitor: &mut MonitorOptions, scenarios: &[Scenario]) {
    for app in scenarios.iter().filter_map(|s| s.app.as_ref()) {
        if monitor.selectors.is_empty() && monitor.idle.is_zero() {
            monitor.idle = crate::monitoring::DEFAULT_IDLE;
        }
        if !monitor.selectors.contains(app) {
            monitor.selectors.push(app.clone());
        }
    }
}

/// Every matrix of the plan: a name, labels, and scenarios that give every one of them.
pub(super) fn matrices(
    cx: &Ctx<'_>,
    raw: &PlanFile,
    scenarios: &[Scenario],
) -> Result<Vec<MatrixSpec>, PlanError> {
    let mut out: Vec<MatrixSpec> = Vec::new();
    for (i, m) in raw.matrices.iter().enumerate() {
        let field = format!("matrices[{i}]");
        cx.name(&m.name, &format!("{field}.name"))?;
        let name = m.name.get_ref().trim().to_string();
        if name.is_empty() || out.iter().any(|o| o.name == name) {
            return Err(cx.err(
                &m.name,
                format!("{field}.name"),
                "a matrix needs a name of its own (it titles the table)",
            ));
        }
        let mut labels: Vec<String> = Vec::new();
        for l in m.labels.get_ref() {
            let text = l.get_ref().trim().to_string();
            if text.is_empty() || labels.contains(&text) {
                return Err(cx.err(
                    l,
                    format!("{field}.labels"),
                    "labels are the row heads: each once, none empty",
                ));
            }
            labels.push(text);
        }
        if labels.is_empty() {
            return Err(cx.err(
                &m.labels,
                format!("{field}.labels"),
                "name the labels that head the rows, outermost first: labels = [\"web \
                 server\", \"SQL driver\"]",
            ));
        }
        let names = members(cx, &field, m, &labels, scenarios)?;
        out.push(MatrixSpec {
            name,
            labels,
            scenarios: names,
        });
    }
    Ok(out)
}

/// The scenarios of matrix `m`: those it lists, each giving every label, or else every
/// scenario that gives them all. A matrix with none is an error, as a gate that matched
/// nothing is: its table would be silently empty.
fn members(
    cx: &Ctx<'_>,
    field: &str,
    m: &file::MatrixDef,
    labels: &[String],
    scenarios: &[Scenario],
) -> Result<Vec<String>, PlanError> {
    let gives_all = |s: &Scenario| labels.iter().all(|l| s.labels.iter().any(|(n, _)| n == l));
    let names: Vec<String> = match &m.scenarios {
        Some(list) => {
            let mut names = Vec::new();
            for n in list {
                let Some(s) = scenarios.iter().find(|s| &s.name == n.get_ref()) else {
                    return Err(cx.err(
                        n,
                        format!("{field}.scenarios"),
                        format!("no scenario named '{}'", n.get_ref()),
                    ));
                };
                if !gives_all(s) {
                    return Err(cx.err(
                        n,
                        format!("{field}.scenarios"),
                        format!(
                            "scenario '{}' does not give every label of the matrix ({}): add \
                             them to its labels = {{ … }}",
                            s.name,
                            labels.join(", ")
                        ),
                    ));
                }
                names.push(s.name.clone());
            }
            names
        }
        None => scenarios
            .iter()
            .filter(|s| gives_all(s))
            .map(|s| s.name.clone())
            .collect(),
    };
    if names.is_empty() {
        return Err(cx.err(
            &m.name,
            format!("{field}.scenarios"),
            format!(
                "no scenario gives the labels {}: give its scenarios labels = {{ \"{}\" = \
                 \"…\" }}",
                labels.join(", "),
                labels[0]
            ),
        ));
    }
    Ok(names)
}
