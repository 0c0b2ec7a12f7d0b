//! Tests of the journey routes (`/login`, `/items`, `/session`) and their `/stats` counts over
//! real sockets with the raw HTTP/1.1 client, plus unit tests of the signer, the store and the
//! body reader.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::demo::Shared;
use crate::journey::{
    read_body, Items, Journey, JourneyPath, ReadBody, Signer, MAX_ITEM_BYTES, MAX_REQUEST_BODY,
};
use crate::testutil::{Client, Resp};
use crate::{serve_shared, spawn, Config, Route, Stats};

/// A service on this test's runtime whose state the test can look into, with an item store of
/// `cap` items. Dropping it stops the service.
struct Local {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _stop: oneshot::Sender<()>,
}

async fn local(cap: usize) -> Local {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut shared = Shared::new(Config::default(), Stats::default()).unwrap();
    shared.journey = Journey::with_cap(cap);
    let shared = Arc::new(shared);
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(serve_shared(
        listener,
        Arc::clone(&shared),
        None,
        async move {
            let _ = stopped.await;
        },
    ));
    Local {
        addr,
        shared,
        _stop: stop,
    }
}

fn text(r: &Resp) -> &str {
    std::str::from_utf8(&r.body).unwrap()
}

/// `POST /login` with JSON credentials; checks the answer's shape and returns the token.
async fn login(c: &mut Client) -> String {
    let r = c
        .request(
            "POST",
            "/login",
            &["Content-Type: application/json"],
            br#"{"user":"u","password":"p"}"#,
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let body = text(&r);
    let token = body
        .strip_prefix(r#"{"access_token":""#)
        .and_then(|rest| rest.strip_suffix(r#"","token_type":"Bearer","expires_in":3600}"#))
        .unwrap_or_else(|| panic!("login answer {body}"));
    let (n, sig) = token.strip_prefix("tok-").unwrap().split_once('-').unwrap();
    assert!(n.parse::<u64>().unwrap() >= 1, "{token}");
    assert_eq!(sig.len(), 16, "{token}");
    assert!(sig.bytes().all(|b| b.is_ascii_hexdigit()), "{token}");
    token.to_owned()
}

fn bearer(token: &str) -> String {
    format!("Authorization: Bearer {token}")
}

/// `POST /items` with `body`; checks the answer and returns the new id.
async fn create(c: &mut Client, token: &str, body: &[u8]) -> u64 {
    let r = c.request("POST", "/items", &[&bearer(token)], body).await;
    assert_eq!(r.status, 201, "{}", text(&r));
    assert_eq!(r.header("content-type"), Some("application/json"));
    let id: u64 = text(&r)
        .strip_prefix(r#"{"id":"#)
        .and_then(|rest| rest.strip_suffix('}'))
        .unwrap()
        .parse()
        .unwrap();
    let location = format!("/items/{id}");
    assert_eq!(r.header("location"), Some(location.as_str()));
    id
}

/// `method /items/{id}` with `token`.
async fn on_item(c: &mut Client, method: &str, id: u64, token: &str) -> Resp {
    let path = format!("/items/{id}");
    c.request(method, &path, &[&bearer(token)], b"").await
}

fn assert_unauthorized(r: &Resp, what: &str) {
    assert_eq!(r.status, 401, "{what}");
    assert_eq!(r.header("www-authenticate"), Some("Bearer"), "{what}");
    assert_eq!(r.header("content-type"), Some("application/json"), "{what}");
    assert_eq!(r.body, br#"{"error":"unauthorized"}"#, "{what}");
}

#[tokio::test]
async fn login_token_opens_items() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let token = login(&mut c).await;
    assert!(token.starts_with("tok-1-"), "{token}");
    let id = create(&mut c, &token, b"hello").await;
    assert_eq!(id, 1);
    let r = on_item(&mut c, "GET", id, &token).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body, br#"{"id":1,"size":5}"#);
    // Any body logs in, even none; each login gets its own token, and the first still works.
    let r = c.request("POST", "/login", &[], b"").await;
    assert_eq!(r.status, 200);
    assert!(
        text(&r).contains(r#""access_token":"tok-2-"#),
        "{}",
        text(&r)
    );
    assert_eq!(create(&mut c, &token, b"").await, 2);
    // The scheme is case-insensitive.
    let lower = format!("authorization: bearer {token}");
    let r = c.request("GET", "/items/2", &[&lower], b"").await;
    assert_eq!(r.body, br#"{"id":2,"size":0}"#);
}

#[tokio::test]
async fn items_refuse_missing_and_forged_tokens() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let token = login(&mut c).await;
    let other = spawn(0).unwrap();
    let foreign = login(&mut Client::connect(other.addr).await).await;
    let (n, sig) = token.strip_prefix("tok-").unwrap().split_once('-').unwrap();
    let cases = [
        vec![],
        vec!["Authorization: Bearer tok-1-0000000000000000".to_owned()],
        vec![bearer(&format!(
            "tok-{}-{sig}",
            n.parse::<u64>().unwrap() + 1
        ))],
        vec![bearer(&format!("tok-0{n}-{sig}"))],
        vec![bearer(&token.to_uppercase())],
        vec![bearer(&format!("{token}0"))],
        vec![format!("Authorization: Basic {token}")],
        vec![format!("Authorization: {token}")],
        vec!["Authorization: Bearer".to_owned()],
        // Another service's token, even one it really issued.
        vec![bearer(&foreign)],
    ];
    for headers in &cases {
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        // The token is checked before the method, the id or the body.
        for (method, path) in [
            ("POST", "/items"),
            ("GET", "/items/1"),
            ("DELETE", "/items/999"),
            ("GET", "/items/abc"),
            ("PUT", "/items"),
        ] {
            let r = c.request(method, path, &headers, b"x").await;
            assert_unauthorized(&r, &format!("{method} {path} {headers:?}"));
        }
    }
    let r = c
        .request("POST", "/items", &[], &vec![b'x'; MAX_REQUEST_BODY + 1])
        .await;
    assert_unauthorized(&r, "too large without a token");
    // Nothing was stored: the first real item gets id 1.
    assert_eq!(create(&mut c, &token, b"a").await, 1);
    assert_eq!(server.stats.route(Route::Unauthorized), 51);
    assert_eq!(server.stats.route(Route::ItemsCreate), 1);
    assert_eq!(server.stats.route(Route::ItemsRead), 0);
    assert_eq!(server.stats.route(Route::ItemsDelete), 0);
}

#[tokio::test]
async fn item_lifecycle() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let token = login(&mut c).await;
    let body = br#"{"name":"widget","tags":["a","b"]}"#;
    let id = create(&mut c, &token, body).await;
    let r = on_item(&mut c, "GET", id, &token).await;
    assert_eq!(r.status, 200);
    assert_eq!(text(&r), format!(r#"{{"id":{id},"size":{}}}"#, body.len()));
    let r = on_item(&mut c, "HEAD", id, &token).await;
    assert_eq!(r.status, 200);
    let r = on_item(&mut c, "DELETE", id, &token).await;
    assert_eq!(r.status, 204);
    assert!(r.body.is_empty());
    assert_eq!(r.header("content-length"), None);
    for method in ["GET", "DELETE"] {
        let r = on_item(&mut c, method, id, &token).await;
        assert_eq!(r.status, 404, "{method} after delete");
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.body, br#"{"error":"not found"}"#);
    }
    // Nothing pipelined is left over: every answer was read whole.
    assert!(c.buf.is_empty());
    assert_eq!(server.stats.route(Route::ItemsCreate), 1);
    assert_eq!(server.stats.route(Route::ItemsRead), 3);
    assert_eq!(server.stats.route(Route::ItemsDelete), 2);
}

#[tokio::test]
async fn item_bodies_ids_and_methods() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let auth = bearer(&login(&mut c).await);
    let auth = auth.as_str();
    // Only the first KiB is kept; up to 64 KiB is accepted.
    for (len, stored) in [
        (MAX_ITEM_BYTES, MAX_ITEM_BYTES),
        (MAX_ITEM_BYTES + 1, MAX_ITEM_BYTES),
        (MAX_REQUEST_BODY, MAX_ITEM_BYTES),
    ] {
        let r = c.request("POST", "/items", &[auth], &vec![b'y'; len]).await;
        assert_eq!(r.status, 201, "{len}");
        let path = r.header("location").unwrap().to_owned();
        let r = c.request("GET", &path, &[auth], b"").await;
        assert!(
            text(&r).ends_with(&format!(r#","size":{stored}}}"#)),
            "{len}"
        );
    }
    let r = c
        .request("POST", "/items", &[auth], &vec![b'z'; MAX_REQUEST_BODY + 1])
        .await;
    assert_eq!(r.status, 413);
    assert_eq!(r.body, br#"{"error":"too large"}"#);
    // A chunked body is read too, and the connection is still in step after the 413.
    let chunked = format!(
        "POST /items HTTP/1.1\r\nHost: x\r\n{auth}\r\nTransfer-Encoding: chunked\r\n\r\n\
         3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n"
    );
    c.send_raw(chunked.as_bytes()).await;
    let r = c.response().await.unwrap();
    assert_eq!(r.status, 201);
    assert_eq!(r.header("location"), Some("/items/4"));
    let r = c.request("GET", "/items/4", &[auth], b"").await;
    assert_eq!(r.body, br#"{"id":4,"size":7}"#);

    for path in [
        "/items/abc",
        "/items/",
        "/items/+4",
        "/items/-4",
        "/items/4/x",
        "/items/4.0",
        "/items/99999999999999999999999",
    ] {
        let r = c.request("GET", path, &[auth], b"").await;
        assert_eq!(r.status, 400, "{path}");
        assert_eq!(r.body, br#"{"error":"bad request"}"#, "{path}");
    }
    let r = c.request("GET", "/items/0004", &[auth], b"").await;
    assert_eq!(r.body, br#"{"id":4,"size":7}"#);
    assert_eq!(c.get("/items/4").await.status, 401);

    for (method, path, allow) in [
        ("GET", "/items", "POST"),
        ("DELETE", "/items", "POST"),
        ("PUT", "/items/4", "GET, HEAD, DELETE"),
        ("POST", "/items/4", "GET, HEAD, DELETE"),
    ] {
        let r = c.request(method, path, &[auth], b"").await;
        assert_eq!(r.status, 405, "{method} {path}");
        assert_eq!(r.header("allow"), Some(allow), "{method} {path}");
        assert_eq!(r.body, br#"{"error":"method not allowed"}"#);
    }
    // Near misses are not journey routes.
    for path in ["/item", "/itemsx", "/logins", "/login/", "/sessions", "/s"] {
        assert_eq!(c.get(path).await.status, 404, "{path}");
    }
}

#[tokio::test]
async fn login_limits_method_and_body() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    for method in ["GET", "PUT", "DELETE"] {
        let r = c.request(method, "/login", &[], b"").await;
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow"), Some("POST"));
    }
    let r = c
        .request("POST", "/login", &[], &vec![b'{'; MAX_REQUEST_BODY])
        .await;
    assert_eq!(r.status, 200);
    let r = c
        .request("POST", "/login", &[], &vec![b'{'; MAX_REQUEST_BODY + 1])
        .await;
    assert_eq!(r.status, 413);
    assert_eq!(r.header("content-type"), Some("application/json"));
    // The oversized body was drained: the connection still works.
    assert!(login(&mut c).await.starts_with("tok-2-"));
    assert_eq!(server.stats.route(Route::Login), 2);
    assert_eq!(server.stats.connections(), 1);
}

#[tokio::test]
async fn session_cookie_round_trip() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let r = c.get("/session").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let cookie = r.header("set-cookie").unwrap();
    let sid = cookie
        .strip_prefix("sid=")
        .and_then(|rest| rest.strip_suffix("; Path=/; HttpOnly"))
        .unwrap()
        .to_owned();
    assert!(
        sid.starts_with("s-1-") && sid.len() == "s-1-".len() + 16,
        "{sid}"
    );
    assert_eq!(text(&r), format!(r#"{{"sid":"{sid}","returning":false}}"#));

    let returning = format!(r#"{{"sid":"{sid}","returning":true}}"#);
    for header in [
        format!("Cookie: sid={sid}"),
        format!("Cookie: theme=dark; sid={sid}; lang=en"),
        format!("cookie: sid=s-1-0000000000000000;sid={sid}"),
    ] {
        let r = c.request("GET", "/session", &[&header], b"").await;
        assert_eq!(r.status, 200, "{header}");
        assert_eq!(r.header("set-cookie"), None, "{header}");
        assert_eq!(text(&r), returning, "{header}");
    }

    // Forged, tampered or foreign ids get a new session.
    let token = login(&mut c).await;
    // Sessions 2, 3, ... are issued in turn.
    for (expected_n, bad) in (2..).zip([
        "s-1-0000000000000000".to_owned(),
        sid.replacen("s-1-", "s-2-", 1),
        sid.to_uppercase(),
        token,
        format!("x{sid}"),
    ]) {
        let header = format!("Cookie: sid={bad}");
        let r = c.request("GET", "/session", &[&header], b"").await;
        assert_eq!(r.status, 200, "{bad}");
        let fresh = r.header("set-cookie").unwrap();
        assert!(
            fresh.starts_with(&format!("sid=s-{expected_n}-")),
            "{bad}: {fresh}"
        );
        assert!(text(&r).ends_with(r#","returning":false}"#), "{bad}");
    }
    let r = c.request("POST", "/session", &[], b"").await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
    assert_eq!(server.stats.route(Route::SessionNew), 6);
    assert_eq!(server.stats.route(Route::SessionReturning), 3);
}

#[tokio::test]
async fn stats_counts_each_route() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let token = login(&mut c).await;
    login(&mut c).await;
    login(&mut c).await;
    let a = create(&mut c, &token, b"one").await;
    create(&mut c, &token, b"two").await;
    assert_eq!(on_item(&mut c, "GET", a, &token).await.status, 200);
    assert_eq!(on_item(&mut c, "DELETE", a, &token).await.status, 204);
    assert_eq!(c.get("/items/1").await.status, 401);
    let r = c.get("/session").await;
    let cookie = format!(
        "Cookie: {}",
        r.header("set-cookie").unwrap().split(';').next().unwrap()
    );
    for _ in 0..2 {
        assert_eq!(
            c.request("GET", "/session", &[&cookie], b"").await.status,
            200
        );
    }
    // Not counted as any route: wrong methods, bad ids, other paths.
    assert_eq!(c.get("/login").await.status, 405);
    assert_eq!(
        c.request("GET", "/items/x", &[&bearer(&token)], b"")
            .await
            .status,
        400
    );
    assert_eq!(c.get("/").await.status, 200);

    let r = c.get("/stats").await;
    assert_eq!(r.status, 200);
    assert_eq!(
        text(&r),
        concat!(
            r#"{"connections":1,"requests":14,"routes":{"login":3,"items_create":2,"#,
            r#""items_read":1,"items_delete":1,"session_new":1,"session_returning":2,"#,
            r#""unauthorized":1}}"#
        )
    );
    let stats = &server.stats;
    let counts: Vec<(&str, u64)> = Route::ALL
        .iter()
        .map(|&r| (r.name(), stats.route(r)))
        .collect();
    assert_eq!(
        counts,
        [
            ("login", 3),
            ("items_create", 2),
            ("items_read", 1),
            ("items_delete", 1),
            ("session_new", 1),
            ("session_returning", 2),
            ("unauthorized", 1),
        ]
    );
    assert_eq!(stats.requests(), 15);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_create_delete_pairs_leave_the_store_empty() {
    let server = local(crate::journey::MAX_ITEMS).await;
    let mut c = Client::connect(server.addr).await;
    let token = Arc::new(login(&mut c).await);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..100usize {
        let (addr, token) = (server.addr, Arc::clone(&token));
        tasks.spawn(async move {
            let mut c = Client::connect(addr).await;
            let id = create(&mut c, &token, &vec![b'p'; i]).await;
            let r = on_item(&mut c, "DELETE", id, &token).await;
            assert_eq!(r.status, 204, "item {id}");
            id
        });
    }
    let mut ids = Vec::new();
    while let Some(id) = tasks.join_next().await {
        ids.push(id.unwrap());
    }
    ids.sort_unstable();
    assert_eq!(
        ids,
        (1..=100).collect::<Vec<u64>>(),
        "each id handed out once"
    );
    assert_eq!(server.shared.journey.items.len(), 0);
    let stats = &server.shared.stats;
    assert_eq!(stats.route(Route::Login), 1);
    assert_eq!(stats.route(Route::ItemsCreate), 100);
    assert_eq!(stats.route(Route::ItemsDelete), 100);
    assert_eq!(stats.route(Route::ItemsRead), 0);
    assert_eq!(stats.route(Route::Unauthorized), 0);
    assert_eq!(stats.requests(), 201);
}

#[tokio::test]
async fn a_full_store_answers_507() {
    let server = local(2).await;
    let mut c = Client::connect(server.addr).await;
    let token = login(&mut c).await;
    assert_eq!(create(&mut c, &token, b"a").await, 1);
    assert_eq!(create(&mut c, &token, b"b").await, 2);
    let r = c.request("POST", "/items", &[&bearer(&token)], b"c").await;
    assert_eq!(r.status, 507);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("location"), None);
    assert_eq!(r.body, br#"{"error":"full"}"#);
    // Deleting makes room again; the refused create used up no id.
    assert_eq!(on_item(&mut c, "DELETE", 1, &token).await.status, 204);
    assert_eq!(create(&mut c, &token, b"c").await, 3);
    assert_eq!(server.shared.journey.items.len(), 2);
    assert_eq!(server.shared.stats.route(Route::ItemsCreate), 4);
}

#[test]
fn signer_accepts_only_what_it_issued() {
    let signer = Signer::new("tok-", 42);
    let first = signer.issue();
    let second = signer.issue();
    assert!(first.starts_with("tok-1-") && second.starts_with("tok-2-"));
    assert!(signer.verify(&first) && signer.verify(&second));
    let sig = &first["tok-1-".len()..];
    for bad in [
        String::new(),
        "tok-".to_owned(),
        "tok-1".to_owned(),
        "tok-1-".to_owned(),
        format!("tok-2-{sig}"),
        format!("tok-01-{sig}"),
        format!("tok-0-{sig}"),
        format!("tok--1-{sig}"),
        format!("tok-+1-{sig}"),
        format!("tok-1-{}", sig.to_uppercase()),
        format!("tok-1-{}", &sig[1..]),
        format!("tok-1-{sig}0"),
        format!("tok-1-+{}", &sig[1..]),
        format!(" tok-1-{sig}"),
        format!("s-1-{sig}"),
        "tok-99999999999999999999-0000000000000000".to_owned(),
    ] {
        assert!(!signer.verify(&bad), "{bad:?}");
    }
    // Another secret or another prefix signs differently.
    assert!(!Signer::new("tok-", 43).verify(&first));
    let sessions = Signer::new("s-", 42);
    assert!(!sessions.verify(&format!("s-1-{sig}")));
    // Checking needs no memory of what was issued: a fresh signer with the same key agrees.
    assert!(Signer::new("tok-", 42).verify(&second));
}

#[test]
fn store_caps_and_truncates() {
    let items = Items::new(2);
    assert_eq!(items.create(&[1; 5000]), Some(1));
    assert_eq!(items.size(1), Some(MAX_ITEM_BYTES));
    assert_eq!(items.create(b""), Some(2));
    assert_eq!(items.create(b"x"), None);
    assert_eq!(items.len(), 2);
    assert!(items.delete(2));
    assert!(!items.delete(2));
    assert_eq!(items.size(2), None);
    assert_eq!(items.create(b"x"), Some(3));
    assert_eq!(items.size(3), Some(1));
    assert_eq!(items.len(), 2);
}

#[test]
fn journey_paths_are_told_apart() {
    assert_eq!(JourneyPath::parse("/login"), Some(JourneyPath::Login));
    assert_eq!(JourneyPath::parse("/items"), Some(JourneyPath::Items));
    assert_eq!(JourneyPath::parse("/items/7"), Some(JourneyPath::Item("7")));
    assert_eq!(JourneyPath::parse("/items/"), Some(JourneyPath::Item("")));
    assert_eq!(JourneyPath::parse("/session"), Some(JourneyPath::Session));
    assert_eq!(JourneyPath::parse(""), None);
    let others = "/ /l /i /s /login/ /itemsx /item /sessions /stats /status/200 /lookup/key-1 \
                  /limited/x /bytes/10 /health";
    for other in others.split_whitespace() {
        assert_eq!(JourneyPath::parse(other), None, "{other:?}");
    }
    assert!(JourneyPath::Login.reads_body() && JourneyPath::Items.reads_body());
    assert!(!JourneyPath::Item("1").reads_body() && !JourneyPath::Session.reads_body());
}

/// A request body made of the given frames, then an error if `broken`.
struct Frames {
    left: std::collections::VecDeque<&'static [u8]>,
    broken: bool,
}

fn frames(data: &[&'static [u8]], broken: bool) -> Frames {
    Frames {
        left: data.iter().copied().collect(),
        broken,
    }
}

impl Body for Frames {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let this = self.get_mut();
        Poll::Ready(match this.left.pop_front() {
            Some(data) => Some(Ok(Frame::data(Bytes::from_static(data)))),
            None if std::mem::take(&mut this.broken) => Some(Err(std::io::Error::other("reset"))),
            None => None,
        })
    }
}

/// Read a body of the given frames (then an error if `broken`) with `limit`.
async fn read(data: &[&'static [u8]], broken: bool, limit: usize) -> ReadBody {
    read_body(frames(data, broken), limit).await
}

#[tokio::test]
async fn body_reader_keeps_drains_and_reports_breaks() {
    let whole = |s: &'static [u8]| ReadBody::Whole(Bytes::from_static(s));
    assert_eq!(read(&[], false, 0).await, whole(b""));
    assert_eq!(read(&[b"hello"], false, 5).await, whole(b"hello"));
    assert_eq!(read(&[b"hello"], false, 4).await, ReadBody::TooLarge);
    // Frames are joined, and the limit counts across them.
    let ab: [&'static [u8]; 4] = [b"ab"; 4];
    assert_eq!(read(&ab[..3], false, 6).await, whole(b"ababab"));
    assert_eq!(read(&ab, false, 6).await, ReadBody::TooLarge);
    // A break is reported even once the body was already too large.
    assert_eq!(read(&ab[..1], true, 6).await, ReadBody::Broken);
    assert_eq!(read(&ab, true, 6).await, ReadBody::Broken);
}
