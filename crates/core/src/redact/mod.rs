//! Secret redaction. Tokens, passwords and credential headers never reach a report, log or
//! stored result: every place that shows a header or a URL goes through these functions.

/// What a redacted value is replaced with.
pub const REDACTED: &str = "[redacted]";

mod known;
pub use known::{forget_all, known, remember, remember_url};

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
    "passphrase",
    "private",
];
/// Whole words of a name that mark a secret: too short to look for inside other words
/// (`key` is in `monkey`, `sid` in `inside`), so only a word of their own counts.
const SECRET_WORDS: &[&str] = &[
    "key", "sig", "jwt", "code", "sid", "pass", "pwd", "otp", "sas", "hmac",
];

/// Text from outside (a server's error body, a file name) made safe to print: every control
/// character, ESC, BEL, NUL, CR, LF, DEL and the C1 range included, is written as a visible
/// escape (`\x1b`, `\u{9b}`), so it can neither move the cursor, recolour nor retitle a
/// terminal, nor split a line or a table row. Text without one is returned as it is.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if (c as u32) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether a header (or query parameter) name carries a secret: a credential header, a name
/// holding one of [`SECRET_PARTS`], or a name with one of [`SECRET_WORDS`] as a whole word
/// between `-`, `_` or `.` (`X-Api-Jwt`, `Ocp-Apim-Subscription-Key`, `access_key`, `sig`).
pub fn is_secret_name(name: &str) -> bool {
    // Trimmed: ` Authorization` from a sloppy header line is still Authorization.
    let lower = name.trim().to_ascii_lowercase();
    SECRET_HEADERS.contains(&lower.as_str())
        || SECRET_PARTS.iter().any(|p| lower.contains(p))
        || lower
            .split(['-', '_', '.'])
            .any(|word| SECRET_WORDS.contains(&word))
}

/// Whether `value`, under `name`, is a credential written out: the name is secret
/// ([`is_secret_name`]) and the value holds text besides `${VAR}` references, `{{…}}`
/// templates and captures, and an `Authorization` header's scheme word (`Bearer {{token}}`
/// is not one; `Bearer SUPERSECRET{{x}}` is). The one rule for the importers, which turn such
/// a value into a variable, and `perfbase k8s`, which refuses a plan that holds one.
pub fn is_written_secret(name: &str, value: &str) -> bool {
    if !is_secret_name(name) {
        return false;
    }
    let lower = name.trim().to_ascii_lowercase();
    let mut text = match value.trim().split_once(' ') {
        Some((_, credentials)) if lower.ends_with("authorization") => credentials,
        _ => value,
    };
    let mut rest = String::with_capacity(text.len());
    while let Some(i) = text.find(['$', '{']) {
        let (close, open) = match &text[i..] {
            t if t.starts_with("${") => ("}", 2),
            t if t.starts_with("{{") => ("}}", 2),
            _ => {
                rest.push_str(&text[..=i]);
                text = &text[i + 1..];
                continue;
            }
        };
        rest.push_str(&text[..i]);
        match text[i + open..].find(close) {
            Some(end) => text = &text[i + open + end + close.len()..],
            // Unclosed: the rest is literal.
            None => {
                rest.push_str(&text[i..]);
                text = "";
            }
        }
    }
    rest.push_str(text);
    !rest.trim().is_empty()
}

/// A label's value as shown to others (a web page, a shared table): redacted whole under a
/// secret name, else with any URL's password and libpq password in it redacted.
pub fn label(key: &str, value: &str) -> String {
    if is_secret_name(key) {
        REDACTED.to_string()
    } else {
        text(value)
    }
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
    let Some((scheme, rest)) = raw.split_once("://") else {
        return query(raw);
    };
    // Where the user info ends. For http(s) the authority stops at the first '/', '?' or '#'
    // (RFC 3986 §3.2); the database and broker drivers split at the last '@', so a raw '/'
    // or '?' may sit in their passwords and the redactor must cut where they do.
    let web = matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https");
    let at = if web {
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        rest[..end].rfind('@')
    } else {
        rest.rfind('@')
    };
    let mut out = format!("{scheme}://");
    let after = match at {
        Some(at) => {
            let info = &rest[..at];
            match info.split_once(':') {
                Some((user, _)) => {
                    out.push_str(user);
                    out.push(':');
                    out.push_str(REDACTED);
                }
                // A lone name is the password (`redis://pw@host`) or the token
                // (`nats://token@host`) to those drivers.
                None if lone_name_is_secret(scheme) => out.push_str(REDACTED),
                None => out.push_str(info),
            }
            out.push('@');
            &rest[at + 1..]
        }
        None => rest,
    };
    out.push_str(&query(after));
    out
}

/// Free text (an error message) with every URL in it redacted as [`url`] does: the last
/// line of defence for messages that quote what the user wrote. A URL starts at its scheme
/// and runs to the next whitespace or quote; outside URLs, a libpq `password=` value is
/// redacted too ([`conninfo`]).
pub fn text(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(sep) = rest.find("://") {
        // The scheme starts after the last character that cannot be in one (which may be
        // several bytes long: step over the whole character).
        let scheme_start = rest[..sep]
            .char_indices()
            .rfind(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let end = rest[sep..]
            .find(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`'))
            .map_or(rest.len(), |i| sep + i);
        out.push_str(&conninfo(&rest[..scheme_start]));
        if scheme_start == sep {
            // "://" with no scheme before it: not a URL.
            out.push_str(&rest[sep..end]);
        } else {
            out.push_str(&url(&rest[scheme_start..end]));
        }
        rest = &rest[end..];
    }
    out.push_str(&conninfo(rest));
    out
}

/// A libpq connection string (`host=… password=secret`) with its password redacted.
pub fn conninfo(s: &str) -> String {
    keyword(s, "password")
}

/// `text` with each known secret value (a password the caller holds) replaced by the marker;
/// values shorter than 3 characters are left alone, since replacing every such fragment
/// would garble the text.
pub fn scrub(text: &str, secrets: &[&str]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if s.len() >= 3 {
            out = out.replace(s, REDACTED);
        }
    }
    out
}

/// Replaces the value after each `key =` (`password = value`, `password='…'`) with the marker.
fn keyword(s: &str, key: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(key) {
        out.push_str(&rest[..i + key.len()]);
        let mut after = &rest[i + key.len()..];
        let trimmed = after.trim_start();
        let Some(eq) = trimmed.strip_prefix('=') else {
            rest = after;
            continue;
        };
        out.push_str(&after[..after.len() - trimmed.len()]);
        out.push('=');
        let value = eq.trim_start();
        out.push_str(&eq[..eq.len() - value.len()]);
        after = value;
        out.push_str(REDACTED);
        let end = if let Some(quoted) = after.strip_prefix('\'') {
            // A quoted value ends at the next unescaped quote.
            let mut end = after.len();
            let mut escaped = false;
            for (j, c) in quoted.char_indices() {
                match c {
                    '\\' if !escaped => escaped = true,
                    '\'' if !escaped => {
                        end = j + 2;
                        break;
                    }
                    _ => escaped = false,
                }
            }
            end
        } else {
            after.find(char::is_whitespace).unwrap_or(after.len())
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

fn lone_name_is_secret(scheme: &str) -> bool {
    let s = scheme.to_ascii_lowercase();
    s.starts_with("redis") || s.starts_with("nats") || s == "tls"
}

/// `path?a=1&token=x` with the values of secret-named parameters redacted.
fn query(text: &str) -> String {
    let Some((before, q)) = text.split_once('?') else {
        return text.to_string();
    };
    let parts: Vec<String> = q
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if is_secret_name(k) => format!("{k}={REDACTED}"),
            _ => kv.to_string(),
        })
        .collect();
    format!("{before}?{}", parts.join("&"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_written_secret_is_text_besides_placeholders() {
        for (name, value) in [
            ("Authorization", "Bearer SUPERSECRET{{x}}"),
            ("Authorization", "Bearer abc"),
            ("X-Api-Key", "k-{{n}}"),
            ("token", "abc${X"),
            ("password", "hunter2"),
            ("Proxy-Authorization", "Basic ${A}x"),
        ] {
            assert!(is_written_secret(name, value), "{name}: {value}");
        }
        for (name, value) in [
            ("Authorization", "Bearer {{token}}"),
            ("Authorization", "Bearer ${TOKEN}"),
            ("X-Api-Key", "${KEY}"),
            ("password", "{{p}}${Q}"),
            ("password", ""),
            ("Accept", "text/plain"),
        ] {
            assert!(!is_written_secret(name, value), "{name}: {value}");
        }
    }

    #[test]
    fn control_characters_print_as_escapes() {
        assert_eq!(printable("plain text"), "plain text");
        assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(
            printable("\u{1b}]0;pwned\u{7}\u{1b}[2Jall thresholds passed\r\n\0\u{7f}\u{9b}"),
            "\\x1b]0;pwned\\x07\\x1b[2Jall thresholds passed\\x0d\\x0a\\x00\\x7f\\u{9b}"
        );
        // Escaping twice changes nothing.
        let once = printable("a\u{1b}b").into_owned();
        assert_eq!(printable(&once), once);
    }

    use super::*;

    #[test]
    fn headers() {
        assert_eq!(
            header_line("Authorization", "Bearer abc"),
            "Authorization: [redacted]"
        );
        assert_eq!(header_line("X-Api-Key", "k"), "X-Api-Key: [redacted]");
        // libpq's key=value form, alone or inside an error message, and known secrets.
        assert_eq!(
            conninfo("host=h password = 'a b\\'c' user=u"),
            "host=h password = [redacted] user=u"
        );
        assert_eq!(
            text("cannot connect to host=h password=s3 port=5: password authentication failed"),
            "cannot connect to host=h password=[redacted] port=5: password authentication failed"
        );
        assert_eq!(
            scrub("pw hunter2 and ab", &["hunter2", "ab"]),
            "pw [redacted] and ab"
        );
        // Found by fuzzing: a name with surrounding white space is still a secret's name.
        assert_eq!(header_line("\nCookie ", "s=1"), "\nCookie : [redacted]");
        assert_eq!(header_line("X-Auth-Token", "t"), "X-Auth-Token: [redacted]");
        assert_eq!(header_line("Accept", "*/*"), "Accept: */*");
        // Issue 30, item 11: short words count only as whole words of the name.
        for secret in [
            "sig",
            "key",
            "jwt",
            "code",
            "access_key",
            "sid",
            "pass",
            "X-Api-Jwt",
            "Ocp-Apim-Subscription-Key",
            "X-Goog-Api-Key",
            "X-Amz-Signature",
            "private_key",
        ] {
            assert!(is_secret_name(secret), "{secret}");
        }
        for plain in [
            "monkey",
            "inside",
            "compass",
            "codec",
            "Accept",
            "X-Request-Id",
            "page",
        ] {
            assert!(!is_secret_name(plain), "{plain}");
        }
        assert_eq!(
            url("http://127.0.0.1/a?sig=s&key=k&jwt=j&code=c&access_key=a&sid=i&pass=p&n=1"),
            "http://127.0.0.1/a?sig=[redacted]&key=[redacted]&jwt=[redacted]&code=[redacted]\
             &access_key=[redacted]&sid=[redacted]&pass=[redacted]&n=1"
        );
    }

    #[test]
    fn urls_in_text() {
        assert_eq!(
            text("'ftp://alice:PW@127.0.0.1/?token=T': unsupported scheme 'ftp'"),
            "'ftp://alice:[redacted]@127.0.0.1/?token=[redacted]': unsupported scheme 'ftp'"
        );
        assert_eq!(
            text("found 'GET http://a:PW@127.0.0.1/ extra' and redis://pw@h:1 too"),
            "found 'GET http://a:[redacted]@127.0.0.1/ extra' and redis://[redacted]@h:1 too"
        );
        assert_eq!(text("no url here: a://"), "no url here: a://");
        assert_eq!(text("://x"), "://x");
        assert_eq!(text("plain"), "plain");
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

    #[test]
    fn lone_names_that_drivers_read_as_secrets() {
        assert_eq!(
            url("redis://pw@127.0.0.1:6379"),
            "redis://[redacted]@127.0.0.1:6379"
        );
        assert_eq!(
            url("redis+cluster://pw@127.0.0.1:7000,127.0.0.1:7001"),
            "redis+cluster://[redacted]@127.0.0.1:7000,127.0.0.1:7001"
        );
        assert_eq!(
            url("nats://tok@127.0.0.1:4222"),
            "nats://[redacted]@127.0.0.1:4222"
        );
        // A lone name is a user elsewhere, and stays.
        assert_eq!(
            url("amqp://guest@127.0.0.1:5672/%2f"),
            "amqp://guest@127.0.0.1:5672/%2f"
        );
        assert_eq!(
            url("postgres://bench@127.0.0.1/db"),
            "postgres://bench@127.0.0.1/db"
        );
    }

    #[test]
    fn a_multibyte_character_before_a_scheme_is_no_panic() {
        // Found by the header fuzzer: the scheme's start was taken one byte after a 'é'.
        assert_eq!(text("é://x"), "é://x");
        assert_eq!(
            text("café:http://u:pw@h/ é"),
            "café:http://u:[redacted]@h/ é"
        );
    }

    #[test]
    fn raw_slashes_and_question_marks_in_backend_passwords() {
        assert_eq!(url("redis://:pa/ss@h:1"), "redis://:[redacted]@h:1");
        assert_eq!(
            url("mysql://u:p?w/d@h:3306/db"),
            "mysql://u:[redacted]@h:3306/db"
        );
        assert_eq!(url("mqtt://u:p@ss@h:1"), "mqtt://u:[redacted]@h:1");
        // For the web the authority ends at the first '/': an '@' in the path is no user info.
        assert_eq!(
            url("http://127.0.0.1/users/@me"),
            "http://127.0.0.1/users/@me"
        );
        assert_eq!(
            url("https://u:pw@127.0.0.1/a"),
            "https://u:[redacted]@127.0.0.1/a"
        );
        assert_eq!(
            url("no-scheme?token=1&b=2"),
            "no-scheme?token=[redacted]&b=2"
        );
    }
}
