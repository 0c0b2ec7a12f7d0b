//! The agents' barrier, on SQLite and PostgreSQL.

use super::*;

/// The agents' barrier: arrivals per run, renewed on a second arrival, on the store's clock
/// (which, on PostgreSQL, is the server's and agrees with this machine's here).
fn check_barrier(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let clock = s.clock_ms().unwrap();
    assert!(
        (clock - before).abs() < 5_000,
        "store clock {clock} vs {before}"
    );
    assert!(s.arrivals("r1").unwrap().is_empty());
    s.arrive("r1", "0/2").unwrap();
    s.arrive("r2", "0/2").unwrap();
    let first = s.arrivals("r1").unwrap();
    assert_eq!(first.len(), 1);
    assert!(first[0].1 >= clock);
    std::thread::sleep(std::time::Duration::from_millis(20));
    s.arrive("r1", "1/2").unwrap();
    s.arrive("r1", "0/2").unwrap();
    let both = s.arrivals("r1").unwrap();
    assert_eq!(
        both.iter().map(|(seg, _)| seg.as_str()).collect::<Vec<_>>(),
        ["0/2", "1/2"]
    );
    assert!(both[0].1 > first[0].1, "a second arrival renews the time");
}

#[test]
fn sqlite_barrier() {
    let (_dir, loc) = sqlite_location();
    check_barrier(&loc);
}

#[test]
fn postgres_barrier() {
    on_postgres(check_barrier);
}

/// Heartbeats age on the store's clock, per segment; the first stop request's reason stands.
fn check_heartbeats_and_stop(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    assert!(s.heartbeats("h1").unwrap().is_empty());
    assert_eq!(s.stop_request("h1").unwrap(), None);
    s.heartbeat("h1", "1/2").unwrap();
    s.heartbeat("h1", "0/2").unwrap();
    s.heartbeat("h2", "0/2").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(30));
    let beats = s.heartbeats("h1").unwrap();
    assert_eq!(
        beats
            .iter()
            .map(|(seg, _)| seg.as_str())
            .collect::<Vec<_>>(),
        ["0/2", "1/2"]
    );
    assert!(
        beats.iter().all(|(_, age)| (30..5_000).contains(age)),
        "{beats:?}"
    );
    s.heartbeat("h1", "0/2").unwrap();
    let again = s.heartbeats("h1").unwrap();
    assert!(
        again[0].1 < beats[0].1,
        "a beat renews: {again:?} after {beats:?}"
    );
    let before = s.clock_ms().unwrap();
    s.request_stop("h1", "Ctrl-C of perfbase k8s --follow")
        .unwrap();
    s.request_stop("h1", "a later reason").unwrap();
    let (reason, at) = s.stop_request("h1").unwrap().unwrap();
    assert_eq!(reason, "Ctrl-C of perfbase k8s --follow");
    assert!(at >= before && at - before < 5_000);
    assert_eq!(s.stop_request("h2").unwrap(), None);
    // Live figures: the last per segment, read per phase.
    s.publish_live("h1", "0/2", "step 1", "{\"a\":1}").unwrap();
    s.publish_live("h1", "1/2", "step 1", "{\"b\":1}").unwrap();
    s.publish_live("h1", "0/2", "step 2", "{\"a\":2}").unwrap();
    assert_eq!(
        s.live("h1", "step 1").unwrap(),
        [("1/2".to_string(), "{\"b\":1}".to_string())]
    );
    assert_eq!(s.live("h1", "step 2").unwrap().len(), 1);
    assert!(s.live("h2", "step 1").unwrap().is_empty());
}

#[test]
fn sqlite_heartbeats_and_stop() {
    let (_dir, loc) = sqlite_location();
    check_heartbeats_and_stop(&loc);
}

#[test]
fn postgres_heartbeats_and_stop() {
    on_postgres(check_heartbeats_and_stop);
}
