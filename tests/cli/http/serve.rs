//! `perfbase serve`: it prints its address first and answers, over HTTP and over TLS with a
//! certificate it writes.

use crate::common::*;

#[test]
fn serve_prints_its_address_first_and_answers() {
    let (child, line) = serve(&[]);
    use std::io::{Read, Write};
    let addr = line.trim().rsplit("http://").next().unwrap().to_string();
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    interrupt(child);
}

#[test]
fn serve_tls_writes_its_certificate_and_answers_https() {
    let dir = tmp();
    let cert = dir.path().join("cert.pem");
    let (child, line) = serve(&["--tls-cert-out".as_ref(), cert.as_os_str()]);
    let url = line.trim().rsplit(' ').next().unwrap().to_string();
    assert!(url.starts_with("https://127.0.0.1:"), "{line}");
    let r = perfbase(
        &[
            &format!("{url}/health"),
            "-n",
            "20",
            "-c",
            "2",
            "--cacert",
            cert.to_str().unwrap(),
        ],
        dir.path(),
    );
    interrupt(child);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.count("status", "200"), 20);
}
