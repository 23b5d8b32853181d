"""The behaviour verdict per test: CHANGED, UNCHANGED or INCONCLUSIVE, with what changed.

Every feature of a test (its tool paths, each tool's use and calls, steps, LLM calls, tokens,
cost, latency, error spans, models) is tested with the test of its kind
(:mod:`assay.stats.behaviour._behaviour`). Multiple testing (docs/statistics.md, "Behaviour diff"):

* Within a test, the features are always Holm-adjusted, whatever ``--adjust`` says: a test's
  verdict is "did *any* feature change?", and over fifteen unadjusted features a version
  identical to its baseline would be called CHANGED about half the time.
* ``--adjust holm`` pools every feature of every test into one Holm family (the chance of any
  false CHANGED in the suite ≤ alpha); ``--adjust bh`` pools them under Benjamini–Hochberg
  (expected share of false changes among reported ones ≤ alpha).

A test is CHANGED when some feature's adjusted p-value is below alpha. Otherwise it is
UNCHANGED only if every feature had at least the required power to see its kind's minimal
effect (:data:`assay.stats.MINIMAL_EFFECTS`) at the level a change would have had to pass
(Bonferroni alpha / family size, the bound of Holm's first step); else INCONCLUSIVE.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence, Set
from dataclasses import replace
from functools import partial

import polars as pl

from assay.analysis import behaviour_samples, is_work_feature, work_unknown
from assay.analysis import columns as tc
from assay.choices import Adjustment
from assay.errors import ConfigError
from assay.judge._behaviour_batch import MIN_TRIALS, Tested, feature_tests
from assay.judge._behaviour_result import (
    BehaviourChange,
    BehaviourResult,
    BehaviourVerdict,
    describe_change,
)
from assay.judge._options import DEFAULT_CONFIDENCE, AnalyzeOptions
from assay.stats import (
    ADJUST_METHODS,
    MINIMAL_EFFECTS,
    BehaviourKind,
    BehaviourSample,
    Shift,
    adjust_p_values,
    equal_trials_guess,
    ratio_power,
    share_power,
    trials_for_power,
)


def _note(shift: Shift) -> str | None:
    if shift.kind != "binary":
        return None
    if shift.baseline == 0 and shift.current > 0:
        return "appeared"
    if shift.current == 0 and shift.baseline > 0:
        return "vanished"
    return None


def behaviour_diffs(
    samples: Mapping[str, BehaviourSample],
    *,
    alpha: float = 0.05,
    adjust: str = Adjustment.NONE,
    power: float = 0.80,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, BehaviourResult]:
    """The behaviour verdict of every test, adjusted within each test and across the suite.

    Args:
        samples: Per test id, its features in both versions
            (:func:`assay.analysis.behaviour_sample`).
        alpha: Significance level of the adjusted p-values.
        adjust: ``none`` (Holm within each test only), ``holm`` or ``bh`` across all tests.
        power: The power UNCHANGED needs for every feature.
        confidence: Level of the effects' intervals.
        seed: Seed of the path permutation tests.

    Returns:
        A result per test id, in the input order.
    """
    if adjust not in ADJUST_METHODS:
        raise ConfigError(f"unknown adjustment {adjust!r}; choose none, holm or bh")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ConfigError("alpha and power must lie strictly between 0 and 1")
    names = list(samples)
    tests = feature_tests(
        [samples[name] for name in names],
        alpha=alpha,
        adjust=adjust,
        confidence=confidence,
        seed=seed,
    )
    tested = dict(zip(names, tests.rows, strict=True))
    family = dict(zip(names, tests.family, strict=True))
    adjusted: dict[str, list[float]] = {}
    if adjust == Adjustment.NONE:
        for test_id, rows in tested.items():
            # Holm over a family of one leaves its p-value as it is (1 · p, exactly).
            adjusted[test_id] = (
                [r.shift.p_value for r in rows]
                if len(rows) < 2
                else list(adjust_p_values([r.shift.p_value for r in rows], Adjustment.HOLM))
            )
    else:
        flat = [r.shift.p_value for rows in tested.values() for r in rows]
        pooled = iter(adjust_p_values(flat, adjust))
        for test_id, rows in tested.items():
            adjusted[test_id] = [float(next(pooled)) for _ in rows]
    method = Adjustment.HOLM if adjust == Adjustment.NONE else adjust
    return {
        test_id: _decide(
            samples[test_id],
            tested[test_id],
            adjusted[test_id],
            alpha,
            method,
            family[test_id],
            power,
        )
        for test_id in samples
    }


def behaviour_diff(
    sample: BehaviourSample,
    *,
    alpha: float = 0.05,
    power: float = 0.80,
    confidence: float = 0.95,
    seed: int = 0,
) -> BehaviourResult:
    """The behaviour verdict of one test (features Holm-adjusted); see :func:`behaviour_diffs`."""
    return behaviour_diffs(
        {"": sample}, alpha=alpha, power=power, confidence=confidence, seed=seed
    )[""]


def _decide(
    sample: BehaviourSample,
    rows: Sequence[Tested],
    adjusted: Sequence[float],
    alpha: float,
    method: str,
    family: int,
    required: float,
) -> BehaviourResult:
    n = (len(sample.baseline_ids), len(sample.current_ids))
    level = alpha / family
    changes = []
    for row, p_adj in zip(rows, adjusted, strict=True):
        s = row.shift
        changes.append(
            BehaviourChange(
                feature=row.pair.name,
                label=row.pair.label,
                kind=row.pair.kind,
                baseline=s.baseline,
                current=s.current,
                effect=s.effect,
                measure=s.measure,
                ci_low=s.ci_low,
                ci_high=s.ci_high,
                p_value=s.p_value,
                adjusted_p=float(p_adj),
                method=s.method,
                changed=bool(p_adj < alpha),
                power=row.power,
                minimal_effect=MINIMAL_EFFECTS[row.pair.kind],
                path=row.path,
                note=_note(s),
                baseline_traces=row.baseline_traces,
                current_traces=row.current_traces,
            )
        )
    changes.sort(key=lambda c: (not c.changed, -c.magnitude, c.feature))
    features = tuple(changes)

    def result(
        verdict: BehaviourVerdict, reason: str, needed: int | None = None
    ) -> BehaviourResult:
        return BehaviourResult(
            verdict, reason, features, n[0], n[1], alpha, method, family, required, needed
        )

    if min(n) < MIN_TRIALS:
        return result(
            BehaviourVerdict.INCONCLUSIVE,
            f"too few trials to compare behaviour ({n[0]} baseline, {n[1]} current; "
            f"at least {MIN_TRIALS} each)",
        )
    flagged = [c for c in changes if c.changed]
    if flagged:
        return result(
            BehaviourVerdict.CHANGED,
            f"{len(flagged)} of {len(changes)} features changed; "
            f"largest: {describe_change(flagged[0])}",
        )
    weak = [c for c in changes if c.power < required]
    if not weak:
        return result(
            BehaviourVerdict.UNCHANGED,
            f"no change in {len(changes)} features, each with power ≥ {required:.0%} to see "
            f"its minimal effect",
        )
    needed = _trials_needed(rows, level, required)
    more = f"; about {needed} trials per version would be needed" if needed else ""
    names = ", ".join(c.feature for c in weak[:4]) + (", ..." if len(weak) > 4 else "")
    return result(
        BehaviourVerdict.INCONCLUSIVE,
        f"no feature changed, but too few trials to vouch for {len(weak)} of them "
        f"(power < {required:.0%}: {names}){more}",
        needed,
    )


def _power_at(kind: BehaviourKind, spread: float, level: float, n: int) -> float:
    minimal = MINIMAL_EFFECTS[kind]
    if kind in ("path", "binary"):
        return share_power(spread, n, n, minimal, level)
    return ratio_power(spread, n, n, minimal, level)


@functools.lru_cache(maxsize=8192)
def _needed(kind: BehaviourKind, spread: float, level: float, required: float) -> int | None:
    # The power depends on the kind and the spread alone; across many cases of a few trials
    # the same shares (and count spreads) recur, and each search runs once.
    minimal = MINIMAL_EFFECTS[kind]
    guess = equal_trials_guess(kind in ("path", "binary"), spread, minimal, level, required)
    return trials_for_power(partial(_power_at, kind, spread, level), required, guess=guess)


def _trials_needed(rows: Sequence[Tested], level: float, required: float) -> int | None:
    worst = 0
    for row in rows:
        need = _needed(row.pair.kind, row.spread, level, required)
        if need is None:
            return None
        worst = max(worst, need)
    return worst


def _known_work(sample: BehaviourSample, unknown: bool) -> BehaviourSample:
    """The sample without the features read from work that is unknown on either side."""
    if not unknown:
        return sample
    kept = tuple(f for f in sample.features if not is_work_feature(f.name))
    return replace(sample, features=kept)


def test_behaviours(
    current: Mapping[str, pl.DataFrame],
    baseline: Mapping[str, pl.DataFrame],
    options: AnalyzeOptions,
    without_errors: Set[str] = frozenset(),
) -> dict[str, BehaviourResult]:
    """The behaviour verdict of every test present in both versions, by test id.

    Args:
        current: The current version's trials per test id.
        baseline: The baseline's trials per test id.
        options: The analysis options (alpha, power, adjust, confidence).
        without_errors: Tests whose error trials are left out of n: they are the harness's
            behaviour, not the agent's, so they are left out of the diff too.
    """

    def kept(name: str, frame: pl.DataFrame) -> pl.DataFrame:
        return frame.filter(~pl.col(tc.ERROR)) if name in without_errors else frame

    both = [name for name in current if name in baseline]
    read = behaviour_samples(
        {name: (kept(name, baseline[name]), kept(name, current[name])) for name in both}
    )
    samples = {
        name: _known_work(
            read[name], work_unknown(baseline[name]) + work_unknown(current[name]) > 0
        )
        for name in both
    }
    return behaviour_diffs(
        samples,
        alpha=options.alpha,
        adjust=options.adjust,
        power=options.power,
        confidence=options.confidence or DEFAULT_CONFIDENCE,
    )
