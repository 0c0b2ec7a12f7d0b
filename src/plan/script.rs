//! A script workload: `script = "checkout.js"` (and `function`, `env`) on an http(s)://
//! target, whose URL relative request URLs are resolved against and whose headers and
//! trust settings every request gets. The script is loaded when the plan is read, so its
//! syntax errors are the plan's, with the script's file, line and column.

use super::fields::At;
use super::http_fields::Fields;
use super::http_target::{target_headers, tls_of};
use super::model::*;
use crate::backend::http::{HttpRequests, HttpTarget};
use crate::backend::Backend;
use perfbase_drivers::http::HttpOptions;
use perfbase_drivers::script::ScriptSpec;

/// What a script workload cannot also have: the fields of a request, of journeys.
fn refuse_others(at: &At<'_>, w: &Fields) -> Result<(), PlanError> {
    let others = [
        ("method", w.method.is_some()),
        ("path", w.path.is_some()),
        ("body", w.body.is_some() || w.body_file.is_some()),
        ("mix", w.mix.is_some()),
        ("steps", w.steps.is_some() || w.journeys.is_some()),
        ("setup", w.setup.is_some()),
        ("feed", w.feed.is_some()),
        ("think", w.think.is_some()),
        ("ok_status", w.ok_status.is_some()),
    ];
    match others.iter().find(|(_, given)| *given) {
        Some((name, _)) => Err(at.err(
            at.field,
            format!(
                "a script workload makes its own requests: `{name}` has no place beside \
                 `script` (write it in the script)"
            ),
        )),
        None => Ok(()),
    }
}

/// The workload of `script = "…"`.
pub(super) fn script_workload(at: &At<'_>, w: &Fields) -> Result<Workload, PlanError> {
    let (cx, field) = (at.cx, at.field);
    refuse_others(at, w)?;
    let (tdef, _, _, url) = at.target;
    let script = w.script.as_ref().expect("read only with a script");
    let file = cx.base.join(script.get_ref());
    let (headers, shown_headers) = target_headers(cx, tdef, at.target_field.get_ref())?;
    let mut env = Vec::new();
    for (k, v) in &w.env {
        env.push((k.clone(), cx.env(v, &format!("{field}.env.{k}"))?));
    }
    if let Some(f) = &w.function {
        cx.name(f, &format!("{field}.function"))?;
    }
    let spec = ScriptSpec {
        file,
        function: w.function.as_ref().map(|f| f.get_ref().clone()),
        base: url.clone(),
        headers,
        env,
    };
    perfbase_drivers::script::check(&spec)
        .map_err(|e| cx.err(script, format!("{field}.script"), e))?;
    Ok(Workload {
        name: at.name.to_string(),
        label: format!("{} (script {})", at.shown_url, script.get_ref()),
        corpora: Vec::new(),
        shown_headers,
        backend: Backend::Http(HttpTarget {
            requests: HttpRequests::Script(Box::new(spec)),
            options: HttpOptions {
                tls: tls_of(cx, tdef),
                ..HttpOptions::default()
            },
        }),
        suite: Vec::new(),
    })
}
