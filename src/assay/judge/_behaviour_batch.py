"""Every feature of every test's behaviour diff tested at once, a matrix of features at a time.

With tool and LLM calls a case has about ten features, and a suite thousands of cases: a
Python object and a dozen numpy calls per feature cost more than the statistics. Features of
one kind whose tests have the same pair of trial counts are stacked as the rows of a baseline
and a current matrix, and each step runs once per matrix: which features vary (the others
cannot have changed and are left untested), their tests (:func:`assay.stats.row_shifts`;
Fisher's test and Newcombe's interval once per distinct table), their spreads and power, and
their typical trials. Every figure is the one the feature gets alone, bit for bit: numpy
reduces each contiguous row as it reduces that row alone, and the element-wise steps are the
same IEEE operations (``tests/judge/test_behaviour_batch.py`` checks each against the feature
tested alone). Tool paths, one a test, keep their permutation test per test.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.choices import Adjustment
from assay.stats import (
    MINIMAL_EFFECTS,
    BehaviourKind,
    BehaviourSample,
    FeaturePair,
    Shift,
    binary_shift,
    path_shift,
    permutations_for,
    ratio_powers,
    row_shifts,
    share_power,
)

MIN_TRIALS = 5
"""Fewer trials than this on either side: no behaviour verdict but INCONCLUSIVE."""

EXAMPLES = 3
"""Trace ids of typical trials shown per side of a change."""

# A few trials per case make the same few tables and shares recur across a suite.
_binary_shift = functools.lru_cache(maxsize=8192)(binary_shift)
_share_power = functools.lru_cache(maxsize=8192)(share_power)


@dataclass(frozen=True, slots=True)
class Tested:
    """One feature of one test, tested: what the verdict and the reports need of it."""

    pair: FeaturePair
    """The feature."""
    shift: Shift
    """Its test, effect and interval."""
    path: tuple[str, ...] | None
    """For ``path``: the variant whose share moved most."""
    spread: float
    """What its power depends on: the baseline share, or the baseline's coefficient of
    variation."""
    power: float
    """Power to see the kind's minimal effect at the test's level."""
    baseline_traces: tuple[str, ...]
    """Trace ids of typical baseline trials for this feature."""
    current_traces: tuple[str, ...]
    """Trace ids of typical current trials."""


@dataclass(frozen=True, slots=True)
class Tests:
    """Every test's tested features, in each test's feature order, and its family size."""

    rows: list[list[Tested]]
    """Per test (in the order given), its informative features, tested."""
    family: list[int]
    """Per test, the features adjusted together (≥ 1)."""


@dataclass(slots=True)
class _Group:
    """Features of one kind whose tests have the same trial counts, stacked as rows."""

    members: list[tuple[int, int]]
    """(test, feature) of each row."""
    baseline: npt.NDArray[np.float64]
    current: npt.NDArray[np.float64]


def feature_tests(
    samples: Sequence[BehaviourSample],
    *,
    alpha: float,
    adjust: str,
    confidence: float,
    seed: int,
) -> Tests:
    """Test every informative feature of every test with at least :data:`MIN_TRIALS` a side.

    Args:
        samples: Each test's features in both versions.
        alpha: Significance level (the power is taken at alpha / family size, the bound of
            Holm's first step).
        adjust: ``none`` (each test its own family) or a suite-wide method (one family).
        confidence: Level of the effects' intervals.
        seed: Seed of the path permutation tests.
    """
    groups: dict[tuple[BehaviourKind, int, int], list[tuple[int, int]]] = {}
    paths: list[tuple[int, int]] = []
    for t, sample in enumerate(samples):
        n = (len(sample.baseline_ids), len(sample.current_ids))
        if min(n) < MIN_TRIALS:
            continue
        for f, pair in enumerate(sample.features):
            if pair.kind == "path":
                if len(set(pair.baseline_paths) | set(pair.current_paths)) > 1:
                    paths.append((t, f))
            else:
                groups.setdefault((pair.kind, pair.baseline.size, pair.current.size), []).append(
                    (t, f)
                )
    stacked = {
        key: _informative(key[0], _stack(samples, members)) for key, members in groups.items()
    }
    chosen = [0] * len(samples)
    for t, _ in paths:
        chosen[t] += 1
    for group in stacked.values():
        for t, _ in group.members:
            chosen[t] += 1
    pooled = sum(chosen)
    family = [max(1, c) if adjust == Adjustment.NONE else max(1, pooled) for c in chosen]
    levels = [alpha / f for f in family]
    tested: list[list[tuple[int, Tested]]] = [[] for _ in samples]
    for t, f in paths:
        resamples = permutations_for(chosen[t] if adjust == Adjustment.NONE else pooled, alpha)
        tested[t].append(
            (f, _path_row(samples[t], f, confidence, resamples, seed, levels[t], alpha))
        )
    for (kind, _, _), group in stacked.items():
        rows = _rows(
            kind, group, samples, confidence, np.array([levels[t] for t, _ in group.members])
        )
        for (t, f), row in zip(group.members, rows, strict=True):
            tested[t].append((f, row))
    return Tests([[row for _, row in sorted(rows, key=_first)] for rows in tested], family)


def _first(item: tuple[int, Tested]) -> int:
    return item[0]


def _stack(samples: Sequence[BehaviourSample], members: list[tuple[int, int]]) -> _Group:
    features = [samples[t].features[f] for t, f in members]
    return _Group(
        members,
        np.stack([p.baseline for p in features]).astype(np.float64, copy=False),
        np.stack([p.current for p in features]).astype(np.float64, copy=False),
    )


def _informative(kind: BehaviourKind, group: _Group) -> _Group:
    """The rows that vary: a feature of one value everywhere cannot have changed."""
    both = np.hstack([group.baseline, group.current])
    if not both.shape[1]:  # no values at all: nothing to test
        return _Group([], both[:, :0], both[:, :0])
    # max > min is ptp > 0 (NaN and infinities alike).
    keep = both.max(axis=1) > both.min(axis=1)
    if kind == "count":
        # Calls to a tool that one side never makes: its ``uses:`` feature says so exactly,
        # and a ratio with a zero mean has no interval.
        keep &= (group.baseline.sum(axis=1) != 0) & (group.current.sum(axis=1) != 0)
    rows = np.flatnonzero(keep)
    if rows.size == keep.size:
        return group
    return _Group(
        [group.members[i] for i in rows.tolist()], group.baseline[rows], group.current[rows]
    )


def _rows(
    kind: BehaviourKind,
    group: _Group,
    samples: Sequence[BehaviourSample],
    confidence: float,
    levels: npt.NDArray[np.float64],
) -> list[Tested]:
    """The binary, count or continuous features of one group, tested."""
    if not group.members:
        return []
    base, cur = group.baseline, group.current
    n = (base.shape[1], cur.shape[1])
    if kind == "binary":
        shifts = [
            _binary_shift(int(k_b), n[0], int(k_c), n[1], confidence)
            for k_b, k_c in zip(base.sum(axis=1).tolist(), cur.sum(axis=1).tolist(), strict=True)
        ]
        spreads = [s.baseline for s in shifts]
        minimal = MINIMAL_EFFECTS[kind]
        power = [
            _share_power(s, n[0], n[1], minimal, level)
            for s, level in zip(spreads, levels.tolist(), strict=True)
        ]
        rising = np.array([(s.effect or 0) > 0 for s in shifts])[:, None]
        # Where the property grew, show trials with it; on the other side, trials without it.
        picks = (_with(base > 0, rising), _with(cur > 0, ~rising))
    else:
        shifts = row_shifts("count" if kind == "count" else "continuous", base, cur, confidence)
        means = base.mean(axis=1)
        if n[0] > 1:
            with np.errstate(divide="ignore", invalid="ignore"):
                cv = np.where(means > 0, base.std(axis=1, ddof=1) / means, 0.0)
        else:
            cv = np.zeros(means.size)
        spreads = cv.tolist()
        power = ratio_powers(cv, n[0], n[1], MINIMAL_EFFECTS[kind], levels).tolist()
        picks = (_nearest(base, means), _nearest(cur, cur.mean(axis=1)))
    typical_b, typical_c = _listed(picks[0]), _listed(picks[1])
    return [
        Tested(
            samples[t].features[f],
            shift,
            None,
            spread,
            p,
            tuple(samples[t].baseline_ids[i] for i in typical_b[r]),
            tuple(samples[t].current_ids[i] for i in typical_c[r]),
        )
        for r, ((t, f), shift, spread, p) in enumerate(
            zip(group.members, shifts, spreads, power, strict=True)
        )
    ]


_Picks = tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]
"""Per row, the positions of its typical trials, and how many of them there are."""


def _with(has: npt.NDArray[np.bool_], flip: npt.NDArray[np.bool_]) -> _Picks:
    """Per row, its first :data:`EXAMPLES` trials with (``flip`` False) or without the property."""
    want = has ^ flip
    order = np.argsort(~want, axis=1, kind="stable")[:, :EXAMPLES]
    return order, np.minimum(want.sum(axis=1), EXAMPLES)


def _nearest(values: npt.NDArray[np.float64], means: npt.NDArray[np.float64]) -> _Picks:
    """Per row, its :data:`EXAMPLES` trials nearest the row's mean (ties: the earlier)."""
    order = np.argsort(np.abs(values - means[:, None]), axis=1, kind="stable")[:, :EXAMPLES]
    return order, np.full(values.shape[0], order.shape[1])


def _listed(picks: _Picks) -> list[list[int]]:
    """Per row, the positions of its typical trials (one conversion for every row)."""
    order, count = picks
    return [row[:n] for row, n in zip(order.tolist(), count.tolist(), strict=True)]


def _path_row(
    sample: BehaviourSample,
    feature: int,
    confidence: float,
    resamples: int,
    seed: int,
    level: float,
    alpha: float,
) -> Tested:
    """A test's tool-path feature, tested (one a test: the permutation test per test).

    A p-value above alpha cannot pass any adjustment at alpha: beyond a first look its
    relabellings are not refined (:func:`assay.stats.path_shift`, ``screen``).
    """
    pair = sample.features[feature]
    result = path_shift(
        pair.baseline_paths, pair.current_paths, confidence, resamples, seed, screen=alpha
    )
    shift = result.shift
    n = (len(sample.baseline_ids), len(sample.current_ids))
    rising = (shift.effect or 0) > 0

    def typical(
        ids: tuple[str, ...], paths: tuple[tuple[str, ...], ...], want: bool
    ) -> tuple[str, ...]:
        chosen = [i for i, p in zip(ids, paths, strict=True) if (p == result.path) == want]
        return tuple(chosen[:EXAMPLES])

    return Tested(
        pair,
        shift,
        result.path,
        shift.baseline,
        _share_power(shift.baseline, n[0], n[1], MINIMAL_EFFECTS["path"], level),
        typical(sample.baseline_ids, pair.baseline_paths, not rising),
        typical(sample.current_ids, pair.current_paths, rising),
    )
