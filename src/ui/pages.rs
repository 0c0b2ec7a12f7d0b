//! What each address of `perfbase ui` answers, read from the store and drawn by
//! `perfbase_report::ui`: `/` the runs, `/runs/ID` a run (`.json`, `.hlog` its downloads),
//! `/compare?a=…&b=…`, `/plans`, `/plans/NAME`. Every text from the store is redacted here,
//! before any page sees it: label values (whole under a secret name), sources, the store's
//! own location.

use super::frame::{page, unavailable, Problem};
use super::http::{Request, Response};
use super::Server;
use perfbase_analysis::versus::runs::compare_results;
use perfbase_core::redact;
use perfbase_core::run_outcome::RunOutcome;
use perfbase_report::ui::{self as view, Section};
use perfbase_store::{BrowsedRun, RunQuery, RunRef, Store, StoreError};

/// Runs on one page of the list.
const PAGE: usize = 50;

/// The answer to a GET of `req` that is not a live page's.
pub fn answer(server: &Server, req: &Request) -> Response {
    let path = req.path.as_str();
    let mut store = match server.pool.take() {
        Ok(s) => s,
        Err(e) => return unavailable(server, &e),
    };
    let answer = route(server, &mut store, req, path);
    // A connection that failed may be broken (a restarted server): the next page opens anew.
    if !matches!(answer, Err(Problem::Store(_))) {
        server.pool.give(store);
    }
    match answer {
        Ok(r) => r,
        Err(Problem::NotFound(what)) => page(
            server,
            "404 Not Found",
            Section::Runs,
            "Not found",
            &view::problem("Not found", &what),
        ),
        Err(Problem::Bad(what)) => page(
            server,
            "400 Bad Request",
            Section::Runs,
            "Bad request",
            &view::problem("Bad request", &what),
        ),
        Err(Problem::Store(e)) => unavailable(server, &e),
    }
}

fn route(
    server: &Server,
    store: &mut Store,
    req: &Request,
    path: &str,
) -> Result<Response, Problem> {
    if path == "/" || path == "/runs" {
        return runs(server, store, req);
    }
    if path == "/plans" {
        let plans: Vec<view::plans::PlanItem> = store
            .plans()?
            .into_iter()
            .map(|p| view::plans::PlanItem {
                plan: p.plan,
                runs: p.runs,
                newest: p.newest,
                newest_started_at: p.newest_started_at,
            })
            .collect();
        return Ok(page(
            server,
            "200 OK",
            Section::Plans,
            "Plans",
            &view::plans::list(&plans),
        ));
    }
    if let Some(name) = path.strip_prefix("/plans/") {
        return super::plan::page_of(server, store, name);
    }
    if path == "/compare" {
        return compare(server, store, req);
    }
    if let Some(rest) = path.strip_prefix("/runs/") {
        return run(server, store, rest);
    }
    Err(Problem::NotFound(format!("nothing at {path}")))
}

fn runs(server: &Server, store: &mut Store, req: &Request) -> Result<Response, Problem> {
    let filter = view::runs::Filter {
        plan: req.param("plan"),
        label: req.param("label"),
        source: req.param("source"),
        since: req.param("since"),
        until: req.param("until"),
        outcome: req.param("outcome"),
    };
    let q = query(&filter, &req.param("before"))?;
    let found = store.browse(&q)?;
    let plans: Vec<String> = store.plans()?.into_iter().map(|p| p.plan).collect();
    let rows: Vec<view::runs::RunRow> = found.runs.iter().map(row).collect();
    let outcomes: Vec<&str> = RunOutcome::ALL.iter().map(|o| o.name()).collect();
    let older = (rows.len() == PAGE).then(|| rows[PAGE - 1].id);
    let body = view::runs::body(&view::runs::RunsView {
        rows: &rows,
        total: found.total,
        filter: &filter,
        plans: &plans,
        outcomes: &outcomes,
        older,
        paged: q.before.is_some(),
    });
    Ok(page(
        server,
        "200 OK",
        Section::Runs,
        "perfbase: runs",
        &body,
    ))
}

/// The store's query for a filter as written; a field that does not read is a 400 naming it.
fn query(f: &view::runs::Filter, before: &str) -> Result<RunQuery, Problem> {
    let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
    let labels = if f.label.is_empty() {
        Vec::new()
    } else {
        f.label
            .split(',')
            .map(|l| {
                perfbase_store::parse_label(l).map_err(|e| Problem::Bad(format!("label: {e}")))
            })
            .collect::<Result<_, _>>()?
    };
    for (name, day) in [("since", &f.since), ("until", &f.until)] {
        let ok = day.is_empty()
            || (day.len() == 10
                && perfbase_core::clock::parse_time(&format!("{day}T00:00:00Z")).is_ok());
        if !ok {
            return Err(Problem::Bad(format!(
                "{name}: '{day}' is not a day; write YYYY-MM-DD"
            )));
        }
    }
    let outcome = match f.outcome.as_str() {
        "" => None,
        o => Some(RunOutcome::from_name(o).ok_or_else(|| {
            Problem::Bad(format!(
                "outcome: '{o}' is not one of passed, failed, invalid, unusable, interrupted"
            ))
        })?),
    };
    let before = match before {
        "" => None,
        b => Some(
            b.parse()
                .map_err(|_| Problem::Bad(format!("before: '{b}' is not a run id")))?,
        ),
    };
    Ok(RunQuery {
        plan: some(&f.plan),
        labels,
        source: some(&f.source),
        since: some(&f.since),
        until: some(&f.until),
        outcome,
        before,
        limit: PAGE,
    })
}

/// A listed run with its texts redacted.
fn row(r: &BrowsedRun) -> view::runs::RunRow {
    let s = &r.summary;
    view::runs::RunRow {
        id: s.id,
        started_at: s.started_at.clone(),
        plan: r.plan.clone(),
        kind: s.kind.clone(),
        target: redact::text(&s.target),
        outcome: r.outcome.clone(),
        requests: s.requests,
        rps: s.rps,
        success_ratio: s.success_ratio,
        p50_ms: s.p50_ms,
        p99_ms: s.p99_ms,
        labels: labels(&s.labels),
        source: r
            .source
            .iter()
            .map(|(k, v)| redact::label(k, v))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

pub fn labels(l: &std::collections::BTreeMap<String, String>) -> Vec<(String, String)> {
    l.iter()
        .map(|(k, v)| (k.clone(), redact::label(k, v)))
        .collect()
}

/// `/runs/ID`, `/runs/ID.json`, `/runs/ID.hlog`.
fn run(server: &Server, store: &mut Store, rest: &str) -> Result<Response, Problem> {
    let (id, ext) = rest.split_once('.').unwrap_or((rest, ""));
    let id: i64 = id
        .parse()
        .map_err(|_| Problem::NotFound(format!("'{rest}' is not a run id")))?;
    let stored = store.get(&RunRef::Id(id))?;
    match ext {
        "json" => {
            let text = perfbase_report::json::render(&stored.result);
            return Ok(Response::download(
                "application/json",
                format!("run-{id}.json"),
                text,
            ));
        }
        "hlog" => {
            let text = perfbase_report::hlog::phases_log(&stored.result).map_err(Problem::Bad)?;
            return Ok(Response::download(
                "text/plain; charset=utf-8",
                format!("run-{id}.hlog"),
                text,
            ));
        }
        "" => {}
        _ => return Err(Problem::NotFound(format!("no {ext} download of a run"))),
    }
    let browsed = store.browsed(id)?;
    let current: Vec<String> = store
        .baselines()?
        .into_iter()
        .filter(|(_, run, _)| *run == id)
        .map(|(name, _, _)| name)
        .collect();
    let facts = view::run::RunFacts {
        id,
        saved_at: browsed.summary.saved_at.clone(),
        plan: browsed.plan.clone(),
        kind: browsed.summary.kind.clone(),
        outcome: browsed.outcome.clone(),
        labels: labels(&browsed.summary.labels),
        source: browsed
            .source
            .iter()
            .map(|(k, v)| (k.clone(), redact::label(k, v)))
            .collect(),
        fingerprint: browsed.fingerprint.clone(),
        baselines: current,
        compare_with: compare_choices(store, &browsed)?,
    };
    let body = view::run::body(&facts, &stored.result);
    Ok(page(
        server,
        "200 OK",
        Section::Runs,
        &format!("perfbase: run {id}"),
        &body,
    ))
}

/// What a run is offered to be compared with: the previous run of its plan, then every
/// baseline.
fn compare_choices(store: &mut Store, r: &BrowsedRun) -> Result<Vec<(String, String)>, Problem> {
    let mut out = Vec::new();
    if !r.plan.is_empty() {
        let q = RunQuery {
            plan: Some(r.plan.clone()),
            before: Some(r.summary.id),
            limit: 1,
            ..RunQuery::default()
        };
        if let Some(prev) = store.runs(&q)?.first() {
            let id = prev.summary.id;
            out.push((format!("the run before it ({id})"), id.to_string()));
        }
    }
    for (name, run, _) in store.baselines()? {
        out.push((
            format!("baseline {name} (run {run})"),
            format!("baseline:{name}"),
        ));
    }
    Ok(out)
}

/// `/compare?a=ID&b=ID|latest|baseline:NAME`: only the store's runs, never a file.
fn compare(server: &Server, store: &mut Store, req: &Request) -> Result<Response, Problem> {
    let (a, b) = (req.param("a"), req.param("b"));
    if a.is_empty() || b.is_empty() {
        return Err(Problem::Bad(
            "compare needs a=RUN and b=RUN: a run id, latest, or baseline:NAME".into(),
        ));
    }
    let (a_name, a_id, a_run) = side(store, &a)?;
    let (b_name, b_id, b_run) = side(store, &b)?;
    let c = compare_results(&a_name, &a_run, &b_name, &b_run, 0.05, 0.05);
    let body = view::compare::body(
        &c,
        (&format!("/runs/{a_id}"), &a_run),
        (&format!("/runs/{b_id}"), &b_run),
    );
    Ok(page(
        server,
        "200 OK",
        Section::Runs,
        "perfbase: A vs B",
        &body,
    ))
}

fn side(
    store: &mut Store,
    reference: &str,
) -> Result<(String, i64, perfbase_core::result::RunResult), Problem> {
    if let Some(name) = reference.strip_prefix("baseline:") {
        let r = store.baseline(name).map_err(|e| match e {
            StoreError::NoBaseline(_) => Problem::NotFound(format!("no baseline named '{name}'")),
            e => Problem::Store(e),
        })?;
        return Ok((
            format!("baseline {name} (run {})", r.summary.id),
            r.summary.id,
            r.result,
        ));
    }
    let r: RunRef = reference
        .parse()
        .map_err(|e: perfbase_store::RunRefError| Problem::Bad(e.to_string()))?;
    let run = store.get(&r)?;
    Ok((
        format!("run {}", run.summary.id),
        run.summary.id,
        run.result,
    ))
}
