//! Ctrl-C (SIGINT) and SIGTERM: the first one sets a flag that the engine polls, so the run
//! stops within a second and its partial result is printed and written; a second one exits at
//! once with code 130. A stop asked for through the store (`perfbase agent`) sets the same flag,
//! with its reason, which the result then carries.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
/// Why the run was stopped, when it was not a signal to this process.
static REASON: OnceLock<String> = OnceLock::new();

fn flag() -> Arc<AtomicBool> {
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
        .clone()
}

/// Stops the run as a first Ctrl-C would (the partial result is saved, exit 130), saying why.
pub fn stop(reason: String) {
    let _ = REASON.set(reason);
    flag().store(true, Ordering::SeqCst);
}

/// The reason given to [`stop`], if it was called.
pub fn reason() -> Option<String> {
    REASON.get().cloned()
}

extern "C" fn on_signal(_: libc::c_int) {
    // Only async-signal-safe work here: an atomic swap, and _exit on the second signal.
    if let Some(flag) = FLAG.get() {
        if flag.swap(true, Ordering::SeqCst) {
            // SAFETY: _exit is async-signal-safe and takes no pointers.
            unsafe { libc::_exit(130) };
        }
    }
}

/// Installs the handlers (once) and returns the flag they set.
pub fn install() -> Arc<AtomicBool> {
    let flag = flag();
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: installing a handler that only performs async-signal-safe operations.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
    flag
}
