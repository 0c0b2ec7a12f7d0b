//! Exit codes, in one place: 0 success; 1 a threshold or check failed; 2 bad input (flags,
//! plan, files); 3 the target was unusable (nothing succeeded: no request, or no iteration
//! of a journey); 4 perfbase itself failed (a file it could not write, an output it could not
//! finish, threads it could not start); 130 interrupted.

use perfbase_core::result::RunResult;
use thiserror::Error;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success,
    CheckFailed,
    BadInput,
    Unusable,
    Failed,
    Interrupted,
}

impl Exit {
    pub fn code(self) -> i32 {
        match self {
            Exit::Success => 0,
            Exit::CheckFailed => 1,
            Exit::BadInput => 2,
            Exit::Unusable => 3,
            Exit::Failed => 4,
            Exit::Interrupted => 130,
        }
    }

    /// The one rule for every run: interrupted wins (the result is partial), then a failed
    /// threshold or check (`passed` false), then a target on which no request succeeded, or
    /// no iteration of a journey or script.
    pub fn of(result: &RunResult, passed: bool) -> Exit {
        if result.interrupted {
            Exit::Interrupted
        } else if !passed {
            Exit::CheckFailed
        } else if perfbase_core::run_outcome::unusable(&result.measurement) {
            Exit::Unusable
        } else {
            Exit::Success
        }
    }

    /// What the end of a run says about this exit, if anything.
    pub fn explain(self) -> Option<&'static str> {
        match self {
            Exit::Interrupted => {
                Some("interrupted; the partial result above covers what was measured")
            }
            Exit::CheckFailed => Some("a threshold or check failed (see above)"),
            Exit::Unusable => {
                Some("no request succeeded: the target was unusable (see the errors above)")
            }
            _ => None,
        }
    }
}

/// A command that could not run, with the remedy in its message.
#[derive(Debug, Error)]
pub enum AppError {
    /// A flag, URL or file is wrong: the message names it.
    #[error("{0}")]
    BadInput(String),
    /// Something outside perfbase failed (writing a file, starting threads).
    #[error("{0:#}")]
    Failed(#[from] anyhow::Error),
    /// The target could not be used at all before any load (e.g. the consumers of a
    /// stream could not subscribe): exit 3, as when nothing succeeded.
    #[error("{0}")]
    Unusable(String),
}

impl AppError {
    pub fn exit(&self) -> Exit {
        match self {
            AppError::BadInput(_) => Exit::BadInput,
            AppError::Failed(_) => Exit::Failed,
            AppError::Unusable(_) => Exit::Unusable,
        }
    }
}

/// Shorthand for a bad-input error.
pub fn bad_input(msg: impl Into<String>) -> AppError {
    AppError::BadInput(msg.into())
}
