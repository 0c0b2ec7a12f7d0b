//! The machine a result was measured on, read from /proc at run time, and wall-clock labels.

use perfbase_core::result::Env;

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// CPU model, cores, memory, OS, kernel, host name and perfbase's version.
pub fn capture() -> Env {
    let cpuinfo = read("/proc/cpuinfo");
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024);
    let os = read("/etc/os-release")
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| std::env::consts::OS.into());
    Env {
        cpu_model,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        memory_bytes,
        os,
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
        node: std::env::var("PERFBASE_NODE_NAME")
            .ok()
            .filter(|n| !n.is_empty()),
        agents: Vec::new(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        source: source(),
        services: Default::default(),
    }
}

/// The source-control and CI variables a trend labels runs with, when set: the commit under
/// test and the pipeline that ran it, on the CI systems people use most.
const SOURCE_VARIABLES: &[&str] = &[
    "GIT_COMMIT",
    "GIT_BRANCH",
    "GITHUB_SHA",
    "GITHUB_REF_NAME",
    "GITHUB_RUN_ID",
    "CI_COMMIT_SHA",
    "CI_COMMIT_REF_NAME",
    "CI_PIPELINE_ID",
    "BUILDKITE_COMMIT",
    "BUILDKITE_BUILD_NUMBER",
    "CIRCLE_SHA1",
    "CIRCLE_BUILD_NUM",
    "BUILD_NUMBER",
    "TRAVIS_COMMIT",
    "BITBUCKET_COMMIT",
];

fn source() -> std::collections::BTreeMap<String, String> {
    SOURCE_VARIABLES
        .iter()
        .filter_map(|k| {
            let v = std::env::var(k).ok()?;
            let v = v.trim();
            // A value is a label, not a document: keep it short and printable.
            (!v.is_empty() && v.len() <= 200 && !v.chars().any(char::is_control))
                .then(|| ((*k).to_string(), v.to_string()))
        })
        .collect()
}

/// RFC 3339 UTC text of a wall-clock time, and UTC stamps for file names (see
/// `perfbase_core::clock`).
pub use perfbase_core::clock::{format_utc, rfc3339};
