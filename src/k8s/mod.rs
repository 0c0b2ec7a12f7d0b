//! `perfbase k8s PLAN --agents N --image IMAGE --store-secret NAME`: the Kubernetes objects
//! that run a plan as N agents, each one segment of its schedule: a ConfigMap holding the
//! plan, and an Indexed Job (`completionMode: Indexed`, parallelism = completions = N) whose
//! pods run `perfbase agent PLAN --segments N --run-id ID`, each taking its segment from
//! JOB_COMPLETION_INDEX and saving its result in the shared store under the run's id; with
//! `--merge-job`, a Job that waits there for the N results and merges them. Built from k8s-openapi's
//! typed structs, so they are valid by construction, and written as YAML for
//! `kubectl apply -f -`. The store's URL (with its password) never enters a manifest: the
//! pods read it from a Secret the user made.

mod follow;
mod names;

use crate::cli::K8sArgs;
use crate::exit::{bad_input, AppError, Exit};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapVolumeSource, Container, EnvVar, EnvVarSource, PodSpec, PodTemplateSpec,
    SecretKeySelector, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// Where the plan is mounted in each pod.
const PLAN_DIR: &str = "/etc/perfbase";

/// A name Kubernetes accepts (RFC 1123 label): lower-case letters, digits and `-`.
fn dns_name(text: &str) -> String {
    let mut name = crate::plan::slug(text);
    name.truncate(40);
    let name = name.trim_matches('-').to_string();
    if name.is_empty() {
        "plan".into()
    } else {
        name
    }
}

pub fn k8s(a: K8sArgs) -> Result<Exit, AppError> {
    let text = std::fs::read_to_string(&a.plan)
        .map_err(|e| bad_input(format!("{}: cannot read the plan: {e}", a.plan.display())))?;
    // Broken TOML fails here, not in N pods. The plan is not loaded whole: its ${VARS} are
    // the pods' to set, not this machine's.
    let doc: toml::Table = text
        .parse()
        .map_err(|e| bad_input(format!("{}: {e}", a.plan.display())))?;
    let plan_name = doc
        .get("plan")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .unwrap_or("plan")
        .to_string();
    // A ConfigMap is readable by anyone who can read the namespace: a password written in
    // the plan would leak through it. Secrets go in ${VARS} the pods get from Secrets.
    if perfbase_core::redact::text(&text) != text {
        return Err(bad_input(format!(
            "{}: the plan holds a password or token (in a URL or a password= value); write \
             ${{VAR}} in its place and give the pods VAR from a Kubernetes Secret",
            a.plan.display()
        )));
    }
    names::check(&a, &plan_file(&a))?;
    let objects = objects(&a, &plan_name, &text);
    if a.apply {
        let applied =
            crate::backend::setup::block_on_local(apply(&objects, a.namespace.as_deref()))?
                .map_err(bad_input)?;
        for line in applied {
            if a.follow {
                errln!("perfbase: {line}");
            } else {
                outln!("{line}");
            }
        }
        if a.follow {
            return follow_run(&a, &objects);
        }
    } else {
        out!("{}", objects.yaml()?);
    }
    Ok(Exit::Success)
}

/// `--follow`: the run the objects just applied make, followed to its merged result.
fn follow_run(a: &K8sArgs, o: &Objects) -> Result<Exit, AppError> {
    let name = |j: &Job| j.metadata.name.clone().unwrap_or_default();
    let agents_job = name(&o.jobs[0]);
    let merge_job = o.jobs.get(1).map(name).unwrap_or_default();
    let run_id = o.run_id.clone();
    let deadline = o
        .jobs
        .iter()
        .filter_map(|j| j.spec.as_ref()?.active_deadline_seconds)
        .max()
        .map_or(FOLLOW_DEFAULT, |s| {
            std::time::Duration::from_secs(s.max(0) as u64 + 60)
        });
    follow::follow(
        &follow::Follow {
            namespace: a.namespace.as_deref(),
            agents_job: &agents_job,
            merge_job: &merge_job,
            run_id: &run_id,
            timeout: deadline,
        },
        &a.store.options(),
    )
}

/// How long --follow waits for Jobs without a deadline.
const FOLLOW_DEFAULT: std::time::Duration = std::time::Duration::from_secs(6 * 3600);

/// The objects of one distributed run: the plan's ConfigMap, the agents' Job and, with
/// --merge-job, the merge Job.
pub struct Objects {
    pub config: ConfigMap,
    pub jobs: Vec<Job>,
    /// The id the agents save under.
    pub run_id: String,
}

impl Objects {
    /// As one YAML stream (documents separated by `---`), for `kubectl apply -f -`.
    pub fn yaml(&self) -> Result<String, AppError> {
        let mut docs = vec![yaml(&self.config)?];
        for j in &self.jobs {
            docs.push(yaml(j)?);
        }
        Ok(docs.join("---\n"))
    }
}

/// `--apply`: each object applied server-side (field manager `perfbase`) through the kube
/// crate, to the cluster of the current kubeconfig (KUBECONFIG, ~/.kube/config, or the pod's
/// own service account) in `namespace` or the kubeconfig's; one line per object applied.
async fn apply(o: &Objects, namespace: Option<&str>) -> Result<Vec<String>, String> {
    use kube::api::{Api, Patch, PatchParams};
    let client = kube::Client::try_default()
        .await
        .map_err(|e| format!("--apply: no cluster to reach ({e}); set KUBECONFIG, or pipe the YAML to kubectl apply -f -"))?;
    let ns = namespace.map_or_else(|| client.default_namespace().to_string(), str::to_string);
    let params = PatchParams::apply("perfbase").force();
    let fail = |what: &str, name: &str, e: kube::Error| {
        format!("--apply: {what} {name} in namespace {ns}: {e}")
    };
    let mut done = Vec::new();
    let name = o.config.metadata.name.clone().unwrap_or_default();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    maps.patch(&name, &params, &Patch::Apply(&o.config))
        .await
        .map_err(|e| fail("ConfigMap", &name, e))?;
    done.push(format!("configmap/{name} applied in {ns}"));
    let jobs: Api<Job> = Api::namespaced(client, &ns);
    for j in &o.jobs {
        let name = j.metadata.name.clone().unwrap_or_default();
        jobs.patch(&name, &params, &Patch::Apply(j))
            .await
            .map_err(|e| fail("Job", &name, e))?;
        done.push(format!("job.batch/{name} applied in {ns}"));
    }
    Ok(done)
}

/// The objects that run `plan_text` as `a.agents` agents.
pub fn objects(a: &K8sArgs, plan_name: &str, plan_text: &str) -> Objects {
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| format!("perfbase-{}", dns_name(plan_name)));
    let file = plan_file(a);
    let labels: BTreeMap<String, String> = [
        ("app.kubernetes.io/name".to_string(), "perfbase".to_string()),
        ("perfbase/plan".to_string(), dns_name(plan_name)),
    ]
    .into();
    let pods = Pods {
        a,
        name: &name,
        labels: &labels,
        env: store_env(a),
    };
    let config = ConfigMap {
        metadata: pods.meta(&name),
        data: Some([(file.clone(), plan_text.to_string())].into()),
        ..ConfigMap::default()
    };
    let run_id = a.run_id.clone().unwrap_or_else(|| {
        format!(
            "{name}-{}",
            perfbase_core::clock::format_utc(std::time::SystemTime::now(), "%Y%m%d-%H%M%S")
        )
    });
    let job = Job {
        metadata: pods.meta(&name),
        spec: Some(JobSpec {
            completion_mode: Some("Indexed".into()),
            completions: Some(a.agents as i32),
            parallelism: Some(a.agents as i32),
            // A failed agent is not retried: its segment would start late and unaligned;
            // `perfbase merge` names the missing segment instead. Per index, so that one lost
            // agent fails its own index only: with a Job-wide backoffLimit of 0 the Job
            // controller fails the whole Job at the first failed pod and deletes the others
            // mid-run.
            backoff_limit_per_index: Some(0),
            template: pods.template(agent_args(a, &file, &run_id, &name), true),
            ..JobSpec::default()
        }),
        ..Job::default()
    };
    let mut jobs = vec![job];
    if a.merge_job {
        jobs.push(merge_job(&pods, run_id.clone(), &file));
    }
    Objects {
        config,
        jobs,
        run_id,
    }
}

/// The plan's file name: its key in the ConfigMap, and so its name in the pods.
fn plan_file(a: &K8sArgs) -> String {
    a.plan
        .file_name()
        .map_or("plan.toml".into(), |f| f.to_string_lossy().into_owned())
}

/// An agent's command line: its segment of the plan, saved under the run id, started at the
/// agreed time or at the store's barrier.
fn agent_args(a: &K8sArgs, file: &str, run_id: &str, name: &str) -> Vec<String> {
    let mut args = vec![
        "agent".to_string(),
        format!("{PLAN_DIR}/{file}"),
        "--segments".into(),
        a.agents.to_string(),
        "--run-id".into(),
        run_id.to_string(),
        "--quiet".into(),
        "--label".into(),
        format!("k8s-job={name}"),
    ];
    match &a.start_at {
        Some(at) => args.extend(["--start-at".into(), at.clone()]),
        // Pods start when the cluster gets to them: without a time agreed beforehand, the
        // agents meet at the store's barrier and start together.
        None => args.push("--barrier".into()),
    }
    args
}

/// The store's URL, only ever by reference to its Secret.
fn store_env(a: &K8sArgs) -> Vec<EnvVar> {
    vec![EnvVar {
        name: "PERFBASE_STORE".into(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: a.store_secret.clone(),
                key: a.store_key.clone(),
                optional: Some(false),
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    }]
}

/// Started with the agents, it waits in the store for all N of them, then merges and saves
/// the merged run (label merged-run=ID).
fn merge_job(pods: &Pods<'_>, run_id: String, file: &str) -> Job {
    let a = pods.a;
    let merge_args = vec![
        "merge".to_string(),
        "--run-id".into(),
        run_id,
        "--wait-for".into(),
        a.agents.to_string(),
        "--wait-timeout".into(),
        "6h".into(),
        "--save".into(),
        // The plan's thresholds, checks and findings are judged on the merged run.
        "--plan".into(),
        format!("{PLAN_DIR}/{file}"),
    ];
    Job {
        metadata: pods.meta(&format!("{}-merge", pods.name)),
        spec: Some(JobSpec {
            completions: Some(1),
            parallelism: Some(1),
            backoff_limit: Some(0),
            template: pods.template(merge_args, false),
            ..JobSpec::default()
        }),
        ..Job::default()
    }
}

/// What every object of one deployment shares: the namespace, the labels, the image and the
/// store's Secret.
struct Pods<'a> {
    a: &'a K8sArgs,
    name: &'a str,
    labels: &'a BTreeMap<String, String>,
    env: Vec<EnvVar>,
}

impl Pods<'_> {
    fn meta(&self, n: &str) -> ObjectMeta {
        ObjectMeta {
            name: Some(n.to_string()),
            namespace: self.a.namespace.clone(),
            labels: Some(self.labels.clone()),
            ..ObjectMeta::default()
        }
    }

    /// One pod's spec (an agent's, or the merge's): the image with `args`, the store from the
    /// Secret, and the plan mounted from the ConfigMap.
    fn template(&self, args: Vec<String>, agent: bool) -> PodTemplateSpec {
        let mount = VolumeMount {
            name: "plan".into(),
            mount_path: PLAN_DIR.into(),
            read_only: Some(true),
            ..VolumeMount::default()
        };
        let volume = Volume {
            name: "plan".into(),
            config_map: Some(ConfigMapVolumeSource {
                name: self.name.to_string(),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        };
        PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(self.labels.clone()),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                restart_policy: Some("Never".into()),
                containers: vec![Container {
                    name: if agent { "agent" } else { "merge" }.into(),
                    image: Some(self.a.image.clone()),
                    args: Some(args),
                    env: Some(self.env.clone()),
                    volume_mounts: Some(vec![mount]),
                    ..Container::default()
                }],
                volumes: Some(vec![volume]),
                host_network: self.a.host_network.then_some(true),
                // Agents never talk to the API server: no token of it in the pods.
                automount_service_account_token: Some(false),
                // On the host's network, the cluster's DNS still answers first.
                dns_policy: self
                    .a
                    .host_network
                    .then(|| "ClusterFirstWithHostNet".into()),
                ..PodSpec::default()
            }),
        }
    }
}

fn yaml(v: &dyn erased::Yaml) -> Result<String, AppError> {
    v.yaml().map_err(|e| bad_input(format!("k8s: {e}")))
}

/// Serialises either object (with its apiVersion and kind, which k8s-openapi adds).
mod erased {
    pub trait Yaml {
        fn yaml(&self) -> Result<String, serde_yaml_ng::Error>;
    }
    impl<T: serde::Serialize> Yaml for T {
        fn yaml(&self) -> Result<String, serde_yaml_ng::Error> {
            serde_yaml_ng::to_string(self)
        }
    }
}
