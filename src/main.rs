//! The `perfbase` command: parse the command line, run it, map the outcome to an exit code.

use clap::{error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand, Parser};
use perfbase::{app, cli, exit::Exit};
use std::io::Write as _;

fn main() {
    let code = match cli::Cli::try_parse() {
        Ok(cli) => match app::run(cli) {
            Ok(exit) => exit.code(),
            Err(e) => fail(&e.to_string(), e.exit()),
        },
        // --help and --version are "errors" to clap, and so is a bare `perfbase`, which
        // shows the help: they print as clap renders them.
        Err(e) if !e.use_stderr() || e.kind() == DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            e.exit_code()
        }
        Err(e) => fail(&cli::one_line(&e), Exit::BadInput),
    };
    std::process::exit(code);
}

/// One line on stderr, every URL in it and every secret perfbase sent redacted (a message may
/// quote what the user wrote, or what a server echoed).
/// Not eprintln!: a closed stderr must not turn an error into a panic.
fn fail(msg: &str, exit: Exit) -> i32 {
    use perfbase_core::redact;
    let msg = redact::text(&redact::known(msg));
    let _ = writeln!(std::io::stderr().lock(), "perfbase: error: {msg}");
    exit.code()
}
