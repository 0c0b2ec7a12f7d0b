//! JUnit XML of thresholds and checks, which CI systems show as test results: one test suite
//! per run; a test case per threshold verdict, per check, and one saying whether any request
//! succeeded.
//!
//! quick-junit writes the document. What it holds follows the strictest schema in use, the
//! Apache Ant JUnit schema (and so also Jenkins's looser one): a bare `<testsuites>` root;
//! each suite with its `timestamp` (UTC, to the second, no zone), `hostname`, `id`,
//! `package`, `<properties>`, `<system-out>` and `<system-err>`; each case a `classname` and a
//! `time` in seconds; each failure a `message` (with the figure's unit) and a `type`.

use perfbase_core::result::{Measurement, RunResult};
use perfbase_core::study::{CheckVerdict, Study};
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// The Ant schema's timestamp: `2026-11-21T09:04:32`, without fraction or zone (its pattern
/// rejects both). Written in UTC, as every perfbase label is.
const TIMESTAMP: &str = "%Y-%m-%dT%H:%M:%S";

/// One test case before it becomes quick-junit's.
struct Case {
    class: String,
    name: String,
    /// Seconds the case's figures were measured over.
    seconds: f64,
    /// The failure's type and message.
    failure: Option<(&'static str, String)>,
}

impl Case {
    fn into_test_case(self) -> TestCase {
        let status = match self.failure {
            None => TestCaseStatus::success(),
            Some((kind, message)) => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_type(kind).set_message(message);
                s
            }
        };
        let mut case = TestCase::new(self.name, status);
        case.set_classname(self.class)
            .set_time(seconds(self.seconds));
        case
    }
}

/// A duration in seconds as quick-junit's `time` (printed to the ms); an undefined or
/// negative one (a hand-edited result) as zero.
fn seconds(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or_default()
}

/// What a verdict measured, in its threshold's unit (`actual 12.34 ms`), or `nothing measured`.
fn actual(threshold: &str, v: f64) -> String {
    match crate::study_text::threshold_value(threshold, v) {
        Some(value) => format!("actual {value}"),
        None => "nothing measured".into(),
    }
}

/// The measurement's line, for the suite's `<system-out>`; a journey's iterations and checks
/// on a second. (Checks gate a run through a `checks` threshold, which has its own case.)
fn summary(m: &Measurement) -> String {
    let errors: u64 = m.errors.values().sum();
    let mut out = format!(
        "{} requests in {:.3} s ({}/s), {} errors; latency mean {} ms, p99 {} ms, max {} ms\n",
        crate::thousands(m.requests),
        m.duration_s,
        crate::thousands_f(m.rps),
        crate::thousands(errors),
        crate::study_text::ms(m.latency_ms.mean),
        crate::study_text::ms(m.latency_ms.p99),
        crate::study_text::ms(m.latency_ms.max),
    );
    if let Some(it) = &m.iterations {
        let checks: Vec<String> = m
            .checks
            .iter()
            .map(|c| format!("{} {} of {}", c.name, c.passed, c.passed + c.failed))
            .collect();
        out.push_str(&format!(
            "{} iterations ({} failed), p95 {} ms; checks passed: {}\n",
            crate::thousands(it.count),
            crate::thousands(it.failed),
            crate::study_text::ms(it.duration_ms.p95),
            if checks.is_empty() {
                "none".into()
            } else {
                checks.join(", ")
            },
        ));
    }
    out
}

fn cases(r: &RunResult) -> Vec<Case> {
    let mut cases = run_cases(r);
    if let Some(study) = &r.study {
        cases.extend(threshold_cases(r, study));
        cases.extend(study.checks.iter().map(|c| check_case(r, c)));
    }
    cases
}

/// Whether any request succeeded; for an interrupted run, a failed "run completed" too.
fn run_cases(r: &RunResult) -> Vec<Case> {
    let run_time = r.measurement.duration_s;
    // Saturating: a hand-edited or corrupt result may count more errors than requests.
    let ok = r
        .measurement
        .requests
        .saturating_sub(r.measurement.errors.values().sum::<u64>());
    let mut cases = vec![Case {
        class: "perfbase".into(),
        name: "requests succeeded".into(),
        seconds: run_time,
        failure: (ok == 0).then(|| {
            (
                "no-success",
                format!("none of {} requests succeeded", r.measurement.requests),
            )
        }),
    }];
    if r.interrupted {
        cases.push(Case {
            class: "perfbase".into(),
            name: "run completed".into(),
            seconds: run_time,
            failure: Some((
                "interrupted",
                "the run was interrupted; the result is partial".into(),
            )),
        });
    }
    cases
}

/// A case per threshold verdict, grouped by scenario.
fn threshold_cases(r: &RunResult, study: &Study) -> Vec<Case> {
    // A verdict's phase, for its time; a single run's verdicts are on the whole run.
    let phase_time = |name: &str| {
        r.phases
            .iter()
            .find(|p| p.name == name)
            .map_or(r.measurement.duration_s, |p| p.measurement.duration_s)
    };
    let mut cases = Vec::new();
    for s in &study.scenarios {
        for t in &s.thresholds {
            let v = &t.verdict;
            cases.push(Case {
                class: format!("thresholds.{}", s.name),
                name: format!("{} in {}", v.threshold, t.phase),
                seconds: phase_time(&t.phase),
                failure: (!v.passed).then(|| {
                    (
                        "threshold",
                        format!("{}: {}", v.threshold, actual(&v.threshold, v.actual)),
                    )
                }),
            });
        }
    }
    cases
}

fn check_case(r: &RunResult, c: &CheckVerdict) -> Case {
    let counts = crate::study_text::counts;
    Case {
        class: "checks".into(),
        name: c.name.clone(),
        // Checks run apart from the measured phases; one kept under its name has its time,
        // otherwise none is known.
        seconds: r
            .phases
            .iter()
            .find(|p| p.name == c.name)
            .map_or(0.0, |p| p.measurement.duration_s),
        failure: (!c.passed).then(|| {
            (
                "check",
                format!(
                    "expected statuses {}; got {} (of {} requests)",
                    counts(&c.expect),
                    counts(&c.actual),
                    crate::thousands(c.requests)
                ),
            )
        }),
    }
}

fn suite(id: usize, label: &str, r: &RunResult) -> TestSuite {
    let mut suite = TestSuite::new(format!("{label}: {}", r.target));
    // Not `set_timestamp`: quick-junit prints milliseconds and an offset, which the Ant
    // schema's pattern rejects; the attribute goes in as the schema wants it. A label that
    // is not RFC 3339 (hand-edited) leaves it out rather than inventing one.
    if let Some(at) = perfbase_core::clock::reformat_utc(&r.started_at, TIMESTAMP) {
        suite.extra.insert("timestamp".into(), at.into());
    }
    let host = r.env.hostname.trim();
    // The schema's own advice when the host is unknown.
    let host = if host.is_empty() { "localhost" } else { host };
    suite.extra.insert("hostname".into(), host.into());
    // The Ant schema requires both on each suite of a `<testsuites>`: `id` counts from 0.
    suite.extra.insert("id".into(), id.to_string().into());
    suite.extra.insert("package".into(), "perfbase".into());
    suite.set_time(seconds(r.measurement.duration_s));
    suite.add_properties([
        Property::new("target", r.target.as_str()),
        Property::new("protocol", r.protocol.as_str()),
        Property::new("model", r.model.name()),
        Property::new("started_at", r.started_at.as_str()),
        Property::new("perfbase.version", r.tool.version.as_str()),
    ]);
    suite.add_test_cases(cases(r).into_iter().map(Case::into_test_case));
    suite.set_system_out(summary(&r.measurement));
    // Required by the schema even when empty; perfbase writes nothing to it.
    suite.set_system_err("");
    suite
}

/// The JUnit XML of several runs.
pub fn render(runs: &[(String, &RunResult)]) -> String {
    let mut report = Report::unnamed();
    for (id, (label, r)) in runs.iter().enumerate() {
        report.add_test_suite(suite(id, label, r));
    }
    // Serialising to memory cannot fail on I/O, and every string is valid XML text once
    // quick-junit escapes it, so the empty fallback is never taken.
    bare_root(report.to_string().unwrap_or_default())
}

/// `<testsuites>` without attributes. quick-junit always gives the root the totals of its
/// suites (`tests`, `skipped`, `failures`, `errors`), which the Ant schema allows none of and
/// Jenkins's own schema refuses `skipped` of; each suite carries its own counts, which is where
/// CI readers take them from, so the root loses nothing by being bare, as Ant writes it.
fn bare_root(xml: String) -> String {
    let Some(start) = xml.find("<testsuites") else {
        return xml;
    };
    // The tag's end: attribute values cannot hold a raw `>`, quick-xml escapes it.
    let Some(len) = xml[start..].find('>') else {
        return xml;
    };
    let tag = &xml[start..start + len + 1];
    let bare = if tag.ends_with("/>") {
        "<testsuites/>"
    } else {
        "<testsuites>"
    };
    format!("{}{bare}{}", &xml[..start], &xml[start + len + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfbase_core::study::{
        CheckVerdict, KneeRule, PhaseVerdict, ScenarioStudy, Study, Verdict,
    };
    use quick_xml::events::{BytesStart, Event};
    use std::collections::BTreeMap;

    fn fixture() -> RunResult {
        let text =
            include_str!("../../fuzz/corpus/result_json/regression-more-errors-than-requests.json");
        serde_json::from_str(text).unwrap()
    }

    /// Found by fuzzing: a result read back with more errors than requests (hand-edited or
    /// corrupt) overflowed the success count; it now reads as none succeeded.
    #[test]
    fn more_errors_than_requests_is_none_succeeded_not_an_overflow() {
        let r = fixture();
        assert!(r.measurement.requests < r.measurement.errors.values().sum::<u64>());
        let xml = render(&[("r".into(), &r)]);
        assert!(xml.contains("none of 2 requests succeeded"), "{xml}");
    }

    /// A result with a failing and a passing threshold, a failing check and an interruption.
    fn with_verdicts() -> RunResult {
        let mut r = fixture();
        r.measurement.errors.clear();
        r.interrupted = true;
        r.env.hostname = String::new();
        let verdict = |threshold: &str, actual: f64, passed: bool| PhaseVerdict {
            phase: "steady 100/s #1".into(),
            verdict: Verdict {
                threshold: threshold.into(),
                actual,
                passed,
            },
        };
        let mut scenario: ScenarioStudy = serde_json::from_value(serde_json::json!({
            "name": "steady", "kind": "constant", "workload": "w", "target": "t",
            "repetitions": 1, "steps": [], "repetition_stats": [], "thresholds": [],
            "passed": false
        }))
        .unwrap();
        scenario.thresholds = vec![
            verdict("p99 < 1ms", 5.1234, false),
            verdict("error_rate < 1%", 0.0052, true),
            verdict("rps > 500", 123.45, false),
        ];
        let check = CheckVerdict::judge(
            "rate limit",
            10,
            BTreeMap::from([("200".into(), 8), ("429".into(), 2)]),
            BTreeMap::from([("200".into(), 10)]),
        );
        let mut study: Study = serde_json::from_value(serde_json::json!({
            "plan": "p", "scale": 1.0, "slo": [], "knee_rule": KneeRule::default(),
            "scenarios": [], "checks": [], "passed": false
        }))
        .unwrap();
        study.scenarios = vec![scenario];
        study.checks = vec![check];
        r.study = Some(study);
        r
    }

    fn attrs(e: &BytesStart<'_>) -> BTreeMap<String, String> {
        e.attributes()
            .map(|a| {
                let a = a.unwrap();
                (
                    String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                    a.normalized_value(quick_xml::XmlVersion::default())
                        .unwrap()
                        .into_owned(),
                )
            })
            .collect()
    }

    /// Every element with its attributes and its parent, in document order.
    fn elements(xml: &str) -> Vec<(String, String, BTreeMap<String, String>)> {
        let mut reader = quick_xml::Reader::from_str(xml);
        let mut stack: Vec<String> = Vec::new();
        let mut out = Vec::new();
        loop {
            match reader.read_event().unwrap() {
                Event::Start(e) => {
                    let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                    out.push((
                        name.clone(),
                        stack.last().cloned().unwrap_or_default(),
                        attrs(&e),
                    ));
                    stack.push(name);
                }
                Event::Empty(e) => {
                    let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                    out.push((name, stack.last().cloned().unwrap_or_default(), attrs(&e)));
                }
                Event::End(_) => {
                    stack.pop();
                }
                Event::Eof => break,
                _ => {}
            }
        }
        out
    }

    fn is_decimal(s: &str) -> bool {
        let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
        !whole.is_empty()
            && whole.bytes().all(|b| b.is_ascii_digit())
            && frac.bytes().all(|b| b.is_ascii_digit())
    }

    /// The rules of the Ant JUnit schema that a strict validator checks, over the document.
    #[test]
    fn the_document_keeps_the_strict_schema_rules() {
        let r = with_verdicts();
        let xml = render(&[("a".into(), &r), ("b".into(), &r)]);
        let els = elements(&xml);
        // The root as Ant writes it: no attributes (both strict schemas accept that).
        assert_eq!(els[0].0, "testsuites", "{xml}");
        assert!(els[0].2.is_empty(), "{xml}");

        let suites: Vec<_> = els.iter().filter(|e| e.0 == "testsuite").collect();
        assert_eq!(suites.len(), 2, "{xml}");
        for (i, (_, parent, a)) in suites.iter().enumerate() {
            assert_eq!(parent, "testsuites");
            for key in [
                "name",
                "timestamp",
                "hostname",
                "tests",
                "failures",
                "errors",
                "time",
            ] {
                assert!(a.contains_key(key), "testsuite lacks {key}: {xml}");
            }
            // 2026-11-25T07:00:50.421Z, to the second, in UTC, without zone.
            assert_eq!(a["timestamp"], "2026-11-25T07:00:50", "{xml}");
            assert_eq!(a["hostname"], "localhost");
            assert_eq!(a["id"], i.to_string());
            assert_eq!(a["package"], "perfbase");
            assert!(is_decimal(&a["time"]), "{xml}");
            // Cases: requests succeeded (passes: errors cleared), run completed (interrupted),
            // three thresholds (two fail), one check (fails).
            assert_eq!((a["tests"].as_str(), a["failures"].as_str()), ("6", "4"));
        }
        // In each suite: properties first, then the cases, then system-out and system-err.
        let children: Vec<&str> = els
            .iter()
            .filter(|e| e.1 == "testsuite")
            .map(|e| e.0.as_str())
            .collect();
        let one = [
            "properties",
            "testcase",
            "testcase",
            "testcase",
            "testcase",
            "testcase",
            "testcase",
            "system-out",
            "system-err",
        ];
        assert_eq!(children, [one, one].concat(), "{xml}");

        for (_, _, a) in els.iter().filter(|e| e.0 == "testcase") {
            assert!(!a["name"].is_empty() && !a["classname"].is_empty(), "{xml}");
            assert!(is_decimal(&a["time"]), "{xml}");
        }
        let failures: Vec<_> = els.iter().filter(|e| e.0 == "failure").collect();
        assert_eq!(failures.len(), 8);
        for (_, parent, a) in &failures {
            assert_eq!(parent, "testcase");
            assert!(a.contains_key("type") && a.contains_key("message"), "{xml}");
        }
        // Failures say what was measured, with its unit.
        let messages: Vec<(&str, &str)> = failures[..4]
            .iter()
            .map(|(_, _, a)| (a["type"].as_str(), a["message"].as_str()))
            .collect();
        assert_eq!(
            messages,
            [
                (
                    "interrupted",
                    "the run was interrupted; the result is partial"
                ),
                ("threshold", "p99 < 1ms: actual 5.12 ms"),
                ("threshold", "rps > 500: actual 123.5/s"),
                (
                    "check",
                    "expected statuses 8 × 200, 2 × 429; got 10 × 200 (of 10 requests)"
                ),
            ]
        );
        // The threshold cases take their phase's time; with no such phase, the run's.
        let times: Vec<&str> = els
            .iter()
            .filter(|e| e.0 == "testcase")
            .take(2)
            .map(|e| e.2["time"].as_str())
            .collect();
        assert_eq!(times, ["0.010", "0.010"]);
    }

    #[test]
    fn no_runs_is_an_empty_document_not_a_broken_one() {
        let xml = render(&[]);
        let els = elements(&xml);
        assert_eq!(els.len(), 1, "{xml}");
        assert_eq!(els[0].0, "testsuites");
        assert!(els[0].2.is_empty(), "{xml}");
    }

    #[test]
    fn a_label_that_is_not_rfc_3339_leaves_the_timestamp_out() {
        let mut r = fixture();
        r.started_at = "last Tuesday".into();
        let xml = render(&[("r".into(), &r)]);
        assert!(!xml.contains("timestamp="), "{xml}");
        assert!(xml.contains("<testsuite name=\"r: "), "{xml}");
    }
}
