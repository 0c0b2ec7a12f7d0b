//! `[[checks]]` (exact status counts) and `[monitor]` (services watched beside the load).

use super::context::{Ctx, MAX_REQUESTS};
use super::file::PlanFile;
use super::model::*;
use std::collections::BTreeMap;
use std::time::Duration;

/// Every check of the plan, in order.
pub(super) fn checks(
    cx: &Ctx<'_>,
    raw: &PlanFile,
    workloads: &BTreeMap<String, Workload>,
) -> Result<Vec<Check>, PlanError> {
    let mut checks = Vec::new();
    for (i, c) in raw.checks.iter().enumerate() {
        let field = format!("checks[{i}]");
        let workload = cx.workload_ref(workloads, &c.workload, format!("{field}.workload"))?;
        if !workloads[&workload].suite.is_empty() {
            return Err(cx.err(
                &c.workload,
                format!("{field}.workload"),
                format!("'{workload}' is a suite; a check sends one workload (name one operation)"),
            ));
        }
        let mut expect = BTreeMap::new();
        for (k, v) in c.expect.get_ref() {
            let code: u16 = k
                .parse()
                .ok()
                .filter(|c| (100..=599).contains(c))
                .ok_or_else(|| {
                    cx.err(
                        &c.expect,
                        format!("{field}.expect"),
                        format!("'{k}' is not an HTTP status code (100–599)"),
                    )
                })?;
            if *v < 0 {
                return Err(cx.err(
                    &c.expect,
                    format!("{field}.expect.{k}"),
                    "counts must be 0 or more",
                ));
            }
            expect.insert(code, *v as u64);
        }
        let requests = cx.count(
            &c.requests,
            &format!("{field}.requests"),
            MAX_REQUESTS,
            "requests a check may send",
        )?;
        let total: u64 = expect.values().sum();
        if total != requests {
            return Err(cx.err(
                &c.expect,
                format!("{field}.expect"),
                format!("the expected counts add up to {total}, but requests = {requests}"),
            ));
        }
        checks.push(Check {
            name: c.name.get_ref().clone(),
            workload,
            requests,
            connections: match &c.connections {
                Some(n) => cx.positive(n, &format!("{field}.connections"))?,
                None => 1,
            },
            expect,
        });
    }
    Ok(checks)
}

/// The services to watch: `[monitor]`, or nothing.
pub(super) fn monitor(
    cx: &Ctx<'_>,
    raw: &PlanFile,
) -> Result<crate::monitoring::MonitorOptions, PlanError> {
    Ok(match &raw.monitor {
        Some(m) => {
            // `pid:${PG_PID}`: the services' pids come from the environment, as URLs do.
            let mut selectors = Vec::new();
            for t in &m.targets {
                let text = cx.env(t, "monitor.targets")?;
                text.parse::<perfbase_monitor::Selector>()
                    .map_err(|e| cx.err(t, "monitor.targets", e.to_string()))?;
                selectors.push(text);
            }
            crate::monitoring::MonitorOptions {
                selectors,
                idle: match &m.idle {
                    Some(d) => cx.duration(d, "monitor.idle")?,
                    None => crate::monitoring::DEFAULT_IDLE,
                },
                interval: match &m.interval {
                    Some(d) => cx.positive_duration(d, "monitor.interval")?,
                    None => Duration::from_secs(1),
                },
            }
        }
        None => crate::monitoring::MonitorOptions {
            selectors: Vec::new(),
            idle: Duration::ZERO,
            interval: Duration::from_secs(1),
        },
    })
}
