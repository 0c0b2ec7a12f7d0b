//! What a phase of a run is for ([`PhaseKind`]): the one place its name says it, so the
//! runner and the monitor name phases, and the page and the noise check read them, alike.

/// What a phase is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseKind {
    /// Before any load: the monitor's baseline of the services.
    Idle,
    /// Load not measured, before a scenario's first step.
    Warmup,
    /// A measured step.
    Measure,
    /// No load between steps, for the services to settle.
    Cooldown,
}

/// The idle baseline's name.
const IDLE: &str = "idle";
/// A command's warm-up (a plan's is `SCENARIO warm-up`).
const WARMUP: &str = "warmup";
const WARM_UP: &str = " warm-up";
const COOL_DOWN: &str = "cool-down";

impl PhaseKind {
    /// The kind a phase's name says (a step's name is any other).
    pub fn of(name: &str) -> PhaseKind {
        if name == IDLE {
            PhaseKind::Idle
        } else if name == WARMUP || name.ends_with(WARM_UP) {
            PhaseKind::Warmup
        } else if name.ends_with(COOL_DOWN) {
            PhaseKind::Cooldown
        } else {
            PhaseKind::Measure
        }
    }

    /// The name of a phase of this kind in `scenario` (a command's runs have none); a
    /// measured step is named by its load, not here.
    pub fn name(self, scenario: Option<&str>) -> String {
        match (self, scenario) {
            (PhaseKind::Idle, _) => IDLE.into(),
            (PhaseKind::Warmup, None) => WARMUP.into(),
            (PhaseKind::Warmup, Some(s)) => format!("{s}{WARM_UP}"),
            (PhaseKind::Cooldown, None) => COOL_DOWN.into(),
            (PhaseKind::Cooldown, Some(s)) => format!("{s} {COOL_DOWN}"),
            (PhaseKind::Measure, s) => s.unwrap_or("measure").into(),
        }
    }

    /// Whether load runs in it (what a page's "under load" figures are over).
    pub fn under_load(self) -> bool {
        matches!(self, PhaseKind::Warmup | PhaseKind::Measure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_made_for_a_kind_reads_back_as_that_kind() {
        for kind in [PhaseKind::Idle, PhaseKind::Warmup, PhaseKind::Cooldown] {
            for scenario in [None, Some("api sweep")] {
                assert_eq!(PhaseKind::of(&kind.name(scenario)), kind);
            }
        }
        assert_eq!(PhaseKind::of("step 2 rep 1"), PhaseKind::Measure);
        assert!(!PhaseKind::Idle.under_load() && PhaseKind::Warmup.under_load());
    }
}
