//! The workload fields of a ws:// or wss:// target (or an http(s):// one with `protocol =
//! "ws"`): the message (`data`), how replies are matched, binary messages, the quiet time of
//! held connections and the upgrade's headers.

use super::context::Ctx;
use super::file;
use super::model::PlanError;
use super::targets::tls_of;
use crate::backend::{Backend, WsTarget};
use perfbase_drivers::workload::Corpus;
use perfbase_drivers::ws::WsOptions;
use std::sync::Arc;

/// A WebSocket workload and what reports call it (the URL's path). The first message is
/// rendered here, so a bad template or match field is an error at its line.
pub(super) fn ws_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    tdef: &file::TargetDef,
    url: &str,
    corpora: &[Arc<Corpus>],
) -> Result<(Backend, String), PlanError> {
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
    // `protocol = "ws"` on an http:// or https:// URL.
    let url = match url.split_once("://") {
        Some(("http", rest)) => format!("ws://{rest}"),
        Some(("https", rest)) => format!("wss://{rest}"),
        _ => url.to_string(),
    };
    let what = url::Url::parse(&url).map_or_else(|_| "/".into(), |u| u.path().to_string());
    let target = WsTarget::new(&url, options).map_err(|e| {
        let (at, name) = match (e.starts_with("message"), &w.data, &w.match_field) {
            (true, _, Some(m)) if e.contains("to match its reply by") => (m.span().start, "match"),
            (true, Some(d), _) => (d.span().start, "data"),
            _ => (w.target.span().start, "target"),
        };
        let text = e.split_once(": ").map_or(e.as_str(), |(_, rest)| rest);
        cx.err_at(cx.line(at), format!("{field}.{name}"), text)
    })?;
    Ok((Backend::Ws(target), what))
}
