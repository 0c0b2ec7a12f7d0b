//! `/stream` and the OpenAI-compatible completions over real sockets: the events and tokens
//! asked for, at their times, and clear 4xx answers to bad requests.

use std::time::{Duration, Instant};

use crate::testutil::Client;
use crate::{spawn, spawn_with, Config};

#[tokio::test]
async fn stream_sends_the_events_asked_for_at_their_gap() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let start = Instant::now();
    let r = c.get("/stream?events=5&gap_ms=20&first_ms=10").await;
    let took = start.elapsed();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let text = String::from_utf8(r.body).unwrap();
    assert_eq!(text.matches("data: {\"n\":").count(), 5, "{text}");
    assert!(text.ends_with("id: 4\ndata: {\"n\":4}\n\n"), "{text}");
    // The last event is due 10 + 4 × 20 ms after the request.
    assert!(took >= Duration::from_millis(90), "took {took:?}");
    let r = c.get("/stream?events=3&gap_ms=0&format=lines").await;
    assert_eq!(r.header("content-type"), Some("application/x-ndjson"));
    assert_eq!(r.body, b"{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n");
    for bad in ["events=x", "gap_ms=700000", "format=xml", "speed=3"] {
        let r = c.get(&format!("/stream?{bad}")).await;
        assert_eq!(r.status, 400, "{bad}");
        let key = bad.split('=').next().unwrap();
        assert!(String::from_utf8_lossy(&r.body).contains(key), "{bad}");
    }
}

#[tokio::test]
async fn completions_generate_the_tokens_asked_for() {
    let config = Config {
        first_token: Duration::from_millis(30),
        token_gap: Duration::from_millis(5),
        ..Config::default()
    };
    let server = spawn_with(0, config).unwrap();
    let mut c = Client::connect(server.addr).await;
    let json = ["Content-Type: application/json"];
    let body = br#"{"messages":[{"role":"user","content":"one two"},
        {"role":"user","content":[{"type":"text","text":"three"}]}],"max_tokens":4,
        "stream":true,"stream_options":{"include_usage":true}}"#;
    let start = Instant::now();
    let r = c.request("POST", "/v1/chat/completions", &json, body).await;
    assert!(start.elapsed() >= Duration::from_millis(45));
    assert_eq!(r.status, 200);
    let text = String::from_utf8(r.body).unwrap();
    let events: Vec<&str> = text.split("\n\n").filter(|e| !e.is_empty()).collect();
    // Four tokens, the usage chunk, [DONE].
    assert_eq!(events.len(), 6, "{text}");
    assert!(
        events[0].contains(r#""role":"assistant""#) && events[0].contains("tok0 "),
        "{text}"
    );
    assert!(
        events[4].contains(r#""completion_tokens":4"#)
            && events[4].contains(r#""prompt_tokens":3"#),
        "{text}"
    );
    assert_eq!(events[5], "data: [DONE]");
    // Without "stream": one answer with every token.
    let r = c
        .request(
            "POST",
            "/v1/completions",
            &json,
            br#"{"prompt":"hi","max_tokens":3}"#,
        )
        .await;
    assert_eq!(r.status, 200);
    let text = String::from_utf8(r.body).unwrap();
    assert!(
        text.contains("tok0 tok1 tok2 ") && text.contains(r#""completion_tokens":3"#),
        "{text}"
    );
    // Bad requests: not JSON, no messages, too many tokens, GET.
    for (body, word) in [
        (&b"{"[..], "not JSON"),
        (&br#"{"max_tokens":2}"#[..], "messages"),
        (&br#"{"messages":[],"max_tokens":5000}"#[..], "max_tokens"),
    ] {
        let r = c.request("POST", "/v1/chat/completions", &json, body).await;
        assert_eq!(r.status, 400);
        assert!(String::from_utf8_lossy(&r.body).contains(word), "{word}");
    }
    let r = c.request("GET", "/v1/chat/completions", &[], b"").await;
    assert_eq!((r.status, r.header("allow")), (405, Some("POST")));
    let r = c.get("/v1/models").await;
    assert!(String::from_utf8_lossy(&r.body).contains("perfbase-reference"));
}
