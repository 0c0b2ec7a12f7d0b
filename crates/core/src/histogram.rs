//! The latency histograms' common range: microseconds from 1 µs to one hour. The recorder's
//! histograms (3 significant digits) and the timeline's per-second ones (2) share it, so
//! either can be built here without one depending on the other. Their text encoding in
//! results lives here too, for the same reason: results, the recorder's parts and the HTTP
//! timing section all encode without importing one another.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// Latencies are recorded in microseconds: loopback round trips are tens of µs, and the
/// range below reaches one hour, longer than any timeout perfbase accepts.
pub const UNIT_PER_S: u64 = 1_000_000;
/// The highest latency kept exactly (1 h in µs); longer ones are clamped to it.
pub const HIGHEST_US: u64 = 3_600 * UNIT_PER_S;
/// Significant digits kept by the main histograms.
pub const SIGFIG: u8 = 3;

/// A new, empty latency histogram with perfbase's range and precision.
pub fn new_histogram(sigfig: u8) -> Histogram<u64> {
    // Valid constant bounds (1 ≤ low, high ≥ 2·low, sigfig ≤ 5): construction cannot fail.
    Histogram::new_with_bounds(1, HIGHEST_US, sigfig).expect("constant histogram bounds are valid")
}

/// Encodes a histogram as HDR V2 compressed, base64.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    // Writing to a Vec has no I/O error; a failed compression leaves the field empty, which
    // decode_histogram reports.
    let _ = V2DeflateSerializer::new().serialize(h, &mut bytes);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes what [`encode_histogram`] wrote.
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    let mut slice = bytes.as_slice();
    let h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut slice)
        .map_err(|e| format!("histogram does not decode: {e:?}"))?;
    // Re-home into perfbase's bounds so merges of decoded histograms always add.
    let mut out = new_histogram(SIGFIG);
    let _ = out.add(&h);
    Ok(out)
}
