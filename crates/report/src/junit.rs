//! JUnit XML of thresholds and checks, which CI systems show as test results: one test suite
//! per run; a test case per threshold verdict, per check, and one saying whether any request
//! succeeded.

use perfbase_core::result::RunResult;
use std::fmt::Write;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

struct Case {
    class: String,
    name: String,
    failure: Option<String>,
}

/// The JUnit XML of several runs.
pub fn render(runs: &[(String, &RunResult)]) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"perfbase\">\n",
    );
    for (label, r) in runs {
        let mut cases = Vec::new();
        // Saturating: a hand-edited or corrupt result may count more errors than requests.
        let ok = r
            .measurement
            .requests
            .saturating_sub(r.measurement.errors.values().sum::<u64>());
        cases.push(Case {
            class: "perfbase".into(),
            name: "requests succeeded".into(),
            failure: (ok == 0)
                .then(|| format!("none of {} requests succeeded", r.measurement.requests)),
        });
        if r.interrupted {
            cases.push(Case {
                class: "perfbase".into(),
                name: "run completed".into(),
                failure: Some("the run was interrupted; the result is partial".into()),
            });
        }
        if let Some(study) = &r.study {
            for s in &study.scenarios {
                for t in &s.thresholds {
                    cases.push(Case {
                        class: format!("thresholds.{}", s.name),
                        name: format!("{} in {}", t.verdict.threshold, t.phase),
                        failure: (!t.verdict.passed).then(|| {
                            format!("{}: actual {:.4}", t.verdict.threshold, t.verdict.actual)
                        }),
                    });
                }
            }
            for c in &study.checks {
                let counts = |m: &std::collections::BTreeMap<String, u64>| {
                    m.iter()
                        .map(|(k, v)| format!("{v} × {k}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                cases.push(Case {
                    class: "checks".into(),
                    name: c.name.clone(),
                    failure: (!c.passed).then(|| {
                        format!("expected {}; got {}", counts(&c.expect), counts(&c.actual))
                    }),
                });
            }
        }
        let failures = cases.iter().filter(|c| c.failure.is_some()).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{:.3}\" timestamp=\"{}\">",
            esc(&format!("{label}: {}", r.target)),
            cases.len(),
            r.measurement.duration_s,
            esc(&r.started_at)
        );
        for c in &cases {
            match &c.failure {
                None => {
                    let _ = writeln!(
                        out,
                        "    <testcase classname=\"{}\" name=\"{}\"/>",
                        esc(&c.class),
                        esc(&c.name)
                    );
                }
                Some(f) => {
                    let _ = writeln!(
                        out,
                        "    <testcase classname=\"{}\" name=\"{}\">\n      <failure message=\"{}\"/>\n    </testcase>",
                        esc(&c.class),
                        esc(&c.name),
                        esc(f)
                    );
                }
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    /// Found by fuzzing: a result read back with more errors than requests (hand-edited or
    /// corrupt) overflowed the success count; it now reads as none succeeded.
    #[test]
    fn more_errors_than_requests_is_none_succeeded_not_an_overflow() {
        let text =
            include_str!("../../fuzz/corpus/result_json/regression-more-errors-than-requests.json");
        let r: perfbase_core::result::RunResult = serde_json::from_str(text).unwrap();
        assert!(r.measurement.requests < r.measurement.errors.values().sum::<u64>());
        let xml = super::render(&[("r".into(), &r)]);
        assert!(xml.contains("none of 2 requests succeeded"), "{xml}");
    }
}
