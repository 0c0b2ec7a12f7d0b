//! Headless Chromium driven over the DevTools protocol, for the pages perfbase serves (the
//! live dashboard, `perfbase ui`): start, navigate, evaluate, screenshots, and the protocol's
//! events kept for a test to read (console messages, requests).

use crate::common::*;
use serde_json::{json, Value};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A program the test needs, or None (with a note) when it is missing and services are not
/// required.
pub(crate) fn tool(path: &str) -> Option<&str> {
    if Path::new(path).exists() {
        return Some(path);
    }
    assert!(
        std::env::var("PERFBASE_REQUIRE_SERVICES").is_err(),
        "{path} is missing: scripts/test.sh installs it"
    );
    eprintln!("note: {path} missing; skipping");
    None
}

/// Chromium headless with the DevTools protocol on a port of its own.
pub(crate) struct Browser {
    child: std::process::Child,
    socket: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    next_id: u64,
    _profile: tempfile::TempDir,
    /// The protocol's events read while waiting for answers, oldest first.
    pub(crate) events: Vec<Value>,
}

/// The page Chromium starts on: a line of text, so that drawing it builds the font cache.
const FIRST_PAGE: &str = "data:text/html,%3Cp%3Eperfbase%3C%2Fp%3E";

/// How long Chromium's set-up may take. Its first start on a fresh machine (a new profile, the
/// font cache built) took longer than a dashboard's whole run; the set-up is not what the tests
/// time, so it gets a generous bound of its own.
const BROWSER_START_SECS: u64 = 120;

impl Browser {
    /// Starts Chromium and waits until it has drawn a first page, so that the timed parts of a
    /// test never pay for the browser's start.
    pub(crate) fn start() -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let child = Command::new("/usr/bin/chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-dev-shm-usage",
                "--remote-debugging-port=0",
                "--window-size=1280,1800",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(FIRST_PAGE)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // A group of its own: Chromium's helper processes go with it at the end.
            .process_group(0)
            .spawn()
            .expect("chromium starts");
        let port_file = profile.path().join("DevToolsActivePort");
        let port: u16 = wait_for(BROWSER_START_SECS, "Chromium's DevTools port", || {
            std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|t| t.lines().next()?.trim().parse().ok())
        });
        let page = wait_for(BROWSER_START_SECS, "the page's DevTools target", || {
            let list: Value = serde_json::from_str(&http_get(port, "/json/list")?).ok()?;
            list.as_array()?
                .iter()
                .find(|t| t["type"] == "page")
                .and_then(|t| t["webSocketDebuggerUrl"].as_str().map(str::to_string))
        });
        let (socket, _) = tungstenite::connect(page.as_str()).expect("DevTools socket");
        let mut b = Browser {
            child,
            socket,
            next_id: 0,
            _profile: profile,
            events: Vec::new(),
        };
        // The text laid out: its height is known only once a font was found for it.
        let drawn = "document.readyState === 'complete' && \
                     document.querySelector('p')?.getBoundingClientRect().height > 0";
        wait_for(BROWSER_START_SECS, "Chromium's first page drawn", || {
            (b.eval(drawn) == json!(true)).then_some(())
        });
        b
    }

    /// Shows `url` and waits until its document has loaded.
    pub(crate) fn goto(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
        let loaded = format!(
            "location.href === {} && document.readyState === 'complete'",
            json!(url)
        );
        wait_for(30, "the page's load", || {
            (self.eval(&loaded) == json!(true)).then_some(())
        });
    }

    /// One DevTools command; its result.
    pub(crate) fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"id": id, "method": method, "params": params}).to_string();
        self.socket.send(tungstenite::Message::text(msg)).unwrap();
        loop {
            let text = match self.socket.read().expect("DevTools answers") {
                tungstenite::Message::Text(t) => t.to_string(),
                _ => continue,
            };
            let v: Value = serde_json::from_str(&text).unwrap();
            if v["id"] == id {
                return v["result"].clone();
            }
            if v.get("method").is_some() && self.events.len() < 10_000 {
                self.events.push(v);
            }
        }
    }

    /// A script's value in the page, as JSON.
    pub(crate) fn eval(&mut self, script: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": script, "returnByValue": true, "awaitPromise": true}),
        );
        r["result"]["value"].clone()
    }

    pub(crate) fn screenshot(&mut self, path: &Path) {
        let r = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        );
        use base64::Engine;
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("a screenshot"))
            .unwrap();
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // SAFETY: signalling the process group this test started.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

pub(crate) fn http_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    // Read up to the body's length: the DevTools server may keep the connection open.
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = s.read(&mut chunk).ok()?;
        bytes.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>())
                })
                .and_then(Result::ok);
            if n == 0 || len.is_some_and(|len| body.len() >= len) {
                return Some(body.to_string());
            }
        } else if n == 0 {
            return None;
        }
    }
}
