//! `perfbase ui`: a read-only web app over the store. One listener on a thread of its own
//! answers each connection on a thread (at most [`CONNECTIONS`] at once: the next get a 503),
//! each request once (`Connection: close`), GET and HEAD only: nothing on these pages changes
//! the store. http.rs reads and writes the requests, access.rs decides who is answered,
//! pages.rs and plan.rs answer from the store in frame.rs's frame through a few kept
//! connections (pool.rs), live.rs follows the runs agents are doing.

mod access;
mod frame;
mod http;
mod live;
mod pages;
mod plan;
mod pool;

use crate::cli::ui::UiArgs;
use crate::exit::{bad_input, AppError, Exit};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Reads a request's head from `bytes` as a loopback server does, checks who may have it and
/// writes the refusal when there is one, for the fuzzer (`perfbase-fuzz ui_request`): whether
/// the head was read.
pub fn fuzz_request(bytes: &[u8]) -> bool {
    let Ok(Some(req)) = http::read_from(bytes) else {
        return false;
    };
    let loopback = SocketAddr::from(([127, 0, 0, 1], 8080));
    if let Ok(rules) = access::Access::new(loopback, false, &[]) {
        if let access::Verdict::Refuse(r) = rules.check(&req) {
            let _ = http::write(&mut Vec::new(), &r, req.method == "HEAD");
        }
    }
    true
}

/// Connections answered at once.
const CONNECTIONS: usize = 64;

/// What every connection's thread shares.
pub struct Server {
    pub pool: pool::Pool,
    /// The store's location as pages show it (its password redacted).
    pub store_name: String,
    /// The store's location, for the live followers' own connections.
    location: String,
    access: access::Access,
    live: live::Watches,
}

/// Runs `perfbase ui` until Ctrl-C.
pub fn ui(a: UiArgs) -> Result<Exit, AppError> {
    let addr: SocketAddr = a.listen.trim().parse().map_err(|_| {
        bad_input(format!(
            "--listen {:?}: not an address; write 127.0.0.1:PORT (port 0 picks one)",
            a.listen
        ))
    })?;
    let access = access::Access::new(addr, a.allow_remote, &a.public_names)?;
    let o = a.store.options();
    // Opened once now: a store that does not open stops here, with the flag named.
    drop(crate::store::open(&o)?);
    let listener = TcpListener::bind(addr)
        .map_err(|e| bad_input(format!("--listen {addr}: cannot listen: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| AppError::Failed(anyhow::anyhow!("the listening socket: {e}")))?;
    let store_name = perfbase_store::redact_location(&o.location);
    errln!("perfbase: ui at http://{addr}/ over {store_name}");
    if access.remote() {
        errln!(
            "perfbase: the pages ask for the token in {}; open http://{addr}/?token=… once",
            access::TOKEN_VAR
        );
    }
    let server = Arc::new(Server {
        pool: pool::Pool::new(o.location.clone()),
        store_name,
        location: o.location,
        access,
        live: live::Watches::default(),
    });
    let interrupt = crate::interrupt::install();
    // Accepting blocks on a thread of its own (a poll with sleeps would add its period to
    // every page); this one waits for Ctrl-C, and the process ends with the listener.
    std::thread::Builder::new()
        .name("perfbase-ui-accept".into())
        .spawn(move || accept(&listener, &server))
        .map_err(|e| AppError::Failed(anyhow::anyhow!("cannot start a thread: {e}")))?;
    while !interrupt.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(Exit::Success)
}

/// Takes each connection onto a thread of its own, at most [`CONNECTIONS`] at once.
fn accept(listener: &TcpListener, server: &Arc<Server>) {
    let active = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(stream) = stream else {
            // Out of file descriptors, most likely: let some connections end first.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        if active.fetch_add(1, Ordering::AcqRel) >= CONNECTIONS {
            active.fetch_sub(1, Ordering::AcqRel);
            busy(stream);
            continue;
        }
        let (s, n) = (server.clone(), active.clone());
        let spawned = std::thread::Builder::new()
            .name("perfbase-ui".into())
            .spawn(move || {
                connection(&s, stream);
                n.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Too many connections: a short answer, so the browser retries rather than waits.
fn busy(stream: TcpStream) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let r = http::Response::text("503 Service Unavailable", "busy; try again");
    let _ = http::write(&mut &stream, &r, false);
}

/// One connection: one request read, checked and answered.
fn connection(server: &Server, mut stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(http::READ_TIMEOUT));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
    let req = match http::read(&stream) {
        Ok(Some(req)) => req,
        Ok(None) => return,
        Err(why) => {
            let r = http::Response::text("400 Bad Request", why);
            let _ = http::write(&mut stream, &r, false);
            http::linger(&stream);
            return;
        }
    };
    if let access::Verdict::Refuse(r) = server.access.check(&req) {
        let _ = http::write(&mut stream, &r, false);
        return;
    }
    let head_only = req.method == "HEAD";
    if req.method != "GET" && !head_only {
        let r = http::Response::text(
            "405 Method Not Allowed",
            "perfbase ui only reads: GET and HEAD; nothing here changes the store",
        )
        .with("Allow", "GET, HEAD".into());
        let _ = http::write(&mut stream, &r, false);
        return;
    }
    let response = if req.path == "/live" || req.path.starts_with("/live/") {
        match live::answer(server, &req, &mut stream) {
            Some(r) => r,
            None => return,
        }
    } else if req.path == "/favicon.ico" {
        http::Response::new("204 No Content", "text/plain", "")
    } else {
        pages::answer(server, &req)
    };
    let _ = http::write(&mut stream, &response, head_only);
}
