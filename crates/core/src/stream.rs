//! Streamed replies (gRPC's server streams, and next HTTP's event streams): how many messages
//! each brought and the gaps between them, in one HDR histogram per worker and then per
//! phase, merged exactly like the response times. The time to the first message is the
//! timing split's `waiting`; the stream's whole time is the operation's latency.

use crate::histogram::{decode_histogram, encode_histogram, new_histogram};
use crate::latency::LatencyMs;
use crate::timing::TIMING_SIGFIG;
use hdrhistogram::Histogram;

/// One phase's streams.
#[derive(Debug, Clone)]
pub struct StreamStats {
    /// µs between consecutive messages of a stream (0 for messages that came together).
    pub gaps: Histogram<u64>,
    /// Streamed replies recorded.
    pub streams: u64,
    /// Their messages.
    pub messages: u64,
}

impl Default for StreamStats {
    fn default() -> Self {
        StreamStats {
            gaps: new_histogram(TIMING_SIGFIG),
            streams: 0,
            messages: 0,
        }
    }
}

impl StreamStats {
    /// Records one streamed reply of `messages` messages with these gaps (one fewer).
    pub fn record(&mut self, messages: u64, gaps: &[u32]) {
        self.streams += 1;
        self.messages += messages;
        for g in gaps {
            self.gaps.saturating_record(u64::from(*g));
        }
    }

    pub fn merge(&mut self, other: &StreamStats) {
        // Same bounds by construction: adding cannot fail.
        let _ = self.gaps.add(&other.gaps);
        self.streams += other.streams;
        self.messages += other.messages;
    }
}

/// The result's `stream` section.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StreamFigures {
    /// Streamed replies (operations whose reply was a stream).
    pub streams: u64,
    /// Their messages, all counted whole.
    pub messages: u64,
    /// Messages per second of the measurement's duration.
    #[serde(with = "crate::nan::f64")]
    pub messages_per_s: f64,
    /// The gaps between consecutive messages of a stream: a stall inside a stream shows here.
    pub gap_ms: LatencyMs,
    /// The gaps' histogram, HDR V2 compressed, base64, µs (two significant digits).
    pub histogram: String,
}

impl StreamFigures {
    /// The figures of `s` over a measurement of `secs` seconds.
    pub fn from_stats(s: &StreamStats, secs: f64) -> StreamFigures {
        StreamFigures {
            streams: s.streams,
            messages: s.messages,
            messages_per_s: if secs > 0.0 {
                s.messages as f64 / secs
            } else {
                f64::NAN
            },
            gap_ms: LatencyMs::from_histogram(&s.gaps),
            histogram: encode_histogram(&s.gaps),
        }
    }

    /// The stats back from a result (a histogram that does not decode counts as empty).
    pub fn to_stats(&self) -> StreamStats {
        let mut s = StreamStats {
            streams: self.streams,
            messages: self.messages,
            ..StreamStats::default()
        };
        if let Ok(h) = decode_histogram(&self.histogram) {
            let _ = s.gaps.add(&h);
        }
        s
    }

    /// Several results' streams merged exactly, over `secs` seconds; None when none has any.
    pub fn merge<'a>(
        parts: impl IntoIterator<Item = &'a StreamFigures>,
        secs: f64,
    ) -> Option<StreamFigures> {
        let mut all: Option<StreamStats> = None;
        for p in parts {
            let s = p.to_stats();
            match &mut all {
                Some(a) => a.merge(&s),
                None => all = Some(s),
            }
        }
        all.as_ref().map(|s| StreamFigures::from_stats(s, secs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_merge_exactly_and_a_stall_shows_in_the_gaps() {
        let (mut a, mut b, mut all) = Default::default();
        let (a, b, all): (&mut StreamStats, &mut StreamStats, &mut StreamStats) =
            (&mut a, &mut b, &mut all);
        let streams: [&[u32]; 3] = [&[1000, 1000, 1000], &[1000, 250_000], &[0, 0]];
        for (i, gaps) in streams.iter().enumerate() {
            let n = gaps.len() as u64 + 1;
            if i % 2 == 0 { &mut *a } else { &mut *b }.record(n, gaps);
            all.record(n, gaps);
        }
        let merged = StreamFigures::merge(
            [
                &StreamFigures::from_stats(a, 1.0),
                &StreamFigures::from_stats(b, 1.0),
            ],
            2.0,
        )
        .unwrap();
        let whole = StreamFigures::from_stats(all, 2.0);
        assert_eq!(merged, whole);
        assert_eq!((merged.streams, merged.messages), (3, 10));
        assert_eq!(merged.messages_per_s, 5.0);
        // The 250 ms stall is the largest gap.
        assert!(
            (merged.gap_ms.max - 250.0).abs() < 3.0,
            "{:?}",
            merged.gap_ms
        );
        assert_eq!(StreamFigures::merge([], 1.0), None);
    }
}
