"""Time the regression verdict of a 200-test suite with 200 trials per version.

Run: ``.venv/bin/python benchmarks/bench_regression.py``. Prints the time of
``assay.verdict.regression_test`` for every test (cold: rejection regions computed in the run;
warm: cached), next to a baseline measured in the same run: one ``scipy.stats.fisher_exact``
call per test on the same tables (a p-value only, no power), and scipy's ``boschloo_exact`` on
a few of the tables, extrapolated to the suite.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import stats as sps

from assay.judge import regression_test


def tables(n_tests: int, n: int, seed: int) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.5, 0.98, n_tests)
    drop = rng.choice([0.0, 0.0, 0.05, 0.1, 0.2], n_tests)
    x1 = rng.binomial(n, base)
    x2 = rng.binomial(n, np.clip(base - drop, 0, 1))
    return [(int(a), int(b)) for a, b in zip(x1, x2, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scipy-boschloo-sample", type=int, default=3)
    args = parser.parse_args()
    n, suite = args.trials, tables(args.tests, args.trials, args.seed)
    print(f"suite: {args.tests} tests x {n} trials per version (varied rates and drops)")

    start = time.perf_counter()
    for x1, x2 in suite:
        sps.fisher_exact([[x1, x2], [n - x1, n - x2]], alternative="greater")
    baseline = time.perf_counter() - start
    print(f"baseline  scipy fisher_exact loop (p-value only): {baseline:8.3f} s")

    for test in ("fisher", "boschloo", "barnard"):
        for label in ("cold", "warm"):
            start = time.perf_counter()
            verdicts = [regression_test(x1, n, x2, n, test=test).verdict for x1, x2 in suite]
            took = time.perf_counter() - start
            counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
            print(
                f"assay     regression_test {test:<8} {label}: {took:8.3f} s "
                f"({took / baseline:6.1f}x baseline)  {counts}"
            )

    # Error exclusion gives every test its own sizes: one rejection region per (n1, n2).
    rng = np.random.default_rng(args.seed + 1)
    sizes = [(int(a), int(b)) for a, b in rng.integers(n - 15, n + 1, (len(suite), 2))]
    varied = [(min(x1, a), a, min(x2, b), b) for (x1, x2), (a, b) in zip(suite, sizes, strict=True)]
    start = time.perf_counter()
    for x1, n1, x2, n2 in varied:
        regression_test(x1, n1, x2, n2, test="boschloo")
    took = time.perf_counter() - start
    distinct = len(set(sizes))
    print(
        f"assay     regression_test boschloo, sizes varied in [{n - 15}, {n}] "
        f"({distinct} distinct pairs), cold: {took:8.3f} s ({took / baseline:6.1f}x baseline)"
    )

    k = args.scipy_boschloo_sample
    if k:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for x1, x2 in suite[:k]:
                sps.boschloo_exact([[x1, x2], [n - x1, n - x2]], alternative="greater")
        per_table = (time.perf_counter() - start) / k
        print(
            f"reference scipy boschloo_exact: {per_table:.3f} s per table, about "
            f"{per_table * len(suite):.0f} s for the suite (p-values only, no power)"
        )


if __name__ == "__main__":
    main()
