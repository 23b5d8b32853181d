"""Explain failures: which per-trial features separate failing from passing trials."""

from __future__ import annotations

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
from assay.stats.two_sample import fisher_two_sided, mann_whitney_p_values

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
    return explain_tested([failure_tests(requests)], alpha, adjust, across_tests=across_tests)


@dataclass(frozen=True, slots=True)
class FailureTests:
    """Test cases' features tested, their p-values not yet adjusted (:func:`failure_tests`)."""

    plans: list[_Plan | None]
    """Each case's features sorted into tables and samples; None: nothing to test."""
    p_values: list[list[float]]
    """Each case's p-values: its tables' (Fisher), then its samples' (U test)."""


def failure_tests(requests: Sequence[FailureRequest]) -> FailureTests:
    """The statistical tests of :func:`explain_many`, on some of its cases.

    A case's p-values depend on its own features alone, so cases tested in several batches
    (in threads, say) get the p-values they get tested together; :func:`explain_tested`
    then adjusts the batches' p-values together.
    """
    plans = [_plan(r) for r in requests]
    shares = [s for plan in plans if plan is not None for s in plan.shares]
    tables = np.array([s.table for s in shares], dtype=np.int64).reshape(-1, 2, 2)
    share_p = fisher_two_sided(tables).tolist() if shares else []
    samples = [(f, p) for plan in plans if plan is not None for _, _, _, f, p in plan.numeric]
    rank_p = mann_whitney_p_values(samples)
    per_plan: list[list[float]] = []
    at_share = at_rank = 0
    for plan in plans:
        k, m = (0, 0) if plan is None else (len(plan.shares), len(plan.numeric))
        per_plan.append(share_p[at_share : at_share + k] + rank_p[at_rank : at_rank + m])
        at_share, at_rank = at_share + k, at_rank + m
    return FailureTests(plans, per_plan)


def explain_tested(
    tested: Sequence[FailureTests],
    alpha: float = 0.05,
    adjust: str = Adjustment.HOLM,
    *,
    across_tests: bool = False,
) -> list[list[FailureFactor]]:
    """:func:`explain_many` of the cases of ``tested``, in order, from their p-values."""
    check_open_unit("alpha", alpha)
    plans = [plan for batch in tested for plan in batch.plans]
    per_plan = [p_values for batch in tested for p_values in batch.p_values]
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
