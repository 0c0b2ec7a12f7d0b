//! What each kind of target takes, and the errors for fields that do not apply: Redis commands,
//! HTTPS certificates, HTTP/2 streams, broker modes and options, Vault fields.

use super::*;
use perfbase_drivers::http::HttpVersion;
use perfbase_drivers::Operation;

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
        e.starts_with("p.toml:2: targets.t.http2: applies to http(s)://, Vault (protocol = \"vault\") targets only"),
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
    let Backend::Amqp(crate::backend::amqp::AmqpTarget { options, .. }) = &p.workloads["a"].backend
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
            assert_eq!(
                v.token,
                crate::backend::vault::TokenSource::Env("MY_TOKEN".into())
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(err(&format!(
        "[targets.v]\nurl = \"redis://127.0.0.1:1\"\nprotocol = \"vault\"\n[workloads.w]\ntarget = \"v\"\ncommand = \"get\"\n{scenario}"
    ))
    .starts_with("p.toml:3: targets.v.protocol: the protocols above HTTP are \"grpc\", \"vault\", \"ws\""));
    assert!(err(&format!(
        "[targets.v]\nurl = \"http://127.0.0.1:1\"\ntoken_file = \"t\"\n[workloads.w]\ntarget = \"v\"\npath = \"/\"\n{scenario}"
    ))
    .contains("targets.v.token_file: applies to Vault (protocol = \"vault\") targets only"));
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
