//! The workload fields of an http:// or https:// target, as written: one request, a mix of
//! them, journeys, or a script. Read by http.rs (a request or a mix), journeys.rs and
//! script.rs.

use super::file::{FeedDef, JourneyDef, StepDef, S};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct Fields {
    // The fields of a single request (not `#[serde(flatten)]`: Spanned does not survive it).
    pub method: Option<S<String>>,
    pub path: Option<S<String>>,
    #[serde(default)]
    pub headers: BTreeMap<String, S<String>>,
    pub body: Option<S<String>>,
    pub body_file: Option<S<String>>,
    pub mix: Option<Vec<RequestDef>>,
    /// Statuses of 400 and above that count as success (a lookup's planned 404).
    pub ok_status: Option<S<Vec<i64>>>,
    /// Journeys: the steps of one journey…
    pub steps: Option<Vec<StepDef>>,
    /// …or several, mixed by weight…
    pub journeys: Option<Vec<JourneyDef>>,
    /// …steps sent once before the load (their captures shared by every iteration)…
    pub setup: Option<Vec<StepDef>>,
    /// …a feeder's rows…
    pub feed: Option<FeedDef>,
    /// …what a failed step does (`stop`, the default, or `continue`)…
    pub on_failure: Option<S<String>>,
    /// …a cookie jar per iteration (default true)…
    pub cookies: Option<S<bool>>,
    /// …and the think time before every step but the first (a step's own wins).
    pub think: Option<S<toml::Value>>,
    /// A script (JavaScript, an ES module) whose function is an iteration…
    pub script: Option<S<String>>,
    /// …the export it calls (default: the default export)…
    pub function: Option<S<String>>,
    /// …and `__ENV` besides the process's environment (`${ENV}` expanded).
    #[serde(default)]
    pub env: BTreeMap<String, S<String>>,
}

impl Fields {
    /// The single request of a workload without a mix.
    pub fn request(&self) -> RequestDef {
        RequestDef {
            method: self.method.clone(),
            path: self.path.clone(),
            headers: self.headers.clone(),
            body: self.body.clone(),
            body_file: self.body_file.clone(),
            weight: None,
            name: None,
        }
    }
}

/// One request: used directly in a workload or as an item of its mix.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RequestDef {
    pub method: Option<S<String>>,
    pub path: Option<S<String>>,
    #[serde(default)]
    pub headers: BTreeMap<String, S<String>>,
    pub body: Option<S<String>>,
    pub body_file: Option<S<String>>,
    pub weight: Option<S<i64>>,
    /// The name of this request in per-endpoint tables (default `METHOD path`).
    pub name: Option<S<String>>,
}
