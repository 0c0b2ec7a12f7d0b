"""Summaries for bench/connections_vs_peers.sh: one line per run, then the tables.

    connections_report.py run DIR TOOL N      # reads DIR's outputs, writes DIR/result.json
    connections_report.py table OUT "COUNTS" "TOOLS"
"""
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import p_oha, p_perfbase, p_wrk, read, spread  # noqa: E402


def run(d, tool, n):
    r = {"tool": tool, "connections": int(n), "rep": os.path.basename(d)}
    r["rc"] = int(read(f"{d}/rc").strip() or -1)
    try:
        r.update({"wrk": p_wrk, "oha": p_oha, "perfbase": p_perfbase}[tool](d))
    except Exception as e:  # a run that printed nothing usable is reported, not fatal
        r["parse_error"] = f"{type(e).__name__}: {e}"
    fields = read(f"{d}/time.txt").split()[-4:]
    if len(fields) == 4 and all(re.fullmatch(r"[\d.]+", x) for x in fields):
        user, sys_, rss_kb, _wall = fields
        r["cpu_s"] = float(user) + float(sys_)
        r["rss_mb"] = int(rss_kb) * 1024 / 1e6
        if r.get("requests"):
            r["cpu_us_per_req"] = r["cpu_s"] * 1e6 / r["requests"]
    r["ok"] = r["rc"] == 0 and "parse_error" not in r and bool(r.get("requests")) and "cpu_s" in r
    with open(f"{d}/result.json", "w") as f:
        json.dump(r, f, indent=1)
    num = lambda k, nd: "-" if r.get(k) is None else f"{r[k]:.{nd}f}"
    return (f"{n} {tool} {r['rep']}: rc={r['rc']} req/s={num('rps', 0)} "
            f"cpu_us/req={num('cpu_us_per_req', 2)} rss_MB={num('rss_mb', 1)} "
            f"errors={r.get('errors', '-')}" + ("" if r["ok"] else "  FAILED")
            + (f" [{r['parse_error']}]" if "parse_error" in r else ""))


def table(out, counts, tools):
    counts = [int(c) for c in counts.split()]
    tools = tools.split()
    print(f"## Many connections: perfbase vs peers ({out})\n")
    for line in read(f"{out}/env.txt").splitlines():
        print(f"    {line}")
    meds = {}
    print("\n| connections | tool | ok runs | peak RSS MB | RSS per connection KB | req/s | CPU µs/req | errors |")
    print("|---|---|---|---|---|---|---|---|")
    for n in counts:
        for tool in tools:
            base = f"{out}/{n}/{tool}"
            if not os.path.isdir(base):
                continue
            runs = [json.loads(read(f"{base}/{rep}/result.json") or '{"ok": false}')
                    for rep in sorted(os.listdir(base))]
            ok = [r for r in runs if r.get("ok")]
            col = lambda k: [r[k] for r in ok if r.get(k) is not None]
            meds[(n, tool)] = {k: statistics.median(col(k)) for k in ("rss_mb", "rps", "cpu_us_per_req") if col(k)}
            per = [r["rss_mb"] * 1000 / n for r in ok if r.get("rss_mb")]
            print(f"| {n:,} | {tool} | {len(ok)}/{len(runs)} | {spread(col('rss_mb'), lambda v: f'{v:.1f}')} | "
                  f"{spread(per, lambda v: f'{v:.1f}')} | {spread(col('rps'), lambda v: f'{v:,.0f}')} | "
                  f"{spread(col('cpu_us_per_req'), lambda v: f'{v:.2f}')} | "
                  f"{spread(col('errors'), lambda v: f'{v:,.0f}')} |")
    lo, hi = min(counts), max(counts)
    if hi > lo:
        print(f"\nMemory per held connection (median RSS at {hi:,} minus at {lo:,}, per added connection):")
        for tool in tools:
            a, b = meds.get((lo, tool), {}), meds.get((hi, tool), {})
            if a.get("rss_mb") and b.get("rss_mb"):
                print(f"- {tool}: {(b['rss_mb'] - a['rss_mb']) * 1e6 / (hi - lo) / 1000:.2f} KB")
    print()
    for n in counts:
        p, w = meds.get((n, "perfbase"), {}), meds.get((n, "wrk"), {})
        if p.get("rss_mb") and w.get("rss_mb"):
            ratio = lambda k: f"x{p[k] / w[k]:.2f}" if p.get(k) and w.get(k) else "n/a"
            print(f"{n} connections: perfbase RSS {p['rss_mb']:.0f} MB vs wrk {w['rss_mb']:.0f} MB; "
                  f"req/s {ratio('rps')}; CPU per request {ratio('cpu_us_per_req')}")
    print("\nCells: median over the ok runs (min–max). RSS per connection = peak RSS / connections. "
          "CPU µs/req = the tool's user+sys / requests completed. Ratios are perfbase/wrk.")


if __name__ == "__main__":
    if sys.argv[1] == "run":
        print(run(*sys.argv[2:5]))
    else:
        table(*sys.argv[2:5])
