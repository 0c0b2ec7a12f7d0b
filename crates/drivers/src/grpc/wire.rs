//! gRPC's own layer over HTTP/2: every message is a 5-byte prefix (a compressed flag and a
//! big-endian length) and its bytes; a call ends with `grpc-status` and `grpc-message` in the
//! trailers, or in the headers when the server answers at once ("Trailers-Only").

/// The names gRPC gives its status codes, by code (0–16), as every gRPC library spells them.
const NAMES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// DEADLINE_EXCEEDED: the call outlived its deadline (told by the server, or our own timer).
pub(crate) const DEADLINE_EXCEEDED: u16 = 4;
/// UNIMPLEMENTED: what an HTTP 404 means for a gRPC call.
pub(crate) const UNIMPLEMENTED: u16 = 12;
/// INTERNAL: a reply that broke gRPC's rules.
pub(crate) const INTERNAL: u16 = 13;
/// UNAVAILABLE: what a 502, 503 or 504 from a proxy in front means.
pub(crate) const UNAVAILABLE: u16 = 14;
/// UNKNOWN: any other HTTP status, or a code outside 0–16.
pub(crate) const UNKNOWN: u16 = 2;

/// A status code's name; codes past 16 are the server's own, shown by number.
pub fn status_name(code: u16) -> String {
    NAMES
        .get(code as usize)
        .map(|n| n.to_string())
        .unwrap_or_else(|| format!("CODE_{code}"))
}

/// The gRPC status an HTTP status other than 200 stands for (gRPC's HTTP mapping).
pub(crate) fn status_of_http(status: u16) -> u16 {
    match status {
        400 => INTERNAL,
        401 => 16,
        403 => 7,
        404 => UNIMPLEMENTED,
        429 | 502..=504 => UNAVAILABLE,
        _ => UNKNOWN,
    }
}

/// The `grpc-timeout` header value for `d`: at most 8 digits, in the finest unit that fits.
pub(crate) fn timeout_header(d: std::time::Duration) -> String {
    let us = d.as_micros();
    if us < 100_000_000 {
        format!("{us}u")
    } else if us / 1000 < 100_000_000 {
        format!("{}m", us / 1000)
    } else {
        format!("{}S", (d.as_secs()).min(99_999_999))
    }
}

/// Appends `message` framed as one gRPC message (uncompressed).
pub(crate) fn frame(message: &[u8], out: &mut Vec<u8>) {
    out.push(0);
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
}

/// Counts the messages in a reply's DATA frames as they arrive, without keeping them: a
/// message's prefix may be split over frames, and a frame may end several messages.
#[derive(Debug, Default)]
pub(crate) struct Messages {
    /// The prefix read so far of the message being received.
    prefix: [u8; 5],
    prefix_len: usize,
    /// Bytes of the current message still to come after its prefix.
    remaining: u64,
    /// Messages received whole.
    pub(crate) count: u64,
}

impl Messages {
    /// Reads `chunk`; returns how many messages it completed.
    pub(crate) fn push(&mut self, mut chunk: &[u8]) -> u64 {
        let before = self.count;
        while !chunk.is_empty() {
            if self.remaining > 0 {
                let n = (self.remaining.min(chunk.len() as u64)) as usize;
                self.remaining -= n as u64;
                chunk = &chunk[n..];
                if self.remaining == 0 {
                    self.count += 1;
                }
                continue;
            }
            let n = (5 - self.prefix_len).min(chunk.len());
            self.prefix[self.prefix_len..self.prefix_len + n].copy_from_slice(&chunk[..n]);
            self.prefix_len += n;
            chunk = &chunk[n..];
            if self.prefix_len == 5 {
                self.prefix_len = 0;
                let len = u32::from_be_bytes([
                    self.prefix[1],
                    self.prefix[2],
                    self.prefix[3],
                    self.prefix[4],
                ]);
                if len == 0 {
                    self.count += 1;
                } else {
                    self.remaining = len as u64;
                }
            }
        }
        self.count - before
    }

    /// Whether the reply stopped inside a message (its prefix or its bytes).
    pub(crate) fn partial(&self) -> bool {
        self.prefix_len > 0 || self.remaining > 0
    }
}

/// A call's status from its trailers (or Trailers-Only headers): the code and the message,
/// percent-decoded as gRPC encodes it; None when `grpc-status` is absent.
pub(crate) fn status_of(headers: &hyper::HeaderMap) -> Option<(u16, String)> {
    let code = headers.get("grpc-status")?;
    let code = std::str::from_utf8(code.as_bytes())
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .unwrap_or(UNKNOWN);
    let message = headers
        .get("grpc-message")
        .map(|m| {
            let text = String::from_utf8_lossy(m.as_bytes());
            String::from_utf8_lossy(&perfbase_core::percent::decode(&text)).into_owned()
        })
        .unwrap_or_default();
    Some((code, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_counted_across_any_split_of_the_frames() {
        let mut bytes = Vec::new();
        frame(b"abc", &mut bytes);
        frame(b"", &mut bytes);
        frame(&[7u8; 300], &mut bytes);
        for cut in 0..bytes.len() {
            for cut2 in cut..bytes.len() {
                let mut m = Messages::default();
                let n = m.push(&bytes[..cut]) + m.push(&bytes[cut..cut2]) + m.push(&bytes[cut2..]);
                assert_eq!(
                    (n, m.count, m.partial()),
                    (3, 3, false),
                    "cuts {cut} {cut2}"
                );
            }
        }
        let mut m = Messages::default();
        m.push(&bytes[..bytes.len() - 1]);
        assert!(m.partial());
        assert_eq!(m.count, 2);
    }

    #[test]
    fn statuses_have_their_names_and_http_statuses_their_codes() {
        assert_eq!(status_name(14), "UNAVAILABLE");
        assert_eq!(status_name(4), "DEADLINE_EXCEEDED");
        assert_eq!(status_name(99), "CODE_99");
        assert_eq!(status_of_http(404), UNIMPLEMENTED);
        assert_eq!(status_of_http(503), UNAVAILABLE);
        assert_eq!(status_of_http(500), UNKNOWN);
    }

    #[test]
    fn the_timeout_header_fits_eight_digits() {
        use std::time::Duration;
        assert_eq!(timeout_header(Duration::from_millis(1500)), "1500000u");
        assert_eq!(timeout_header(Duration::from_secs(1000)), "1000000m");
        assert_eq!(
            timeout_header(Duration::from_secs(200_000_000)),
            "99999999S"
        );
    }

    #[test]
    fn a_status_message_is_percent_decoded() {
        let mut h = hyper::HeaderMap::new();
        h.insert("grpc-status", "5".parse().unwrap());
        h.insert("grpc-message", "no%20such%20feature".parse().unwrap());
        assert_eq!(status_of(&h), Some((5, "no such feature".into())));
        h.insert("grpc-status", "x".parse().unwrap());
        assert_eq!(status_of(&h).unwrap().0, UNKNOWN);
    }
}
