//! Whole plans: a full plan validates and expands into its scenarios' steps, suites become one
//! step per operation, rankings and the page are checked, and every error names its line and
//! field.

use super::*;
use perfbase_drivers::Operation;
use perfbase_engine::{Load, Pacer};
use std::time::Duration;

#[test]
fn a_full_plan_validates_and_expands() {
    let text = format!(
        "{BASE}{}",
        r#"
[plan]
name = "demo"
scale = 0.5
thresholds = ["error_rate < 1%"]

[slo]
thresholds = ["p99 < 200ms"]

[workloads.mixed]
target = "api"
mix = [ { weight = 9, path = "/" }, { weight = 1, path = "/status/500" } ]

[[scenarios]]
name = "ladder"
workload = "lookup"
rate = [10, "20", "40/s"]
duration = "2s"
cooldown = "500ms"

[[scenarios]]
name = "conc"
workload = "mixed"
concurrency = [4, 8]
requests = 100
repetitions = 3

[[scenarios]]
name = "ramp"
workload = "lookup"
stages = [ { rate = 10, duration = "1s" }, { ramp_to = 50, duration = "2s" }, { concurrency = 2, duration = "1s" } ]

[[checks]]
name = "limit"
workload = "lookup"
requests = 130
expect = { 200 = 120, 429 = 10 }
"#
    );
    let p = plan(&text).unwrap();
    assert_eq!(p.name, "demo");
    assert_eq!(p.scenarios.len(), 3);
    let ladder = &p.scenarios[0];
    assert_eq!(ladder.kind, Kind::RateLadder);
    let rates: Vec<String> = ladder.steps.iter().map(|s| s.name.clone()).collect();
    assert_eq!(
        rates,
        vec!["5/s", "10/s", "20/s"],
        "scale 0.5 halves every rate"
    );
    assert_eq!(ladder.cooldown, Some(Duration::from_millis(500)));
    let conc = &p.scenarios[1];
    assert_eq!(conc.kind, Kind::ConcurrencyLadder);
    assert_eq!(conc.steps[1].load, Load::Closed { connections: 4 });
    assert_eq!(conc.steps[0].duration, None);
    assert_eq!(conc.steps[0].count, Some(100));
    assert_eq!(conc.repetitions, 3);
    let ramp = &p.scenarios[2];
    assert_eq!(ramp.steps.len(), 3);
    assert!(
        matches!(ramp.steps[1].load, Load::Open { pacer: Pacer::Ramp { from, to, .. }, .. } if from == 5.0 && to == 25.0)
    );
    assert_eq!(p.checks[0].expect.get(&429), Some(&10));
    assert_eq!(p.slo.len(), 1);
    assert_eq!(p.thresholds.len(), 1);
    assert_eq!(specs(&p.workloads["mixed"]).len(), 2);
}

#[test]
fn errors_name_line_and_field() {
    let cases = [
        ("[[scenarios]]\nname = \"x\"\nworkload = \"lookup\"\nrate = 0\n", 15, "scenarios[0].rate: invalid rate '0'"),
        ("[[scenarios]]\nname = \"x\"\nworkload = \"nope\"\nrate = 1\n", 14, "scenarios[0].workload: no workload named 'nope' (workloads: lookup)"),
        ("[[scenarios]]\nname = \"x\"\nworkload = \"lookup\"\nrate = 1\nconcurrency = 2\n", 13, "scenarios[0]: give exactly one of rate, concurrency or stages"),
        ("[[scenarios]]\nname = \"x\"\nworkload = \"lookup\"\nrate = 1\nduration = \"soon\"\n", 16, "scenarios[0].duration: invalid duration 'soon'"),
        ("[[scenarios]]\nname = \"x\"\nworkload = \"lookup\"\nrate = 1\nthresholds = [\"p98 < 1s\"]\n", 16, "scenarios[0].thresholds:"),
        ("[[scenarios]]\nname = \"x\"\nworkload = \"lookup\"\nrate = 1\nspeed = 3\n", 16, "scenarios.speed: unknown field `speed`"),
        ("[[scenarios]]\nname = \"x\"\nworkload = \"lookup\"\nrequests = 99999999999999999999\n", 15, "scenarios.requests: the number is too large"),
        ("[workloads.lookup]\ntarget = \"api\"\n", 12, "[workloads.lookup]: duplicate key"),
        ("[corpora.more]\ngenerate = { pattern = \"k{n}\", count = 3 }\nmisses = 2.0\n", 14, "corpora.more.misses: must be a share from 0 to 1"),
        ("[workloads.h]\ntarget = \"api\"\nheaders = { \"Bad Header\" = \"v\" }\n", 14, "workloads.h.headers.Bad Header: 'Bad Header' is no HTTP header name"),
        ("[[checks]]\nname = \"c\"\nworkload = \"lookup\"\nrequests = 10\nexpect = { 200 = 9 }\n", 16, "checks[0].expect: the expected counts add up to 9, but requests = 10"),
        ("[workloads.bad]\ntarget = \"api\"\npath = \"/{{nokeys}}\"\n", 14, "workloads.bad.path: '{{nokeys}}' names no corpus (known: keys)"),
        ("[[scenarios]]\nname = \"x\"\nworkload = \"lookup\"\nrate = [10, 20, 20]\n", 15, "scenarios[0].rate: a ladder must climb: step 3 (20/s) is not above step 2 (20/s)"),
        ("[[scenarios]]\nname = \"x\"\nworkload = \"lookup\"\nconcurrency = [8, 4]\n", 15, "scenarios[0].concurrency: a ladder must climb: step 2 (c=4) is not above step 1 (c=8)"),
        ("[plan]\nlabels = { service = \"api\", \"build id\" = \"7\" }\n", 13, "plan.labels.build id: invalid label 'build id=7'"),
        ("[workloads.bad]\ntarget = \"db\"\n", 13, "workloads.bad.target: no target named 'db' (targets: api)"),
    ];
    for (extra, line, want) in cases {
        let e = plan(&format!("{BASE}{extra}")).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("p.toml:{line}: {want}")),
            "got {e:?}, want line {line}: {want:?}"
        );
    }
}

#[test]
fn suites_are_one_step_per_operation_set_up_once() {
    let text = |workload: &str, shape: &str| {
        format!(
            "[targets.db]\nurl = \"postgres://u@127.0.0.1:5432/d\"\n[targets.r]\nurl = \"redis://127.0.0.1:6379\"\n\
             [targets.m]\nurl = \"mongodb://127.0.0.1:27017/d\"\n{workload}\n\
             [[scenarios]]\nname = \"s\"\nworkload = \"w\"\n{shape}\n"
        )
    };
    let pg = plan(&text(
        "[workloads.w]\ntarget = \"db\"\nbuiltin = \"suite\"\ninit = true",
        "concurrency = 2\nrepetitions = 2",
    ))
    .unwrap();
    let s = &pg.scenarios[0];
    assert_eq!(s.kind, Kind::Suite);
    let names: Vec<&str> = s.steps.iter().map(|st| st.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "insert",
            "select-pk",
            "scan",
            "update",
            "delete",
            "transaction",
            "join"
        ]
    );
    // The tables are made once, before the first operation.
    for (i, st) in s.steps.iter().enumerate() {
        let w = &pg.workloads[st.workload.as_ref().unwrap()];
        let Backend::Sql(t) = &w.backend else {
            panic!("{w:?}")
        };
        assert_eq!(t.init, i == 0, "{}", st.name);
    }
    let redis = plan(&text(
        "[workloads.w]\ntarget = \"r\"\ncommand = \"suite\"\noperations = [\"set\", \"get\"]\nprefill = true",
        "rate = 100",
    ))
    .unwrap();
    let steps: Vec<(&str, bool)> = redis.scenarios[0]
        .steps
        .iter()
        .map(
            |st| match &redis.workloads[st.workload.as_ref().unwrap()].backend {
                Backend::Redis(r) => (r.op.name(), r.prefill),
                b => panic!("{b:?}"),
            },
        )
        .collect();
    assert_eq!(steps, [("set", true), ("get", false)]);
    let mongo = plan(&text(
        "[workloads.w]\ntarget = \"m\"\ncommand = \"suite\"",
        "concurrency = 1",
    ))
    .unwrap();
    assert_eq!(mongo.scenarios[0].steps.len(), 7);

    let err = |w: &str, shape: &str| plan(&text(w, shape)).unwrap_err().to_string();
    let suite = "[workloads.w]\ntarget = \"r\"\ncommand = \"suite\"";
    assert!(err(suite, "rate = [1, 2]").contains(
        "scenarios[0].workload: 'w' is a suite: it runs each operation at one load, so give \
         one rate or one concurrency, not a rate ladder"
    ));
    assert!(err(
        "[workloads.w]\ntarget = \"r\"\ncommand = \"suite\"\noperations = [\"set\", \"fly\"]",
        "rate = 1"
    )
    .contains("workloads.w.operations: unknown operation 'fly'; use ping, set"));
    assert!(err(
        "[workloads.w]\ntarget = \"r\"\ncommand = \"get\"\noperations = [\"set\"]",
        "rate = 1"
    )
    .contains("workloads.w.operations: pick operations of a suite only"));
    assert!(err(
        &format!("{suite}\n[[checks]]\nname = \"c\"\nworkload = \"w\"\nrequests = 1\nexpect = {{ 200 = 1 }}"),
        "rate = 1"
    )
    .contains("checks[0].workload: 'w' is a suite; a check sends one workload"));
}

#[test]
fn rankings_and_the_page_are_checked_with_their_line() {
    let base = "[targets.t]\nurl = \"http://127.0.0.1:1\"\n[workloads.w]\ntarget = \"t\"\n\
                [[scenarios]]\nname = \"a\"\nworkload = \"w\"\nrate = 1\n\
                [[scenarios]]\nname = \"b\"\nworkload = \"w\"\nrate = 2\nsection = \"Edge\"\n";
    let ok = plan(&format!(
        "{base}[[rankings]]\nname = \"r\"\nby = \"p99\"\n[page]\nfile = \"baselines_v2\"\n"
    ))
    .unwrap();
    assert_eq!(ok.rankings[0].scenarios, ["a", "b"]);
    assert_eq!(ok.rankings[0].by.name(), "p99");
    let page = ok.page.as_ref().unwrap();
    assert_eq!(
        (page.stem.as_str(), page.title.as_str()),
        ("baselines_v2", "Performance baselines: p")
    );
    assert_eq!(ok.scenarios[1].section.as_deref(), Some("Edge"));
    let err = |more: &str| plan(&format!("{base}{more}")).unwrap_err().to_string();
    assert_eq!(
        err("[[rankings]]\nname = \"r\"\nby = \"fastest\"\n"),
        "p.toml:16: rankings[0].by: 'fastest': use throughput, p50, p99, mean"
    );
    assert!(
        err("[[rankings]]\nname = \"r\"\nscenarios = [\"a\", \"zz\"]\n")
            .contains("rankings[0].scenarios: no scenario named 'zz'")
    );
    assert!(err("[[rankings]]\nname = \"r\"\nscenarios = [\"a\"]\n")
        .contains("a ranking needs two scenarios or more"));
    assert!(err("[page]\nfile = \"../x\"\n").contains("page.file: '../x': use a plain file name"));
}

/// The plan's length at most, as `perfbase k8s` bounds its Jobs by it: steps × repetitions,
/// warm-up and cool-downs; a precision target's most runs, lengthened, within max_time and a
/// round; nothing known when a step is bounded by a count alone.
#[test]
fn a_plans_length_at_most() {
    let base = "[targets.t]\nurl = \"http://127.0.0.1:1/\"\n[workloads.w]\ntarget = \"t\"\n";
    let length = |extra: &str, scenario: &str| {
        let p = plan(&format!(
            "{extra}{base}[[scenarios]]\nname = \"s\"\nworkload = \"w\"\n{scenario}"
        ))
        .unwrap();
        planned_duration(&p).map(|d| d.as_secs())
    };
    // 2 steps × 10 s × 2 repetitions, a 5 s warm-up, a 1 s cool-down before each of 4 runs.
    let plain = "rate = [10, 20]\nduration = \"10s\"\nrepetitions = 2\nwarmup = \"5s\"\n\
                 cooldown = \"1s\"\n";
    assert_eq!(length("", plain), Some(40 + 5 + 4));
    // Up to 5 runs per step, each up to 4 × 10 s, 2 steps: at most 400 s…
    let precise = "[plan]\nprecision = \"5%\"\nmax_repetitions = 5\n";
    assert_eq!(
        length(precise, "rate = [10, 20]\nduration = \"10s\"\n"),
        Some(400)
    );
    // …or max_time and one more round of 80 s.
    assert_eq!(
        length(
            &format!("{precise}max_time = \"60s\"\n"),
            "rate = [10, 20]\nduration = \"10s\"\n"
        ),
        Some(140)
    );
    assert_eq!(length("", "concurrency = 2\nrequests = 100\n"), None);
}
