//! The workload fields of a ws:// or wss:// target (or an http(s):// one with `protocol =
//! "ws"`): the message (`data`), how replies are matched, binary messages, the quiet time of
//! held connections and the upgrade's headers.

use super::fields::{self, At, Made};
use super::file::S;
use super::model::PlanError;
use super::http_target::tls_of;
use crate::backend::ws::WsTarget;
use crate::backend::Backend;
use perfbase_drivers::ws::WsOptions;
use serde::Deserialize;
use std::collections::BTreeMap;
use url::Url;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct Fields {
    /// The message (default `perfbase {{n}}`)…
    data: Option<S<String>>,
    /// …each reply matched by this JSON field…
    #[serde(rename = "match")]
    match_field: Option<S<String>>,
    /// …sent as binary messages…
    binary: Option<S<bool>>,
    /// …and, closed model, this long between a connection's messages (held connections);
    /// the upgrade's headers (after the target's).
    interval: Option<S<String>>,
    #[serde(default)]
    headers: BTreeMap<String, S<String>>,
}

impl fields::Fields for Fields {
    const TARGET_FIELDS: &'static [&'static str] = &["insecure", "cacert"];

    fn url(url_text: &str, shown: &str) -> Result<Option<Url>, String> {
        fields::parsed(url_text, shown)
    }

    fn read(self, at: &At<'_>) -> Result<Made, PlanError> {
        let (backend, what) = self.target(at)?;
        Ok(Made::One(backend, what))
    }
}

impl Fields {
    /// A WebSocket workload and what reports call it (the URL's path). The first message is
    /// rendered here, so a bad template or match field is an error at its line.
    fn target(&self, at: &At<'_>) -> Result<(Backend, String), PlanError> {
        let (cx, field, w, tdef, corpora) = (at.cx, at.field, self, at.target.0, at.corpora);
        // `protocol = "ws"` on an http:// or https:// URL: plain, or TLS.
        let url = super::http_target::above_http(at.url(), "ws", "wss");
        let interval = match &w.interval {
            Some(i) => cx.positive_duration(i, &format!("{field}.interval"))?,
            None => Default::default(),
        };
        let options = WsOptions {
            message: w
                .data
                .as_ref()
                .map_or_else(|| "perfbase {{n}}".to_string(), |d| d.get_ref().clone()),
            binary: w.binary.as_ref().is_some_and(|b| *b.get_ref()),
            match_field: w.match_field.as_ref().map(|m| m.get_ref().clone()),
            headers: w
                .headers
                .iter()
                .chain(tdef.headers.iter())
                .map(|(k, v)| (k.clone(), v.get_ref().clone()))
                .collect(),
            tls: tls_of(cx, tdef),
            interval,
            corpora: corpora.to_vec(),
            ..WsOptions::default()
        };
        let what = url::Url::parse(&url).map_or_else(|_| "/".into(), |u| u.path().to_string());
        let target = WsTarget::new(&url, options).map_err(|e| {
            let (at, name) = match (e.starts_with("message"), &w.data, &w.match_field) {
                (true, _, Some(m)) if e.contains("to match its reply by") => (m.span().start, "match"),
                (true, Some(d), _) => (d.span().start, "data"),
                _ => (at.target_field.span().start, "target"),
            };
            let text = e.split_once(": ").map_or(e.as_str(), |(_, rest)| rest);
            cx.err_at(cx.line(at), format!("{field}.{name}"), text)
        })?;
        Ok((Backend::Ws(target), what))
    }
}
