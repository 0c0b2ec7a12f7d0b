//! Scripted workloads: an op is one iteration of a JavaScript function (an ES module's
//! export, async), run by QuickJS through rquickjs. One runtime per worker thread holds the
//! script once and runs every virtual user on the thread as an async iteration of its own,
//! so a user costs its connection and its iteration's few objects, not a runtime. The
//! engine times each request the code makes, as it times a journey's steps: the code runs
//! between them and never sees a clock or a histogram.
//!
//! crypto.rs (hashes, HMAC, base64, random, CSV), modules.rs (the importable modules'
//! JavaScript), names.rs (endpoints, groups and checks named as the run finds them),
//! natives.rs (what the modules call), session.rs (one user), vm.rs (one thread's runtime,
//! its module loader, its limits, error text).

mod crypto;
mod host;
mod modules;
mod names;
mod natives;
mod session;
mod vm;

pub use session::ScriptSession;

use crate::http::TlsOptions;
use hyper::header::{HeaderName, HeaderValue};
use names::Names;
use perfbase_core::{redact, Driver, Outcome};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use url::Url;
use vm::Vm;

/// A script workload as a plan or a command gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptSpec {
    /// The script (an ES module).
    pub file: PathBuf,
    /// The export each iteration calls (`default` when None).
    pub function: Option<String>,
    /// The target's URL, against which relative request URLs are resolved.
    pub base: Option<Url>,
    /// Headers sent with every request (the plan's), before the script's own.
    pub headers: Vec<(String, String)>,
    /// `__ENV` besides the process's environment (the plan's `env`, the command's `-e`).
    pub env: Vec<(String, String)>,
}

/// What every thread's runtime shares: the script and what the run has found.
pub(crate) struct Run {
    /// The script's file name, as its stack frames name it.
    pub(crate) file: String,
    /// Its folder: the only place `open` and imports read from.
    pub(crate) dir: PathBuf,
    pub(crate) source: String,
    pub(crate) function: String,
    base: Option<Url>,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) tls: TlsOptions,
    pub(crate) names: Names,
    /// The set-up's result as JSON (None without `setup`); set before any user starts.
    pub(crate) data: OnceLock<Option<String>>,
    /// Tells runtimes of different runs apart on a thread.
    id: u64,
    users: AtomicU64,
}

static RUNS: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's runtime for each run in progress.
    static VMS: RefCell<Vec<(u64, Weak<Vm>)>> = const { RefCell::new(Vec::new()) };
}

impl Run {
    /// `path` (from the script) inside its folder, or why not.
    pub(crate) fn inside(&self, path: &str) -> Result<PathBuf, String> {
        let full = self
            .dir
            .join(path)
            .canonicalize()
            .map_err(|e| format!("{e}"))?;
        if !full.starts_with(&self.dir) {
            return Err("a script reads files only inside its own folder".into());
        }
        Ok(full)
    }

    /// A request's URL: absolute, or relative to the target's.
    pub(crate) fn url(&self, raw: &str) -> Result<Url, String> {
        let url = match Url::parse(raw) {
            Ok(u) => u,
            Err(url::ParseError::RelativeUrlWithoutBase) => match &self.base {
                Some(b) => b.join(raw).map_err(|e| e.to_string())?,
                None => {
                    return Err("a relative URL needs the target's URL (--url, or the \
                                workload's target)"
                        .into())
                }
            },
            Err(e) => return Err(e.to_string()),
        };
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "scripts send http:// and https:// requests, not {}:",
                url.scheme()
            ));
        }
        Ok(url)
    }

    /// This thread's runtime for the run, loaded on first use.
    fn vm(self: &Arc<Run>) -> Result<Rc<Vm>, String> {
        VMS.with(|vms| {
            let mut vms = vms.borrow_mut();
            vms.retain(|(_, w)| w.strong_count() > 0);
            if let Some(vm) = vms
                .iter()
                .find(|(id, _)| *id == self.id)
                .and_then(|(_, w)| w.upgrade())
            {
                return Ok(vm);
            }
            let vm = Rc::new(Vm::new(self, Some(&self.function))?);
            vms.push((self.id, Rc::downgrade(&vm)));
            Ok(vm)
        })
    }
}

/// Reads and loads a script as the driver will (its syntax, its imports, its top level and
/// its function), for a plan's reader: an error names the file, line and column.
pub fn check(spec: &ScriptSpec) -> Result<(), String> {
    let run = Arc::new(Run::new(spec, &TlsOptions::default())?);
    Vm::new(&run, Some(&run.function)).map(drop)
}

impl Run {
    fn new(spec: &ScriptSpec, tls: &TlsOptions) -> Result<Run, String> {
        let shown = spec.file.display().to_string();
        let source = crate::input::read_text(&spec.file).map_err(|e| format!("{shown}: {e}"))?;
        let full = spec
            .file
            .canonicalize()
            .map_err(|e| format!("{shown}: {e}"))?;
        let dir = full.parent().map(Path::to_path_buf).unwrap_or_default();
        let file = full
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or(shown);
        let mut headers = Vec::new();
        for (n, v) in &spec.headers {
            let name = HeaderName::from_bytes(n.as_bytes())
                .map_err(|_| format!("'{n}' is no header name"))?;
            let value = HeaderValue::from_str(v)
                .map_err(|_| format!("header {n}: a control character in its value"))?;
            headers.push((name, value));
        }
        let mut env: Vec<(String, String)> = std::env::vars().collect();
        env.extend(spec.env.iter().cloned());
        for (k, v) in &env {
            if redact::is_secret_name(k) && !v.is_empty() {
                redact::remember(v);
            }
        }
        Ok(Run {
            file,
            dir,
            source,
            function: spec.function.clone().unwrap_or_else(|| "default".into()),
            base: spec.base.clone(),
            headers,
            env,
            tls: tls.clone(),
            names: Names::default(),
            data: OnceLock::new(),
            id: RUNS.fetch_add(1, Ordering::Relaxed),
            users: AtomicU64::new(0),
        })
    }
}

/// The script driver: the run every worker's runtime loads.
pub struct ScriptDriver {
    run: Arc<Run>,
}

impl ScriptDriver {
    /// Reads `spec`'s script and loads it once here, so that its errors (syntax, imports, a
    /// missing function) stop the run before any load.
    pub fn new(spec: &ScriptSpec, tls: &TlsOptions) -> Result<ScriptDriver, String> {
        let run = Arc::new(Run::new(spec, tls)?);
        Vm::new(&run, Some(&run.function))?;
        Ok(ScriptDriver { run })
    }

    /// Runs the script's `function` export (`setup` or `teardown`) to its end, on a runtime
    /// of its own: its result as JSON. Ok(None) when the script has no such export.
    async fn once(&self, function: &str) -> Result<Option<String>, String> {
        let vm = Rc::new(Vm::new(&self.run, None)?);
        let f = vm.ctx.with(|ctx| {
            let exports = vm.exports.clone().restore(&ctx).ok()?;
            let f: rquickjs::Function = exports.get(function).ok()?;
            Some(rquickjs::Persistent::save(&ctx, f))
        });
        let Some(f) = f else { return Ok(None) };
        let mut session = ScriptSession::new(vm, 0);
        session
            .complete(f)
            .await
            .map_err(|why| format!("{function}() failed: {why}"))
    }

    /// `setup()`, once before any load; its result is every iteration's argument. An error
    /// says what failed.
    pub async fn prepare(&self) -> Result<(), String> {
        if self.run.data.get().is_some() {
            return Ok(());
        }
        let data = self.once("setup").await?;
        let _ = self.run.data.set(data);
        Ok(())
    }

    /// The set-up's result as JSON, for a test or a dry run.
    pub fn data(&self) -> Option<String> {
        self.run.data.get().cloned().flatten()
    }
}

impl Driver for ScriptDriver {
    type Session = ScriptSession;

    async fn open(&self, _worker: usize) -> Result<ScriptSession, Outcome> {
        let vm = self
            .run
            .vm()
            .map_err(|why| Outcome::error(perfbase_core::Class::Script, why))?;
        let user = self.run.users.fetch_add(1, Ordering::Relaxed) + 1;
        Ok(ScriptSession::new(vm, user))
    }

    fn labels(&self) -> Vec<String> {
        self.run.names.labels()
    }

    fn groups(&self) -> Vec<String> {
        self.run.names.groups()
    }

    fn group(&self, label: u16) -> u16 {
        self.run.names.group(label)
    }

    fn check_names(&self) -> Vec<String> {
        self.run.names.checks()
    }

    fn metrics(&self) -> Vec<(String, perfbase_core::metric::MetricKind)> {
        self.run.names.metrics()
    }

    fn names_grow(&self) -> bool {
        true
    }

    /// A script's iteration has no known length: four requests' timeouts, and a minute of
    /// think time, before the end of a phase cuts it off.
    fn iteration_span(&self, timeout: Duration) -> Option<Duration> {
        Some(timeout.saturating_mul(4) + Duration::from_secs(60))
    }

    /// `teardown(data)`, once the load is over.
    async fn finish(&self) -> Result<(), String> {
        self.once("teardown").await.map(drop)
    }
}
