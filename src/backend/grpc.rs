//! gRPC workloads: one method (any of the four kinds of call) with request messages from a
//! JSON template, on HTTP/2 connections shared `--streams` calls at a time.

use super::protocol::{
    extra_values, header_lines, Extras, Target, Ran, RunArgs, DEFAULT_MAX_INFLIGHT,
};
use crate::exit::AppError;
use perfbase_core::closing::Closing;
use perfbase_core::result::RunResult;
use perfbase_drivers::grpc::{GrpcDriver, GrpcOptions};
use serde_json::Value;
use std::collections::BTreeMap;

/// A workload against a gRPC server.
#[derive(Debug, Clone)]
pub struct GrpcTarget {
    /// grpc://host:port (h2c) or grpcs://host:port (TLS).
    pub url: String,
    pub options: GrpcOptions,
    /// The kind of call the method is (unary, server-streaming…).
    kind: &'static str,
    /// Call 0's request body in bytes.
    request_bytes: usize,
}

impl GrpcTarget {
    /// The workload, its method found and its first request built: a bad URL, schema,
    /// method or message is an error here.
    pub fn new(url: &str, options: GrpcOptions) -> Result<GrpcTarget, String> {
        let driver = GrpcDriver::new(url, options.clone()).map_err(|e| e.to_string())?;
        Ok(GrpcTarget {
            url: url.to_string(),
            kind: driver.method().kind.name(),
            request_bytes: driver.request_bytes(),
            options,
        })
    }

    /// The driver, its call deadline the run's timeout when one is given.
    fn driver(&self, deadline: Option<std::time::Duration>) -> Result<GrpcDriver, String> {
        let mut options = self.options.clone();
        options.deadline = deadline;
        GrpcDriver::new(&self.url, options).map_err(|e| e.to_string())
    }
}

impl Target for GrpcTarget {
    fn name(&self) -> &'static str {
        "grpc"
    }

    fn service_kind(&self) -> &'static str {
        "gRPC"
    }

    /// ghz's default concurrency.
    fn default_connections(&self) -> u64 {
        50
    }

    /// Calls share connections, as HTTP/2's requests do.
    fn default_max_inflight(&self) -> u64 {
        DEFAULT_MAX_INFLIGHT
    }

    /// Nothing is set up on the server.
    fn skip_setup(&mut self) {}

    fn validate(&self) -> Result<(), String> {
        self.driver(None).map(drop)
    }

    fn run(&self, args: RunArgs<'_>) -> Result<Ran, AppError> {
        let deadline = Some(args.cfg.timeout);
        args.drive(self.driver(deadline))
    }

    fn settings(&self) -> BTreeMap<String, Value> {
        let o = &self.options;
        let mut m = BTreeMap::new();
        m.insert("call".into(), o.call.clone().into());
        m.insert("kind".into(), self.kind.into());
        // The JSON itself may hold a secret, so only its size is shown, as HTTP's body's.
        m.insert("request_bytes".into(), self.request_bytes.into());
        if o.messages > 1 {
            m.insert("messages_per_call".into(), o.messages.into());
        }
        m.insert("streams".into(), o.streams.into());
        let protos: Vec<Value> = o
            .protos
            .iter()
            .map(|p| p.display().to_string().into())
            .collect();
        m.insert("protos".into(), protos.into());
        let metadata = header_lines(&o.metadata);
        if !metadata.is_empty() {
            m.insert("metadata".into(), metadata.into());
        }
        m
    }

    fn server_url(&self) -> String {
        self.url.clone()
    }

    /// gRPC has no standard version call: what serves the method is known only by its own
    /// API.
    fn server_version(&self) -> Result<String, String> {
        Err("gRPC has no version call".into())
    }

    fn closing(
        &self,
        extras: &[BTreeMap<String, Value>],
        result: &RunResult,
        single: bool,
    ) -> Vec<Closing> {
        let _ = (result, single);
        let sum = |key: &str| -> u64 { extra_values(extras, key).sum() };
        let (received, sent) = (sum("messages_received"), sum("messages_sent"));
        if received == 0 && sent == 0 {
            return Vec::new();
        }
        vec![Closing::Line(vec![
            "Messages: ".into(),
            received.into(),
            " received, ".into(),
            sent.into(),
            " sent (of calls that completed or failed alike)".into(),
        ])]
    }
}

impl Extras for GrpcDriver {
    /// The messages the run received (every reply message counted whole) and sent.
    fn extras(&self) -> BTreeMap<String, Value> {
        let (received, sent) = self.messages();
        let mut m = BTreeMap::new();
        m.insert("messages_received".into(), received.into());
        m.insert("messages_sent".into(), sent.into());
        m
    }
}
