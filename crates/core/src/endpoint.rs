//! One endpoint's figures in a result (a step of a mix, a journey's step, a cluster's node),
//! and the counts every measured block keys the same way: statuses, error classes, ratios.

use crate::histogram::{decode_histogram, encode_histogram};
use crate::latency::LatencyMs;
use crate::recorder::{new_histogram, LabelStats, MAX_LABELS, SIGFIG};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The figures of one endpoint (one kind of operation) of a mix: the per-endpoint table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Endpoint {
    /// `METHOD path` for HTTP (the path as written, placeholders included), or the name a
    /// plan gave the request.
    pub name: String,
    pub requests: u64,
    /// Share of this endpoint's operations of class `ok`, 0..1 (0 when none completed).
    pub success_ratio: f64,
    /// Status code → count, as in [`Measurement::status`](crate::result::Measurement::status).
    pub status: BTreeMap<String, u64>,
    /// Error class → count; only classes that occurred.
    pub errors: BTreeMap<String, u64>,
    pub latency_ms: LatencyMs,
    /// The response-time histogram, encoded as [`Histograms::response`](crate::result::Histograms::response).
    pub histogram: String,
}

impl Endpoint {
    pub(crate) fn from_stats(l: &LabelStats) -> Endpoint {
        let requests = l.requests();
        Endpoint {
            name: l.name.clone(),
            requests,
            success_ratio: ratio(l.count(crate::Class::Ok), requests),
            status: status_map(l.status_counts()),
            errors: error_map(l.class_counts()),
            latency_ms: LatencyMs::from_histogram(&l.response),
            histogram: encode_histogram(&l.response),
        }
    }
}

/// Status code → count, as results key them ("0" = no status).
pub(crate) fn status_map(counts: impl IntoIterator<Item = (u16, u64)>) -> BTreeMap<String, u64> {
    counts
        .into_iter()
        .map(|(c, n)| (c.to_string(), n))
        .collect()
}

/// Error class → count, only the classes that are errors.
pub(crate) fn error_map(
    counts: impl IntoIterator<Item = (crate::Class, u64)>,
) -> BTreeMap<String, u64> {
    counts
        .into_iter()
        .filter(|(c, _)| c.is_error())
        .map(|(c, n)| (c.name().to_string(), n))
        .collect()
}

/// `ok` of `n` as a ratio, 0 when nothing completed: a run that did nothing did not succeed.
pub(crate) fn ratio(ok: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        ok as f64 / n as f64
    }
}

/// Adds `e` into `into` by name (exact: histograms decoded and added).
pub(crate) fn merge_endpoint(into: &mut Vec<(Endpoint, Histogram<u64>)>, e: &Endpoint) {
    let i = match into.iter().position(|(m, _)| m.name == e.name) {
        Some(i) => i,
        None if into.len() < MAX_LABELS => {
            let mut empty = e.clone();
            empty.requests = 0;
            empty.success_ratio = 0.0;
            empty.status.clear();
            empty.errors.clear();
            into.push((empty, new_histogram(SIGFIG)));
            into.len() - 1
        }
        None => return,
    };
    let (m, h) = &mut into[i];
    if let Ok(eh) = decode_histogram(&e.histogram) {
        let _ = h.add(&eh);
    }
    // success_ratio is carried as a count of ok operations until the end.
    m.success_ratio += e.success_ratio * e.requests as f64;
    m.requests += e.requests;
    for (k, v) in &e.status {
        *m.status.entry(k.clone()).or_default() += v;
    }
    for (k, v) in &e.errors {
        *m.errors.entry(k.clone()).or_default() += v;
    }
}

pub(crate) fn finish_endpoints(merged: Vec<(Endpoint, Histogram<u64>)>) -> Vec<Endpoint> {
    merged
        .into_iter()
        .map(|(mut m, h)| {
            m.success_ratio = if m.requests == 0 {
                0.0
            } else {
                (m.success_ratio / m.requests as f64).clamp(0.0, 1.0)
            };
            m.latency_ms = LatencyMs::from_histogram(&h);
            m.histogram = encode_histogram(&h);
            m
        })
        .collect()
}
