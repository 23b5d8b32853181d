"""Adaptive stopping vs a fixed number of trials: realised error rates and trials used.

Threshold 0.8, delta 0.1 (indifference zone [0.8, 0.9]), alpha 0.05, beta 0.2. For each true
pass rate, simulates the sequential tests (fixed seed) and prints P(PASS), P(FAIL),
P(INCONCLUSIVE) and the mean number of trials, next to the fixed-N exact binomial test with the
same nominal error rates. Run: ``python benchmarks/bench_adaptive.py [--reps 20000]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from assay.stats import (
    fixed_sample_design,
    operating_characteristics,
    sequential_test,
    simulate_sequential,
)

THRESHOLD, DELTA, ALPHA, BETA = 0.8, 0.1, 0.05, 0.2
RATES = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=20_000, help="simulated runs per rate")
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args()
    started = time.perf_counter()

    p0, p1 = THRESHOLD, THRESHOLD + DELTA
    fixed = fixed_sample_design(p0, p1, ALPHA, BETA)
    print(
        f"threshold {THRESHOLD}, delta {DELTA} (indifference zone [{p0:.2f}, {p1:.2f}]), "
        f"alpha {ALPHA}, beta {BETA}, {args.reps} simulated runs per rate\n"
        f"fixed-N exact binomial test: n = {fixed.n}, PASS iff >= {fixed.critical} pass "
        f"(realised alpha {fixed.alpha:.3f}, beta {fixed.beta:.3f})\n"
    )
    designs = [
        ("sprt", fixed.n),
        ("sprt", math.ceil(1.5 * fixed.n)),
        ("confidence-sequence", math.ceil(1.5 * fixed.n)),
    ]
    savings: dict[str, list[float]] = {}
    for method, max_trials in designs:
        test = sequential_test(
            method, THRESHOLD, delta=DELTA, alpha=ALPHA, beta=BETA, max_trials=max_trials
        )
        label = f"{method}, max {max_trials}"
        print(f"== {label}")
        print(
            f"{'true p':>6} {'side':>8} {'P(PASS)':>8} {'P(FAIL)':>8} {'P(INC)':>7} "
            f"{'error':>7} {'bound':>6} {'ok':>3} {'mean n':>7} {'exact n':>7} "
            f"{'fixed P(PASS)':>13} {'saved':>6}"
        )
        for i, p in enumerate(RATES):
            decisions, trials = simulate_sequential(test, p, args.reps, args.seed + i)
            exact = operating_characteristics(test, p)
            p_pass = float(np.mean(decisions == 1))
            p_fail = float(np.mean(decisions == -1))
            p_inc = 1 - p_pass - p_fail
            fixed_pass = 1 - _binom_cdf(fixed.critical - 1, fixed.n, p)
            saved = 1 - float(trials.mean()) / fixed.n
            if p <= p0:
                side, error, bound = "failing", p_pass, ALPHA
            elif p >= p1:
                side, error, bound = "passing", p_fail, BETA
            else:
                side, error, bound = "zone", math.nan, math.nan
            se = math.sqrt(max(bound * (1 - bound), 1e-12) / args.reps) if bound == bound else 0
            ok = "" if side == "zone" else ("yes" if error <= bound + 3 * se else "NO")
            if side != "zone":
                savings.setdefault(label, []).append(saved)
            print(
                f"{p:>6.2f} {side:>8} {p_pass:>8.3f} {p_fail:>8.3f} {p_inc:>7.3f} "
                f"{error:>7.3f} {bound:>6.2f} {ok:>3} {trials.mean():>7.1f} "
                f"{exact.expected_trials:>7.1f} {fixed_pass:>13.3f} {saved:>6.0%}"
            )
        print()
    print("mean saving in trials vs the fixed-N test, true rates outside the indifference zone:")
    for label, values in savings.items():
        print(f"  {label:<32} {np.mean(values):.0%}  (target >= 40%)")
    print(f"\n({time.perf_counter() - started:.1f} s)")


def _binom_cdf(k: int, n: int, p: float) -> float:
    from scipy import stats

    return float(stats.binom.cdf(k, n, p))


if __name__ == "__main__":
    main()
