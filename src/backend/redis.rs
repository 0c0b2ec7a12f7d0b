//! Redis workloads, standalone or cluster: one command (or the suite) over a keyspace, with
//! its prefill, the slot map a cluster needs first, and replies per node afterwards.

use super::closing::misses;
use super::protocol::{ask_version, Extras, Target, Ran, RunArgs, BACKEND_MAX_INFLIGHT};
use super::setup::block_on_local;
use super::Side;
use crate::exit::{bad_input, AppError};
use perfbase_core::closing::{Closing, Part};
use perfbase_core::result::RunResult;
use perfbase_drivers::redis::{self, RedisDriver};
use perfbase_drivers::Operation;
use serde_json::Value;
use std::collections::BTreeMap;

/// A workload against Redis (standalone or cluster).
#[derive(Debug, Clone)]
pub struct RedisTarget {
    /// With the password from the environment; never shown.
    pub url: String,
    pub op: redis::RedisOp,
    pub options: redis::RedisOptions,
    /// SET every key of the keyspace once before the scenario.
    pub prefill: bool,
}

impl RedisTarget {
    fn driver(&self) -> Result<RedisDriver, String> {
        RedisDriver::new(&self.url, self.op, self.options.clone()).map_err(|e| e.to_string())
    }

    fn is_cluster(&self) -> bool {
        self.url.starts_with("redis+cluster://")
    }

    /// SETs every key of the keyspace once, so GETs hit.
    fn prefill(&self) -> Result<(), AppError> {
        let n = block_on_local(redis::prefill(&self.url, &self.options))?
            .map_err(|e| bad_input(e.to_string()))?;
        errln!(
            "perfbase: prefilled {} keys of {} bytes",
            perfbase_core::units::thousands(n),
            self.options.value_size
        );
        Ok(())
    }
}

impl Target for RedisTarget {
    fn name(&self) -> &'static str {
        "redis"
    }

    fn service_kind(&self) -> &'static str {
        "Redis"
    }

    /// redis-benchmark's 50 clients.
    fn default_connections(&self) -> u64 {
        50
    }

    fn default_max_inflight(&self) -> u64 {
        BACKEND_MAX_INFLIGHT
    }

    fn skip_setup(&mut self) {
        self.prefill = false;
    }

    fn validate(&self) -> Result<(), String> {
        self.driver().map(drop)
    }

    fn run(&self, args: RunArgs<'_>) -> Result<Ran, AppError> {
        if self.prefill {
            self.prefill().map_err(|e| args.bad("prefill: ", e))?;
        }
        args.drive(self.driver())
    }

    fn settings(&self) -> BTreeMap<String, Value> {
        let mut m = BTreeMap::new();
        m.insert("workload".into(), self.op.name().into());
        m.insert("keyspace".into(), self.options.keyspace.into());
        m.insert("value_size".into(), self.options.value_size.into());
        m.insert("pipeline".into(), self.options.pipeline.into());
        m
    }

    fn server_url(&self) -> String {
        self.url.clone()
    }

    fn server_version(&self) -> Result<String, String> {
        ask_version(redis::server_version(&self.url))
    }

    /// A cluster's redirects and replies per node, then the GETs that found no key.
    fn closing(
        &self,
        extras: &[BTreeMap<String, Value>],
        result: &RunResult,
        single: bool,
    ) -> Vec<Closing> {
        let mut closing = Vec::new();
        if self.is_cluster() {
            closing.extend(cluster(extras));
        }
        closing.extend(misses(extras, result, single, "GET misses (no such key"));
        closing
    }

    fn closing_blocks(&self, _scenario: &str, side: &Side, _result: &RunResult) -> Vec<Closing> {
        if !self.is_cluster() {
            return Vec::new();
        }
        let body = cluster(std::slice::from_ref(&side.extras));
        vec![Closing::Block { title: None, body }]
    }
}

impl Extras for RedisDriver {
    /// Per-node figures need the slot map first. A cluster that does not answer now is left
    /// to the run, which counts its connect errors.
    fn before(&self) -> Result<(), AppError> {
        if self.is_cluster() {
            let _ = block_on_local(self.map_nodes())?;
        }
        Ok(())
    }

    /// GETs that found no key; per node and cluster-wide: replies per node, redirects
    /// followed.
    fn extras(&self) -> BTreeMap<String, Value> {
        let mut m = BTreeMap::new();
        if self.misses() > 0 {
            m.insert("misses".into(), self.misses().into());
        }
        if self.is_cluster() {
            let nodes: serde_json::Map<String, Value> = self
                .per_node()
                .into_iter()
                .map(|(a, n)| (a.to_string(), n.into()))
                .collect();
            let (moved, ask) = self.redirects();
            m.insert("cluster_nodes".into(), nodes.into());
            m.insert(
                "redirects".into(),
                serde_json::json!({ "moved": moved, "ask": ask }),
            );
        }
        m
    }
}

/// Redirects followed and replies per node, over every run of a Redis Cluster.
fn cluster(extras: &[BTreeMap<String, Value>]) -> Vec<Closing> {
    let (mut moved, mut ask) = (0, 0);
    let mut per_node: BTreeMap<String, u64> = BTreeMap::new();
    for e in extras {
        if let Some(r) = e.get("redirects") {
            moved += r["moved"].as_u64().unwrap_or(0);
            ask += r["ask"].as_u64().unwrap_or(0);
        }
        if let Some(Value::Object(nodes)) = e.get("cluster_nodes") {
            for (addr, n) in nodes {
                *per_node.entry(addr.clone()).or_insert(0) += n.as_u64().unwrap_or(0);
            }
        }
    }
    let mut nodes: Vec<Part> = vec!["replies per node: ".into()];
    for (i, (addr, n)) in per_node.into_iter().enumerate() {
        let sep = if i > 0 { ", " } else { "" };
        nodes.extend([format!("{sep}{addr} ").into(), n.into()]);
    }
    vec![
        Closing::Detail(vec![
            "cluster redirects followed: MOVED ".into(),
            Part::Fixed(moved as f64, 0),
            ", ASK ".into(),
            Part::Fixed(ask as f64, 0),
        ]),
        Closing::Detail(nodes),
    ]
}
