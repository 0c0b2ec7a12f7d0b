//! The secrets this process itself sends: a Vault token, a URL's password, the value of a
//! credential header. A server may echo any of them back in an error body (its request
//! head, an `AUTH` command), and perfbase keeps such bodies as error samples, so every sample
//! and every error message has them replaced by the marker before it is kept or shown.
//! Names cannot find them there; only their values can.

use super::REDACTED;
use std::borrow::Cow;
use std::sync::RwLock;

/// Every secret remembered, longest first (so `Bearer abc` goes whole before `abc`).
static KNOWN: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Secrets shorter than this are not looked for: replacing every `ab` in a message would
/// garble it, and such a secret protects nothing anyway.
const SHORTEST: usize = 3;

/// Remembers `secret` (and, for a credential such as `Bearer abc`, its last word) as a value
/// to replace wherever it shows up from now on.
pub fn remember(secret: &str) {
    let secret = secret.trim();
    let mut add = vec![secret];
    if let Some((_, credential)) = secret.rsplit_once(' ') {
        add.push(credential.trim());
    }
    let Ok(mut known) = KNOWN.write() else {
        return;
    };
    for s in add {
        if s.len() >= SHORTEST && !known.iter().any(|k| k == s) {
            known.push(s.to_string());
        }
    }
    known.sort_by_key(|k| std::cmp::Reverse(k.len()));
}

/// Remembers the secrets a URL carries: its password (or the lone name redis:// and nats://
/// read as one), and the values of secret-named query parameters, both as written and
/// percent-decoded.
pub fn remember_url(raw: &str) {
    let mut found = Vec::new();
    let rest = raw.split_once("://").map_or(raw, |(scheme, rest)| {
        let web = matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https");
        let end = if web {
            rest.find(['/', '?', '#']).unwrap_or(rest.len())
        } else {
            rest.len()
        };
        match rest[..end].rfind('@') {
            Some(at) => {
                match rest[..at].split_once(':') {
                    Some((_, pass)) => found.push(pass),
                    None if super::lone_name_is_secret(scheme) => found.push(&rest[..at]),
                    None => {}
                }
                &rest[at + 1..]
            }
            None => rest,
        }
    });
    if let Some((_, query)) = rest.split_once('?') {
        let query = query.split('#').next().unwrap_or("");
        for (k, v) in query.split('&').filter_map(|kv| kv.split_once('=')) {
            if super::is_secret_name(k) {
                found.push(v);
            }
        }
    }
    for s in found {
        remember(s);
        remember(&String::from_utf8_lossy(&crate::percent::decode(s)));
    }
}

/// `text` with every remembered secret replaced by the marker (unchanged, and not copied,
/// when it holds none).
pub fn known(text: &str) -> Cow<'_, str> {
    let Ok(secrets) = KNOWN.read() else {
        return Cow::Borrowed(text);
    };
    if !secrets.iter().any(|s| text.contains(s.as_str())) {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for s in secrets.iter() {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), REDACTED);
        }
    }
    Cow::Owned(out)
}

/// Forgets every remembered secret (tests that remember their own).
pub fn forget_all() {
    if let Ok(mut known) = KNOWN.write() {
        known.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_values_are_replaced_wherever_they_show() {
        // One test owns the process-wide list, so no other test races its contents.
        forget_all();
        assert_eq!(known("no secret yet"), "no secret yet");
        remember("Bearer s3cr3t-token");
        remember_url("redis://hunter%2B2@127.0.0.1:6379");
        remember_url("http://u:pw%40x@127.0.0.1/a?sig=abc123&n=1#f");
        remember("ab");
        let echoed = "GET / HTTP/1.1\r\nAuthorization: Bearer s3cr3t-token\r\n\
                      AUTH hunter+2 / hunter%2B2, pw@x, sig=abc123 ab";
        assert_eq!(
            known(echoed),
            "GET / HTTP/1.1\r\nAuthorization: [redacted]\r\n\
             AUTH [redacted] / [redacted], [redacted], sig=[redacted] ab"
        );
        assert_eq!(known("s3cr3t-token alone"), "[redacted] alone");
        assert!(matches!(known("nothing here"), Cow::Borrowed(_)));
        // A server's error body that echoes the request head is kept as a sample without the
        // token: the one place every driver's samples go through.
        let mut r = crate::Recorder::new(false);
        let echo = crate::Outcome::error(
            crate::Class::Http5xx,
            "server error (500): cannot handle: X-Vault-Token: Bearer s3cr3t-token\r\n\u{1b}[2J",
        );
        r.count_unmeasured(&echo, std::time::Duration::ZERO);
        assert_eq!(
            r.error_samples()[0].message,
            "server error (500): cannot handle: X-Vault-Token: [redacted]\\x0d\\x0a\\x1b[2J"
        );
        forget_all();
    }
}
