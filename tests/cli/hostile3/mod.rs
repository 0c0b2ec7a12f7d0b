//! Hostile input, round 3 (issue 47): each case a minimal reproduction that failed before its
//! fix. Other cases of the round sit beside the features they test (agents.rs: a result
//! merged with itself; trend.rs: a gate that judged nothing; the HTTP reader's and
//! `Outcome::http`'s unit tests: a status outside 100–599).

mod failures;
mod files;
mod outputs;
mod rebinding;
mod secrets;
mod terminal;
