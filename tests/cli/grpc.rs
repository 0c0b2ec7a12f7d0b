//! `perfbase grpc` against grpc-go's example servers (scripts/services.sh up grpc): every kind
//! of call with exact counts, TLS, deadlines, a bad method or message, a server stopped
//! mid-run, redacted metadata, and a plan.

use crate::common::*;
use serde_json::Value;

/// The services' URL of `var` and the .proto file at `proto` under their proto directory.
fn server(var: &str, proto: &str) -> Option<(String, String)> {
    let url = service(var)?;
    let dir = service("PERFBASE_GRPC_PROTO_DIR")?;
    Some((url, format!("{dir}/{proto}")))
}

/// The services' proto3 copy of route_guide.proto (upstream's is edition 2023, which protox
/// does not read; scripts/services/grpc.sh writes the copy).
const ROUTE_GUIDE: &str = "proto3/route_guide/routeguide/route_guide.proto";
const GET_FEATURE: &str = r#"{"latitude": 409146138, "longitude": -746188906}"#;
/// A rectangle over the whole example database (its points lie between 40 and 42 N, 73 and
/// 75 W): ListFeatures answers with every feature.
const EVERYWHERE: &str = r#"{"lo": {"latitude": 390000000, "longitude": -760000000},
                              "hi": {"latitude": 430000000, "longitude": -720000000}}"#;

fn received(v: &Value) -> u64 {
    v["config"]["protocol"]["messages_received"]
        .as_u64()
        .unwrap()
}

fn sent(v: &Value) -> u64 {
    v["config"]["protocol"]["messages_sent"].as_u64().unwrap()
}

/// Unary and server-streaming calls, h2c and several calls per connection: the counts of
/// calls and of messages are exact.
#[test]
fn unary_and_server_streaming_counts_are_exact() {
    let Some((url, proto)) = server("PERFBASE_GRPC_URL", ROUTE_GUIDE) else {
        return;
    };
    let _g = serial();
    let call = ["--proto", &proto, "-c", "2", "--streams", "4", "-n", "400"];
    let (code, text, v) = pb(&[
        &[
            "grpc",
            &url,
            "--call",
            "routeguide.RouteGuide/GetFeature",
            "--data",
            GET_FEATURE,
        ],
        &call[..],
    ]
    .concat());
    assert_eq!(code, 0, "{text}");
    validate(&v);
    assert_eq!(v["protocol"], "grpc");
    assert_eq!(
        (v["requests"].as_u64(), v["success_ratio"].as_f64()),
        (Some(400), Some(1.0))
    );
    assert_eq!((received(&v), sent(&v)), (400, 400));
    assert_eq!(
        v["config"]["connections"], 8,
        "-c 2 --streams 4: eight calls at once"
    );
    assert_eq!(v["config"]["protocol"]["kind"], "unary");
    // The request's size, not its JSON: a 5-byte prefix and 17 bytes of protobuf (two tags,
    // a 5-byte varint and a negative int32's 10).
    assert_eq!(v["config"]["protocol"]["request_bytes"], 22);
    assert!(v["config"]["protocol"].get("data").is_none());
    assert!(v.get("stream").is_none(), "a unary reply is no stream");
    // Time to the first message is the timing split's waiting time.
    assert!(v["http_timing"]["waiting_ms"]["p50"].as_f64().unwrap() > 0.0);

    // One call learns how many features the rectangle holds; 50 calls get exactly 50 times that.
    let list = [
        "grpc",
        &url,
        "--call",
        "routeguide.RouteGuide/ListFeatures",
        "--data",
        EVERYWHERE,
    ];
    let (code, text, one) = pb(&[&list[..], &["--proto", &proto, "-c", "1", "-n", "1"]].concat());
    assert_eq!(code, 0, "{text}");
    let per_call = received(&one);
    assert!(
        per_call >= 100,
        "the example database has about a hundred features: {per_call}"
    );
    let (code, text, v) = pb(&[&list[..], &call[..6], &["-n", "50"]].concat());
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["config"]["protocol"]["kind"], "server-streaming");
    let st = &v["stream"];
    assert_eq!(
        (st["streams"].as_u64(), st["messages"].as_u64()),
        (Some(50), Some(50 * per_call))
    );
    assert!(st["messages_per_s"].as_f64().unwrap() > 0.0, "{st}");
    assert!(st["gap_ms"]["max"].as_f64().unwrap() >= 0.0, "{st}");
    assert_eq!(
        (v["requests"].as_u64(), received(&v)),
        (Some(50), 50 * per_call)
    );
    assert!(text.is_empty() || !text.contains("panic"), "{text}");
}

/// Client-streaming and bidirectional calls send `--messages` each; the record of a route
/// answers once per call.
#[test]
fn client_streaming_and_bidi_calls_send_every_message() {
    let Some((url, proto)) = server("PERFBASE_GRPC_URL", ROUTE_GUIDE) else {
        return;
    };
    let _g = serial();
    let point = r#"{"latitude": 409146138, "longitude": {{n}}}"#;
    let (code, text, v) = pb(&[
        "grpc",
        &url,
        "--proto",
        &proto,
        "--call",
        "routeguide.RouteGuide/RecordRoute",
        "--data",
        point,
        "--messages",
        "5",
        "-c",
        "2",
        "-n",
        "60",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["config"]["protocol"]["kind"], "client-streaming");
    assert_eq!(
        (v["requests"].as_u64(), sent(&v), received(&v)),
        (Some(60), 300, 60)
    );
    // Each note at a place of its own ({{n}} differs per message): the server, which answers
    // a note with every note at its place so far, itself included, sends each back once.
    let note = r#"{"location": {"latitude": 1, "longitude": {{n}}}, "message": "m{{n}}"}"#;
    let (code, text, v) = pb(&[
        "grpc",
        &url,
        "--proto",
        &proto,
        "--call",
        "routeguide.RouteGuide/RouteChat",
        "--data",
        note,
        "--messages",
        "3",
        "-c",
        "2",
        "-n",
        "40",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["config"]["protocol"]["kind"], "bidi-streaming");
    assert_eq!(
        (v["requests"].as_u64(), v["success_ratio"].as_f64()),
        (Some(40), Some(1.0))
    );
    assert_eq!((sent(&v), received(&v)), (120, 120));
}

/// A method the service lacks, a field its message lacks, a value of the wrong type and a
/// missing .proto file are each an exit 2 naming what is wrong, before any call.
#[test]
fn a_bad_method_or_message_is_refused_before_the_load() {
    let Some((url, proto)) = server("PERFBASE_GRPC_URL", ROUTE_GUIDE) else {
        return;
    };
    let cases: [(&[&str], &str); 4] = [
        (
            &["--call", "routeguide.RouteGuide/GetFeatures"],
            "has no method 'GetFeatures' (methods: GetFeature, ListFeatures, RecordRoute, RouteChat)",
        ),
        (&["--call", "routeguide.Nope/GetFeature"], "no service 'routeguide.Nope'"),
        (
            &["--call", "routeguide.RouteGuide/GetFeature", "--data", r#"{"lattitude": 1}"#],
            "lattitude",
        ),
        (
            &["--call", "routeguide.RouteGuide/GetFeature", "--data", r#"{"latitude": "north"}"#],
            "routeguide.Point",
        ),
    ];
    for (args, wanted) in cases {
        let (code, text, v) = pb(&[&["grpc", &url, "--proto", &proto, "-n", "5"], args].concat());
        assert_eq!(code, 2, "{args:?}: {text}");
        assert!(text.contains(wanted), "{args:?}: {text}");
        assert!(v.is_null(), "nothing was measured: {v}");
    }
    refused(
        &[
            "grpc",
            &url,
            "--proto",
            "/nonexistent/x.proto",
            "--call",
            "a.B/C",
            "-n",
            "1",
        ],
        "/nonexistent/x.proto: no such file",
    );
    // Upstream's own file, in edition 2023: refused with what to do about it.
    let edition = proto.replace("proto3/", "");
    refused(
        &[
            "grpc",
            &url,
            "--proto",
            &edition,
            "--call",
            "routeguide.RouteGuide/GetFeature",
            "-n",
            "1",
        ],
        "editions are not read: write the file as proto3",
    );
}

/// Without --proto the schema comes from the server's reflection: the greeter's calls all
/// succeed, a method it lacks is named with those it has, and a server without reflection
/// is told apart, before any call.
#[test]
fn without_a_proto_file_the_schema_comes_from_server_reflection() {
    let Some(url) = service("PERFBASE_GRPC_REFLECTION_URL") else {
        return;
    };
    let (code, text, v) = pb(&[
        "grpc",
        &url,
        "--call",
        "helloworld.Greeter/SayHello",
        "--data",
        r#"{"name": "r{{n}}"}"#,
        "-c",
        "2",
        "-n",
        "50",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        (v["requests"].as_u64(), v["success_ratio"].as_f64()),
        (Some(50), Some(1.0))
    );
    refused(
        &[
            "grpc",
            &url,
            "--call",
            "helloworld.Greeter/SayBye",
            "-n",
            "1",
        ],
        "has no method 'SayBye' (methods: SayHello)",
    );
    refused(
        &["grpc", &url, "--call", "nope.Nothing/X", "-n", "1"],
        "server reflection at",
    );
    let Some(plain) = service("PERFBASE_GRPC_URL") else {
        return;
    };
    refused(
        &[
            "grpc",
            &plain,
            "--call",
            "routeguide.RouteGuide/GetFeature",
            "-n",
            "1",
        ],
        "the server does not offer reflection",
    );
    refused(
        &[
            "grpc",
            &plain,
            "--call",
            "routeguide.RouteGuide/GetFeature",
            "-n",
            "1",
        ],
        "give the service's .proto file with --proto",
    );
}

/// The deadline server delays its answer to "delay": under --timeout 300ms every call ends as
/// DEADLINE_EXCEEDED (status 4), not as the engine's timeout.
#[test]
fn a_call_past_its_deadline_is_deadline_exceeded() {
    let Some((url, proto)) = server(
        "PERFBASE_GRPC_DEADLINE_URL",
        "features/proto/echo/echo.proto",
    ) else {
        return;
    };
    let (code, text, v) = pb(&[
        "grpc",
        &url,
        "--proto",
        &proto,
        "--call",
        "grpc.examples.echo.Echo/UnaryEcho",
        "--data",
        r#"{"message": "delay"}"#,
        "--timeout",
        "300ms",
        "-c",
        "2",
        "-n",
        "4",
    ]);
    assert_eq!(code, 3, "not one call succeeded: {text}");
    assert_eq!(v["requests"], 4, "{v}");
    assert_eq!(v["errors"]["driver"], 4, "{}", v["errors"]);
    assert_eq!(v["status"]["4"], 4, "{}", v["status"]);
    let sample = v["error_samples"][0]["message"].as_str().unwrap();
    assert!(sample.starts_with("DEADLINE_EXCEEDED"), "{sample}");
    // Each call ended at its deadline, before the engine's 300 ms.
    let max = v["latency_ms"]["max"].as_f64().unwrap();
    assert!((200.0..300.0).contains(&max), "{max}");
    // A quick answer is OK.
    let (code, text, v) = pb(&[
        "grpc",
        &url,
        "--proto",
        &proto,
        "--call",
        "grpc.examples.echo.Echo/UnaryEcho",
        "--data",
        r#"{"message": "hi {{n}}"}"#,
        "--timeout",
        "300ms",
        "-n",
        "20",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["success_ratio"], 1.0, "{}", v["error_samples"]);
}

/// grpcs:// with the services' CA: every call succeeds over TLS (new connections say so);
/// without it, the unknown certificate is a connect error, not a panic.
#[test]
fn tls_with_the_ca_and_without_it() {
    let Some((url, proto)) = server("PERFBASE_GRPC_TLS_URL", ROUTE_GUIDE) else {
        return;
    };
    let Some(ca) = service("PERFBASE_GRPC_CA") else {
        return;
    };
    let args = [
        "grpc",
        &url,
        "--proto",
        &proto,
        "--call",
        "routeguide.RouteGuide/GetFeature",
    ];
    let (code, text, v) = pb(&[
        &args[..],
        &[
            "--data",
            GET_FEATURE,
            "--cacert",
            &ca,
            "-c",
            "2",
            "-n",
            "100",
        ],
    ]
    .concat());
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["success_ratio"], 1.0, "{}", v["error_samples"]);
    assert_eq!(
        v["http_timing"]["new_connections"], 2,
        "{}",
        v["http_timing"]
    );
    assert!(v["http_timing"]["tls_ms"]["max"].as_f64().unwrap() > 0.0);
    let (_, text, v) = pb(&[&args[..], &["-n", "3", "--timeout", "2s"]].concat());
    assert_eq!(v["success_ratio"], 0.0, "{text}");
    assert!(
        v["errors"]["connect"].as_u64().unwrap() > 0,
        "{}",
        v["errors"]
    );
}

/// The route guide's server killed and started again mid-run: the calls in between are
/// classed transport errors, and the run goes on to its end and recovers.
#[test]
fn a_server_stopped_mid_run_is_classed_and_the_run_goes_on() {
    let Some((url, proto)) = server("PERFBASE_GRPC_URL", ROUTE_GUIDE) else {
        return;
    };
    let _g = serial();
    let args = [
        "grpc",
        &url,
        "--proto",
        &proto,
        "--call",
        "routeguide.RouteGuide/GetFeature",
        "--data",
        GET_FEATURE,
        "-r",
        "200",
        "-d",
        "6s",
        "--timeout",
        "1s",
    ];
    stopped_mid_run_by(&args, "grpc", || {
        let pid = service_var("grpc", "PERFBASE_GRPC_PID");
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &pid])
            .status();
        assert!(killed.unwrap().success(), "kill {pid}");
    });
}

/// Every call reaches the server once (the greeter logs each name it greets: its own count),
/// with the metadata, and a credential among it never shows in the result or the output.
#[test]
fn metadata_credentials_are_redacted() {
    let Some((url, proto)) = server(
        "PERFBASE_GRPC_GREETER_URL",
        "helloworld/helloworld/helloworld.proto",
    ) else {
        return;
    };
    let Some(bin_dir) = service("PERFBASE_GRPC_BIN_DIR") else {
        return;
    };
    let marker = format!("count-{}-", std::process::id());
    let (code, text, v) = pb(&[
        "grpc",
        &url,
        "--proto",
        &proto,
        "--call",
        "helloworld.Greeter/SayHello",
        "--data",
        &format!(r#"{{"name": "{marker}{{{{n}}}}"}}"#),
        "-M",
        "authorization: Bearer sekrit-token-42",
        "-M",
        "x-tenant: blue",
        "-n",
        "20",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["success_ratio"], 1.0, "{}", v["error_samples"]);
    // The greeter's log: each of the 20 names once (it may write its last lines a moment late).
    let log = std::path::Path::new(&bin_dir).join("../greeter.log");
    let mut greeted = Vec::new();
    for _ in 0..20 {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        greeted = text
            .lines()
            .filter_map(|l| l.split_once(&format!("Received: {marker}")))
            .map(|(_, n)| n.trim().parse::<u64>().unwrap())
            .collect();
        if greeted.len() >= 20 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    greeted.sort_unstable();
    assert_eq!(greeted, (0..20).collect::<Vec<u64>>(), "{}", log.display());
    let all = format!("{v}{text}");
    assert!(!all.contains("sekrit-token-42"), "{all}");
    assert!(
        all.contains("x-tenant: blue"),
        "{}",
        v["config"]["protocol"]
    );
    refused(
        &[
            "grpc",
            &url,
            "--proto",
            &proto,
            "--call",
            "helloworld.Greeter/SayHello",
            "-M",
            "grpc-timeout: 1S",
            "-n",
            "1",
        ],
        "gRPC's own header",
    );
}

/// A plan's grpc:// target: its workload runs with the check's exact count, and a method
/// the schema lacks is an error at its line.
#[test]
fn a_plan_loads_a_grpc_method_and_names_a_bad_one_at_its_line() {
    let Some((url, proto)) = server("PERFBASE_GRPC_URL", ROUTE_GUIDE) else {
        return;
    };
    let dir = tmp();
    let plan = |call: &str| {
        format!(
            r#"[targets.guide]
url = "{url}"
streams = 4

[workloads.get]
target = "guide"
call = "{call}"
protos = ["{proto}"]
data = '{GET_FEATURE}'

[[scenarios]]
name = "get"
workload = "get"
concurrency = 4
requests = 200
"#
        )
    };
    let run = run_plan_with(
        dir.path(),
        &plan("routeguide.RouteGuide/GetFeature"),
        |_| {},
    );
    assert_eq!(run.code(), 0, "{}{}", run.stdout(), run.stderr());
    let phase = &run.json()["phases"][0];
    assert_eq!(
        (phase["requests"].as_u64(), phase["success_ratio"].as_f64()),
        (Some(200), Some(1.0))
    );
    // The issue's spelling: an http:// URL with protocol = "grpc" is the same h2c target.
    let http = plan("routeguide.RouteGuide/GetFeature").replacen(
        &format!("url = \"{url}\""),
        &format!(
            "url = \"{}\"\nprotocol = \"grpc\"",
            url.replace("grpc://", "http://")
        ),
        1,
    );
    let run = run_plan_with(dir.path(), &http, |_| {});
    assert_eq!(run.code(), 0, "{}{}", run.stdout(), run.stderr());
    assert_eq!(run.json()["phases"][0]["success_ratio"], 1.0);
    let run = run_plan_with(dir.path(), &plan("routeguide.RouteGuide/Nope"), |_| {});
    assert_eq!(run.code(), 2);
    let err = run.stderr();
    assert!(err.contains("plan.toml:7: workloads.get.call"), "{err}");
    assert!(err.contains("has no method 'Nope'"), "{err}");
}

fn pb(args: &[&str]) -> (i32, String, Value) {
    pb_env(args, &[])
}

/// A plan of 8 bidirectional calls to the deadline server's echo, 4 at once, each sending
/// "a" then "delay" (answered 1.5 s late), under `timeout`.
fn chat(url: &str, proto: &str, timeout: &str) -> String {
    format!(
        r#"[plan]
timeout = "{timeout}"

[corpora.words]
values = ["a", "delay"]
pick = "sequential"

[targets.echo]
url = "{url}"

[workloads.chat]
target = "echo"
call = "grpc.examples.echo.Echo/BidirectionalStreamingEcho"
protos = ["{proto}"]
data = '{{"message": "{{{{words}}}}"}}'
messages = 2

[[scenarios]]
name = "chat"
workload = "chat"
concurrency = 4
requests = 8
"#
    )
}

/// [`chat`] against the deadline server under `timeout`, which every call fails (exit 3);
/// None without the server. The folder is kept with the run.
fn chat_run(timeout: &str) -> Option<(tempfile::TempDir, Run)> {
    let (url, proto) = server(
        "PERFBASE_GRPC_DEADLINE_URL",
        "features/proto/echo/echo.proto",
    )?;
    let dir = tmp();
    let run = run_plan_with(dir.path(), &chat(&url, &proto, timeout), |_| {});
    assert_eq!(run.code(), 3, "{}{}", run.stdout(), run.stderr());
    Some((dir, run))
}

/// A stall inside a stream shows in the gaps: the deadline server's bidirectional echo answers
/// "delay" 1.5 s late, so calls of two messages ("a", then "delay", from a plan's corpus)
/// get their two replies 1.5 s apart. (That example server ends every bidirectional call
/// with INVALID_ARGUMENT once the client has sent all: the calls fail, their streams count.)
#[test]
fn a_stall_inside_a_stream_shows_in_the_gaps() {
    let Some((_dir, run)) = chat_run("5s") else {
        return;
    };
    let phase = &run.json()["phases"][0];
    let sample = &phase["error_samples"][0];
    assert_eq!(sample["count"], 8, "{sample}");
    assert_eq!(
        sample["message"],
        "INVALID_ARGUMENT: request message not received"
    );
    let st = &phase["stream"];
    assert_eq!(
        (st["streams"].as_u64(), st["messages"].as_u64()),
        (Some(8), Some(16)),
        "{st}"
    );
    // One gap per call, each the server's 1.5 s stall.
    let (p50, max) = (
        st["gap_ms"]["p50"].as_f64().unwrap(),
        st["gap_ms"]["max"].as_f64().unwrap(),
    );
    assert!((1400.0..1700.0).contains(&p50) && max < 1700.0, "{st}");
    validate(run.json());
}

/// A stream the deadline cuts still counts what it brought: the same calls under an 800 ms
/// deadline get "a"'s reply at once and are cut before "delay"'s, each a DEADLINE_EXCEEDED
/// that says so, their first messages counted (they used to count 0 streams and 0 messages).
#[test]
fn a_stream_cut_by_its_deadline_still_counts_what_it_brought() {
    let Some((_dir, run)) = chat_run("800ms") else {
        return;
    };
    let phase = &run.json()["phases"][0];
    assert_eq!(phase["status"]["4"], 8, "{}", phase["status"]);
    let sample = phase["error_samples"][0]["message"].as_str().unwrap();
    assert!(
        sample.starts_with("DEADLINE_EXCEEDED: the stream was cut at the deadline")
            && sample.ends_with("after 1 message"),
        "{sample}"
    );
    let st = &phase["stream"];
    assert_eq!(
        (st["streams"].as_u64(), st["messages"].as_u64()),
        (Some(8), Some(8)),
        "{st}"
    );
    assert!(phase["bytes_read"].as_u64().unwrap() > 0, "{phase}");
    validate(run.json());
}

/// `perfbase ARGS` is exit 2, before any load, with `wanted` in what it prints.
fn refused(args: &[&str], wanted: &str) {
    let (code, text, _) = pb(args);
    assert_eq!(code, 2, "{args:?}: {text}");
    assert!(text.contains(wanted), "{args:?}: {text}");
}
