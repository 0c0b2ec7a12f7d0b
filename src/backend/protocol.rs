//! What every protocol module answers ([`Target`]), and the one way a driver meets the
//! engine ([`drive`]): set-up first, the run, then the driver's clean-up whatever happened.

use super::setup::block_on_local;
use super::Side;
use crate::exit::{bad_input, AppError};
use anyhow::Context as _;
use perfbase_core::closing::Closing;
use perfbase_core::result::RunResult;
use perfbase_core::{redact, Driver};
use perfbase_engine::{EngineConfig, Observer, PhaseOutcome, PhaseSpec};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Default cap on requests in flight in the open model over HTTP.
pub const DEFAULT_MAX_INFLIGHT: u64 = 1000;
/// The in-flight cap of open-model runs on databases and brokers, where every request in
/// flight holds a connection of its own: PostgreSQL allows 100 connections by default, and a
/// burst of 1000 AMQP connections ran a RabbitMQ node out of file descriptors.
pub const BACKEND_MAX_INFLIGHT: u64 = 64;

/// One protocol's knowledge, in its own module. Every method is required unless a protocol
/// truly has nothing to say (closing lines), so a new protocol is asked each question by the
/// compiler.
pub trait Target {
    /// The protocol results carry (`http`, `postgres`, `redis`…).
    fn name(&self) -> &'static str;
    /// The kind of service it loads, as people name it (`PostgreSQL`, `API (HTTP)`): what a
    /// baselines page groups its scenarios by unless a scenario names its section.
    fn service_kind(&self) -> &'static str;
    /// Closed-model connections without -c: what the protocol's usual tool starts with.
    fn default_connections(&self) -> u64;
    /// The open model's cap on requests in flight without --max-inflight.
    fn default_max_inflight(&self) -> u64;
    /// Drops the set-up (tables, prefill, `--init`) for a suite's later operations.
    fn skip_setup(&mut self);
    /// Whether consumers run apart from the engine's sessions (AMQP's stream mode).
    fn streams(&self) -> bool {
        false
    }
    /// Builds the driver and drops it: a bad URL or option is an error before any load.
    fn validate(&self) -> Result<(), String>;
    /// Set-up, then the engine's run with the protocol's driver.
    fn run(&self, args: RunArgs<'_>) -> Result<Ran, AppError>;
    /// Its settings for a result's `config.protocol` (secrets redacted).
    fn settings(&self) -> BTreeMap<String, Value>;
    /// The URL it loads (with its password: show it through `redact::url`).
    fn server_url(&self) -> String;
    /// Product and version as the server reports them, or why not.
    fn server_version(&self) -> Result<String, String>;
    /// A command's closing figures after its result table.
    fn closing(
        &self,
        extras: &[BTreeMap<String, Value>],
        result: &RunResult,
        single: bool,
    ) -> Vec<Closing> {
        let _ = (extras, result, single);
        Vec::new()
    }
    /// A plan scenario's closing blocks in report.md, on the terminal and on the page.
    fn closing_blocks(&self, scenario: &str, side: &Side, result: &RunResult) -> Vec<Closing> {
        let _ = (scenario, side, result);
        Vec::new()
    }
}

/// What a run gets from the study.
pub struct RunArgs<'a> {
    /// Opens every input error (the workload's name).
    pub context: &'a str,
    pub cfg: &'a EngineConfig,
    pub specs: &'a [PhaseSpec],
    pub interrupt: Arc<AtomicBool>,
    pub observer: &'a mut dyn Observer,
}

impl RunArgs<'_> {
    /// An input error of this workload: `what` failed with `e`.
    pub fn bad(&self, what: &str, e: impl std::fmt::Display) -> AppError {
        bad_input(format!("{}{what}{e}", self.context))
    }

    /// The run with the protocol's `driver`, or its build error as this workload's.
    pub fn drive<D: Driver + Extras, E: std::fmt::Display>(
        self,
        driver: Result<D, E>,
    ) -> Result<Ran, AppError> {
        match driver {
            Ok(driver) => drive(driver, self),
            Err(e) => Err(self.bad("", e)),
        }
    }
}

/// What a run of the engine with a backend's driver gave.
pub struct Ran {
    pub outcomes: Vec<PhaseOutcome>,
    /// Figures only the driver knows (a cluster's replies per node), for `config.protocol`.
    pub extras: BTreeMap<String, Value>,
    /// A stream's consumer side, measured apart from the publishers.
    pub consumed: Option<perfbase_core::result::Measurement>,
}

/// What a driver does around the engine's run beyond the `Driver` trait: set-up it needs
/// first, and figures only it knows afterwards. Nothing, for most.
pub trait Extras {
    fn before(&self) -> Result<(), AppError> {
        Ok(())
    }
    fn extras(&self) -> BTreeMap<String, Value> {
        BTreeMap::new()
    }
}

/// Runs the engine with `driver` (built by the protocol, a build error already said), and
/// cleans up whether or not the engine ran: the driver may have made server state.
fn drive<D: Driver + Extras>(driver: D, args: RunArgs<'_>) -> Result<Ran, AppError> {
    let driver = Arc::new(driver);
    driver.before()?;
    let outcomes = perfbase_engine::run(
        driver.clone(),
        args.cfg,
        args.specs,
        args.interrupt,
        args.observer,
    );
    match block_on_local(driver.finish()) {
        Ok(Err(e)) => errln!("perfbase: warning: {}", redact::url(&e)),
        Err(e) => errln!("perfbase: warning: {e}"),
        Ok(Ok(())) => {}
    }
    let outcomes = outcomes.context("the load engine could not start")?;
    Ok(Ran {
        outcomes,
        extras: driver.extras(),
        consumed: None,
    })
}

/// The values of an extras key over every engine run, as numbers.
pub fn extra_values<'a>(
    extras: &'a [BTreeMap<String, Value>],
    key: &'a str,
) -> impl Iterator<Item = u64> + 'a {
    extras
        .iter()
        .filter_map(move |e| e.get(key).and_then(Value::as_u64))
}

/// Headers as `config.protocol` shows them: `Name: value` lines, secrets redacted.
pub fn header_lines(headers: &[(String, String)]) -> Vec<Value> {
    headers
        .iter()
        .map(|(k, v)| redact::header_line(k, v).into())
        .collect()
}

/// What a server says it is, asked by `question` on a one-off runtime, or why not.
pub fn ask_version<E: std::fmt::Display>(
    question: impl std::future::Future<Output = Result<String, E>>,
) -> Result<String, String> {
    block_on_local(question)
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

/// A workload against a message broker: its URL and its protocol's options.
#[derive(Debug, Clone)]
pub struct BrokerTarget<O> {
    /// With the password from the environment; never shown.
    pub url: String,
    pub options: O,
}
