"""Score change-point detections against series.jsonl's truth; print a table per shape.

  python3 score.py SERIES.jsonl TOOL=RESULT.json [TOOL=RESULT.json ...] [--summary OUT.json]

Standard library only (it runs under the system python3). Every RESULT.json has the shape of
perfbase's `trend --json` output: {"series": [{"name", "change_points": [{"index"}],
"compute_us"}]}. A tool whose file is missing is shown as "not run".

A detection within TOL (5) points of a true change point is a true positive. Each truth and each
detection is matched at most once, closest pairs first. precision = TP / detections and
recall = TP / truths, per shape and pooled over all shapes; series with no truth only add false
positives, and false/100 is the detections that matched no truth per 100 points of the series
(the rate a gate would page at). The last line compares perfbase with Otava over all shapes.
"""

import json
import math
import os
import sys

TOL = 5


def match(truth, found, tol=TOL):
    """True positives: greedy by distance, each truth and each detection used once."""
    pairs = sorted((abs(d - t), ti, di) for ti, t in enumerate(truth)
                   for di, d in enumerate(found) if abs(d - t) <= tol)
    used_t, used_d, tp = set(), set(), 0
    for _, ti, di in pairs:
        if ti not in used_t and di not in used_d:
            used_t.add(ti)
            used_d.add(di)
            tp += 1
    return tp


def sig3(x):
    """x with 3 significant digits, in plain notation (0.0123, 5.30, 123, 1230)."""
    if x is None or not math.isfinite(x):
        return "n/a"
    if x == 0:
        return "0.00"
    exp = math.floor(math.log10(abs(x)))
    x = round(x, 2 - exp)
    exp = math.floor(math.log10(abs(x)))  # rounding may carry: 999.6 -> 1000
    return f"{x:.{max(0, 2 - exp)}f}"


def ratio(num, den):
    return num / den if den else None


def fmt2(x):
    return "n/a" if x is None else f"{x:.2f}"


def load_results(path):
    """{name: (indices, compute_us)} or None when the tool did not run."""
    if not os.path.exists(path):
        return None
    doc = json.load(open(path))
    if "schema" in doc and doc["schema"] != "perfbase.trend/v1":
        print(f"warning: {path}: schema {doc['schema']!r}, expected 'perfbase.trend/v1'", file=sys.stderr)
    out = {}
    for s in doc["series"]:
        found = ([int(cp["index"]) for cp in s.get("change_points", [])], s.get("compute_us"))
        # perfbase names a --series input by its "name"; should it ever decorate that name
        # (plan / scenario / step / metric), the input's name is still its scenario.
        for key in (s.get("scenario"), s["name"]):
            if key:
                out[key] = found
    return out


class Tally:
    def __init__(self):
        self.series = self.truths = self.found = self.tp = self.points = 0
        self.us = []

    def add(self, truth, found, us, points):
        self.series += 1
        self.points += points
        self.truths += len(truth)
        self.found += len(found)
        self.tp += match(truth, found)
        if us is not None:
            self.us.append(float(us))

    def precision(self):
        return ratio(self.tp, self.found)

    def recall(self):
        return ratio(self.tp, self.truths)

    def false_per_100(self):
        return ratio(100.0 * (self.found - self.tp), self.points)

    def ms(self):
        return sum(self.us) / len(self.us) / 1000.0 if self.us else None


def main():
    args = sys.argv[1:]
    summary_path = None
    if "--summary" in args:
        i = args.index("--summary")
        summary_path = args[i + 1]
        del args[i:i + 2]
    series_path, specs = args[0], [a.split("=", 1) for a in args[1:]]
    series = [json.loads(line) for line in open(series_path) if line.strip()]
    shapes = list(dict.fromkeys(s["shape"] for s in series))
    noises = sorted(set(s["noise"] for s in series))

    tallies = {}  # (tool, shape or "all") -> Tally; (tool, "noise", n) too
    ran = {}
    for tool, path in specs:
        res = load_results(path)
        ran[tool] = res is not None
        if res is None:
            continue
        missing = [s["name"] for s in series if s["name"] not in res]
        # The Python tools may run on every k-th series on purpose (their "every" param);
        # perfbase is asked for all of them, so a gap there is worth a word.
        if missing and tool == "perfbase":
            print(f"warning: {path} has no result for {len(missing)} of {len(series)} series "
                  f"(first: {missing[0]})", file=sys.stderr)
        for s in series:
            if s["name"] not in res:
                continue
            found, us = res[s["name"]]
            for key in ((tool, s["shape"]), (tool, "all"), (tool, "noise", s["noise"])):
                tallies.setdefault(key, Tally()).add(s["truth"], found, us, len(s["values"]))

    tools = [t for t, _ in specs]
    header = f"{'tool':<9} {'series':>6} {'truths':>6} {'found':>6} {'TP':>5} {'precision':>9} {'recall':>6} {'false/100':>9} {'ms/series':>9}"

    def rows(key_of):
        for tool in tools:
            t = tallies.get(key_of(tool))
            if t is None:
                print(f"{tool:<9} {'not run' if not ran[tool] else 'no series':>6}")
                continue
            print(f"{tool:<9} {t.series:>6} {t.truths:>6} {t.found:>6} {t.tp:>5} "
                  f"{fmt2(t.precision()):>9} {fmt2(t.recall()):>6} {fmt2(t.false_per_100()):>9} {sig3(t.ms()):>9}")

    print(f"change points within +-{TOL} points of the truth; ms/series = mean in-process time of the detection call")
    for shape in shapes:
        print(f"\n## {shape}")
        print(header)
        rows(lambda tool: (tool, shape))
    for n in noises:
        print(f"\n## all shapes, noise sigma {n}")
        print(header)
        rows(lambda tool: (tool, "noise", n))
    print("\n## all shapes")
    print(header)
    rows(lambda tool: (tool, "all"))

    if summary_path:
        doc = {}
        for key, t in tallies.items():
            label = key[1] if len(key) == 2 else f"noise-{key[2]}"
            doc.setdefault(key[0], {})[label] = {
                "series": t.series, "truths": t.truths, "detections": t.found, "tp": t.tp,
                "precision": t.precision(), "recall": t.recall(),
                "false_per_100": t.false_per_100(), "ms_per_series": t.ms()}
        json.dump(doc, open(summary_path, "w"), indent=1)

    p, o = tallies.get(("perfbase", "all")), tallies.get(("otava", "all"))

    def get(t, f):
        return None if t is None else f(t)

    print()
    print(f"perfbase vs otava: precision {fmt2(get(p, Tally.precision))} vs {fmt2(get(o, Tally.precision))}, "
          f"recall {fmt2(get(p, Tally.recall))} vs {fmt2(get(o, Tally.recall))}, "
          f"ms per series {sig3(get(p, Tally.ms))} vs {sig3(get(o, Tally.ms))}")


if __name__ == "__main__":
    main()
