//! `perfbase k8s --apply --follow`: after the objects are applied, waits for the agents' pods
//! and the merge Job as `kubectl wait` would, saying what each pod does, then prints the merged
//! run the merge Job saved, as `perfbase report` would, and exits with its code. A Ctrl-C asks
//! every agent to stop through the store (each saves its partial result, and the merge Job
//! merges them); a second one leaves at once.

use crate::exit::{bad_input, AppError, Exit};
use crate::merge::MERGED_LABEL;
use crate::store::StoreOptions;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What --follow watches: the agents' Job and the merge Job, in one namespace, for one run.
pub struct Follow<'a> {
    pub namespace: Option<&'a str>,
    pub agents_job: &'a str,
    pub merge_job: &'a str,
    pub run_id: &'a str,
    /// Give up after this (the Jobs' own deadline and a margin).
    pub timeout: Duration,
}

/// How often the Jobs and pods are read.
const POLL: Duration = Duration::from_secs(1);

/// How a Job ended, if it has: its `Complete` or `Failed` condition.
fn finished(job: &Job) -> Option<&'static str> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    conditions
        .iter()
        .filter(|c| c.status == "True")
        .find_map(|c| match c.type_.as_str() {
            "Complete" => Some("complete"),
            "Failed" => Some("failed"),
            _ => None,
        })
}

/// One line per pod whose phase or node changed since the last reading.
fn pod_lines(pods: &[Pod], seen: &mut BTreeMap<String, String>) -> Vec<String> {
    let mut lines = Vec::new();
    for p in pods {
        let name = p.metadata.name.clone().unwrap_or_default();
        let index = p
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("batch.kubernetes.io/job-completion-index"))
            .map_or_else(String::new, |i| format!(" (index {i})"));
        let phase = p
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_else(|| "Pending".into());
        let node = p
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .map_or_else(String::new, |n| format!(" on {n}"));
        let now = format!("{phase}{node}");
        if seen.get(&name) != Some(&now) {
            lines.push(format!("pod/{name}{index}: {now}"));
            seen.insert(name, now);
        }
    }
    lines
}

/// Asks every agent of run `run` to stop, through the store.
fn request_stop(store: &StoreOptions, run: &str) -> Result<(), String> {
    let reason = "Ctrl-C of perfbase k8s --follow";
    crate::store::open(store)
        .map_err(|e| e.to_string())?
        .request_stop(run, reason)
        .map_err(|e| format!("--follow: cannot ask the agents to stop: {e}"))
}

/// Waits for the merge Job (printing the pods' progress on stderr), asking the agents to stop
/// on a first Ctrl-C; Ok(how the merge Job ended).
async fn wait(f: &Follow<'_>, store: &StoreOptions) -> Result<&'static str, String> {
    let client = kube::Client::try_default()
        .await
        .map_err(|e| format!("--follow: no cluster to reach ({e})"))?;
    let ns = f
        .namespace
        .map_or_else(|| client.default_namespace().to_string(), str::to_string);
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns);
    let pods: Api<Pod> = Api::namespaced(client, &ns);
    let interrupt = crate::interrupt::install();
    let deadline = Instant::now() + f.timeout;
    let mut seen = BTreeMap::new();
    let mut agents_done = None;
    let mut asked = false;
    loop {
        if !asked && interrupt.load(std::sync::atomic::Ordering::SeqCst) {
            asked = true;
            // The store's client blocks: on a thread of its own, off this runtime.
            std::thread::scope(|s| s.spawn(|| request_stop(store, f.run_id)).join())
                .map_err(|_| "--follow: the stop request's thread panicked".to_string())??;
            errln!(
                "perfbase: asked every agent of run {} to stop (a second Ctrl-C leaves now)",
                f.run_id
            );
        }
        for job in [f.agents_job, f.merge_job] {
            let list = ListParams::default().labels(&format!("job-name={job}"));
            let found = pods
                .list(&list)
                .await
                .map_err(|e| format!("--follow: pods of {job}: {e}"))?;
            for line in pod_lines(&found.items, &mut seen) {
                errln!("perfbase: {line}");
            }
        }
        let read = |name: &str| {
            let jobs = jobs.clone();
            let name = name.to_string();
            async move {
                jobs.get(&name)
                    .await
                    .map_err(|e| format!("--follow: job {name}: {e}"))
            }
        };
        if agents_done.is_none() {
            agents_done = finished(&read(f.agents_job).await?);
            if let Some(how) = agents_done {
                errln!("perfbase: job.batch/{}: {how}", f.agents_job);
            }
        }
        if let Some(how) = finished(&read(f.merge_job).await?) {
            errln!("perfbase: job.batch/{}: {how}", f.merge_job);
            return Ok(how);
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "--follow: job.batch/{} did not finish within {}",
                f.merge_job,
                perfbase_core::units::format_duration(f.timeout)
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Follows the run to its end and prints the merged run the merge Job saved.
pub fn follow(f: &Follow<'_>, store: &StoreOptions) -> Result<Exit, AppError> {
    let how = crate::backend::setup::block_on_local(wait(f, store))?.map_err(bad_input)?;
    let reference = format!("latest:{MERGED_LABEL}={}", f.run_id);
    let (_, merged) = crate::store::load(&mut None, store, &reference).map_err(|e| {
        bad_input(format!(
            "--follow: job.batch/{} {how}, and the store holds no merged run {} ({e}); its pod's \
             log says why",
            f.merge_job, f.run_id
        ))
    })?;
    let passed = merged.study.as_ref().is_none_or(|s| s.passed);
    crate::merge::print(&merged);
    Ok(Exit::of(&merged, passed))
}
