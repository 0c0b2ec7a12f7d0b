use super::*;
use serde_json::{json, Value};

/// A HAR entry: the request, and the answer's status, headers and body.
fn entry(
    method: &str,
    url: &str,
    headers: Value,
    body: Option<&str>,
    answer: (u16, Value, &str),
) -> Value {
    let mut request = json!({"method": method, "url": url, "headers": headers});
    if let Some(b) = body {
        request["postData"] = json!({"mimeType": "application/json", "text": b});
    }
    let (status, rheaders, text) = answer;
    json!({"request": request, "response": {"status": status, "headers": rheaders,
           "content": {"mimeType": "application/json", "text": text}}})
}

fn har(entries: Vec<Value>) -> String {
    json!({"log": {"version": "1.2", "creator": {"name": "test"}, "entries": entries}}).to_string()
}

/// A shop's recording: a login, a cart created (its id in the Location only), an item put
/// in it with the token, the cart read; plus a stylesheet, a font and a tracker elsewhere,
/// a CORS preflight and a request the browser cancelled.
fn shop() -> String {
    let auth = json!([{"name": "Authorization", "value": "Bearer eyJhbGciOi.x.y"},
                      {"name": "Cookie", "value": "sid=abc"}, {"name": ":path", "value": "/"},
                      {"name": "Accept-Encoding", "value": "gzip"}]);
    let none = json!([]);
    har(vec![
        entry(
            "POST",
            "http://shop.test/api/login",
            json!([]),
            Some(r#"{"email":"a@b.c"}"#),
            (
                200,
                none.clone(),
                r#"{"token": "eyJhbGciOi.x.y", "user": {"userId": 41}}"#,
            ),
        ),
        entry(
            "GET",
            "http://shop.test/static/site.css",
            none.clone(),
            None,
            (200, none.clone(), ""),
        ),
        entry(
            "GET",
            "http://shop.test/fonts/a",
            none.clone(),
            None,
            (200, none.clone(), ""),
        )
        .tap(|e| e["response"]["content"]["mimeType"] = json!("font/woff2")),
        entry(
            "POST",
            "http://shop.test/api/carts",
            auth.clone(),
            Some(r#"{"owner": 41}"#),
            (
                201,
                json!([{"name": "Location", "value": "http://shop.test/api/carts/c-9"}]),
                "",
            ),
        ),
        entry(
            "OPTIONS",
            "http://shop.test/api/carts/c-9/items",
            json!([{"name": "Access-Control-Request-Method", "value": "POST"}]),
            None,
            (204, none.clone(), ""),
        ),
        entry(
            "POST",
            "https://t.example.org/collect",
            none.clone(),
            Some("{}"),
            (204, none.clone(), ""),
        ),
        entry(
            "POST",
            "http://shop.test/api/carts/c-9/items",
            auth.clone(),
            Some(r#"{"sku": "A-1", "qty": 41}"#),
            (201, none.clone(), r#"{"line": 1}"#),
        ),
        entry(
            "GET",
            "http://shop.test/api/carts/c-9?expand=items&owner=41",
            auth.clone(),
            None,
            (200, none.clone(), r#"{"id": "c-9"}"#),
        ),
        entry(
            "GET",
            "http://shop.test/api/slow",
            none.clone(),
            None,
            (0, none, ""),
        ),
    ])
}

trait Tap {
    fn tap(self, f: impl FnOnce(&mut Self)) -> Self;
}

impl Tap for Value {
    fn tap(mut self, f: impl FnOnce(&mut Self)) -> Self {
        f(&mut self);
        self
    }
}

#[test]
fn a_recording_becomes_a_journey_of_its_main_origin_with_its_values_captured() {
    let text = plan(&shop(), "shop.har", false, "shop.toml").unwrap();
    let loaded = crate::plan::parse(&text, "shop.toml", std::path::Path::new("."), None);
    if let Err(e) = loaded {
        panic!("{e}\n{text}");
    }
    for line in [
        "4 requests to http://shop.test, replayed",
        "#   2 static assets (scripts, styles, images, fonts; --include-static keeps them)",
        "#   1 request to another origin (a journey talks to one): https://t.example.org",
        "#   1 CORS preflight (the browser's own OPTIONS)",
        "#   1 request with no answer recorded",
        "# Cookie headers were not copied",
        "#   token (step 1), user_id (step 1), cart_id (step 2); see the # review: lines.",
        "# Run it: perfbase run shop.toml",
        // The token, the user's id and the cart's id (from the Location, absolute).
        "# review: token is captured here from /token and used by steps 2, 3, 4\n\
         # review: user_id is captured here from /user/userId and used by steps 2, 3, 4\n\
         [[workloads.journey.steps]]\nname = \"POST /api/login\"",
        "capture.token = { json = \"/token\" }\ncapture.user_id = { json = \"/user/userId\" }",
        "# review: cart_id is captured here from the Location header (/api/carts/([^/?#]+)) and \
         used by steps 3, 4",
        "capture.cart_id = { header = \"Location\", regex = \"/api/carts/([^/?#]+)\" }",
        "body = '{\"owner\": {{user_id}}}'",
        "path = \"/api/carts/{{cart_id}}/items\"",
        "headers.Authorization = \"Bearer {{token}}\"",
        "body = '{\"sku\": \"A-1\", \"qty\": {{user_id}}}'",
        "path = \"/api/carts/{{cart_id}}?expand=items&owner={{user_id}}\"",
        "check.status = { status = [201] }",
        "concurrency = 1\nrequests = 10\n",
    ] {
        assert!(text.contains(line), "{line}\n---\n{text}");
    }
    for gone in [
        "eyJ", "sid=abc", ":path", "gzip", "c-9", "41", "site.css", "collect", "slow",
    ] {
        assert!(!text.contains(gone), "{gone}\n---\n{text}");
    }
    // --include-static keeps the assets (not the other origin).
    let text = plan(&shop(), "shop.har", true, "shop.toml").unwrap();
    assert!(text.contains("6 requests to http://shop.test"), "{text}");
    assert!(text.contains("name = \"GET /static/site.css\""), "{text}");
}

#[test]
fn values_no_answer_gave_become_variables() {
    let har = har(vec![
        entry(
            "GET",
            "http://h/a?api_key=k1&page=2",
            json!([{"name": "X-Api-Key", "value": "k2"},
              {"name": "Authorization", "value": "Basic dTpw"}]),
            None,
            (200, json!([]), "{}"),
        ),
        entry(
            "POST",
            "http://h/b",
            json!([{"name": "Content-Type", "value": "application/x-www-form-urlencoded"}]),
            Some("user=u&password=hunter22"),
            (204, json!([]), ""),
        ),
    ]);
    let text = plan(&har, "h.har", false, "h.toml").unwrap();
    for secret in ["k1", "k2", "dTpw", "hunter22"] {
        assert!(!text.contains(secret), "{secret}\n{text}");
    }
    for line in [
        "path = \"/a?api_key=${PERFBASE_IMPORT_API_KEY}&page=2\"",
        "headers.X-Api-Key = \"${PERFBASE_IMPORT_X_API_KEY}\"",
        "headers.Authorization = \"Basic ${PERFBASE_IMPORT_AUTHORIZATION}\"",
        "body = \"user=u&password=${PERFBASE_IMPORT_PASSWORD}\"",
        "#   export PERFBASE_IMPORT_PASSWORD=…",
        "# step 2's form field password",
    ] {
        assert!(text.contains(line), "{line}\n---\n{text}");
    }
    assert!(toml::from_str::<toml::Table>(&text).is_ok(), "{text}");
}

#[test]
fn what_is_no_recording_to_import_says_why() {
    for (raw, says) in [
        (
            "{}",
            "not an HTTP Archive (JSON with log.entries): missing field `log`",
        ),
        ("<html>", "not an HTTP Archive"),
        (r#"{"log":{"entries":[]}}"#, "no HTTP request to import"),
        (
            r#"{"log":{"entries":[{"request":{"method":"GET","url":"no url"}}]}}"#,
            "log.entries[0].request.url: 'no url' is no URL",
        ),
        (
            r#"{"log":{"entries":[{"request":{"method":"GET","url":"http://h/a.css"},
            "response":{"status":200}}]}}"#,
            "1 static asset(s) (--include-static keeps them)",
        ),
    ] {
        let e = plan(raw, "x.har", false, "x.toml").expect_err(raw);
        assert!(e.contains(says), "{raw}: {e}");
    }
    let only_static = r#"{"log":{"entries":[{"request":{"method":"GET","url":"http://h/a.css"},
        "response":{"status":200}}]}}"#;
    assert!(plan(only_static, "x.har", true, "x.toml").is_ok());
}
