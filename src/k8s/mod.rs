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
mod pods;
mod secrets;

use crate::cli::K8sArgs;
use crate::exit::{bad_input, AppError, Exit};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::ConfigMap;
use pods::{Pods, Role, PLAN_DIR};
use std::time::Duration;

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
    let text = perfbase_drivers::input::read_text(&a.plan)
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
    let written = secrets::written(&doc).or_else(|| {
        (perfbase_core::redact::text(&text) != text)
            .then(|| "a URL's password or a password value".to_string())
    });
    if let Some(at) = written {
        return Err(bad_input(format!(
            "{}: {at} holds a credential written out, which the ConfigMap would show to \
             anyone who can read the namespace; write ${{VAR}} in its place and give the pods \
             VAR from a Kubernetes Secret",
            a.plan.display()
        )));
    }
    names::check(&a, &plan_file(&a))?;
    let objects = objects(&a, &plan_name, &text, deadline(&a));
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

/// How long the agents wait at the barrier at most (perfbase agent's --barrier-timeout).
const BARRIER_TIMEOUT: Duration = Duration::from_secs(600);
/// A Job's deadline when the plan's length cannot be known here.
const DEFAULT_DEADLINE: Duration = Duration::from_secs(6 * 3600);
/// What the deadline adds to the plan's length beyond a fifth more: pods pulling their image,
/// starting, saving.
const MARGIN: Duration = Duration::from_secs(300);
/// How much longer the merge Job may run than the agents': it waits for them as long as they
/// may run, then merges, judges and saves what they left, even when their deadline cut them.
const MERGE_GRACE: Duration = Duration::from_secs(300);

/// The agents' Job's activeDeadlineSeconds, and how long the merge waits for them: --deadline,
/// or the plan's planned length with a margin (the barrier's wait, a fifth more, five
/// minutes), or 6 h when the plan cannot be loaded here (its ${VARS} are the pods') or has
/// steps bounded by a count only. Which one, on stderr.
fn deadline(a: &K8sArgs) -> Duration {
    let (deadline, why) = match a.deadline {
        Some(d) => (d, "--deadline".to_string()),
        None => {
            let planned = crate::plan::load(&a.plan, None)
                .ok()
                .and_then(|p| crate::plan::planned_duration(&p));
            match planned {
                Some(d) => (
                    perfbase_core::units::saturating_secs(d.as_secs_f64() * 1.2)
                        .saturating_add(BARRIER_TIMEOUT)
                        .saturating_add(MARGIN),
                    format!(
                        "the plan's {} of load at most, a fifth more, the barrier's {} and {}",
                        hms(d),
                        hms(BARRIER_TIMEOUT),
                        hms(MARGIN)
                    ),
                ),
                None => (
                    DEFAULT_DEADLINE,
                    "the plan's length is not known here (its ${VARS} are set in the pods, or \
                     a step is bounded by a count only); --deadline sets it"
                        .to_string(),
                ),
            }
        }
    };
    // Whole seconds, as activeDeadlineSeconds has them; up, so a margin is never cut.
    let deadline = Duration::from_secs(
        deadline
            .as_secs()
            .saturating_add(u64::from(deadline.subsec_nanos() > 0)),
    );
    errln!(
        "perfbase: the Jobs' deadline (activeDeadlineSeconds) is {}: {why}",
        hms(deadline)
    );
    deadline
}

/// Whole seconds as hours, minutes and seconds (`6h`, `15m24s`), as `perfbase merge
/// --wait-timeout` and people read them.
fn hms(d: Duration) -> String {
    let s = d.as_secs();
    let mut out = String::new();
    for (unit, secs) in [("h", s / 3600), ("m", s / 60 % 60), ("s", s % 60)] {
        if secs > 0 {
            out.push_str(&format!("{secs}{unit}"));
        }
    }
    if out.is_empty() {
        "0s".into()
    } else {
        out
    }
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

/// The objects that run `plan_text` as `a.agents` agents; `deadline` bounds each Job.
pub fn objects(a: &K8sArgs, plan_name: &str, plan_text: &str, deadline: Duration) -> Objects {
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| format!("perfbase-{}", dns_name(plan_name)));
    let file = plan_file(a);
    let run_id = a.run_id.clone().unwrap_or_else(|| default_run_id(&name));
    let plan = dns_name(plan_name);
    let pods = Pods {
        a,
        name: &name,
        run_id: &run_id,
        plan: &plan,
    };
    let config = ConfigMap {
        metadata: pods.meta(&name, Role::Plan),
        data: Some([(file.clone(), plan_text.to_string())].into()),
        ..ConfigMap::default()
    };
    let job = Job {
        metadata: pods.meta(&name, Role::Agent),
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
            template: pods.template(agent_args(a, &file, &run_id, &name), Role::Agent),
            ..bounds(a, deadline)
        }),
        ..Job::default()
    };
    let mut jobs = vec![job];
    if a.merge_job {
        jobs.push(merge_job(&pods, &file, deadline));
    }
    Objects {
        config,
        jobs,
        run_id,
    }
}

/// NAME-YYYYMMDD-HHMMSS, now, with NAME cut so that the id stays a label value (63 at most).
fn default_run_id(name: &str) -> String {
    let stamp = perfbase_core::clock::format_utc(std::time::SystemTime::now(), "%Y%m%d-%H%M%S");
    let keep = 63 - stamp.len() - 1;
    let name = name[..name.len().min(keep)].trim_end_matches('-');
    format!("{name}-{stamp}")
}

/// What bounds a Job in time: its deadline, and how long Kubernetes keeps it once finished.
fn bounds(a: &K8sArgs, deadline: Duration) -> JobSpec {
    JobSpec {
        active_deadline_seconds: Some(deadline.as_secs().min(i64::MAX as u64) as i64),
        ttl_seconds_after_finished: Some(a.ttl.as_secs().min(i32::MAX as u64) as i32),
        ..JobSpec::default()
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

/// Started with the agents, it waits in the store for all N of them (or all but the lost),
/// then merges, judges the plan on the merged run and saves it (label merged-run=ID).
fn merge_job(pods: &Pods<'_>, file: &str, deadline: Duration) -> Job {
    let a = pods.a;
    let merge_args = vec![
        "merge".to_string(),
        "--run-id".into(),
        pods.run_id.to_string(),
        "--wait-for".into(),
        a.agents.to_string(),
        "--wait-timeout".into(),
        hms(deadline),
        "--save".into(),
        // The plan's thresholds, checks and findings are judged on the merged run.
        "--plan".into(),
        format!("{PLAN_DIR}/{file}"),
    ];
    Job {
        metadata: pods.meta(&format!("{}-merge", pods.name), Role::Merge),
        spec: Some(JobSpec {
            completions: Some(1),
            parallelism: Some(1),
            backoff_limit: Some(0),
            template: pods.template(merge_args, Role::Merge),
            ..bounds(a, deadline.saturating_add(MERGE_GRACE))
        }),
        ..Job::default()
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
