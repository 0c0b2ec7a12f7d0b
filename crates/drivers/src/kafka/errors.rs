//! Kafka's errors by code and name, as outcomes and as set-up errors. librdkafka's own codes
//! are negative, the broker's are Kafka's protocol codes (`19 NOT_ENOUGH_REPLICAS`).

use perfbase_core::{Class, Outcome};
use rdkafka::error::{KafkaError as Rd, RDKafkaErrorCode as Code};
use thiserror::Error;

/// Why a Kafka workload cannot run. Messages never contain the password.
#[derive(Debug, Error)]
pub enum KafkaError {
    #[error("bad Kafka URL: {0}")]
    Url(String),
    #[error("{0}")]
    Options(String),
    #[error("{0}")]
    Broker(String),
}

/// `KAFKA 19 NOT_ENOUGH_REPLICAS`, or librdkafka's own (`LIBRDKAFKA -192 MESSAGE_TIMED_OUT`).
pub fn code_name(code: Code) -> String {
    let n = code as i32;
    let who = if n < 0 { "LIBRDKAFKA" } else { "KAFKA" };
    format!("{who} {n} {}", upper_snake(&format!("{code:?}")))
}

/// `NotEnoughReplicas` → `NOT_ENOUGH_REPLICAS`; `PartitionEOF` → `PARTITION_EOF`.
fn upper_snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 8);
    let chars: Vec<char> = camel.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let prev_lower = i > 0 && chars[i - 1].is_ascii_lowercase();
        let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
        let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
        if c.is_ascii_uppercase() && (prev_lower || (prev_upper && next_lower)) {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// The class an error code falls in: waiting too long, the connection, a refused login, or
/// the broker's (or librdkafka's) answer.
fn class_of(code: Code) -> Class {
    match code {
        Code::MessageTimedOut | Code::OperationTimedOut | Code::RequestTimedOut => Class::Timeout,
        Code::BrokerTransportFailure | Code::AllBrokersDown | Code::NetworkException => Class::Read,
        Code::Authentication | Code::SaslAuthenticationFailed => Class::Connect,
        _ => Class::ServerError,
    }
}

/// An error of rdkafka as an outcome: its class and its code's name.
pub fn outcome_of(e: &Rd) -> Outcome {
    match e.rdkafka_error_code() {
        Some(code) => Outcome::error(class_of(code), code_name(code)),
        None => Outcome::error(Class::ServerError, describe(e)),
    }
}

/// An error of rdkafka in words, the configuration's values (which hold the password) left
/// out.
pub fn describe(e: &Rd) -> String {
    match e {
        Rd::ClientConfig(_, desc, key, _) => {
            format!("librdkafka refused its setting {key}: {desc}")
        }
        Rd::ClientCreation(why) => format!("librdkafka could not start a client: {why}"),
        other => match other.rdkafka_error_code() {
            Some(code) => {
                // Its Display is `Name (text)`: the name is already in code_name's.
                let shown = code.to_string();
                let text = shown.split_once(" (").map_or(shown.as_str(), |(_, t)| t);
                format!(
                    "{}: {}",
                    code_name(code),
                    text.strip_suffix(')').unwrap_or(text)
                )
            }
            None => other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_have_kafkas_names_and_classes() {
        assert_eq!(
            code_name(Code::NotEnoughReplicas),
            "KAFKA 19 NOT_ENOUGH_REPLICAS"
        );
        assert_eq!(
            code_name(Code::PartitionEOF),
            "LIBRDKAFKA -191 PARTITION_EOF"
        );
        assert_eq!(
            code_name(Code::UnknownTopicOrPartition),
            "KAFKA 3 UNKNOWN_TOPIC_OR_PARTITION"
        );
        assert_eq!(class_of(Code::MessageTimedOut), Class::Timeout);
        assert_eq!(class_of(Code::AllBrokersDown), Class::Read);
        assert_eq!(class_of(Code::SaslAuthenticationFailed), Class::Connect);
        assert_eq!(class_of(Code::NotEnoughReplicas), Class::ServerError);
        // librdkafka's refusal names the setting and its value: the value is left out.
        let refused = rdkafka::ClientConfig::new()
            .set("linger.ms", "s3cret")
            .create::<rdkafka::producer::BaseProducer>()
            .err()
            .expect("refused");
        assert!(
            describe(&refused).contains("linger.ms"),
            "{}",
            describe(&refused)
        );
        assert!(!describe(&refused).contains("s3cret"));
    }
}
