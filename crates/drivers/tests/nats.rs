//! The NATS driver against a real server: `PERFBASE_NATS_URL` (from
//! `eval "$(scripts/services.sh up nats)"`). Without it the tests print a note and pass,
//! unless `PERFBASE_REQUIRE_SERVICES=1`, which makes them fail.

#![cfg(feature = "nats")]

mod common;

use perfbase_core::{Class, Driver, Session};
use perfbase_drivers::nats::{NatsDriver, NatsMode, NatsOptions};

const OPS: u64 = 200;

fn server() -> Option<String> {
    common::service_url("PERFBASE_NATS_URL", "nats")
}

use common::local;

/// Opens one session through the Driver trait and runs `OPS` ops, each within 5 s.
async fn run(driver: &NatsDriver, size: usize) {
    let mut session = match driver.open(0).await {
        Ok(s) => s,
        Err(o) => panic!("open: {o:?}"),
    };
    for op in 0..OPS {
        let o = tokio::time::timeout(std::time::Duration::from_secs(5), session.execute(op))
            .await
            .unwrap_or_else(|_| panic!("op {op} timed out"));
        assert_eq!(o.class, Class::Ok, "op {op}: {o:?}");
        assert_eq!(o.bytes_out, size as u64);
    }
}

fn mode(mode: NatsMode, size: usize) -> NatsDriver {
    let url = server().unwrap_or_default();
    NatsDriver::new(
        &url,
        NatsOptions {
            mode,
            message_size: size,
        },
    )
    .unwrap()
}

#[test]
fn pubsub_round_trips() {
    if server().is_none() {
        return;
    }
    local(run(&mode(NatsMode::PubSub, 128), 128));
}

#[test]
fn request_reply_round_trips() {
    if server().is_none() {
        return;
    }
    local(run(&mode(NatsMode::Request, 1024), 1024));
}

#[test]
fn jetstream_publishes_are_stored() {
    if server().is_none() {
        return;
    }
    let driver = mode(NatsMode::JetStream, 256);
    local(async {
        run(&driver, 256).await;
        assert_eq!(driver.stream_messages().await.unwrap(), OPS);
        driver.delete_stream().await.unwrap();
        assert!(driver.stream_messages().await.is_err());
        // Deleting a stream that is gone is fine.
        driver.delete_stream().await.unwrap();
    });
}

#[test]
fn wrong_password_is_a_connect_error_without_the_password() {
    let Some(url) = server() else { return };
    let Some((head, tail)) = url.rsplit_once('@') else {
        panic!("PERFBASE_NATS_URL has no user:password@");
    };
    let Some((userpart, _)) = head.rsplit_once(':') else {
        panic!("PERFBASE_NATS_URL has no password");
    };
    let bad = format!("{userpart}:WrongPassw0rd@{tail}");
    let driver = NatsDriver::new(&bad, NatsOptions::default()).unwrap();
    let outcome = match local(driver.open(0)) {
        Ok(_) => panic!("a wrong password was accepted"),
        Err(o) => o,
    };
    assert_eq!(outcome.class, Class::Connect, "{outcome:?}");
    let detail = outcome.detail.as_deref().unwrap_or("");
    assert!(detail.contains("authorization"), "{detail}");
    assert!(!detail.contains("WrongPassw0rd"), "{detail}");
}

#[test]
fn server_version_names_the_product_and_hides_a_wrong_password() {
    let Some(url) = server() else { return };
    let Some((head, tail)) = url.rsplit_once('@') else {
        panic!("PERFBASE_NATS_URL has no user:password@");
    };
    let Some((userpart, _)) = head.rsplit_once(':') else {
        panic!("PERFBASE_NATS_URL has no password");
    };
    let bad = format!("{userpart}:WrongPassw0rd@{tail}");
    local(async {
        let v = perfbase_drivers::nats::server_version(&url).await.unwrap();
        eprintln!("server version: {v}");
        assert!(v.starts_with("NATS "), "{v}");
        assert!(v.chars().any(|c| c.is_ascii_digit()), "{v}");
        let e = perfbase_drivers::nats::server_version(&bad)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("authorization"), "{e}");
        assert!(!e.contains("WrongPassw0rd"), "{e}");
    });
}
