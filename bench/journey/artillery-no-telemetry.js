// Preloaded into Artillery by bench/journey_vs_peers.sh (NODE_OPTIONS=--require=THIS_FILE).
// Artillery 2.0.21 still posts an (anonymised) "test run" event to its vendor's PostHog when
// ARTILLERY_DISABLE_TELEMETRY is set, and at exit waits ~12 s for that upload to fail where
// only package registries are reachable. This replaces posthog-node with a stub, so nothing
// leaves the machine and the run ends when the test does. It is loaded before any module.
'use strict';
const Module = require('module');
const load = Module._load;
class PostHog {
  capture() {}
  async shutdownAsync() {}
  async shutdown() {}
}
Module._load = function (request, parent, isMain) {
  if (request === 'posthog-node') return { PostHog };
  return load.call(this, request, parent, isMain);
};
