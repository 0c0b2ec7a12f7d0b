//! Where HTTP/1.1 requests' time went, per worker and then per phase: connect, TLS handshake,
//! waiting (time to first byte) and receiving, each in its own HDR histogram, and how many
//! requests opened a connection or reused one. Merged exactly, like the response times.

use crate::histogram::new_histogram;
use crate::outcome::{ConnUse, Timing};
use hdrhistogram::Histogram;

/// Two significant digits (1 % buckets): enough to say where the time went, and a quarter of
/// the memory of the response histogram's three, which the hot path touches on every request.
pub const TIMING_SIGFIG: u8 = 2;

#[derive(Debug, Clone)]
pub struct TimingStats {
    pub connect: Histogram<u64>,
    pub tls: Histogram<u64>,
    pub waiting: Histogram<u64>,
    pub receiving: Histogram<u64>,
    pub new_connections: u64,
    pub reused_connections: u64,
}

impl Default for TimingStats {
    fn default() -> Self {
        TimingStats {
            connect: new_histogram(TIMING_SIGFIG),
            tls: new_histogram(TIMING_SIGFIG),
            waiting: new_histogram(TIMING_SIGFIG),
            receiving: new_histogram(TIMING_SIGFIG),
            new_connections: 0,
            reused_connections: 0,
        }
    }
}

impl TimingStats {
    /// Records one request's split. Connect and TLS times belong to requests that opened
    /// their connection; a reused one has none to record (not a zero).
    #[inline]
    pub fn record(&mut self, t: &Timing) {
        match t.conn {
            ConnUse::Untimed => return,
            ConnUse::New => {
                self.new_connections += 1;
                self.connect.saturating_record(u64::from(t.connect_us));
                if t.tls_us > 0 {
                    self.tls.saturating_record(u64::from(t.tls_us));
                }
            }
            ConnUse::Reused => self.reused_connections += 1,
        }
        self.waiting.saturating_record(u64::from(t.waiting_us));
        self.receiving.saturating_record(u64::from(t.receiving_us));
    }

    pub fn merge(&mut self, other: &TimingStats) {
        for (a, b) in [
            (&mut self.connect, &other.connect),
            (&mut self.tls, &other.tls),
            (&mut self.waiting, &other.waiting),
            (&mut self.receiving, &other.receiving),
        ] {
            // Same bounds by construction: adding cannot fail.
            let _ = a.add(b);
        }
        self.new_connections += other.new_connections;
        self.reused_connections += other.reused_connections;
    }
}

/// The result's `http_timing` section: each part's latency summary in ms (null figures when
/// no request had that part, such as connect times with keep-alive), the connection counts,
/// and the encoded histograms so merged results stay exact.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HttpTiming {
    /// Requests that opened their connection (their connect and TLS times are theirs).
    pub new_connections: u64,
    /// Requests sent on a kept-alive connection.
    pub reused_connections: u64,
    pub connect_ms: crate::latency::LatencyMs,
    pub tls_ms: crate::latency::LatencyMs,
    /// From the request written to the first byte of the response.
    pub waiting_ms: crate::latency::LatencyMs,
    /// From the first byte to the last.
    pub receiving_ms: crate::latency::LatencyMs,
    /// HDR V2 compressed, base64, µs: connect, tls, waiting, receiving.
    pub histograms: [String; 4],
}

impl HttpTiming {
    pub fn from_stats(t: &TimingStats) -> HttpTiming {
        use crate::histogram::encode_histogram;
        use crate::latency::LatencyMs;
        HttpTiming {
            new_connections: t.new_connections,
            reused_connections: t.reused_connections,
            connect_ms: LatencyMs::from_histogram(&t.connect),
            tls_ms: LatencyMs::from_histogram(&t.tls),
            waiting_ms: LatencyMs::from_histogram(&t.waiting),
            receiving_ms: LatencyMs::from_histogram(&t.receiving),
            histograms: [&t.connect, &t.tls, &t.waiting, &t.receiving].map(encode_histogram),
        }
    }

    /// The stats back from a result (a histogram that does not decode counts as empty).
    pub fn to_stats(&self) -> TimingStats {
        let mut t = TimingStats {
            new_connections: self.new_connections,
            reused_connections: self.reused_connections,
            ..TimingStats::default()
        };
        for (into, text) in [&mut t.connect, &mut t.tls, &mut t.waiting, &mut t.receiving]
            .into_iter()
            .zip(&self.histograms)
        {
            if let Ok(h) = crate::histogram::decode_histogram(text) {
                // Same range, other precision: add re-records value by value.
                let _ = into.add(&h);
            }
        }
        t
    }

    /// Several results' timings merged exactly; None when none has any.
    pub fn merge<'a>(parts: impl IntoIterator<Item = &'a HttpTiming>) -> Option<HttpTiming> {
        let mut all: Option<TimingStats> = None;
        for p in parts {
            let s = p.to_stats();
            match &mut all {
                Some(a) => a.merge(&s),
                None => all = Some(s),
            }
        }
        all.as_ref().map(HttpTiming::from_stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(conn: ConnUse, connect_us: u32, waiting_us: u32) -> Timing {
        Timing {
            conn,
            connect_us,
            tls_us: 0,
            waiting_us,
            receiving_us: 3,
        }
    }

    #[test]
    fn results_merge_to_the_stats_of_all_requests() {
        let (mut a, mut b, mut all) = Default::default();
        let (a, b, all): (&mut TimingStats, &mut TimingStats, &mut TimingStats) =
            (&mut a, &mut b, &mut all);
        for (i, t) in [
            timed(ConnUse::New, 120, 900),
            timed(ConnUse::Reused, 0, 450),
            timed(ConnUse::Reused, 0, 47_000),
            timed(ConnUse::New, 300, 80),
            timed(ConnUse::Untimed, 0, 0),
        ]
        .iter()
        .enumerate()
        {
            if i % 2 == 0 { &mut *a } else { &mut *b }.record(t);
            all.record(t);
        }
        let merged =
            HttpTiming::merge([&HttpTiming::from_stats(a), &HttpTiming::from_stats(b)]).unwrap();
        // Exact: the same histograms (NaN figures, which never equal, aside).
        let whole = HttpTiming::from_stats(all);
        assert_eq!(merged.histograms, whole.histograms);
        assert_eq!(merged.waiting_ms, whole.waiting_ms);
        assert_eq!((merged.new_connections, merged.reused_connections), (2, 2));
        assert!(merged.tls_ms.p50.is_nan(), "no handshake, no figure");
        assert_eq!(HttpTiming::merge([]), None);
    }
}
