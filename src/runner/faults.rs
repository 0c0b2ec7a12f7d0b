//! A scenario's faults as its phases run: each armed when a measured phase starts, run on a
//! thread of its own `at` into it (the load goes on meanwhile), and told to the phase's result
//! when the phase ends. A phase that ends first cancels the faults not yet due.

use crate::plan::Fault;
use perfbase_core::result::FaultEvent;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The most of a command's output read (the rest is drained unread).
const READ_CAP: u64 = 64 * 1024;
/// The most of it kept in the result, after redaction.
const KEEP_CHARS: usize = 2000;

/// The faults of one running phase.
pub(super) struct Armed {
    cancel: Arc<(Mutex<bool>, Condvar)>,
    runs: Vec<JoinHandle<Option<(Duration, FaultEvent)>>>,
}

/// Starts a thread per fault, each waiting for its time into the phase that starts now.
pub(super) fn arm(faults: &[Fault]) -> Option<Armed> {
    if faults.is_empty() {
        return None;
    }
    let started = Instant::now() + perfbase_engine::START_LEAD;
    let cancel = Arc::new((Mutex::new(false), Condvar::new()));
    let runs = faults
        .iter()
        .cloned()
        .map(|f| {
            let cancel = cancel.clone();
            std::thread::spawn(move || {
                if !wait_until(&cancel, started + f.at) {
                    return None;
                }
                let at = started.elapsed();
                Some((at, run(&f)))
            })
        })
        .collect();
    Some(Armed { cancel, runs })
}

/// Waits until `due`; false when cancelled first.
fn wait_until(cancel: &(Mutex<bool>, Condvar), due: Instant) -> bool {
    let (lock, cv) = cancel;
    let mut stop = lock.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if *stop {
            return false;
        }
        let now = Instant::now();
        if now >= due {
            return true;
        }
        stop = cv
            .wait_timeout(stop, due - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

impl Armed {
    /// The phase ended: faults not yet due are cancelled, running ones waited for; each run
    /// one placed on the run's clock by the phase's `offset` on it.
    pub(super) fn finish(self, offset: Duration) -> Vec<FaultEvent> {
        let (lock, cv) = &*self.cancel;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
        self.runs
            .into_iter()
            .filter_map(|h| h.join().ok().flatten())
            .map(|(at, mut e)| {
                e.at_s = (offset + at).as_secs_f64();
                e
            })
            .collect()
    }
}

/// Runs a fault's command to its end or its timeout.
fn run(f: &Fault) -> FaultEvent {
    let t0 = Instant::now();
    let shown =
        perfbase_core::redact::known(&perfbase_core::redact::text(&f.run.join(" "))).into_owned();
    let mut event = FaultEvent {
        at_s: 0.0,
        command: perfbase_core::redact::printable(&shown).into_owned(),
        exit: None,
        took_ms: 0.0,
        output: String::new(),
    };
    let child = Command::new(&f.run[0])
        .args(&f.run[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            event.output = format!("could not start {}: {e}", event.command);
            return event;
        }
    };
    let out = child.stdout.take().map(reader);
    let err = child.stderr.take().map(reader);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if t0.elapsed() < f.timeout => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    event.took_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let mut text: String = [out, err]
        .into_iter()
        .flatten()
        .filter_map(|h| h.join().ok())
        .map(|t| t.trim_end().to_string())
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    if status.is_none() {
        text.push_str(&format!(
            "\n(killed after its timeout of {})",
            perfbase_core::units::format_duration(f.timeout)
        ));
    }
    event.exit = status.and_then(|s| s.code());
    // Redacted before it is cut, so no part of a secret survives the cut.
    let clean =
        perfbase_core::redact::known(&perfbase_core::redact::text(text.trim())).into_owned();
    event.output = perfbase_core::redact::printable(&clean)
        .chars()
        .take(KEEP_CHARS)
        .collect();
    event
}

/// Reads the start of a pipe on a thread of its own (and drains the rest, so the command
/// never blocks on a full pipe).
fn reader(mut pipe: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut pipe).take(READ_CAP).read_to_end(&mut buf);
        let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        String::from_utf8_lossy(&buf).into_owned()
    })
}
