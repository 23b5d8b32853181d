"""Statistics on numbers and arrays: pure functions, numpy and scipy only, no Polars, no I/O.

One idea per private module, all re-exported here:

* ``_intervals`` — pass-rate confidence intervals (five methods), fewest trials for a PASS.
* ``_verdict_interval`` — the interval a fixed-n threshold verdict reads: each side's exact
  error at the threshold ≤ α/2 (the method's bound, else Clopper–Pearson's).
* ``_exact2x2`` — one-sided exact Fisher / Boschloo / Barnard p-values for a drop.
* ``_prefix_power`` — Fisher's power at any size, summed row by row.
* ``_power`` — their rejection regions and exact power, cached per group sizes.
* ``_planning`` — trials needed for a threshold or a regression check.
* ``_clustered`` — a suite's mean over cases with cases as clusters (cluster-robust t or
  cluster bootstrap), and suite-level pass@k / pass^k.
* ``_paired`` — two versions over the same cases: paired difference, McNemar or sign-flip
  test of a drop; ``_paired_power`` — those tests' power and the minimum detectable drop.
* ``_suite_planning`` — cases × trials per case for a paired comparison, and a pilot's
  between- and within-case variances.
* ``_passk`` — unbiased pass@k and pass^k.
* ``_scores`` — score summaries (t or bootstrap interval) and the Mann–Whitney score test.
* ``_consistency`` — tool-choice agreement and Levenshtein similarity.
* ``_tool_paths`` — a set of trials' distinct tool sequences and which one each took.
* ``_flakiness`` — the flakiness score and its explained factors.
* ``_explain`` — which trace features separate failing from passing trials.
* ``_behaviour`` — behaviour diff between two versions: a test, effect and interval per feature
  kind (tool paths, binary, counts, continuous); ``_behaviour_paths`` — the tool-path test;
  ``_behaviour_power`` — the power to see a minimal change.
* ``_mann_whitney`` — Mann–Whitney U p-values of many pairs of samples in one pass, each
  equal to scipy's.
* ``_moments`` — sum, mean, spread and percentiles of many samples at once.
* ``_multiple`` — p-value adjustment and false-verdict risk across a suite.
* ``_confidence_sequence`` — an anytime-valid confidence sequence for a pass rate, and the
  one factory of the sequence every adaptive verdict reads (``pass_rate_sequence``).
* ``_drop_sequence`` — an anytime-valid test of a drop between two pass rates (betting on the
  versions' trials paired in run order: valid whatever rule stopped either version), the
  drop's confidence sequence and the test's exact power.
* ``_betting`` — the betting confidence sequence of a bounded mean (Waudby-Smith & Ramdas).
* ``_paired_sequence`` — its use for the mean paired difference over cases, and the decision.
* ``_paired_simulation`` — that adaptive comparison run over many simulated suites at once;
  ``_adaptive_planning`` — the suite size it needs, by simulating it.
* ``_sprt`` — stopping rules for adaptive runs: the confidence sequence, Wald's SPRT.
* ``_sequential_oc`` — their exact operating characteristics, simulation, fixed-N reference;
  ``_adaptive_threshold_plan`` — the maximum trials ``assay run``'s adaptive check needs.
* ``_preload`` — scipy's statistics imported in the background while spans are read.

See docs/statistics.md for the methods, their sources and defaults.
"""

from assay.choices import (
    Adjustment,
    IntervalMethod,
    PairedTest,
    RegressionTest,
    ScoreInterval,
    SequentialMethod,
    SuiteInterval,
)
from assay.stats._adaptive_planning import plan_adaptive_paired
from assay.stats._adaptive_threshold_plan import (
    AdaptiveThresholdPlan,
    adaptive_run_characteristics,
    plan_adaptive_threshold,
)
from assay.stats._behaviour import (
    BEHAVIOUR_KINDS,
    BehaviourKind,
    BehaviourSample,
    FeaturePair,
    Shift,
    binary_shift,
    continuous_shift,
    continuous_shifts,
    count_shift,
    count_shifts,
    difference_interval,
    log_ratio_se,
)
from assay.stats._behaviour_paths import PathShift, path_shift, permutations_for
from assay.stats._behaviour_power import (
    MINIMAL_EFFECTS,
    equal_trials_guess,
    ratio_power,
    share_power,
    trials_for_power,
)
from assay.stats._betting import BoundedMeanSequence
from assay.stats._clustered import (
    CLUSTER_METHODS,
    ClusteredMean,
    SuitePassAtK,
    clustered_mean,
    suite_pass_at_k,
    suite_pass_hat_k,
)
from assay.stats._confidence_sequence import (
    DEFAULT_HORIZON,
    BernoulliConfidenceSequence,
    open_ended_sequence,
    pass_rate_sequence,
    tuned_prior_strength,
)
from assay.stats._consistency import (
    ToolConsistency,
    levenshtein,
    sequence_similarity,
    tool_consistency,
)
from assay.stats._drop_sequence import DropSequence, DropTest
from assay.stats._exact2x2 import MAX_TABLES, TESTS, enumerable, regression_p_value
from assay.stats._explain import (
    FEATURE_KINDS,
    RELATIVE_RESOLUTION,
    FailureFactor,
    FailureRequest,
    explain_failures,
    explain_many,
)
from assay.stats._flakiness import (
    CATEGORIES,
    WEIGHTS,
    Factor,
    Flakiness,
    category,
    flakiness,
    flakiness_of,
)
from assay.stats._intervals import (
    METHODS,
    Interval,
    min_trials_for_pass,
    proportion_bounds,
    proportion_interval,
    wilson_interval,
)
from assay.stats._mann_whitney import mann_whitney_p_values
from assay.stats._moments import Moments, sample_moments
from assay.stats._multiple import (
    ADJUST_METHODS,
    FalseVerdictRisk,
    WatchFamilyRisk,
    adjust_p_values,
    false_verdict_risk,
    simultaneous_confidence,
    watch_family_risk,
)
from assay.stats._paired import (
    PAIRED_TESTS,
    PairedComparison,
    PairedDifference,
    mcnemar_p_value,
    paired_comparison,
    paired_mean_difference,
    sign_flip_p_value,
)
from assay.stats._paired_power import mcnemar_power, sign_flip_power
from assay.stats._paired_sequence import (
    PairedDecision,
    PairedDifferenceSequence,
    PairedStatus,
    case_order,
    decide_paired,
)
from assay.stats._paired_simulation import PairedStops, simulate_paired_sequence
from assay.stats._passk import DEFAULT_KS, PassAtK, pass_at_k, pass_at_ks, pass_hat_k, pass_hat_ks
from assay.stats._planning import (
    RegressionPlan,
    ThresholdPlan,
    pass_probability,
    plan_regression,
    plan_threshold,
)
from assay.stats._power import regression_power, rejection_probability, rejection_region
from assay.stats._preload import preload
from assay.stats._scores import (
    SCORE_CI_METHODS,
    ScoreShift,
    ScoreSummary,
    score_shift_test,
    score_summaries,
    score_summary,
)
from assay.stats._search import smallest_passing
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
    LegacyConfidenceSequenceTest,
    SequentialDecision,
    SequentialState,
    SequentialTest,
    sequential_test,
)
from assay.stats._suite_planning import (
    PairedPlan,
    PairedPlanOption,
    PilotVariances,
    pilot_variances,
    plan_paired,
)
from assay.stats._tool_paths import ToolPaths
from assay.stats._verdict_interval import (
    replaced_bounds,
    threshold_errors,
    verdict_bounds,
    verdict_fail_counts,
    verdict_interval,
    verdict_method,
    verdict_min_trials_for_pass,
    verdict_pass_counts,
    verdict_sides,
)

__all__ = [
    "DEFAULT_HORIZON",
    "preload",
    "CLUSTER_METHODS",
    "ClusteredMean",
    "PAIRED_TESTS",
    "PairedComparison",
    "PairedDifference",
    "PairedPlan",
    "PairedPlanOption",
    "PilotVariances",
    "SuitePassAtK",
    "clustered_mean",
    "mcnemar_p_value",
    "mcnemar_power",
    "paired_comparison",
    "paired_mean_difference",
    "pilot_variances",
    "plan_paired",
    "sign_flip_p_value",
    "sign_flip_power",
    "suite_pass_at_k",
    "suite_pass_hat_k",
    "Adjustment",
    "IntervalMethod",
    "PairedTest",
    "RegressionTest",
    "ScoreInterval",
    "SequentialMethod",
    "SuiteInterval",
    "ADJUST_METHODS",
    "BoundedMeanSequence",
    "DropSequence",
    "DropTest",
    "PairedDecision",
    "PairedDifferenceSequence",
    "PairedStatus",
    "PairedStops",
    "case_order",
    "decide_paired",
    "simulate_paired_sequence",
    "plan_adaptive_paired",
    "BEHAVIOUR_KINDS",
    "BernoulliConfidenceSequence",
    "CATEGORIES",
    "DEFAULT_KS",
    "FEATURE_KINDS",
    "RELATIVE_RESOLUTION",
    "METHODS",
    "MINIMAL_EFFECTS",
    "Moments",
    "SCORE_CI_METHODS",
    "SPRT",
    "TESTS",
    "WEIGHTS",
    "BehaviourKind",
    "BehaviourSample",
    "ConfidenceSequenceTest",
    "LegacyConfidenceSequenceTest",
    "Factor",
    "FailureFactor",
    "FailureRequest",
    "FalseVerdictRisk",
    "FeaturePair",
    "FixedSampleDesign",
    "Flakiness",
    "Interval",
    "OperatingCharacteristics",
    "PassAtK",
    "PathShift",
    "RegressionPlan",
    "ScoreShift",
    "ScoreSummary",
    "SequentialDecision",
    "SequentialState",
    "SequentialTest",
    "Shift",
    "ThresholdPlan",
    "ToolConsistency",
    "adjust_p_values",
    "binary_shift",
    "category",
    "continuous_shift",
    "continuous_shifts",
    "count_shift",
    "count_shifts",
    "difference_interval",
    "equal_trials_guess",
    "explain_failures",
    "explain_many",
    "false_verdict_risk",
    "fixed_sample_design",
    "flakiness",
    "flakiness_of",
    "levenshtein",
    "log_ratio_se",
    "mann_whitney_p_values",
    "min_trials_for_pass",
    "operating_characteristics",
    "pass_at_k",
    "pass_at_ks",
    "pass_hat_k",
    "pass_hat_ks",
    "pass_probability",
    "AdaptiveThresholdPlan",
    "adaptive_run_characteristics",
    "open_ended_sequence",
    "pass_rate_sequence",
    "path_shift",
    "permutations_for",
    "plan_adaptive_threshold",
    "plan_regression",
    "plan_threshold",
    "proportion_bounds",
    "proportion_interval",
    "ratio_power",
    "regression_p_value",
    "regression_power",
    "enumerable",
    "MAX_TABLES",
    "rejection_probability",
    "rejection_region",
    "sample_moments",
    "score_shift_test",
    "score_summaries",
    "score_summary",
    "sequence_similarity",
    "sequential_test",
    "share_power",
    "simulate_sequential",
    "smallest_passing",
    "simultaneous_confidence",
    "watch_family_risk",
    "WatchFamilyRisk",
    "tool_consistency",
    "ToolPaths",
    "trials_for_power",
    "tuned_prior_strength",
    "replaced_bounds",
    "threshold_errors",
    "verdict_bounds",
    "verdict_fail_counts",
    "verdict_interval",
    "verdict_method",
    "verdict_min_trials_for_pass",
    "verdict_pass_counts",
    "verdict_sides",
    "wilson_interval",
]
