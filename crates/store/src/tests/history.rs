//! History and baselines, on SQLite and PostgreSQL: runs listed newest first and filtered by
//! labels, and named baselines set, moved, listed and read with their history.

use super::*;
use crate::StoreError;

fn check_history(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    assert!(s.history(&[], 10).unwrap().is_empty());
    let ([a, b, c], _) = save_three(&mut s);
    assert_eq!(ids(&s.history(&[], 0).unwrap()), vec![c, b, a]);
    assert_eq!(ids(&s.history(&[], 2).unwrap()), vec![c, b]);
    assert_eq!(
        ids(&s.history(&filter(&[("service", "api")]), 10).unwrap()),
        vec![c, a]
    );
    assert_eq!(
        ids(&s
            .history(&filter(&[("service", "api"), ("env", "ci")]), 10)
            .unwrap()),
        vec![a]
    );
    assert_eq!(
        ids(&s.history(&filter(&[("env", "ci")]), 1).unwrap()),
        vec![b]
    );
    assert_eq!(
        ids(&s.history(&filter(&[("tag", "nightly build")]), 0).unwrap()),
        vec![c]
    );
    assert!(s
        .history(&filter(&[("service", "nope")]), 0)
        .unwrap()
        .is_empty());
    assert!(s
        .history(&filter(&[("service", "api"), ("service", "web")]), 0)
        .unwrap()
        .is_empty());
    let all = s.history(&[], 0).unwrap();
    assert_eq!(all[0].labels, labels_c().0);
    assert_eq!(all[1].kind, "plan");
    assert_eq!(all[2].model, "closed");
}

fn check_baselines(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    let ([a, b, c], [ra, _, rc]) = save_three(&mut s);

    let err = s.baseline("release").unwrap_err();
    assert!(matches!(&err, StoreError::NoBaseline(n) if n == "release"));
    assert!(
        err.to_string()
            .contains("set one with `perfbase baseline set release RUN`"),
        "{err}"
    );

    s.set_baseline("release", a).unwrap();
    let got = s.baseline("release").unwrap();
    assert_eq!((got.summary.id, &got.result), (a, &ra));

    s.set_baseline("release", c).unwrap();
    let got = s.baseline("release").unwrap();
    assert_eq!((got.summary.id, &got.result), (c, &rc));
    s.set_baseline("nightly", b).unwrap();

    let list = s.baselines().unwrap();
    let names: Vec<(&str, RunId)> = list.iter().map(|(n, id, _)| (n.as_str(), *id)).collect();
    assert_eq!(names, vec![("nightly", b), ("release", c)]);
    assert!(list.iter().all(|(_, _, at)| at.ends_with('Z')));

    let hist: Vec<RunId> = s
        .baseline_history("release")
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(hist, vec![c, a]);
    assert!(s.baseline_history("never").unwrap().is_empty());

    let err = s.set_baseline("release", 99_999).unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound(r) if r == "99999"),
        "{err}"
    );
    assert_eq!(s.baseline("release").unwrap().summary.id, c);
    assert!(matches!(
        s.set_baseline("", a).unwrap_err(),
        StoreError::Invalid(_)
    ));
}

#[test]
fn sqlite_history() {
    let (_dir, loc) = sqlite_location();
    check_history(&loc);
}

#[test]
fn sqlite_baselines() {
    let (_dir, loc) = sqlite_location();
    check_baselines(&loc);
}

#[test]
fn postgres_history() {
    on_postgres(check_history);
}

#[test]
fn postgres_baselines() {
    on_postgres(check_baselines);
}
