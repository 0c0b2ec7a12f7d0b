//! HDR histograms as Prometheus native histograms: exponential buckets, bucket `i` holding
//! (base^(i-1), base^i] with base = 2^(2^-schema), sent as spans of consecutive buckets and
//! deltas between neighbouring counts.

use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// Schema 3: eight buckets per power of two, each about 9 % wide (Prometheus' default bucket
/// factor of 1.1 lands here). Finer would multiply series cost for no reader's benefit.
pub const SCHEMA: i32 = 3;
/// The zero bucket's width: only an exact 0 falls in it.
pub const ZERO_THRESHOLD: f64 = 0.0;

/// A native histogram's sparse buckets, in seconds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Native {
    pub schema: i32,
    pub zero_threshold: f64,
    pub zero_count: u64,
    /// (offset, length) of each run of consecutive buckets; the first offset is the first
    /// bucket's index, later ones the gap after the previous run.
    pub spans: Vec<(i32, u32)>,
    /// Each bucket's count minus the previous bucket's (the first: its count).
    pub deltas: Vec<i64>,
}

/// The bucket index of `x` > 0 seconds.
fn index(x: f64) -> i32 {
    (x.log2() * f64::from(1 << SCHEMA)).ceil() as i32
}

/// `h` (values in µs) as a native histogram in seconds.
pub fn from_hdr(h: &Histogram<u64>) -> Native {
    let mut zero_count = 0;
    let mut buckets: BTreeMap<i32, u64> = BTreeMap::new();
    for v in h.iter_recorded() {
        // The middle of HDR's bucket, so a value lands where its true value would.
        let us = h.median_equivalent(v.value_iterated_to());
        let n = v.count_at_value();
        if us == 0 {
            zero_count += n;
        } else {
            *buckets.entry(index(us as f64 / 1e6)).or_default() += n;
        }
    }
    let mut spans: Vec<(i32, u32)> = Vec::new();
    let mut deltas = Vec::with_capacity(buckets.len());
    let (mut last_index, mut last_count) = (None::<i32>, 0i64);
    for (&i, &n) in &buckets {
        match last_index {
            Some(prev) if i == prev + 1 => spans.last_mut().expect("a span is open").1 += 1,
            Some(prev) => spans.push((i - prev - 1, 1)),
            None => spans.push((i, 1)),
        }
        deltas.push(n as i64 - last_count);
        last_count = n as i64;
        last_index = Some(i);
    }
    Native {
        schema: SCHEMA,
        zero_threshold: ZERO_THRESHOLD,
        zero_count,
        spans,
        deltas,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads the buckets back: (upper bound in seconds, count).
    fn expand(n: &Native) -> Vec<(f64, u64)> {
        let base = 2f64.powf(2f64.powi(-n.schema));
        let (mut out, mut i, mut count, mut d) = (Vec::new(), 0i32, 0i64, n.deltas.iter());
        for (k, &(offset, len)) in n.spans.iter().enumerate() {
            i = if k == 0 { offset } else { i + offset };
            for _ in 0..len {
                count += d.next().unwrap();
                out.push((base.powi(i), count as u64));
                i += 1;
            }
        }
        out
    }

    #[test]
    fn every_value_lands_in_the_bucket_that_bounds_it_and_counts_add_up() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for (us, n) in [
            (100u64, 5u64),
            (101, 2),
            (250, 1),
            (10_000, 7),
            (1_000_000, 3),
        ] {
            h.record_n(us, n).unwrap();
        }
        let n = from_hdr(&h);
        let buckets = expand(&n);
        assert_eq!(buckets.iter().map(|b| b.1).sum::<u64>(), 18);
        let base = 2f64.powf(1.0 / 8.0);
        for (us, count) in [(100, 7), (250, 1), (10_000, 7), (1_000_000, 3)] {
            // Where HDR keeps the value: the middle of its 0.1 % wide bucket.
            let x = h.median_equivalent(us) as f64 / 1e6;
            let b = buckets.iter().find(|b| b.0 >= x && b.0 / base < x).unwrap();
            assert_eq!(b.1, count, "{x} s in {buckets:?}");
        }
        // 100 and 101 µs share a bucket; 250 µs is the next run after a gap.
        assert_eq!(n.spans.len(), 4, "{n:?}");
    }
}
