"""What does a suite of cases say? Means over cases, paired comparisons, pass@k, many tests.

* :mod:`._clustered` — a suite's mean over cases with cases as clusters (betting by default;
  cluster-robust t or cluster bootstrap), and suite-level pass@k / pass^k.
* :mod:`._paired` — two versions over the same cases: paired difference, McNemar or betting test
  of a drop (sign-flip for unbounded means); :mod:`._paired_power` — their power and the
  minimum detectable drop; :mod:`._sign_flip` — two-sided sign-flip tests of many per-case
  differences at once (the suite's behaviour diff) and their power.
* :mod:`._passk` — unbiased pass@k and pass^k.
* :mod:`._scores` — score summaries (t or bootstrap interval) and the Mann–Whitney score test.
* :mod:`._multiple` — p-value adjustment and false-verdict risk across a suite.
"""

from assay.stats.suites._clustered import (
    CLUSTER_METHODS,
    ClusteredMean,
    SuitePassAtK,
    clustered_mean,
    suite_pass_at_k,
    suite_pass_hat_k,
)
from assay.stats.suites._multiple import (
    ADJUST_METHODS,
    FalseVerdictRisk,
    WatchFamilyRisk,
    adjust_p_values,
    false_verdict_risk,
    simultaneous_confidence,
    watch_family_risk,
)
from assay.stats.suites._paired import (
    DEFAULT_PERMUTATIONS,
    EXACT_SIGN_FLIP_CASES,
    PAIRED_TESTS,
    PairedComparison,
    PairedDifference,
    mcnemar_p_value,
    paired_comparison,
    paired_mean_difference,
    paired_t_interval,
    sign_flip_p_value,
)
from assay.stats.suites._paired_power import mcnemar_power, planned_betting_power, sign_flip_power
from assay.stats.suites._passk import (
    DEFAULT_KS,
    PassAtK,
    pass_at_k,
    pass_at_ks,
    pass_hat_k,
    pass_hat_ks,
)
from assay.stats.suites._scores import (
    SCORE_CI_METHODS,
    ScoreShift,
    ScoreSummary,
    score_shift_test,
    score_summaries,
    score_summary,
)
from assay.stats.suites._sign_flip import (
    SignFlipTests,
    detectable_difference,
    mean_difference_power,
    sign_flip_two_sided,
)

__all__ = [
    "CLUSTER_METHODS",
    "ClusteredMean",
    "SuitePassAtK",
    "clustered_mean",
    "suite_pass_at_k",
    "suite_pass_hat_k",
    "ADJUST_METHODS",
    "FalseVerdictRisk",
    "WatchFamilyRisk",
    "adjust_p_values",
    "false_verdict_risk",
    "simultaneous_confidence",
    "watch_family_risk",
    "PAIRED_TESTS",
    "PairedComparison",
    "PairedDifference",
    "mcnemar_p_value",
    "paired_comparison",
    "paired_mean_difference",
    "paired_t_interval",
    "sign_flip_p_value",
    "sign_flip_two_sided",
    "SignFlipTests",
    "detectable_difference",
    "mean_difference_power",
    "DEFAULT_PERMUTATIONS",
    "EXACT_SIGN_FLIP_CASES",
    "mcnemar_power",
    "sign_flip_power",
    "planned_betting_power",
    "DEFAULT_KS",
    "PassAtK",
    "pass_at_k",
    "pass_at_ks",
    "pass_hat_k",
    "pass_hat_ks",
    "SCORE_CI_METHODS",
    "ScoreShift",
    "ScoreSummary",
    "score_shift_test",
    "score_summaries",
    "score_summary",
]
