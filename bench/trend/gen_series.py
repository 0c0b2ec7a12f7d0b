"""Make the labelled series for bench/trend_vs_otava.sh.

Runs in bench/out/venv-otava (otava-test-data==0.1.9 and numpy live there). Writes one JSON
object per line: {"name", "shape", "noise", "values", "truth"}, where truth holds the 0-based
index of the first point of every new segment (empty when nothing changes).

The first seven shapes are a noise-free shape from otava-test-data plus otava-test-data's
noise_normal (mean 0, sigma = the noise level, clipped at 4 sigma by the generator), joined with
its combine(). The last six are this project's own (see OWN_SHAPES): what a CI trend meets and
otava-test-data does not make. Positions, directions and seeds come from one seeded numpy
Generator per series, so the file is the same on every run and machine (numpy 2.2's PCG64).

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
# This project's own shapes, made with numpy alone, noise sigma = the noise level:
# - late: a step of 3, 4 or 5 sigma whose new segment is the newest 5-8 points (the run a team
#   looks at after a merge); late2: the same at 2 sigma.
# - bursts: no change, but 2-4 bursts of 1-3 consecutive points at 1.5-5x the level (a noisy
#   neighbour, a GC storm), at least 20 points apart; burst-step: the same bursts and one real
#   4 sigma step at least 15 points from any burst, which they must not hide.
# - ar1: no change, AR(1) noise with phi = 0.5 (a slowly drifting machine), sigma its stationary
#   spread; ar1-step: the same noise and one 6 sigma step.
OWN_SHAPES = ("late", "late2", "bursts", "burst-step", "ar1", "ar1-step")
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


def own_series(shape, length, sigma, rng):
    """One of OWN_SHAPES with its noise, and its truth."""
    if shape in ("ar1", "ar1-step"):
        phi = 0.5
        shocks = rng.normal(0.0, sigma * np.sqrt(1 - phi * phi), size=length)
        noise = np.empty(length)
        noise[0] = rng.normal(0.0, sigma)  # drawn from the stationary law: no warm-up transient
        for i in range(1, length):
            noise[i] = phi * noise[i - 1] + shocks[i]
    else:
        noise = rng.normal(0.0, sigma, size=length)
    level = np.full(length, BASE)
    truth = []
    if shape in ("late", "late2"):
        size = 2.0 if shape == "late2" else float(rng.choice([3.0, 4.0, 5.0]))
        c = length - int(rng.integers(5, 9))  # the newest 5-8 points are the new segment
        level[c:] += sign(rng) * size * sigma
        truth = [c]
    elif shape == "ar1-step":
        (c,) = pick(rng, length, 1, 0)
        level[c:] += sign(rng) * 6.0 * sigma
        truth = [c]
    values = level + noise
    if shape in ("bursts", "burst-step"):
        bursts = pick(rng, length, int(rng.integers(2, 5)), 20)
        if shape == "burst-step":
            while True:
                (c,) = pick(rng, length, 1, 0)
                if all(c < b - 15 or c > b + 3 + 15 for b in bursts):
                    break
            values[c:] += sign(rng) * 4.0 * sigma
            truth = [c]
        for b in bursts:
            width = int(rng.integers(1, 4))
            values[b:b + width] *= rng.uniform(1.5, 5.0)
    return values, truth


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
        for si, shape in enumerate(OWN_SHAPES):
            for noise in NOISES:
                for i in range(per):
                    # Seeds apart from the shapes above (100 + si), so adding a shape here
                    # leaves every earlier series as it was.
                    rng = np.random.default_rng([MASTER_SEED, 100 + si, noise, i])
                    length = LENGTHS[i % len(LENGTHS)]
                    values, truth = own_series(shape, length, float(noise), rng)
                    rec = {"name": f"{shape}-s{noise}-{i:02d}", "shape": shape, "noise": noise,
                           "values": [round(float(v), 6) for v in values], "truth": truth}
                    f.write(json.dumps(rec, separators=(",", ":")) + "\n")
                    n += 1
    shapes = len(SHAPES) + len(OWN_SHAPES)
    print(f"wrote {n} series ({shapes} shapes x {len(NOISES)} noise levels x {per}) to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
