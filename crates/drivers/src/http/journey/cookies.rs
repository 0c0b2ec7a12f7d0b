//! An iteration's cookie jar (RFC 6265): what `Set-Cookie` stores, by name, domain and path,
//! goes back in `Cookie` on the requests its domain and path cover, as browsers and k6 do: a
//! cookie without `Domain` only to the host that set it, one with `Domain` only if that
//! domain covers the host that set it (a server cannot set cookies for another site), and a
//! `Secure` one only over https (and only set from https). The `cookie` crate parses; a jar
//! lives for one iteration, as k6's does by default, so `Expires` only ever deletes.

use cookie::time::OffsetDateTime;
use cookie::Cookie;
use hyper::header::{HeaderMap, HeaderValue, SET_COOKIE};

struct Stored {
    name: String,
    value: String,
    path: String,
    /// The host it was set by (host-only), or the `Domain` it covers, lower case.
    domain: String,
    host_only: bool,
    secure: bool,
}

/// Where a request goes: its host (lower case, no port) and whether over https.
#[derive(Clone, Copy)]
pub(crate) struct Site<'a> {
    pub(crate) host: &'a str,
    pub(crate) secure: bool,
}

/// Whether `host` is `domain` or a name under it (§5.1.3); an IP address only itself.
fn domain_matches(host: &str, domain: &str) -> bool {
    host == domain
        || (host.len() > domain.len()
            && host.ends_with(domain)
            && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
            && host.parse::<std::net::IpAddr>().is_err())
}

#[derive(Default)]
pub(crate) struct Jar {
    cookies: Vec<Stored>,
}

/// The default path of a cookie set in answer to `request_path` (RFC 6265 §5.1.4): the
/// path up to its last `/`, or `/`.
fn default_path(request_path: &str) -> String {
    let path = request_path.split('?').next().unwrap_or("");
    match path.rfind('/') {
        Some(0) | None => "/".into(),
        Some(i) => path[..i].into(),
    }
}

/// Whether a cookie of path `cookie` goes with a request for `request` (§5.1.4).
fn path_matches(cookie: &str, request: &str) -> bool {
    let request = request.split('?').next().unwrap_or("");
    request == cookie
        || (request.starts_with(cookie)
            && (cookie.ends_with('/') || request.as_bytes().get(cookie.len()) == Some(&b'/')))
}

impl Jar {
    pub(crate) fn clear(&mut self) {
        self.cookies.clear();
    }

    /// Stores what the answer to `request_path` set; a cookie that expired (Max-Age ≤ 0, a
    /// past Expires) removes its name. Headers that do not parse are skipped, as browsers do.
    /// A cookie for another site (its `Domain` does not cover `site`'s host) or a `Secure`
    /// one over http is ignored (§5.3).
    pub(crate) fn store(&mut self, headers: &HeaderMap, site: Site<'_>, request_path: &str) {
        for value in headers.get_all(SET_COOKIE) {
            let Ok(text) = value.to_str() else { continue };
            let Ok(c) = Cookie::parse(text) else { continue };
            let domain = c
                .domain()
                .map(|d| d.trim_start_matches('.').to_ascii_lowercase());
            let (domain, host_only) = match domain.filter(|d| !d.is_empty()) {
                Some(d) if domain_matches(site.host, &d) => (d, false),
                Some(_) => continue,
                None => (site.host.to_string(), true),
            };
            let secure = c.secure().unwrap_or(false);
            if secure && !site.secure {
                continue;
            }
            let path = match c.path() {
                Some(p) if p.starts_with('/') => p.to_string(),
                _ => default_path(request_path),
            };
            let expired = c.max_age().is_some_and(|a| a.is_zero() || a.is_negative())
                || c.expires_datetime()
                    .is_some_and(|at| at <= OffsetDateTime::now_utc());
            self.cookies
                .retain(|s| !(s.name == c.name() && s.path == path && s.domain == domain));
            if !expired {
                self.cookies.push(Stored {
                    name: c.name().to_string(),
                    value: c.value().to_string(),
                    path,
                    domain,
                    host_only,
                    secure,
                });
            }
        }
    }

    /// The `Cookie` header for a request to `request_path`: longer paths first (§5.4).
    pub(crate) fn header(&self, site: Site<'_>, request_path: &str) -> Option<HeaderValue> {
        let mut sent: Vec<&Stored> = self
            .cookies
            .iter()
            .filter(|s| path_matches(&s.path, request_path))
            .filter(|s| {
                let host = if s.host_only {
                    site.host == s.domain
                } else {
                    domain_matches(site.host, &s.domain)
                };
                host && (site.secure || !s.secure)
            })
            .collect();
        if sent.is_empty() {
            return None;
        }
        sent.sort_by_key(|s| std::cmp::Reverse(s.path.len()));
        let line = sent
            .iter()
            .map(|s| format!("{}={}", s.name, s.value))
            .collect::<Vec<_>>()
            .join("; ");
        HeaderValue::from_str(&line).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SITE: Site<'static> = Site {
        host: "shop.example",
        secure: false,
    };

    fn set_at(jar: &mut Jar, site: Site<'_>, lines: &[&str], path: &str) {
        let mut h = HeaderMap::new();
        for l in lines {
            h.append(SET_COOKIE, HeaderValue::from_str(l).expect("value"));
        }
        jar.store(&h, site, path);
    }

    fn set(jar: &mut Jar, lines: &[&str], path: &str) {
        set_at(jar, SITE, lines, path);
    }

    /// RFC 6265 as browsers and k6 keep it (issue 47's judgement call): no cookie for another
    /// site, a Domain cookie to the names under it, a host-only one to its host alone, and a
    /// Secure one only over https.
    #[test]
    fn domains_and_secure_are_kept_as_browsers_keep_them() {
        let mut jar = Jar::default();
        let api = Site {
            host: "api.shop.example",
            secure: false,
        };
        let tls = Site {
            host: "api.shop.example",
            secure: true,
        };
        set_at(
            &mut jar,
            api,
            &[
                "evil=1; Domain=evil.example",
                "wide=2; Domain=.shop.example",
                "own=3",
                "sec=4; Secure",
            ],
            "/",
        );
        assert_eq!(jar.header(api, "/").expect("two"), "wide=2; own=3");
        assert_eq!(jar.header(SITE, "/").expect("wide"), "wide=2");
        let other = Site {
            host: "other.example",
            secure: false,
        };
        assert!(jar.header(other, "/").is_none());
        set_at(&mut jar, tls, &["sec=4; Secure"], "/");
        assert!(jar
            .header(api, "/")
            .unwrap()
            .to_str()
            .unwrap()
            .find("sec")
            .is_none());
        assert!(jar
            .header(tls, "/")
            .unwrap()
            .to_str()
            .unwrap()
            .contains("sec=4"));
        // An IP address matches only itself.
        assert!(!domain_matches("10.0.0.1", "0.0.1"));
    }

    #[test]
    fn cookies_go_back_on_the_paths_they_cover_and_expire() {
        let mut jar = Jar::default();
        set(
            &mut jar,
            &["sid=s-1; Path=/; HttpOnly", "cart=3; Path=/shop", "bad"],
            "/login",
        );
        assert_eq!(jar.header(SITE, "/session").expect("sid"), "sid=s-1");
        assert_eq!(
            jar.header(SITE, "/shop/x?y=1").expect("both"),
            "cart=3; sid=s-1"
        );
        assert_eq!(jar.header(SITE, "/shopping").expect("sid only"), "sid=s-1");
        set(&mut jar, &["sid=s-2; Path=/"], "/");
        assert_eq!(jar.header(SITE, "/").expect("replaced"), "sid=s-2");
        set(&mut jar, &["sid=; Max-Age=0; Path=/"], "/");
        assert!(jar.header(SITE, "/").is_none());
        set(&mut jar, &["a=1"], "/dir/page");
        assert!(jar.header(SITE, "/other").is_none());
        assert_eq!(jar.header(SITE, "/dir/x").expect("default path"), "a=1");
        jar.clear();
        assert!(jar.header(SITE, "/dir/x").is_none());
    }
}
