//! Browsing: pages of runs by plan, labels, source, dates and outcome, the plans, a plan's
//! baselines, and the runs agents are doing now.

use super::*;
use crate::RunQuery;
use perfbase_core::run_outcome::RunOutcome;

fn check_browse_selects_and_pages(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    let mut ids = Vec::new();
    for seed in [1, 2, 3, 4] {
        let mut r = sample_result(seed, false);
        r.env
            .source
            .insert("GIT_BRANCH".into(), format!("feature_{seed}%"));
        ids.push(s.save("plan", &r, &labels_a()).unwrap());
    }
    let mut other = sample_result(5, true);
    other.study = None;
    let lone = s.save("http", &other, &labels_b()).unwrap();
    let all = s
        .browse(&RunQuery {
            limit: 50,
            ..RunQuery::default()
        })
        .unwrap();
    assert_eq!(all.total, 5);
    assert_eq!(all.runs[0].summary.id, lone);
    assert_eq!(all.runs[0].plan, "");
    assert_eq!(all.runs[1].plan, "checkout");
    assert_eq!(all.runs[1].source["GIT_BRANCH"], "feature_4%");
    // Seed 2 was interrupted.
    let q = |f: fn(&mut RunQuery)| {
        let mut q = RunQuery {
            limit: 50,
            ..RunQuery::default()
        };
        f(&mut q);
        q
    };
    let interrupted = s
        .browse(&q(|q| q.outcome = Some(RunOutcome::Interrupted)))
        .unwrap();
    assert_eq!(interrupted.runs.len(), 1);
    assert_eq!(interrupted.runs[0].summary.id, ids[1]);
    assert_eq!(interrupted.runs[0].outcome, "interrupted");
    let plan = s.browse(&q(|q| q.plan = Some("checkout".into()))).unwrap();
    assert_eq!(plan.total, 4);
    // The source is matched as text, `%` and `_` literally.
    let branch = s
        .browse(&q(|q| q.source = Some("feature_3%".into())))
        .unwrap();
    assert_eq!(
        branch.runs.iter().map(|r| r.summary.id).collect::<Vec<_>>(),
        [ids[2]]
    );
    assert_eq!(
        s.browse(&q(|q| q.source = Some("feature%3".into())))
            .unwrap()
            .total,
        0
    );
    let labelled = s
        .browse(&q(|q| q.labels = filter(&[("service", "web")])))
        .unwrap();
    assert_eq!(labelled.total, 1, "{labelled:?}");
    let today = all.runs[0].summary.started_at[..10].to_string();
    let dated = s
        .browse(&q(|q| q.until = Some("2000-01-01".into())))
        .unwrap();
    assert_eq!(dated.total, 0);
    let mut since = q(|q| q.limit = 2);
    since.since = Some(today);
    // Pages: two, then the rest after the last id shown; the total is the query's.
    let first = s.browse(&since).unwrap();
    assert_eq!((first.runs.len(), first.total), (2, 5));
    since.before = Some(first.runs[1].summary.id);
    let next = s.browse(&since).unwrap();
    assert_eq!(next.runs[0].summary.id, ids[2]);
    assert_eq!(s.browsed(ids[0]).unwrap().plan, "checkout");
    check_plans_baselines_and_live(&mut s, &ids, lone);
}

/// The plans, a plan's baselines, the runs agents beat for.
fn check_plans_baselines_and_live(s: &mut Store, ids: &[RunId], lone: RunId) {
    assert!(s.browsed(9_999).is_err());
    let plans = s.plans().unwrap();
    assert_eq!(plans.len(), 1);
    assert_eq!(
        (plans[0].plan.as_str(), plans[0].runs, plans[0].newest),
        ("checkout", 4, ids[3])
    );
    s.set_baseline("release", ids[0]).unwrap();
    s.set_baseline("release", ids[2]).unwrap();
    s.set_baseline("other", lone).unwrap();
    let b = s.plan_baselines("checkout").unwrap();
    assert_eq!(
        b.iter()
            .map(|(n, id, _)| (n.as_str(), *id))
            .collect::<Vec<_>>(),
        [("release", ids[2]), ("release", ids[0])]
    );
    assert!(s.live_runs(5_000).unwrap().is_empty());
    s.heartbeat("nightly-7", "0/2").unwrap();
    s.heartbeat("nightly-7", "1/2").unwrap();
    let live = s.live_runs(5_000).unwrap();
    assert_eq!((live[0].run.as_str(), live[0].segments), ("nightly-7", 2));
    assert!(live[0].age_ms < 5_000, "{live:?}");
}

#[test]
fn sqlite_browse_selects_and_pages() {
    let (_dir, loc) = sqlite_location();
    check_browse_selects_and_pages(&loc);
}

#[test]
fn postgres_browse_selects_and_pages() {
    on_postgres(check_browse_selects_and_pages);
}
