//! `perfbase http` and `perfbase serve` end to end, one file per topic:
//!
//! - `counts`: exact status and error counts, per-endpoint breakdowns, keep-alive, bodies and
//!   methods, expected statuses;
//! - `load_models`: the open model's rate and queueing, count and duration, warm-up;
//! - `faults`: servers that stop mid-run or misbehave, and what each fault is counted as;
//! - `http2`, `tls`: HTTP/2 multiplexing and HTTPS certificates;
//! - `timing`: where a request's time went (connect, TLS, waiting, receiving);
//! - `thresholds`: `--threshold` gating the exit code;
//! - `monitor`: `--monitor` sampling services;
//! - `terminal`: Ctrl-C, a closed stdout and the progress line;
//! - `bad_input`, `secrets`: one-line errors with exit 2, and secrets kept out of every output;
//! - `serve`: `perfbase serve`, plain and TLS.

use assert_cmd::Command;

mod bad_input;
mod counts;
mod faults;
mod http2;
mod load_models;
mod monitor;
mod secrets;
mod serve;
mod streams;
mod terminal;
mod thresholds;
mod timing;
mod tls;

fn bad(args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
