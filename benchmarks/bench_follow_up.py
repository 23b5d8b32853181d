"""Following "more trials would likely settle it": the error of repeated looks, exactly.

The scenario of the issue: a test is judged at n = 30 (threshold 0.8, 95%); while INCONCLUSIVE,
the user adds the number of trials the advice names and judges all the trials again, up to four
times (the issue's scenario is four looks in all: column 4). At a true rate of 0.80 a FAIL is
wrong; at 0.78 a PASS is. Each procedure is simulated
(4,000 scenarios a row by default, fixed seeds; each look's verdict and advice exact, cached):

* ``Wilson, fixed-n looks`` — before: every look reads Wilson's interval, the advice is the
  fixed-n rule's (the settle probability of Wilson's interval at n + m);
* ``verdict interval, fixed-n looks`` — every look reads the fixed-n verdict interval (each side
  ≤ 2.5% at one look), the advice the fixed-n rule's;
* ``anytime follow-ups`` — what assay does now: the first look is fixed-n (one run), and every
  later look judges all the trials with the anytime-valid interval (trials from several runs,
  or ``--anytime``), the advice ``follow_up_trials_needed``;
* ``anytime throughout`` — ``--anytime`` from the first look.

The stated error is 2.5% a side. Run: ``python benchmarks/bench_follow_up.py`` (``--looks K``).
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable

import numpy as np
from scipy import stats as sps

from assay.judge import follow_up_trials_needed, more_trials_needed
from assay.stats import (
    pass_rate_sequence,
    proportion_bounds,
    proportion_interval,
    smallest_passing,
    verdict_interval,
)

THRESHOLD, CONFIDENCE, START = 0.8, 0.95, 30
RATES = {0.80: "FAIL", 0.78: "PASS"}
SEQUENCE = pass_rate_sequence(THRESHOLD, CONFIDENCE)

Verdict = int  # 1 PASS, -1 FAIL, 0 INCONCLUSIVE
Look = Callable[[int, int, int], tuple[Verdict, int | None]]
"""(passes, trials, look number) → (verdict, further trials the advice names)."""


def _side(low: float, high: float) -> Verdict:
    return 1 if low >= THRESHOLD else -1 if high < THRESHOLD else 0


@functools.cache
def _wilson_more(s: int, n: int) -> int | None:
    """The advice as it was: the settle probability of Wilson's own interval at n + m."""
    rate = s / n

    def settles(m: int) -> bool:
        future = np.arange(m + 1)
        low, high = proportion_bounds(s + future, n + m, CONFIDENCE)
        settled = (low >= THRESHOLD) | (high < THRESHOLD)
        return float(sps.binom.pmf(future[settled], m, rate).sum()) >= 0.5

    return smallest_passing(settles, 100_000)


@functools.cache
def wilson_look(s: int, n: int, look: int) -> tuple[Verdict, int | None]:
    interval = proportion_interval(s, n, CONFIDENCE)
    verdict = _side(interval.low, interval.high)
    return verdict, (_wilson_more(s, n) if verdict == 0 else None)


@functools.cache
def rule_look(s: int, n: int, look: int) -> tuple[Verdict, int | None]:
    interval = verdict_interval(s, n, THRESHOLD, CONFIDENCE)
    verdict = _side(interval.low, interval.high)
    return verdict, (more_trials_needed(s, n, THRESHOLD, CONFIDENCE) if verdict == 0 else None)


@functools.cache
def _anytime(s: int, n: int) -> tuple[Verdict, int | None]:
    verdict = int(SEQUENCE.side(s, n, THRESHOLD))
    return verdict, (follow_up_trials_needed(s, n, THRESHOLD, CONFIDENCE) if verdict == 0 else None)


@functools.cache
def follow_up_look(s: int, n: int, look: int) -> tuple[Verdict, int | None]:
    if look > 0:
        return _anytime(s, n)
    interval = verdict_interval(s, n, THRESHOLD, CONFIDENCE)
    verdict = _side(interval.low, interval.high)
    return verdict, (follow_up_trials_needed(s, n, THRESHOLD, CONFIDENCE) if verdict == 0 else None)


def anytime_look(s: int, n: int, look: int) -> tuple[Verdict, int | None]:
    return _anytime(s, n)


def errors(look: Look, p: float, follow_ups: int, reps: int, seed: int) -> list[float]:
    """P(wrong verdict) after each look (cumulative), by simulation with a fixed seed.

    Each look's verdict and advice depend only on (passes, trials, look), and are cached, so
    the simulation costs little more than drawing the binomials.
    """
    rng = np.random.default_rng(seed)
    wrong = 1 if RATES[p] == "PASS" else -1
    counts = np.zeros(follow_ups + 1)
    for _ in range(reps):
        n, s = START, int(rng.binomial(START, p))
        for number in range(follow_ups + 1):
            verdict, more = look(s, n, number)
            if verdict != 0:
                counts[number:] += verdict == wrong
                break
            if not more:
                break
            s, n = s + int(rng.binomial(more, p)), n + more
    return list(counts / reps)


def main() -> None:
    """Print each procedure's wrong-verdict rate after 1, 2, … looks."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--looks", type=int, default=4, help="follow-up looks after the first")
    parser.add_argument("--reps", type=int, default=4000, help="scenarios simulated per row")
    parser.add_argument(
        "--only", default=None, help="run only the procedures whose name contains this text"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    procedures: dict[str, Look] = {
        "Wilson, fixed-n looks": wilson_look,
        "verdict interval, fixed-n looks": rule_look,
        "anytime follow-ups": follow_up_look,
        "anytime throughout": anytime_look,
    }
    heads = " ".join(f"{k:>7}" for k in range(1, args.looks + 2))
    print(f"threshold {THRESHOLD}, {CONFIDENCE:g} confidence, first look at n = {START}")
    se = 100 * np.sqrt(0.025 * 0.975 / args.reps)
    print(
        f"wrong-verdict rate (%) after 1 … {args.looks + 1} looks, {args.reps} simulated "
        f"scenarios a row (fixed seed; SE about {se:.2f} points at 2.5%); stated: 2.5%"
    )
    print(f"{'procedure':<34} {'true p':>6} {'wrong':>5} {heads}")
    above = 0
    for name, look in procedures.items():
        if args.only is not None and args.only not in name:
            continue
        for p, wrong in RATES.items():
            rates = errors(look, p, args.looks, args.reps, seed=int(100 * p))
            cells = " ".join(f"{100 * r:>7.2f}" for r in rates)
            print(f"{name:<34} {p:>6.2f} {wrong:>5} {cells}")
            bound = 0.025 + 3 * se / 100
            above += name.startswith("anytime") and rates[-1] > bound
    print(f"anytime rows above 2.5% (+ 3 SE): {above}")
    print(f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
