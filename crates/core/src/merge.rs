//! Measurements merged exactly. One after another (suite operations, phases of a plan):
//! durations added. At the same time (the segments of one schedule, run by agents) into the
//! result of one run: HDR histograms added exactly, counts summed,
//! the duration the longest agent's (they ran side by side, not one after another), rates
//! over it, and the per-second timelines aligned on their seconds.

use crate::endpoint::{finish_endpoints, merge_endpoint};
use crate::histogram::{decode_histogram, encode_histogram};
use crate::iteration::{CheckResult, GroupResult, Iterations};
use crate::latency::LatencyMs;
use crate::metric::MetricResult;
use crate::outage::AvailabilityOut;
use crate::recorder::{new_histogram, SIGFIG};
use crate::result::{
    AgentEnv, ErrorSampleOut, Histograms, Measurement, OpenModelStats, RunResult,
    HISTOGRAM_ENCODING,
};
use crate::stream::StreamFigures;
use crate::timeline::TimelinePoint;
use crate::timing::HttpTiming;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// Merges measurements taken one after another (suite operations, phases of a plan) into one,
/// exactly: HDR histograms are decoded and added, counts summed, durations added. Timelines
/// are not carried over (their seconds would overlap); error samples are kept up to the bound.
pub fn merge_measurements(parts: &[&Measurement]) -> Measurement {
    let mut response = new_histogram(SIGFIG);
    let mut service: Option<Histogram<u64>> = None;
    let mut status: BTreeMap<String, u64> = BTreeMap::new();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut samples: Vec<ErrorSampleOut> = Vec::new();
    let (mut requests, mut ok, mut bytes_read, mut bytes_written, mut aborted, mut duration_s) =
        (0u64, 0.0f64, 0, 0, 0, 0.0);
    let mut endpoints = Vec::new();
    for m in parts {
        for e in &m.endpoints {
            merge_endpoint(&mut endpoints, e);
        }
        if let Ok(h) = decode_histogram(&m.histogram.response) {
            let _ = response.add(&h);
        }
        if let Some(Ok(h)) = m.histogram.service.as_deref().map(decode_histogram) {
            let _ = service.get_or_insert_with(|| new_histogram(SIGFIG)).add(&h);
        }
        for (k, v) in &m.status {
            *status.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &m.errors {
            *errors.entry(k.clone()).or_default() += v;
        }
        for e in &m.error_samples {
            if samples.len() < crate::recorder::MAX_ERROR_SAMPLES {
                samples.push(e.clone());
            }
        }
        requests += m.requests;
        ok += m.success_ratio * m.requests as f64;
        bytes_read += m.bytes_read;
        bytes_written += m.bytes_written;
        aborted += m.aborted_in_flight;
        duration_s += m.duration_s;
    }
    let (iterations, checks, groups) = journey_parts(parts, duration_s);
    Measurement {
        requests,
        duration_s,
        rps: if duration_s > 0.0 {
            requests as f64 / duration_s
        } else {
            0.0
        },
        success_ratio: if requests == 0 {
            0.0
        } else {
            (ok / requests as f64).clamp(0.0, 1.0)
        },
        status,
        errors,
        bytes_read,
        bytes_written,
        latency_ms: LatencyMs::from_histogram(&response),
        service_time_ms: service.as_ref().map(LatencyMs::from_histogram),
        open_model: sequential_open_model(parts),
        coordinated_omission: None,
        aborted_in_flight: aborted,
        histogram: Histograms {
            unit: "us".into(),
            encoding: HISTOGRAM_ENCODING.into(),
            response: encode_histogram(&response),
            service: service.as_ref().map(encode_histogram),
        },
        timeline: Vec::new(),
        error_samples: samples,
        endpoints: finish_endpoints(endpoints),
        http_timing: HttpTiming::merge(parts.iter().filter_map(|m| m.http_timing.as_ref())),
        stream: StreamFigures::merge(parts.iter().filter_map(|m| m.stream.as_ref()), duration_s),
        iterations,
        checks,
        groups,
        metrics: MetricResult::merge(parts.iter().flat_map(|m| &m.metrics), duration_s),
        availability: AvailabilityOut::sequential(
            parts.iter().filter_map(|m| m.availability.as_ref()),
        ),
    }
}

/// A journey's figures of measurements taken one after another, added up exactly.
fn journey_parts(
    parts: &[&Measurement],
    duration_s: f64,
) -> (Option<Iterations>, Vec<CheckResult>, Vec<GroupResult>) {
    let iterations: Vec<&Iterations> = parts.iter().filter_map(|m| m.iterations.as_ref()).collect();
    (
        Iterations::merge(&iterations, duration_s),
        CheckResult::merge(parts.iter().flat_map(|m| &m.checks)),
        GroupResult::merge(parts.iter().flat_map(|m| &m.groups)),
    )
}

/// The open-model figures of measurements taken one after another at the same rate (the
/// repetitions of a step): rates weighted by each part's duration, counts summed. None unless
/// every part was open-model.
fn sequential_open_model(parts: &[&Measurement]) -> Option<OpenModelStats> {
    let open: Vec<(&OpenModelStats, f64)> = parts
        .iter()
        .map(|m| m.open_model.as_ref().map(|o| (o, m.duration_s)))
        .collect::<Option<_>>()?;
    let total: f64 = open.iter().map(|(_, d)| d).sum();
    if open.is_empty() || total <= 0.0 {
        return None;
    }
    let weighted =
        |f: fn(&OpenModelStats) -> f64| open.iter().map(|(o, d)| f(o) * d).sum::<f64>() / total;
    Some(OpenModelStats {
        requested_rate: weighted(|o| o.requested_rate),
        achieved_rate: weighted(|o| o.achieved_rate),
        late: open.iter().map(|(o, _)| o.late).sum(),
        unsent: open.iter().map(|(o, _)| o.unsent).sum(),
        max_inflight: open.iter().map(|(o, _)| o.max_inflight).max().unwrap_or(0),
    })
}

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
    let each: Vec<&AvailabilityOut> = parts
        .iter()
        .filter_map(|p| p.availability.as_ref())
        .collect();
    m.availability = if each.len() == parts.len() {
        AvailabilityOut::concurrent(&each)
    } else {
        None
    };
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
    use crate::{Outcome, Recorder};
    use std::time::Duration;

    #[test]
    fn merged_measurements_equal_one_recording() {
        let names = ["GET /a".to_string(), "GET /b".to_string()];
        let mut a = Recorder::new(false).with_labels(&names);
        // b names its endpoints in the other order: merging goes by name.
        let mut b = Recorder::new(false).with_labels(&[names[1].clone(), names[0].clone()]);
        let mut both = Recorder::new(false).with_labels(&names);
        for i in 0..200u64 {
            let (r, st) = if i % 3 == 0 {
                (&mut a, 200)
            } else {
                (&mut b, if i % 7 == 0 { 500 } else { 200 })
            };
            // Endpoint "GET /a" when i is even: label 1 in a and both, label 2 in b.
            let label = |first_is_a: bool| match (i % 2 == 0, first_is_a) {
                (true, true) | (false, false) => 1,
                _ => 2,
            };
            let in_a = i % 3 == 0;
            let o = Outcome::http(st, 10, 5).with_label(label(in_a));
            let o_both = Outcome::http(st, 10, 5).with_label(label(true));
            r.record(
                &o,
                Duration::from_micros(100 + i * 37),
                Duration::ZERO,
                Duration::ZERO,
            );
            both.record(
                &o_both,
                Duration::from_micros(100 + i * 37),
                Duration::ZERO,
                Duration::ZERO,
            );
        }
        let ma = Measurement::from_recorder(&a, Duration::from_secs(1), None);
        let mb = Measurement::from_recorder(&b, Duration::from_secs(3), None);
        let m = merge_measurements(&[&ma, &mb]);
        let want = Measurement::from_recorder(&both, Duration::from_secs(4), None);
        assert_eq!(m.requests, want.requests);
        assert_eq!(m.status, want.status);
        assert_eq!(m.errors, want.errors);
        assert_eq!(m.latency_ms, want.latency_ms);
        assert_eq!(m.rps, want.rps);
        assert!((m.success_ratio - want.success_ratio).abs() < 1e-12);
        assert_eq!(m.endpoints.len(), 2);
        for (got, want) in m.endpoints.iter().zip(&want.endpoints) {
            assert_eq!(got.name, want.name);
            assert_eq!(got.requests, want.requests);
            assert_eq!(got.status, want.status);
            assert_eq!(got.errors, want.errors);
            assert_eq!(got.latency_ms, want.latency_ms);
            assert!((got.success_ratio - want.success_ratio).abs() < 1e-12);
        }
        assert_eq!(m.endpoints[0].requests, 100);
    }

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
