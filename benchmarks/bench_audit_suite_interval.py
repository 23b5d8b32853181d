"""The suite interval at the true suite mean, on the audit's shapes: false PASS and false FAIL.

Run: ``.venv/bin/python benchmarks/bench_audit_suite_interval.py`` (about two minutes; ``--quick``
for a smaller run). Prints Markdown tables for docs/statistics.md ("Measured: the suite verdict
and the paired comparison on hard shapes").

Each replicate draws C cases from a population of cases (each case's true pass rate), runs
each K times, and puts the suite threshold at the population's mean: a suite PASS (the
interval's lower end at or above it) is then a false PASS, a FAIL (upper end below) a false
FAIL; each should happen at most (1 − confidence) / 2 of the time. The shapes are those of an
independent audit of issue 47:

* ``mostly-1``: 90% of cases always pass, 10% pass 20% of the time (mean 0.92);
* ``ceiling``: 70% of cases at 1.0, 10% at 0, 20% with a Beta(2, 2) rate (mean 0.80);
* ``Beta(2, 1)``: every case's rate from Beta(2, 1) (mean 2/3, most cases easy).

The default interval (``betting``) is computed row-wise by the library's own bound
(``unit_lower_bounds``, the cases in ``case_order``'s order, as ``clustered_mean`` feeds
them) and checked equal to ``clustered_mean`` on the first replicates; ``t`` and
``bootstrap`` (BCa) are ``clustered_mean`` itself, on fewer replicates.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np

from assay.stats import case_order, clustered_mean, proportion_bounds
from assay.stats.intervals._bounded_mean import unit_lower_bounds

SEED = 20261206
Draw = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]


def mostly_one(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.where(rng.random(shape) < 0.9, 1.0, 0.2)


def ceiling(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    u = rng.random(shape)
    return np.where(u < 0.7, 1.0, np.where(u < 0.8, 0.0, rng.beta(2, 2, shape)))


def beta21(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.beta(2, 1, shape)


SHAPES: dict[str, tuple[Draw, float]] = {
    "mostly-1": (mostly_one, 0.9 + 0.1 * 0.2),
    "ceiling": (ceiling, 0.7 + 0.2 * 0.5),
    "Beta(2, 1)": (beta21, 2 / 3),
}


def betting_rows(rates: np.ndarray, k: int, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """The default suite interval of every row (a suite), as ``clustered_mean`` computes it."""
    side = (1 - confidence) / 2
    cases = rates.shape[1]
    if k == 1:  # one trial per case: Clopper–Pearson of the count (exact)
        low, high = proportion_bounds(rates.sum(axis=1), cases, confidence, "clopper-pearson")
        return np.asarray(low), np.asarray(high)
    x = rates[:, case_order(cases)]
    return unit_lower_bounds(x, side), 1.0 - unit_lower_bounds(1.0 - x, side)


def check_against_library(rates: np.ndarray, k: int, confidence: float) -> None:
    low, high = betting_rows(rates[:5], k, confidence)
    for i in range(5):
        ci = clustered_mean(rates[i], np.full(rates.shape[1], k), confidence).interval
        assert math.isclose(ci.low, low[i], abs_tol=1e-9), (ci, low[i])
        assert math.isclose(ci.high, high[i], abs_tol=1e-9), (ci, high[i])


def cell(rng: np.random.Generator, draw: Draw, cases: int, k: int, reps: int) -> np.ndarray:
    return rng.binomial(k, draw(rng, (reps, cases))) / k


def rate(hits: np.ndarray) -> str:
    share = float(hits.mean())
    if share == 0:  # no hit: the one-sided 95% upper bound, 3 / n (the "rule of three")
        return f"0 (< {3 / hits.size:.4f})"
    se = math.sqrt(share * (1 - share) / hits.size)
    return f"{share:.4f} ± {se:.4f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, default=4000)
    parser.add_argument("--compare", type=int, default=1000, help="replicates of t, bootstrap")
    parser.add_argument("--quick", action="store_true", help="400 / 200 replicates")
    args = parser.parse_args()
    reps, compare = (400, 200) if args.quick else (args.replicates, args.compare)
    rng = np.random.default_rng(SEED)
    print(
        f"\n### Suite interval at the true suite mean ({reps:,} replicates per cell; "
        "rate ± Monte Carlo SE; each side should be at most (1 − confidence) / 2)\n"
    )
    print("| shape | C | K | confidence | false PASS | false FAIL | mean width |")
    print("|---|---|---|---|---|---|---|")
    grid = [
        ("mostly-1", 10, 3), ("mostly-1", 30, 3), ("mostly-1", 100, 1), ("mostly-1", 100, 3),
        ("mostly-1", 300, 3), ("ceiling", 10, 3), ("ceiling", 30, 3), ("ceiling", 100, 3),
        ("ceiling", 300, 1), ("ceiling", 300, 3), ("Beta(2, 1)", 10, 1), ("Beta(2, 1)", 10, 5),
        ("Beta(2, 1)", 30, 3), ("Beta(2, 1)", 100, 3), ("Beta(2, 1)", 300, 1),
        ("Beta(2, 1)", 300, 3),
    ]  # fmt: skip
    for name, cases, k in grid:
        draw, mean = SHAPES[name]
        for confidence in (0.95,) if (cases, k) != (30, 3) else (0.90, 0.95, 0.99):
            rates = cell(rng, draw, cases, k, reps)
            check_against_library(rates, k, confidence)
            low, high = betting_rows(rates, k, confidence)
            print(
                f"| {name} | {cases} | {k} | {confidence:g} | {rate(low >= mean)} | "
                f"{rate(high < mean)} | {float((high - low).mean()):.3f} |"
            )
    print(
        f"\nThe asymptotic intervals on the audit's cells ({compare:,} replicates; "
        "`--suite-ci t` and `--suite-ci bootstrap`, 95%):\n"
    )
    print("| shape | C | K | method | false PASS | false FAIL | mean width |")
    print("|---|---|---|---|---|---|---|")
    for name, cases, k in [("mostly-1", 100, 1), ("mostly-1", 30, 3), ("ceiling", 30, 3)]:
        draw, mean = SHAPES[name]
        rates = cell(rng, draw, cases, k, compare)
        sizes = np.full(cases, k)
        for method in ("t", "bootstrap"):
            cis = [clustered_mean(r, sizes, 0.95, method).interval for r in rates]
            low = np.array([ci.low for ci in cis])
            high = np.array([ci.high for ci in cis])
            print(
                f"| {name} | {cases} | {k} | {method} | {rate(low >= mean)} | "
                f"{rate(high < mean)} | {float((high - low).mean()):.3f} |"
            )


if __name__ == "__main__":
    main()
