//! How a stored run ended, in one word the store keeps beside it so the runs can be filtered
//! without reading their results: the same order of precedence as the exit code's rule
//! (interrupted, then a failed threshold or check), with a step that was not a valid
//! measurement of its load named before a run that merely succeeded.

use crate::result::{Measurement, RunResult};

/// A run's outcome, most telling first when several apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    /// Stopped before its end (Ctrl-C, a stop request, abort_on_fail): a partial result.
    Interrupted,
    /// A threshold or an exact check failed.
    Failed,
    /// A step started fewer operations than its rate asked for (its figures are not those of
    /// the load it names), and nothing failed.
    Invalid,
    /// No request (or no iteration of a journey) succeeded.
    Unusable,
    Passed,
}

impl RunOutcome {
    /// Every outcome, in the order above.
    pub const ALL: [RunOutcome; 5] = [
        RunOutcome::Interrupted,
        RunOutcome::Failed,
        RunOutcome::Invalid,
        RunOutcome::Unusable,
        RunOutcome::Passed,
    ];

    /// The outcome of `result`.
    pub fn of(result: &RunResult) -> RunOutcome {
        let study = result.study.as_ref();
        let invalid = study.is_some_and(|s| {
            s.scenarios
                .iter()
                .any(|sc| sc.steps.iter().any(|st| st.invalid.is_some()))
        });
        if result.interrupted {
            RunOutcome::Interrupted
        } else if study.is_some_and(|s| !s.passed) {
            RunOutcome::Failed
        } else if invalid {
            RunOutcome::Invalid
        } else if unusable(&result.measurement) {
            RunOutcome::Unusable
        } else {
            RunOutcome::Passed
        }
    }

    /// The word stored and shown: `interrupted`, `failed`, `invalid`, `unusable`, `passed`.
    pub fn name(self) -> &'static str {
        match self {
            RunOutcome::Interrupted => "interrupted",
            RunOutcome::Failed => "failed",
            RunOutcome::Invalid => "invalid",
            RunOutcome::Unusable => "unusable",
            RunOutcome::Passed => "passed",
        }
    }

    pub fn from_name(name: &str) -> Option<RunOutcome> {
        RunOutcome::ALL.into_iter().find(|o| o.name() == name)
    }
}

/// No request succeeded, or a journey or script none of whose iterations did (issue 47:
/// `on_failure = "continue"` lets single requests succeed in failed iterations).
pub fn unusable(m: &Measurement) -> bool {
    let ok = m.requests.saturating_sub(m.errors.values().sum::<u64>());
    let no_iteration = m
        .iterations
        .as_ref()
        .is_some_and(|it| it.count > 0 && it.ok == 0);
    ok == 0 || no_iteration
}
