//! The `perfbase` command: parse the command line, run it, map the outcome to an exit code.

use clap::Parser;
use perfbase::{app, cli::Cli};

fn main() {
    let cli = Cli::parse();
    let code = match app::run(cli) {
        Ok(exit) => exit.code(),
        Err(e) => {
            // Not eprintln!: a closed stderr must not turn an error into a panic.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr().lock(), "perfbase: error: {e}");
            e.exit().code()
        }
    };
    std::process::exit(code);
}
