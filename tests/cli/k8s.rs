//! `perfbase k8s`: the manifests, parsed back into k8s-openapi's types.

use crate::common::*;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
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
    assert!(stderr.contains("holds a password"), "{stderr}");
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
