//! An iteration's cookie jar (RFC 6265) for the one origin a journey talks to: what
//! `Set-Cookie` stores, by name and path, goes back in `Cookie` on the requests its path
//! covers. The `cookie` crate parses; domains need no matching (one origin), and a jar lives
//! for one iteration, as k6's does by default, so `Expires` only ever deletes.

use cookie::time::OffsetDateTime;
use cookie::Cookie;
use hyper::header::{HeaderMap, HeaderValue, SET_COOKIE};

struct Stored {
    name: String,
    value: String,
    path: String,
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
    pub(crate) fn store(&mut self, headers: &HeaderMap, request_path: &str) {
        for value in headers.get_all(SET_COOKIE) {
            let Ok(text) = value.to_str() else { continue };
            let Ok(c) = Cookie::parse(text) else { continue };
            let path = match c.path() {
                Some(p) if p.starts_with('/') => p.to_string(),
                _ => default_path(request_path),
            };
            let expired = c.max_age().is_some_and(|a| a.is_zero() || a.is_negative())
                || c.expires_datetime()
                    .is_some_and(|at| at <= OffsetDateTime::now_utc());
            self.cookies
                .retain(|s| !(s.name == c.name() && s.path == path));
            if !expired {
                self.cookies.push(Stored {
                    name: c.name().to_string(),
                    value: c.value().to_string(),
                    path,
                });
            }
        }
    }

    /// The `Cookie` header for a request to `request_path`: longer paths first (§5.4).
    pub(crate) fn header(&self, request_path: &str) -> Option<HeaderValue> {
        let mut sent: Vec<&Stored> = self
            .cookies
            .iter()
            .filter(|s| path_matches(&s.path, request_path))
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

    fn set(jar: &mut Jar, lines: &[&str], path: &str) {
        let mut h = HeaderMap::new();
        for l in lines {
            h.append(SET_COOKIE, HeaderValue::from_str(l).expect("value"));
        }
        jar.store(&h, path);
    }

    #[test]
    fn cookies_go_back_on_the_paths_they_cover_and_expire() {
        let mut jar = Jar::default();
        set(
            &mut jar,
            &["sid=s-1; Path=/; HttpOnly", "cart=3; Path=/shop", "bad"],
            "/login",
        );
        assert_eq!(jar.header("/session").expect("sid"), "sid=s-1");
        assert_eq!(jar.header("/shop/x?y=1").expect("both"), "cart=3; sid=s-1");
        assert_eq!(jar.header("/shopping").expect("sid only"), "sid=s-1");
        set(&mut jar, &["sid=s-2; Path=/"], "/");
        assert_eq!(jar.header("/").expect("replaced"), "sid=s-2");
        set(&mut jar, &["sid=; Max-Age=0; Path=/"], "/");
        assert!(jar.header("/").is_none());
        set(&mut jar, &["a=1"], "/dir/page");
        assert!(jar.header("/other").is_none());
        assert_eq!(jar.header("/dir/x").expect("default path"), "a=1");
        jar.clear();
        assert!(jar.header("/dir/x").is_none());
    }
}
