//! The one-off runtime of steps around the load that talk to a server directly (creating
//! tables, prefilling keys, asking a version), outside the engine's workers.

use crate::exit::{bad_input, AppError};

/// Runs a set-up step on a one-off single-threaded runtime.
pub fn block_on_local<F: std::future::Future>(f: F) -> Result<F::Output, AppError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| bad_input(format!("cannot start a runtime: {e}")))?;
    Ok(tokio::task::LocalSet::new().block_on(&rt, f))
}
