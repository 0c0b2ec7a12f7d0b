use super::*;
use perfbase_drivers::http::HttpVersion;
use perfbase_drivers::workload::Values;
use perfbase_drivers::Operation;
use perfbase_engine::{Load, Pacer};
use std::time::Duration;

fn plan(text: &str) -> Result<Plan, PlanError> {
    parse(text, "p.toml", Path::new("/nonexistent"), None)
}

const BASE: &str = r#"
[targets.api]
url = "http://127.0.0.1:8080"

[corpora.keys]
generate = { pattern = "key-{n}", count = 100 }
misses = 0.5

[workloads.lookup]
target = "api"
path = "/lookup/{{keys}}"
"#;

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
fn secrets_come_from_the_environment_and_stay_out_of_labels() {
    std::env::set_var("PERFBASE_TEST_TOKEN", "s3cret");
    let text = r#"
[targets.api]
url = "http://127.0.0.1:8080"
headers = { Authorization = "Bearer ${PERFBASE_TEST_TOKEN}" }
[workloads.w]
target = "api"
[[scenarios]]
name = "s"
workload = "w"
rate = 1
"#;
    let p = plan(text).unwrap();
    let w = &p.workloads["w"];
    assert_eq!(specs(w)[0].headers[0].1, "Bearer s3cret");
    assert_eq!(
        w.shown_headers,
        vec!["Authorization: [redacted]".to_string()]
    );
    let e = plan(&text.replace("PERFBASE_TEST_TOKEN", "PERFBASE_UNSET_VAR"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("p.toml:4: targets.api.headers.Authorization: environment variable PERFBASE_UNSET_VAR is not set"), "{e}");
}

#[test]
fn csv_corpora_with_columns_and_weights() {
    let dir = std::env::temp_dir().join(format!("perfbase-plan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("k.csv"), "id,key,weight\n1,\"a,b\",1\n2,c,3\n").unwrap();
    let text = r#"
[targets.api]
url = "http://127.0.0.1:8080"
[corpora.k]
file = "k.csv"
column = "key"
weight_column = "weight"
pick = "weighted"
[workloads.w]
target = "api"
path = "/x/{{k}}"
[[scenarios]]
name = "s"
workload = "w"
concurrency = 1
"#;
    let p = parse(text, "p.toml", &dir, None).unwrap();
    assert_eq!(
        p.workloads["w"].corpora[0].values,
        Values::List(vec!["a,b".to_string(), "c".to_string()])
    );
    let bad = text.replace("column = \"key\"", "column = \"nope\"");
    let e = parse(&bad, "p.toml", &dir, None).unwrap_err().to_string();
    assert!(
        e.contains("corpora.k.file") && e.contains("no column 'nope'"),
        "{e}"
    );
}

/// A CSV corpus read as RFC 4180: a quoted field may span lines and hold commas and quotes,
/// and a bad row is reported by the data file's own line, after the plan's file, line and
/// field.
#[test]
fn csv_corpora_read_quoted_line_breaks_as_one_record() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("q.csv"),
        "id,text,weight\n1,\"hello, world\nsecond line\",2\n\n  \n2,plain,1\n3,\"say \"\"hi\"\"\",1\n",
    )
    .unwrap();
    let text = r#"
[targets.api]
url = "http://127.0.0.1:8080"
[corpora.k]
file = "q.csv"
column = "text"
weight_column = "weight"
pick = "weighted"
[workloads.w]
target = "api"
method = "POST"
body = "{{k}}"
[[scenarios]]
name = "s"
workload = "w"
concurrency = 1
"#;
    let p = parse(text, "p.toml", dir.path(), None).unwrap();
    let corpus = &p.workloads["w"].corpora[0];
    assert_eq!(
        corpus.values,
        Values::List(vec![
            "hello, world\nsecond line".to_string(),
            "plain".to_string(),
            "say \"hi\"".to_string(),
        ])
    );

    // The bad weight is on line 4 of the data file: the record before it spans lines 2–3.
    std::fs::write(
        dir.path().join("q.csv"),
        "id,text,weight\n1,\"two\nlines\",1\n2,x,heavy\n",
    )
    .unwrap();
    let e = parse(text, "p.toml", dir.path(), None)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("p.toml:5: corpora.k.file: "), "{e}");
    assert!(
        e.contains("q.csv: line 4: the weight ('weight') 'heavy' is not a number"),
        "{e}"
    );

    // A row without the column names its line and what it has.
    std::fs::write(dir.path().join("q.csv"), "id,text,weight\n\n1\n").unwrap();
    let e = parse(text, "p.toml", dir.path(), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("q.csv: line 3: no column 2 ('text'): the row has 1 field(s)"),
        "{e}"
    );

    // Only blank lines: empty, not a panic.
    std::fs::write(dir.path().join("q.csv"), "\n   \n\n").unwrap();
    let e = parse(text, "p.toml", dir.path(), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("q.csv: the CSV file is empty"), "{e}");
}

#[test]
fn random_corpora_make_random_bodies() {
    let text = r#"
[targets.api]
url = "http://127.0.0.1:8080"
[corpora.blob]
generate = { length = 64, count = 50 }
[workloads.w]
target = "api"
method = "POST"
body = "{{blob}}"
[[scenarios]]
name = "s"
workload = "w"
rate = 1
"#;
    let p = plan(text).unwrap();
    let Values::List(values) = &p.workloads["w"].corpora[0].values else {
        panic!("random strings are a list");
    };
    assert_eq!(values.len(), 50);
    assert!(values
        .iter()
        .all(|v| v.len() == 64 && v.chars().all(|c| c.is_ascii_alphanumeric())));
    let distinct: std::collections::HashSet<_> = values.iter().collect();
    assert_eq!(distinct.len(), 50);
    assert_eq!(
        plan(text).unwrap().workloads["w"].corpora[0].values,
        Values::List(values.clone()),
        "reproducible"
    );
    let bad = text.replace("length = 64, ", "");
    assert!(plan(&bad)
        .unwrap_err()
        .to_string()
        .contains("corpora.blob.generate: give either pattern"));
}

#[test]
fn redis_targets_take_a_command_and_nothing_else() {
    let ok = plan(
        r#"
[targets.c]
url = "redis+cluster://127.0.0.1:7001,127.0.0.1:7002"
[workloads.w]
target = "c"
command = "HSET"
keyspace = 10
pipeline = 8
prefill = true
[[scenarios]]
name = "s"
workload = "w"
concurrency = [1, 2]
"#,
    )
    .unwrap();
    let Backend::Redis(r) = &ok.workloads["w"].backend else {
        panic!("a Redis workload: {:?}", ok.workloads["w"].backend)
    };
    assert_eq!(r.op.name(), "hset");
    assert_eq!((r.options.keyspace, r.options.pipeline), (10, 8));
    assert!(r.prefill);
    let err = |text: &str| plan(text).unwrap_err().to_string();
    let target = "[targets.c]\nurl = \"redis://127.0.0.1:6379\"\n";
    let scenario = "[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 1\n";
    assert_eq!(
        err(&format!(
            "{target}[workloads.w]\ntarget = \"c\"\n{scenario}"
        )),
        "p.toml:4: workloads.w.command: a Redis workload needs `command`: one of ping, set, \
         get, get-miss, del, incr, lpush, rpush, lpop, rpop, sadd, zadd, hset"
    );
    assert!(err(&format!(
        "{target}[workloads.w]\ntarget = \"c\"\ncommand = \"get\"\npath = \"/\"\n{scenario}"
    ))
    .contains("workloads.w.path: applies to http(s):// targets, not to target 'c'"));
    assert!(err(&format!(
        "{target}[workloads.w]\ntarget = \"c\"\ncommand = \"get\"\npipeline = 0\n{scenario}"
    ))
    .starts_with("p.toml:6: workloads.w.pipeline: must be at least 1"));
    // Redis fields on an HTTP target, and a Redis URL the driver cannot use.
    assert!(err(&format!(
        "[targets.c]\nurl = \"http://127.0.0.1:1\"\n[workloads.w]\ntarget = \"c\"\ncommand = \"get\"\n{scenario}"
    ))
    .starts_with("p.toml:5: workloads.w.command: applies to redis://, mongodb://, Vault (protocol = \"vault\") targets"));
    assert!(err(&format!(
        "[targets.c]\nurl = \"redis://127.0.0.1:notaport\"\n[workloads.w]\ntarget = \"c\"\ncommand = \"get\"\n{scenario}"
    ))
    .starts_with("p.toml:2: targets.c.url: "));
}

#[test]
fn https_targets_take_a_cacert_relative_to_the_plan_or_insecure() {
    let p = plan(
        r#"
[targets.a]
url = "https://127.0.0.1:8443"
cacert = "certs/ca.pem"
[targets.b]
url = "https://localhost:8443"
insecure = true
[workloads.wa]
target = "a"
[workloads.wb]
target = "b"
[[scenarios]]
name = "s"
workload = "wa"
rate = 1
"#,
    )
    .unwrap();
    let a = &http_options(&p.workloads["wa"]).tls;
    assert_eq!(
        a.ca_file.as_deref(),
        Some(Path::new("/nonexistent/certs/ca.pem"))
    );
    assert!(!a.insecure);
    assert!(http_options(&p.workloads["wb"]).tls.insecure);
}

#[test]
fn http2_targets_take_streams_and_http_only_fields_stay_on_http_targets() {
    let err = |text: &str| plan(text).unwrap_err().to_string();
    let body = |target: &str| {
        format!(
            "{target}\n[workloads.w]\ntarget = \"t\"\n[[scenarios]]\nname = \"s\"\n\
             workload = \"w\"\nrate = 1\n"
        )
    };
    let p = plan(&body(
        "[targets.t]\nurl = \"http://127.0.0.1:1\"\nhttp2 = true\nstreams = 8",
    ))
    .unwrap();
    assert_eq!(
        http_options(&p.workloads["w"]).version,
        HttpVersion::Http2 { streams: 8 }
    );
    let p = plan(&body(
        "[targets.t]\nurl = \"http://127.0.0.1:1\"\nhttp2 = true",
    ))
    .unwrap();
    assert_eq!(
        http_options(&p.workloads["w"]).version,
        HttpVersion::Http2 { streams: 1 }
    );
    let e = err(&body(
        "[targets.t]\nurl = \"http://127.0.0.1:1\"\nstreams = 8",
    ));
    assert!(
        e.starts_with("p.toml:3: targets.t.streams: applies to HTTP/2 only"),
        "{e}"
    );
    let e = err(&body(
        "[targets.t]\nurl = \"http://127.0.0.1:1\"\nhttp2 = true\nstreams = 0",
    ));
    assert!(e.contains("targets.t.streams: must be at least 1"), "{e}");
    let e = err(&body(
        "[targets.t]\nurl = \"http://127.0.0.1:1\"\nhttp2 = true\nkeepalive = false",
    ));
    assert!(
        e.contains("targets.t.http2: HTTP/2 keeps its connections"),
        "{e}"
    );
    let e = err(&body(
        "[targets.t]\nurl = \"redis://127.0.0.1:1\"\nhttp2 = true",
    ));
    assert!(
        e.starts_with("p.toml:2: targets.t.http2: applies to http:// and https:// targets only"),
        "{e}"
    );
}

#[test]
fn broker_targets_take_their_modes_and_options() {
    let p = plan(
        r#"
[targets.mq]
url = "amqp://u:p@127.0.0.1:5672/%2f"
[targets.bus]
url = "nats://127.0.0.1:4222"
[targets.iot]
url = "mqtt://127.0.0.1:1883"
[workloads.a]
target = "mq"
mode = "publish"
size = 10240
persistent = true
confirms = true
[workloads.n]
target = "bus"
mode = "JetStream"
[workloads.m]
target = "iot"
qos = 1
size = 64
[[scenarios]]
name = "s"
workload = "a"
rate = [100, 200]
"#,
    )
    .unwrap();
    let Backend::Amqp(crate::backend::AmqpTarget { options, .. }) = &p.workloads["a"].backend
    else {
        panic!("{:?}", p.workloads["a"].backend)
    };
    assert_eq!(options.mode, perfbase_drivers::amqp::AmqpMode::Publish);
    assert!(options.persistent && options.confirms);
    assert_eq!(options.message_size, 10240);
    let Backend::Nats(crate::backend::BrokerTarget { options, .. }) = &p.workloads["n"].backend
    else {
        panic!()
    };
    assert_eq!(options.mode, perfbase_drivers::nats::NatsMode::JetStream);
    let Backend::Mqtt(crate::backend::BrokerTarget { options, .. }) = &p.workloads["m"].backend
    else {
        panic!()
    };
    assert_eq!((options.qos, options.message_size), (1, 64));
    let err = |text: &str| plan(text).unwrap_err().to_string();
    let scenario = "[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 1\n";
    assert_eq!(
        err(&format!(
            "[targets.t]\nurl = \"mqtt://127.0.0.1:1883\"\n[workloads.w]\ntarget = \"t\"\nqos = 2\n{scenario}"
        )),
        "p.toml:5: workloads.w.qos: use 0 or 1"
    );
    assert_eq!(
        err(&format!(
            "[targets.t]\nurl = \"nats://127.0.0.1:4222\"\n[workloads.w]\ntarget = \"t\"\nmode = \"stream\"\n{scenario}"
        )),
        "p.toml:5: workloads.w.mode: 'stream': use one of pubsub, request, jetstream"
    );
    assert_eq!(
        err(&format!(
            "[targets.t]\nurl = \"nats://127.0.0.1:4222\"\n[workloads.w]\ntarget = \"t\"\nack = \"auto\"\n{scenario}"
        )),
        "p.toml:5: workloads.w.ack: applies to amqp:// targets, not to target 't'"
    );
    assert!(err(&format!(
        "[targets.t]\nurl = \"gopher://x\"\n[workloads.w]\ntarget = \"t\"\n{scenario}"
    ))
    .starts_with("p.toml:2: targets.t.url: 'gopher://x': use an http://"));
}

/// The request templates of an HTTP workload.
fn specs(w: &Workload) -> &[perfbase_drivers::http::RequestSpec] {
    match &w.http().expect("an HTTP workload").requests {
        crate::backend::HttpRequests::Mix { specs, .. } => specs,
        other => panic!("a plan's mix, not {other:?}"),
    }
}

/// The HTTP options of an HTTP workload.
fn http_options(w: &Workload) -> &perfbase_drivers::http::HttpOptions {
    &w.http().expect("an HTTP workload").options
}

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
fn a_header_with_a_line_break_is_refused_after_expansion_without_its_value() {
    std::env::set_var("PERFBASE_TEST_CRLF_TOKEN", "Bearer s3cr\r\nX-Injected: 1");
    let e = plan(
        "[targets.t]\nurl = \"http://127.0.0.1:1/\"\nheaders = { Authorization = \"${PERFBASE_TEST_CRLF_TOKEN}\" }\n[workloads.w]\ntarget = \"t\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 1\n",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "p.toml:3: targets.t.headers.Authorization: the value has a line break (CR or LF), which would end the header early"
    );
    assert!(!e.contains("s3cr"));
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

#[test]
fn a_url_variable_cannot_change_where_the_load_goes() {
    std::env::set_var("PERFBASE_TEST_AT_PW", "pw@127.0.0.1:1/x");
    std::env::set_var("PERFBASE_TEST_BAD_HOST", "127.0.0.1:1/x");
    let text = r#"
[targets.api]
url = "http://bob:${PERFBASE_TEST_AT_PW}@127.0.0.1:8080/"
[workloads.w]
target = "api"
[[scenarios]]
name = "s"
workload = "w"
rate = 1
"#;
    let p = plan(text).unwrap();
    let base = &specs(&p.workloads["w"])[0].base;
    assert_eq!(
        (base.host_str(), base.port()),
        (Some("127.0.0.1"), Some(8080))
    );
    assert_eq!(base.password(), Some("pw%40127.0.0.1%3A1%2Fx"));
    let e = plan(&text.replace(
        "bob:${PERFBASE_TEST_AT_PW}@127.0.0.1:8080",
        "${PERFBASE_TEST_BAD_HOST}",
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("p.toml:3: targets.api.url: ${PERFBASE_TEST_BAD_HOST} stands in the URL's scheme, host or port"), "{e}");
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

#[test]
fn vault_targets_take_their_fields_with_their_line() {
    let scenario = "[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nconcurrency = 1\n";
    let err = |t: &str| plan(t).unwrap_err().to_string();
    let target = "[targets.v]\nurl = \"http://127.0.0.1:8200\"\nprotocol = \"vault\"\n";
    let ok = plan(&format!(
        "{target}token_env = \"MY_TOKEN\"\n[workloads.w]\ntarget = \"v\"\ncommand = \"suite\"\noperations = [\"encrypt\", \"kv-read\"]\nsize = 64\ninit = true\n{scenario}"
    ))
    .unwrap();
    assert_eq!(ok.scenarios[0].steps.len(), 2);
    match &ok.workloads["w/encrypt"].backend {
        crate::backend::Backend::Vault(v) => {
            assert_eq!(v.options.payload_size, 64);
            assert!(v.init);
            assert_eq!(v.token, crate::backend::TokenSource::Env("MY_TOKEN".into()));
        }
        other => panic!("{other:?}"),
    }
    assert!(err(&format!(
        "[targets.v]\nurl = \"redis://127.0.0.1:1\"\nprotocol = \"vault\"\n[workloads.w]\ntarget = \"v\"\ncommand = \"get\"\n{scenario}"
    ))
    .starts_with("p.toml:3: targets.v.protocol: the one protocol above HTTP is \"vault\""));
    assert!(err(&format!(
        "[targets.v]\nurl = \"http://127.0.0.1:1\"\ntoken_file = \"t\"\n[workloads.w]\ntarget = \"v\"\npath = \"/\"\n{scenario}"
    ))
    .contains("targets.v.token_file: applies to Vault targets only"));
    assert!(err(&format!(
        "{target}[workloads.w]\ntarget = \"v\"\ncommand = \"encrypt\"\nkey_type = \"ed25519\"\n{scenario}"
    ))
    .starts_with("p.toml:7: workloads.w.key_type: key type 'ed25519' does not encrypt"));
    assert!(err(&format!(
        "{target}[workloads.w]\ntarget = \"v\"\ncommand = \"rotate\"\n{scenario}"
    ))
    .starts_with("p.toml:6: workloads.w.command: unknown Vault operation 'rotate'"));
    assert!(err(&format!(
        "{target}[workloads.w]\ntarget = \"v\"\ncommand = \"health\"\nkv_path = \"../x\"\n{scenario}"
    ))
    .contains("workloads.w.kv_path: KV path '../x'"));
    assert!(err(&format!(
        "[targets.a]\nurl = \"http://127.0.0.1:1\"\n[workloads.w]\ntarget = \"a\"\nkey_type = \"x\"\n{scenario}"
    ))
    .contains("workloads.w.key_type: applies to Vault (protocol = \"vault\") targets"));
}
