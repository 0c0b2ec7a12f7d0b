//! `${NAME}` inside a target URL, substituted so that it can never move the load elsewhere.
//!
//! A password such as `pw@127.0.0.1:1/x`, pasted raw into `http://bob:${PW}@host/`, would
//! make the URL's host `127.0.0.1:1` and send the load and the credentials there. So each
//! variable is substituted according to where it stands in the URL as written:
//! - the whole URL, or a leading base (`${BASE}/api` with `BASE=http://10.0.0.5:8080`): as is;
//! - the scheme, host or port: as is, but a value holding `@ / ? # \`, a space or a control
//!   character (which would end the host early) is refused;
//! - the user name or password, the query or the fragment: percent-encoded (everything but
//!   letters, digits and `-._~`), so the driver decodes exactly the value;
//! - the path: percent-encoded the same way, except `/`.

/// One piece of a URL as written: literal text, or a `${NAME}` and its value.
enum Piece<'a> {
    Text(&'a str),
    Var(&'a str, String),
}

/// Where a variable stands in the URL as written.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Part {
    /// Scheme, host or port: decides where the load goes.
    Address,
    UserInfo,
    Path,
    /// Query or fragment.
    Query,
}

/// Expands the `${NAME}`s of the URL `written`, looking each up with `lookup`. The error says
/// which variable is unset or would change where the load goes (without its value).
pub fn expand_url(
    written: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let pieces = pieces(written, lookup)?;
    // A leading variable that holds a scheme is a base URL (or the whole URL): taken as is.
    let base = match pieces.first() {
        Some(Piece::Var(_, v)) if v.contains("://") => 1,
        _ => 0,
    };
    // The URL with each other variable as a neutral placeholder, to see where each stands.
    let mut skeleton = String::new();
    let mut starts = Vec::new();
    for (i, p) in pieces.iter().enumerate() {
        match p {
            Piece::Text(t) => skeleton.push_str(t),
            Piece::Var(_, v) if i < base => skeleton.push_str(v),
            Piece::Var(..) => {
                starts.push((i, skeleton.len()));
                skeleton.push('v');
            }
        }
    }
    let parts: Vec<(usize, Part)> = starts
        .into_iter()
        .map(|(i, at)| (i, part_at(&skeleton, at)))
        .collect();
    let mut out = String::new();
    for (i, p) in pieces.iter().enumerate() {
        match p {
            Piece::Text(t) => out.push_str(t),
            Piece::Var(_, v) if i < base => out.push_str(v),
            Piece::Var(name, v) => {
                let part = parts.iter().find(|(j, _)| *j == i).map(|(_, p)| *p);
                match part.unwrap_or(Part::Query) {
                    Part::Address => {
                        if v.chars()
                            .any(|c| "@/?#\\".contains(c) || c.is_whitespace() || c.is_control())
                        {
                            return Err(format!(
                                "${{{name}}} stands in the URL's scheme, host or port, and its value \
                                 holds '@', '/', '?', '#', '\\' or a space, which would change where the \
                                 load goes (put the whole URL in the variable instead)"
                            ));
                        }
                        out.push_str(v);
                    }
                    Part::Path => encode(&mut out, v, b"/"),
                    Part::UserInfo | Part::Query => encode(&mut out, v, b""),
                }
            }
        }
    }
    Ok(out)
}

fn pieces(
    written: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Vec<Piece<'_>>, String> {
    let mut pieces = Vec::new();
    let mut rest = written;
    while let Some(i) = rest.find("${") {
        if i > 0 {
            pieces.push(Piece::Text(&rest[..i]));
        }
        let after = &rest[i + 2..];
        let end = after
            .find('}')
            .ok_or("unclosed '${' (write ${NAME} for an environment variable)")?;
        let name = &after[..end];
        let value = lookup(name).ok_or_else(|| {
            format!("environment variable {name} is not set (export it before the run)")
        })?;
        pieces.push(Piece::Var(name, value));
        rest = &after[end + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    Ok(pieces)
}

/// The part of `url` that byte offset `at` falls in (`scheme://userinfo@host:port/path?query#f`).
fn part_at(url: &str, at: usize) -> Part {
    let Some(scheme_end) = url.find("://") else {
        // No scheme: not a URL the drivers accept; the parser's error will say so.
        return Part::Address;
    };
    let authority_start = scheme_end + 3;
    if at < authority_start {
        return Part::Address;
    }
    let authority_end = url[authority_start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| authority_start + i);
    if at < authority_end {
        let authority = &url[authority_start..authority_end];
        return match authority.rfind('@') {
            Some(i) if at < authority_start + i => Part::UserInfo,
            _ => Part::Address,
        };
    }
    match url[authority_end..].find(['?', '#']) {
        Some(i) if at >= authority_end + i => Part::Query,
        _ => Part::Path,
    }
}

/// Appends `value` percent-encoded: all but ASCII letters, digits, `-._~` and `keep`.
fn encode(out: &mut String, value: &str, keep: &[u8]) {
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || keep.contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "PW" => Some("pw@127.0.0.1:1/x".into()),
            "BASE" => Some("http://10.0.0.5:8080".into()),
            "HOST" => Some("127.0.0.2".into()),
            "PORT" => Some("8081".into()),
            "BAD_HOST" => Some("127.0.0.1:1/x".into()),
            "Q" => Some("a&b=c d#e".into()),
            "P" => Some("v1/users x".into()),
            _ => None,
        }
    }

    #[test]
    fn a_password_is_encoded_and_cannot_move_the_host() {
        let u = expand_url("http://bob:${PW}@127.0.0.1:8080/", env).unwrap();
        assert_eq!(u, "http://bob:pw%40127.0.0.1%3A1%2Fx@127.0.0.1:8080/");
        let parsed = url::Url::parse(&u).unwrap();
        assert_eq!(parsed.host_str(), Some("127.0.0.1"));
        assert_eq!(parsed.port(), Some(8080));
        assert_eq!(parsed.password(), Some("pw%40127.0.0.1%3A1%2Fx"));
    }

    #[test]
    fn each_part_is_substituted_its_own_way() {
        assert_eq!(expand_url("${BASE}", env).unwrap(), "http://10.0.0.5:8080");
        assert_eq!(
            expand_url("${BASE}/api?k=${Q}", env).unwrap(),
            "http://10.0.0.5:8080/api?k=a%26b%3Dc%20d%23e"
        );
        assert_eq!(
            expand_url("http://${HOST}:${PORT}/${P}", env).unwrap(),
            "http://127.0.0.2:8081/v1/users%20x"
        );
        assert_eq!(
            expand_url("http://h/#${Q}", env).unwrap(),
            "http://h/#a%26b%3Dc%20d%23e"
        );
        assert_eq!(expand_url("http://h/plain", env).unwrap(), "http://h/plain");
    }

    #[test]
    fn a_host_variable_that_would_move_the_load_is_refused_without_its_value() {
        let e = expand_url("http://${BAD_HOST}/", env).unwrap_err();
        assert!(e.contains("${BAD_HOST}") && e.contains("where the"), "{e}");
        assert!(!e.contains("127.0.0.1:1"), "{e}");
        assert!(expand_url("http://${NOPE}/", env)
            .unwrap_err()
            .contains("NOPE is not set"));
        assert!(expand_url("http://${PW", env)
            .unwrap_err()
            .contains("unclosed"));
    }
}
