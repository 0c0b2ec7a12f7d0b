"""What the benchmarks read from each tool's output: shared by bench/http_vs_peers.sh and
bench/connections_report.py. Each parser takes a run's directory and returns what it found:
requests, rps, errors, p50/p99 in ms when the tool gives them, and a note."""
import json
import re
import statistics


def read(p):
    try:
        with open(p, errors="replace") as f:
            return f.read()
    except OSError:
        return ""

def to_ms(v, unit):
    return float(v) * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[unit]

def p_wrk(d):
    out, r = read(f"{d}/stdout"), {}
    m = re.search(r"(\d+) requests in", out)
    if m: r["requests"] = int(m.group(1))
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if m: r["rps"] = float(m.group(1))
    for q, k in (("50", "p50"), ("99", "p99")):
        m = re.search(rf"^\s+{q}%\s+([\d.]+)(\w+)", out, re.M)
        if m: r[k] = to_ms(m.group(1), m.group(2))
    err = 0
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if m: err += int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m: err += sum(int(x) for x in m.groups())
    r["errors"] = err
    return r

def p_oha(d):
    j = json.loads(read(f"{d}/stdout") or "{}")
    codes = {str(k): v for k, v in (j.get("statusCodeDistribution") or {}).items()}
    errs = j.get("errorDistribution") or {}
    lat = j.get("latencyPercentiles") or {}
    r = {"rps": j["summary"]["requestsPerSec"], "requests": sum(codes.values())}
    for k in ("p50", "p99"):
        if lat.get(k) is not None: r[k] = lat[k] * 1e3
    r["errors"] = sum(v for k, v in codes.items() if not k.startswith("2")) \
        + sum(v for k, v in errs.items() if "deadline" not in k)
    aborted = sum(v for k, v in errs.items() if "deadline" in k)
    if aborted: r["note"] = f"{aborted} in flight aborted at deadline"
    return r

def p_perfbase(d):
    j = json.loads(read(f"{d}/perfbase.json") or "{}")
    lat = j.get("latency_ms") or {}
    r = {"requests": int(j["requests"]), "rps": float(j["rps"])}
    for k in ("p50", "p99"):
        if lat.get(k) is not None: r[k] = float(lat[k])
    e = j.get("errors") or 0
    if isinstance(e, dict): e = sum(v for v in e.values() if isinstance(v, (int, float)))
    status = j.get("status") or {}
    r["errors"] = e + sum(v for k, v in status.items() if not str(k).startswith("2"))
    notes = []
    if j.get("aborted_in_flight"): notes.append(f"{j['aborted_in_flight']} in flight aborted at deadline")
    om = j.get("open_model") or {}
    if om.get("late"): notes.append(f"{om['late']} sent late")
    if om.get("unsent"): notes.append(f"{om['unsent']} unsent")
    if notes: r["note"] = ", ".join(notes)
    rate = (j.get("config") or {}).get("rate")
    if rate is not None: r["config_rate"] = rate
    return r

def spread(vals, fmt):
    if not vals: return "n/a"
    med = fmt(statistics.median(vals))
    return med if len(vals) == 1 else f"{med} ({fmt(min(vals))}–{fmt(max(vals))})"
