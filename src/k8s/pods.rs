//! What the objects of one distributed run share, and the pods' spec, written so that a
//! production cluster accepts and schedules them well: labels that `kubectl get pods -l` can
//! select on, resources with requests equal to limits (so an agent gets the cores it is
//! measured with), agents spread across nodes, no service-account token, the node's name
//! given to each agent, and the store only by reference to its Secret.

use crate::cli::K8sArgs;
use k8s_openapi::api::core::v1::{
    ConfigMapVolumeSource, Container, EnvVar, EnvVarSource, ObjectFieldSelector, PodSpec,
    PodTemplateSpec, ResourceRequirements, SecretKeySelector, TopologySpreadConstraint, Volume,
    VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use std::collections::BTreeMap;

/// Where the plan is mounted in each pod.
pub const PLAN_DIR: &str = "/etc/perfbase";

/// The merge pod's resources: it reads N results and adds their histograms.
const MERGE_CPU: &str = "250m";
const MERGE_MEMORY: &str = "256Mi";

/// Which of the run's objects a label or a pod belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Plan,
    Agent,
    Merge,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Plan => "plan",
            Role::Agent => "agent",
            Role::Merge => "merge",
        }
    }
}

/// What every object of one run shares.
pub struct Pods<'a> {
    pub a: &'a K8sArgs,
    /// The objects' name (the ConfigMap's and the agents' Job's).
    pub name: &'a str,
    pub run_id: &'a str,
    /// The plan's name as a label value.
    pub plan: &'a str,
}

impl Pods<'_> {
    /// The labels of every object and pod of the run, for `kubectl get pods -l`.
    pub fn labels(&self, role: Role) -> BTreeMap<String, String> {
        [
            ("app.kubernetes.io/name", "perfbase"),
            ("app.kubernetes.io/instance", self.name),
            ("app.kubernetes.io/component", role.name()),
            ("perfbase/plan", self.plan),
            ("perfbase/run-id", self.run_id),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    pub fn meta(&self, n: &str, role: Role) -> ObjectMeta {
        ObjectMeta {
            name: Some(n.to_string()),
            namespace: self.a.namespace.clone(),
            labels: Some(self.labels(role)),
            ..ObjectMeta::default()
        }
    }

    /// One pod's spec (an agent's or the merge's): the image with `args`, the store from the
    /// Secret, and the plan mounted from the ConfigMap.
    pub fn template(&self, args: Vec<String>, role: Role) -> PodTemplateSpec {
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
        let (cpu, memory) = match role {
            Role::Merge => (MERGE_CPU, MERGE_MEMORY),
            _ => (self.a.cpu.as_str(), self.a.memory.as_str()),
        };
        let host_network = self.a.host_network;
        PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(self.labels(role)),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                restart_policy: Some("Never".into()),
                containers: vec![Container {
                    name: role.name().into(),
                    image: Some(self.a.image.clone()),
                    args: Some(args),
                    env: Some(self.env(role)),
                    volume_mounts: Some(vec![mount]),
                    resources: Some(resources(cpu, memory)),
                    ..Container::default()
                }],
                volumes: Some(vec![volume]),
                host_network: host_network.then_some(true),
                // On the host's network, the cluster's DNS still answers first.
                dns_policy: host_network.then(|| "ClusterFirstWithHostNet".into()),
                // Agents never talk to the API server: no token of it in the pods.
                automount_service_account_token: Some(false),
                topology_spread_constraints: (role == Role::Agent && !self.a.no_spread)
                    .then(|| vec![self.spread()]),
                ..PodSpec::default()
            }),
        }
    }

    /// Agents on as many nodes as the cluster has, one more on a node only when the others
    /// have as many; a soft rule (ScheduleAnyway), so a cluster with fewer nodes than agents
    /// still runs them all.
    fn spread(&self) -> TopologySpreadConstraint {
        TopologySpreadConstraint {
            max_skew: 1,
            topology_key: "kubernetes.io/hostname".into(),
            when_unsatisfiable: "ScheduleAnyway".into(),
            label_selector: Some(LabelSelector {
                match_labels: Some(self.labels(Role::Agent)),
                ..LabelSelector::default()
            }),
            ..TopologySpreadConstraint::default()
        }
    }

    /// The store's URL, only ever by reference to its Secret; an agent also gets its node's
    /// name, which its result records.
    fn env(&self, role: Role) -> Vec<EnvVar> {
        let mut env = vec![EnvVar {
            name: "PERFBASE_STORE".into(),
            value_from: Some(EnvVarSource {
                secret_key_ref: Some(SecretKeySelector {
                    name: self.a.store_secret.clone(),
                    key: self.a.store_key.clone(),
                    optional: Some(false),
                }),
                ..EnvVarSource::default()
            }),
            ..EnvVar::default()
        }];
        if role == Role::Agent {
            env.push(EnvVar {
                name: "PERFBASE_NODE_NAME".into(),
                value_from: Some(EnvVarSource {
                    field_ref: Some(ObjectFieldSelector {
                        field_path: "spec.nodeName".into(),
                        ..ObjectFieldSelector::default()
                    }),
                    ..EnvVarSource::default()
                }),
                ..EnvVar::default()
            });
        }
        env
    }
}

/// Requests equal to limits: the Guaranteed QoS class, so the pod is neither throttled below
/// what it asked for nor first to be evicted, and a static CPU manager gives it whole cores.
fn resources(cpu: &str, memory: &str) -> ResourceRequirements {
    let both: BTreeMap<String, Quantity> = [
        ("cpu".to_string(), Quantity(cpu.to_string())),
        ("memory".to_string(), Quantity(memory.to_string())),
    ]
    .into();
    ResourceRequirements {
        requests: Some(both.clone()),
        limits: Some(both),
        ..ResourceRequirements::default()
    }
}
