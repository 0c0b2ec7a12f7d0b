//! Percent-encoding both ways: the one decoding of URL user info every driver uses, and the
//! encoding that keeps a value from a plan or a corpus inside a request's target.

/// Decodes `%XX` escapes: each `%` followed by two hex digits is that byte; a `%` not
/// followed by two hex digits stays as written (`a%2` is `a%2`, `%zz` is `%zz`).
pub fn decode(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// Whether byte `b` cannot stand as itself in an HTTP request target (RFC 9112 §3.2 over
/// RFC 3986's characters): controls (CR and LF would end the request line and start a
/// header or a second request), space (it ends the target), `"`, `#` (a fragment is never
/// sent), `<`, `>`, `\`, `^`, `` ` ``, `{`, `|`, `}`, DEL and every byte above ASCII.
/// `%`, `/`, `?`, `&` and `=` stay: a value may be encoded already, or be a query.
pub fn unsafe_in_target(b: u8) -> bool {
    b <= b' ' || b >= 0x7f || b"\"#<>\\^`{|}".contains(&b)
}

/// Appends `bytes` to `out` with every byte [`unsafe_in_target`] written as `%XX`.
pub fn encode_target(bytes: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in bytes {
        if unsafe_in_target(b) {
            out.extend_from_slice(&[b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
        } else {
            out.push(b);
        }
    }
}

/// `s` as one component of a query string or path: everything but `A–Z a–z 0–9 - . _ ~`
/// percent-encoded, UTF-8 byte by byte.
pub fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_keeps_broken_ones() {
        assert_eq!(decode("p%2Bq"), b"p+q");
        assert_eq!(decode("a%40b%2"), b"a@b%2");
        assert_eq!(decode("%zz%"), b"%zz%");
    }

    #[test]
    fn a_target_keeps_no_byte_that_could_end_it() {
        let mut out = Vec::new();
        encode_target(
            b"/a b\r\nX: 1\r\n\r\nGET /x#f\0\xc3\xa9?q=%41&k={v}",
            &mut out,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "/a%20b%0D%0AX:%201%0D%0A%0D%0AGET%20/x%23f%00%C3%A9?q=%41&k=%7Bv%7D"
        );
    }
}
