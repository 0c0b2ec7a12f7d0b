//! `perfbase k8s`: the manifests, parsed back into k8s-openapi's types.

use crate::common::*;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Container, PodSpec};
use serde::Deserialize;

#[test]
fn the_manifests_run_n_agents_of_the_plan_and_hold_no_secret() {
    let dir = tmp();
    let plan = dir.path().join("api-sweep.toml");
    let text = "[plan]\nname = \"API sweep\"\n[targets.api]\nurl = \"${API_URL}\"\n\
                [workloads.w]\ntarget = \"api\"\npath = \"/\"\n[[scenarios]]\nname = \"s\"\n\
                workload = \"w\"\nrate = [100, 200]\nduration = \"10s\"\n";
    std::fs::write(&plan, text).unwrap();
    let (code, yaml, stderr) = pb(
        dir.path(),
        &[
            "k8s",
            plan.to_str().unwrap(),
            "--agents",
            "4",
            "--image",
            "registry.example/perfbase:0.1.0",
            "--store-secret",
            "perfbase-store",
            "--namespace",
            "load",
            "--start-at",
            "2026-12-01T10:00:00Z",
            "--run-id",
            "sweep-7",
            "--merge-job",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let mut docs = serde_yaml_ng::Deserializer::from_str(&yaml);
    let config = ConfigMap::deserialize(docs.next().unwrap()).expect("a ConfigMap");
    let job = Job::deserialize(docs.next().unwrap()).expect("a Job");
    let merge = Job::deserialize(docs.next().unwrap()).expect("the merge Job");
    assert!(docs.next().is_none());
    // The merge Job waits in the store for the 4 agents' results under the run id.
    assert_eq!(
        merge.metadata.name.as_deref(),
        Some("perfbase-api-sweep-merge")
    );
    let mspec = merge.spec.unwrap();
    assert_eq!(mspec.completion_mode, None);
    let mpod = mspec.template.spec.unwrap();
    let mc = &mpod.containers[0];
    assert_eq!(
        mc.args.clone().unwrap(),
        [
            "merge",
            "--run-id",
            "sweep-7",
            "--wait-for",
            "4",
            "--wait-timeout",
            "6h",
            "--save",
            "--plan",
            "/etc/perfbase/api-sweep.toml"
        ]
        .map(String::from)
    );
    assert_eq!(mc.env.clone().unwrap()[0].name, "PERFBASE_STORE");
    assert!(mc.env.clone().unwrap()[0].value.is_none());
    // The merge judges the plan's thresholds and checks: it mounts the plan too.
    assert_eq!(
        mpod.volumes.clone().unwrap()[0]
            .config_map
            .as_ref()
            .unwrap()
            .name,
        "perfbase-api-sweep"
    );
    assert_eq!(mpod.automount_service_account_token, Some(false));
    assert_eq!(mpod.host_network, None);
    assert!(
        yaml.contains("kind: ConfigMap") && yaml.contains("kind: Job"),
        "{yaml}"
    );

    assert_eq!(config.metadata.name.as_deref(), Some("perfbase-api-sweep"));
    assert_eq!(config.metadata.namespace.as_deref(), Some("load"));
    assert_eq!(config.data.unwrap()["api-sweep.toml"], text);

    let spec = job.spec.unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!((spec.completions, spec.parallelism), (Some(4), Some(4)));
    // One failed agent fails its own index only, and is not retried.
    assert_eq!(spec.backoff_limit, None);
    assert_eq!(spec.backoff_limit_per_index, Some(0));
    let pod = spec.template.spec.unwrap();
    assert_eq!(pod.automount_service_account_token, Some(false));
    assert_eq!((pod.host_network, pod.dns_policy.as_deref()), (None, None));
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
    let c = &pod.containers[0];
    assert_eq!(c.image.as_deref(), Some("registry.example/perfbase:0.1.0"));
    let args = c.args.clone().unwrap();
    assert_eq!(
        args[..6],
        [
            "agent",
            "/etc/perfbase/api-sweep.toml",
            "--segments",
            "4",
            "--run-id",
            "sweep-7"
        ]
        .map(String::from)
    );
    assert!(
        args.windows(2)
            .any(|w| w == ["--start-at", "2026-12-01T10:00:00Z"]),
        "{args:?}"
    );
    assert!(!args.contains(&"--barrier".to_string()), "{args:?}");
    // The store comes from the Secret, by reference.
    let env = &c.env.clone().unwrap()[0];
    assert_eq!(env.name, "PERFBASE_STORE");
    assert!(env.value.is_none());
    let secret = env.value_from.clone().unwrap().secret_key_ref.unwrap();
    assert_eq!(
        (secret.name.as_str(), secret.key.as_str()),
        ("perfbase-store", "url")
    );
    let volume = &pod.volumes.unwrap()[0];
    assert_eq!(
        volume.config_map.as_ref().unwrap().name,
        "perfbase-api-sweep"
    );
    assert_eq!(
        c.volume_mounts.clone().unwrap()[0].mount_path,
        "/etc/perfbase"
    );

    // A password in the plan would leak through the ConfigMap: refused, and not printed.
    std::fs::write(
        &plan,
        text.replace("${API_URL}", "http://admin:hunter2@10.0.0.1"),
    )
    .unwrap();
    let (code, out, stderr) = pb(
        dir.path(),
        &[
            "k8s",
            plan.to_str().unwrap(),
            "--agents",
            "2",
            "--image",
            "i",
            "--store-secret",
            "s",
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("holds a credential written out"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2") && !out.contains("hunter2"));
}

/// `--host-network` puts every pod on its node's network (127.0.0.1 is the node's), with the
/// cluster's DNS still first; --follow needs --apply and --merge-job.
#[test]
fn host_network_pods_and_follow_needs_apply() {
    let dir = tmp();
    let plan = dir.path().join("p.toml");
    std::fs::write(
        &plan,
        "[targets.api]\nurl = \"http://127.0.0.1:8080\"\n[workloads.w]\ntarget = \"api\"\n\
         path = \"/\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 10\n\
         duration = \"5s\"\n",
    )
    .unwrap();
    let base = [
        "k8s",
        plan.to_str().unwrap(),
        "--agents",
        "2",
        "--image",
        "perfbase:1",
        "--store-secret",
        "s",
        "--merge-job",
    ];
    let (code, yaml, stderr) = pb(dir.path(), &[&base[..], &["--host-network"]].concat());
    assert_eq!(code, 0, "{stderr}");
    let docs: Vec<Job> = serde_yaml_ng::Deserializer::from_str(&yaml)
        .skip(1)
        .map(|d| Job::deserialize(d).unwrap())
        .collect();
    assert_eq!(docs.len(), 2);
    for job in docs {
        let pod = job.spec.unwrap().template.spec.unwrap();
        assert_eq!(pod.host_network, Some(true));
        assert_eq!(pod.dns_policy.as_deref(), Some("ClusterFirstWithHostNet"));
    }
    let (code, _, stderr) = pb(dir.path(), &[&base[..], &["--follow"]].concat());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--apply"), "{stderr}");
}

/// A plan whose length is known here (no ${VARS}): two 10 s steps.
const SWEEP: &str = "[plan]\nname = \"sweep\"\n[targets.api]\nurl = \"http://10.0.0.7:8080\"\n\
                     [workloads.w]\ntarget = \"api\"\npath = \"/\"\n[[scenarios]]\nname = \"s\"\n\
                     workload = \"w\"\nrate = [100, 200]\nduration = \"10s\"\n";

/// `perfbase k8s PLAN --agents 3 … --run-id r-1 --merge-job EXTRA`, its objects parsed back:
/// the ConfigMap, the agents' Job, the merge Job, and what it said on stderr.
fn render(plan: &std::path::Path, extra: &[&str]) -> (ConfigMap, Job, Job, String) {
    let plan = plan.to_str().unwrap();
    let mut args = vec!["k8s", plan, "--agents", "3", "--image", "perfbase:1"];
    args.extend(["--store-secret", "s", "--run-id", "r-1", "--merge-job"]);
    args.extend_from_slice(extra);
    let dir = tmp();
    let (code, yaml, stderr) = pb(dir.path(), &args);
    assert_eq!(code, 0, "{stderr}");
    // The store's URL (PERFBASE_STORE is set for the command) never enters a manifest.
    assert!(!yaml.contains("results.db"), "{yaml}");
    let mut docs = serde_yaml_ng::Deserializer::from_str(&yaml);
    let config = ConfigMap::deserialize(docs.next().unwrap()).unwrap();
    let agents = Job::deserialize(docs.next().unwrap()).unwrap();
    let merge = Job::deserialize(docs.next().unwrap()).unwrap();
    assert!(docs.next().is_none());
    (config, agents, merge, stderr)
}

type Labels = Option<std::collections::BTreeMap<String, String>>;

/// The labels every object and pod template of run r-1 carries, `kubectl get -l` style.
fn assert_labels(labels: &Labels, component: &str) {
    let labels = labels.as_ref().expect("labels");
    for (k, v) in [
        ("app.kubernetes.io/name", "perfbase"),
        ("app.kubernetes.io/instance", "perfbase-sweep"),
        ("app.kubernetes.io/component", component),
        ("perfbase/plan", "sweep"),
        ("perfbase/run-id", "r-1"),
    ] {
        assert_eq!(
            labels.get(k).map(String::as_str),
            Some(v),
            "{k} of {labels:?}"
        );
    }
}

/// The pod spec of a Job, and its one container.
fn pod_of(job: &Job) -> (PodSpec, Container) {
    let pod = job.spec.clone().unwrap().template.spec.unwrap();
    let c = pod.containers[0].clone();
    (pod, c)
}

/// A container's requests, which must be its limits (Guaranteed QoS): (cpu, memory).
fn guaranteed(c: &Container) -> (String, String) {
    let r = c.resources.clone().unwrap();
    assert_eq!(r.requests, r.limits, "requests are the limits");
    let q = r.limits.unwrap();
    (q["cpu"].0.clone(), q["memory"].0.clone())
}

/// The rules production clusters want, on every object: labels that select, Guaranteed
/// resources, agents spread softly across nodes by this run's labels, no service-account
/// token, each agent told its node's name, the merge mounting and judging the plan.
#[test]
fn the_manifests_follow_production_rules() {
    let dir = tmp();
    let plan = dir.path().join("sweep.toml");
    std::fs::write(&plan, SWEEP).unwrap();
    let (config, agents, merge, _) = render(&plan, &[]);
    assert_labels(&config.metadata.labels, "plan");
    for (job, role) in [(&agents, "agent"), (&merge, "merge")] {
        assert_labels(&job.metadata.labels, role);
        assert_labels(
            &job.spec.clone().unwrap().template.metadata.unwrap().labels,
            role,
        );
        let (pod, c) = pod_of(job);
        assert_eq!(pod.automount_service_account_token, Some(false), "{role}");
        assert_eq!((pod.host_network, pod.dns_policy), (None, None), "{role}");
        assert_eq!(
            job.spec.clone().unwrap().ttl_seconds_after_finished,
            Some(86_400)
        );
        // The store by reference to its Secret only.
        let store = &c.env.clone().unwrap()[0];
        assert_eq!(
            (store.name.as_str(), store.value.as_ref()),
            ("PERFBASE_STORE", None)
        );
        assert_eq!(
            store
                .value_from
                .clone()
                .unwrap()
                .secret_key_ref
                .unwrap()
                .name,
            "s"
        );
        // The plan mounted from the ConfigMap.
        assert_eq!(
            pod.volumes.unwrap()[0].config_map.clone().unwrap().name,
            "perfbase-sweep"
        );
        assert_eq!(c.volume_mounts.unwrap()[0].mount_path, "/etc/perfbase");
    }
    let (pod, c) = pod_of(&agents);
    assert_eq!(guaranteed(&c), ("1".into(), "1Gi".into()));
    let spread = pod.topology_spread_constraints.unwrap();
    assert_eq!(spread.len(), 1);
    assert_eq!(spread[0].topology_key, "kubernetes.io/hostname");
    assert_eq!(spread[0].when_unsatisfiable, "ScheduleAnyway");
    assert_eq!(spread[0].max_skew, 1);
    // The agents of this run only, not another run's of the same plan.
    let selects = spread[0].label_selector.clone().unwrap().match_labels;
    assert_labels(&selects, "agent");
    let node = &c.env.clone().unwrap()[1];
    assert_eq!(node.name, "PERFBASE_NODE_NAME");
    let field = node.value_from.clone().unwrap().field_ref.unwrap();
    assert_eq!(field.field_path, "spec.nodeName");
    let (pod, c) = pod_of(&merge);
    assert_eq!(guaranteed(&c), ("250m".into(), "256Mi".into()));
    assert!(pod.topology_spread_constraints.is_none());
    assert_eq!(c.env.unwrap().len(), 1, "no node name for the merge");
    let args = c.args.unwrap();
    assert!(
        args.windows(2)
            .any(|w| w == ["--plan", "/etc/perfbase/sweep.toml"]),
        "{args:?}"
    );
}

/// Each rule has its flag: no spread, the agents' resources, another TTL (the merge pod keeps
/// its own small resources).
#[test]
fn the_rules_flags_change_them() {
    let dir = tmp();
    let plan = dir.path().join("sweep.toml");
    std::fs::write(&plan, SWEEP).unwrap();
    let (_, agents, merge, _) = render(
        &plan,
        &[
            "--no-spread",
            "--cpu",
            "2.5",
            "--memory",
            "512Mi",
            "--ttl",
            "10m",
        ],
    );
    let (pod, c) = pod_of(&agents);
    assert!(pod.topology_spread_constraints.is_none());
    assert_eq!(guaranteed(&c), ("2.5".into(), "512Mi".into()));
    assert_eq!(
        guaranteed(&pod_of(&merge).1),
        ("250m".into(), "256Mi".into())
    );
    for job in [&agents, &merge] {
        assert_eq!(
            job.spec.clone().unwrap().ttl_seconds_after_finished,
            Some(600)
        );
    }
}

/// The run id goes into labels: the default one (NAME-YYYYMMDD-HHMMSS) stays a label value
/// of at most 63 characters even for the longest name.
#[test]
fn a_default_run_id_stays_a_label_value() {
    let dir = tmp();
    let plan = dir.path().join("sweep.toml");
    std::fs::write(&plan, SWEEP).unwrap();
    let name = format!("{}-b", "a".repeat(55));
    let plan = plan.to_str().unwrap();
    let args = [
        "k8s",
        plan,
        "--agents",
        "2",
        "--image",
        "i",
        "--store-secret",
        "s",
    ];
    let (code, yaml, stderr) = pb(dir.path(), &[&args[..], &["--name", &name]].concat());
    assert_eq!(code, 0, "{stderr}");
    let job = serde_yaml_ng::Deserializer::from_str(&yaml)
        .nth(1)
        .map(|d| Job::deserialize(d).unwrap())
        .unwrap();
    let id = job.metadata.labels.clone().unwrap()["perfbase/run-id"].clone();
    assert_eq!(id.len(), 63, "{id}");
    assert!(
        id.starts_with(&name[..47]) && id.as_bytes()[47] == b'-',
        "{id}"
    );
    let args = pod_of(&job).1.args.unwrap();
    assert!(
        args.windows(2).any(|w| w == ["--run-id", id.as_str()]),
        "{args:?}"
    );
}

/// activeDeadlineSeconds: from the plan's length when it loads here, 6 h when its ${VARS} are
/// the pods' to set, --deadline over both; the merge waits as long as the agents may run and
/// has 5 min more to merge; stderr says which deadline and why.
#[test]
fn the_jobs_deadline_comes_from_the_plan_or_deadline() {
    let dir = tmp();
    let plan = dir.path().join("sweep.toml");
    std::fs::write(&plan, SWEEP).unwrap();
    let deadlines = |extra: &[&str]| {
        let (_, agents, merge, stderr) = render(&plan, extra);
        let secs = |j: &Job| j.spec.clone().unwrap().active_deadline_seconds.unwrap();
        let args = pod_of(&merge).1.args.unwrap();
        let wait = args[args.iter().position(|a| a == "--wait-timeout").unwrap() + 1].clone();
        (secs(&agents), secs(&merge), wait, stderr)
    };
    // 20 s of load: 600 s of barrier + 20 × 1.2 + 300.
    let (agents, merge, wait, stderr) = deadlines(&[]);
    assert_eq!((agents, merge, wait.as_str()), (924, 1224, "15m24s"));
    assert!(
        stderr.contains("deadline (activeDeadlineSeconds) is 15m24s: the plan's 20s of load"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let (agents, merge, wait, stderr) = deadlines(&["--deadline", "2h"]);
    assert_eq!((agents, merge, wait.as_str()), (7200, 7500, "2h"));
    assert!(stderr.contains("is 2h: --deadline"), "{stderr}");

    // The URL is the pods' to set: the plan does not load here.
    std::fs::write(&plan, SWEEP.replace("http://10.0.0.7:8080", "${API_URL}")).unwrap();
    let (agents, merge, wait, stderr) = deadlines(&[]);
    assert_eq!((agents, merge, wait.as_str()), (21_600, 21_900, "6h"));
    assert!(
        stderr.contains("is 6h: the plan's length is not known here")
            && stderr.contains("--deadline"),
        "{stderr}"
    );
    let (agents, _, wait, _) = deadlines(&["--deadline", "90m"]);
    assert_eq!((agents, wait.as_str()), (5400, "1h30m"));
    let plan = plan.to_str().unwrap();
    let args = [
        "k8s",
        plan,
        "--agents",
        "2",
        "--image",
        "i",
        "--store-secret",
        "s",
    ];
    let (code, _, stderr) = pb(dir.path(), &[&args[..], &["--deadline", "0"]].concat());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--deadline '0s'"), "{stderr}");
}

/// --cpu and --memory are Kubernetes quantities; anything else is exit 2 naming the flag,
/// before any manifest is written.
#[test]
fn bad_quantities_are_refused_naming_the_flag() {
    let dir = tmp();
    let plan = dir.path().join("sweep.toml");
    std::fs::write(&plan, SWEEP).unwrap();
    for (flag, bad) in [
        ("--cpu", "two"),
        ("--cpu", "0"),
        ("--cpu", "-1"),
        ("--cpu", ""),
        ("--cpu", "1 "),
        ("--cpu", "2cores"),
        ("--memory", "1GB"),
        ("--memory", "1 Gi"),
        ("--memory", "512mb"),
        ("--memory", "-1Gi"),
        ("--memory", "512m"),
        ("--cpu", "1Gi"),
    ] {
        let (code, out, stderr) = pb(
            dir.path(),
            &[
                "k8s",
                plan.to_str().unwrap(),
                "--agents",
                "2",
                "--image",
                "i",
                "--store-secret",
                "s",
                &format!("{flag}={bad}"),
            ],
        );
        assert_eq!(code, 2, "{flag} {bad}: {stderr}");
        assert!(
            stderr.contains(&format!("{flag} '{bad}': give")),
            "{stderr}"
        );
        assert!(stderr.contains("Kubernetes quantity"), "{stderr}");
        assert!(out.is_empty());
    }
    // Well formed but out of any node's reach, or too short to meet at the barrier (issue 47).
    for (flag, bad, says) in [
        ("--cpu", "1000000", "from 50m to 512 cores"),
        ("--cpu", "10m", "from 50m to 512 cores"),
        ("--memory", "1Ei", "from 64Mi to 16Ti"),
        ("--memory", "1Mi", "from 64Mi to 16Ti"),
        ("--deadline", "1ms", "at least 1 min"),
    ] {
        let args = [
            "k8s",
            plan.to_str().unwrap(),
            "--agents",
            "2",
            "--image",
            "i",
        ];
        let flag_arg = format!("{flag}={bad}");
        let (code, out, stderr) = pb(
            dir.path(),
            &[&args[..], &["--store-secret", "s", &flag_arg]].concat(),
        );
        assert_eq!(code, 2, "{flag} {bad}: {stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(out.is_empty());
    }
}

/// `--apply` against a real Kubernetes API server (scripts/services.sh's `kubernetes`:
/// its image is not pulled, so its pods never start; k8s_node.rs runs real ones): the objects are applied server-side,
/// read back as the API server stored them, and applied again without change; without a
/// cluster to reach, the error says how to give one.
#[test]
fn apply_puts_the_objects_in_a_real_api_server() {
    let Some(kubeconfig) = service("PERFBASE_KUBECONFIG") else {
        return;
    };
    let dir = tmp();
    let plan = dir.path().join("api.toml");
    std::fs::write(
        &plan,
        "[plan]\nname = \"api\"\n[targets.api]\nurl = \"${API_URL}\"\n[workloads.w]\n\
         target = \"api\"\npath = \"/\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\n\
         rate = 100\nduration = \"10s\"\n",
    )
    .unwrap();
    let name = format!("perfbase-apply-{}", std::process::id());
    let apply = |config: &str| {
        let out = assert_cmd::Command::cargo_bin("perfbase")
            .unwrap()
            .args(["k8s", plan.to_str().unwrap(), "--agents", "3"])
            .args(["--image", "registry.example/perfbase:0.1.0"])
            .args(["--store-secret", "perfbase-store", "--name", &name])
            .args(["--run-id", "apply-1", "--merge-job", "--apply"])
            .env("KUBECONFIG", config)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let (code, text) = apply(&kubeconfig);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(&format!("configmap/{name} applied in default")),
        "{text}"
    );
    assert!(
        text.contains(&format!("job.batch/{name} applied in default")),
        "{text}"
    );
    assert!(
        text.contains(&format!("job.batch/{name}-merge applied in default")),
        "{text}"
    );

    // Read back from the API server, as it stored them.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = || async {
        let file = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
        let options = kube::config::KubeConfigOptions::default();
        let config = kube::Config::from_custom_kubeconfig(file, &options)
            .await
            .unwrap();
        kube::Client::try_from(config).unwrap()
    };
    let (job, merge, map) = rt.block_on(async {
        let client = client().await;
        let jobs: kube::Api<Job> = kube::Api::namespaced(client.clone(), "default");
        let maps: kube::Api<ConfigMap> = kube::Api::namespaced(client, "default");
        (
            jobs.get(&name).await.unwrap(),
            jobs.get(&format!("{name}-merge")).await.unwrap(),
            maps.get(&name).await.unwrap(),
        )
    });
    let spec = job.spec.unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!((spec.completions, spec.parallelism), (Some(3), Some(3)));
    let c = &spec.template.spec.unwrap().containers[0];
    assert_eq!(
        c.args.clone().unwrap()[..6],
        [
            "agent",
            "/etc/perfbase/api.toml",
            "--segments",
            "3",
            "--run-id",
            "apply-1"
        ]
        .map(String::from)
    );
    let env = &c.env.clone().unwrap()[0];
    assert_eq!(env.name, "PERFBASE_STORE");
    assert!(env.value.is_none());
    assert_eq!(
        env.value_from.clone().unwrap().secret_key_ref.unwrap().name,
        "perfbase-store"
    );
    assert_eq!(
        merge.spec.unwrap().template.spec.unwrap().containers[0]
            .args
            .clone()
            .unwrap()[..3],
        ["merge", "--run-id", "apply-1"].map(String::from)
    );
    // No --start-at: the agents meet at the store's barrier.
    assert!(c.args.clone().unwrap().contains(&"--barrier".to_string()));
    assert!(map.data.unwrap()["api.toml"].contains("${API_URL}"));
    // Applied again, unchanged: still fine (server-side apply).
    let (code, text) = apply(&kubeconfig);
    assert_eq!(code, 0, "{text}");
    rt.block_on(async {
        let client = client().await;
        let jobs: kube::Api<Job> = kube::Api::namespaced(client.clone(), "default");
        let maps: kube::Api<ConfigMap> = kube::Api::namespaced(client, "default");
        let dp = kube::api::DeleteParams::background();
        for n in [name.clone(), format!("{name}-merge")] {
            let _ = jobs.delete(&n, &dp).await;
        }
        let _ = maps.delete(&name, &dp).await;
    });

    let (code, text) = apply(dir.path().join("no-such-kubeconfig").to_str().unwrap());
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("--apply: no cluster to reach"), "{text}");
}
