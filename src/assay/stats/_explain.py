"""Explain failures: which per-trial features separate failing from passing trials."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from assay.choices import Adjustment
from assay.errors import ConfigError
from assay.stats._fisher import fisher_two_sided
from assay.stats._multiple import adjust_p_values

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
    """p-value adjusted over every feature (and level) tested for this test case."""
    detail: str
    """The finding in a sentence, e.g. "failing trials call `search` 3.1× as often"."""


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


def _share_factors(shares: list[_Share]) -> list[FailureFactor]:
    """The findings of ``shares``, their Fisher tests run together (:func:`fisher_two_sided`)."""
    if not shares:
        return []
    p_values = fisher_two_sided(np.array([s.table for s in shares]).reshape(-1, 2, 2))
    return [s.factor(float(p)) for s, p in zip(shares, p_values, strict=True)]


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

    Pairs of the same sizes above 8 each are tested in one vectorised scipy call (scipy's
    "auto" method is the asymptotic one there, so the p-values are those of separate calls).
    """
    from scipy import stats as sps

    out: list[float | None] = [None] * len(samples)
    batches: dict[tuple[int, int], list[int]] = {}
    for i, (fail_x, pass_x) in enumerate(samples):
        if fail_x.size > 8 and pass_x.size > 8:
            batches.setdefault((fail_x.size, pass_x.size), []).append(i)
        elif fail_x.size + pass_x.size <= _RANKS_CACHED:
            out[i] = _small_rank_sum_p(*_rank_key(fail_x, pass_x))
        else:
            result = sps.mannwhitneyu(fail_x, pass_x, alternative="two-sided")
            out[i] = float(result.pvalue)
    for members in batches.values():
        fail = np.column_stack([samples[i][0] for i in members])
        passing = np.column_stack([samples[i][1] for i in members])
        result = sps.mannwhitneyu(
            fail, passing, alternative="two-sided", method="asymptotic", axis=0
        )
        for i, p in zip(members, np.atleast_1d(result.pvalue), strict=True):
            out[i] = float(p)
    return [float(p) for p in out if p is not None]


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
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must lie strictly between 0 and 1 (got {alpha})")
    ok = np.asarray(passed, dtype=bool).ravel()
    failed = ~ok
    n = ok.size
    kinds = kinds or {}
    labels = labels or {}
    found: list[FailureFactor] = []
    shares: list[_Share] = []
    numeric: list[tuple[str, str, npt.NDArray[np.float64], npt.NDArray[np.float64]]] = []
    if not failed.any() or failed.all():
        return []
    for name, raw in features.items():
        values = np.asarray(raw)
        if values.ndim != 1 or values.size != n:
            raise ConfigError(f"feature {name!r} has {values.size} values for {n} trials")
        kind = kinds.get(name) or _kind(values)
        if kind not in FEATURE_KINDS:
            raise ConfigError(f"feature {name!r}: unknown kind {kind!r}")
        if kind == "binary":
            shares.append(
                _Share.of(name, None, kind, values.astype(bool), failed, labels.get(name))
            )
        elif kind == "categorical":
            known = np.array([v is not None for v in values.tolist()], dtype=bool)
            names = np.array([str(v) for v in values.tolist()], dtype=object)
            sub_failed = failed[known]
            if sub_failed.all() or not sub_failed.any():
                continue
            levels = sorted(set(names[known].tolist()))
            if len(levels) < 2:
                continue
            if len(levels) == 2:
                # Two levels are one hypothesis: report the one over-represented in failures.
                lab = names[known]
                gap = [
                    float((lab[sub_failed] == lv).mean() - (lab[~sub_failed] == lv).mean())
                    for lv in levels
                ]
                levels = [levels[int(np.argmax(gap))]]
            for level in levels:
                has = names[known] == level
                shares.append(_Share.of(name, level, kind, has, sub_failed, labels.get(name)))
        else:
            sample = _numeric_samples(values.astype(np.float64), failed)
            if sample is not None:
                numeric.append((name, kind, *sample))
    found.extend(_share_factors(shares))
    p_values = _rank_sum_p_values([(fail_x, pass_x) for _, _, fail_x, pass_x in numeric])
    for (name, kind, fail_x, pass_x), p in zip(numeric, p_values, strict=True):
        found.append(_numeric_factor(name, kind, fail_x, pass_x, p, labels.get(name)))
    if not found:
        return []
    adjusted = adjust_p_values([f.p_value for f in found], adjust)
    out = []
    for factor, p_adj in zip(found, adjusted, strict=True):
        if p_adj < alpha:
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
                    float(p_adj),
                    factor.detail.replace("{p}", _p(float(p_adj))),
                )
            )
    return sorted(out, key=lambda f: (f.p_adjusted, f.feature, f.level or ""))
