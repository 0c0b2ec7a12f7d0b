//! Printing that never panics.
//!
//! `println!` panics when stdout is a closed pipe (`perfbase http … | head -3`, or a test
//! harness that reads the first line and hangs up). A panic there would exit 101 before the
//! result is saved, so every line perfbase prints goes through these macros instead: a write
//! that fails is dropped, and the run goes on to save what it measured.

/// `print!` that ignores a closed or failing stdout.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `println!` that ignores a closed or failing stdout.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `eprintln!` that ignores a closed or failing stderr.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}
