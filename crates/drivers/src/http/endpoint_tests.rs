//! The driver's endpoints and expected statuses (kept apart from mod.rs, which is the session).
use super::*;

#[test]
fn expected_statuses_count_as_success_and_keep_their_code() {
    let set = StatusSet::of(&[404, 429]);
    let miss = set.apply(Outcome::http(404, 10, 10));
    assert_eq!((miss.class, miss.status), (Class::Ok, 404));
    assert_eq!(set.apply(Outcome::http(500, 0, 0)).class, Class::Http5xx);
    assert_eq!(set.apply(Outcome::http(403, 0, 0)).class, Class::Http4xx);
    let reset = set.apply(Outcome::error(Class::Read, "reset"));
    assert_eq!(reset.class, Class::Read);
    assert!(!StatusSet::of(&[]).any);
    assert!(StatusSet::of(&[639]).contains(639) && !StatusSet::of(&[700]).any);
}

#[test]
fn requests_group_by_name_and_the_tail_past_the_cap_is_other() {
    let e = Endpoints::group(["GET /a", "GET /b", "GET /a"].map(String::from));
    assert_eq!(e.names, ["GET /a", "GET /b"]);
    assert_eq!(&*e.of_request, &[1, 2, 1]);
    // One name: no per-endpoint figures.
    assert!(Endpoints::group(["GET /a", "GET /a"].map(String::from))
        .names
        .is_empty());
    let many = Endpoints::group((0..100).map(|i| format!("GET /{i}")));
    assert_eq!(many.names.len(), MAX_LABELS);
    assert_eq!(many.names[MAX_LABELS - 1], "other");
    assert_eq!(many.of_request[MAX_LABELS - 2], (MAX_LABELS - 1) as u16);
    assert!(many.of_request[MAX_LABELS - 1..]
        .iter()
        .all(|&l| l == MAX_LABELS as u16));
}
