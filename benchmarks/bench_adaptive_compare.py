"""The adaptive paired comparison against the fixed design: cases used and wrong verdicts.

``assay run --baseline-agent`` feeds each case's difference of pass rates, in a seeded random
order, to the betting confidence sequence of the mean difference and stops once its interval
settles (drop shown: FAIL; no drop of delta: PASS), or at the end of the suite (INCONCLUSIVE).
The fixed design runs every case and applies compare's rule: FAIL when the one-sided paired test
(exact McNemar at K = 1, sign flips otherwise) rejects at alpha, PASS when it does not and its
power at delta reaches 0.8, else INCONCLUSIVE.

Simulated at the statistics level, vectorised over replicates (the adaptive rule through
:func:`assay.stats.simulate_paired_sequence`, checked row by row against the one-at-a-time
sequence in tests/stats/test_paired_simulation.py; the fixed one through
:func:`assay.stats.paired_comparison`, what compare computes). Case pass rates p ~ Beta(2, 1)
(mean 2/3), K trials per case per version; "no change": both versions at p; "a drop of delta":
the current version at p (1 - delta / E[p]), a mean drop of exactly delta = 0.10 points.

Run: ``python benchmarks/bench_adaptive_compare.py`` (about a minute and a half of CPU).
"""

from __future__ import annotations

import math
import time

import numpy as np

from assay.stats import PairedDecision, paired_comparison, simulate_paired_sequence

ALPHA = 0.05
DELTA = 0.10
POWER = 0.80
MEAN_P = 2 / 3
REPS = 400
SEED = 20261204


def _draws(
    rng: np.random.Generator, cases: int, k: int, drop: float
) -> tuple[np.ndarray, np.ndarray]:
    p = rng.beta(2, 1, (REPS, cases))
    base = rng.binomial(k, p)
    current = rng.binomial(k, p * (1 - drop / MEAN_P))
    return base, current


def _fixed(base: np.ndarray, current: np.ndarray, k: int) -> tuple[float, float]:
    """Shares of FAIL and PASS of the fixed design (compare's rule at the full suite)."""
    fails = passes = 0
    n = np.full(base.shape[1], k)
    for r in range(base.shape[0]):
        result = paired_comparison(
            base[r], n, current[r], n, alpha=ALPHA, delta=DELTA, power=POWER, seed=r
        )
        if result.p_value < ALPHA:
            fails += 1
        elif result.power >= POWER:
            passes += 1
    return fails / base.shape[0], passes / base.shape[0]


def main() -> None:
    """Print the table docs/adaptive.md shows."""
    started = time.process_time()
    rng = np.random.default_rng(SEED)
    se = math.sqrt(ALPHA * (1 - ALPHA) / REPS)
    print(
        f"\n### Adaptive paired comparison against the fixed design ({REPS} suites a cell, "
        f"Beta(2, 1) case pass rates, alpha {ALPHA:g}, delta {DELTA:g}; Monte Carlo error of a "
        f"rate near {ALPHA:g}: ±{se:.3f})\n"
    )
    print(
        "| C | K | design | no change: FAIL (wrong) | PASS | mean cases | "
        "drop of delta: PASS (wrong) | FAIL | mean cases |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for cases in (100, 300, 1000):
        for k in (1, 3):
            adaptive: list[str] = []
            fixed: list[str] = []
            for drop in (0.0, DELTA):
                base, current = _draws(rng, cases, k, drop)
                stops = simulate_paired_sequence(
                    (current - base) / k, confidence=1 - ALPHA, delta=DELTA
                )
                fail = stops.share(PairedDecision.DROP)
                ok = stops.share(PairedDecision.NO_DROP)
                fixed_fail, fixed_pass = _fixed(base, current, k)
                used = f"{stops.cases.mean():.0f}"
                if drop == 0:
                    adaptive += [f"{fail:.3f}", f"{ok:.3f}", used]
                    fixed += [f"{fixed_fail:.3f}", f"{fixed_pass:.3f}", f"{cases}"]
                else:
                    adaptive += [f"{ok:.3f}", f"{fail:.3f}", used]
                    fixed += [f"{fixed_pass:.3f}", f"{fixed_fail:.3f}", f"{cases}"]
            print(f"| {cases:,} | {k} | adaptive | " + " | ".join(adaptive) + " |")
            print(f"| {cases:,} | {k} | fixed | " + " | ".join(fixed) + " |")
    print(f"\n({time.process_time() - started:.0f} s of CPU)")


if __name__ == "__main__":
    main()
