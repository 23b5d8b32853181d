"""Type-I error and power of ``compare`` when both versions were run adaptively.

Run: ``.venv/bin/python benchmarks/bench_anytime_compare.py``. Each version's trials are
simulated and stopped by ``assay run``'s own rule (the confidence sequence of
``pass_rate_sequence``, threshold 0.8, stopping as soon as its interval lies on one side of the
threshold, or at the maximum), all runs of a cell at once. Printed:

* type-I error (both versions at the same true rate): the fixed-n tests ``compare`` used before
  any anytime test (Boschloo, its default, and Fisher), with the stopped counts taken as if
  fixed, beside the anytime-valid test it uses (``assay.stats.DropSequence``: its e-process
  read after every pair of trials, as ``compare`` reads it), each with its Monte Carlo standard
  error; and the exact level of Boschloo at a fixed n = maximum for reference;
* the anytime test's exact type-I error at fixed sizes, looked at after every pair;
* power to show a drop of 0.10, both versions at a fixed n = maximum: Boschloo (exact), the
  anytime test (exact), and two oracles that know both true rates — the likelihood ratio of
  the true pair against the best pair of the null, read once at the end (exact), and the
  growth-rate-optimal e-value for pairs (Turner, Ly & Grünwald 2024), read after every pair
  (simulated); then adaptive runs judged by the anytime test (simulated), with the mean
  trials and pairs they used.

``--speed``: instead, the seconds ``DropSequence(0.95).test`` takes (its e-value and both ends
of the drop's interval) at 1,000 to 1,000,000 pairs, both versions at 0.9 → 0.8 and at 0.9 →
0.9, and the process's peak resident memory after each; up to ``--reference-up-to`` pairs
(20,000 by default) beside it the same figures from every pair's crowd computed at every drop
the root finder asks for (the computation it replaced), checked equal bit for bit.

Boschloo's regions are computed per pair of stopped sizes (cached); at maximum 200 there are
thousands of pairs, so by default its figure is computed for maxima up to 100
(``--boschloo-up-to 200`` for all, about five more minutes). Each cell has its own seeded
stream, so a cell's figures are the same whichever cells are run.
"""

from __future__ import annotations

import argparse
import math
import resource
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from assay.stats import DropSequence, pass_rate_sequence, rejection_region

THRESHOLD = 0.8
ALPHA = 0.05
DELTA = 0.10
IntArray = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


def stopped_runs(
    rng: np.random.Generator, p: float, max_trials: int, runs: int
) -> tuple[Bools, IntArray]:
    """Outcomes (``runs × max_trials``, in run order) and trials used of ``runs`` adaptive
    runs at true rate ``p``, stopped as ``run`` does."""
    sequence = pass_rate_sequence(THRESHOLD, 0.95, max_trials)
    outcomes = rng.random((runs, max_trials)) < p
    n = np.arange(1, max_trials + 1)
    moved = sequence.side(np.cumsum(outcomes, axis=1), n[None, :], THRESHOLD) != 0
    moved[:, -1] = True
    return outcomes, (moved.argmax(axis=1) + 1).astype(np.int64)


def passes(outcomes: Bools, n: IntArray) -> IntArray:
    """Passing trials among the first ``n`` of each run."""
    return np.cumsum(outcomes, axis=1)[np.arange(n.size), n - 1].astype(np.int64)


def fisher_rejects(sb: IntArray, nb: IntArray, sc: IntArray, nc: IntArray) -> Bools:
    """One-sided Fisher at ALPHA: P(X_current <= x_current | margins), vectorised."""
    p = sps.hypergeom.cdf(sc, nb + nc, sb + sc, nc)
    return np.asarray(p < ALPHA)


def boschloo_rejects(sb: IntArray, nb: IntArray, sc: IntArray, nc: IntArray) -> Bools:
    """One-sided Boschloo at ALPHA, by its cached rejection region per pair of sizes."""
    out = np.zeros(sb.size, dtype=bool)
    sizes = nb * 100_000 + nc
    for key in np.unique(sizes):
        rows = np.flatnonzero(sizes == key)
        region = rejection_region(int(key // 100_000), int(key % 100_000), ALPHA, "boschloo")
        out[rows] = region[sb[rows], sc[rows]]
    return out


def anytime_rejects(baseline: Bools, nb: IntArray, current: Bools, nc: IntArray) -> Bools:
    """The anytime-valid test ``compare`` uses on adaptive runs: did its e-process reach
    1/alpha at any pair of the first ``min(nb, nc)``?"""
    log_e = DropSequence(1 - ALPHA).log_e_process(baseline, current)
    seen = np.arange(log_e.shape[1])[None, :] < np.minimum(nb, nc)[:, None]
    return np.asarray((seen & (log_e >= -math.log(ALPHA))).any(axis=1))


def oracle_end(n: int, rate_b: float, rate_c: float) -> float:
    """Exact power of the likelihood ratio of the true pair against the null's best pair
    (``p_c >= p_b``), both versions at ``n`` trials, read once at the end."""
    x = np.arange(n + 1, dtype=np.float64)
    xb, xc = x[:, None], x[None, :]

    def log_lik(s: npt.NDArray[np.float64], p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        p = np.clip(p, 1e-300, 1 - 1e-16)
        return np.asarray(s * np.log(p) + (n - s) * np.log1p(-p))

    pooled = (xb + xc) / (2 * n)
    null = np.where(
        xc < xb,
        log_lik(xb, pooled) + log_lik(xc, pooled),
        log_lik(xb, xb / n) + log_lik(xc, xc / n),
    )
    rate_b_arr, rate_c_arr = np.full_like(xb, rate_b), np.full_like(xc, rate_c)
    log_e = log_lik(xb, rate_b_arr) + log_lik(xc, rate_c_arr) - null
    pmf_b, pmf_c = sps.binom.pmf(x, n, rate_b), sps.binom.pmf(x, n, rate_c)
    return float(pmf_b @ (log_e >= -math.log(ALPHA)) @ pmf_c)


def oracle_pairs(baseline: Bools, current: Bools, rate_b: float, rate_c: float) -> Bools:
    """The growth-rate-optimal e-value for pairs knowing both rates (its null the pooled rate,
    Turner, Ly & Grünwald 2024), looked at after every pair: did it reach 1/alpha?"""
    pooled = (rate_b + rate_c) / 2
    step = np.where(baseline, math.log(rate_b / pooled), math.log((1 - rate_b) / (1 - pooled)))
    step = step + np.where(
        current, math.log(rate_c / pooled), math.log((1 - rate_c) / (1 - pooled))
    )
    return np.asarray((np.cumsum(step, axis=1) >= -math.log(ALPHA)).any(axis=1))


def _cell_rng(seed: int, max_trials: int, p: float) -> np.random.Generator:
    # One stream per cell: a cell's figures do not depend on which other cells were run.
    return np.random.default_rng([seed, max_trials, round(1000 * p)])


def _rate(hits: Bools) -> str:
    r = float(hits.mean())
    return f"{100 * r:5.2f}% ± {100 * math.sqrt(r * (1 - r) / hits.size):.2f}"


def type_one(args: argparse.Namespace) -> None:
    print(
        f"\ntype-I error, both versions adaptive at the same rate ({args.pairs:,} pairs a cell; "
        f"± one Monte Carlo standard error); alpha {ALPHA}"
    )
    print(
        f"{'max':>4} {'p':>5} {'mean n':>7} {'boschloo (old)':>16} {'fisher (old)':>16} "
        f"{'anytime (now)':>16} {'boschloo fixed n':>17}"
    )
    for max_trials in args.maxima:
        for p in args.rates:
            start = time.perf_counter()
            rng = _cell_rng(args.seed, max_trials, p)
            b, nb = stopped_runs(rng, p, max_trials, args.pairs)
            c, nc = stopped_runs(rng, p, max_trials, args.pairs)
            sb, sc = passes(b, nb), passes(c, nc)
            old = (
                _rate(boschloo_rejects(sb, nb, sc, nc))
                if max_trials <= args.boschloo_up_to
                else "—"
            )
            fisher = _rate(fisher_rejects(sb, nb, sc, nc))
            new = _rate(anytime_rejects(b, nb, c, nc))
            region = rejection_region(max_trials, max_trials, ALPHA, "boschloo")
            pmf = sps.binom.pmf(np.arange(max_trials + 1), max_trials, p)
            fixed = float(pmf @ region @ pmf)
            print(
                f"{max_trials:>4} {p:>5.2f} {np.r_[nb, nc].mean():>7.1f} {old:>16} "
                f"{fisher:>16} {new:>16} {100 * fixed:>16.2f}%"
                f"   ({time.perf_counter() - start:.1f} s)",
                flush=True,
            )


def peeking(args: argparse.Namespace) -> None:
    sequence = DropSequence(1 - ALPHA)
    sizes = (100, 500, 2000)
    print(
        "\ntype-I error of the anytime test, both versions at the same rate and n trials, "
        "looked at after every pair (exact)"
    )
    print(f"{'p':>5} " + " ".join(f"{f'n = {n}':>10}" for n in sizes))
    for p in args.rates:
        found = [sequence.rejection_probability(n, n, p, p) for n in sizes]
        print(f"{p:>5.2f} " + " ".join(f"{100 * f:>9.2f}%" for f in found), flush=True)


def power(args: argparse.Namespace) -> None:
    print(
        f"\npower to show a drop of {DELTA:.2f} (baseline rate p, current p - {DELTA:.2f}); "
        f"simulated cells: {args.pairs:,} pairs"
    )
    print(
        f"{'max':>4} {'p':>5} {'boschloo':>9} {'anytime':>8} {'oracle, end':>12} "
        f"{'oracle, pairs':>15} {'adaptive, anytime':>18} {'mean n':>7} {'mean pairs':>11}"
    )
    print(f"{'':>10} {'fixed n = max: exact':-^31} {'(simulated)':>15}")
    sequence = DropSequence(1 - ALPHA)
    for max_trials in args.maxima:
        for p in (0.8, 0.9, 0.95):
            rng = _cell_rng(args.seed + 1, max_trials, p)
            pmf_b = sps.binom.pmf(np.arange(max_trials + 1), max_trials, p)
            pmf_c = sps.binom.pmf(np.arange(max_trials + 1), max_trials, p - DELTA)
            region = rejection_region(max_trials, max_trials, ALPHA, "boschloo")
            fixed = float(pmf_b @ region @ pmf_c)
            fixed_anytime = sequence.power(max_trials, max_trials, p, DELTA)
            end = oracle_end(max_trials, p, p - DELTA)
            b = rng.random((args.pairs, max_trials)) < p
            c = rng.random((args.pairs, max_trials)) < p - DELTA
            pairs = _rate(oracle_pairs(b, c, p, p - DELTA))
            b, nb = stopped_runs(rng, p, max_trials, args.pairs)
            c, nc = stopped_runs(rng, p - DELTA, max_trials, args.pairs)
            adaptive = _rate(anytime_rejects(b, nb, c, nc))
            print(
                f"{max_trials:>4} {p:>5.2f} {100 * fixed:>8.1f}% {100 * fixed_anytime:>7.1f}% "
                f"{100 * end:>11.1f}% {pairs:>15} {adaptive:>18} {np.r_[nb, nc].mean():>7.1f} "
                f"{np.minimum(nb, nc).mean():>11.1f}",
                flush=True,
            )


def exhaustive(sequence: DropSequence, baseline: Bools, current: Bools) -> tuple[float, ...]:
    """``(e_value, p_value, low, high)`` as computed before the search: every pair's crowd at
    every drop the root finder asks for (the written-out test of the unit tests)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "stats"))
    from test_drop_sequence import _reference

    return _reference(sequence, baseline, current)


def speed(args: argparse.Namespace) -> None:
    print("\nseconds of DropSequence(0.95).test, both versions at n trials (one pair a trial)")
    print(
        f"{'pairs':>9} {'rates':>10} {'seconds':>8} {'exhaustive':>11} {'peak RSS':>9} "
        f"{'p-value':>9} {'interval':>19}"
    )
    sequence = DropSequence(0.95)
    for n in args.sizes:
        for rate_c in (0.8, 0.9):
            rng = np.random.default_rng([args.seed, n, round(100 * rate_c)])
            baseline, current = rng.random(n) < 0.9, rng.random(n) < rate_c
            start = time.perf_counter()
            found = sequence.test(baseline, current)
            seconds = time.perf_counter() - start
            before = "—"
            if n <= args.reference_up_to:
                start = time.perf_counter()
                expected = exhaustive(sequence, baseline, current)
                before = f"{time.perf_counter() - start:.2f}"
                figures = (found.e_value, found.p_value, found.low, found.high)
                assert figures == expected, (figures, expected)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"{n:>9,} {f'0.9 → {rate_c}':>10} {seconds:>8.2f} {before:>11} {peak:>6.0f} MB "
                f"{found.p_value:>9.2g} [{found.low:+.5f}, {found.high:+.5f}]",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=8000)
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument("--maxima", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument(
        "--rates", type=float, nargs="+", default=[0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95]
    )
    parser.add_argument("--boschloo-up-to", type=int, default=100)
    parser.add_argument("--only", choices=["type-one", "power"], default=None)
    parser.add_argument("--speed", action="store_true", help="time the test at large sizes")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 20_000, 100_000, 1_000_000])
    parser.add_argument("--reference-up-to", type=int, default=20_000)
    args = parser.parse_args()
    if args.speed:
        speed(args)
        return
    if args.only != "power":
        type_one(args)
        peeking(args)
    if args.only != "type-one":
        power(args)


if __name__ == "__main__":
    main()
