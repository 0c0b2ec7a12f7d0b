//! Results of processes that ran at the same time (the segments of one schedule, run by
//! agents) merged into the result of one run: HDR histograms added exactly, counts summed,
//! the duration the longest agent's (they ran side by side, not one after another), rates
//! over it, and the per-second timelines aligned on their seconds.

use crate::result::{merge_measurements, Measurement, OpenModelStats};
use crate::timeline::TimelinePoint;
use std::collections::BTreeMap;

/// Measurements taken side by side merged into one.
pub fn merge_concurrent(parts: &[&Measurement]) -> Measurement {
    let mut m = merge_measurements(parts);
    m.duration_s = parts.iter().map(|p| p.duration_s).fold(0.0, f64::max);
    m.rps = if m.duration_s > 0.0 {
        m.requests as f64 / m.duration_s
    } else {
        0.0
    };
    let open: Vec<&OpenModelStats> = parts.iter().filter_map(|p| p.open_model.as_ref()).collect();
    if !open.is_empty() {
        m.open_model = Some(OpenModelStats {
            requested_rate: open.iter().map(|o| o.requested_rate).sum(),
            achieved_rate: open.iter().map(|o| o.achieved_rate).sum(),
            late: open.iter().map(|o| o.late).sum(),
            unsent: open.iter().map(|o| o.unsent).sum(),
            max_inflight: open.iter().map(|o| o.max_inflight).sum(),
        });
    }
    if let Some(it) = m.iterations.as_mut() {
        it.rate = if m.duration_s > 0.0 {
            it.count as f64 / m.duration_s
        } else {
            0.0
        };
    }
    m.timeline = timelines(parts);
    m
}

/// The agents' seconds added up: requests and errors summed. A result keeps no histogram
/// per second, so a merged second's p50 and p99 are the highest of the agents' (an upper
/// bound, exact when one agent ran alone in that second).
fn timelines(parts: &[&Measurement]) -> Vec<TimelinePoint> {
    let mut by_second: BTreeMap<u32, TimelinePoint> = BTreeMap::new();
    for p in parts {
        for t in &p.timeline {
            let e = by_second.entry(t.second).or_insert(TimelinePoint {
                second: t.second,
                requests: 0,
                errors: 0,
                p50_ms: 0.0,
                p99_ms: 0.0,
                span_s: 0.0,
            });
            e.requests += t.requests;
            e.errors += t.errors;
            e.p50_ms = e.p50_ms.max(t.p50_ms);
            e.p99_ms = e.p99_ms.max(t.p99_ms);
            e.span_s = e.span_s.max(t.span_s);
        }
    }
    by_second.into_values().collect()
}
