//! Unit tests of plan files: parsing, validation and expansion, one file per topic:
//!
//! - `expansion`: whole plans expanded into scenarios and steps, suites, rankings and the page,
//!   and errors naming their line and field;
//! - `targets`: what each kind of target takes (Redis, HTTPS, HTTP/2, brokers, Vault);
//! - `corpora`: CSV and generated corpora;
//! - `limits`: numbers, corpora and input files too large to run;
//! - `matrices`: `[[matrices]]` and the scenarios' `labels` and `app` they table;
//! - `secrets`: values from the environment, kept out of labels, headers and URLs.

use super::*;

mod corpora;
mod expansion;
mod limits;
mod matrices;
mod secrets;
mod targets;

fn plan(text: &str) -> Result<Plan, PlanError> {
    parse(text, "p.toml", Path::new("/nonexistent"), None)
}

const BASE: &str = r#"
[targets.api]
url = "http://127.0.0.1:8080"

[corpora.keys]
generate = { pattern = "key-{n}", count = 100 }
misses = 0.5

[workloads.lookup]
target = "api"
path = "/lookup/{{keys}}"
"#;

/// The request templates of an HTTP workload.
fn specs(w: &Workload) -> &[perfbase_drivers::http::RequestSpec] {
    match &w.http().expect("an HTTP workload").requests {
        crate::backend::http::HttpRequests::Mix { specs, .. } => specs,
        other => panic!("a plan's mix, not {other:?}"),
    }
}

/// The HTTP options of an HTTP workload.
fn http_options(w: &Workload) -> &perfbase_drivers::http::HttpOptions {
    &w.http().expect("an HTTP workload").options
}
