//! `[[scenarios.faults]]`: a command run at a set time into each measured run of a scenario,
//! to break something on purpose (kill a cluster's leader, restart a database) while the load
//! goes on; the result's availability then says what a client saw.

use super::context::Ctx;
use super::file::{FaultDef, ScenarioDef};
use super::model::{Fault, PlanError, Step};
use std::time::Duration;

/// The longest a fault's command may take by default before it is killed.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The most faults a scenario may give.
const MAX_FAULTS: usize = 16;

/// The scenario's faults, each due before the end of every step it runs in.
pub(super) fn faults(
    cx: &Ctx<'_>,
    field: &str,
    sd: &ScenarioDef,
    steps: &[Step],
) -> Result<Vec<Fault>, PlanError> {
    if sd.faults.len() > MAX_FAULTS {
        return Err(cx.err(
            &sd.name,
            format!("{field}.faults"),
            format!(
                "{} faults; a scenario may give at most {MAX_FAULTS}",
                sd.faults.len()
            ),
        ));
    }
    sd.faults
        .iter()
        .enumerate()
        .map(|(i, f)| fault(cx, &format!("{field}.faults[{i}]"), f, steps))
        .collect()
}

fn fault(cx: &Ctx<'_>, field: &str, f: &FaultDef, steps: &[Step]) -> Result<Fault, PlanError> {
    let at = cx.duration(&f.at, &format!("{field}.at"))?;
    // A fault due after its step ended would never happen, and the run would say nothing
    // was out: refused, as a gate that matches nothing is.
    if let Some(d) = steps.iter().filter_map(|s| s.duration).min() {
        if at >= d {
            return Err(cx.err(
                &f.at,
                format!("{field}.at"),
                format!(
                    "{} is not before the end of the scenario's shortest step ({}): the fault \
                     would never happen; give an `at` shorter than every step's duration",
                    f.at.get_ref(),
                    perfbase_core::units::format_duration(d)
                ),
            ));
        }
    }
    if f.run.is_empty() {
        return Err(cx.err(
            &f.at,
            format!("{field}.run"),
            "is empty: give the command and its arguments, e.g. run = [\"scripts/services.sh\", \"kill-active\", \"vault_ha\"]",
        ));
    }
    let run = f
        .run
        .iter()
        .map(|a| cx.env(a, &format!("{field}.run")))
        .collect::<Result<Vec<_>, _>>()?;
    let timeout = f
        .timeout
        .as_ref()
        .map(|t| cx.positive_duration(t, &format!("{field}.timeout")))
        .transpose()?
        .unwrap_or(DEFAULT_TIMEOUT);
    Ok(Fault { at, run, timeout })
}
