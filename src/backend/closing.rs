//! Closing lines more than one protocol says: how many operations found nothing.

use perfbase_core::result::RunResult;
use serde_json::Value;
use std::collections::BTreeMap;

/// How many operations found nothing (a Redis GET of a missing key, a MongoDB find, update or
/// delete that matched no document, the drivers' `misses` extra): they count as successes,
/// so the count is said here (a run against an empty keyspace reads 100 % success and 100 %
/// misses). `what` opens the line and its parenthesis. Empty when nothing missed.
pub fn misses_line(
    extras: &[BTreeMap<String, Value>],
    result: &RunResult,
    single: bool,
    what: &str,
) -> String {
    let misses: u64 = extras
        .iter()
        .filter_map(|e| e.get("misses").and_then(Value::as_u64))
        .sum();
    if misses == 0 {
        return String::new();
    }
    // In a suite they are one operation among others: the count alone is said.
    let share = if single {
        format!(
            " of {} ({:.2} %)",
            perfbase_report::thousands(result.measurement.requests),
            100.0 * misses as f64 / result.measurement.requests.max(1) as f64
        )
    } else {
        String::new()
    };
    format!(
        "  {what}, counted as successes): {}{share}\n",
        perfbase_report::thousands(misses)
    )
}
