//! `[[rankings]]` (scenarios side by side), `[[versus]]` (B against A over repeated runs) and
//! `[page]` (the dated baselines page).

use super::context::Ctx;
use super::file::PlanFile;
use super::model::*;
use perfbase_analysis::versus::runs::RankBy;

/// Every ranking of the plan; each names scenarios that exist, two at least.
pub(super) fn rankings(
    cx: &Ctx<'_>,
    raw: &PlanFile,
    scenarios: &[Scenario],
) -> Result<Vec<RankingSpec>, PlanError> {
    let mut out = Vec::new();
    for (i, r) in raw.rankings.iter().enumerate() {
        let field = format!("rankings[{i}]");
        let by = match &r.by {
            Some(b) => RankBy::from_name(b.get_ref()).ok_or_else(|| {
                cx.err(
                    b,
                    format!("{field}.by"),
                    format!("'{}': use {}", b.get_ref(), RankBy::NAMES),
                )
            })?,
            None => RankBy::Throughput,
        };
        let names: Vec<String> = match &r.scenarios {
            None => scenarios.iter().map(|s| s.name.clone()).collect(),
            Some(list) => {
                for s in list {
                    if !scenarios.iter().any(|x| &x.name == s.get_ref()) {
                        return Err(cx.err(
                            s,
                            format!("{field}.scenarios"),
                            format!("no scenario named '{}'", s.get_ref()),
                        ));
                    }
                }
                list.iter().map(|s| s.get_ref().clone()).collect()
            }
        };
        if names.len() < 2 {
            return Err(cx.err(
                &r.name,
                format!("{field}.scenarios"),
                "a ranking needs two scenarios or more",
            ));
        }
        out.push(RankingSpec {
            name: r.name.get_ref().clone(),
            by,
            scenarios: names,
        });
    }
    Ok(out)
}

/// Every A-vs-B of the plan: two different scenarios that exist.
pub(super) fn versus(
    cx: &Ctx<'_>,
    raw: &PlanFile,
    scenarios: &[Scenario],
) -> Result<Vec<VersusSpec>, PlanError> {
    let mut out = Vec::new();
    for (i, v) in raw.versus.iter().enumerate() {
        let field = format!("versus[{i}]");
        for (side, s) in [("a", &v.a), ("b", &v.b)] {
            if !scenarios.iter().any(|x| &x.name == s.get_ref()) {
                return Err(cx.err(
                    s,
                    format!("{field}.{side}"),
                    format!("no scenario named '{}'", s.get_ref()),
                ));
            }
        }
        if v.a.get_ref() == v.b.get_ref() {
            return Err(cx.err(
                &v.b,
                format!("{field}.b"),
                "compare two different scenarios",
            ));
        }
        let label = |l: &Option<super::file::S<String>>, s: &super::file::S<String>| {
            l.as_ref()
                .map_or_else(|| s.get_ref().clone(), |l| l.get_ref().clone())
        };
        let (a_label, b_label) = (label(&v.a_label, &v.a), label(&v.b_label, &v.b));
        out.push(VersusSpec {
            name: v.name.as_ref().map_or_else(
                || format!("{a_label} vs {b_label}"),
                |n| n.get_ref().clone(),
            ),
            a: v.a.get_ref().clone(),
            b: v.b.get_ref().clone(),
            a_label,
            b_label,
        });
    }
    Ok(out)
}

/// `[page]`, with its title (default: the plan's name) and file stem, which must be a plain
/// file name (the page is written into the run's folder).
pub(super) fn page(
    cx: &Ctx<'_>,
    raw: &PlanFile,
    plan_name: String,
) -> Result<Option<PageSpec>, PlanError> {
    let Some(p) = &raw.page else {
        return Ok(None);
    };
    let stem = match &p.file {
        Some(f) => {
            let s = f.get_ref().trim();
            let plain = !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                && !s.starts_with('.');
            if !plain {
                return Err(cx.err(
                    f,
                    "page.file",
                    format!("'{s}': use a plain file name of letters, digits, '-', '_' and '.'"),
                ));
            }
            s.to_string()
        }
        None => "performance-baselines".into(),
    };
    Ok(Some(PageSpec {
        title: p
            .title
            .as_ref()
            .map_or(format!("Performance baselines: {plan_name}"), |t| {
                t.get_ref().clone()
            }),
        stem,
    }))
}
