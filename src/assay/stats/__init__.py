"""Statistics on numbers and arrays: pure functions, numpy and scipy only, no Polars, no I/O.

One idea per private module, all re-exported here:

* ``_intervals`` — pass-rate confidence intervals (five methods), fewest trials for a PASS.
* ``_exact2x2`` — one-sided exact Fisher / Boschloo / Barnard p-values for a drop.
* ``_power`` — their rejection regions and exact power, cached per group sizes.
* ``_planning`` — trials needed for a threshold or a regression check.
* ``_passk`` — unbiased pass@k and pass^k.
* ``_scores`` — score summaries (t or bootstrap interval) and the Mann–Whitney score test.
* ``_consistency`` — tool-choice agreement and Levenshtein similarity.
* ``_flakiness`` — the flakiness score and its explained factors.
* ``_explain`` — which trace features separate failing from passing trials.
* ``_multiple`` — p-value adjustment and false-verdict risk across a suite.
* ``_sprt`` — sequential tests for adaptive stopping: Wald's SPRT, a confidence sequence.
* ``_sequential_oc`` — their exact operating characteristics, simulation, fixed-N reference.

See docs/statistics.md for the methods, their sources and defaults.
"""

from assay.stats._consistency import (
    ToolConsistency,
    levenshtein,
    sequence_similarity,
    tool_consistency,
)
from assay.stats._exact2x2 import TESTS, regression_p_value
from assay.stats._explain import FEATURE_KINDS, FailureFactor, explain_failures
from assay.stats._flakiness import CATEGORIES, WEIGHTS, Factor, Flakiness, category, flakiness
from assay.stats._intervals import (
    METHODS,
    Interval,
    min_trials_for_pass,
    proportion_bounds,
    proportion_interval,
    wilson_interval,
)
from assay.stats._multiple import (
    ADJUST_METHODS,
    FalseVerdictRisk,
    adjust_p_values,
    false_verdict_risk,
    simultaneous_confidence,
)
from assay.stats._passk import DEFAULT_KS, PassAtK, pass_at_k, pass_at_ks, pass_hat_k, pass_hat_ks
from assay.stats._planning import (
    RegressionPlan,
    ThresholdPlan,
    pass_probability,
    plan_regression,
    plan_threshold,
)
from assay.stats._power import regression_power, rejection_probability, rejection_region
from assay.stats._scores import (
    SCORE_CI_METHODS,
    ScoreShift,
    ScoreSummary,
    score_shift_test,
    score_summary,
)
from assay.stats._sequential_oc import (
    FixedSampleDesign,
    OperatingCharacteristics,
    fixed_sample_design,
    operating_characteristics,
    simulate_sequential,
)
from assay.stats._sprt import (
    SPRT,
    ConfidenceSequenceTest,
    SequentialDecision,
    SequentialMethod,
    SequentialState,
    SequentialTest,
    sequential_test,
)

__all__ = [
    "ADJUST_METHODS",
    "CATEGORIES",
    "DEFAULT_KS",
    "FEATURE_KINDS",
    "METHODS",
    "SCORE_CI_METHODS",
    "SPRT",
    "TESTS",
    "WEIGHTS",
    "ConfidenceSequenceTest",
    "Factor",
    "FailureFactor",
    "FalseVerdictRisk",
    "FixedSampleDesign",
    "Flakiness",
    "Interval",
    "OperatingCharacteristics",
    "PassAtK",
    "RegressionPlan",
    "ScoreShift",
    "ScoreSummary",
    "SequentialDecision",
    "SequentialMethod",
    "SequentialState",
    "SequentialTest",
    "ThresholdPlan",
    "ToolConsistency",
    "adjust_p_values",
    "category",
    "explain_failures",
    "false_verdict_risk",
    "fixed_sample_design",
    "flakiness",
    "levenshtein",
    "min_trials_for_pass",
    "operating_characteristics",
    "pass_at_k",
    "pass_at_ks",
    "pass_hat_k",
    "pass_hat_ks",
    "pass_probability",
    "plan_regression",
    "plan_threshold",
    "proportion_bounds",
    "proportion_interval",
    "regression_p_value",
    "regression_power",
    "rejection_probability",
    "rejection_region",
    "score_shift_test",
    "score_summary",
    "sequence_similarity",
    "sequential_test",
    "simulate_sequential",
    "simultaneous_confidence",
    "tool_consistency",
    "wilson_interval",
]
