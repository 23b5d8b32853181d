"""Adaptive stopping vs a fixed number of trials: verdicts, wrong verdicts and trials used.

Threshold 0.8, 95% confidence. Every verdict is the interval against the threshold (PASS: at or
above, FAIL: wholly below, else INCONCLUSIVE); after adaptive stopping the interval is the
anytime-valid confidence sequence (``assay.stats.pass_rate_sequence``), and the stopping rule
only decides when to stop. For each maximum (50, 100, 200 trials) and true pass rate, three
designs, simulated (fixed seed) and computed exactly (``operating_characteristics``):

* ``confidence-sequence`` (the default): stop once the interval lies on one side;
* ``sprt``: stop where Wald's SPRT (delta 0.1, alpha 0.05, beta 0.2) decides;
* ``fixed``: run all trials, then the Wilson 95% interval.

A wrong verdict is a PASS at a true rate at or below the threshold or a FAIL at one at or above
it; the stated bound is 1 - confidence = 5% (the interval misses the true rate with at most
that probability, however the run stopped). Run: ``python benchmarks/bench_adaptive.py``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from assay.stats import (
    operating_characteristics,
    sequential_test,
    simulate_sequential,
    wilson_interval,
)

THRESHOLD, CONFIDENCE = 0.8, 0.95
DELTA, SPRT_ALPHA, SPRT_BETA = 0.1, 0.05, 0.2
RATES = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)
MAXIMA = (50, 100, 200)
CLEAR = (0.5, 0.6, 0.95, 1.0)
"""Clear cases: at least 0.2 below or 0.15 above the threshold."""
TARGET = 0.4
"""On clear cases the default should use at most this share of the maximum on average."""


def _fixed_verdicts(max_trials: int) -> np.ndarray:
    """The Wilson verdict (1, -1, 0) of every success count out of ``max_trials``."""
    verdicts = np.zeros(max_trials + 1, dtype=np.int8)
    for s in range(max_trials + 1):
        interval = wilson_interval(s, max_trials, CONFIDENCE)
        verdicts[s] = 1 if interval.low >= THRESHOLD else -1 if interval.high < THRESHOLD else 0
    return verdicts


def _fixed(max_trials: int, p: float, reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Simulated and exact verdicts of the fixed design at rate ``p``."""
    from scipy import stats

    verdicts = _fixed_verdicts(max_trials)
    rng = np.random.default_rng(seed)
    simulated = verdicts[rng.binomial(max_trials, p, reps)]
    pmf = stats.binom.pmf(np.arange(max_trials + 1), max_trials, p)
    exact = np.array([pmf[verdicts > 0].sum(), pmf[verdicts < 0].sum()])
    return simulated, exact


def _wrong(p: float, p_pass: float, p_fail: float) -> float:
    """P(a wrong verdict): PASS at or below the threshold, FAIL at or above it."""
    return (p_pass if p <= THRESHOLD else 0.0) + (p_fail if p >= THRESHOLD else 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=20_000, help="simulated runs per rate")
    parser.add_argument("--seed", type=int, default=20261202)
    args = parser.parse_args()
    started = time.perf_counter()
    bound = 1 - CONFIDENCE
    print(
        f"threshold {THRESHOLD}, confidence {CONFIDENCE}; SPRT delta {DELTA}, alpha "
        f"{SPRT_ALPHA}, beta {SPRT_BETA}; {args.reps} simulated runs per rate and design\n"
        f"wrong = P(PASS | p <= {THRESHOLD}) + P(FAIL | p >= {THRESHOLD}), bound {bound:.2f} "
        "(ok: simulated within 3 standard errors, exact at most the bound)\n"
    )
    clear: dict[str, list[float]] = {}
    failures = 0
    for max_trials in MAXIMA:
        for method in ("confidence-sequence", "sprt", "fixed"):
            label = f"{method}, max {max_trials}"
            print(f"== {label}")
            print(
                f"{'true p':>6} {'P(PASS)':>8} {'P(FAIL)':>8} {'P(INC)':>7} {'wrong':>7} "
                f"{'exact':>7} {'ok':>3} {'mean n':>7} {'exact n':>7} {'of max':>6}"
            )
            test = None
            if method != "fixed":
                test = sequential_test(
                    method,
                    THRESHOLD,
                    delta=DELTA,
                    alpha=SPRT_ALPHA,
                    beta=SPRT_BETA,
                    max_trials=max_trials,
                    confidence=CONFIDENCE,
                )
            for i, p in enumerate(RATES):
                seed = args.seed + 1000 * max_trials + i
                if test is None:
                    verdicts, (x_pass, x_fail) = _fixed(max_trials, p, args.reps, seed)
                    trials = np.full(args.reps, max_trials)
                    exact_n = float(max_trials)
                else:
                    verdicts, trials = simulate_sequential(test, p, args.reps, seed)
                    oc = operating_characteristics(test, p)
                    x_pass, x_fail, exact_n = (
                        oc.pass_probability,
                        oc.fail_probability,
                        oc.expected_trials,
                    )
                p_pass = float(np.mean(verdicts == 1))
                p_fail = float(np.mean(verdicts == -1))
                wrong, exact_wrong = _wrong(p, p_pass, p_fail), _wrong(p, x_pass, x_fail)
                se = math.sqrt(bound * (1 - bound) / args.reps)
                ok = wrong <= bound + 3 * se and exact_wrong <= bound
                # Wilson's coverage is nominal (it oscillates around 95%): reported, not held.
                failures += not ok and test is not None
                mark = "yes" if ok else "NO" if test is not None else "no*"
                share = float(trials.mean()) / max_trials
                if p in CLEAR:
                    right = p_pass if p > THRESHOLD else p_fail
                    clear.setdefault(label, []).append((share, right))
                print(
                    f"{p:>6.2f} {p_pass:>8.3f} {p_fail:>8.3f} {1 - p_pass - p_fail:>7.3f} "
                    f"{wrong:>7.4f} {exact_wrong:>7.4f} {mark:>3} "
                    f"{trials.mean():>7.1f} {exact_n:>7.1f} {share:>6.0%}"
                )
            print()
    print(f"clear cases (true p in {CLEAR}): share of the maximum used, P(the right verdict)")
    for label, rows in clear.items():
        shares = [share for share, _ in rows]
        cells = " ".join(f"{share:>4.0%} {right:.2f}" for share, right in rows)
        met = ""
        if label.startswith("confidence-sequence"):
            met = "  target met" if max(shares) <= TARGET else f"  above {TARGET:.0%} at some rate"
        print(f"  {label:<30} {cells}   mean {np.mean(shares):.0%}{met}")
    print(
        "\nno*: the fixed-n Wilson interval's coverage is nominal, not guaranteed: near the "
        "threshold its realised error can exceed 5%"
    )
    print(f"adaptive rows with a wrong-verdict rate above the bound: {failures}")
    print(f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
