//! One JavaScript runtime per worker thread (QuickJS through rquickjs), shared by every
//! virtual user on the thread: the script loaded once, its function, the set-up's data,
//! and the slot where the running user's natives leave what it asked for. A user's code
//! runs only inside [`Vm::run`], in slices bounded by time (the interrupt handler) and the
//! runtime by memory, so a loop or a runaway allocation fails one iteration, not the run.

use super::host::Host;
use super::natives;
use super::Run;
use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::Declared;
use rquickjs::{
    CatchResultExt, CaughtError, Context, Ctx, Function, Module, Object, Persistent, Promise,
    Runtime, Value,
};
use std::cell::Cell;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a script's code may run between two waits (a request, the end of its
/// iteration) before the runtime interrupts it.
pub(crate) const SLICE: Duration = Duration::from_secs(1);
/// How long loading the script (its top level: imports, `open`, `SharedArray`) may take.
const INIT: Duration = Duration::from_secs(30);
/// The memory one runtime (one worker thread's users together) may hold.
pub(crate) const MEMORY: usize = 256 << 20;
/// The deepest the script's stack may grow (a worker thread's stack is 2 MiB).
const STACK: usize = 512 << 10;

/// A worker thread's runtime with the script loaded.
pub(crate) struct Vm {
    // Persistent values first: they must go before the context and runtime they live in.
    pub(crate) function: Option<Persistent<Function<'static>>>,
    pub(crate) exports: Persistent<Object<'static>>,
    pub(crate) data: Persistent<Value<'static>>,
    pub(crate) make_response: Persistent<Function<'static>>,
    pub(crate) host: Rc<Host>,
    deadline: Rc<Cell<Instant>>,
    pub(crate) ctx: Context,
    pub(crate) rt: Runtime,
}

/// Makes a response object from its parts (natives give plain values; the prototype and its
/// `json()` are JavaScript).
const RESPONSE: &str = r#"(() => {
  class Response {
    constructor(status, head, body, url, error, ms) {
      this.status = status; this.body = body; this.url = url; this.error = error;
      this._head = head; this._ms = ms;
    }
    get headers() {
      const h = {};
      for (const line of this._head.split("\n")) {
        const i = line.indexOf(": ");
        if (i < 0) continue;
        const k = line.slice(0, i), v = line.slice(i + 2);
        h[k] = k in h ? h[k] + ", " + v : v;
      }
      Object.defineProperty(this, "headers", { value: h, enumerable: true });
      return h;
    }
    get timings() { return { duration: this._ms }; }
    json(path) {
      let v = JSON.parse(this.body);
      if (path) for (const k of String(path).split(".")) v = v == null ? undefined : v[k];
      return v;
    }
  }
  return (s, h, b, u, e, t) => new Response(s, h, b, u, e, t);
})()"#;

impl Vm {
    /// Loads the script on this thread: its imports, its top level (which may `open` files),
    /// the set-up's data (frozen, shared read-only by every user) and `function`, the export
    /// each iteration calls (None for set-up and tear-down runtimes).
    pub(crate) fn new(run: &Arc<Run>, function: Option<&str>) -> Result<Vm, String> {
        let rt = Runtime::new().map_err(|e| e.to_string())?;
        rt.set_memory_limit(MEMORY);
        rt.set_max_stack_size(STACK);
        let deadline = Rc::new(Cell::new(Instant::now() + INIT));
        let d = deadline.clone();
        rt.set_interrupt_handler(Some(Box::new(move || Instant::now() > d.get())));
        rt.set_loader(
            Files {
                dir: run.dir.clone(),
            },
            Files {
                dir: run.dir.clone(),
            },
        );
        let ctx = Context::full(&rt).map_err(|e| e.to_string())?;
        let host = Rc::new(Host::new(run.clone(), function.is_some()));
        let loaded = ctx.with(|ctx| load(&ctx, &host, run, function));
        host.init.set(false);
        deadline.set(far());
        let (function, exports, data, make_response) = loaded?;
        Ok(Vm {
            function,
            exports,
            data,
            make_response,
            host,
            deadline,
            ctx,
            rt,
        })
    }

    /// Runs `f` and then every job it queued (the promise reactions of the user's code), all
    /// within [`SLICE`]: past it, the interrupt handler stops the code, which throws. Also
    /// gives the first error a job threw that no promise took (an interrupt cannot be
    /// caught, so the iteration's promise never hears of it).
    pub(crate) fn run<R>(&self, f: impl FnOnce(&Ctx<'_>) -> R) -> (R, Option<String>) {
        self.deadline.set(Instant::now() + SLICE);
        let r = self.ctx.with(|ctx| f(&ctx));
        let mut thrown = None;
        loop {
            match self.rt.execute_pending_job() {
                Ok(true) => {}
                Ok(false) => break,
                Err(job) => {
                    let why = job.0.with(|ctx| describe_value(&ctx.catch()));
                    thrown.get_or_insert(why);
                }
            }
        }
        self.deadline.set(far());
        (r, thrown)
    }
}

/// A deadline no slice reaches (the handler is asked often; no Option to test).
fn far() -> Instant {
    Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600)
}

type Loaded = (
    Option<Persistent<Function<'static>>>,
    Persistent<Object<'static>>,
    Persistent<Value<'static>>,
    Persistent<Function<'static>>,
);

fn load<'js>(
    ctx: &Ctx<'js>,
    host: &Rc<Host>,
    run: &Run,
    function: Option<&str>,
) -> Result<Loaded, String> {
    natives::install(ctx, host).map_err(|e| e.to_string())?;
    let make: Function = ctx
        .eval(RESPONSE)
        .catch(ctx)
        .map_err(|e| describe(&e, None))?;
    let module = Module::declare(ctx.clone(), run.file.as_str(), run.source.as_str())
        .catch(ctx)
        .map_err(|e| describe(&e, Some(&run.source)))?;
    let (module, done) = module
        .eval()
        .catch(ctx)
        .map_err(|e| describe(&e, Some(&run.source)))?;
    while ctx.execute_pending_job() {}
    done.finish::<()>()
        .catch(ctx)
        .map_err(|e| describe(&e, Some(&run.source)))?;
    let exports = module.namespace().map_err(|e| e.to_string())?;
    let function = match function {
        None => None,
        Some(name) => {
            let f: Option<Function> = exports.get(name).ok();
            let f = f.ok_or_else(|| {
                let what = if name == "default" {
                    "no default export: write `export default async function () { … }` or \
                     name the function with `function =`"
                        .to_string()
                } else {
                    format!("no exported function '{name}'")
                };
                format!("{}: {what}", run.file)
            })?;
            Some(Persistent::save(ctx, f))
        }
    };
    let data = match &run.data.get().and_then(|d| d.as_deref()) {
        Some(json) => {
            let v = ctx
                .json_parse(*json)
                .catch(ctx)
                .map_err(|e| describe(&e, None))?;
            let freeze: Function = ctx
                .eval("(function f(v){ if (v && typeof v === 'object') { Object.freeze(v); for (const k of Object.keys(v)) f(v[k]); } return v; })")
                .map_err(|e| e.to_string())?;
            freeze.call::<_, Value>((v,)).map_err(|e| e.to_string())?
        }
        None => Value::new_undefined(ctx.clone()),
    };
    Ok((
        function,
        Persistent::save(ctx, exports),
        Persistent::save(ctx, data),
        Persistent::save(ctx, make),
    ))
}

/// An error of the script as one message: the exception's text and its stack (file:line:column
/// of each frame); for a syntax error, the line itself with a caret under the column.
pub(crate) fn describe(e: &CaughtError<'_>, source: Option<&str>) -> String {
    match e {
        CaughtError::Exception(x) => {
            let message = x.message().unwrap_or_default();
            let stack = x.stack().unwrap_or_default();
            let name = x
                .get::<_, Option<String>>("name")
                .ok()
                .flatten()
                .unwrap_or_else(|| "Error".into());
            let mut text = format!("{name}: {message}");
            let stack = stack.trim_end();
            if !stack.is_empty() {
                text.push('\n');
                text.push_str(stack);
            }
            if let (Some(src), Some((line, col))) = (source, position(stack)) {
                if let Some(l) = src.lines().nth(line.saturating_sub(1)) {
                    text.push_str(&format!(
                        "\n    {l}\n    {}^",
                        " ".repeat(col.saturating_sub(1))
                    ));
                }
            }
            text
        }
        CaughtError::Value(v) => describe_value(v),
        CaughtError::Error(e) => e.to_string(),
    }
}

/// A thrown value that is not an Error (`throw "no"`), as text.
pub(crate) fn describe_value(v: &Value<'_>) -> String {
    if let Some(x) = v.as_exception() {
        return describe(&CaughtError::Exception(x.clone()), None);
    }
    match v.get::<rquickjs::Coerced<String>>() {
        Ok(s) => format!("Uncaught {}", s.0),
        Err(_) => "Uncaught exception".into(),
    }
}

/// The line and column of a stack's first frame (`    at f (file.js:12:5)`).
pub(crate) fn position(stack: &str) -> Option<(usize, usize)> {
    let first = stack.lines().next()?;
    let inner = first.trim_end().trim_end_matches(')');
    let mut parts = inner.rsplitn(3, ':');
    let col = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    Some((line, col))
}

/// Module names and files: perfbase's modules by name, and the script's own files by a
/// relative path that stays inside its folder, read through the one capped reader.
struct Files {
    dir: PathBuf,
}

/// `name` relative to the folder of module `base`, kept inside the script's folder: the
/// normalised relative path, or None when it climbs out.
fn relative(base: &str, name: &str) -> Option<String> {
    let mut parts: Vec<String> = Path::new(base)
        .parent()
        .map(|p| {
            p.components()
                .filter_map(|c| match c {
                    Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    for c in Path::new(name).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

impl Resolver for Files {
    fn resolve<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        if super::modules::source(name).is_some() || super::modules::missing(name).is_some() {
            return Ok(name.to_string());
        }
        if name.starts_with("./") || name.starts_with("../") {
            return relative(base, name).ok_or_else(|| {
                rquickjs::Exception::throw_message(
                    ctx,
                    &format!("import '{name}' from {base}: a script imports only files inside its own folder"),
                )
            });
        }
        Err(rquickjs::Exception::throw_message(
            ctx,
            &format!(
                "import '{name}' from {base}: no such module (perfbase's are perfbase, \
                 perfbase/http, perfbase/crypto, perfbase/encoding and perfbase/data, also \
                 as k6, k6/http…; the script's own files by a relative path such as './lib.js')"
            ),
        ))
    }
}

impl Loader for Files {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        if let Some(src) = super::modules::source(name) {
            return Module::declare(ctx.clone(), name, src);
        }
        if let Some(why) = super::modules::missing(name) {
            return Err(rquickjs::Exception::throw_message(
                ctx,
                &format!("import '{name}': {why}"),
            ));
        }
        let text = crate::input::read_text(&self.dir.join(name)).map_err(|e| {
            rquickjs::Exception::throw_message(ctx, &format!("import '{name}': {e}"))
        })?;
        Module::declare(ctx.clone(), name, text)
    }
}

/// The iteration's promise settled: its failure as text, if it failed.
pub(crate) fn outcome_of(p: &Promise<'_>) -> Option<Option<String>> {
    match p.state() {
        rquickjs::promise::PromiseState::Pending => None,
        rquickjs::promise::PromiseState::Resolved => Some(None),
        rquickjs::promise::PromiseState::Rejected => Some(Some(match p.result::<Value>() {
            Some(Err(rquickjs::Error::Exception)) => describe_value(&p.ctx().catch()),
            Some(Err(e)) => e.to_string(),
            Some(Ok(v)) => describe_value(&v),
            None => "rejected".into(),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_stay_inside_the_folder() {
        assert_eq!(
            relative("main.js", "./lib/a.js").as_deref(),
            Some("lib/a.js")
        );
        assert_eq!(relative("lib/a.js", "../b.js").as_deref(), Some("b.js"));
        assert_eq!(relative("main.js", "../etc/passwd"), None);
        assert_eq!(relative("lib/a.js", "../../x.js"), None);
    }

    #[test]
    fn a_stack_gives_its_first_position() {
        assert_eq!(position("    at s.js:1:9\n"), Some((1, 9)));
        assert_eq!(
            position("    at f (main.js:12:5)\n    at g (main.js:3:1)"),
            Some((12, 5))
        );
        assert_eq!(position(""), None);
    }
}
