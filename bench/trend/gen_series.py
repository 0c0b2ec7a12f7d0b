"""Make the labelled series for bench/trend_vs_otava.sh with otava-test-data's generators.

Runs in bench/out/venv-otava (otava-test-data==0.1.9 lives there). Writes one JSON object per
line: {"name", "shape", "noise", "values", "truth"}, where truth holds the 0-based index of the
first point of every new segment (empty when nothing changes).

Every series is a noise-free shape from otava-test-data plus otava-test-data's noise_normal
(mean 0, sigma = the noise level, clipped at 4 sigma by the generator), joined with its
combine(). Positions, directions and seeds come from one seeded numpy Generator per series, so
the file is the same on every run and machine (numpy 2.2's PCG64).

  python gen_series.py OUT.jsonl [PER]     # PER series per shape x noise level (default 10)
"""

import json
import sys

import numpy as np
from otava_test_data import (
    TimeSeries,
    combine,
    constant,
    multiple_changes,
    noise_normal,
    regression_fix,
    step_function,
    variance_change,
)
# Not re-exported by the package's __init__, but part of its generators.
from otava_test_data.generators.advanced import multiple_outliers

MASTER_SEED = 20261126
LENGTHS = (200, 300, 400, 500)  # cycled through, so every combination has each length
NOISES = (2, 5, 10)  # sigma of the added noise; otava-test-data's own variants use 2, 5, 10
SHAPES = ("step", "drift", "outliers", "variance", "multistep", "regfix", "none")
BASE = 100.0
STEP = 20.0  # step_function's default 100 -> 120
DRIFT_LEN = 30  # points a drift takes to climb the same 20 as a step
EDGE = 30  # no change closer than this to either end: every tool needs some points per side


def pick(rng, length, count, gap):
    """`count` sorted change indices in [EDGE, length - EDGE], at least `gap` apart."""
    while True:
        idx = sorted(int(i) for i in rng.integers(EDGE, length - EDGE, size=count))
        if all(b - a >= gap for a, b in zip(idx, idx[1:])):
            return idx


def sign(rng):
    return 1.0 if rng.random() < 0.5 else -1.0


def shape_series(shape, length, rng, seed):
    """The noise-free (or, for variance, self-noised) shape and its truth."""
    if shape == "step":
        (c,) = pick(rng, length, 1, 0)
        ts = step_function(length, value_before=BASE, value_after=BASE + sign(rng) * STEP, change_index=c)
        return ts, ts.get_change_point_indices()
    if shape == "drift":
        # otava-test-data 0.1.9 has no drift or trend generator: a linear ramp of DRIFT_LEN points
        # between two plateaus, wrapped in its TimeSeries so combine() adds its noise. A ramp has no
        # single first point of a new segment; the truth is its midpoint, where a level shift
        # (what all three detectors model) best fits it. +-5 of it is the middle third of the ramp.
        (start,) = pick(rng, length - DRIFT_LEN, 1, 0)
        delta = sign(rng) * STEP
        data = np.full(length, BASE)
        data[start:start + DRIFT_LEN] = BASE + delta * (np.arange(1, DRIFT_LEN + 1) / DRIFT_LEN)
        data[start + DRIFT_LEN:] = BASE + delta
        ts = TimeSeries(data=data, generator_name="drift", parameters={"start": start, "len": DRIFT_LEN})
        return ts, [start + DRIFT_LEN // 2]
    if shape == "outliers":
        # otava-test-data marks each outlier as a ChangePoint with change_type "outlier": a single
        # deviating point, not a new segment. Only its other types count as truth here.
        ts = multiple_outliers(length, baseline=BASE, outlier_value=BASE + 2.5 * STEP, n_outliers=3, seed=seed)
        return ts, [cp.index for cp in ts.change_points if cp.change_type != "outlier"]
    if shape == "variance":
        # The generator's own defaults: N(100, 2) -> N(100, 10). The added noise then narrows the
        # ratio of spreads as it grows (3.6x at noise 2, 2.1x at 5, 1.4x at 10).
        (c,) = pick(rng, length, 1, 0)
        ts = variance_change(length, mean=BASE, change_index=c, seed=seed)
        return ts, ts.get_change_point_indices()
    if shape == "multistep":
        # Three consecutive changes of 15, up or down, at least 40 points apart.
        idx = pick(rng, length, 3, 40)
        values = [BASE]
        for _ in idx:
            values.append(values[-1] + sign(rng) * 15.0)
        ts = multiple_changes(length, values=values, change_indices=idx)
        return ts, ts.get_change_point_indices()
    if shape == "regfix":
        # A 20-point regression of 20 that is then fixed back: regression_start and regression_end.
        (s,) = pick(rng, length - 20, 1, 0)
        ts = regression_fix(length, value_normal=BASE, value_regression=BASE + sign(rng) * STEP,
                            regression_start=s, regression_duration=20)
        return ts, ts.get_change_point_indices()
    if shape == "none":
        ts = constant(length, value=BASE)
        return ts, ts.get_change_point_indices()
    raise ValueError(shape)


def main():
    out = sys.argv[1]
    per = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    n = 0
    with open(out, "w") as f:
        for si, shape in enumerate(SHAPES):
            for noise in NOISES:
                for i in range(per):
                    rng = np.random.default_rng([MASTER_SEED, si, noise, i])
                    length = LENGTHS[i % len(LENGTHS)]
                    shape_seed, noise_seed = (int(x) for x in rng.integers(0, 2**31, size=2))
                    ts, truth = shape_series(shape, length, rng, shape_seed)
                    ts = combine(ts, noise_normal(length, mean=0.0, sigma=float(noise), seed=noise_seed))
                    rec = {
                        "name": f"{shape}-s{noise}-{i:02d}",
                        "shape": shape,
                        "noise": noise,
                        # 6 decimals: the noise is >= 2, and every tool reads these same values.
                        "values": [round(float(v), 6) for v in ts.data],
                        "truth": sorted(int(t) for t in truth),
                    }
                    f.write(json.dumps(rec, separators=(",", ":")) + "\n")
                    n += 1
    print(f"wrote {n} series ({len(SHAPES)} shapes x {len(NOISES)} noise levels x {per}) to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
