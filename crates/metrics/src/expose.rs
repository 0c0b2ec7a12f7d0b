//! The board as a scrape answers it, through prometheus-client: OpenMetrics text, or
//! Prometheus' delimited protobuf, the format a scraper with native histograms enabled asks
//! for, where the latency histograms carry native buckets beside the classic ones.

use crate::{Board, Family, Kind, Value};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, NativeHistogram, NativeHistogramBuckets, NoLabelSet,
};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

/// The OpenMetrics text content type.
pub const TEXT: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The protobuf content type Prometheus asks for when it scrapes native histograms.
pub const PROTOBUF: &str =
    "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited";

#[derive(Debug)]
struct Families(Vec<Family>);

impl Collector for Families {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for f in &self.0 {
            let kind = match f.kind {
                Kind::Counter => MetricType::Counter,
                Kind::Gauge => MetricType::Gauge,
                Kind::Histogram => MetricType::Histogram,
            };
            let mut metric = encoder.encode_descriptor(f.name, f.help, None, kind)?;
            for s in &f.series {
                let mut e = metric.encode_family(&s.labels)?;
                match (&s.value, f.kind) {
                    (Value::Number(v), Kind::Counter) => {
                        e.encode_counter::<NoLabelSet, _, u64>(&(*v as u64), None)?
                    }
                    (Value::Number(v), _) => e.encode_gauge(v)?,
                    (Value::Histogram(b), _) => {
                        let n = &b.native;
                        e.encode_histogram_with_native::<NoLabelSet>(
                            b.sum_s,
                            b.count,
                            &with_inf(&b.classic, b.count),
                            None,
                            NativeHistogram {
                                schema: n.schema,
                                zero_threshold: n.zero_threshold,
                                zero_count: n.zero_count,
                                negative: NativeHistogramBuckets {
                                    spans: &[],
                                    deltas: &[],
                                },
                                positive: NativeHistogramBuckets {
                                    spans: &n.spans,
                                    deltas: &n.deltas,
                                },
                                created: None,
                            },
                        )?
                    }
                }
            }
        }
        Ok(())
    }
}

/// prometheus-client's buckets are per bucket (it sums them) and end with +Inf.
fn with_inf(cumulative: &[(f64, u64)], count: u64) -> Vec<(f64, u64)> {
    let mut out = Vec::with_capacity(cumulative.len() + 1);
    let mut below = 0;
    for &(le, n) in cumulative {
        out.push((le, n - below));
        below = n;
    }
    out.push((f64::INFINITY, count - below));
    out
}

fn registry(board: &Board) -> Registry {
    let mut r = Registry::default();
    r.register_collector(Box::new(Families(board.families())));
    r
}

/// The board in OpenMetrics text.
pub fn text(board: &Board) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut out, &registry(board));
    out
}

/// The board in Prometheus' delimited protobuf.
pub fn protobuf(board: &Board) -> Vec<u8> {
    prometheus_client::encoding::prometheus_protobuf::encode_to_vec(&registry(board))
        .unwrap_or_default()
}
