"""Calibration and power of the suite statistics, by seeded simulation.

Run: ``.venv/bin/python benchmarks/bench_suite_stats.py`` (about a minute). Prints, as Markdown
tables for docs/statistics.md:

1. the type-I error of the sign-flip test of a drop (exact McNemar at K = 1) when both
   versions are the same agent;
2. the suite verdict's errors when the threshold equals the true suite mean, and the coverage
   of the asymptotic suite intervals (``--suite-ci t``; the cluster bootstrap at a few sizes);
3. the power of the sign-flip test, of an unpaired comparison of the two clustered means, and
   of per-case Boschloo tests pooled by Holm, at drops of 3, 5 and 10 points, and the cases
   each needs for 80% power, next to what ``assay.stats.plan_paired`` plans.

These are the asymptotic methods: the suite verdict and the paired comparison now read the
betting construction, measured on harder shapes by ``bench_audit_suite_interval.py`` and
``bench_audit_paired.py`` (docs/statistics.md says which table is which).

Case difficulties (each case's true pass rate) come from Beta(2, 1) (mean 2/3, most cases
easy) or from a bimodal mix (half Beta(1, 6), half Beta(12, 1)). Every replicate draws new
cases. The sign-flip tests of thousands of replicates are one matrix product per batch (the
same statistic as ``assay.stats.sign_flip_p_value``, checked against it below); the suite
intervals are ``assay.stats.clustered_mean`` itself.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import numpy as np
from scipy import stats as sps

from assay.stats import (
    adjust_p_values,
    clustered_mean,
    mcnemar_p_value,
    plan_paired,
    regression_p_value,
    sign_flip_p_value,
)

ALPHA = 0.05
Draw = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]


def beta21(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.beta(2, 1, shape)


def bimodal(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    hard = rng.random(shape) < 0.5
    return np.where(hard, rng.beta(1, 6, shape), rng.beta(12, 1, shape))


DIFFICULTIES: dict[str, tuple[Draw, float, float]] = {
    # name: (draw, E[p], E[p(1 - p)])
    "Beta(2, 1)": (beta21, 2 / 3, 2 / 3 - 1 / 2),
    "bimodal": (
        bimodal,
        0.5 * (1 / 7) + 0.5 * (12 / 13),
        0.5 * (1 * 6 / (7 * 8)) + 0.5 * (12 * 1 / (13 * 14)),
    ),
}


def paired_p_values(
    rng: np.random.Generator, base: np.ndarray, current: np.ndarray, k: int, flips: int
) -> np.ndarray:
    """One-sided p-values of a drop for each replicate (row): McNemar at K = 1, else sign flips."""
    d = (current - base) / k
    if k == 1:
        drops, gains = (d < 0).sum(axis=1), (d > 0).sum(axis=1)
        return np.where(drops + gains > 0, sps.binom.sf(drops - 1, drops + gains, 0.5), 1.0)
    out = np.empty(d.shape[0])
    absolute = np.abs(d)
    observed = d.sum(axis=1)
    tolerance = 1e-9 * np.maximum(1.0, absolute.sum(axis=1))
    for start in range(0, d.shape[0], 500):
        rows = slice(start, start + 500)
        signs = np.where(rng.random((flips, d.shape[1])) < 0.5, 1.0, -1.0)
        flipped = signs @ absolute[rows].T  # (flips, replicates)
        hits = (flipped <= observed[rows] + tolerance[rows]).sum(axis=0)
        out[rows] = (1 + hits) / (1 + flips)
    return out


def check_against_library(rng: np.random.Generator) -> None:
    p = beta21(rng, (1, 60))
    base, current = rng.binomial(3, p), rng.binomial(3, p)
    ours = paired_p_values(rng, base, current, 3, 20000)[0]
    lib, error, _ = sign_flip_p_value((current[0] - base[0]) / 3, seed=1, resamples=20000)
    assert error is not None and abs(ours - lib) < 5 * error, (ours, lib)
    b1, c1 = rng.binomial(1, p), rng.binomial(1, p)
    drops, gains = int(((c1 - b1) < 0).sum()), int(((c1 - b1) > 0).sum())
    assert math.isclose(paired_p_values(rng, b1, c1, 1, 0)[0], mcnemar_p_value(drops, gains))


def type_one(reps: int, flips: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    se = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    print(f"\n### Paired test under the null ({reps} replicates each; MC error ±{se:.4f})\n")
    print("| difficulty | cases C | K = 1 (McNemar) | K = 3 (sign flip) | K = 5 (sign flip) |")
    print("|---|---|---|---|---|")
    for name, (draw, _, _) in DIFFICULTIES.items():
        for cases in (30, 100, 300, 1000):
            cells = []
            for k in (1, 3, 5):
                p = draw(rng, (reps, cases))
                base, current = rng.binomial(k, p), rng.binomial(k, p)
                cells.append(np.mean(paired_p_values(rng, base, current, k, flips) < ALPHA))
            print(f"| {name} | {cases:,} | " + " | ".join(f"{c:.4f}" for c in cells) + " |")


def suite_verdicts(reps: int, boot_reps: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    se = math.sqrt(0.95 * 0.05 / reps)
    print(
        f"\n### Suite interval at the true suite mean ({reps} replicates each; coverage MC "
        f"error ±{se:.4f}; each false verdict should be at most 0.025)\n"
    )
    print("| difficulty | C | K | coverage (cluster-t) | false FAIL | false PASS |")
    print("|---|---|---|---|---|---|")
    for name, (draw, mean, _) in DIFFICULTIES.items():
        for cases in (30, 100, 300, 1000):
            for k in (1, 3, 5):
                sizes = np.full(cases, k)
                passed = rng.binomial(k, draw(rng, (reps, cases)))
                lows, highs = np.empty(reps), np.empty(reps)
                for i in range(reps):
                    ci = clustered_mean(passed[i] / k, sizes, method="t").interval
                    lows[i], highs[i] = ci.low, ci.high
                fail, passes = np.mean(highs < mean), np.mean(lows >= mean)
                print(
                    f"| {name} | {cases:,} | {k} | {1 - fail - passes:.4f} | {fail:.4f} | "
                    f"{passes:.4f} |"
                )
    se = math.sqrt(0.95 * 0.05 / boot_reps)
    side = math.sqrt(0.025 * 0.975 / boot_reps)
    print(
        f"\nCluster bootstrap (BCa, 2,000 resamples) against cluster-t on the same data "
        f"({boot_reps} replicates; coverage ±{se:.3f}, each side ±{side:.3f}):\n"
    )
    print(
        "| difficulty | C | K | bootstrap: coverage | false FAIL | false PASS "
        "| cluster-t: coverage | false FAIL | false PASS |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (draw, mean, _) in DIFFICULTIES.items():
        for cases in (30, 100, 300):
            for k in (3, 5):
                sizes = np.full(cases, k)
                passed = rng.binomial(k, draw(rng, (boot_reps, cases)))
                errors = np.zeros((2, 2))
                for i in range(boot_reps):
                    for row, method in enumerate(("bootstrap", "t")):
                        ci = clustered_mean(passed[i] / k, sizes, method=method, seed=i).interval
                        errors[row] += (ci.high < mean, ci.low >= mean)
                errors /= boot_reps
                cells = [f"{1 - e.sum():.3f} | {e[0]:.3f} | {e[1]:.3f}" for e in errors]
                print(f"| {name} | {cases:,} | {k} | " + " | ".join(cells) + " |")


def boschloo_table(k: int) -> np.ndarray:
    table = np.empty((k + 1, k + 1))
    for x1 in range(k + 1):
        for x2 in range(k + 1):
            table[x1, x2] = regression_p_value(x1, k, x2, k, "boschloo")
    return table


GRID = (25, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000)


def power(reps: int, flips: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = 3
    draw, mean, within = DIFFICULTIES["Beta(2, 1)"]
    table = boschloo_table(k)
    print(
        f"\n### Power at K = {k}, Beta(2, 1) difficulties ({reps} replicates per size; "
        "MC error at most ±0.025)\n"
    )
    print(
        "| drop | cases | paired test | unpaired clustered | per-case Boschloo + Holm |\n"
        "|---|---|---|---|---|"
    )
    needed: dict[float, list[int | None]] = {}
    for drop in (0.03, 0.05, 0.10):
        first: list[int | None] = [None, None, None]
        for cases in GRID:
            p = draw(rng, (reps, cases))
            base = rng.binomial(k, p)
            current = rng.binomial(k, np.clip(p - drop, 0, 1))
            paired = np.mean(paired_p_values(rng, base, current, k, flips) < ALPHA)
            # Unpaired: each version's clustered mean and SE, as if the cases were different.
            mb, mc = base / k, current / k
            se = np.sqrt(mb.var(axis=1, ddof=1) / cases + mc.var(axis=1, ddof=1) / cases)
            z = (mc.mean(axis=1) - mb.mean(axis=1)) / se
            unpaired = np.mean(z < -sps.t.ppf(1 - ALPHA, 2 * cases - 2))
            holm = np.mean(
                [
                    adjust_p_values(table[b, c], "holm").min() < ALPHA
                    for b, c in zip(base, current, strict=True)
                ]
            )
            for i, value in enumerate((paired, unpaired, holm)):
                if first[i] is None and value >= 0.8:
                    first[i] = cases
            print(f"| {drop:.2f} | {cases:,} | {paired:.3f} | {unpaired:.3f} | {holm:.3f} |")
            if all(f is not None for f in first[:2]) and cases >= 2 * (first[1] or 0):
                break
        needed[drop] = first
    print("\nCases needed for 80% power (first size in the grid that reached it):\n")
    print("| drop | paired test | unpaired clustered | per-case Boschloo + Holm | plan_paired |")
    print("|---|---|---|---|---|")
    for drop, first in needed.items():
        planned = plan_paired(
            drop, between_case_sd=0.0, within_case_var=2 * within, trials_per_case=[k]
        ).options[0]
        shown = [f"{f:,}" if f is not None else f"> {GRID[-1]:,}" for f in first]
        print(f"| {drop:.2f} | " + " | ".join(shown) + f" | {planned.cases:,} |")
    print(
        f"\nThe smallest per-case Boschloo p-value at K = {k} ({k}/{k} -> 0/{k}) is "
        f"{table[k, 0]:.4f}: Holm's first step needs p < alpha / C, out of reach from C = "
        f"{math.floor(ALPHA / table[k, 0]) + 1} cases on."
    )
    del mean


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--boot-reps", type=int, default=1000)
    parser.add_argument("--power-reps", type=int, default=400)
    parser.add_argument("--flips", type=int, default=999)
    parser.add_argument("--seed", type=int, default=20260101)
    args = parser.parse_args()
    start = time.process_time()
    check_against_library(np.random.default_rng(args.seed))
    type_one(args.reps, args.flips, args.seed + 1)
    suite_verdicts(args.reps, args.boot_reps, args.seed + 2)
    power(args.power_reps, args.flips, args.seed + 3)
    print(f"\nCPU time: {time.process_time() - start:.1f} s")


if __name__ == "__main__":
    main()
