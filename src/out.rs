//! Printing that never panics.
//!
//! `println!` panics when stdout is a closed pipe (`perfbase http … | head -3`, or a test
//! harness that reads the first line and hangs up). A panic there would exit 101 before the
//! result is saved, so every line perfbase prints goes through these macros instead: a write
//! that fails is dropped, and the run goes on to save what it measured.

//!
//! When a result goes to standard output (`--json -`), stdout carries data only: the text
//! that would go there goes to stderr instead ([`give_stdout_to_data`]).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_IS_DATA: AtomicBool = AtomicBool::new(false);
/// An output the user asked for could not be written (a full disk under `--jsonl`): the run
/// goes on and is saved, and exits 4 at its end.
static OUTPUT_FAILED: AtomicBool = AtomicBool::new(false);
/// A write to standard output failed (a full disk, a closed pipe).
static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);

/// Notes that an asked-for output failed (said on stderr where it happened).
pub fn output_failed() {
    OUTPUT_FAILED.store(true, Ordering::Relaxed);
}

/// Whether an asked-for output failed during the run.
pub fn has_output_failed() -> bool {
    OUTPUT_FAILED.load(Ordering::Relaxed)
}

/// From now on, human-readable text goes to stderr, so stdout holds only the data.
pub fn give_stdout_to_data() {
    STDOUT_IS_DATA.store(true, Ordering::Relaxed);
}

/// Writes text to stdout (or stderr once stdout carries data). A failing stream does not
/// stop the command (a run goes on to save what it measured); a failed stdout is noted for
/// [`product_written`].
pub fn print(args: std::fmt::Arguments<'_>) {
    if STDOUT_IS_DATA.load(Ordering::Relaxed) {
        let _ = std::io::stderr().lock().write_fmt(args);
    } else if std::io::stdout().lock().write_fmt(args).is_err() {
        STDOUT_FAILED.store(true, Ordering::Relaxed);
    }
}

/// For a command whose product is what it prints (a report, an imported plan, a manifest, a
/// history): flushes standard output and fails (exit 4) unless all of it was written.
pub fn product_written() -> Result<(), crate::exit::AppError> {
    let flushed = std::io::stdout().lock().flush();
    if STDOUT_FAILED.load(Ordering::Relaxed) || flushed.is_err() {
        let why = flushed.err().map_or_else(String::new, |e| format!(": {e}"));
        return Err(crate::exit::AppError::Failed(anyhow::anyhow!(
            "the output could not be written to standard output{why} (a full disk, a closed pipe?)"
        )));
    }
    Ok(())
}

/// `print!` that ignores a closed or failing stdout.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::print(format_args!($($arg)*))
    };
}

/// `println!` that ignores a closed or failing stdout.
macro_rules! outln {
    () => {
        $crate::out::print(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that ignores a closed or failing stderr.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}
