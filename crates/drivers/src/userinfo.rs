//! URL user-info helpers: the one percent-decoding of passwords every driver uses.

/// Decodes `%XX` escapes (a URL's user info); `None` when the result is not UTF-8.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    String::from_utf8(percent_decode_bytes(s)).ok()
}

/// The drivers' one percent-decoding rule ([`perfbase_core::percent::decode`]).
pub(crate) fn percent_decode_bytes(s: &str) -> Vec<u8> {
    perfbase_core::percent::decode(s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn decodes_escapes_and_keeps_broken_ones() {
        assert_eq!(super::percent_decode("p%2Bq"), Some("p+q".to_string()));
        assert_eq!(super::percent_decode("a%40b%2"), Some("a@b%2".to_string()));
    }
}
