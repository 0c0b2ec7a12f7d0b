//! `[[scenarios]]`: constant loads, stages, rate and concurrency ladders, with their
//! warm-up, cool-down, repetitions and thresholds, scaled by `[plan] scale`.

use super::context::{Ctx, MAX_REQUESTS};
use super::file::{self, NumOrText, OneOrMany, PlanFile, S};
use super::model::*;
use perfbase_analysis::sweep::Offered;
use perfbase_core::units::parse_rate;
use perfbase_engine::{Load, Pacer};
use std::collections::BTreeMap;
use std::time::Duration;

/// Default per-step duration when a scenario gives neither `duration` nor `requests`.
const DEFAULT_STEP: Duration = Duration::from_secs(10);

/// Every scenario of the plan, in order.
pub(super) fn scenarios(
    cx: &Ctx<'_>,
    raw: &PlanFile,
    workloads: &BTreeMap<String, Workload>,
    scale: f64,
) -> Result<Vec<Scenario>, PlanError> {
    let defaults = super::repeat::defaults(cx, raw)?;
    let mut scenarios = Vec::new();
    let mut names = std::collections::HashSet::new();
    for (i, sd) in raw.scenarios.iter().enumerate() {
        let field = format!("scenarios[{i}]");
        cx.name(&sd.name, &format!("{field}.name"))?;
        if !names.insert(sd.name.get_ref().clone()) {
            return Err(cx.err(
                &sd.name,
                format!("{field}.name"),
                format!("another scenario is already named '{}'", sd.name.get_ref()),
            ));
        }
        let workload = cx.workload_ref(workloads, &sd.workload, format!("{field}.workload"))?;
        let w = &workloads[&workload];
        // The protocol's in-flight cap, as a command's flags take it.
        let inflight = w.backend.default_max_inflight();
        let s = scenario(
            cx,
            &field,
            sd,
            (workload.clone(), &w.suite, inflight),
            scale,
            &defaults,
        )?;
        if workloads[&workload].backend.streams() && s.warmup.is_some() {
            return Err(cx.err(
                &sd.workload,
                format!("{field}.workload"),
                format!(
                    "'{workload}' streams: its consumers would count the warm-up's \
                     messages; leave warmup out"
                ),
            ));
        }
        scenarios.push(s);
    }
    Ok(scenarios)
}

fn num_text(v: &NumOrText) -> String {
    match v {
        NumOrText::Int(i) => i.to_string(),
        NumOrText::Float(f) => f.to_string(),
        NumOrText::Text(t) => t.clone(),
    }
}

fn offered_value(o: Offered) -> f64 {
    match o {
        Offered::Rate(r) => r,
        Offered::Concurrency(c) => c as f64,
    }
}

fn rate_of(
    cx: &Ctx<'_>,
    v: &NumOrText,
    span: &S<impl Sized>,
    field: &str,
    scale: f64,
) -> Result<f64, PlanError> {
    let rate = parse_rate(&num_text(v)).map_err(|e| cx.err(span, field, e.to_string()))? * scale;
    if rate > perfbase_core::units::MAX_RATE {
        return Err(cx.err(
            span,
            field,
            format!("{rate:.0}/s after scale {scale}: above the 100M/s that perfbase can pace"),
        ));
    }
    if rate < perfbase_core::units::MIN_RATE {
        return Err(cx.err(
            span,
            field,
            format!(
                "{rate:.1e}/s after scale {scale:e}: below 0.001/s (one request every 16 min 40 s), \
                 the slowest perfbase paces; use a larger scale or rate"
            ),
        ));
    }
    Ok(rate)
}

fn conc_of(
    cx: &Ctx<'_>,
    v: &NumOrText,
    span: &S<impl Sized>,
    field: &str,
    scale: f64,
) -> Result<u64, PlanError> {
    match v {
        NumOrText::Int(n) if *n >= 1 => {
            let n = ((*n as f64 * scale).round() as u64).max(1);
            crate::limits::check_connections(n).map_err(|e| cx.err(span, field, e))?;
            Ok(n)
        }
        _ => Err(cx.err(
            span,
            field,
            format!(
                "'{}': concurrency must be a whole number of connections ≥ 1",
                num_text(v)
            ),
        )),
    }
}

fn fmt_rate(r: f64) -> String {
    if r.fract() == 0.0 {
        format!("{r:.0}/s")
    } else {
        format!("{r:.2}/s")
    }
}

/// What bounds every step of a scenario: its duration or count, and the open model's
/// in-flight cap.
#[derive(Clone, Copy)]
struct Bounds {
    duration: Option<Duration>,
    count: Option<u64>,
    max_inflight: u64,
}

impl Bounds {
    fn open(&self, rate: f64) -> Load {
        Load::Open {
            pacer: Pacer::constant(rate),
            max_inflight: self.max_inflight,
        }
    }
}

fn scenario(
    cx: &Ctx<'_>,
    field: &str,
    sd: &file::ScenarioDef,
    (workload, suite, default_inflight): (String, &[String], u64),
    scale: f64,
    defaults: &super::repeat::Defaults,
) -> Result<Scenario, PlanError> {
    let (kind, steps) = shape(cx, field, sd, default_inflight, scale)?;
    let repeat = super::repeat::scenario(cx, field, sd, defaults)?;
    let aborts = abort_on_fail(cx, field, sd)?;
    let (kind, steps) = if suite.is_empty() {
        (kind, steps)
    } else {
        (
            Kind::Suite,
            suite_steps(cx, field, sd, kind, &steps[0], suite)?,
        )
    };
    let faults = super::faults::faults(cx, field, sd, &steps)?;
    Ok(Scenario {
        name: sd.name.get_ref().clone(),
        workload,
        kind,
        steps,
        warmup: sd
            .warmup
            .as_ref()
            .map(|w| cx.positive_duration(w, &format!("{field}.warmup")))
            .transpose()?,
        cooldown: sd
            .cooldown
            .as_ref()
            .map(|w| cx.positive_duration(w, &format!("{field}.cooldown")))
            .transpose()?,
        repetitions: repeat.repetitions,
        precision: repeat.precision,
        max_repetitions: repeat.max_repetitions,
        max_time: repeat.max_time,
        thresholds: sd
            .thresholds
            .iter()
            .map(|t| cx.threshold(t, &format!("{field}.thresholds")))
            .chain(aborts.iter().map(|t| Ok(t.clone())))
            .collect::<Result<Vec<_>, _>>()?,
        abort_on_fail: aborts,
        delay_abort_eval: sd
            .delay_abort_eval
            .as_ref()
            .map(|d| cx.duration(d, &format!("{field}.delay_abort_eval")))
            .transpose()?
            .unwrap_or_default(),
        section: sd.section.as_ref().map(|s| s.get_ref().trim().to_string()),
        api: api_row(cx, field, sd)?,
        labels: super::matrix::scenario_labels(cx, field, sd)?,
        app: super::matrix::app(cx, field, sd)?,
        faults,
    })
}

/// The scenario's kind and steps: from exactly one of rate, concurrency or stages.
fn shape(
    cx: &Ctx<'_>,
    field: &str,
    sd: &file::ScenarioDef,
    default_inflight: u64,
    scale: f64,
) -> Result<(Kind, Vec<Step>), PlanError> {
    let shapes =
        sd.rate.is_some() as u8 + sd.concurrency.is_some() as u8 + sd.stages.is_some() as u8;
    if shapes != 1 {
        return Err(cx.err(
            &sd.name,
            field,
            "give exactly one of rate, concurrency or stages",
        ));
    }
    let b = bounds(cx, field, sd, default_inflight)?;
    let (kind, steps) = if let Some(r) = &sd.rate {
        rate_steps(cx, field, r, b, scale)?
    } else if let Some(c) = &sd.concurrency {
        concurrency_steps(cx, field, c, b, scale)?
    } else {
        let stages = sd.stages.as_ref().expect("one shape is set");
        (Kind::Stages, stage_steps(cx, field, stages, b, scale)?)
    };
    check_steps(cx, field, sd, kind, &steps, scale)?;
    Ok((kind, steps))
}

/// The thresholds judged live that stop the run; `delay_abort_eval` without them is an error.
fn abort_on_fail(
    cx: &Ctx<'_>,
    field: &str,
    sd: &file::ScenarioDef,
) -> Result<Vec<perfbase_analysis::threshold::Threshold>, PlanError> {
    let aborts = sd
        .abort_on_fail
        .iter()
        .map(|t| cx.threshold(t, &format!("{field}.abort_on_fail")))
        .collect::<Result<Vec<_>, _>>()?;
    if let (Some(d), true) = (&sd.delay_abort_eval, aborts.is_empty()) {
        return Err(cx.err(
            d,
            format!("{field}.delay_abort_eval"),
            "delays abort_on_fail, which this scenario does not have: add abort_on_fail = \
             [\"error_rate < 5%\"] or remove it",
        ));
    }
    Ok(aborts)
}

/// The scenario's row in a page's API table, when it names its implementation; `endpoint`
/// and `note` mean nothing without one.
fn api_row(
    cx: &Ctx<'_>,
    field: &str,
    sd: &file::ScenarioDef,
) -> Result<Option<(String, String, String)>, PlanError> {
    let text = |s: &Option<S<String>>| s.as_ref().map(|s| s.get_ref().trim().to_string());
    match &sd.implementation {
        Some(i) => Ok(Some((
            i.get_ref().trim().to_string(),
            text(&sd.endpoint).unwrap_or_else(|| sd.name.get_ref().clone()),
            text(&sd.note).unwrap_or_default(),
        ))),
        None => match sd.endpoint.as_ref().or(sd.note.as_ref()) {
            Some(at) => Err(cx.err(
                at,
                format!("{field}.implementation"),
                "endpoint and note place the scenario in a page's API table: name its \
                 implementation too (e.g. implementation = \"A\")",
            )),
            None => Ok(None),
        },
    }
}

/// A scenario over a suite workload: one step per operation (`NAME/operation`), each at the
/// scenario's one load and bounds, named by its operation.
fn suite_steps(
    cx: &Ctx<'_>,
    field: &str,
    sd: &file::ScenarioDef,
    kind: Kind,
    load: &Step,
    suite: &[String],
) -> Result<Vec<Step>, PlanError> {
    if kind != Kind::Constant {
        return Err(cx.err(
            &sd.workload,
            format!("{field}.workload"),
            format!(
                "'{}' is a suite: it runs each operation at one load, so give one rate or one \
                 concurrency, not a {}",
                sd.workload.get_ref(),
                kind.name()
            ),
        ));
    }
    Ok(suite
        .iter()
        .map(|w| Step {
            name: w.rsplit('/').next().unwrap_or(w).to_string(),
            workload: Some(w.clone()),
            ..load.clone()
        })
        .collect())
}

/// The duration, count and in-flight cap of a scenario's steps.
fn bounds(
    cx: &Ctx<'_>,
    field: &str,
    sd: &file::ScenarioDef,
    default_inflight: u64,
) -> Result<Bounds, PlanError> {
    let count = sd
        .requests
        .as_ref()
        .map(|r| {
            let f = format!("{field}.requests");
            cx.count(r, &f, MAX_REQUESTS, "requests a step may be bounded by")
        })
        .transpose()?;
    let duration = match (&sd.duration, count) {
        (Some(d), _) => Some(cx.positive_duration(d, &format!("{field}.duration"))?),
        (None, Some(_)) => None,
        (None, None) => Some(DEFAULT_STEP),
    };
    let max_inflight = sd
        .max_inflight
        .as_ref()
        .map(|m| {
            let f = format!("{field}.max_inflight");
            let n = cx.positive(m, &f)?;
            crate::limits::check_connections(n).map_err(|e| cx.err(m, &f, e))?;
            Ok::<u64, PlanError>(n)
        })
        .transpose()?
        .unwrap_or(default_inflight);
    Ok(Bounds {
        duration,
        count,
        max_inflight,
    })
}

/// `rate = R` (constant) or `rate = [R1, R2, …]` (a rate ladder).
fn rate_steps(
    cx: &Ctx<'_>,
    field: &str,
    r: &S<OneOrMany>,
    b: Bounds,
    scale: f64,
) -> Result<(Kind, Vec<Step>), PlanError> {
    let (duration, count) = (b.duration, b.count);
    let open = |rate: f64| b.open(rate);
    let f = format!("{field}.rate");
    Ok(match r.get_ref() {
        OneOrMany::One(v) => {
            let rate = rate_of(cx, v, r, &f, scale)?;
            (
                Kind::Constant,
                vec![Step {
                    name: fmt_rate(rate),
                    workload: None,
                    load: open(rate),
                    offered: Offered::Rate(rate),
                    duration,
                    count,
                }],
            )
        }
        OneOrMany::Many(vs) => {
            let mut steps = Vec::new();
            for v in vs {
                let rate = rate_of(cx, v, r, &f, scale)?;
                steps.push(Step {
                    name: fmt_rate(rate),
                    workload: None,
                    load: open(rate),
                    offered: Offered::Rate(rate),
                    duration,
                    count,
                });
            }
            (Kind::RateLadder, steps)
        }
    })
}

/// `concurrency = N` (constant) or `concurrency = [N1, N2, …]` (a concurrency ladder).
fn concurrency_steps(
    cx: &Ctx<'_>,
    field: &str,
    c: &S<OneOrMany>,
    b: Bounds,
    scale: f64,
) -> Result<(Kind, Vec<Step>), PlanError> {
    let (duration, count) = (b.duration, b.count);
    let f = format!("{field}.concurrency");
    let vs: Vec<&NumOrText> = match c.get_ref() {
        OneOrMany::One(v) => vec![v],
        OneOrMany::Many(vs) => vs.iter().collect(),
    };
    let mut steps = Vec::new();
    for v in &vs {
        let n = conc_of(cx, v, c, &f, scale)?;
        steps.push(Step {
            name: format!("c={n}"),
            workload: None,
            load: Load::Closed { connections: n },
            offered: Offered::Concurrency(n),
            duration,
            count,
        });
    }
    let kind = if matches!(c.get_ref(), OneOrMany::Many(_)) {
        Kind::ConcurrencyLadder
    } else {
        Kind::Constant
    };
    Ok((kind, steps))
}

/// `stages = [...]`: constant rates, ramps and concurrencies, each for its own duration.
fn stage_steps(
    cx: &Ctx<'_>,
    field: &str,
    stages: &S<Vec<file::StageDef>>,
    b: Bounds,
    scale: f64,
) -> Result<Vec<Step>, PlanError> {
    let max_inflight = b.max_inflight;
    let open = |rate: f64| b.open(rate);
    let mut steps = Vec::new();
    let mut last_rate: Option<f64> = None;
    for (j, st) in stages.get_ref().iter().enumerate() {
        let f = format!("{field}.stages[{j}]");
        let d = cx.positive_duration(&st.duration, &format!("{f}.duration"))?;
        let set =
            st.rate.is_some() as u8 + st.ramp_to.is_some() as u8 + st.concurrency.is_some() as u8;
        if set != 1 {
            return Err(cx.err(
                &st.duration,
                &f,
                "give exactly one of rate, ramp_to or concurrency",
            ));
        }
        let step = if let Some(r) = &st.rate {
            let rate = rate_of(cx, r.get_ref(), r, &format!("{f}.rate"), scale)?;
            last_rate = Some(rate);
            Step {
                workload: None,
                name: format!("stage {}: {}", j + 1, fmt_rate(rate)),
                load: open(rate),
                offered: Offered::Rate(rate),
                duration: Some(d),
                count: None,
            }
        } else if let Some(r) = &st.ramp_to {
            let to = rate_of(cx, r.get_ref(), r, &format!("{f}.ramp_to"), scale)?;
            let from = last_rate.unwrap_or(0.0);
            last_rate = Some(to);
            Step {
                workload: None,
                name: format!("stage {}: ramp {}→{}", j + 1, fmt_rate(from), fmt_rate(to)),
                load: Load::Open {
                    pacer: Pacer::Ramp { from, to, over: d },
                    max_inflight,
                },
                offered: Offered::Rate((from + to) / 2.0),
                duration: Some(d),
                count: None,
            }
        } else {
            let c = st.concurrency.as_ref().expect("one is set");
            let n = conc_of(
                cx,
                &NumOrText::Int(*c.get_ref()),
                c,
                &format!("{f}.concurrency"),
                scale,
            )?;
            last_rate = None;
            Step {
                workload: None,
                name: format!("stage {}: c={n}", j + 1),
                load: Load::Closed { connections: n },
                offered: Offered::Concurrency(n),
                duration: Some(d),
                count: None,
            }
        };
        steps.push(step);
    }
    Ok(steps)
}

/// A scenario has steps, and a ladder climbs: the knee rule compares each step with the ones
/// below it.
fn check_steps(
    cx: &Ctx<'_>,
    field: &str,
    sd: &file::ScenarioDef,
    kind: Kind,
    steps: &[Step],
    scale: f64,
) -> Result<(), PlanError> {
    if steps.is_empty() {
        // `rate = []`, `concurrency = []` or `stages = []`: nothing to run.
        const LADDER: &str = "a ladder needs at least one step, e.g. [10, 20, 40]";
        let (span, name, why) = match (&sd.rate, &sd.concurrency, &sd.stages) {
            (Some(r), _, _) => (r.span(), "rate", LADDER),
            (_, Some(c), _) => (c.span(), "concurrency", LADDER),
            (_, _, Some(st)) => (st.span(), "stages", "needs at least one stage"),
            _ => (0..0, "scenario", "needs at least one step"),
        };
        return Err(cx.err_at(cx.line(span.start), format!("{field}.{name}"), why));
    }
    if kind.is_ladder() {
        // The knee rule compares each step with the ones below it: a ladder must climb.
        let shape = if kind == Kind::RateLadder {
            sd.rate.as_ref().map(|r| (r.span(), "rate"))
        } else {
            sd.concurrency.as_ref().map(|c| (c.span(), "concurrency"))
        };
        let (span, key) = shape.expect("a ladder has its values");
        for (j, pair) in steps.windows(2).enumerate() {
            if offered_value(pair[1].offered) <= offered_value(pair[0].offered) {
                let scaled = if scale == 1.0 {
                    String::new()
                } else {
                    format!(" after scale {scale}: use a larger scale")
                };
                return Err(cx.err_at(
                    cx.line(span.start),
                    format!("{field}.{key}"),
                    format!(
                        "a ladder must climb: step {} ({}) is not above step {} ({}){scaled}",
                        j + 2,
                        pair[1].name,
                        j + 1,
                        pair[0].name
                    ),
                ));
            }
        }
    }
    Ok(())
}
