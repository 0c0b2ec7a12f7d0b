//! WebSocket workloads: one message template per op, each reply awaited (the next message, or
//! the one matching by a field), one connection per session; with `--interval`, held
//! connections that each speak once per interval, and what holding them cost in memory.

use super::protocol::{
    extra_values, header_lines, Extras, Target, Ran, RunArgs, DEFAULT_MAX_INFLIGHT,
};
use crate::exit::AppError;
use perfbase_core::closing::{Closing, Part};
use perfbase_core::result::RunResult;
use perfbase_drivers::ws::{WsDriver, WsOptions};
use serde_json::Value;
use std::collections::BTreeMap;

/// A workload against a WebSocket server.
#[derive(Debug, Clone)]
pub struct WsTarget {
    /// ws://host:port/path or wss://…
    pub url: String,
    pub options: WsOptions,
}

impl WsTarget {
    /// The workload, its first message rendered: a bad URL, header or template is an error
    /// here.
    pub fn new(url: &str, options: WsOptions) -> Result<WsTarget, String> {
        WsDriver::new(url, options.clone()).map_err(|e| e.to_string())?;
        Ok(WsTarget {
            url: url.to_string(),
            options,
        })
    }

    fn driver(&self) -> Result<WsDriver, String> {
        WsDriver::new(&self.url, self.options.clone()).map_err(|e| e.to_string())
    }
}

impl Target for WsTarget {
    fn name(&self) -> &'static str {
        "ws"
    }

    fn service_kind(&self) -> &'static str {
        "WebSocket"
    }

    fn default_connections(&self) -> u64 {
        50
    }

    /// Each op in flight holds a connection of its own, as HTTP/1.1's.
    fn default_max_inflight(&self) -> u64 {
        DEFAULT_MAX_INFLIGHT
    }

    /// Nothing is set up on the server.
    fn skip_setup(&mut self) {}

    fn validate(&self) -> Result<(), String> {
        self.driver().map(drop)
    }

    fn run(&self, args: RunArgs<'_>) -> Result<Ran, AppError> {
        args.drive(self.driver())
    }

    fn settings(&self) -> BTreeMap<String, Value> {
        let o = &self.options;
        let mut m = BTreeMap::new();
        // The message itself may hold a secret: only its size is shown, as HTTP's body's.
        m.insert("message_bytes".into(), o.message.len().into());
        m.insert(
            "message_type".into(),
            if o.binary { "binary" } else { "text" }.into(),
        );
        m.insert(
            "match".into(),
            o.match_field
                .as_ref()
                .map_or("in order".to_string(), |f| format!("field {f}"))
                .into(),
        );
        if !o.interval.is_zero() {
            m.insert("interval_ms".into(), (o.interval.as_millis() as u64).into());
        }
        if let Some(p) = &o.subprotocol {
            m.insert("subprotocol".into(), p.clone().into());
        }
        let headers = header_lines(&o.headers);
        if !headers.is_empty() {
            m.insert("headers".into(), headers.into());
        }
        m
    }

    fn server_url(&self) -> String {
        self.url.clone()
    }

    /// WebSocket has no version call.
    fn server_version(&self) -> Result<String, String> {
        Err("WebSocket has no version call".into())
    }

    fn closing(
        &self,
        extras: &[BTreeMap<String, Value>],
        result: &RunResult,
        single: bool,
    ) -> Vec<Closing> {
        let _ = (result, single);
        let sum = |key: &str| -> u64 { extra_values(extras, key).sum() };
        let max = |key: &str| -> u64 { extra_values(extras, key).max().unwrap_or(0) };
        let mut messages: Vec<Part> = vec![
            "Messages: ".into(),
            sum("messages_sent").into(),
            " sent, ".into(),
            sum("messages_received").into(),
            " received".into(),
        ];
        let unmatched = sum("messages_unmatched");
        if unmatched > 0 {
            messages.extend([" (".into(), unmatched.into(), " matching no message sent)".into()]);
        }
        let mut closing = vec![Closing::Line(messages)];
        let peak = max("held_connections");
        if peak > 0 {
            let mb = |b: u64| Part::Fixed(b as f64 / (1024.0 * 1024.0), 1);
            closing.push(Closing::Line(vec![
                "Connections: ".into(),
                peak.into(),
                " open at once; perfbase's RSS ".into(),
                mb(max("rss_at_peak_bytes")),
                " MB then (".into(),
                mb(max("rss_before_bytes")),
                " MB before the first), ".into(),
                Part::Fixed(max("rss_per_connection_bytes") as f64 / 1024.0, 1),
                " KiB per connection".into(),
            ]));
        }
        closing
    }
}

impl Extras for WsDriver {
    /// The messages the run sent and received, and what the connections held cost.
    fn extras(&self) -> BTreeMap<String, Value> {
        let (received, sent, unmatched) = self.messages();
        let memory = self.memory();
        let mut m = BTreeMap::new();
        m.insert("messages_received".into(), received.into());
        m.insert("messages_sent".into(), sent.into());
        m.insert("messages_unmatched".into(), unmatched.into());
        m.insert("held_connections".into(), memory.peak_open.into());
        m.insert("rss_before_bytes".into(), memory.before.into());
        m.insert("rss_at_peak_bytes".into(), memory.rss_at_peak.into());
        m.insert("rss_max_bytes".into(), memory.max_rss.into());
        if let Some(per) = memory.per_connection() {
            m.insert("rss_per_connection_bytes".into(), per.into());
        }
        m
    }
}
