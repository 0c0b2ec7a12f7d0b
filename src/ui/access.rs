//! Who `perfbase ui` answers. On loopback (the default): requests naming this machine by an
//! address or `localhost`, as the dashboard (a name pointing here could be a page's DNS
//! rebinding). With `--allow-remote`: the token from PERFBASE_UI_TOKEN on every request
//! (`Authorization: Bearer`, or the cookie `?token=` set), and a `Host` that is an address,
//! `localhost` or one of `--public-name`.

use super::http::{Request, Response};
use crate::exit::{bad_input, AppError};
use std::net::{IpAddr, SocketAddr};

/// The environment variable holding the token.
pub const TOKEN_VAR: &str = "PERFBASE_UI_TOKEN";
/// The cookie a `?token=` visit sets.
const COOKIE: &str = "perfbase_ui";
/// The shortest token taken: a guessable one would be no lock.
const TOKEN_MIN: usize = 16;

pub struct Access {
    listening: SocketAddr,
    token: Option<String>,
    names: Vec<String>,
}

/// What a request may do: go on, or get this answer instead (a 401, a 403, or after a
/// `?token=` visit the redirect that sets the cookie).
pub enum Verdict {
    Pass,
    Refuse(Response),
}

impl Access {
    /// The rules for a server on `listening`; refuses a remote address without
    /// `--allow-remote`, and `--allow-remote` without a token.
    pub fn new(
        listening: SocketAddr,
        allow_remote: bool,
        names: &[String],
    ) -> Result<Access, AppError> {
        if listening.ip().is_loopback() {
            return Ok(Access {
                listening,
                token: None,
                names: Vec::new(),
            });
        }
        if !allow_remote {
            return Err(bad_input(format!(
                "--listen {listening}: not a loopback address; the pages show every stored \
                 run to whoever reaches them, so add --allow-remote (with a token in \
                 {TOKEN_VAR}) to mean it"
            )));
        }
        let token = std::env::var(TOKEN_VAR).unwrap_or_default();
        if token.trim().chars().count() < TOKEN_MIN {
            return Err(bad_input(format!(
                "--allow-remote needs a token of at least {TOKEN_MIN} characters in {TOKEN_VAR} \
                 (never on the command line, where ps shows it), e.g. \
                 export {TOKEN_VAR}=$(openssl rand -hex 24)"
            )));
        }
        Ok(Access {
            listening,
            token: Some(token.trim().to_string()),
            names: names.iter().map(|n| n.to_ascii_lowercase()).collect(),
        })
    }

    /// Whether the pages ask for a token.
    pub fn remote(&self) -> bool {
        self.token.is_some()
    }

    /// The verdict on `req`.
    pub fn check(&self, req: &Request) -> Verdict {
        let Some(token) = &self.token else {
            if perfbase_core::host::answers(req.host.as_deref(), self.listening) {
                return Verdict::Pass;
            }
            return Verdict::Refuse(Response::text(
                "403 Forbidden",
                "perfbase ui listens on a loopback address and answers requests to localhost \
                 or an IP address only (a name pointing here could be a web page's DNS \
                 rebinding); open it as http://127.0.0.1:PORT/",
            ));
        };
        if !self.host_known(req.host.as_deref()) {
            return Verdict::Refuse(Response::text(
                "403 Forbidden",
                "this host name is not one perfbase ui answers to: start it with \
                 --public-name NAME for each name it is reached by",
            ));
        }
        let bearer = req
            .authorization
            .as_deref()
            .and_then(|a| a.strip_prefix("Bearer "))
            .map(str::trim);
        let cookie = req.cookie.as_deref().and_then(|c| {
            c.split(';')
                .filter_map(|p| p.trim().split_once('='))
                .find(|(k, _)| *k == COOKIE)
                .map(|(_, v)| v)
        });
        if [bearer, cookie]
            .into_iter()
            .flatten()
            .any(|t| same(t, token))
        {
            return Verdict::Pass;
        }
        let asked = req.param("token");
        if !asked.is_empty() && same(&asked, token) {
            // The token leaves the address bar (and the history) at once.
            let rest: Vec<(&str, &str)> = req
                .query
                .iter()
                .filter(|(k, _)| k != "token")
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let path = perfbase_report::ui::href(&encoded_path(&req.path), &rest);
            return Verdict::Refuse(Response::redirect(path).with(
                "Set-Cookie",
                format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"),
            ));
        }
        Verdict::Refuse(
            Response::text(
                "401 Unauthorized",
                format!(
                    "perfbase ui needs its token: send Authorization: Bearer TOKEN, or open \
                     this page once with ?token=TOKEN (the value of {TOKEN_VAR} where it was \
                     started)"
                ),
            )
            .with("WWW-Authenticate", "Bearer realm=\"perfbase ui\"".into()),
        )
    }

    fn host_known(&self, host: Option<&str>) -> bool {
        let Some(host) = host.map(str::trim) else {
            return false;
        };
        let name = match host.strip_prefix('[') {
            Some(rest) => rest.split(']').next().unwrap_or(""),
            None => host.rsplit_once(':').map_or(host, |(n, _)| n),
        };
        let name = name.to_ascii_lowercase();
        name == "localhost" || name.parse::<IpAddr>().is_ok() || self.names.contains(&name)
    }
}

/// A path with each segment percent-encoded again (a redirect's Location holds no raw text).
fn encoded_path(path: &str) -> String {
    path.split('/')
        .map(perfbase_core::percent::encode_component)
        .collect::<Vec<_>>()
        .join("/")
}

/// Equal, in a time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}
