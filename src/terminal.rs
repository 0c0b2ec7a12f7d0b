//! Terminal output shared by runs and the commands that read stored runs: the monitor's
//! table, and a suite's table of operations.

use perfbase_core::result::RunResult;

/// The monitor's table (services watched) or its warnings (perfbase alone).
pub fn print_monitor(result: &RunResult) {
    if let Some(report) = &result.monitor {
        out!(
            "{}",
            crate::monitoring::render(report, report.targets.len() > 1)
        );
    }
}

/// The suite table: one row per operation, then each operation's error samples, then the
/// monitor's table.
pub fn print_suite(result: &RunResult, title: &str) {
    out!("{}", perfbase_report::suite::render_suite(result, title));
    print_monitor(result);
}
