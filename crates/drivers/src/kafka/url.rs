//! A `kafka://` URL as librdkafka's configuration: the bootstrap servers and the SASL login.

use super::KafkaError;
use rdkafka::config::{ClientConfig, RDKafkaLogLevel};

/// How long a request to the cluster may take before librdkafka gives up on it.
const SOCKET_TIMEOUT_MS: &str = "10000";

/// The cluster a run loads: where, and as whom. `Debug` leaves the password out.
#[derive(Clone, PartialEq, Eq)]
pub struct Broker {
    /// `host:port[,host:port…]`.
    pub bootstrap: String,
    login: Option<Login>,
}

#[derive(Clone, PartialEq, Eq)]
struct Login {
    mechanism: &'static str,
    user: String,
    password: String,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mechanism = self.login.as_ref().map(|l| l.mechanism);
        let user = self.login.as_ref().map(|l| l.user.as_str());
        f.debug_struct("Broker")
            .field("bootstrap", &self.bootstrap)
            .field("mechanism", &mechanism)
            .field("user", &user)
            .finish()
    }
}

impl Broker {
    /// Reads `kafka://[user:password@]host:port[,host:port…][?sasl=plain|scram-sha-256|
    /// scram-sha-512]`. Several hosts are one URL's authority, which `url` cannot parse, so
    /// this reads the text itself.
    pub fn parse(text: &str) -> Result<Broker, KafkaError> {
        // The form without `user:password@` in it: messages are redacted, and that would be.
        let bad = |why: &str| {
            KafkaError::Url(format!(
                "{why} (kafka://host:port[,host:port…][?sasl=plain|scram-sha-256|scram-sha-512], \
                 the user and password before the host to log in)"
            ))
        };
        let rest = text
            .strip_prefix("kafka://")
            .ok_or_else(|| bad("a Kafka URL starts with kafka://"))?;
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let rest = rest.trim_end_matches('/');
        if rest.contains('/') {
            return Err(bad("a Kafka URL has no path: name the topic with --topic"));
        }
        let (userinfo, hosts) = match rest.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, rest),
        };
        for host in hosts.split(',') {
            let ok = host
                .rsplit_once(':')
                .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0));
            if !ok {
                return Err(bad(&format!("`{}` is not host:port", host.escape_debug())));
            }
        }
        let mut mechanism = None;
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("sasl", m)) => {
                    mechanism = Some(match m.to_ascii_lowercase().as_str() {
                        "plain" => "PLAIN",
                        "scram-sha-256" => "SCRAM-SHA-256",
                        "scram-sha-512" => "SCRAM-SHA-512",
                        _ => {
                            return Err(bad(&format!(
                                "unknown SASL mechanism `{}`",
                                m.escape_debug()
                            )))
                        }
                    })
                }
                _ => {
                    return Err(bad(&format!(
                        "unknown URL parameter `{}`",
                        pair.escape_debug()
                    )))
                }
            }
        }
        let login = match userinfo {
            Some(u) => {
                let (user, password) = u.split_once(':').unwrap_or((u, ""));
                Some(Login {
                    mechanism: mechanism.unwrap_or("PLAIN"),
                    user: decode(user),
                    password: decode(password),
                })
            }
            None if mechanism.is_some() => {
                return Err(bad("?sasl= needs a user and password in the URL"))
            }
            None => None,
        };
        Ok(Broker {
            bootstrap: hosts.to_string(),
            login,
        })
    }

    /// The SASL mechanism, if the URL logs in.
    pub fn mechanism(&self) -> Option<&'static str> {
        self.login.as_ref().map(|l| l.mechanism)
    }

    /// The user the URL logs in as.
    pub fn user(&self) -> Option<&str> {
        self.login.as_ref().map(|l| l.user.as_str())
    }

    /// librdkafka's configuration for this cluster, every client's common part: quiet logs
    /// (its errors reach us as results), bounded responses.
    pub fn config(&self) -> ClientConfig {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", &self.bootstrap)
            .set("client.id", "perfbase")
            .set("socket.timeout.ms", SOCKET_TIMEOUT_MS)
            .set("receive.message.max.bytes", "104857600")
            .set("log.connection.close", "false")
            .set_log_level(RDKafkaLogLevel::Emerg);
        match &self.login {
            Some(l) => {
                c.set("security.protocol", "sasl_plaintext")
                    .set("sasl.mechanism", l.mechanism)
                    .set("sasl.username", &l.user)
                    .set("sasl.password", &l.password);
            }
            None => {
                c.set("security.protocol", "plaintext");
            }
        }
        c
    }
}

/// A URL's percent-encoded user or password, decoded (as given when not valid UTF-8).
fn decode(s: &str) -> String {
    ::url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_gives_the_hosts_and_the_login_and_debug_hides_the_password() {
        let b =
            Broker::parse("kafka://u%40x:s3cr%2Ft@127.0.0.1:9092,[::1]:9093?sasl=scram-sha-512")
                .unwrap();
        assert_eq!(b.bootstrap, "127.0.0.1:9092,[::1]:9093");
        assert_eq!(b.mechanism(), Some("SCRAM-SHA-512"));
        let l = b.login.as_ref().unwrap();
        assert_eq!((l.user.as_str(), l.password.as_str()), ("u@x", "s3cr/t"));
        assert!(!format!("{b:?}").contains("s3cr"));
        assert_eq!(Broker::parse("kafka://h:1").unwrap().mechanism(), None);
        assert_eq!(
            Broker::parse("kafka://a:b@h:1/").unwrap().mechanism(),
            Some("PLAIN")
        );
    }

    #[test]
    fn a_bad_url_says_what_is_wrong_without_the_password() {
        for (url, says) in [
            ("http://h:1", "starts with kafka://"),
            ("kafka://h", "is not host:port"),
            ("kafka://h:0", "is not host:port"),
            ("kafka://u:pw@h:1/topic", "no path"),
            ("kafka://u:pw@h:1?sasl=gssapi", "unknown SASL mechanism"),
            ("kafka://h:1?sasl=plain", "needs a user"),
            ("kafka://u:pw@h:1?x=1", "unknown URL parameter"),
        ] {
            let e = Broker::parse(url).unwrap_err().to_string();
            assert!(e.contains(says), "{url}: {e}");
            assert!(!e.contains("pw"), "{url}: {e}");
        }
    }
}
