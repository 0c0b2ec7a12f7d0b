//! Values from the environment: secrets reach the requests but not the labels, a header value
//! with a line break is refused without being shown, and a URL variable cannot change where
//! the load goes.

use super::*;

#[test]
fn secrets_come_from_the_environment_and_stay_out_of_labels() {
    std::env::set_var("PERFBASE_TEST_TOKEN", "s3cret");
    let text = r#"
[targets.api]
url = "http://127.0.0.1:8080"
headers = { Authorization = "Bearer ${PERFBASE_TEST_TOKEN}" }
[workloads.w]
target = "api"
[[scenarios]]
name = "s"
workload = "w"
rate = 1
"#;
    let p = plan(text).unwrap();
    let w = &p.workloads["w"];
    assert_eq!(specs(w)[0].headers[0].1, "Bearer s3cret");
    assert_eq!(
        w.shown_headers,
        vec!["Authorization: [redacted]".to_string()]
    );
    let e = plan(&text.replace("PERFBASE_TEST_TOKEN", "PERFBASE_UNSET_VAR"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("p.toml:4: targets.api.headers.Authorization: environment variable PERFBASE_UNSET_VAR is not set"), "{e}");
}

#[test]
fn a_header_with_a_line_break_is_refused_after_expansion_without_its_value() {
    std::env::set_var("PERFBASE_TEST_CRLF_TOKEN", "Bearer s3cr\r\nX-Injected: 1");
    let e = plan(
        "[targets.t]\nurl = \"http://127.0.0.1:1/\"\nheaders = { Authorization = \"${PERFBASE_TEST_CRLF_TOKEN}\" }\n[workloads.w]\ntarget = \"t\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 1\n",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "p.toml:3: targets.t.headers.Authorization: the value has a line break (CR or LF), which would end the header early"
    );
    assert!(!e.contains("s3cr"));
}

#[test]
fn a_url_variable_cannot_change_where_the_load_goes() {
    std::env::set_var("PERFBASE_TEST_AT_PW", "pw@127.0.0.1:1/x");
    std::env::set_var("PERFBASE_TEST_BAD_HOST", "127.0.0.1:1/x");
    let text = r#"
[targets.api]
url = "http://bob:${PERFBASE_TEST_AT_PW}@127.0.0.1:8080/"
[workloads.w]
target = "api"
[[scenarios]]
name = "s"
workload = "w"
rate = 1
"#;
    let p = plan(text).unwrap();
    let base = &specs(&p.workloads["w"])[0].base;
    assert_eq!(
        (base.host_str(), base.port()),
        (Some("127.0.0.1"), Some(8080))
    );
    assert_eq!(base.password(), Some("pw%40127.0.0.1%3A1%2Fx"));
    let e = plan(&text.replace(
        "bob:${PERFBASE_TEST_AT_PW}@127.0.0.1:8080",
        "${PERFBASE_TEST_BAD_HOST}",
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("p.toml:3: targets.api.url: ${PERFBASE_TEST_BAD_HOST} stands in the URL's scheme, host or port"), "{e}");
}
