//! The MQTT driver against a real broker: `PERFBASE_MQTT_URL` (from
//! `eval "$(scripts/services.sh up mosquitto)"`). Without it the tests print a note and pass,
//! unless `PERFBASE_REQUIRE_SERVICES=1`, which makes them fail.

#![cfg(feature = "mqtt")]

mod common;

use perfbase_core::{Class, Driver, Session};
use perfbase_drivers::mqtt::{MqttDriver, MqttOptions};
use std::time::Duration;

const OPS: u64 = 200;
const SIZE: usize = 1024;

fn server() -> Option<String> {
    common::service_url("PERFBASE_MQTT_URL", "mosquitto")
}

use common::local;

fn round_trips(qos: u8) {
    let Some(url) = server() else { return };
    let driver = MqttDriver::new(
        &url,
        MqttOptions {
            qos,
            message_size: SIZE,
        },
    )
    .unwrap();
    local(async {
        // Two sessions at once: each gets only its own messages back.
        let mut a = driver
            .open(0)
            .await
            .unwrap_or_else(|o| panic!("open: {o:?}"));
        let mut b = driver
            .open(1)
            .await
            .unwrap_or_else(|o| panic!("open: {o:?}"));
        for op in 0..OPS {
            for s in [&mut a, &mut b] {
                let o = tokio::time::timeout(Duration::from_secs(5), s.execute(op))
                    .await
                    .unwrap_or_else(|_| panic!("QoS {qos} op {op} timed out"));
                assert_eq!(o.class, Class::Ok, "QoS {qos} op {op}: {o:?}");
                assert_eq!((o.bytes_in, o.bytes_out), (SIZE as u64, SIZE as u64));
            }
        }
    });
}

#[test]
fn qos0_round_trips() {
    round_trips(0);
}

#[test]
fn qos1_round_trips() {
    round_trips(1);
}

#[test]
fn wrong_password_is_a_connect_error_without_the_password() {
    let Some(url) = server() else { return };
    let Some((head, tail)) = url.rsplit_once('@') else {
        panic!("PERFBASE_MQTT_URL has no user:password@");
    };
    let Some((userpart, _)) = head.rsplit_once(':') else {
        panic!("PERFBASE_MQTT_URL has no password");
    };
    let bad = format!("{userpart}:WrongPassw0rd@{tail}");
    let driver = MqttDriver::new(&bad, MqttOptions::default()).unwrap();
    let outcome = match local(driver.open(0)) {
        Ok(_) => panic!("a wrong password was accepted"),
        Err(o) => o,
    };
    assert_eq!(outcome.class, Class::Connect, "{outcome:?}");
    let detail = outcome.detail.as_deref().unwrap_or("");
    assert!(detail.contains("CONNACK"), "{detail}");
    assert!(!detail.contains("WrongPassw0rd"), "{detail}");
    eprintln!("wrong password: {detail}");
}
