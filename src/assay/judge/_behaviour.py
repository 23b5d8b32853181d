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
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import polars as pl

from assay.analysis import behaviour_samples, is_work_feature, work_unknown
from assay.analysis import columns as tc
from assay.choices import Adjustment
from assay.errors import ConfigError
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
    FeaturePair,
    Shift,
    adjust_p_values,
    binary_shift,
    continuous_shifts,
    count_shifts,
    equal_trials_guess,
    path_shift,
    permutations_for,
    ratio_power,
    share_power,
    trials_for_power,
)

MIN_TRIALS = 5
"""Fewer trials than this on either side: no behaviour verdict but INCONCLUSIVE."""

EXAMPLES = 3
"""Trace ids of typical trials shown per side of a change."""


def _shift(
    pair: FeaturePair, confidence: float, seed: int, resamples: int
) -> tuple[Shift, tuple[str, ...] | None]:
    """A path or binary feature's test (counts and continuous features are tested in batches)."""
    if pair.kind == "path":
        result = path_shift(pair.baseline_paths, pair.current_paths, confidence, resamples, seed)
        return result.shift, result.path
    shift = binary_shift(
        int(pair.baseline.sum()),
        pair.baseline.size,
        int(pair.current.sum()),
        pair.current.size,
        confidence,
    )
    return shift, None


def _informative(pair: FeaturePair) -> bool:
    """A feature that takes one value everywhere cannot have changed; leave it untested."""
    if pair.kind == "path":
        return len(set(pair.baseline_paths) | set(pair.current_paths)) > 1
    both = np.concatenate([pair.baseline, pair.current])
    if pair.kind == "count" and (pair.baseline.sum() == 0 or pair.current.sum() == 0):
        # Calls to a tool that one side never makes: its ``uses:`` feature says so exactly,
        # and a ratio with a zero mean has no interval.
        return False
    # max > min is ptp > 0 (NaN and infinities alike), without np.ptp's wrapper.
    return bool(both.max() > both.min()) if both.size else False


def _spread(pair: FeaturePair, shift: Shift) -> float:
    """What the power depends on: the baseline share, or the baseline's coefficient of variation."""
    if pair.kind in ("path", "binary"):
        return shift.baseline
    mean = float(pair.baseline.mean())
    return float(pair.baseline.std(ddof=1)) / mean if mean > 0 and pair.baseline.size > 1 else 0.0


def _power(row: _Tested, alpha: float, n: tuple[int, int]) -> float:
    return _kind_power(row.pair.kind, row.spread, alpha, n)


def _kind_power(kind: BehaviourKind, spread: float, alpha: float, n: tuple[int, int]) -> float:
    minimal = MINIMAL_EFFECTS[kind]
    if kind in ("path", "binary"):
        return share_power(spread, n[0], n[1], minimal, alpha)
    return ratio_power(spread, n[0], n[1], minimal, alpha)


def _typical(
    pair: FeaturePair, shift: Shift, path: tuple[str, ...] | None, ids: tuple[str, ...], side: str
) -> tuple[str, ...]:
    """Trace ids of trials that show this side of the change."""
    if pair.kind in ("path", "binary"):
        has = (
            np.array(
                [p == path for p in (pair.baseline_paths if side == "b" else pair.current_paths)]
            )
            if pair.kind == "path"
            else (pair.baseline if side == "b" else pair.current) > 0
        )
        rising = (shift.effect or 0) > 0
        # Where the property grew, show trials with it; on the other side, trials without it.
        want = has if rising == (side == "c") else ~has
        chosen = [i for i, keep in zip(ids, want, strict=True) if keep]
        return tuple(chosen[:EXAMPLES])
    values = pair.baseline if side == "b" else pair.current
    order = np.argsort(np.abs(values - values.mean()), kind="stable")
    return tuple(ids[i] for i in order[:EXAMPLES])


def _note(shift: Shift) -> str | None:
    if shift.kind != "binary":
        return None
    if shift.baseline == 0 and shift.current > 0:
        return "appeared"
    if shift.current == 0 and shift.baseline > 0:
        return "vanished"
    return None


@dataclass(frozen=True, slots=True)
class _Tested:
    pair: FeaturePair
    shift: Shift
    path: tuple[str, ...] | None
    spread: float


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
    chosen = {
        test_id: [p for p in sample.features if _informative(p)]
        if min(len(sample.baseline_ids), len(sample.current_ids)) >= MIN_TRIALS
        else []
        for test_id, sample in samples.items()
    }
    pooled_size = sum(len(pairs) for pairs in chosen.values())

    # Every continuous feature of every test in one Mann–Whitney pass (a call a feature costs
    # milliseconds of scipy's argument handling), and the moments of every count and continuous
    # feature in one numpy pass per size; keyed by the pair object, which lives on.
    ready: dict[int, Shift] = {}
    for kind, batched in (("continuous", continuous_shifts), ("count", count_shifts)):
        same = [p for pairs in chosen.values() for p in pairs if p.kind == kind]
        shifts = batched([(p.baseline, p.current) for p in same], confidence)
        ready.update((id(p), s) for p, s in zip(same, shifts, strict=True))

    def tested_row(pair: FeaturePair, family: int) -> _Tested:
        if pair.kind in ("continuous", "count"):
            shift, path = ready[id(pair)], None
        else:
            shift, path = _shift(pair, confidence, seed, permutations_for(family, alpha))
        return _Tested(pair, shift, path, _spread(pair, shift))

    tested = {
        test_id: [
            tested_row(pair, len(pairs) if adjust == Adjustment.NONE else pooled_size)
            for pair in pairs
        ]
        for test_id, pairs in chosen.items()
    }
    adjusted: dict[str, list[float]] = {}
    if adjust == Adjustment.NONE:
        family = {t: max(1, len(rows)) for t, rows in tested.items()}
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
        size = max(1, len(flat))
        family = dict.fromkeys(tested, size)
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
    rows: Sequence[_Tested],
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
                power=_power(row, level, n),
                minimal_effect=MINIMAL_EFFECTS[row.pair.kind],
                path=row.path,
                note=_note(s),
                baseline_traces=_typical(row.pair, s, row.path, sample.baseline_ids, "b"),
                current_traces=_typical(row.pair, s, row.path, sample.current_ids, "c"),
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
    return _kind_power(kind, spread, level, (n, n))


@functools.lru_cache(maxsize=8192)
def _needed(kind: BehaviourKind, spread: float, level: float, required: float) -> int | None:
    # The power depends on the kind and the spread alone; across many cases of a few trials
    # the same shares (and count spreads) recur, and each search runs once.
    minimal = MINIMAL_EFFECTS[kind]
    guess = equal_trials_guess(kind in ("path", "binary"), spread, minimal, level, required)
    return trials_for_power(partial(_power_at, kind, spread, level), required, guess=guess)


def _trials_needed(rows: Sequence[_Tested], level: float, required: float) -> int | None:
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
