//! `--dashboard ADDR`: a local web page of the run as it goes, served from the binary by a
//! thread of its own. `/` is the page, `/events` its server-sent events (a `frame` each
//! second, an `end` when the run is over), `/frame` the newest frame as JSON and `/report`
//! the run's HTML report once it has ended.
//!
//! The run never waits for a browser: it only swaps the newest frame into a shared slot.
//! Each browser has a thread that sends the newest frame when there is one, so a slow one
//! skips seconds, and a write that stalls for 2 s drops that browser.

use super::feed::{events, Feed};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a browser may take to accept a write before it is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);
/// After the run, how long the server waits for an open page to fetch the report.
const LINGER: Duration = Duration::from_secs(5);

pub struct Dashboard {
    shared: Arc<Feed>,
    pub addr: SocketAddr,
    accept: Option<JoinHandle<()>>,
}

impl Dashboard {
    /// Binds `addr` (before any load, so a port in use stops the run then) and starts serving
    /// the page titled `title`.
    pub fn start(addr: SocketAddr, title: &str) -> std::io::Result<Dashboard> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Feed::default());
        let page = Arc::new(perfbase_report::html::live_page(title));
        let s = shared.clone();
        let accept = std::thread::Builder::new()
            .name("perfbase-dashboard".into())
            .spawn(move || accept_loop(listener, addr, s, page))?;
        Ok(Dashboard {
            shared,
            addr,
            accept: Some(accept),
        })
    }

    /// What the page follows, for a publisher of its own (`merge --dashboard`'s follower).
    pub fn feed(&self) -> Arc<Feed> {
        self.shared.clone()
    }

    /// The newest frame, as JSON; browsers get it at their next write.
    pub fn publish(&self, frame_json: String) {
        self.shared.publish(frame_json);
    }

    /// The run is over: pages are told so, and `/report` serves `html` from now on.
    pub fn end(&self, html: String) {
        self.shared.end(html);
    }

    /// Gives a page that was open at the end up to [`LINGER`] to fetch the report, then stops
    /// serving. Without a page it returns at once.
    pub fn finish(mut self) {
        let until = Instant::now() + LINGER;
        let mut st = self.shared.lock();
        st.ended = true;
        self.shared.changed.notify_all();
        let pages = st.following_at_end.max(st.following);
        while pages > 0 && st.reports_served == 0 && Instant::now() < until {
            let wait = until.saturating_duration_since(Instant::now());
            st = match self.shared.changed.wait_timeout(st, wait) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
        st.closing = true;
        drop(st);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

fn accept_loop(listener: TcpListener, addr: SocketAddr, shared: Arc<Feed>, page: Arc<String>) {
    loop {
        if shared.lock().closing {
            return;
        }
        match listener.accept() {
            Ok((stream, _)) => {
                let (s, p) = (shared.clone(), page.clone());
                let _ = std::thread::Builder::new()
                    .name("perfbase-dashboard-page".into())
                    .spawn(move || serve(stream, addr, &s, &p));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// One browser connection: reads the request line and answers it, if it is addressed to
/// this server ([`perfbase_core::host::answers`]: not through a rebound name).
fn serve(stream: TcpStream, addr: SocketAddr, shared: &Feed, page: &str) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    // The rest of the head is not needed; read it so the browser sees a clean answer.
    let mut header = String::new();
    let mut host = None;
    while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
        if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("host") {
                host = Some(value.trim().to_string());
            }
        }
        header.clear();
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split('?').next().unwrap_or("/");
    let mut out = &stream;
    if !perfbase_core::host::answers(host.as_deref(), addr) {
        let _ = reply(&mut out, "403 Forbidden", "text/plain", HOST_REFUSED);
        return;
    }
    match path {
        "/" | "/index.html" => {
            let _ = reply(&mut out, "200 OK", "text/html; charset=utf-8", page);
        }
        "/events" => events(&mut out, shared),
        "/frame" => {
            let frame = shared.lock().frame.clone();
            match frame {
                Some(f) => reply(&mut out, "200 OK", "application/json", &f),
                None => reply(&mut out, "204 No Content", "text/plain", ""),
            }
            .unwrap_or(());
        }
        "/report" => {
            let report = shared.lock().report.clone();
            let _ = match report {
                Some(html) => {
                    let r = reply(&mut out, "200 OK", "text/html; charset=utf-8", &html);
                    shared.lock().reports_served += 1;
                    shared.changed.notify_all();
                    r
                }
                None => reply(
                    &mut out,
                    "503 Service Unavailable",
                    "text/plain",
                    "the run is still going: its report is here when it ends\n",
                ),
            };
        }
        _ => {
            let _ = reply(&mut out, "404 Not Found", "text/plain", "not found\n");
        }
    }
}

/// Why a request through a name was refused, and what to use instead.
pub(crate) const HOST_REFUSED: &str = "this dashboard listens on a loopback address and answers \
     requests to localhost or an IP address only (a name pointing here could be a web page's \
     DNS rebinding); open it as http://127.0.0.1:PORT/\n";

fn reply(out: &mut impl Write, status: &str, kind: &str, body: &str) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    out.flush()
}
