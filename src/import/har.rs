//! `perfbase import har FILE.har`: a browser's recording (HTTP Archive 1.2) as one journey,
//! a step per request of its main origin in the recorded order. What a replay should not
//! send is dropped and counted in the header comment: static assets (a load test of an API
//! is not a test of a CDN), other origins (a journey talks to one), the browser's CORS
//! preflights and requests that got no answer. Values later requests reused become
//! captures (`correlate`), secrets variables (`text`), and each recorded status a check.

mod read;

use super::correlate::{candidates, Correlator, From};
use super::text::{fields, hazard, origin, q, Secrets};
use super::Request;
use perfbase_core::redact::printable;
use read::{keep, Dropped, Har, Recorded};

/// The plan of `raw`, the HAR's text (`source` names it in the comment; `run_as` is the
/// file the plan is written to).
pub(super) fn plan(
    raw: &str,
    source: &str,
    include_static: bool,
    run_as: &str,
) -> Result<String, String> {
    let har: Har = serde_json::from_str(raw)
        .map_err(|e| format!("not an HTTP Archive (JSON with log.entries): {e}"))?;
    let (recorded, dropped) = keep(har.log.entries, include_static)?;
    // Each step is a row of every report, and a journey has at most this many: a plan that
    // could never run is not written.
    let most = perfbase_core::recorder::MAX_LABELS;
    if recorded.len() > most {
        return Err(format!(
            "{} requests to import (static assets left out), and a journey has at most {most} \
             steps: record fewer pages, or cut the recording into parts of at most {most}",
            recorded.len()
        ));
    }
    let mut correlator = Correlator::default();
    let mut secrets = Secrets::default();
    let mut steps = Vec::new();
    for (i, r) in recorded.iter().enumerate() {
        let mut req = r.request.clone();
        correlator.rewrite(i, &mut req);
        // What no earlier answer explains and that looks like a credential: a variable.
        let whose = format!("step {}'s", i + 1);
        for h in &mut req.headers {
            h.1 = secrets.header(&h.0, &h.1);
        }
        req.query = req
            .query
            .map(|q| secrets.pairs(&q, &format!("{whose} query parameter")));
        let form = req.form();
        req.body = req.body.map(|b| secrets.body(&b, form, &whose).0);
        correlator.answer(
            i,
            candidates(r.answer.as_ref(), r.location.as_deref(), &r.url),
        );
        steps.push(req);
    }
    let target = origin(&recorded[0].url);
    let mut out = header(source, &target, steps.len(), &dropped);
    if !correlator.captures.is_empty() {
        let names: Vec<String> = correlator
            .captures
            .iter()
            .map(|c| format!("{} (step {})", c.name, c.step + 1))
            .collect();
        out.push_str(&format!(
            "# Captured from the answers on every run, instead of the recorded values:\n\
             #   {}; see the # review: lines.\n",
            names.join(", ")
        ));
    }
    out.push_str(&secrets.comment());
    out.push_str(&format!(
        "# Run it: perfbase run {run_as}\n\n[plan]\nname = \"imported journey\"\n\n\
         [targets.api]\nurl = {}\n\n[workloads.journey]\ntarget = \"api\"\n\
         cookies = true          # each journey keeps the cookies its answers set\n",
        q(&target)
    ));
    let mut names = Vec::new();
    for (i, (req, r)) in steps.iter().zip(&recorded).enumerate() {
        out.push_str(&step(i, req, r, &correlator, &mut names));
    }
    out.push_str(
        "\n# One user, ten journeys: enough to see the replay work. Review it, then raise the\n\
         # load (concurrency, rate, duration).\n\
         [[scenarios]]\nname = \"imported\"\nworkload = \"journey\"\nconcurrency = 1\n\
         requests = 10\n",
    );
    Ok(out)
}

/// The header comment: what was imported, and what was dropped and why.
fn header(source: &str, target: &str, steps: usize, d: &Dropped) -> String {
    let source = printable(source);
    let mut out = format!(
        "# Imported by `perfbase import har {source}`: {steps} request{} to {target}, replayed\n\
         # in the recorded order as one journey, each recorded status checked.\n",
        if steps == 1 { "" } else { "s" }
    );
    let mut lines = Vec::new();
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    if d.assets > 0 {
        lines.push(format!(
            "{} (scripts, styles, images, fonts; --include-static keeps them)",
            n(d.assets, "static asset", "static assets")
        ));
    }
    if !d.foreign.is_empty() {
        let total = d.foreign.values().sum();
        let origins: Vec<&str> = d.foreign.keys().map(String::as_str).collect();
        lines.push(format!(
            "{} (a journey talks to one): {}",
            n(
                total,
                "request to another origin",
                "requests to other origins"
            ),
            origins.join(", ")
        ));
    }
    if d.preflights > 0 {
        lines.push(
            n(d.preflights, "CORS preflight", "CORS preflights") + " (the browser's own OPTIONS)",
        );
    }
    if d.unanswered > 0 {
        lines.push(
            n(d.unanswered, "request", "requests")
                + " with no answer recorded (blocked or cancelled)",
        );
    }
    if d.not_http > 0 {
        lines.push(n(d.not_http, "entry", "entries") + " not HTTP (data:, blob:, ws:)");
    }
    if !lines.is_empty() {
        out.push_str("# Dropped:\n");
        for l in lines {
            out.push_str(&format!("#   {l}\n"));
        }
    }
    if d.cookies {
        out.push_str(
            "# Cookie headers were not copied: each journey sends the cookies its answers set.\n\
             # A cookie from before the recording (a login elsewhere) is not sent: add it to\n\
             # the headers if the service needs it.\n",
        );
    }
    out
}

/// One `[[workloads.journey.steps]]` table, after its comments: what it was, the captures
/// it makes (to review), and whether the recorded text needs an edit.
fn step(i: usize, req: &Request, r: &Recorded, c: &Correlator, names: &mut Vec<String>) -> String {
    let mut out = format!(
        "\n# {}. {} {} (recorded: {})\n",
        i + 1,
        req.method,
        req.path,
        r.status
    );
    let mut rules = Vec::new();
    for k in c.captures.iter().filter(|k| k.step == i) {
        let used: Vec<String> = k.used_by.iter().map(|u| (u + 1).to_string()).collect();
        let (from, rule) = match &k.from {
            From::Json(p) => (p.clone(), format!("{{ json = {} }}", q(p))),
            From::Location(re) => (
                format!("the Location header ({re})"),
                format!("{{ header = \"Location\", regex = {} }}", q(re)),
            ),
        };
        out.push_str(&format!(
            "# review: {} is captured here from {from} and used by step{} {}\n",
            k.name,
            if used.len() == 1 { "" } else { "s" },
            used.join(", ")
        ));
        rules.push(format!("capture.{} = {rule}\n", super::text::key(&k.name)));
    }
    if hazard(&r.request) {
        out.push_str(
            "# review: the recorded request holds '{{' or '${', which a plan reads as a \
             placeholder or an environment variable: edit it\n",
        );
    }
    out.push_str("[[workloads.journey.steps]]\n");
    out.push_str(&format!("name = {}\n", q(&step_name(i, req, names))));
    out.push_str(&fields(req));
    out.push_str(&rules.concat());
    out.push_str(&format!("check.status = {{ status = [{}] }}\n", r.status));
    out
}

/// `METHOD path`, shortened, unique in the journey (a name is a row of every report).
fn step_name(i: usize, req: &Request, names: &mut Vec<String>) -> String {
    let mut name: String = format!("{} {}", req.method, req.path)
        .chars()
        .take(80)
        .collect();
    if name.contains("${") || name.chars().any(char::is_control) {
        name = format!("step {}", i + 1);
    }
    if names.contains(&name) {
        name = format!("{name} ({})", i + 1);
    }
    names.push(name.clone());
    name
}

#[cfg(test)]
mod tests;
