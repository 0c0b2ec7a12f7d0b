//! Streamed replies (gRPC's server streams, HTTP's event streams and token streams): how many
//! messages each brought, the time to its first message, the gaps between messages and the
//! stream's whole time, in HDR histograms per worker and then per phase, merged exactly like
//! the response times. The first message is timed apart from the timing split's `waiting`
//! (the response's head): an event stream's head comes at once and its first token later.

use crate::histogram::{decode_histogram, encode_histogram, new_histogram};
use crate::latency::LatencyMs;
use crate::timing::TIMING_SIGFIG;
use hdrhistogram::Histogram;

/// What a streamed reply brought: how many messages, and the gaps between them (one fewer).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StreamReply {
    pub messages: u64,
    pub gaps: Gaps,
    /// µs from the request's sending to the first message (its time to first token); 0 when
    /// no message came.
    pub first_us: u32,
    /// µs from the request's sending to the stream's end.
    pub total_us: u32,
}

/// How many gaps a stream lists one by one before it keeps the rest in a histogram.
pub const GAPS_LISTED: usize = 256;

/// One stream's gaps between messages (µs): the first [`GAPS_LISTED`] in a list, the rest in
/// a histogram of the phase's own bounds, so that a stream of any length, from a server as
/// fast as it likes, holds at most about 30 KB; recorded into the phase exactly as if each
/// gap had been recorded there directly.
#[derive(Debug, Clone, Default)]
pub struct Gaps {
    listed: Vec<u32>,
    rest: Option<Box<Histogram<u64>>>,
    count: u64,
    sum: u64,
}

impl Gaps {
    /// Adds `n` gaps of `us` each (messages one read completed together have gaps of 0).
    pub fn push_n(&mut self, us: u32, n: u64) {
        self.count += n;
        self.sum = self.sum.saturating_add(u64::from(us).saturating_mul(n));
        let room = GAPS_LISTED.saturating_sub(self.listed.len()) as u64;
        let here = n.min(room);
        self.listed.extend(std::iter::repeat_n(us, here as usize));
        if n > here {
            self.rest
                .get_or_insert_with(|| Box::new(new_histogram(TIMING_SIGFIG)))
                .saturating_record_n(u64::from(us), n - here);
        }
    }

    /// How many gaps.
    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Their sum, µs.
    pub fn sum(&self) -> u64 {
        self.sum
    }

    /// The listed gaps, in order (the first [`GAPS_LISTED`]).
    pub fn listed(&self) -> &[u32] {
        &self.listed
    }

    /// Records every gap into `into` (a histogram of [`TIMING_SIGFIG`] and the common bounds).
    fn record_into(&self, into: &mut Histogram<u64>) {
        for g in &self.listed {
            into.saturating_record(u64::from(*g));
        }
        if let Some(rest) = &self.rest {
            // Same bounds by construction: adding cannot fail.
            let _ = into.add(rest.as_ref());
        }
    }
}

impl From<Vec<u32>> for Gaps {
    fn from(gaps: Vec<u32>) -> Gaps {
        let mut g = Gaps::default();
        for us in gaps {
            g.push_n(us, 1);
        }
        g
    }
}

impl PartialEq for Gaps {
    fn eq(&self, other: &Gaps) -> bool {
        self.listed == other.listed
            && self.count == other.count
            && self.sum == other.sum
            && self.rest.as_deref() == other.rest.as_deref()
    }
}

impl Eq for Gaps {}

/// One phase's streams.
#[derive(Debug, Clone)]
pub struct StreamStats {
    /// µs between consecutive messages of a stream (0 for messages that came together).
    pub gaps: Histogram<u64>,
    /// µs from each stream's request to its first message (streams with one at least).
    pub first: Histogram<u64>,
    /// µs from each stream's request to its end.
    pub total: Histogram<u64>,
    /// Each stream's mean gap in µs (streams of two messages or more): a token stream's time
    /// per output token after the first (guidellm's inter-token latency, vLLM's TPOT).
    pub mean_gap: Histogram<u64>,
    /// Streamed replies recorded.
    pub streams: u64,
    /// Their messages.
    pub messages: u64,
}

impl Default for StreamStats {
    fn default() -> Self {
        StreamStats {
            gaps: new_histogram(TIMING_SIGFIG),
            first: new_histogram(TIMING_SIGFIG),
            total: new_histogram(TIMING_SIGFIG),
            mean_gap: new_histogram(TIMING_SIGFIG),
            streams: 0,
            messages: 0,
        }
    }
}

impl StreamStats {
    /// Records one streamed reply.
    pub fn record(&mut self, reply: &StreamReply) {
        self.streams += 1;
        self.messages += reply.messages;
        reply.gaps.record_into(&mut self.gaps);
        if reply.messages > 0 {
            self.first.saturating_record(u64::from(reply.first_us));
        }
        self.total.saturating_record(u64::from(reply.total_us));
        if !reply.gaps.is_empty() {
            self.mean_gap
                .saturating_record(reply.gaps.sum() / reply.gaps.len());
        }
    }

    pub fn merge(&mut self, other: &StreamStats) {
        // Same bounds by construction: adding cannot fail.
        let _ = self.gaps.add(&other.gaps);
        let _ = self.first.add(&other.first);
        let _ = self.total.add(&other.total);
        let _ = self.mean_gap.add(&other.mean_gap);
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
    /// From each request to its stream's first message: time to first token.
    #[serde(default = "LatencyMs::none")]
    pub first_ms: LatencyMs,
    /// Its histogram, as `histogram` (absent in results written before it was kept).
    #[serde(default)]
    pub first_histogram: String,
    /// From each request to its stream's end.
    #[serde(default = "LatencyMs::none")]
    pub total_ms: LatencyMs,
    #[serde(default)]
    pub total_histogram: String,
    /// Each stream's mean gap: for a token stream, the time per output token after the first
    /// (guidellm's inter-token latency, vLLM's TPOT), where `gap_ms` is every gap.
    #[serde(default = "LatencyMs::none")]
    pub stream_gap_ms: LatencyMs,
    #[serde(default)]
    pub stream_gap_histogram: String,
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
            first_ms: LatencyMs::from_histogram(&s.first),
            first_histogram: encode_histogram(&s.first),
            total_ms: LatencyMs::from_histogram(&s.total),
            total_histogram: encode_histogram(&s.total),
            stream_gap_ms: LatencyMs::from_histogram(&s.mean_gap),
            stream_gap_histogram: encode_histogram(&s.mean_gap),
        }
    }

    /// The stats back from a result (a histogram that does not decode counts as empty).
    pub fn to_stats(&self) -> StreamStats {
        let mut s = StreamStats {
            streams: self.streams,
            messages: self.messages,
            ..StreamStats::default()
        };
        for (text, into) in [
            (&self.histogram, &mut s.gaps),
            (&self.first_histogram, &mut s.first),
            (&self.total_histogram, &mut s.total),
            (&self.stream_gap_histogram, &mut s.mean_gap),
        ] {
            if let Ok(h) = decode_histogram(text) {
                let _ = into.add(&h);
            }
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

    /// A million gaps hold a list of 256 and one histogram, and record into the phase exactly
    /// as a million direct recordings would.
    #[test]
    fn a_long_stream_holds_bounded_memory_and_records_exactly() {
        let mut gaps = Gaps::default();
        let mut direct = new_histogram(TIMING_SIGFIG);
        for i in 0..1_000_000u32 {
            let (us, n) = (i % 977 * 13, u64::from(i % 3));
            gaps.push_n(us, n);
            direct.saturating_record_n(u64::from(us), n);
        }
        assert_eq!(gaps.listed().len(), GAPS_LISTED);
        assert!(gaps.listed.capacity() <= 2 * GAPS_LISTED);
        assert_eq!(gaps.len(), direct.len());
        let mut stats = StreamStats::default();
        stats.record(&StreamReply {
            messages: gaps.len() + 1,
            gaps,
            first_us: 1,
            total_us: 2,
        });
        assert_eq!(stats.gaps, direct);
        assert_eq!(stats.mean_gap.len(), 1);
    }

    #[test]
    fn streams_merge_exactly_and_a_stall_shows_in_the_gaps() {
        let (mut a, mut b, mut all) = Default::default();
        let (a, b, all): (&mut StreamStats, &mut StreamStats, &mut StreamStats) =
            (&mut a, &mut b, &mut all);
        let streams: [&[u32]; 3] = [&[1000, 1000, 1000], &[1000, 250_000], &[0, 0]];
        for (i, gaps) in streams.iter().enumerate() {
            let reply = StreamReply {
                messages: gaps.len() as u64 + 1,
                gaps: gaps.to_vec().into(),
                first_us: 40_000 * (i as u32 + 1),
                total_us: 300_000,
            };
            if i % 2 == 0 { &mut *a } else { &mut *b }.record(&reply);
            all.record(&reply);
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
        assert!(
            (merged.first_ms.max - 120.0).abs() < 1.0,
            "{:?}",
            merged.first_ms
        );
        assert!(
            (merged.first_ms.min - 40.0).abs() < 0.5,
            "{:?}",
            merged.first_ms
        );
        assert!(
            (merged.total_ms.p50 - 300.0).abs() < 3.0,
            "{:?}",
            merged.total_ms
        );
        // Means per stream: 1 ms, 125.5 ms and 0.
        assert_eq!(merged.stream_gap_ms.min, 0.0);
        assert!(
            (merged.stream_gap_ms.max - 125.5).abs() < 1.5,
            "{:?}",
            merged.stream_gap_ms
        );
        assert_eq!(StreamFigures::merge([], 1.0), None);
    }
}
