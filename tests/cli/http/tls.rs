//! `perfbase http` over HTTPS: a certificate trusted with `--cacert`, untrusted, or ignored
//! with `--insecure`.

use crate::common::*;

#[test]
fn https_with_a_trusted_untrusted_or_ignored_certificate() {
    let _g = serial();
    let tls = perfbase_reference::tls::self_signed().unwrap();
    let server =
        perfbase_reference::spawn_tls(0, perfbase_reference::Config::default(), tls.config)
            .unwrap();
    let dir = tmp();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &tls.cert_pem).unwrap();
    let ca = ca.to_str().unwrap();
    let url = format!("https://127.0.0.1:{}/", server.addr.port());
    // Trusted through --cacert: keep-alive TLS connections carry every request.
    let r = perfbase(&[&url, "-n", "400", "-c", "4", "--cacert", ca], dir.path());
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.count("status", "200"), 400);
    assert_eq!(server.stats.connections(), 4);
    validate(r.json());
    // Not trusted: every connect fails with the reason, nothing succeeds, exit 3.
    let r = perfbase(&[&url, "-n", "5", "-c", "1"], dir.path());
    assert_eq!(r.code(), 3, "{}", r.stdout());
    assert_eq!(r.count("errors", "connect"), 5);
    let sample = r.json()["error_samples"][0]["message"].to_string();
    assert!(
        sample.contains("TLS handshake") && sample.contains("certificate"),
        "{sample}"
    );
    assert!(
        sample.contains("--cacert") && sample.contains("--insecure"),
        "the fix is named: {sample}"
    );
    // --insecure accepts it; a new connection per request, each a TLS handshake.
    let before = server.stats.connections();
    let r = perfbase(
        &[&url, "-n", "60", "-c", "2", "-k", "--no-keepalive"],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.count("status", "200"), 60);
    assert_eq!(server.stats.connections() - before, 60);
    // A targets file over https, per endpoint; and /delay/20 keeps its p50 over TLS.
    let targets = dir.path().join("t.txt");
    std::fs::write(&targets, format!("GET {url}\nGET {url}delay/20\n")).unwrap();
    let r = perfbase(
        &[
            "--targets",
            targets.to_str().unwrap(),
            "-n",
            "100",
            "-c",
            "4",
            "--cacert",
            ca,
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let e = r.json()["endpoints"].as_array().unwrap();
    assert_eq!(e[1]["name"], "GET /delay/20");
    assert_eq!(e[1]["requests"], 50);
    let p50 = e[1]["latency_ms"]["p50"].as_f64().unwrap();
    assert!((20.0..40.0).contains(&p50), "{p50}");
}
