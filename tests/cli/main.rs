//! End-to-end tests of the `perfbase` binary against real servers bound on loopback port 0 in
//! this process: the reference service and deliberately misbehaving servers. Assertions are
//! exact wherever the behaviour is deterministic (counts), banded where it is timing.
//!
//! Load tests run one at a time (a shared lock) so that timing assertions are not disturbed
//! by another test's load on this 2-core machine.

mod agents;
mod agents_stop;
mod brokers;
mod browser;
mod common;
mod edges;
mod exports;
mod grpc;
mod grpc_hostile;
mod hostile;
mod hostile2;
mod hostile3;
mod http;
mod import;
mod journeys;
mod k8s;
mod k8s_node;
mod live;
mod page;
mod prometheus;
mod script_batch;
mod script_metrics;
mod scripts;
mod shell;
mod sql;
mod stacks;
mod steps;
mod store;
mod study;
mod trend;
mod ui;
mod vault;
mod vault_ha;
mod web_stacks;
mod ws;
