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
