//! `--jsonl FILE|-`: the run as it happens, one JSON object per line: a `second` line about
//! once a second while a phase runs, and a `phase` line (the phase's whole result, as in the
//! result JSON) as soon as it ends, so `perfbase http … --jsonl - | jq` works like vegeta's
//! `attack | report` pipe.

use perfbase_core::result::PhaseResult;
use perfbase_engine::{PhaseSpec, ProgressSnapshot};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

pub(super) struct Jsonl {
    out: Option<Box<dyn Write + Send>>,
    /// Where it goes, to name it when a write fails.
    path: std::path::PathBuf,
    /// The rate of each second line.
    rate: crate::progress::RateMeter,
}

impl Jsonl {
    /// Opens (truncates) the file, or takes standard output for `-`.
    pub fn open(path: &Path) -> std::io::Result<Jsonl> {
        let out: Box<dyn Write + Send> = if path.as_os_str() == "-" {
            Box::new(std::io::stdout())
        } else {
            // A FIFO with no reader must not hang the run before its first request.
            Box::new(perfbase_report::json::open_stream(path)?)
        };
        Ok(Jsonl {
            out: Some(out),
            path: path.to_path_buf(),
            rate: Default::default(),
        })
    }

    /// Writes one line and flushes it, so a reader sees it at once. A reader that went away
    /// (`| head -3`) stops the stream, not the run: what is measured is still saved.
    fn line(&mut self, v: &serde_json::Value) {
        if let Some(out) = &mut self.out {
            let mut text = v.to_string();
            text.push('\n');
            if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
                self.out = None;
                // A reader that went away is the pipe's end, not a failure; anything else (a
                // full disk) loses what was asked for: said now, and the run exits 4.
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    errln!(
                        "perfbase: error: --jsonl {}: cannot write ({e}); the stream stops here, \
                         the run goes on and is saved",
                        self.path.display()
                    );
                    crate::out::output_failed();
                }
            }
        }
    }

    pub fn second(
        &mut self,
        scenario: &str,
        phase: &PhaseSpec,
        elapsed: Duration,
        p: ProgressSnapshot,
    ) {
        let rps = self.rate.rate(elapsed, p.completed);
        self.line(&serde_json::json!({
            "type": "second",
            "scenario": scenario,
            "phase": phase.name,
            "measured": phase.record,
            "elapsed_s": (elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
            "requests": p.completed,
            "errors": p.errors,
            "rps": (rps * 10.0).round() / 10.0,
            "p99_ms_so_far": p.p99_ms,
        }));
    }

    /// A phase ended: its result, or only its name for a phase not measured (a warm-up).
    pub fn phase(&mut self, spec: &PhaseSpec, result: Option<&PhaseResult>) {
        self.rate.reset();
        let mut v = serde_json::Map::new();
        v.insert("type".into(), "phase".into());
        match result.map(serde_json::to_value) {
            Some(Ok(serde_json::Value::Object(fields))) => v.extend(fields),
            _ => {
                v.insert("name".into(), spec.name.clone().into());
                v.insert("measured".into(), false.into());
            }
        }
        self.line(&serde_json::Value::Object(v));
    }
}
