//! Limits: absurd numbers, generated corpora and endless input files are refused with their
//! line, field and limit, quickly and without a panic.

use super::*;
use std::time::Duration;

#[test]
fn absurd_numbers_are_refused_with_their_line_and_limit() {
    let err = |text: &str| plan(text).unwrap_err().to_string();
    let base = "[targets.t]\nurl = \"http://127.0.0.1:1/\"\n[workloads.w]\ntarget = \"t\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 10\n";
    // A duration and repetitions whose product overflowed a Duration (a panic before).
    let e = err(&format!(
        "{base}duration = \"100000000000h\"\nrepetitions = 4000000000\n"
    ));
    assert_eq!(
        e,
        "p.toml:9: scenarios[0].duration: is longer than 7 days, the longest a plan's step, warm-up, cool-down or timeout may be"
    );
    // 2^32 repetitions used to wrap to 0.
    assert_eq!(
        err(&format!("{base}repetitions = 4294967296\n")),
        "p.toml:9: scenarios[0].repetitions: 4294967296 is more than 10000, the most repetitions a scenario may have"
    );
    assert!(err(&format!("{base}requests = 1000000000001\n"))
        .starts_with("p.toml:9: scenarios[0].requests: 1000000000001 is more than"));
    // Knee limits must be finite and in range; each names its field.
    for (knee, field) in [
        ("throughput_ratio = nan", "throughput_ratio"),
        ("p99_factor = -1.0", "p99_factor"),
        ("error_ratio = 2.0", "error_ratio"),
        ("min_gain = inf", "min_gain"),
        ("trend_factor = 0.5", "trend_factor"),
    ] {
        let e = err(&format!("[plan]\nknee = {{ {knee} }}\n{base}"));
        assert!(
            e.starts_with(&format!("p.toml:2: plan.knee.{field}: ")),
            "{e}"
        );
    }
    // The largest allowed values still describe without overflow.
    let p = plan(&format!(
        "{base}duration = \"168h\"\nrepetitions = 10000\ncooldown = \"168h\"\n"
    ))
    .unwrap();
    assert!(describe(&p).contains("of load"));
}

#[test]
fn generated_corpora_have_a_documented_size_limit() {
    let err = |generate: &str| {
        plan(&format!(
            "[corpora.big]\ngenerate = {{ {generate} }}\n[targets.t]\nurl = \"http://127.0.0.1:1/\"\n[workloads.w]\ntarget = \"t\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 1\n"
        ))
        .unwrap_err()
        .to_string()
    };
    // 10^12 numbered keys aborted on a 24 TB allocation, even under --dry-run; they are now
    // made on demand: instant, and the last key is the 10^12th.
    let text = "[corpora.big]\ngenerate = { pattern = \"k-{n}\", count = 1000000000000 }\n[targets.t]\nurl = \"http://127.0.0.1:1/\"\n[workloads.w]\ntarget = \"t\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 1\n";
    let started = std::time::Instant::now();
    let p = plan(text).unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
    let keys = &p.workloads["w"].corpora[0].values;
    assert_eq!(
        (keys.len(), keys.get(999_999_999_999)),
        (1_000_000_000_000, "k-999999999999".into())
    );
    assert_eq!(
        err("pattern = \"k-{n}\", count = 1000000000001"),
        "p.toml:2: corpora.big.generate.count: 1000000000001 is more than 1000000000000, the most entries a generated corpus may have"
    );
    assert_eq!(
        err("length = 8, count = 10000001"),
        "p.toml:2: corpora.big.generate.count: at most 10000000 random strings (they are built in memory), not 10000001"
    );
    // 100 strings of 10^8 characters ran for minutes building ~10 GB.
    assert!(err("length = 100000000, count = 100")
        .starts_with("p.toml:2: corpora.big.generate.length: 100000000 is more than 2684354,"));
}

#[test]
fn an_endless_input_file_is_refused_with_its_field() {
    for (section, field) in [
        ("[corpora.z]\nfile = \"/dev/zero\"\n", "corpora.z.file"),
        (
            "[workloads.z]\ntarget = \"api\"\nbody_file = \"/dev/zero\"\n",
            "workloads.z.body_file",
        ),
    ] {
        let started = std::time::Instant::now();
        let e = plan(&format!("{BASE}{section}")).unwrap_err().to_string();
        assert!(e.contains(field) && e.contains("256 MiB limit"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5), "{e}");
    }
}

/// `abort_on_fail` thresholds are judged at the end too; a bad one, or a `delay_abort_eval`
/// without any, is refused with its line and field.
#[test]
fn abort_on_fail_reads_like_thresholds() {
    let base = "[targets.t]\nurl = \"http://127.0.0.1:1/\"\n[workloads.w]\ntarget = \"t\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 10\nduration = \"10s\"\n";
    let p = plan(&format!(
        "{base}thresholds = [\"p99 < 1s\"]\nabort_on_fail = [\"error_rate < 5%\"]\ndelay_abort_eval = \"3s\"\n"
    ))
    .unwrap();
    let s = &p.scenarios[0];
    assert_eq!(s.abort_on_fail.len(), 1);
    assert_eq!(s.abort_on_fail[0].text, "error_rate < 5%");
    assert_eq!(s.delay_abort_eval, Duration::from_secs(3));
    let judged: Vec<&str> = s.thresholds.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(judged, ["p99 < 1s", "error_rate < 5%"]);
    let err = |text: &str| plan(&format!("{base}{text}")).unwrap_err().to_string();
    assert!(err("abort_on_fail = [\"errors < 5\"]\n")
        .starts_with("p.toml:10: scenarios[0].abort_on_fail: invalid threshold 'errors < 5'"));
    assert!(err("delay_abort_eval = \"3s\"\n").starts_with(
        "p.toml:10: scenarios[0].delay_abort_eval: delays abort_on_fail, which this scenario does not have"
    ));
}
