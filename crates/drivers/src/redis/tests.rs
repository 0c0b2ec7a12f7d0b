use super::*;

#[test]
fn op_names_round_trip() {
    for &op in RedisOp::ALL {
        assert_eq!(RedisOp::from_name(op.name()), Some(op));
    }
    assert_eq!(RedisOp::from_name("GET"), Some(RedisOp::GetHit));
    assert_eq!(RedisOp::from_name("mset"), None);
}

#[test]
fn urls() {
    let d = RedisDriver::new(
        "redis://:secret@127.0.0.1:7000/2",
        RedisOp::Ping,
        RedisOptions::default(),
    )
    .unwrap();
    assert!(matches!(
        d.shared.target,
        Target::Standalone { db: Some(2), .. }
    ));
    assert_eq!(d.shared.auth, Some((None, "secret".to_string())));
    let d = RedisDriver::new(
        "redis+cluster://127.0.0.1:1,127.0.0.1:2",
        RedisOp::Ping,
        RedisOptions::default(),
    )
    .unwrap();
    assert!(d.is_cluster());
    for bad in [
        "http://x:1",
        "redis://:pw@127.0.0.1:port",
        "redis://127.0.0.1:1/x",
        "rediss://h:1",
    ] {
        let e = RedisDriver::new(bad, RedisOp::Ping, RedisOptions::default())
            .err()
            .unwrap()
            .to_string();
        assert!(!e.contains("pw@"), "{e}");
    }
    let zero = RedisOptions {
        pipeline: 0,
        ..RedisOptions::default()
    };
    assert!(RedisDriver::new("redis://127.0.0.1:1", RedisOp::Ping, zero).is_err());
}

#[test]
fn redirects_parse() {
    let (moved, s, a) = parse_redirect("MOVED 3999 127.0.0.1:6381").unwrap();
    assert!(moved);
    assert_eq!(s, 3999);
    assert_eq!(a, "127.0.0.1:6381".parse().unwrap());
    let (moved, _, _) = parse_redirect("ASK 1 127.0.0.1:1").unwrap();
    assert!(!moved);
    assert!(parse_redirect("ERR MOVED").is_none());
    assert!(parse_redirect("MOVED 99999 127.0.0.1:1").is_none());
}
