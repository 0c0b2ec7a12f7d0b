//! perfbase-report: renders results for people and machines. Each format is one module with a
//! `render` function over [`perfbase_core::result::RunResult`] (and a plan's
//! [`perfbase_analysis::study::Study`]); reports never see drivers or the engine, only the
//! result contract.

pub mod closing;
pub mod compare;
pub mod csv;
pub mod hlog;
pub mod html;
mod html_versus;
pub mod journey_tables;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod monitor;
pub mod page;
pub mod run_tables;
pub mod study_tables;
pub mod study_text;
pub mod suite;
mod svg;
pub mod table;
pub mod terminal;
pub mod trend;
pub mod ui;

pub use perfbase_core::units::thousands;

/// `123456.78` → `123,456.8` (one decimal).
pub fn thousands_f(v: f64) -> String {
    let tenths = (v * 10.0).round().max(0.0) as u64;
    format!("{}.{}", thousands(tenths / 10), tenths % 10)
}

/// A figure in a unit perfbase does not know (a script metric's): thousands grouped, up to
/// three decimals, its sign kept.
pub fn figure(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let sign = if v < 0.0 { "-" } else { "" };
    let thousandths = (v.abs() * 1000.0).round() as u64;
    let (whole, frac) = (thousands(thousandths / 1000), thousandths % 1000);
    if frac == 0 {
        format!("{sign}{whole}")
    } else {
        let frac = format!("{frac:03}");
        format!("{sign}{whole}.{}", frac.trim_end_matches('0'))
    }
}

/// Status counts as `200: 9,000, 429: 10` (`none` for operations without a status).
pub fn status_text(status: &std::collections::BTreeMap<String, u64>) -> String {
    if status.is_empty() {
        return "-".into();
    }
    status
        .iter()
        .map(|(k, v)| {
            let k = if k == "0" { "none" } else { k };
            format!("{k}: {}", thousands(*v))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The figures of each endpoint of a plan scenario, per step, repetitions merged: (the step's
/// name, endpoints). Empty when the scenario's load was not a mix.
pub fn scenario_endpoints(
    r: &perfbase_core::result::RunResult,
    s: &perfbase_analysis::study::ScenarioStudy,
) -> Vec<(String, Vec<perfbase_core::result::Endpoint>)> {
    let scenario = s.name.as_str();
    let mut steps: std::collections::BTreeMap<u32, Vec<&perfbase_core::result::Measurement>> =
        Default::default();
    for p in &r.phases {
        if p.scenario.as_deref() == Some(scenario) && !p.measurement.endpoints.is_empty() {
            steps
                .entry(p.step.unwrap_or(0))
                .or_default()
                .push(&p.measurement);
        }
    }
    steps
        .into_iter()
        .map(|(step, parts)| {
            let endpoints = if parts.len() == 1 {
                parts[0].endpoints.clone()
            } else {
                perfbase_core::merge::merge_measurements(&parts).endpoints
            };
            let name = s
                .steps
                .get(step as usize)
                .map_or_else(|| step.to_string(), |row| row.name.clone());
            (name, endpoints)
        })
        .collect()
}

/// Bytes in binary units: `12.3 MiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Where a merged run's agents ran, by segment: `0/2 on node-a (pod p-0, 2 cores), 1/2 on
/// node-b (pod p-1, 2 cores)`; None for a run that is no merge of agents.
pub fn agents_text(env: &perfbase_core::result::Env) -> Option<String> {
    let each: Vec<String> = env
        .agents
        .iter()
        .map(|a| {
            let pod = if a.hostname != a.node && !a.hostname.is_empty() {
                format!("pod {}, ", a.hostname)
            } else {
                String::new()
            };
            let s = if a.cores == 1 { "" } else { "s" };
            format!("{} on {} ({pod}{} core{s})", a.segment, a.node, a.cores)
        })
        .collect();
    (!each.is_empty()).then(|| each.join(", "))
}

/// Where a merged run's agents ran, why a run stopped early, and the agents a merged run lost
/// (so no step of it is whole).
pub(crate) fn stop_lines(out: &mut String, r: &perfbase_core::result::RunResult) {
    use std::fmt::Write;
    if let Some(agents) = crate::agents_text(&r.env) {
        let _ = writeln!(out, "  Agents: {agents}");
    }
    if let Some(reason) = &r.stop_reason {
        let _ = writeln!(out, "  Stopped: {reason}");
    }
    if !r.lost_segments.is_empty() {
        let _ = writeln!(
            out,
            "  LOST AGENTS: segment {} gave no result; no step is whole",
            r.lost_segments.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn agents() {
        use perfbase_core::result::{AgentEnv, Env};
        let agent = |segment: &str, node: &str, hostname: &str, cores| AgentEnv {
            segment: segment.into(),
            node: node.into(),
            hostname: hostname.into(),
            cores,
        };
        let mut env = Env::default();
        assert_eq!(super::agents_text(&env), None);
        env.agents = vec![
            agent("0/2", "node-a", "p-0", 2),
            agent("1/2", "bench", "bench", 1),
        ];
        assert_eq!(
            super::agents_text(&env).unwrap(),
            "0/2 on node-a (pod p-0, 2 cores), 1/2 on bench (1 core)"
        );
    }

    #[test]
    fn formats() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(1234567), "1,234,567");
        assert_eq!(super::thousands(100), "100");
        assert_eq!(super::thousands_f(123456.78), "123,456.8");
        assert_eq!(super::bytes(512), "512 B");
        assert_eq!(super::bytes(3 * 1024 * 1024 / 2), "1.5 MiB");
    }
}
