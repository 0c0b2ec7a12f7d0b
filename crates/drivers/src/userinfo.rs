//! URL user-info helpers: the one percent-decoding of passwords every driver uses.

/// Decodes `%XX` escapes (a URL's user info); `None` when the result is not UTF-8.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    String::from_utf8(percent_decode_bytes(s)).ok()
}

/// The drivers' one percent-decoding rule: each `%XX` with two hex digits is that byte; a `%`
/// not followed by two hex digits stays as written (`a%2` is `a%2`, `%zz` is `%zz`).
pub(crate) fn percent_decode_bytes(s: &str) -> Vec<u8> {
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

#[cfg(test)]
mod tests {
    #[test]
    fn decodes_escapes_and_keeps_broken_ones() {
        assert_eq!(super::percent_decode("p%2Bq"), Some("p+q".to_string()));
        assert_eq!(super::percent_decode("a%40b%2"), Some("a@b%2".to_string()));
    }
}
