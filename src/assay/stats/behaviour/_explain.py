"""Explain failures: which per-trial features separate failing from passing trials."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from assay.choices import Adjustment
from assay.errors import ConfigError
from assay.stats.base import check_open_unit
from assay.stats.suites import adjust_p_values
from assay.stats.two_sample import fisher_two_sided

FEATURE_KINDS: Final = ("binary", "count", "continuous", "categorical")
"""How a feature is tested: Fisher's exact test (binary, each categorical level against the
rest) or the Mann–Whitney U test (count, continuous)."""


@dataclass(frozen=True, slots=True)
class FailureFactor:
    """A trace feature that differs significantly between failing and passing trials."""

    feature: str
    """Feature name as given, e.g. ``"calls:search"``."""
    level: str | None
    """For a categorical feature, the level tested against all others (e.g. a model name)."""
    kind: str
    """One of :data:`FEATURE_KINDS`."""
    test: str
    """``"fisher"`` (two-sided Fisher exact) or ``"mannwhitney"`` (two-sided U test)."""
    effect: float
    """Effect size: for binary/categorical the share among failing minus the share among
    passing trials; for counts the ratio of means failing/passing (inf if passing mean is 0);
    for continuous features the difference of medians failing − passing."""
    fail_value: float
    """Share (binary) / mean (count) / median (continuous) among failing trials."""
    pass_value: float
    """The same among passing trials."""
    p_value: float
    """Unadjusted two-sided p-value."""
    p_adjusted: float
    """p-value adjusted over every feature (and level) tested for this test case, or over
    every comparison of every test of the set (:func:`explain_many` ``across_tests``)."""
    detail: str
    """The finding in a sentence, e.g. "failing trials call `search` 3.1× as often"."""


RELATIVE_RESOLUTION: Final = 0.10
"""A numeric difference smaller than this share of the larger value (the medians of a
continuous feature, the means of a count) is not reported, however small its p-value: many
trials make microsecond noise significant, and it explains nothing."""


def _kind(values: npt.NDArray[np.generic]) -> str:
    if values.dtype == np.bool_:
        return "binary"
    if np.issubdtype(values.dtype, np.integer):
        return "count"
    if np.issubdtype(values.dtype, np.floating):
        return "continuous"
    return "categorical"


def _p(p: float) -> str:
    return f"p = {p:.2g}" if p >= 0.001 else "p < 0.001"


@dataclass(frozen=True, slots=True)
class _Share:
    """A binary feature (or one level of a categorical one) among failing and passing trials."""

    feature: str
    level: str | None
    kind: str
    label: str | None
    table: tuple[int, int, int, int]
    """Failing with, failing without, passing with, passing without."""

    @classmethod
    def of(
        cls,
        feature: str,
        level: str | None,
        kind: str,
        has: npt.NDArray[np.bool_],
        failed: npt.NDArray[np.bool_],
        label: str | None = None,
    ) -> _Share:
        table = (
            int((has & failed).sum()),
            int((~has & failed).sum()),
            int((has & ~failed).sum()),
            int((~has & ~failed).sum()),
        )
        return cls(feature, level, kind, label, table)

    def factor(self, p: float) -> FailureFactor:
        """The finding, given the two-sided Fisher p-value of :attr:`table`."""
        a, b, c, d = self.table
        share_fail, share_pass = a / (a + b), c / (c + d)
        label, level, feature = self.label, self.level, self.feature
        if label is not None:
            what = label if level is None else f"{label} `{level}`"
        elif level is None:
            what = f"have `{feature}`"
        else:
            what = f"have `{feature}` = `{level}`"
        detail = (
            f"{share_fail:.0%} of failing trials {what} ({a} of {a + b}) vs {share_pass:.0%} of "
            f"passing trials ({c} of {c + d}), {{p}}"
        )
        return FailureFactor(
            feature,
            level,
            self.kind,
            "fisher",
            share_fail - share_pass,
            share_fail,
            share_pass,
            p,
            p,
            detail,
        )


def _numeric_samples(
    x: npt.NDArray[np.float64], failed: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None:
    """The finite values among failing and passing trials; None when there is nothing to test."""
    keep = np.isfinite(x)
    fail_x, pass_x = x[keep & failed], x[keep & ~failed]
    if fail_x.size == 0 or pass_x.size == 0 or np.ptp(x[keep]) == 0:
        return None
    return fail_x, pass_x


def _rank_sum_p_values(
    samples: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]],
) -> list[float]:
    """Two-sided Mann–Whitney p-values, one per (failing, passing) pair of samples.

    Where scipy's "auto" method is the asymptotic one (both samples above 8 values, or ties),
    every pair is tested at once by :func:`_asymptotic_p_values`, scipy's formula over arrays;
    small tie-free pairs by scipy's exact test, looked up by their ranks.
    """
    from scipy import stats as sps

    out: list[float | None] = [None] * len(samples)
    asymptotic: list[int] = []
    for i, (fail_x, pass_x) in enumerate(samples):
        pooled = fail_x.size + pass_x.size
        if pooled > _VECTORISED_MAX:
            result = sps.mannwhitneyu(fail_x, pass_x, alternative="two-sided")
            out[i] = float(result.pvalue)
        elif fail_x.size > 8 and pass_x.size > 8:
            asymptotic.append(i)
        elif pooled <= _RANKS_CACHED:
            out[i] = _small_rank_sum_p(*_rank_key(fail_x, pass_x))
        elif np.unique(np.concatenate([fail_x, pass_x])).size < pooled:
            asymptotic.append(i)  # ties: scipy's "auto" is asymptotic
        else:
            result = sps.mannwhitneyu(fail_x, pass_x, alternative="two-sided")
            out[i] = float(result.pvalue)
    if asymptotic:
        p_values = _asymptotic_p_values([samples[i] for i in asymptotic])
        for i, p in zip(asymptotic, p_values.tolist(), strict=True):
            out[i] = p
    return [float(p) for p in out if p is not None]


_VECTORISED_MAX = 200_000
"""Pooled sizes up to which :func:`_asymptotic_p_values` is scipy's to the bit: its sums of
ranks and of tie terms (t³ − t) are integers or halves below 2⁵³, exact in any order."""


def _asymptotic_p_values(
    samples: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]],
) -> npt.NDArray[np.float64]:
    """Two-sided asymptotic Mann–Whitney p-values of many pairs of samples, sizes mixed.

    ``scipy.stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic")`` for each
    pair, bit for bit: the same average ranks, the same tie-corrected z with continuity
    correction, in the same floating-point steps, and ``scipy.special.ndtr``. Pairs of one
    pooled size are ranked together, one row each (one scipy call costs about a millisecond
    of overhead; a set of thousands of tests has thousands of pairs).
    """
    from scipy import special

    n1 = np.array([f.size for f, _ in samples], dtype=np.int64)
    n = n1 + np.array([p.size for _, p in samples], dtype=np.int64)
    r1 = np.empty(n.size)
    tie_term = np.empty(n.size)
    for size in np.unique(n).tolist():
        same = np.flatnonzero(n == size)
        # Blocks of about 64k values: the temporaries stay in cache, not in fresh pages.
        step = max(1, _BLOCK // size)
        for block in range(0, same.size, step):
            rows = same[block : block + step]
            pooled = np.empty((rows.size, size))
            for row, i in enumerate(rows.tolist()):
                fail_x, pass_x = samples[i]
                pooled[row, : fail_x.size] = fail_x
                pooled[row, fail_x.size :] = pass_x
            r1[rows], tie_term[rows] = _rank_sums(pooled, n1[rows])
    n2 = n - n1
    u1 = r1 - n1 * (n1 + 1) / 2
    u2 = n1 * n2 - u1
    u = np.maximum(u1, u2)
    mu = n1 * n2 / 2
    s = np.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    numerator = u - mu
    numerator -= 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        z = numerator / s
    p: npt.NDArray[np.float64] = np.clip(special.ndtr(-z) * 2, 0.0, 1.0)
    return p


_BLOCK = 1 << 16
"""Values ranked at once by :func:`_asymptotic_p_values`."""
_COUNTED = 256
"""Small counts (every value an integer below this) are ranked by counting, not sorting."""


def _counted_rank_sums(
    values: npt.NDArray[np.intp], n1: npt.NDArray[np.int64], width: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """:func:`_rank_sums` of rows of small counts, by counting each value's trials.

    A value held by c trials after s smaller ones has the average rank s + 1 + (c − 1) / 2;
    the first sample's rank sum is the sum over values of its trials times that rank. Every
    term and partial sum is an integer or a half below 2⁵³, so the sums are the sorted ones
    to the bit.
    """
    k, size = values.shape
    cells = values + (np.arange(k) * width)[:, None]
    counts = np.bincount(cells.ravel(), minlength=k * width).reshape(k, width)
    first = np.arange(size) < n1[:, None]
    counts_first = np.bincount(cells[first], minlength=k * width).reshape(k, width)
    ties = counts.astype(np.float64)
    before = np.cumsum(counts, axis=1) - counts
    ranks = (before + 1).astype(np.float64) + (ties - 1) / 2
    r1 = (counts_first * ranks).sum(axis=1)
    tie_term = (ties**3 - ties).sum(axis=1)
    return r1, tie_term


def _rank_sums(
    pooled: npt.NDArray[np.float64], n1: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The first sample's sum of average ranks and the tie term Σ (t³ − t), per row.

    Each row of ``pooled`` holds one pair, its first ``n1`` values the first sample.
    """
    k, size = pooled.shape
    low, high = pooled.min(), pooled.max()
    if low >= 0 and high < _COUNTED and (pooled == np.floor(pooled)).all():
        return _counted_rank_sums(pooled.astype(np.intp), n1, int(high) + 1)
    order = np.argsort(pooled, axis=1)  # ties share their rank: any order of them will do
    ordered = np.take_along_axis(pooled, order, axis=1)
    new = np.ones((k, size), dtype=bool)  # the first of a run of equal values
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    last = np.ones((k, size), dtype=bool)  # the last of one
    last[:, :-1] = new[:, 1:]
    position = np.arange(size)
    start = np.maximum.accumulate(np.where(new, position, 0), axis=1)
    end = np.minimum.accumulate(np.where(last, position, size)[:, ::-1], axis=1)[:, ::-1]
    # scipy's average rank: the run's first ordinal rank plus (count - 1) / 2.
    counts = (end - start + 1).astype(np.float64)
    ranks = (start + 1).astype(np.float64) + (counts - 1) / 2
    first = order < n1[:, None]
    r1 = np.where(first, ranks, 0.0).sum(axis=1)
    tie_term = np.where(new, counts**3 - counts, 0.0).sum(axis=1)
    return r1, tie_term


_RANKS_CACHED = 64
"""Pooled sizes up to which a U test is looked up by its ranks (the cache stays small)."""


def _rank_key(
    fail_x: npt.NDArray[np.float64], pass_x: npt.NDArray[np.float64]
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The pooled samples' average ranks, each sample's sorted: all the U test depends on."""
    _, inverse, counts = np.unique(
        np.concatenate([fail_x, pass_x]), return_inverse=True, return_counts=True
    )
    ranks = (np.cumsum(counts) - (counts - 1) / 2)[inverse.ravel()]
    split = fail_x.size
    return tuple(np.sort(ranks[:split]).tolist()), tuple(np.sort(ranks[split:]).tolist())


@functools.lru_cache(maxsize=8192)
def _small_rank_sum_p(fail_ranks: tuple[float, ...], pass_ranks: tuple[float, ...]) -> float:
    """Two-sided Mann–Whitney p-value of small samples, from their ranks.

    The U statistic, the tie correction and the choice of the exact or the asymptotic method
    depend only on the pooled ranks, so the test of the ranks is the test of the values; a set
    of thousands of small tests repeats few rank patterns, each tested once.
    """
    from scipy import stats as sps

    result = sps.mannwhitneyu(np.array(fail_ranks), np.array(pass_ranks), alternative="two-sided")
    return float(result.pvalue)


def _numeric_factor(
    feature: str,
    kind: str,
    fail_x: npt.NDArray[np.float64],
    pass_x: npt.NDArray[np.float64],
    p: float,
    label: str | None = None,
) -> FailureFactor:
    what = label if label is not None else f"`{feature}`"
    if kind == "count":
        fail_v, pass_v = float(fail_x.mean()), float(pass_x.mean())
        effect = fail_v / pass_v if pass_v else math.inf
        if pass_v == 0:
            how = f"failing trials average {fail_v:.3g} {what}, passing trials none"
        elif fail_v == 0:
            how = f"failing trials have no {what}, passing trials {pass_v:.3g} on average"
        elif effect >= 1:
            how = f"failing trials have {effect:.1f}× as many {what} as passing trials"
        else:
            how = f"failing trials have {1 / effect:.1f}× fewer {what} than passing trials"
        detail = f"{how} (mean {fail_v:.3g} vs {pass_v:.3g}), {{p}}"
    else:
        fail_v, pass_v = float(np.median(fail_x)), float(np.median(pass_x))
        effect = fail_v - pass_v
        direction = "higher" if effect > 0 else "lower" if effect < 0 else "differently spread"
        detail = (
            f"failing trials have {direction} {what} (median {fail_v:.3g} vs {pass_v:.3g}), {{p}}"
        )
    return FailureFactor(feature, None, kind, "mannwhitney", effect, fail_v, pass_v, p, p, detail)


def explain_failures(
    passed: npt.ArrayLike,
    features: Mapping[str, npt.ArrayLike],
    kinds: Mapping[str, str] | None = None,
    alpha: float = 0.05,
    adjust: str = Adjustment.HOLM,
    labels: Mapping[str, str] | None = None,
) -> list[FailureFactor]:
    """Find the trace features that separate failing from passing trials.

    For each feature, failing trials are compared with passing ones: a binary feature (a tool
    used or not, an error span present) by Fisher's exact test on the 2×2 table; a
    categorical one (the model, the first step where paths diverge) level by level, each level
    against the rest, by Fisher's exact test; a count (a tool's calls, steps) or continuous
    feature (latency) by the two-sided Mann–Whitney U test (Mann & Whitney 1947), since such
    features are rarely normal. All p-values of the test case are then adjusted together
    (Holm 1979 by default, or Benjamini–Hochberg), and only those below ``alpha`` are kept.

    The kind of a feature is taken from ``kinds`` or else its dtype: bool → binary, integer →
    count, float → continuous, anything else → categorical. NaN (float) or None (categorical)
    marks a trial where the feature is unknown; it is left out of that feature's test.

    Args:
        passed: One bool per trial.
        features: Name → one value per trial.
        kinds: Optional name → one of :data:`FEATURE_KINDS`.
        alpha: Significance level for the adjusted p-values.
        adjust: ``"holm"``, ``"bh"`` or ``"none"``.
        labels: Optional name → words for a person, fitting "failing trials {label}" for a
            binary feature (``"use `search`"``, ``"have error spans"``) and "failing trials
            have 3× as many {label}" for a count (``"calls to `search`"``); the name in
            backticks otherwise.

    Returns:
        The significant findings, most significant first; empty when all trials passed or
        all failed.
    """
    request = FailureRequest(passed, features, kinds or {}, labels or {})
    return explain_many([request], alpha=alpha, adjust=adjust)[0]


@dataclass(frozen=True, slots=True)
class FailureRequest:
    """The arguments of one :func:`explain_failures` call, for :func:`explain_many`."""

    passed: npt.ArrayLike
    """One bool per trial."""
    features: Mapping[str, npt.ArrayLike]
    """Name → one value per trial."""
    kinds: Mapping[str, str]
    """Name → one of :data:`FEATURE_KINDS` (else taken from the dtype)."""
    labels: Mapping[str, str]
    """Name → words for a person."""
    resolutions: Mapping[str, float] = field(default_factory=dict)
    """Name → the smallest absolute difference worth reporting (latency in seconds: 0.001);
    smaller differences are tested and adjusted for, but not reported."""
    tables: Sequence[ShareTable] = ()
    """Binary features the caller counted already: tested before the binary ``features``."""
    samples: Sequence[NumericSample] = ()
    """Numeric features the caller split already (each varies, every value finite): tested
    before the numeric ``features``."""


ShareTable = tuple[str, str | None, str, str | None, tuple[int, int, int, int]]
"""A binary feature counted: name, level, kind, label, and (failing with, failing without,
passing with, passing without)."""
NumericSample = tuple[str, str, str | None, npt.NDArray[np.float64], npt.NDArray[np.float64]]
"""A numeric feature split: name, kind, label, the failing and the passing trials' values."""


@dataclass(frozen=True, slots=True)
class _Plan:
    """One test case's features, sorted into Fisher tables and U-test samples, not yet run."""

    shares: list[_Share]
    numeric: list[tuple[str, str, str | None, npt.NDArray[np.float64], npt.NDArray[np.float64]]]
    """Name, kind, label, the failing and the passing trials' values."""
    resolutions: Mapping[str, float]
    """Name → the smallest absolute difference worth reporting."""


def explain_many(
    requests: Sequence[FailureRequest],
    alpha: float = 0.05,
    adjust: str = Adjustment.HOLM,
    *,
    across_tests: bool = False,
) -> list[list[FailureFactor]]:
    """:func:`explain_failures` of many test cases, their statistical tests run together.

    Each test case's findings are those of its own call, bit for bit: a Fisher p-value
    depends on its table alone and each U test on its own two samples, so the tables of every
    case are tested in one vectorised pass and the U tests in another (a set of thousands of
    tests would otherwise pay scipy's overhead per test). A finding is put in words only once
    its adjusted p-value is known to lie below ``alpha``.

    With ``across_tests`` the p-values of every comparison of every case are adjusted
    together (Holm 1979 by default): the chance of reporting any explanation when no feature
    of any test differs is then at most ``alpha`` over the whole set, not per test (50 tests
    at alpha = 0.05 each would report a chance finding about nine times in ten). Either way,
    a numeric difference below :data:`RELATIVE_RESOLUTION` of the larger value, or below the
    feature's ``resolutions`` entry, is not reported; it is still counted in the adjustment,
    so dropping it can only lower the error rate.
    """
    check_open_unit("alpha", alpha)
    plans = [_plan(r) for r in requests]
    shares = [s for plan in plans if plan is not None for s in plan.shares]
    tables = np.array([s.table for s in shares], dtype=np.int64).reshape(-1, 2, 2)
    share_p = fisher_two_sided(tables).tolist() if shares else []
    samples = [(f, p) for plan in plans if plan is not None for _, _, _, f, p in plan.numeric]
    rank_p = _rank_sum_p_values(samples)
    per_plan: list[list[float]] = []
    at_share = at_rank = 0
    for plan in plans:
        k, m = (0, 0) if plan is None else (len(plan.shares), len(plan.numeric))
        per_plan.append(share_p[at_share : at_share + k] + rank_p[at_rank : at_rank + m])
        at_share, at_rank = at_share + k, at_rank + m
    if across_tests:
        flat = [p for p_values in per_plan for p in p_values]
        every = adjust_p_values(flat, adjust).tolist() if flat else []
        bounds = np.cumsum([0] + [len(p_values) for p_values in per_plan]).tolist()
        adjusted = [every[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    else:
        adjusted = [adjust_p_values(p, adjust).tolist() if p else [] for p in per_plan]
    out: list[list[FailureFactor]] = []
    for plan, p_values, p_adjusted in zip(plans, per_plan, adjusted, strict=True):
        out.append([] if plan is None else _significant(plan, p_values, p_adjusted, alpha))
    return out


def _plan(request: FailureRequest) -> _Plan | None:
    """Sort one case's features into tables and samples; None when nothing can be tested.

    The binary features' tables are counted together, and the numeric features' samples
    split together, as rows of one matrix each (the same integers and the same arrays as one
    feature at a time).
    """
    ok = np.asarray(request.passed, dtype=bool).ravel()
    failed = ~ok
    n = ok.size
    kinds, labels = request.kinds, request.labels
    if not failed.any() or failed.all():
        return None
    # Shares in feature order: a binary feature's row of `flags`, or a categorical level's.
    shares: list[_Share | tuple[str, str | None, int]] = []
    flags: list[npt.NDArray[np.bool_]] = []
    numeric: list[tuple[str, str, str | None]] = []
    numbers: list[npt.NDArray[np.float64]] = []
    for name, raw in request.features.items():
        values = np.asarray(raw)
        if values.ndim != 1 or values.size != n:
            raise ConfigError(f"feature {name!r} has {values.size} values for {n} trials")
        kind = kinds.get(name) or _kind(values)
        if kind not in FEATURE_KINDS:
            raise ConfigError(f"feature {name!r}: unknown kind {kind!r}")
        if kind == "binary":
            shares.append((name, labels.get(name), len(flags)))
            flags.append(values.astype(bool))
        elif kind == "categorical":
            shares.extend(_levels(name, values, failed, labels.get(name)))
        else:
            numeric.append((name, kind, labels.get(name)))
            numbers.append(values.astype(np.float64))
    tables = _tables(flags, failed)
    planned = [_Share(*table) for table in request.tables]
    planned += [
        s if isinstance(s, _Share) else _Share(s[0], None, "binary", s[1], tables[s[2]])
        for s in shares
    ]
    samples = _samples(numbers, failed)
    tested = list(request.samples)
    tested += [
        (name, kind, label, *sample)
        for (name, kind, label), sample in zip(numeric, samples, strict=True)
        if sample is not None
    ]
    return _Plan(planned, tested, request.resolutions)


def _tables(
    flags: list[npt.NDArray[np.bool_]], failed: npt.NDArray[np.bool_]
) -> list[tuple[int, int, int, int]]:
    """:attr:`_Share.table` of each binary feature's flags."""
    if not flags:
        return []
    has = np.stack(flags)
    with_failed = (has & failed).sum(axis=1)
    with_passed = (has & ~failed).sum(axis=1)
    n_failed = int(failed.sum())
    n_passed = failed.size - n_failed
    return [
        (a, n_failed - a, c, n_passed - c)
        for a, c in zip(with_failed.tolist(), with_passed.tolist(), strict=True)
    ]


def _samples(
    numbers: list[npt.NDArray[np.float64]], failed: npt.NDArray[np.bool_]
) -> list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None]:
    """:func:`_numeric_samples` of each numeric feature's values."""
    if not numbers:
        return []
    x = np.stack(numbers)
    finite: list[bool] = np.all(np.isfinite(x), axis=1).tolist()
    fail_x, pass_x = x[:, failed], x[:, ~failed]
    constant: list[bool] = np.equal(x.max(axis=1), x.min(axis=1)).tolist()
    return [
        (None if constant[row] else (fail_x[row], pass_x[row]))
        if finite[row]
        else _numeric_samples(numbers[row], failed)
        for row in range(len(numbers))
    ]


def _below_resolution(factor: FailureFactor, absolute: float) -> bool:
    """Whether a numeric finding's difference is too small to matter to anyone."""
    gap = abs(factor.fail_value - factor.pass_value)
    larger = max(abs(factor.fail_value), abs(factor.pass_value))
    return gap < absolute or gap < RELATIVE_RESOLUTION * larger


def _levels(
    name: str, values: npt.NDArray[np.generic], failed: npt.NDArray[np.bool_], label: str | None
) -> list[_Share]:
    """The shares of a categorical feature: each level against the rest (one of two)."""
    known = np.array([v is not None for v in values.tolist()], dtype=bool)
    names = np.array([str(v) for v in values.tolist()], dtype=object)
    sub_failed = failed[known]
    if sub_failed.all() or not sub_failed.any():
        return []
    levels = sorted(set(names[known].tolist()))
    if len(levels) < 2:
        return []
    if len(levels) == 2:
        # Two levels are one hypothesis: report the one over-represented in failures.
        lab = names[known]
        gap = [
            float((lab[sub_failed] == lv).mean() - (lab[~sub_failed] == lv).mean()) for lv in levels
        ]
        levels = [levels[int(np.argmax(gap))]]
    return [
        _Share.of(name, level, "categorical", names[known] == level, sub_failed, label)
        for level in levels
    ]


def _significant(
    plan: _Plan, p_values: list[float], adjusted: list[float], alpha: float
) -> list[FailureFactor]:
    """The findings whose adjusted p-value lies below ``alpha``, above the resolution."""
    out = []
    k = len(plan.shares)
    for i in np.flatnonzero(np.asarray(adjusted) < alpha).tolist():
        p, p_adj = p_values[i], float(adjusted[i])
        if i < k:
            factor = plan.shares[i].factor(p)
        else:
            name, kind, label, fail_x, pass_x = plan.numeric[i - k]
            factor = _numeric_factor(name, kind, fail_x, pass_x, p, label)
            if _below_resolution(factor, plan.resolutions.get(name, 0.0)):
                continue
        out.append(
            FailureFactor(
                factor.feature,
                factor.level,
                factor.kind,
                factor.test,
                factor.effect,
                factor.fail_value,
                factor.pass_value,
                factor.p_value,
                p_adj,
                factor.detail.replace("{p}", _p(p_adj)),
            )
        )
    return sorted(out, key=lambda f: (f.p_adjusted, f.feature, f.level or ""))
