"""Type-I error and power of ``compare`` when both versions were run adaptively.

Run: ``.venv/bin/python benchmarks/bench_anytime_compare.py``. Each version's trials are
simulated and stopped by ``assay run``'s own rule (the confidence sequence of
``pass_rate_sequence``, threshold 0.8, stopping as soon as its interval lies on one side of the
threshold, or at the maximum), all runs of a cell at once. Printed:

* type-I error (both versions at the same true rate): the fixed-n tests ``compare`` used before
  (Boschloo, its default, and Fisher), with the stopped counts taken as if fixed, beside the
  anytime-valid test it now uses (``assay.stats.drop_sequence``), each with its Monte Carlo
  standard error; and the exact level of Boschloo at a fixed n = maximum for reference;
* power to show a drop of 0.10: the fixed-n design (both versions run the maximum, Boschloo,
  exact), the anytime test at that fixed n (exact), and adaptive runs judged by the anytime
  test (simulated), with the mean trials the adaptive runs used.

Boschloo's regions are computed per pair of stopped sizes (cached); at maximum 200 there are
thousands of pairs, so by default its figure is computed for maxima up to 100
(``--boschloo-up-to 200`` for all, about five more minutes). Each cell has its own seeded
stream, so a cell's figures are the same whichever cells are run.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from assay.stats import drop_sequence, pass_rate_sequence, rejection_region

THRESHOLD = 0.8
ALPHA = 0.05
IntArray = npt.NDArray[np.int64]


def stopped_runs(
    rng: np.random.Generator, p: float, max_trials: int, runs: int
) -> tuple[IntArray, IntArray]:
    """Passes and trials of ``runs`` adaptive runs at true rate ``p``, stopped as ``run`` does."""
    sequence = pass_rate_sequence(THRESHOLD, 0.95, max_trials)
    passes = np.cumsum(rng.random((runs, max_trials)) < p, axis=1)
    n = np.arange(1, max_trials + 1)
    moved = sequence.side(passes, n[None, :], THRESHOLD) != 0
    moved[:, -1] = True
    stop = moved.argmax(axis=1)
    return passes[np.arange(runs), stop].astype(np.int64), (stop + 1).astype(np.int64)


def fisher_rejects(sb: IntArray, nb: IntArray, sc: IntArray, nc: IntArray) -> npt.NDArray[np.bool_]:
    """One-sided Fisher at ALPHA: P(X_current <= x_current | margins), vectorised."""
    p = sps.hypergeom.cdf(sc, nb + nc, sb + sc, nc)
    return np.asarray(p < ALPHA)


def boschloo_rejects(
    sb: IntArray, nb: IntArray, sc: IntArray, nc: IntArray
) -> npt.NDArray[np.bool_]:
    """One-sided Boschloo at ALPHA, by its cached rejection region per pair of sizes."""
    out = np.zeros(sb.size, dtype=bool)
    sizes = nb * 100_000 + nc
    for key in np.unique(sizes):
        rows = np.flatnonzero(sizes == key)
        region = rejection_region(int(key // 100_000), int(key % 100_000), ALPHA, "boschloo")
        out[rows] = region[sb[rows], sc[rows]]
    return out


def anytime_rejects(
    sb: IntArray, nb: IntArray, sc: IntArray, nc: IntArray, max_trials: int
) -> npt.NDArray[np.bool_]:
    """The anytime-valid test ``compare`` uses on adaptive runs (prior as it chooses it)."""
    sequence = drop_sequence(THRESHOLD, 1 - ALPHA, max_trials)
    return np.asarray(sequence.log_e_value(sb, nb, sc, nc) >= -math.log(ALPHA))


def _cell_rng(seed: int, max_trials: int, p: float) -> np.random.Generator:
    # One stream per cell: a cell's figures do not depend on which other cells were run.
    return np.random.default_rng([seed, max_trials, round(1000 * p)])


def _rate(hits: npt.NDArray[np.bool_]) -> str:
    r = float(hits.mean())
    return f"{100 * r:5.2f}% ± {100 * math.sqrt(r * (1 - r) / hits.size):.2f}"


def type_one(args: argparse.Namespace) -> None:
    print(
        f"\ntype-I error, both versions adaptive at the same rate ({args.pairs:,} pairs a cell; "
        f"± one Monte Carlo standard error); alpha {ALPHA}"
    )
    print(
        f"{'max':>4} {'p':>5} {'mean n':>7} {'boschloo (old)':>16} {'fisher (old)':>16} "
        f"{'anytime (new)':>16} {'boschloo fixed n':>17}"
    )
    for max_trials in args.maxima:
        for p in args.rates:
            start = time.perf_counter()
            rng = _cell_rng(args.seed, max_trials, p)
            sb, nb = stopped_runs(rng, p, max_trials, args.pairs)
            sc, nc = stopped_runs(rng, p, max_trials, args.pairs)
            old = (
                _rate(boschloo_rejects(sb, nb, sc, nc))
                if max_trials <= args.boschloo_up_to
                else "—"
            )
            fisher = _rate(fisher_rejects(sb, nb, sc, nc))
            new = _rate(anytime_rejects(sb, nb, sc, nc, max_trials))
            region = rejection_region(max_trials, max_trials, ALPHA, "boschloo")
            pmf = sps.binom.pmf(np.arange(max_trials + 1), max_trials, p)
            fixed = float(pmf @ region @ pmf)
            print(
                f"{max_trials:>4} {p:>5.2f} {np.r_[nb, nc].mean():>7.1f} {old:>16} "
                f"{fisher:>16} {new:>16} {100 * fixed:>16.2f}%"
                f"   ({time.perf_counter() - start:.1f} s)",
                flush=True,
            )


def power(args: argparse.Namespace) -> None:
    delta = 0.10
    print(
        f"\npower to show a drop of {delta:.2f} (baseline rate p, current p - {delta:.2f}); "
        f"adaptive: {args.pairs:,} simulated pairs"
    )
    print(
        f"{'max':>4} {'p':>5} {'fixed n, boschloo':>18} {'fixed n, anytime':>17} "
        f"{'adaptive, anytime':>18} {'adaptive mean n':>16}"
    )
    for max_trials in args.maxima:
        sequence = drop_sequence(THRESHOLD, 1 - ALPHA, max_trials)
        for p in (0.8, 0.9, 0.95):
            rng = _cell_rng(args.seed + 1, max_trials, p)
            pmf_b = sps.binom.pmf(np.arange(max_trials + 1), max_trials, p)
            pmf_c = sps.binom.pmf(np.arange(max_trials + 1), max_trials, p - delta)
            region = rejection_region(max_trials, max_trials, ALPHA, "boschloo")
            fixed = float(pmf_b @ region @ pmf_c)
            fixed_anytime = sequence.power(max_trials, max_trials, p, delta)
            sb, nb = stopped_runs(rng, p, max_trials, args.pairs)
            sc, nc = stopped_runs(rng, p - delta, max_trials, args.pairs)
            adaptive = _rate(anytime_rejects(sb, nb, sc, nc, max_trials))
            print(
                f"{max_trials:>4} {p:>5.2f} {100 * fixed:>17.1f}% {100 * fixed_anytime:>16.1f}% "
                f"{adaptive:>18} {np.r_[nb, nc].mean():>16.1f}",
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
    args = parser.parse_args()
    type_one(args)
    power(args)


if __name__ == "__main__":
    main()
