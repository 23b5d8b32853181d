"""The paired comparison on the audit's scenarios: type-I error, non-inferiority, stated power.

Run: ``.venv/bin/python benchmarks/bench_audit_paired.py`` (a few minutes; ``--quick`` for a
smaller run). Prints Markdown tables for docs/statistics.md ("Measured: the suite verdict and
the paired comparison on hard shapes"). Every figure is ``assay.stats.paired_comparison``
itself, one call per simulated suite; every rate is printed with its Monte Carlo standard
error.

1. **Non-exchangeable null.** The baseline passes 90% of cases always and fails 10% always;
   the current version passes every case with probability 0.9 per trial: the mean difference
   is 0, but within a case the two versions are not exchangeable. Share of ``p_value`` <
   alpha (should be at most alpha = 0.05), beside the sign-flip test the comparison used
   before (``sign_flip_p_value``).
2. **Non-inferiority, a drop concentrated in a few cases.** The baseline passes every case;
   the change breaks each case with probability 0.05 (a random 5%): the true mean drop is
   exactly the margin M = 0.05. Share of ``drop_upper`` < M — a ``--margin`` PASS, false here
   (should be at most alpha), beside the one-sided paired t bound used before.
3. **Stated against realised power.** Beta(2, 1) or ``ceiling`` case rates (70% at 1.0, 10% at
   0, 20% Beta(2, 2)), K = 3 trials per version, the current version's rates scaled by
   1 − δ/E[p] (a mean drop of exactly δ = 0.10): the mean ``power`` stated at ``delta`` = δ
   against the share of suites whose ``p_value`` < alpha.
"""

from __future__ import annotations

import argparse
import itertools
import math

import numpy as np
from scipy import stats as sps

from assay.stats import paired_comparison, sign_flip_p_value

SEED = 20261207
ALPHA = 0.05


def share(hits: np.ndarray) -> tuple[float, float]:
    p = float(np.mean(hits))
    return p, math.sqrt(max(p * (1 - p), 1e-12) / hits.size)


def fmt(hits: np.ndarray) -> str:
    p, se = share(hits)
    if p == 0:  # no hit: the one-sided 95% upper bound, 3 / n (the "rule of three")
        return f"0 (< {3 / hits.size:.4f})"
    return f"{p:.4f} ± {se:.4f}"


def non_exchangeable(reps: int) -> None:
    rng = np.random.default_rng(SEED)
    print(
        f"\n### Non-exchangeable null: share of p < {ALPHA} ({reps:,} replicates per cell; "
        "± Monte Carlo SE)\n"
    )
    print("| C | K | paired_comparison (test) | sign-flip test (before) |")
    print("|---|---|---|---|")
    for cases, k in [(10, 3), (30, 1), (30, 3), (30, 5), (100, 3), (300, 3)]:
        ours, before = np.empty(reps, bool), np.empty(reps, bool)
        tests = set()
        n = np.full(cases, k)
        for i in range(reps):
            base = np.where(rng.random(cases) < 0.9, k, 0)
            current = rng.binomial(k, 0.9, cases)
            result = paired_comparison(base, n, current, n, alpha=ALPHA, seed=i)
            tests.add(result.test)
            ours[i] = result.p_value < ALPHA
            p, _, _ = sign_flip_p_value((current - base) / k, seed=i, resamples=999)
            before[i] = p < ALPHA
        print(f"| {cases} | {k} | {fmt(ours)} ({', '.join(sorted(tests))}) | {fmt(before)} |")


def concentrated_drop(reps: int) -> None:
    rng = np.random.default_rng(SEED + 1)
    margin = 0.05
    print(
        f"\n### Non-inferiority at M = {margin}, the true drop = M from 5% of cases breaking: "
        f"share of false PASS (drop_upper < M; {reps:,} replicates per cell)\n"
    )
    print("| C | K | paired_comparison drop_upper | one-sided paired t (before) |")
    print("|---|---|---|---|")
    for cases, k in [(30, 3), (100, 1), (100, 3), (300, 3), (1000, 3)]:
        ours, before = np.empty(reps, bool), np.empty(reps, bool)
        n = np.full(cases, k)
        base = n.copy()
        for i in range(reps):
            current = np.where(rng.random(cases) < 0.05, 0, k)
            result = paired_comparison(base, n, current, n, alpha=ALPHA, seed=i)
            ours[i] = result.drop_upper < margin
            d = (current - base) / k
            sd = float(d.std(ddof=1))
            # the bound used before: -mean + t quantile · SE; with no spread, + 1 − alpha^(1/C)
            spread = (
                sps.t.ppf(1 - ALPHA, cases - 1) * sd / math.sqrt(cases)
                if sd > 0
                else 1 - ALPHA ** (1 / cases)
            )
            before[i] = -float(d.mean()) + spread < margin
        print(f"| {cases} | {k} | {fmt(ours)} | {fmt(before)} |")


def ceiling(rng: np.random.Generator, cases: int) -> np.ndarray:
    """70% of cases at 1.0, 10% at 0, 20% with a Beta(2, 2) rate (mean 0.8)."""
    u = rng.random(cases)
    return np.where(u < 0.7, 1.0, np.where(u < 0.8, 0.0, rng.beta(2, 2, cases)))


SHAPES = {
    "Beta(2, 1)": (lambda rng, cases: rng.beta(2, 1, cases), 2 / 3),
    "ceiling": (ceiling, 0.8),
}


def stated_power(reps: int) -> None:
    rng = np.random.default_rng(SEED + 2)
    delta, k = 0.10, 3
    print(
        f"\n### Stated against realised power at δ = {delta} (K = {k}; the current version's "
        f"rates scaled by 1 − δ/E[p]; {reps:,} replicates per row)\n"
    )
    print("| cases | C | stated (mean ± SE) | realised (± SE) | difference / SE |")
    print("|---|---|---|---|---|")
    for (name, (draw, mean_rate)), cases in itertools.product(SHAPES.items(), (30, 40, 100, 300)):
        stated, realised = np.empty(reps), np.empty(reps, bool)
        n = np.full(cases, k)
        for i in range(reps):
            p = draw(rng, cases)
            base = rng.binomial(k, p)
            current = rng.binomial(k, p * (1 - delta / mean_rate))
            result = paired_comparison(base, n, current, n, alpha=ALPHA, delta=delta, seed=i)
            stated[i], realised[i] = result.power, result.p_value < ALPHA
        mean, mean_se = float(stated.mean()), float(stated.std(ddof=1) / math.sqrt(reps))
        hit, hit_se = share(realised)
        z = (mean - hit) / math.sqrt(mean_se**2 + hit_se**2)
        print(
            f"| {name} | {cases} | {mean:.3f} ± {mean_se:.3f} | {hit:.3f} ± {hit_se:.3f} "
            f"| {z:+.1f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--power-replicates", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="300 / 200 replicates")
    parser.add_argument("--parts", default="null,margin,power", help="which tables to print")
    args = parser.parse_args()
    reps, power_reps = (300, 200) if args.quick else (args.replicates, args.power_replicates)
    parts = set(args.parts.split(","))
    if "null" in parts:
        non_exchangeable(reps)
    if "margin" in parts:
        concentrated_drop(reps)
    if "power" in parts:
        stated_power(power_reps)


if __name__ == "__main__":
    main()
