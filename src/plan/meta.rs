//! The `[plan]` and `[slo]` sections: scale, threads, timeout, pacing, buckets, knee rule,
//! thresholds, SLO and labels.

use super::context::Ctx;
use super::file::PlanFile;
use super::model::PlanError;
use perfbase_analysis::knee::KneeRule;
use perfbase_analysis::threshold::Threshold;
use std::collections::BTreeMap;
use std::time::Duration;

/// What the `[plan]` and `[slo]` sections set.
pub(super) struct Settings {
    pub scale: f64,
    pub threads: Option<usize>,
    pub timeout: Duration,
    /// The open model's dispatcher interval, as `--pacing-granularity` sets it.
    pub pacing: Duration,
    pub buckets_ms: Vec<f64>,
    pub knee: KneeRule,
    pub thresholds: Vec<Threshold>,
    pub slo: Vec<Threshold>,
    pub labels: BTreeMap<String, String>,
}

/// Reads `[plan]` and `[slo]`; `scale` (from the command line) overrides `[plan] scale`.
pub(super) fn settings(
    cx: &Ctx<'_>,
    raw: &PlanFile,
    scale: Option<f64>,
) -> Result<Settings, PlanError> {
    let meta = &raw.plan;
    // In the order of the fields, so the first error named is the first one written.
    let scale = scale_of(cx, raw, scale)?;
    let threads = match &meta.threads {
        Some(t) => Some(cx.positive(t, "plan.threads")? as usize),
        None => None,
    };
    let timeout = timeout(cx, raw)?;
    let pacing = match &meta.pacing_granularity {
        Some(p) => {
            let g = cx.duration(p, "plan.pacing_granularity")?;
            if let Some(why) = perfbase_engine::pacing_problem(g) {
                return Err(cx.err(p, "plan.pacing_granularity", why));
            }
            g
        }
        None => perfbase_engine::DEFAULT_PACING,
    };
    let buckets_ms = match &meta.buckets {
        Some(b) => b
            .iter()
            .map(|s| {
                cx.positive_duration(s, "plan.buckets")
                    .map(|d| d.as_secs_f64() * 1000.0)
            })
            .collect::<Result<Vec<_>, _>>()?,
        None => vec![50.0, 100.0, 200.0],
    };
    let knee = knee(cx, raw)?;
    let thresholds = meta
        .thresholds
        .iter()
        .map(|t| cx.threshold(t, "plan.thresholds"))
        .collect::<Result<Vec<_>, _>>()?;
    let slo = match &raw.slo {
        Some(s) => s
            .thresholds
            .iter()
            .map(|t| cx.threshold(t, "slo.thresholds"))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    Ok(Settings {
        scale,
        threads,
        timeout,
        pacing,
        buckets_ms,
        knee,
        thresholds,
        slo,
        labels: labels(cx, raw)?,
    })
}

/// The plan's scale: the command line's, else `[plan] scale`, else 1; positive and finite.
fn scale_of(cx: &Ctx<'_>, raw: &PlanFile, scale: Option<f64>) -> Result<f64, PlanError> {
    let meta = &raw.plan;
    let scale = match (scale, &meta.scale) {
        (Some(s), _) => s,
        (None, Some(s)) => *s.get_ref(),
        (None, None) => 1.0,
    };
    if !(scale.is_finite() && scale > 0.0) {
        let line = meta.scale.as_ref().map_or(0, |s| cx.line(s.span().start));
        return Err(cx.err_at(
            line,
            "plan.scale",
            format!("must be a positive number, not {scale}"),
        ));
    }
    Ok(scale)
}

/// `[plan] timeout`: 5 s unless set, never below the 1 ms resolution of request timeouts.
fn timeout(cx: &Ctx<'_>, raw: &PlanFile) -> Result<Duration, PlanError> {
    let Some(t) = &raw.plan.timeout else {
        return Ok(Duration::from_secs(5));
    };
    let d = cx.positive_duration(t, "plan.timeout")?;
    if d < Duration::from_millis(1) {
        return Err(cx.err(
            t,
            "plan.timeout",
            "below 1ms, the resolution of request timeouts; use 1ms or more",
        ));
    }
    Ok(d)
}

/// `[plan] knee`: the knee rule's limits over the defaults.
fn knee(cx: &Ctx<'_>, raw: &PlanFile) -> Result<KneeRule, PlanError> {
    let mut knee = KneeRule::default();
    let Some(k) = &raw.plan.knee else {
        return Ok(knee);
    };
    // Each limit must make sense: a NaN or an infinity would make every step good (or bad).
    let ratio = "a ratio between 0 and 1";
    let set = |v: &Option<toml::Spanned<f64>>,
               f: &str,
               range: std::ops::RangeInclusive<f64>,
               what: &str,
               into: &mut f64| {
        if let Some(v) = v {
            *into = cx.number(v, &format!("plan.knee.{f}"), range, what)?;
        }
        Ok::<(), PlanError>(())
    };
    set(
        &k.throughput_ratio,
        "throughput_ratio",
        0.0..=1.0,
        ratio,
        &mut knee.min_throughput_ratio,
    )?;
    set(
        &k.p99_factor,
        "p99_factor",
        1.0..=1e6,
        "a factor of 1 or more",
        &mut knee.p99_factor,
    )?;
    set(
        &k.error_ratio,
        "error_ratio",
        0.0..=1.0,
        ratio,
        &mut knee.max_error_ratio,
    )?;
    set(
        &k.min_gain,
        "min_gain",
        0.0..=1.0,
        ratio,
        &mut knee.min_gain,
    )?;
    set(
        &k.trend_factor,
        "trend_factor",
        1.0..=1e6,
        "a factor of 1 or more",
        &mut knee.trend_factor,
    )?;
    Ok(knee)
}

/// `[plan] labels`, checked by the store's own rule before any load.
fn labels(cx: &Ctx<'_>, raw: &PlanFile) -> Result<BTreeMap<String, String>, PlanError> {
    let meta = &raw.plan;
    let mut labels = BTreeMap::new();
    for (key, value) in &meta.labels {
        // The store's own rule, checked before any load so a run is never left unsaved.
        let (k, v) = perfbase_store::parse_label(&format!("{key}={}", value.get_ref()))
            .map_err(|e| cx.err(value, format!("plan.labels.{key}"), e.to_string()))?;
        labels.insert(k, v);
    }
    Ok(labels)
}
