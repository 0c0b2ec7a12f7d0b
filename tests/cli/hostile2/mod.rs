//! Hostile input, round 2 (issue 30): each case a minimal reproduction that failed before its
//! fix, in four parts: what a plan or a flag says (`input`), what goes on the wire and what
//! comes back from it (`wire`), what is kept of a run and where (`results`), and what reports
//! and commands write (`outputs`).

mod input;
mod outputs;
mod results;
mod wire;

use crate::common::*;

pub const HEAD: &str =
    "[targets.svc]\nurl = \"http://127.0.0.1:1\"\n[workloads.w]\ntarget = \"svc\"\n\
                    [[scenarios]]\nname = \"s\"\nworkload = \"w\"\n";

/// `GET path` to `addr` over a fresh connection: the response's body.
pub fn get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.split_once("\r\n\r\n").map_or("", |b| b.1).to_string()
}

/// A `perfbase serve` stopped with Ctrl-C at the end, or killed when a test fails first (it
/// holds the test's stderr: left running, it would keep the test run waiting).
pub struct Served(pub Option<std::process::Child>);

impl Served {
    pub fn stop(mut self) {
        if let Some(child) = self.0.take() {
            interrupt(child);
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Requests the reference service at `addr` has answered.
pub fn answered(addr: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(&get(addr, "/stats")).unwrap();
    v["requests"].as_u64().unwrap()
}

/// Ctrl-C to a child whose output the caller still reads.
pub fn interrupt_keeping(child: &mut std::process::Child) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
}
