//! `perfbase k8s --apply` on a real node: the Indexed Job's pods run in the containerd of the
//! node `scripts/services.sh up kubernetes` starts (kubelet, scheduler, controller-manager),
//! from the image `scripts/image.sh` builds of this very binary; they meet at the store's
//! barrier, load the reference service in this process over the host's network, save to the
//! services' PostgreSQL, and the merge Job merges them there.

use crate::common::*;
use k8s_openapi::api::core::v1::{Namespace, Pod, Secret};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use perfbase_core::result::RunResult;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The node's services, or None (the test then passes by doing nothing, or fails when
/// PERFBASE_REQUIRE_SERVICES says the services must be there).
fn node() -> Option<(String, String)> {
    let config = service("PERFBASE_KUBECONFIG")?;
    service("PERFBASE_KUBE_NODE")?;
    let store = service("PERFBASE_POSTGRES_URL")?;
    Some((config, store))
}

/// The agent image of this test binary's perfbase, built and imported once; or the image
/// PERFBASE_K8S_IMAGE names, already in the node (the Dockerfile's, say).
fn image() -> &'static str {
    static IMAGE: OnceLock<String> = OnceLock::new();
    IMAGE.get_or_init(|| {
        if let Ok(image) = std::env::var("PERFBASE_K8S_IMAGE") {
            return image;
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = Command::new(root.join("scripts/image.sh"))
            .arg(assert_cmd::cargo::cargo_bin("perfbase"))
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        assert!(out.status.success(), "scripts/image.sh failed");
        let text = String::from_utf8(out.stdout).unwrap();
        text.lines().last().unwrap().to_string()
    })
}

/// A namespace of its own for one test, with the store's Secret in it; deleted on drop.
struct Space {
    rt: tokio::runtime::Runtime,
    client: kube::Client,
    name: String,
}

impl Space {
    fn new(kubeconfig: &str, store_url: &str, tag: &str) -> Space {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let name = format!("pb-{tag}-{}", std::process::id());
        let client = rt.block_on(async {
            let file = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
            let options = kube::config::KubeConfigOptions::default();
            let config = kube::Config::from_custom_kubeconfig(file, &options)
                .await
                .unwrap();
            let client = kube::Client::try_from(config).unwrap();
            let spaces: Api<Namespace> = Api::all(client.clone());
            let ns: Namespace =
                serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap();
            spaces.create(&PostParams::default(), &ns).await.unwrap();
            let secrets: Api<Secret> = Api::namespaced(client.clone(), &name);
            let secret: Secret = serde_json::from_value(serde_json::json!({
                "metadata": {"name": "perfbase-store"},
                "stringData": {"url": store_url}
            }))
            .unwrap();
            secrets
                .create(&PostParams::default(), &secret)
                .await
                .unwrap();
            client
        });
        Space { rt, client, name }
    }

    /// The pods of Job `job`, by their completion index.
    fn pods(&self, job: &str) -> Vec<(String, Pod)> {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.name);
        let list = ListParams::default().labels(&format!("job-name={job}"));
        let found = self.rt.block_on(pods.list(&list)).unwrap();
        found
            .items
            .into_iter()
            .map(|p| {
                let index = p
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get("batch.kubernetes.io/job-completion-index").cloned())
                    .unwrap_or_default();
                (index, p)
            })
            .collect()
    }

    /// Every pod of the namespace and the node's conditions and taints, for a failure's
    /// message: a pod that never ran says why (pending, image, eviction, disk pressure).
    fn describe(&self) -> String {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.name);
        let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(self.client.clone());
        let (pods, nodes) = self.rt.block_on(async {
            let lp = ListParams::default();
            (pods.list(&lp).await, nodes.list(&lp).await)
        });
        let mut text = String::new();
        for p in pods.map(|l| l.items).unwrap_or_default() {
            let status = serde_json::to_string(&p.status).unwrap_or_default();
            let name = p.metadata.name.unwrap_or_default();
            text.push_str(&format!("pod {name}: {status}\n"));
        }
        for n in nodes.map(|l| l.items).unwrap_or_default() {
            let taints = serde_json::to_string(&n.spec.and_then(|s| s.taints)).unwrap_or_default();
            let conditions = n.status.and_then(|s| s.conditions).unwrap_or_default();
            let shown: Vec<String> = conditions
                .iter()
                .map(|c| {
                    format!(
                        "{}={} ({})",
                        c.type_,
                        c.status,
                        c.message.as_deref().unwrap_or("")
                    )
                })
                .collect();
            text.push_str(&format!("node taints {taints}; {}\n", shown.join("; ")));
        }
        text
    }

    /// Deletes pod `name` at once (grace 0): the agent in it dies mid-run.
    fn kill(&self, name: &str) {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.name);
        let dp = DeleteParams {
            grace_period_seconds: Some(0),
            ..DeleteParams::default()
        };
        self.rt.block_on(pods.delete(name, &dp)).unwrap();
    }
}

impl Drop for Space {
    fn drop(&mut self) {
        let spaces: Api<Namespace> = Api::all(self.client.clone());
        let _ = self
            .rt
            .block_on(spaces.delete(&self.name, &DeleteParams::background()));
    }
}

/// `perfbase k8s PLAN --agents 3 … --apply --follow` in `space`, as a child process.
fn k8s_follow(
    kubeconfig: &str,
    store: &str,
    space: &Space,
    plan: &std::path::Path,
    run_id: &str,
) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("perfbase"));
    cmd.arg("k8s")
        .arg(plan)
        .args(["--agents", "3", "--image", image()])
        .args([
            "--store-secret",
            "perfbase-store",
            "--namespace",
            &space.name,
        ])
        .args(["--run-id", run_id, "--host-network", "--cpu", "250m"])
        .args(["--memory", "256Mi", "--deadline", "10m"])
        .args(["--merge-job", "--apply", "--follow"])
        .env("KUBECONFIG", kubeconfig)
        .env("PERFBASE_STORE", store)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// The results saved under `label`=`id`, oldest first.
fn saved(store: &str, label: &str, id: &str) -> Vec<RunResult> {
    let mut s = perfbase_store::Store::open(store).unwrap();
    let found = s
        .history(&[(label.to_string(), id.to_string())], 0)
        .unwrap();
    found
        .iter()
        .rev()
        .map(|r| s.get(&perfbase_store::RunRef::Id(r.id)).unwrap().result)
        .collect()
}

/// Waits (up to 3 minutes) until all three agents of `run` beat in the store; if they do
/// not, the panic names what the pods and the node say.
fn all_beating(store: &str, run: &str, space: &Space) {
    let mut s = perfbase_store::Store::open(store).unwrap();
    let deadline = Instant::now() + Duration::from_secs(180);
    while s.heartbeats(run).unwrap().len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the 3 agents of {run} never beat:\n{}",
            space.describe()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn output(child: std::process::Child) -> (i32, String, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Three agent pods, each with its own JOB_COMPLETION_INDEX, meet at the barrier and load a
/// 9:1 mix; the merge Job saves exactly one machine's counts, judged by the plan; `--follow`
/// prints it; the service's own counter agrees.
#[test]
fn three_agent_pods_on_a_real_node_merge_to_exact_counts() {
    let Some((kubeconfig, store)) = node() else {
        return;
    };
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = dir.path().join("mix.toml");
    std::fs::write(
        &plan,
        format!(
            "[plan]\nname = \"node mix\"\n[targets.api]\nurl = \"http://{}\"\n\
             [workloads.w]\ntarget = \"api\"\n\
             [[workloads.w.mix]]\npath = \"/\"\nweight = 9\n\
             [[workloads.w.mix]]\npath = \"/status/500\"\nweight = 1\n\
             [[scenarios]]\nname = \"mix\"\nworkload = \"w\"\nconcurrency = 6\nrequests = 3000\n\
             thresholds = [\"error_rate < 11%\"]\n\
             [[checks]]\nname = \"the mix\"\nworkload = \"w\"\nrequests = 30\n\
             expect = {{ 200 = 27, 500 = 3 }}\n",
            server.addr
        ),
    )
    .unwrap();
    let space = Space::new(&kubeconfig, &store, "mix");
    let run_id = format!("node-mix-{}", std::process::id());
    let started = Instant::now();
    let child = k8s_follow(&kubeconfig, &store, &space, &plan, &run_id)
        .spawn()
        .unwrap();
    let (code, stdout, stderr) = output(child);
    assert_eq!(code, 0, "{stdout}{stderr}{}", space.describe());
    eprintln!(
        "the run on the node took {:?}:\n{stderr}",
        started.elapsed()
    );
    let name = "perfbase-node-mix";
    for i in 0..3 {
        assert!(
            stderr.contains(&format!("(index {i}): Succeeded on perfbase-node")),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains(&format!("job.batch/{name}-merge: complete")),
        "{stderr}"
    );
    assert!(stdout.contains("perfbase study node mix"), "{stdout}");

    let agents = saved(&store, "agent-run", &run_id);
    let mut segments: Vec<_> = agents.iter().map(|r| r.segment.clone().unwrap()).collect();
    segments.sort();
    assert_eq!(segments, ["0/3", "1/3", "2/3"]);
    for a in &agents {
        // Each met the others at the store's barrier, and says where it ran, on how much.
        assert!(a.clock_offset_ms.is_some(), "{:?}", a.segment);
        assert_eq!(a.env.node.as_deref(), Some("perfbase-node"));
        // On the host's network a pod shares its node's host name: this machine's.
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(a.env.hostname, host.trim());
        // The CPUs it could use: its 250m limit reads as one (the machine has more).
        assert_eq!(a.env.cores, 1);
    }
    let merged = saved(&store, "merged-run", &run_id);
    assert_eq!(merged.len(), 1);
    let m = &merged[0];
    assert!(!m.interrupted && m.lost_segments.is_empty());
    let mix = m
        .phases
        .iter()
        .find(|p| p.scenario.as_deref() == Some("mix"))
        .unwrap();
    assert_eq!(mix.measurement.requests, 3000);
    assert_eq!(mix.measurement.status.get("200"), Some(&2700));
    assert_eq!(mix.measurement.status.get("500"), Some(&300));
    // The whole load, which every agent records (its share is a third of it).
    assert_eq!(mix.offered_connections, Some(6));
    assert_eq!(m.config.connections, Some(6));
    // Judged on the merged run: the check's 30 requests over three agents.
    let study = m.study.as_ref().expect("judged by the plan");
    assert!(study.passed, "{stdout}");
    assert!(stdout.contains("the mix"), "{stdout}");
    // Where each agent ran, as the merged run tells it.
    assert!(stdout.contains("Agents: 0/3 on perfbase-node"), "{stdout}");

    assert_eq!(server.stats.requests(), 3030);
}

/// A plan of two 6-second steps at 60/s and 90/s, for the tests that stop or kill agents mid-run.
fn two_steps(dir: &std::path::Path, addr: std::net::SocketAddr) -> std::path::PathBuf {
    let plan = dir.join("steps.toml");
    std::fs::write(
        &plan,
        format!(
            "[plan]\nname = \"node steps\"\n[targets.api]\nurl = \"http://{addr}\"\n\
             [workloads.w]\ntarget = \"api\"\npath = \"/\"\n\
             [[scenarios]]\nname = \"steps\"\nworkload = \"w\"\nrate = [60, 90]\n\
             duration = \"6s\"\n"
        ),
    )
    .unwrap();
    plan
}

/// A two-step run of three agent pods under way: all of them beating in the store, 2 s
/// into the first step (after the barrier's 2 s); None without the node.
struct MidRun {
    _lock: std::sync::MutexGuard<'static, ()>,
    _server: perfbase_reference::Background,
    _dir: tempfile::TempDir,
    store: String,
    run_id: String,
    space: Space,
    child: std::process::Child,
}

impl MidRun {
    fn start(tag: &str) -> Option<MidRun> {
        let (kubeconfig, store) = node()?;
        let lock = serial();
        let server = perfbase_reference::spawn(0).unwrap();
        let dir = tmp();
        let plan = two_steps(dir.path(), server.addr);
        let space = Space::new(&kubeconfig, &store, tag);
        let run_id = format!("node-{tag}-{}", std::process::id());
        let child = k8s_follow(&kubeconfig, &store, &space, &plan, &run_id)
            .spawn()
            .unwrap();
        all_beating(&store, &run_id, &space);
        std::thread::sleep(Duration::from_secs(4));
        Some(MidRun {
            _lock: lock,
            _server: server,
            _dir: dir,
            store,
            run_id,
            space,
            child,
        })
    }
}

/// A pod deleted with grace 0 in the first step: the merge Job still merges, and the merged
/// run is partial, names the segment, and marks the steps without it invalid.
#[test]
fn a_pod_killed_mid_run_leaves_a_partial_merged_run_that_names_it() {
    let Some(run) = MidRun::start("kill") else {
        return;
    };
    let MidRun {
        store,
        run_id,
        space,
        child,
        ..
    } = run;
    let pods = space.pods("perfbase-node-steps");
    let (_, victim) = pods
        .iter()
        .find(|(i, _)| i == "1")
        .expect("the pod of index 1");
    space.kill(victim.metadata.name.as_deref().unwrap());
    let (code, stdout, stderr) = output(child);
    assert_eq!(code, 130, "{stdout}{stderr}");
    assert!(stdout.contains("INTERRUPTED"), "{stdout}");
    let merged = saved(&store, "merged-run", &run_id);
    assert_eq!(merged.len(), 1, "{stderr}");
    let m = &merged[0];
    assert!(m.interrupted);
    // The kubelet stops a pod deleted with grace 0 with SIGTERM: the agent saved what it had
    // measured, and the step it did not run names segment 1/3.
    let second = &m.phases.last().unwrap();
    assert_eq!(second.missing_segments, ["1/3"], "{stderr}");
    assert!(m.lost_segments.is_empty());
    // Its index failed, the others' did not (a failed index does not fail the Job at once,
    // which would stop the others mid-run: backoffLimitPerIndex).
    assert!(
        stderr.contains("(index 0): Succeeded on perfbase-node"),
        "{stderr}"
    );
    assert!(
        stderr.contains("(index 2): Succeeded on perfbase-node"),
        "{stderr}"
    );
    assert!(
        stderr.contains("job.batch/perfbase-node-steps: failed"),
        "{stderr}"
    );
    // The store says so, for `perfbase history` to show.
    let marked = saved(&store, "interrupted-segments", "1/3");
    assert!(
        marked.iter().any(|r| r.started_at == m.started_at),
        "{stderr}"
    );
}

/// The agent process of index `index` of run `run` on this machine (the node's containers
/// are this machine's processes).
fn agent_pid(run: &str, index: &str) -> Option<i32> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let has =
            |hay: &[u8], needle: &str| hay.split(|b| *b == 0).any(|part| part == needle.as_bytes());
        if has(&cmdline, "agent")
            && has(&cmdline, run)
            && has(&environ, &format!("JOB_COMPLETION_INDEX={index}"))
        {
            return Some(pid);
        }
    }
    None
}

/// An agent killed outright in its pod (SIGKILL, as the OOM killer would): it saves nothing,
/// its heartbeat stops, and the merge Job, after --lost-after, merges the other two into a
/// partial run that names the lost segment and is saved labelled so.
#[test]
fn an_agent_killed_outright_in_its_pod_is_lost_and_named() {
    let Some(run) = MidRun::start("lost") else {
        return;
    };
    let MidRun {
        store,
        run_id,
        space: _space,
        child,
        ..
    } = run;
    let pid = agent_pid(&run_id, "1").expect("the agent of index 1 among this machine's processes");
    // SAFETY: a signal to the agent of the test's own pod.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let (code, stdout, stderr) = output(child);
    assert_eq!(code, 130, "{stdout}{stderr}");
    assert!(stdout.contains("LOST AGENTS: segment 1/3"), "{stdout}");
    let merged = saved(&store, "merged-run", &run_id);
    let m = &merged[0];
    assert_eq!(m.lost_segments, ["1/3"]);
    for p in &m.phases {
        assert_eq!(p.missing_segments, ["1/3"], "{}", p.name);
    }
    let marked = saved(&store, "lost-segments", "1/3");
    assert!(marked.iter().any(|r| r.started_at == m.started_at));
}

/// Ctrl-C of `perfbase k8s --apply --follow` stops every agent, through the store, within
/// 2 s; each agent's result and the merged run say why.
#[test]
fn ctrl_c_of_follow_stops_every_agent_within_two_seconds() {
    let Some(run) = MidRun::start("stop") else {
        return;
    };
    let MidRun {
        store,
        run_id,
        space: _space,
        child,
        ..
    } = run;
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let (code, stdout, stderr) = output(child);
    assert_eq!(code, 130, "{stdout}{stderr}");
    assert!(stderr.contains("asked every agent of run"), "{stderr}");
    let (reason, at_ms) = perfbase_store::Store::open(&store)
        .unwrap()
        .stop_request(&run_id)
        .unwrap()
        .unwrap();
    assert_eq!(reason, "Ctrl-C of perfbase k8s --follow");
    let agents = saved(&store, "agent-run", &run_id);
    assert_eq!(agents.len(), 3, "{stderr}");
    for a in &agents {
        assert!(a.interrupted);
        assert_eq!(
            a.stop_reason.as_deref(),
            Some("stopped through the store: Ctrl-C of perfbase k8s --follow")
        );
    }
    // Each agent beats every 250 ms until its process exits: its last beat is when it had
    // stopped, saved its partial result and gone.
    let gone = crate::agents_stop::gone_after(&store, &run_id, at_ms);
    assert_eq!(gone.len(), 3);
    for (segment, late) in gone {
        eprintln!("agent {segment} was gone {late} ms after the stop request");
        // Beats are 250 ms apart: it had exited by its last beat's next.
        assert!(
            late + 250 < 2000,
            "agent {segment} was gone {late} ms after the request"
        );
    }
    let merged = saved(&store, "merged-run", &run_id);
    assert!(merged[0].interrupted);
    assert!(
        stdout.contains("Stopped: stopped through the store"),
        "{stdout}"
    );
}
