//! Exit codes, in one place: 0 success; 1 a threshold or check failed; 2 bad input (flags,
//! plan, files); 3 the target was unusable (nothing succeeded); 130 interrupted.

use thiserror::Error;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success,
    CheckFailed,
    BadInput,
    Unusable,
    Interrupted,
}

impl Exit {
    pub fn code(self) -> i32 {
        match self {
            Exit::Success => 0,
            Exit::CheckFailed => 1,
            Exit::BadInput => 2,
            Exit::Unusable => 3,
            Exit::Interrupted => 130,
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
            AppError::Unusable(_) => Exit::Unusable,
            _ => Exit::BadInput,
        }
    }
}

/// Shorthand for a bad-input error.
pub fn bad_input(msg: impl Into<String>) -> AppError {
    AppError::BadInput(msg.into())
}
