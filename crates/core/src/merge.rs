//! Results of processes that ran at the same time (the segments of one schedule, run by
//! agents) merged into the result of one run: HDR histograms added exactly, counts summed,
//! the duration the longest agent's (they ran side by side, not one after another), rates
//! over it, and the per-second timelines aligned on their seconds.

use crate::result::{merge_measurements, AgentEnv, Measurement, OpenModelStats, RunResult};
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
    if let Some(st) = m.stream.as_mut() {
        // Side by side: the messages came within the longest part, not one after another.
        st.messages_per_s = if m.duration_s > 0.0 {
            st.messages as f64 / m.duration_s
        } else {
            f64::NAN
        };
    }
    // A counter's rate is over the longest part's duration too.
    m.metrics =
        crate::metric::MetricResult::merge(parts.iter().flat_map(|p| &p.metrics), m.duration_s);
    m.timeline = timelines(parts);
    m
}

/// Where each of a merged run's agents ran (its node, or its host outside Kubernetes) and on
/// how many CPUs, in the order of their segments; results without a segment keep theirs.
pub fn agents_env<'a>(parts: impl IntoIterator<Item = &'a RunResult>) -> Vec<AgentEnv> {
    let mut agents: Vec<AgentEnv> = parts
        .into_iter()
        .map(|r| AgentEnv {
            segment: r.segment.clone().unwrap_or_default(),
            node: r.env.node_name().to_string(),
            hostname: r.env.hostname.clone(),
            cores: r.env.cores,
        })
        .collect();
    // By index: segment 10/12 after 9/12.
    agents.sort_by_key(|a| {
        a.segment
            .split_once('/')
            .and_then(|(i, _)| i.parse::<u64>().ok())
            .unwrap_or(u64::MAX)
    });
    agents
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agent_is_listed_with_its_node_and_cpus_by_segment() {
        let one: RunResult =
            serde_json::from_str(include_str!("../../fuzz/corpus/result_json/open.json")).unwrap();
        let agent = |segment: &str, node: Option<&str>, host: &str, cores: u32| {
            let mut r = one.clone();
            r.segment = Some(segment.into());
            r.env.node = node.map(str::to_string);
            r.env.hostname = host.into();
            r.env.cores = cores;
            r
        };
        let runs = [
            agent("10/11", Some("node-b"), "pod-10", 2),
            agent("2/11", None, "bench-2", 8),
            agent("0/11", Some("node-a"), "pod-0", 1),
        ];
        let listed: Vec<(String, String, String, u32)> = agents_env(&runs)
            .into_iter()
            .map(|a| (a.segment, a.node, a.hostname, a.cores))
            .collect();
        let row = |s: &str, n: &str, h: &str, c| (s.to_string(), n.to_string(), h.to_string(), c);
        assert_eq!(
            listed,
            [
                row("0/11", "node-a", "pod-0", 1),
                // Outside Kubernetes, its host is its node.
                row("2/11", "bench-2", "bench-2", 8),
                row("10/11", "node-b", "pod-10", 2),
            ]
        );
        // Results written before `node` and `agents` still read, and write neither.
        let text = serde_json::to_string(&one).unwrap();
        assert!(!text.contains("\"node\"") && !text.contains("\"agents\""));
    }
}
