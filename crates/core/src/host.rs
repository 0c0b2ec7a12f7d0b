//! Which requests perfbase's own local servers (the live dashboard, `--metrics-listen`)
//! answer. A server on a loopback address is reachable from this machine's browser, and so
//! from any web page it opens: a page whose name the attacker points at 127.0.0.1 (DNS
//! rebinding) would read the run's figures and report as its own origin. Such a request
//! carries the attacker's name in `Host`; one addressed to `localhost` or an IP literal
//! cannot come from a rebound name. A server on another address was opened to the network
//! on purpose (`--allow-remote`, a warned `--metrics-listen`) and answers any `Host`.

use std::net::{IpAddr, SocketAddr};

/// Whether a server listening on `listening` answers a request whose `Host` header is
/// `host` (None when the request had none: not a browser's).
pub fn answers(host: Option<&str>, listening: SocketAddr) -> bool {
    if !listening.ip().is_loopback() {
        return true;
    }
    let Some(host) = host.map(str::trim) else {
        return true;
    };
    // `[::1]:8089`, `127.0.0.1:8089`, `localhost:8089`, or any of them without the port.
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(n, _)| n),
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_server_answers_addresses_and_localhost_only() {
        let local: SocketAddr = "127.0.0.1:8089".parse().unwrap();
        for host in [
            "127.0.0.1:8089",
            "localhost:8089",
            "LOCALHOST",
            "[::1]:8089",
            "10.0.0.2",
        ] {
            assert!(answers(Some(host), local), "{host}");
        }
        assert!(answers(None, local));
        for host in [
            "evil.example:8089",
            "evil.example",
            "localhost.evil.example:8089",
            "",
        ] {
            assert!(!answers(Some(host), local), "{host}");
        }
        let open: SocketAddr = "0.0.0.0:8089".parse().unwrap();
        assert!(answers(Some("loadgen.internal:8089"), open));
    }
}
