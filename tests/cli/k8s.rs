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
            "--save"
        ]
        .map(String::from)
    );
    assert_eq!(mc.env.clone().unwrap()[0].name, "PERFBASE_STORE");
    assert!(mc.env.clone().unwrap()[0].value.is_none());
    assert!(mpod.volumes.is_none());
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
    assert_eq!(spec.backoff_limit, Some(0));
    let pod = spec.template.spec.unwrap();
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
