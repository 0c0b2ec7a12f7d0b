//! The modules a script imports, by name, and their JavaScript: thin layers over the
//! native functions in `globalThis.__perfbase` (natives.rs). k6's module names are accepted
//! as aliases of perfbase's, so a k6 script's imports resolve; what differs is in
//! docs/scripts.md.

/// The source of built-in module `name`, or None when there is no such module.
pub(crate) fn source(name: &str) -> Option<&'static str> {
    Some(match name {
        "perfbase" | "k6" => CORE,
        "perfbase/http" | "k6/http" => HTTP,
        "perfbase/crypto" | "k6/crypto" => CRYPTO,
        "perfbase/encoding" | "k6/encoding" => ENCODING,
        "perfbase/data" | "k6/data" => DATA,
        "perfbase/metrics" | "k6/metrics" => METRICS,
        _ => return None,
    })
}

/// Why a module that k6 has is missing here, for the import's error.
pub(crate) fn missing(name: &str) -> Option<&'static str> {
    Some(match name {
        "k6/ws" | "k6/experimental/websockets" | "k6/net/grpc" => {
            "scripts speak HTTP only; load WebSocket and gRPC with their own workloads"
        }
        "k6/browser" | "k6/experimental/browser" => "there is no browser in perfbase",
        "k6/execution" => "use __VU and __ITER",
        _ => return None,
    })
}

const CORE: &str = r#"
const pb = globalThis.__perfbase;
export function check(value, checks) {
  let all = true;
  for (const name of Object.keys(checks)) {
    const rule = checks[name];
    let passed;
    try { passed = !!(typeof rule === "function" ? rule(value) : rule); } catch (e) { passed = false; }
    pb.check(String(name), passed);
    all = all && passed;
  }
  return all;
}
export async function group(name, fn) {
  pb.enter(String(name));
  try { return await fn(); } finally { pb.leave(); }
}
export function sleep(seconds) { pb.sleep(Number(seconds)); }
export function fail(message) { throw new Error(message); }
export default { check, group, sleep, fail };
"#;

const HTTP: &str = r#"
const pb = globalThis.__perfbase;
export function request(method, url, body, params) {
  return pb.request(String(method).toUpperCase(), String(url), body ?? null, params ?? null);
}
export function get(url, params) { return request("GET", url, null, params); }
export function head(url, params) { return request("HEAD", url, null, params); }
export function options(url, body, params) { return request("OPTIONS", url, body, params); }
export function post(url, body, params) { return request("POST", url, body, params); }
export function put(url, body, params) { return request("PUT", url, body, params); }
export function patch(url, body, params) { return request("PATCH", url, body, params); }
export function del(url, body, params) { return request("DELETE", url, body, params); }
// k6's forms: a URL (a GET), [method, url, body, params], or { method, url, body, params };
// an array gives an array of responses, an object an object with the same keys.
export function batch(requests) {
  const keys = Array.isArray(requests) ? null : Object.keys(requests ?? {});
  const list = keys ? keys.map((k) => requests[k]) : requests;
  const asked = list.map((r) =>
    typeof r === "string" ? ["GET", r, null, null]
    : Array.isArray(r) ? [String(r[0]).toUpperCase(), String(r[1]), r[2] ?? null, r[3] ?? null]
    : [String(r.method ?? "GET").toUpperCase(), String(r.url), r.body ?? null, r.params ?? null]);
  const sent = pb.batch(asked);
  return keys ? sent.then((rs) => Object.fromEntries(keys.map((k, i) => [k, rs[i]]))) : sent;
}
export default { request, get, head, options, post, put, patch, del, batch };
"#;

// A metric is a number the natives know it by; its values go with the user's next step, so
// they count in the phase and the step that step belongs to. Tags are accepted and ignored.
const METRICS: &str = r#"
const pb = globalThis.__perfbase;
function number(name, value) {
  const v = Number(value);
  if (!Number.isFinite(v)) throw new TypeError("metric '" + name + "': add(" + String(value) + ") is not a finite number");
  return v;
}
class Metric {
  constructor(name, kind) {
    this.name = String(name);
    this.id = pb.metric(this.name, kind);
  }
  add(value, tags) { pb.sample(this.id, number(this.name, value)); return true; }
}
export class Counter extends Metric { constructor(name) { super(name, "counter"); } }
export class Gauge extends Metric { constructor(name) { super(name, "gauge"); } }
export class Trend extends Metric { constructor(name, isTime) { super(name, "trend"); this.isTime = !!isTime; } }
export class Rate extends Metric {
  constructor(name) { super(name, "rate"); }
  add(value, tags) { pb.sample(this.id, value ? 1 : 0); return true; }
}
export default { Counter, Gauge, Trend, Rate };
"#;

const CRYPTO: &str = r#"
const pb = globalThis.__perfbase;
const digest = (alg) => (data, encoding) => pb.digest(alg, data, encoding ?? "hex");
export const md5 = () => { throw new Error("md5 is not offered: use sha256"); };
export const sha1 = digest("sha1");
export const sha256 = digest("sha256");
export const sha384 = digest("sha384");
export const sha512 = digest("sha512");
export function hmac(alg, key, data, encoding) { return pb.hmac(String(alg), key, data, encoding ?? "hex"); }
export function randomBytes(n) { return pb.randomBytes(Number(n)); }
export function randomUUID() { return pb.uuid(); }
export default { sha1, sha256, sha384, sha512, hmac, randomBytes, randomUUID, md5 };
"#;

const ENCODING: &str = r#"
const pb = globalThis.__perfbase;
export function b64encode(data, variant) { return pb.b64encode(data, variant ?? "std"); }
export function b64decode(text, variant, format) {
  return pb.b64decode(String(text), variant ?? "std", format ?? "");
}
export function hexEncode(data) { return pb.hexEncode(data); }
export default { b64encode, b64decode, hexEncode };
"#;

const DATA: &str = r#"
const pb = globalThis.__perfbase;
function freeze(v) {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) freeze(v[k]);
  }
  return v;
}
// One copy per worker thread, made once when the script is loaded and shared read-only by
// every virtual user on it.
export class SharedArray {
  constructor(name, make) {
    const rows = make();
    if (!Array.isArray(rows)) throw new TypeError("SharedArray '" + name + "': the function must return an array");
    return freeze(rows);
  }
}
export function parseCSV(text, options) {
  const header = !(options && options.header === false);
  return pb.csv(String(text), header);
}
export default { SharedArray, parseCSV };
"#;
