//! The HTML report's A-vs-B section: a plan's `[[versus]]` as the published studies show it,
//! the sentences per statistic and a box plot per statistic with each side's runs.

use crate::svg::{escape, figure, BoxGroup, BoxPlot, BoxStat};
use perfbase_analysis::versus::{Versus, STATS};
use std::fmt::Write;

/// One `[[versus]]`: per step, a table of each side's mean and variance of the four
/// statistics and B's difference; then one box plot per statistic, a box per side and step.
pub(crate) fn section(out: &mut String, v: &Versus, h_sec: &str, h_sub: &str) {
    let _ = writeln!(out, "<{h_sec}>A vs B: {}</{h_sec}>", escape(&v.name));
    let _ = writeln!(
        out,
        "<p>Each statistic's mean and variance over each side's runs; {} against {} in percent, \
         resolved by Welch's t-test on the logarithm of the runs' figures at p &lt; 0.05 (with \
         one run on a side, nothing is resolved).</p>",
        escape(&v.b_label),
        escape(&v.a_label)
    );
    for s in &v.steps {
        let _ = writeln!(out, "<{h_sub}>{}</{h_sub}>", escape(&s.step));
        let _ = writeln!(
            out,
            "<table>\n<tr><th class=\"l\">statistic (ms)</th><th>{a} mean</th><th>{a} variance</th>\
             <th>{b} mean</th><th>{b} variance</th><th>difference</th><th>p</th>\
             <th class=\"l\">verdict</th></tr>",
            a = escape(&v.a_label),
            b = escape(&v.b_label)
        );
        for st in &s.stats {
            let _ = writeln!(
                out,
                "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
                crate::study_text::stat_title(&st.stat),
                crate::study_text::ms(st.a.mean),
                crate::study_text::variance(st.a.variance),
                crate::study_text::ms(st.b.mean),
                crate::study_text::variance(st.b.variance),
                st.delta_pct.map_or("—".into(), |d| format!("{d:+.1} %")),
                st.p_value.map_or("—".into(), |p| {
                    // The column is headed "p": "0.11", "&lt; 0.001".
                    let text = perfbase_analysis::versus::welch::p_text(p);
                    escape(text.trim_start_matches("p ").trim_start_matches("= "))
                }),
                escape(&st.sentence)
            );
        }
        out.push_str("</table>\n");
    }
    for (i, stat) in STATS.iter().enumerate() {
        let groups: Vec<BoxGroup> = v
            .steps
            .iter()
            .map(|s| {
                let side = |label: &str, runs: &[[f64; 4]]| {
                    let values: Vec<f64> = runs.iter().map(|r| r[i]).collect();
                    BoxStat::of_values(label.to_string(), &values)
                };
                BoxGroup {
                    label: s.step.clone(),
                    boxes: [side(&v.a_label, &s.runs_a), side(&v.b_label, &s.runs_b)]
                        .into_iter()
                        .flatten()
                        .collect(),
                }
            })
            .collect();
        let title = crate::study_text::stat_title(stat);
        let plot = BoxPlot {
            title: format!("{title} latency of each run: {}", v.name),
            y_label: "ms".into(),
            x_label: "step and side".into(),
            groups,
        };
        figure(
            out,
            &plot.render(),
            &format!(
                "{title} latency of each run, per side: whiskers at the least and greatest run \
                 within 1.5 × IQR of the box, box from p25 to p75, bar at the median, circles \
                 for the runs beyond."
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfbase_analysis::versus::versus_step;

    #[test]
    fn a_box_per_side_and_step_for_each_statistic_with_outliers_as_circles() {
        let runs = |base: f64| -> Vec<[f64; 4]> {
            (0..8)
                .map(|i| {
                    let m = base + i as f64 * 0.1;
                    [m, m * 5.0, m * 20.0, m / 10.0]
                })
                .collect()
        };
        let mut b = runs(1.5);
        b.push([30.0, 40.0, 50.0, 0.1]); // one run far off: an outlier of the mean
        let v = Versus {
            name: "Vault vs OpenBao".into(),
            a: "a".into(),
            b: "b".into(),
            a_label: "Vault".into(),
            b_label: "OpenBao".into(),
            steps: vec![versus_step("encrypt", "OpenBao", runs(1.0), b).unwrap()],
        };
        let mut out = String::new();
        section(&mut out, &v, "h2", "h3");
        assert_eq!(out.matches("data-chart=\"boxplot\"").count(), 4, "{out}");
        assert!(out.contains("<h2>A vs B: Vault vs OpenBao</h2>"));
        assert!(out.contains("<td class=\"l\">Mean</td>"));
        assert!(out.contains("class=\"outlier\""));
        assert!(out.contains("OpenBao: outlier 30.0 ms"), "{out}");
    }

    #[test]
    fn quartiles_of_a_few_values() {
        let b = BoxStat::of_values("x".into(), &[4.0, 1.0, 3.0, 2.0, 100.0]).unwrap();
        assert_eq!((b.p25, b.p50, b.p75), (2.0, 3.0, 4.0));
        assert_eq!((b.min, b.max), (1.0, 4.0));
        assert_eq!(b.outliers, [100.0]);
        assert!(BoxStat::of_values("x".into(), &[]).is_none());
    }
}
