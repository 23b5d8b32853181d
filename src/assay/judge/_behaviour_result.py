"""The behaviour verdict's values: CHANGED / UNCHANGED / INCONCLUSIVE, each feature's change."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from assay.stats import BehaviourKind


class BehaviourVerdict(enum.StrEnum):
    """Did the behaviour of a test change between two versions?"""

    CHANGED = "CHANGED"
    """At least one feature shifted, after multiple-testing adjustment."""
    UNCHANGED = "UNCHANGED"
    """No feature shifted, and each had the power to show its minimal effect."""
    INCONCLUSIVE = "INCONCLUSIVE"
    """No feature shifted, but too few trials to vouch that nothing did."""


@dataclass(frozen=True, slots=True)
class BehaviourChange:
    """One feature's comparison between the baseline and the current version."""

    feature: str
    """Machine name: ``path``, ``uses:verify``, ``tool_calls:search``, ``cost``, ..."""
    label: str
    """Words for a person."""
    kind: BehaviourKind
    """``path``, ``binary``, ``count`` or ``continuous``."""
    baseline: float
    """Baseline share (path, binary) or mean per trial (count, continuous)."""
    current: float
    """The same for the current version."""
    effect: float | None
    """Difference current − baseline (shares) or ratio current / baseline (means)."""
    measure: str
    """``difference`` or ``ratio``."""
    ci_low: float | None
    """Lower bound of the effect's confidence interval."""
    ci_high: float | None
    """Upper bound of the effect's confidence interval."""
    p_value: float
    """Unadjusted two-sided p-value."""
    adjusted_p: float
    """p-value adjusted across the family (see the module docstring)."""
    method: str
    """The test used."""
    changed: bool
    """``adjusted_p < alpha``."""
    power: float
    """Power to see the kind's minimal effect at the family's level."""
    minimal_effect: float
    """That minimal effect (a share difference, or a ratio)."""
    path: tuple[str, ...] | None
    """For ``path``: the variant whose share moved most."""
    note: str | None
    """``appeared`` or ``vanished`` for a tool or model seen on one side only."""
    baseline_traces: tuple[str, ...]
    """Trace ids of typical baseline trials for this feature."""
    current_traces: tuple[str, ...]
    """Trace ids of typical current trials for this feature."""

    @property
    def magnitude(self) -> float:
        """The effect in units of the kind's minimal effect (for ordering changes)."""
        if self.effect is None:
            return math.inf
        if self.measure == "ratio":
            if self.effect <= 0:
                return math.inf
            return abs(math.log(self.effect)) / math.log(self.minimal_effect)
        return abs(self.effect) / self.minimal_effect


@dataclass(frozen=True, slots=True)
class BehaviourResult:
    """The behaviour verdict of one test, with every feature compared."""

    verdict: BehaviourVerdict
    """CHANGED, UNCHANGED or INCONCLUSIVE."""
    reason: str
    """One sentence saying why."""
    features: tuple[BehaviourChange, ...]
    """Every feature tested: changed ones first, each group largest effect first."""
    baseline_n: int
    """Baseline trials."""
    current_n: int
    """Current trials."""
    alpha: float
    """Significance level of the adjusted p-values."""
    adjust: str
    """``holm`` within the test (``--adjust none``), or the suite-wide method."""
    family_size: int
    """Number of features adjusted together."""
    required_power: float
    """The power UNCHANGED needs for every feature."""
    trials_needed: int | None
    """Trials per version for every feature to reach the required power (INCONCLUSIVE)."""

    @property
    def changes(self) -> tuple[BehaviourChange, ...]:
        """The features that changed, largest effect first."""
        return tuple(f for f in self.features if f.changed)


def describe_change(change: BehaviourChange) -> str:
    """One line: "calls to `search` per trial 1.00 → 1.30, ratio 1.30× [1.12, 1.51]"."""
    if change.measure == "ratio":
        head = f"{change.label} {_figure(change.baseline)} → {_figure(change.current)}"
        if change.effect is None:
            return head
        ci = (
            f" [{change.ci_low:.2f}, {change.ci_high:.2f}]"
            if change.ci_low is not None and change.ci_high is not None
            else ""
        )
        return f"{head}, ratio {change.effect:.2f}×{ci}"
    what = change.label
    if change.path is not None:
        what = f"{change.label} `{' → '.join(change.path) or '(no tools)'}`"
    note = f" ({change.note})" if change.note else ""
    ci = (
        f" [{change.ci_low * 100:+.0f}, {change.ci_high * 100:+.0f}]"
        if change.ci_low is not None and change.ci_high is not None
        else ""
    )
    effect = change.effect or 0.0
    return (
        f"{what}: {change.baseline:.0%} → {change.current:.0%} of trials{note}, "
        f"{effect * 100:+.0f} pp{ci}"
    )


def _figure(value: float) -> str:
    """A mean for people: 1,562 tokens, 1.30 calls, 0.00493 USD."""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"
