//! Unit tests of the SVG primitives.

use super::*;

#[test]
fn nice_numbers() {
    assert_eq!(nice_num(97.0, false), 100.0);
    assert_eq!(nice_num(25.0, true), 20.0);
    assert_eq!(nice_num(0.34, true), 0.5);
    assert_eq!(nice_num(7.1, true), 10.0);
    assert_eq!(nice_num(1.4, false), 2.0);
}

#[test]
fn ticks_cover_the_range_with_nice_steps() {
    assert_eq!(
        nice_ticks(0.0, 97.0, 5),
        vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
    );
    assert_eq!(nice_ticks(0.0, 1.0, 6), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    assert_eq!(nice_ticks(0.13, 4.2, 5), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    // The first tick may sit below the data (Heckbert's loose labels).
    assert_eq!(
        nice_ticks(100.0, 800.0, 6),
        vec![0.0, 200.0, 400.0, 600.0, 800.0]
    );
    assert_eq!(nice_ticks(-3.0, 12.0, 4), vec![-5.0, 0.0, 5.0, 10.0, 15.0]);
    // Degenerate and broken inputs still give an axis.
    assert_eq!(nice_ticks(0.0, 0.0, 5), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    let t = nice_ticks(5.0, 5.0, 5);
    assert!(
        t[0] <= 5.0 && *t.last().unwrap() >= 5.0 && t.len() >= 2,
        "{t:?}"
    );
    assert_eq!(nice_ticks(f64::NAN, 3.0, 5), nice_ticks(0.0, 1.0, 5));
    // No binary noise in labels.
    let t = nice_ticks(0.0, 0.7, 8);
    assert_eq!(t[3], 0.3);
    assert_eq!(fmt_tick(0.3, 0.1), "0.3");
    assert_eq!(fmt_tick(1500.0, 500.0), "1,500");
    assert_eq!(fmt_tick(40.0, 20.0), "40");
    assert_eq!(fmt_tick(0.25, 0.05), "0.25");
}

#[test]
fn log_ticks_use_1_2_5_or_decades() {
    let (min, max, t) = log_ticks(0.8, 230.0);
    assert_eq!((min, max), (0.5, 500.0));
    assert_eq!(
        t,
        vec![0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0]
    );
    let (min, max, t) = log_ticks(0.03, 4000.0);
    assert_eq!((min, max), (0.01, 10000.0));
    assert_eq!(t, vec![0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]);
    let labels: Vec<String> = t.iter().map(|&v| fmt_log_tick(v)).collect();
    assert_eq!(labels, ["0.01", "0.1", "1", "10", "100", "1,000", "10,000"]);
    let a = Axis::log("ms", 1.0, 100.0);
    assert!((a.frac(10.0) - 0.5).abs() < 1e-12);
    assert_eq!(a.frac(0.0), 0.0, "non-positive values sit at the bottom");
}

#[test]
fn percentile_axis_maps_nines() {
    assert_eq!(nines(0.0), 0.0);
    assert!((nines(0.9) - 1.0).abs() < 1e-12);
    assert!((nines(0.99) - 2.0).abs() < 1e-12);
    assert!((nines(0.999) - 3.0).abs() < 1e-9);
    assert!((nines(1.0) - 9.0).abs() < 1e-6, "q = 1 is clamped");
    assert!((quantile_at(nines(0.995)) - 0.995).abs() < 1e-12);
    let labels: Vec<String> = (0..=5).map(nines_label).collect();
    assert_eq!(
        labels,
        ["0 %", "90 %", "99 %", "99.9 %", "99.99 %", "99.999 %"]
    );
    let a = Axis::percentile("percentile", 4);
    assert_eq!(a.ticks().len(), 5);
    assert_eq!(a.ticks()[4].1, "99.99 %");
    assert!((a.frac(nines(0.99)) - 0.5).abs() < 1e-12);
}

#[test]
fn latency_axis_goes_log_past_two_decades() {
    assert!(!Axis::latency("ms", 1.0, 50.0).is_log());
    assert!(Axis::latency("ms", 0.5, 900.0).is_log());
    assert!(!Axis::latency("ms", 0.0, 900.0).is_log());
}

#[test]
fn escaping() {
    assert_eq!(
        escape(r#"<a href="x">Tom & 'Jerry'</a>"#),
        "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;"
    );
    assert_eq!(escape("a\u{1}b"), "a\u{fffd}b");
    assert_eq!(escape("plain ü"), "plain ü");
}

#[test]
fn chart_renders_escaped_text_and_breaks_lines_at_nan() {
    let mut c = Chart::new(
        "timeline",
        "A <b> chart",
        Axis::linear("s", 0.0, 3.0, 4),
        Axis::linear("ms", 0.0, 10.0, 5),
    );
    c.series.push(Series {
        name: "p99 & co".into(),
        color: "#000",
        line: vec![(0.0, 1.0), (1.0, f64::NAN), (2.0, 3.0), (3.0, 4.0)],
        dots: vec![(2.0, 3.0, "x<y".into())],
        ..Series::default()
    });
    let svg = c.render();
    assert!(svg.starts_with(r#"<svg class="chart" data-chart="timeline""#));
    assert!(svg.contains("A &lt;b&gt; chart") && !svg.contains("<b>"));
    assert!(svg.contains("p99 &amp; co"));
    assert!(svg.contains("<title>x&lt;y</title>"));
    // Two sub-paths: the NaN point lifts the pen.
    let d = svg.split(r#"<path d=""#).nth(1).unwrap();
    let d = &d[..d.find('"').unwrap()];
    assert_eq!(d.matches('M').count(), 2, "{d}");
    assert!(svg.ends_with("</svg>"));
}
