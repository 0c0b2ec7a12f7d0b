//! HdrHistogram's own text formats, so its tools read perfbase's figures: the interval log
//! (`.hlog`, one histogram per second, as HistogramLogProcessor, hdr-plot and wrk2 users read
//! it) and the percentile distribution (`.hgrm`, `outputPercentileDistribution`'s table).
//! Values are recorded in µs and shown in ms (the logs' max value divisor is 1000).

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use std::fmt::Write as _;
use std::time::SystemTime;

/// One interval of a log: a second of a phase.
pub struct Interval {
    /// The phase, as a log tag (spaces and commas, which tags cannot hold, become `_`).
    pub tag: String,
    /// Seconds from the run's start.
    pub start_s: f64,
    pub duration_s: f64,
    pub histogram: Histogram<u64>,
}

/// A tag a log can carry: the phase name without spaces, commas or line breaks.
pub fn tag_of(phase: &str) -> String {
    phase
        .chars()
        .map(|c| {
            if matches!(c, ' ' | ',' | '\r' | '\n') {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// The interval log of a run that started at `start`, its intervals in time order.
pub fn interval_log(start: SystemTime, intervals: &[Interval]) -> Result<String, String> {
    let mut out: Vec<u8> = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    {
        let mut builder = IntervalLogWriterBuilder::new();
        builder
            .add_comment(&format!(
                "perfbase {}: latency in µs, one interval per second, tagged by phase",
                env!("CARGO_PKG_VERSION")
            ))
            .with_start_time(start)
            .with_base_time(start)
            .with_max_value_divisor(1000.0);
        let mut log = builder
            .begin_log_with(&mut out, &mut serializer)
            .map_err(|e| e.to_string())?;
        for i in intervals {
            let tag = tag_of(&i.tag);
            log.write_histogram(
                &i.histogram,
                perfbase_core::units::saturating_secs(i.start_s.max(0.0)),
                perfbase_core::units::saturating_secs(i.duration_s.max(0.0)),
                Tag::new(&tag),
            )
            .map_err(|e| format!("{e:?}"))?;
        }
    }
    String::from_utf8(out).map_err(|e| e.to_string())
}

/// A stored run's log: one interval per phase (the store keeps a histogram per phase, not per
/// second), one after another from the run's start; a run without phases is one interval.
pub fn phases_log(r: &perfbase_core::result::RunResult) -> Result<String, String> {
    let start = perfbase_core::clock::parse_time(&r.started_at).unwrap_or(SystemTime::UNIX_EPOCH);
    let mut parts: Vec<(&str, &perfbase_core::result::Measurement)> = r
        .phases
        .iter()
        .map(|p| (p.name.as_str(), &p.measurement))
        .collect();
    if parts.is_empty() {
        parts.push(("run", &r.measurement));
    }
    let mut at = 0.0;
    let mut intervals = Vec::with_capacity(parts.len());
    for (name, m) in parts {
        let histogram = perfbase_core::result::decode_histogram(&m.histogram.response)
            .map_err(|e| format!("{name}: the response histogram: {e}"))?;
        intervals.push(Interval {
            tag: name.to_string(),
            start_s: at,
            duration_s: m.duration_s,
            histogram,
        });
        at += m.duration_s.max(0.0);
    }
    interval_log(start, &intervals)
}

/// The percentile distribution of `h` (µs) in ms, as HdrHistogram prints it: five ticks per
/// half distance to 100 %, then mean, standard deviation, max and count.
pub fn percentile_distribution(h: &Histogram<u64>) -> String {
    let mut out = format!(
        "{:>12} {:>14} {:>10} {:>14}\n\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let ms = |us: u64| us as f64 / 1000.0;
    let mut total = 0u64;
    for v in h.iter_quantiles(5) {
        total += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        if q < 1.0 {
            let _ = writeln!(
                out,
                "{:>12.3} {:>14.12} {:>10} {:>14.2}",
                ms(v.value_iterated_to()),
                q,
                total,
                1.0 / (1.0 - q)
            );
        } else {
            let _ = writeln!(
                out,
                "{:>12.3} {:>14.12} {:>10}",
                ms(v.value_iterated_to()),
                q,
                total
            );
        }
    }
    let _ = writeln!(
        out,
        "#[Mean    = {:>12.3}, StdDeviation   = {:>12.3}]",
        h.mean() / 1000.0,
        h.stdev() / 1000.0
    );
    let _ = writeln!(
        out,
        "#[Max     = {:>12.3}, Total count    = {:>12}]",
        ms(h.max()),
        h.len()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:>12}, SubBuckets     = {:>12}]",
        h.buckets(),
        h.distinct_values() / (h.buckets() as usize + 1) * 2
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    use std::time::Duration;

    #[test]
    fn a_log_reads_back_exactly_with_the_crates_reader() {
        let mut a = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 2).unwrap();
        let mut b = a.clone();
        for v in [120, 250, 250, 9_000] {
            a.record(v).unwrap();
        }
        b.record_n(40_000, 7).unwrap();
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_790_000_000);
        let text = interval_log(
            start,
            &[
                Interval {
                    tag: "ladder 50/s".into(),
                    start_s: 0.0,
                    duration_s: 1.0,
                    histogram: a.clone(),
                },
                Interval {
                    tag: "ladder 50/s".into(),
                    start_s: 1.0,
                    duration_s: 0.5,
                    histogram: b.clone(),
                },
            ],
        )
        .unwrap();
        assert!(text.contains("#[StartTime: 1790000000"), "{text}");
        let mut read = Vec::new();
        for entry in IntervalLogIterator::new(text.as_bytes()) {
            if let Ok(LogEntry::Interval(i)) = entry {
                let bytes = base64::Engine::decode(
                    &base64::engine::general_purpose::STANDARD,
                    i.encoded_histogram(),
                )
                .unwrap();
                let h: Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
                read.push((
                    i.tag().map(|t| t.as_str().to_string()),
                    i.start_timestamp(),
                    i.duration(),
                    h,
                ));
            }
        }
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].0.as_deref(), Some("ladder_50/s"));
        assert_eq!(read[1].1, Duration::from_secs(1));
        assert_eq!(read[1].2, Duration::from_millis(500));
        assert_eq!(read[0].3, a);
        assert_eq!(read[1].3, b);
    }

    #[test]
    fn the_distribution_ends_at_the_max_with_the_count() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 10).unwrap();
        }
        let text = percentile_distribution(&h);
        assert!(text.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)\n\n"));
        let last = text.lines().rfind(|l| !l.starts_with('#')).unwrap();
        assert!(
            last.trim_start()
                .starts_with("10.007 1.000000000000       1000"),
            "{last}"
        );
        assert!(
            text.contains("#[Max     =       10.007, Total count    =         1000]"),
            "{text}"
        );
    }
}
