//! The commands that read stored results: history, show, baseline, compare, report.

use crate::cli::{
    BaselineAction, BaselineArgs, CompareArgs, Format, HistoryArgs, ReportArgs, ShowArgs,
    VerdictFiles,
};
use crate::exit::{bad_input, AppError, Exit};
use crate::store::{load, open, StoreOptions};
use perfbase_analysis::versus::runs::{compare_results, differences, rank};
use perfbase_core::result::RunResult;
use perfbase_report::{thousands, thousands_f};
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub fn history(a: HistoryArgs, o: &StoreOptions) -> Result<Exit, AppError> {
    let mut store = open(o)?;
    let runs = store
        .history(&o.labels, a.limit)
        .map_err(|e| bad_input(e.to_string()))?;
    if runs.is_empty() {
        let location = perfbase_store::redact_location(&o.location);
        if o.labels.is_empty() {
            outln!("no runs in {location} yet");
        } else {
            // Say what did not match, and whether the store holds runs at all.
            let all = store
                .history(&[], 1)
                .map_err(|e| bad_input(e.to_string()))?;
            let wanted: Vec<String> = o.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            outln!(
                "no run in {location} has the label{} {}{}",
                if wanted.len() == 1 { "" } else { "s" },
                wanted.join(", "),
                if all.is_empty() {
                    " (the store holds no runs yet)"
                } else {
                    " (perfbase history without --label lists them all)"
                }
            );
        }
        return Ok(Exit::Success);
    }
    outln!(
        "{:>5}  {:<20}  {:<5}  {:>10}  {:>11}  {:>8}  {:>8}  {:>8}  target / labels",
        "run",
        "saved (UTC)",
        "kind",
        "requests",
        "req/s",
        "success",
        "p50 ms",
        "p99 ms"
    );
    for r in runs {
        let labels: Vec<String> = r.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let line = format!(
            "{:>5}  {:<20}  {:<5}  {:>10}  {:>11}  {:>7.2}%  {:>8.3}  {:>8.3}  {}{}{}",
            r.id,
            r.saved_at.chars().take(19).collect::<String>(),
            r.kind,
            thousands(r.requests),
            thousands_f(r.rps),
            r.success_ratio * 100.0,
            r.p50_ms,
            r.p99_ms,
            r.target,
            if labels.is_empty() {
                String::new()
            } else {
                format!("  [{}]", labels.join(", "))
            },
            if r.interrupted { "  (interrupted)" } else { "" }
        );
        // Labels, targets and kinds come from whoever wrote to the (shared) store.
        outln!("{}", perfbase_core::redact::printable(&line));
    }
    Ok(Exit::Success)
}

fn print_result(r: &RunResult) {
    match &r.study {
        Some(study) => out!(
            "{}",
            perfbase_report::terminal::render_study(r, study, false)
        ),
        None => out!("{}", perfbase_report::terminal::render(r)),
    }
    crate::terminal::print_monitor(r);
}

pub fn show(a: ShowArgs, o: &StoreOptions) -> Result<Exit, AppError> {
    let (label, r) = load(&mut None, o, &a.run)?;
    outln!("{label}:");
    print_result(&r);
    Ok(Exit::Success)
}

pub fn baseline(a: BaselineArgs, o: &StoreOptions) -> Result<Exit, AppError> {
    match a.action {
        BaselineAction::Set { name, run } => {
            let mut store = open(o)?;
            let r: perfbase_store::RunRef = run
                .parse()
                .map_err(|e| bad_input(format!("'{run}': {e}")))?;
            let id = store
                .get(&r)
                .map_err(|e| bad_input(e.to_string()))?
                .summary
                .id;
            store
                .set_baseline(&name, id)
                .map_err(|e| bad_input(e.to_string()))?;
            outln!("baseline {name} = run {id}");
            Ok(Exit::Success)
        }
        BaselineAction::List => {
            let mut store = open(o)?;
            for (name, id, at) in store.baselines().map_err(|e| bad_input(e.to_string()))? {
                outln!("{name}: run {id} (set {at})");
            }
            Ok(Exit::Success)
        }
        BaselineAction::Check {
            name,
            run,
            tolerance,
            files,
        } => baseline_check(o, &name, &run, tolerance, &files),
    }
}

/// `perfbase baseline check`: the run against the named baseline, a CI gate that fails on a
/// regression beyond `tolerance` or on a comparison that is not like for like.
fn baseline_check(
    o: &StoreOptions,
    name: &str,
    run: &str,
    tolerance: f64,
    files: &VerdictFiles,
) -> Result<Exit, AppError> {
    let mut store = Some(open(o)?);
    let base = store
        .as_mut()
        .expect("opened above")
        .baseline(name)
        .map_err(|e| bad_input(e.to_string()))?;
    let (label, r) = load(&mut store, o, run)?;
    let c = compare_results(
        &format!("baseline {name} (run {})", base.summary.id),
        &base.result,
        &label,
        &r,
        tolerance,
        0.05,
    );
    // A gate that compared another plan or load would pass or fail on the setup.
    let passed = c.not_like_for_like.is_empty() && !c.regressed();
    let mut text = perfbase_report::compare::render(&c);
    if passed {
        let _ = writeln!(
            text,
            "no regression against baseline {name} (tolerance {:.0} %)",
            tolerance * 100.0
        );
    }
    let verdicts = perfbase_report::compare::Verdicts {
        kind: "baseline-check",
        baseline: Some(name),
        comparison: Some(&c),
        ranking: None,
        passed,
    };
    emit(files, &verdicts, &text)?;
    if !c.not_like_for_like.is_empty() {
        errln!(
            "perfbase: run {label} cannot be checked against baseline {name}: they differ in {}",
            c.not_like_for_like.join(", ")
        );
        Ok(Exit::CheckFailed)
    } else if c.regressed() {
        errln!(
            "perfbase: regression against baseline {name} beyond {:.0} %",
            tolerance * 100.0
        );
        Ok(Exit::CheckFailed)
    } else {
        Ok(Exit::Success)
    }
}

/// Loads every reference (ids, `latest…` or JSON files), opening the store at most once.
fn load_all(refs: &[String], o: &StoreOptions) -> Result<Vec<(String, RunResult)>, AppError> {
    let mut store = None;
    refs.iter().map(|r| load(&mut store, o, r)).collect()
}

/// The runs' names: the value of label `key` (every run must have it); without a key, the one
/// label whose values differ between the runs, as `key=value`, when there is exactly one;
/// else as loaded (`run 3`, a file's name). Whether they were named by a label.
fn named_runs(
    labelled: Vec<(String, BTreeMap<String, String>, RunResult)>,
    key: Option<&str>,
) -> Result<(Vec<(String, RunResult)>, bool), AppError> {
    if let Some(k) = key {
        if let Some((name, _, _)) = labelled.iter().find(|(_, l, _)| !l.contains_key(k)) {
            return Err(bad_input(format!(
                "--name-by {k}: {name} has no label {k} (perfbase history lists the runs' labels)"
            )));
        }
        let runs = labelled
            .into_iter()
            .map(|(_, labels, r)| (labels[k].clone(), r))
            .collect();
        return Ok((runs, true));
    }
    let keys: std::collections::BTreeSet<&String> =
        labelled.iter().flat_map(|(_, l, _)| l.keys()).collect();
    let differing: Vec<String> = keys
        .into_iter()
        .filter(|k| {
            let values: std::collections::BTreeSet<Option<&String>> =
                labelled.iter().map(|(_, l, _)| l.get(*k)).collect();
            values.len() == labelled.len() && !values.contains(&None)
        })
        .cloned()
        .collect();
    let by = (differing.len() == 1).then(|| differing[0].clone());
    let runs = labelled
        .into_iter()
        .map(|(name, labels, r)| match &by {
            Some(k) => (format!("{k}={}", labels[k]), r),
            None => (name, r),
        })
        .collect();
    Ok((runs, by.is_some()))
}

pub fn compare(a: CompareArgs, o: &StoreOptions) -> Result<Exit, AppError> {
    let mut store = None;
    let labelled = a
        .runs
        .iter()
        .map(|r| crate::store::load_labelled(&mut store, o, r))
        .collect::<Result<Vec<_>, _>>()?;
    let (runs, by_label) = named_runs(labelled, a.name_by.as_deref())?;
    if runs.len() == 2 {
        let mut c = compare_results(
            &runs[0].0,
            &runs[0].1,
            &runs[1].0,
            &runs[1].1,
            a.tolerance,
            a.alpha,
        );
        if by_label {
            c = c.worded_by_name();
        }
        let verdicts = perfbase_report::compare::Verdicts {
            kind: "compare",
            baseline: None,
            comparison: Some(&c),
            ranking: None,
            // A comparison informs; only `baseline check` gates, so it always exits 0.
            passed: c.not_like_for_like.is_empty() && !c.regressed(),
        };
        emit(&a.files, &verdicts, &perfbase_report::compare::render(&c))?;
    } else {
        let mut text = String::new();
        for (label, r) in &runs[1..] {
            let d = differences(&runs[0].1, r);
            if !d.is_empty() {
                let _ = writeln!(
                    text,
                    "Not like for like: {label} differs from {} in {}",
                    runs[0].0,
                    d.join(", ")
                );
            }
        }
        let entries: Vec<(String, &perfbase_core::result::Measurement)> = runs
            .iter()
            .map(|(label, r)| (format!("{label}: {}", r.target), &r.measurement))
            .collect();
        let rows = rank(&entries);
        text.push_str(&perfbase_report::compare::render_ranking(&rows));
        let verdicts = perfbase_report::compare::Verdicts {
            kind: "ranking",
            baseline: None,
            comparison: None,
            ranking: Some(&rows),
            passed: true,
        };
        emit(&a.files, &verdicts, &text)?;
    }
    Ok(Exit::Success)
}

/// Prints a comparison's text and writes its JSON and JUnit files. When one of those goes to
/// standard output, the text goes to standard error, so `--json - | jq` reads only JSON.
fn emit(
    files: &VerdictFiles,
    v: &perfbase_report::compare::Verdicts,
    text: &str,
) -> Result<(), AppError> {
    if files.takes_stdout() {
        crate::out::give_stdout_to_data();
    }
    out!("{text}");
    let write = |path: &std::path::Path, flag: &str, body: String| {
        perfbase_report::json::write_text_atomic(path, &body)
            .map_err(|e| bad_input(format!("{flag} {}: cannot write: {e}", path.display())))
    };
    if let Some(path) = &files.json {
        write(path, "--json", perfbase_report::compare::render_json(v))?;
    }
    if let Some(path) = &files.junit {
        write(path, "--junit", perfbase_report::compare::render_junit(v))?;
    }
    Ok(())
}

/// Each run's response-time distribution in HdrHistogram's text form; with several runs each
/// opens with a `#[Run: …]` comment line, which HdrHistogram's readers skip.
fn hgrm(runs: &[(String, &RunResult)]) -> Result<String, AppError> {
    let mut out = String::new();
    for (label, r) in runs {
        let h = perfbase_core::result::decode_histogram(&r.measurement.histogram.response)
            .map_err(|e| bad_input(format!("{label}: the response histogram: {e}")))?;
        if runs.len() > 1 {
            let _ = writeln!(out, "#[Run: {label}]");
        }
        out.push_str(&perfbase_report::hlog::percentile_distribution(&h));
    }
    Ok(out)
}

pub fn report(a: ReportArgs, o: &StoreOptions) -> Result<Exit, AppError> {
    let runs = load_all(&a.runs, o)?;
    let refs: Vec<(String, &RunResult)> = runs.iter().map(|(l, r)| (l.clone(), r)).collect();
    let text = match a.format {
        Format::Md => {
            let mut out = String::new();
            for (i, (_, r)) in runs.iter().enumerate() {
                if i > 0 {
                    out.push_str("\n---\n\n");
                }
                out.push_str(&perfbase_report::markdown::render_any(r));
            }
            if runs.len() >= 2 {
                let _ = writeln!(out, "\n---\n\n# Comparisons against {}\n", runs[0].0);
                for (label, r) in &runs[1..] {
                    let c = compare_results(&runs[0].0, &runs[0].1, label, r, 0.05, 0.05);
                    out.push_str(&perfbase_report::compare::render(&c));
                }
            }
            out
        }
        Format::Html => {
            perfbase_report::html::render(&runs.iter().map(|(_, r)| r.clone()).collect::<Vec<_>>())
        }
        Format::Json if runs.len() == 1 => perfbase_report::json::render(&runs[0].1),
        Format::Json => {
            serde_json::to_string_pretty(&runs.iter().map(|(_, r)| r).collect::<Vec<_>>())
                .unwrap_or_default()
        }
        Format::Csv => perfbase_report::csv::render(&refs),
        Format::Junit => perfbase_report::junit::render(&refs),
        Format::Hgrm => hgrm(&refs)?,
    };
    match &a.output {
        Some(path) => perfbase_report::json::write_text_atomic(path, &text)
            .map_err(|e| bad_input(format!("-o {}: cannot write: {e}", path.display())))?,
        None => out!("{text}"),
    }
    Ok(Exit::Success)
}
