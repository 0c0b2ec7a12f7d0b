use super::*;
use serde_json::json;

fn req(path: &str, headers: &[(&str, &str)], body: Option<&str>) -> Request {
    let (path, query) = match path.split_once('?') {
        Some((p, q)) => (p.to_string(), Some(q.to_string())),
        None => (path.to_string(), None),
    };
    Request {
        method: "GET".into(),
        path,
        query,
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        body: body.map(String::from),
    }
}

#[test]
fn reused_values_become_captures_of_the_latest_answer_that_gave_them() {
    let url = url::Url::parse("http://h/api/login").unwrap();
    let mut c = Correlator::default();
    let mut login = req("/api/login", &[], Some(r#"{"user":"u"}"#));
    c.rewrite(0, &mut login);
    let answer = json!({"accessToken": "tok-1-deadbeef", "type": "Bearer", "n": 7,
                        "user": {"id": 7, "name": "Ann Lee Smith"}});
    c.answer(0, candidates(Some(&answer), None, &url));
    let mut create = req(
        "/api/items?owner=7&page=7x",
        &[("Authorization", "Bearer tok-1-deadbeef")],
        Some(r#"{"owner": 7, "qty": 17, "note": "for 7", "name": "Ann Lee Smith"}"#),
    );
    c.rewrite(1, &mut create);
    assert_eq!(create.target(), "/api/items?owner={{id}}&page=7x");
    assert_eq!(create.headers[0].1, "Bearer {{access_token}}");
    // The id is matched as a whole value only; prose is no candidate.
    assert_eq!(
        create.body.as_deref(),
        Some(r#"{"owner": {{id}}, "qty": 17, "note": "for 7", "name": "Ann Lee Smith"}"#)
    );
    // The new item's id comes in the Location only: captured by a regex of its path.
    c.answer(1, candidates(None, Some("/api/items/9"), &url));
    // A second login gives a fresh token: later requests take it from there.
    c.rewrite(2, &mut req("/", &[], None));
    c.answer(
        2,
        candidates(Some(&json!({"accessToken": "tok-2-feedface"})), None, &url),
    );
    let mut read = req(
        "/api/items/9",
        &[("X-Token", "tok-2-feedface")],
        Some("ref=tok-2-feedface&old=tok-1-deadbeef"),
    );
    c.rewrite(3, &mut read);
    assert_eq!(read.path, "/api/items/{{item_id}}");
    assert_eq!(read.headers[0].1, "{{access_token_2}}");
    assert_eq!(
        read.body.as_deref(),
        Some("ref={{access_token_2}}&old={{access_token}}")
    );
    // Its answer echoes the id it was sent: the Location's capture still fills the next.
    c.answer(3, candidates(Some(&json!({"id": 9})), None, &url));
    let mut delete = req("/api/items/9", &[], None);
    c.rewrite(4, &mut delete);
    assert_eq!(delete.path, "/api/items/{{item_id}}");
    let seen: Vec<(usize, &str, &From, &[usize])> = c
        .captures
        .iter()
        .map(|k| (k.step, k.name.as_str(), &k.from, k.used_by.as_slice()))
        .collect();
    assert_eq!(
        seen,
        [
            (0, "id", &From::Json("/user/id".into()), &[1][..]),
            (
                0,
                "access_token",
                &From::Json("/accessToken".into()),
                &[1, 3][..]
            ),
            (
                1,
                "item_id",
                &From::Location("/api/items/([^/?#]+)".into()),
                &[3, 4][..]
            ),
            (
                2,
                "access_token_2",
                &From::Json("/accessToken".into()),
                &[3][..]
            ),
        ]
    );
}

#[test]
fn names_are_lower_snake_case() {
    assert_eq!(snake("accessToken"), "access_token");
    assert_eq!(snake("item-id"), "item_id");
    assert_eq!(
        (snake("ID"), snake("userID")),
        ("id".into(), "user_id".into())
    );
    assert_eq!(snake("$"), "value");
}
