"""Run one Python change-point detector over series.jsonl; write its detections as JSON.

  python detect.py otava SERIES.jsonl OUT.json          # in bench/out/venv-otava
  python detect.py spa   SERIES.jsonl OUT.json [EVERY]  # in bench/out/venv-spa; every EVERY-th series

The output has the shape of perfbase's `trend --json` file, so one scorer reads all three:
{"tool", "params", "series": [{"name", "change_points": [{"index"}], "compute_us"}]}, where
index is the 0-based first point of the new segment and compute_us the wall time of the
detection call alone, in this process (no start-up, no JSON, no conversion of the input).

Both tools are called with their defaults:
- Otava (apache-otava 0.8.0): otava.analysis.compute_change_points(series) with window_len=50,
  max_pvalue=0.001, min_magnitude=0.0 (the same as `otava analyze`'s defaults). It returns
  (change_points, weak_change_points); the first list is the answer. Each ChangePoint.index is
  already the first point of the new segment. The series must be a list: given a numpy array,
  its split step skips the per-window slice (detector.py slices only non-arrays), analyses
  the whole series in every window and then fails with a ValueError.
- signal-processing-algorithms 2.1.6: energy_statistics.e_divisive(series) with pvalue=0.05,
  permutations=100. It returns indices in the order found, not sorted; each is the first
  point of the new segment. Its permutation test draws from numpy's global generator, so each
  call runs inside the package's deterministic_numpy_random(seed) for a repeatable result.
"""

import json
import os
import sys
import time
import zlib


def otava_detector():
    from otava.analysis import compute_change_points

    params = {"function": "otava.analysis.compute_change_points",
              "window_len": 50, "max_pvalue": 0.001, "min_magnitude": 0.0}

    def detect(values, _name):
        t0 = time.perf_counter_ns()
        change_points, _weak = compute_change_points(values)
        dt = time.perf_counter_ns() - t0
        return [int(cp.index) for cp in change_points], dt

    return detect, params


def spa_detector():
    from signal_processing_algorithms.determinism import deterministic_numpy_random
    from signal_processing_algorithms.energy_statistics import cext_calculator
    from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

    params = {"function": "signal_processing_algorithms.energy_statistics.energy_statistics.e_divisive",
              "pvalue": 0.05, "permutations": 100, "c_extension": cext_calculator.C_EXTENSION_LOADED}

    def detect(values, name):
        # A seed per series (not per run), so a subset run finds the same points as a full one.
        with deterministic_numpy_random(zlib.crc32(name.encode())):
            t0 = time.perf_counter_ns()
            change_points = e_divisive(values)
            dt = time.perf_counter_ns() - t0
        return sorted(int(i) for i in change_points), dt

    return detect, params


def main():
    tool, series_path, out_path = sys.argv[1:4]
    every = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    detect, params = {"otava": otava_detector, "spa": spa_detector}[tool]()
    series = [json.loads(line) for line in open(series_path) if line.strip()]
    series = series[::every]

    # One untimed call first, so lazy imports and first-use set-up inside numpy/scipy are not
    # charged to the first series.
    detect([100.0 + (i % 7) for i in range(200)], "warm-up")

    results = []
    total_ns = 0
    for s in series:
        found, ns = detect(list(s["values"]), s["name"])
        total_ns += ns
        results.append({"name": s["name"],
                        "change_points": [{"index": i} for i in found],
                        "compute_us": ns / 1000.0})
    params["every"] = every
    with open(out_path, "w") as f:
        json.dump({"tool": tool, "params": params, "series": results}, f)
    print(f"{tool}: {len(results)} series, {total_ns / 1e9:.1f} s in detection calls -> {out_path}",
          file=sys.stderr)


if __name__ == "__main__":
    # One thread, whatever BLAS numpy brought: the bench shares a 2-core machine, and a
    # per-series time should not depend on how many cores happened to be idle.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    main()
