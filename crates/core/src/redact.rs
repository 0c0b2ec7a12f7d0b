//! Secret redaction. Tokens, passwords and credential headers never reach a report, log or
//! stored result: every place that shows a header or a URL goes through these functions.

/// What a redacted value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Header names whose values are always secret.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
];
/// Parts of header or parameter names that mark a secret (`X-Api-Key`, `access_token`…).
const SECRET_PARTS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "api-key",
    "api_key",
    "auth",
    "session",
    "credential",
    "signature",
];

/// Whether a header (or query parameter) name carries a secret.
pub fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_HEADERS.contains(&lower.as_str()) || SECRET_PARTS.iter().any(|p| lower.contains(p))
}

/// `Name: value` with the value redacted when the name is secret.
pub fn header_line(name: &str, value: &str) -> String {
    if is_secret_name(name) {
        format!("{name}: {REDACTED}")
    } else {
        format!("{name}: {value}")
    }
}

/// A URL with its password and secret query parameters redacted. Works on the text so it
/// needs no URL parser: `scheme://user:pass@host/path?token=x&a=1`.
pub fn url(raw: &str) -> String {
    let (before_query, query) = match raw.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (raw, None),
    };
    let mut out = String::with_capacity(raw.len());
    match before_query.split_once("://") {
        Some((scheme, rest)) => {
            out.push_str(scheme);
            out.push_str("://");
            let auth_end = rest.find('/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(auth_end);
            match authority.rsplit_once('@') {
                Some((userinfo, host)) => {
                    match userinfo.split_once(':') {
                        Some((user, _)) => {
                            out.push_str(user);
                            out.push(':');
                            out.push_str(REDACTED);
                        }
                        None => out.push_str(userinfo),
                    }
                    out.push('@');
                    out.push_str(host);
                }
                None => out.push_str(authority),
            }
            out.push_str(path);
        }
        None => out.push_str(before_query),
    }
    if let Some(q) = query {
        out.push('?');
        let parts: Vec<String> = q
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if is_secret_name(k) => format!("{k}={REDACTED}"),
                _ => kv.to_string(),
            })
            .collect();
        out.push_str(&parts.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        assert_eq!(
            header_line("Authorization", "Bearer abc"),
            "Authorization: [redacted]"
        );
        assert_eq!(header_line("X-Api-Key", "k"), "X-Api-Key: [redacted]");
        assert_eq!(header_line("X-Auth-Token", "t"), "X-Auth-Token: [redacted]");
        assert_eq!(header_line("Accept", "*/*"), "Accept: */*");
    }

    #[test]
    fn urls() {
        assert_eq!(
            url("postgres://bench:s3cret@127.0.0.1:5432/db"),
            "postgres://bench:[redacted]@127.0.0.1:5432/db"
        );
        assert_eq!(
            url("http://127.0.0.1/a?token=x&n=1&api_key=y"),
            "http://127.0.0.1/a?token=[redacted]&n=1&api_key=[redacted]"
        );
        assert_eq!(url("http://127.0.0.1:8080/"), "http://127.0.0.1:8080/");
        assert_eq!(
            url("redis://:pw@127.0.0.1"),
            "redis://:[redacted]@127.0.0.1"
        );
    }
}
