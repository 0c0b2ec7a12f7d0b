//! Helpers shared by the driver tests that need a real server from scripts/services.sh.

use std::future::Future;

/// The service's URL from `var`, or `None` (with a note) when it is not set — unless
/// `PERFBASE_REQUIRE_SERVICES=1`, which turns a missing service into a failure.
pub fn service_url(var: &str, service: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            if std::env::var("PERFBASE_REQUIRE_SERVICES").as_deref() == Ok("1") {
                panic!("{var} is not set: run eval \"$(scripts/services.sh up {service})\"");
            }
            eprintln!("note: {var} is not set; skipping the {service} test");
            None
        }
    }
}

/// Runs `f` on a current-thread runtime inside a LocalSet, as the engine's workers do.
pub fn local<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&rt, f)
}
