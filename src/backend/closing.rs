//! Closing figures more than one protocol gives: how many operations found nothing.

use perfbase_core::closing::{Closing, Part};
use perfbase_core::result::RunResult;
use serde_json::Value;
use std::collections::BTreeMap;

/// How many operations found nothing (a Redis GET of a missing key, a MongoDB find, update or
/// delete that matched no document, the drivers' `misses` extra): they count as successes,
/// so the count is said here (a run against an empty keyspace reads 100 % success and 100 %
/// misses). `what` opens the line and its parenthesis. None when nothing missed.
pub fn misses(
    extras: &[BTreeMap<String, Value>],
    result: &RunResult,
    single: bool,
    what: &str,
) -> Vec<Closing> {
    let misses: u64 = extras
        .iter()
        .filter_map(|e| e.get("misses").and_then(Value::as_u64))
        .sum();
    if misses == 0 {
        return Vec::new();
    }
    let mut parts: Vec<Part> = vec![
        format!("{what}, counted as successes): ").into(),
        misses.into(),
    ];
    // In a suite they are one operation among others: the count alone is said.
    if single {
        let requests = result.measurement.requests;
        parts.extend([
            " of ".into(),
            requests.into(),
            " (".into(),
            Part::Fixed(100.0 * misses as f64 / requests.max(1) as f64, 2),
            " %)".into(),
        ]);
    }
    vec![Closing::Detail(parts)]
}
