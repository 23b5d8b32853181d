"""The typed results of a suite: its answer over cases and its paired comparison.

Every report renders these fields (JSON ``suites``, docs/json.md); :mod:`._suite` computes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from assay.judge._behaviour_result import BehaviourVerdict
from assay.judge._threshold import Verdict
from assay.stats import BehaviourKind, Interval, PairedComparison, PairedDifference


@dataclass(frozen=True, slots=True)
class SuiteEstimate:
    """A suite-level figure: its value over cases and its interval (cases as clusters)."""

    value: float | None
    """The mean over cases (None: no case has the figure)."""
    interval: Interval | None
    """Its interval, or None with fewer than two cases."""
    cases: int
    """Cases that have the figure."""


@dataclass(frozen=True, slots=True)
class SuiteComparison:
    """The suite's paired comparison of the current version against the baseline."""

    baseline_cases: int
    """Cases the baseline ran."""
    current_cases: int
    """Cases the current version ran."""
    paired_cases: int
    """Cases both ran: the comparison rests on these."""
    unpaired_cases: int
    """Cases only one version ran (named in ``only_baseline`` and ``only_current``)."""
    only_baseline: tuple[str, ...]
    """Cases only the baseline ran."""
    only_current: tuple[str, ...]
    """Cases only the current version ran."""
    paired: PairedComparison | None
    """The paired test of the pass rates (None without a paired case)."""
    difference: float | None
    """Mean over paired cases of (current − baseline) pass rate: negative is a drop."""
    interval: Interval | None
    """The two-sided interval of ``difference``."""
    test: str | None
    """``mcnemar-exact`` or ``betting`` (see ``assay.stats.paired_comparison``)."""
    p_value: float | None
    """One-sided p-value of a drop."""
    power: float | None
    """Power of the test at a drop of ``delta``."""
    delta: float
    """The smallest drop worth detecting."""
    min_detectable_drop: float | None
    """The drop this design detects with the required power."""
    margin: float | None
    """The non-inferiority margin asked for (``--margin``), or None."""
    verdict: Verdict
    """PASS, FAIL or INCONCLUSIVE (see the module docstring)."""
    reason: str
    """One sentence: what decided it."""
    score: PairedDifference | None = None
    """The main score's mean paired difference (current − baseline), when both record it."""
    cost_usd: PairedDifference | None = None
    """Mean cost per trial, paired, when both versions were priced and something was spent."""
    cost_usd_reason: str | None = None
    """Why ``cost_usd`` is None (nothing spent, or no price), else None."""
    duration_s: PairedDifference | None = None
    """Mean trial duration, paired."""
    moved: tuple[tuple[str, float], ...] = ()
    """The paired cases whose pass rate moved most: (case, current − baseline), largest first."""
    missing_current: tuple[str, ...] = ()
    """Cases of the suite with no answer from the current version: run by the baseline only,
    or every current trial an error. While any is missing a PASS needs
    ``--allow-missing-cases`` (else INCONCLUSIVE)."""
    baseline_silent: tuple[str, ...] = ()
    """Cases the baseline ran but never answered (every trial an error): not compared."""
    worst_case: PairedComparison | None = None
    """The comparison with every missing case counted as failing all its current trials (as
    many as the baseline ran); None when no case is missing."""
    worst_case_verdict: Verdict | None = None
    """The verdict ``worst_case`` would give."""
    behaviour: SuiteBehaviour | None = None
    """The suite's behaviour diff over the paired cases (None without a paired case)."""


@dataclass(frozen=True, slots=True)
class SuiteResult:
    """A suite's answer over its cases."""

    suite: str | None
    """The ``assay.suite`` value; None for cases recording none (the set's suite)."""
    cases: int
    """Test cases in the suite."""
    trials: int
    """Trials counted over its cases."""
    pass_rate: float | None
    """Mean over cases of each case's pass rate (each case weighted equally)."""
    interval: Interval | None
    """Its interval with cases as clusters; None with fewer than two cases."""
    threshold: float
    """The suite threshold the verdict is judged against."""
    verdict: Verdict
    """PASS when the interval lies at or above the threshold, FAIL wholly below, else
    INCONCLUSIVE."""
    reason: str
    """One sentence: what decided the verdict."""
    score: SuiteEstimate | None = None
    """The main score's mean over cases, when cases record it."""
    score_name: str | None = None
    """The main score's name."""
    pass_at_k: Mapping[str, SuiteEstimate] | None = None
    """pass@k over cases (τ-bench: the unbiased per-case estimate averaged), keyed by k."""
    pass_hat_k: Mapping[str, SuiteEstimate] | None = None
    """pass^k over cases, keyed by k."""
    comparison: SuiteComparison | None = None
    """The paired comparison against the baseline, when one was given."""
    case_ids: tuple[str, ...] = ()
    """Its cases, by id."""
    notes: tuple[str, ...] = ()
    """Plain-language remarks (a case recorded under several suites, adaptive stopping, ...)."""
    counts: bool = False
    """Its threshold verdict counts in the exit code: a suite threshold was asked for
    (``--suite-threshold``) and the suite holds two cases or more (docs/cli.md)."""


@dataclass(frozen=True, slots=True)
class SuiteFeatureShift:
    """One behaviour feature over the suite's paired cases: its mean paired difference."""

    feature: str
    """``steps``, ``llm_calls``, ``input_tokens``, ``output_tokens``, ``latency``,
    ``error_spans``, ``uses:<tool>``, ``tool_calls:<tool>`` or ``model:<model>``."""
    label: str
    """Its short name in the reports (``input tokens/trial``, ``uses:search``)."""
    kind: BehaviourKind
    """``binary`` (a share of trials: shown in points), ``count`` or ``continuous``."""
    baseline: float
    """Mean over the paired cases of the baseline's per-case mean (a share, or per trial)."""
    current: float
    """The same for the current version."""
    difference: float
    """current − baseline: the mean over the cases of each case's difference."""
    relative: float | None
    """``difference / baseline`` for counts and continuous features (None for shares, or a
    baseline of 0)."""
    interval: Interval
    """The paired t interval of ``difference``."""
    test: str
    """``sign-flip-exact`` or ``sign-flip-monte-carlo`` (two-sided)."""
    p_value: float
    """Two-sided sign-flip p-value of "no mean difference"."""
    p_value_error: float | None
    """Its Monte Carlo standard error; None when exact."""
    adjusted_p: float
    """``p_value`` adjusted across the suite's features (Holm, or BH under ``--adjust bh``)."""
    changed: bool
    """``adjusted_p`` < alpha."""
    minimal_effect: float
    """The smallest change UNCHANGED vouches for, in the feature's units: 0.20 of a share; for
    counts and continuous features the kind's ratio either way, ``(1 − 1/ratio) × baseline``
    (the harder of the two directions)."""
    power: float
    """Power to see ``minimal_effect`` at Holm's first level (alpha / features)."""
    detectable: float | None
    """The smallest difference seen with the required power at that level (None: none)."""


@dataclass(frozen=True, slots=True)
class SuiteBehaviour:
    """The suite's behaviour diff: each feature's mean paired difference, tested across cases."""

    verdict: BehaviourVerdict
    """CHANGED when some feature's adjusted p-value lies below alpha; UNCHANGED when none did
    and every feature had the required power for its minimal effect; else INCONCLUSIVE."""
    reason: str
    """One sentence: what decided it."""
    cases: int
    """Paired cases the features are compared over."""
    features: tuple[SuiteFeatureShift, ...]
    """Every feature tested: changed first (smallest adjusted p first), then by name."""
    alpha: float
    """Significance level of the adjusted p-values."""
    adjustment: str
    """``holm`` or ``bh``: the adjustment across the suite's features."""
    required_power: float
    """The power UNCHANGED needs for every feature."""
    left_out: tuple[str, ...] = ()
    """What was not compared and why (work unknown in a version), one sentence each."""
    fail_on: tuple[str, ...] = ()
    """The ``--fail-on`` rules a changed feature breaks, one line each: the suite's comparison
    then counts a FAIL in the exit code (kind ``suite fail-on``, docs/cli.md)."""
