//! `--prometheus-remote-write URL`: pushes the board about once a second while the run goes
//! and once more when it ends, so a short run's last figures reach Prometheus (a scrape-only
//! exporter loses whatever happened after the last scrape). The protocol is Prometheus' remote
//! write 1.0: a `WriteRequest` protobuf (the few `prompb` messages it needs are declared here
//! with prost's derives), compressed with snappy's block format, POSTed over HTTP/1.1.

use crate::{Board, Family, Kind, Value};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use prost::Message;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::Notify;

#[derive(Clone, PartialEq, Message)]
pub struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TimeSeries {
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
    #[prost(message, repeated, tag = "4")]
    pub histograms: Vec<Histogram>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Label {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    #[prost(double, tag = "1")]
    pub value: f64,
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// A native histogram with integer counts.
#[derive(Clone, PartialEq, Message)]
pub struct Histogram {
    #[prost(uint64, tag = "1")]
    pub count_int: u64,
    #[prost(double, tag = "3")]
    pub sum: f64,
    #[prost(sint32, tag = "4")]
    pub schema: i32,
    #[prost(double, tag = "5")]
    pub zero_threshold: f64,
    #[prost(uint64, tag = "6")]
    pub zero_count_int: u64,
    #[prost(message, repeated, tag = "11")]
    pub positive_spans: Vec<BucketSpan>,
    #[prost(sint64, repeated, tag = "12")]
    pub positive_deltas: Vec<i64>,
    #[prost(int64, tag = "15")]
    pub timestamp: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct BucketSpan {
    #[prost(sint32, tag = "1")]
    pub offset: i32,
    #[prost(uint32, tag = "2")]
    pub length: u32,
}

fn series(name: &str, labels: &[(String, String)], extra: Option<(&str, String)>) -> Vec<Label> {
    let mut out: Vec<Label> = std::iter::once(("__name__", name.to_string()))
        .chain(labels.iter().map(|(k, v)| (k.as_str(), v.clone())))
        .chain(extra)
        .map(|(name, value)| Label {
            name: name.to_string(),
            value,
        })
        .collect();
    // The protocol wants label names sorted.
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn sample(labels: Vec<Label>, value: f64, timestamp: i64) -> TimeSeries {
    TimeSeries {
        labels,
        samples: vec![Sample { value, timestamp }],
        histograms: Vec::new(),
    }
}

/// The families as remote-write series at `timestamp` (ms): counters get their `_total`
/// suffix, histograms both their classic series (`_bucket`, `_sum`, `_count`) and a native
/// one under their own name.
pub fn write_request(families: &[Family], timestamp: i64) -> WriteRequest {
    let mut timeseries = Vec::new();
    for f in families {
        for s in &f.series {
            match (&s.value, f.kind) {
                (Value::Number(v), Kind::Counter) => timeseries.push(sample(
                    series(&format!("{}_total", f.name), &s.labels, None),
                    *v,
                    timestamp,
                )),
                (Value::Number(v), _) => {
                    timeseries.push(sample(series(f.name, &s.labels, None), *v, timestamp))
                }
                (Value::Histogram(b), _) => {
                    let bucket = format!("{}_bucket", f.name);
                    for (le, n) in &b.classic {
                        let labels = series(&bucket, &s.labels, Some(("le", le.to_string())));
                        timeseries.push(sample(labels, *n as f64, timestamp));
                    }
                    let inf = series(&bucket, &s.labels, Some(("le", "+Inf".into())));
                    timeseries.push(sample(inf, b.count as f64, timestamp));
                    let sum = series(&format!("{}_sum", f.name), &s.labels, None);
                    timeseries.push(sample(sum, b.sum_s, timestamp));
                    let count = series(&format!("{}_count", f.name), &s.labels, None);
                    timeseries.push(sample(count, b.count as f64, timestamp));
                    let n = &b.native;
                    timeseries.push(TimeSeries {
                        labels: series(f.name, &s.labels, None),
                        samples: Vec::new(),
                        histograms: vec![Histogram {
                            count_int: b.count,
                            sum: b.sum_s,
                            schema: n.schema,
                            zero_threshold: n.zero_threshold,
                            zero_count_int: n.zero_count,
                            positive_spans: n
                                .spans
                                .iter()
                                .map(|&(offset, length)| BucketSpan { offset, length })
                                .collect(),
                            positive_deltas: n.deltas.clone(),
                            timestamp,
                        }],
                    });
                }
            }
        }
    }
    WriteRequest { timeseries }
}

/// Where pushes go: an `http://host:port/path` URL, checked before any load.
#[derive(Debug, Clone)]
pub struct Endpoint {
    uri: hyper::Uri,
    authority: String,
}

impl Endpoint {
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        if !url.contains("://") {
            return Err(format!("'{url}' has no scheme; write http://{url}"));
        }
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| format!("'{url}' is not a URL: {e}"))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some(other) => {
                return Err(format!(
                    "'{url}': only http:// is supported, not {other}:// (put a local proxy in front for TLS)"
                ))
            }
            None => return Err(format!("'{url}' has no scheme; write http://{url}")),
        }
        let authority = uri
            .authority()
            .map(|a| a.to_string())
            .ok_or_else(|| format!("'{url}' has no host"))?;
        Ok(Endpoint { uri, authority })
    }

    fn address(&self) -> String {
        if self.authority.contains(':') && !self.authority.ends_with(']') {
            self.authority.clone()
        } else {
            format!("{}:80", self.authority)
        }
    }
}

/// POSTs one write request; the server's answer when it refuses.
async fn post(to: &Endpoint, body: Vec<u8>) -> Result<(), String> {
    let stream = tokio::net::TcpStream::connect(to.address())
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", to.authority))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let path = to.uri.path_and_query().map_or("/", |p| p.as_str());
    let req = hyper::Request::post(path)
        .header(hyper::header::HOST, &to.authority)
        .header(hyper::header::CONTENT_TYPE, "application/x-protobuf")
        .header(hyper::header::CONTENT_ENCODING, "snappy")
        .header("X-Prometheus-Remote-Write-Version", "0.1.0")
        .header(
            hyper::header::USER_AGENT,
            concat!("perfbase/", env!("CARGO_PKG_VERSION")),
        )
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
    let status = resp.status();
    if status.is_success() {
        return Ok(());
    }
    let text = resp
        .into_body()
        .collect()
        .await
        .map(|b| String::from_utf8_lossy(&b.to_bytes()).trim().to_string())
        .unwrap_or_default();
    Err(format!(
        "{status}: {}",
        text.chars().take(300).collect::<String>()
    ))
}

/// How the pushes went.
#[derive(Debug, Default, Clone)]
pub struct Pushed {
    pub pushes: u64,
    pub failures: u64,
    pub last_error: Option<String>,
}

/// A running pusher.
pub struct Pusher {
    stop: Arc<Notify>,
    thread: std::thread::JoinHandle<Pushed>,
}

/// Pushes `board` to `to` every `every` until [`Pusher::finish`], from a thread of its own.
pub fn start(to: Endpoint, board: Board, every: Duration) -> std::io::Result<Pusher> {
    let (stop, thread) = crate::spawn_stoppable("perfbase-remote-write", move |stopped| {
        async move {
            let mut pushed = Pushed::default();
            let mut last_ts = 0i64;
            loop {
                let last = tokio::select! {
                    _ = tokio::time::sleep(every) => false,
                    _ = stopped.notified() => true,
                };
                // Strictly later timestamps: Prometheus refuses a second sample at the
                // same millisecond.
                let now = SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as i64);
                last_ts = now.max(last_ts + 1);
                let families = board.families();
                if !families.is_empty() {
                    let body = write_request(&families, last_ts).encode_to_vec();
                    let compressed = snap::raw::Encoder::new()
                        .compress_vec(&body)
                        .unwrap_or_default();
                    pushed.pushes += 1;
                    if let Err(e) = post(&to, compressed).await {
                        pushed.failures += 1;
                        pushed.last_error = Some(e);
                    } else if last {
                        pushed.last_error = None;
                    }
                }
                if last {
                    return pushed;
                }
            }
        }
    })?;
    Ok(Pusher { stop, thread })
}

impl Pusher {
    /// Pushes the final figures and stops; the last push's error, if it failed.
    pub fn finish(self) -> Pushed {
        self.stop.notify_one();
        self.thread.join().unwrap_or_default()
    }
}
