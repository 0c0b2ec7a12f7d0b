use super::*;

fn req(line: &str) -> Request {
    parse(line)
        .unwrap_or_else(|e| panic!("{line}: {e}"))
        .request
}

fn header<'a>(r: &'a Request, name: &str) -> Option<&'a str> {
    r.header(name)
}

/// The plan parses and validates as `perfbase run` reads it (no load is sent).
fn valid(text: &str) {
    if let Err(e) = crate::plan::parse(text, "imported.toml", std::path::Path::new("."), None) {
        panic!("{e}\n{text}");
    }
}

#[test]
fn method_url_and_headers() {
    let r = req("curl -X put 'http://127.0.0.1:8080/a/b?x=1#frag' -H 'X-Id: 7' -H 'x-id: 8'");
    assert_eq!(
        (r.method.as_str(), r.target().as_str()),
        ("PUT", "/a/b?x=1")
    );
    assert_eq!(
        header(&r, "X-Id"),
        Some("7, 8"),
        "one key per name, as HTTP folds them"
    );
    assert_eq!(
        req("curl --url http://h/u --request DELETE").method,
        "DELETE"
    );
    assert_eq!(req("curl -I http://h/").method, "HEAD");
    assert_eq!(
        req("curl localhost:8080/x").target(),
        "/x",
        "curl's default scheme"
    );
    let c = parse("curl localhost:8080/x").unwrap();
    assert_eq!(c.url.as_str(), "http://localhost:8080/x");
    let r = req("curl -A agent/1 -e 'http://h/from;auto' -b 'a=1; b=2' http://h/");
    assert_eq!(header(&r, "User-Agent"), Some("agent/1"));
    assert_eq!(header(&r, "Referer"), Some("http://h/from"));
    assert_eq!(header(&r, "Cookie"), Some("a=1; b=2"));
    // `Name;` sends the header empty.
    assert_eq!(
        header(&req("curl -H 'X-Empty;' http://h/"), "X-Empty"),
        Some("")
    );
}

#[test]
fn data_flags_make_the_body_as_curl_does() {
    let r = req("curl http://h/f -d a=1 --data b=2 --data-ascii c=3");
    assert_eq!(
        (r.method.as_str(), r.body.as_deref()),
        ("POST", Some("a=1&b=2&c=3"))
    );
    assert_eq!(
        header(&r, "Content-Type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        req("curl http://h/ --data-raw @x").body.as_deref(),
        Some("@x")
    );
    let r = req("curl http://h/ --data-urlencode 'q=a b&c' --data-urlencode =é");
    assert_eq!(r.body.as_deref(), Some("q=a%20b%26c&%C3%A9"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("body.txt");
    std::fs::write(&file, "a\r\nb\n").unwrap();
    let f = file.display();
    assert_eq!(
        req(&format!("curl http://h/ -d @{f}")).body.as_deref(),
        Some("ab")
    );
    let binary = req(&format!("curl http://h/ --data-binary @{f}"));
    assert_eq!(binary.body.as_deref(), Some("a\r\nb\n"));
    let missing = parse("curl http://h/ -d @no/such.json").err().unwrap();
    assert!(
        missing.contains("-d @no/such.json: cannot read it"),
        "{missing}"
    );
    // --json: the body, its content type, and POST.
    let r = req("curl http://h/j --json '{\"a\":1}' -H 'Accept: text/plain'");
    assert_eq!(
        (r.method.as_str(), r.body.as_deref()),
        ("POST", Some("{\"a\":1}"))
    );
    assert_eq!(header(&r, "Content-Type"), Some("application/json"));
    assert_eq!(
        header(&r, "Accept"),
        Some("text/plain"),
        "a given header wins"
    );
    // -H 'Name:' leaves out the header curl would add.
    assert_eq!(
        header(
            &req("curl http://h/ -d x -H 'Content-Type:'"),
            "content-type"
        ),
        None
    );
    // -G: the data goes to the query.
    let r = req("curl -G 'http://h/s?a=0' -d q=1 -d r=2");
    assert_eq!(
        (r.method.as_str(), r.target().as_str(), r.body.as_deref()),
        ("GET", "/s?a=0&q=1&r=2", None)
    );
    assert_eq!(header(&r, "Content-Type"), None);
}

#[test]
fn flags_together_values_attached_and_harmless_flags_dropped() {
    let c = parse(
        "curl -sSLk -XPOST -H'Accept: x' -o /dev/null -w '%{http_code}' -m 5 --compressed \
         --fail http://h/p -dk=v",
    )
    .unwrap();
    assert!(c.insecure);
    assert_eq!(c.request.method, "POST");
    assert_eq!(header(&c.request, "Accept"), Some("x"));
    assert_eq!(c.request.body.as_deref(), Some("k=v"));
    // A pasted multi-line command.
    let r = req("curl http://h/a \\\n  -H 'A: 1' \\\r\n  -H 'B: 2'");
    assert_eq!((header(&r, "A"), header(&r, "B")), (Some("1"), Some("2")));
}

#[test]
fn what_cannot_be_imported_says_why() {
    for (line, says) in [
        ("wget http://h/", "starting with 'curl'"),
        ("", "is empty"),
        ("curl --proxy x http://h/", "curl's --proxy is not read"),
        ("curl -sx p http://h/", "curl's -x (in -sx) is not read"),
        ("curl http://h/ -H", "-H needs a value"),
        (
            "curl http://h/ -H nocolon",
            "-H 'nocolon': write a header as 'Name: value'",
        ),
        ("curl -s", "names no URL"),
        ("curl http://a/ http://b/", "two URLs"),
        ("curl ftp://h/f", "only http:// and https://"),
        ("curl 'http://h/", "does not split"),
        ("curl -u ann http://h/", "-u ann: no password"),
        (
            "curl -b cookies.txt http://h/",
            "-b cookies.txt: a cookie file",
        ),
        ("curl -d @- http://h/", "standard input"),
        ("curl -H @headers.txt http://h/", "headers from a file"),
        ("curl -H $'A: \\n' http://h/", "$'…' quoting"),
    ] {
        let e = plan(line, "p.toml").expect_err(line);
        assert!(e.contains(says), "{line}: {e}");
    }
}

#[test]
fn no_secret_is_written() {
    let text = plan(
        "curl 'https://h/s?api_key=k3y&q=1' -H 'Authorization: Bearer s3cret' \
         -H 'X-Api-Key: k3y2' -b 'sid=c00kie' -H 'Accept: */*' -k",
        "p.toml",
    )
    .unwrap();
    for secret in ["k3y", "s3cret", "c00kie"] {
        assert!(!text.contains(secret), "{secret}: {text}");
    }
    assert!(
        text.contains("path = \"/s?api_key=${PERFBASE_IMPORT_API_KEY}&q=1\""),
        "{text}"
    );
    assert!(text.contains("headers.Authorization = \"Bearer ${PERFBASE_IMPORT_AUTHORIZATION}\""));
    assert!(
        text.contains("headers.X-Api-Key = \"${PERFBASE_IMPORT_X_API_KEY}\""),
        "{text}"
    );
    assert!(
        text.contains("headers.Cookie = \"${PERFBASE_IMPORT_COOKIE}\""),
        "{text}"
    );
    assert!(text.contains("headers.Accept = \"*/*\""), "{text}");
    assert!(text.contains("insecure = true"), "{text}");
    for var in ["API_KEY", "AUTHORIZATION", "X_API_KEY", "COOKIE"] {
        assert!(
            text.contains(&format!("#   export PERFBASE_IMPORT_{var}=…")),
            "{var}: {text}"
        );
    }
    // -u (or a URL's user info): Basic with the credentials in a variable.
    for line in ["curl -u ann:pw http://h/", "curl http://ann:pw@h/"] {
        let text = plan(line, "p.toml").unwrap();
        assert!(!text.contains("ann") && !text.contains("pw"), "{text}");
        assert!(
            text.contains("\"Basic ${PERFBASE_IMPORT_AUTHORIZATION}\""),
            "{text}"
        );
        assert!(
            text.contains("printf %s 'USER:PASSWORD' | base64"),
            "{text}"
        );
    }
    // A secret in the body: a one-step journey, whose body reads the variable.
    let text = plan(
        "curl http://h/login -d '{\"user\":\"u\", \"password\":\"hunter22\"}'",
        "p.toml",
    )
    .unwrap();
    assert!(!text.contains("hunter22"), "{text}");
    assert!(text.contains("[[workloads.request.steps]]"), "{text}");
    assert!(
        text.contains(r#"body = '{"user":"u", "password":"${PERFBASE_IMPORT_PASSWORD}"}'"#),
        "{text}"
    );
    assert!(toml::from_str::<toml::Table>(&text).is_ok(), "{text}");
    // A step writes Host itself, and sends a Cookie of its own only without the jar.
    let text = plan(
        "curl http://h/login -H 'Host: x' -b 'sid=1' --json '{\"password\":\"hunter22\"}'",
        "p.toml",
    )
    .unwrap();
    assert!(
        text.contains("# review: a journey step writes Host"),
        "{text}"
    );
    assert!(!text.contains("headers.Host"), "{text}");
    assert!(text.contains("cookies = false"), "{text}");
    assert!(
        text.contains("headers.Cookie = \"${PERFBASE_IMPORT_COOKIE}\""),
        "{text}"
    );
}

#[test]
fn the_plan_is_one_request_that_perfbase_runs() {
    let text = plan(
        "curl -X POST http://127.0.0.1:8080/login -H 'Content-Type: application/json' \
         -d '{\"user\":\"u\"}'",
        "login.toml",
    )
    .unwrap();
    valid(&text);
    assert!(text.starts_with(
        "# Imported by `perfbase import curl`: POST http://127.0.0.1:8080/login, sent by 10 \
         connections\n# for 10 s."
    ));
    assert!(text.contains("perfbase run login.toml"), "{text}");
    assert!(
        text.contains(
            "\n[workloads.request]\ntarget = \"api\"\nmethod = \"POST\"\n\
         path = \"/login\"\nheaders.Content-Type = \"application/json\"\n\
         body = '{\"user\":\"u\"}'\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("concurrency = 10\nduration = \"10s\"\n"),
        "{text}"
    );
    // Text a plan would read as a placeholder is flagged for review.
    let text = plan("curl http://h/ -d 'a={{x}}'", "p.toml").unwrap();
    assert!(text.contains("# review: the request holds '{{'"), "{text}");
}
