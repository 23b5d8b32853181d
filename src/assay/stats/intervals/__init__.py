"""How high is a rate or a mean? Fixed-n confidence intervals and the verdict interval.

* :mod:`._intervals` — pass-rate confidence intervals (five methods), fewest trials for a PASS.
* :mod:`._verdict_interval` — the interval a fixed-n threshold verdict reads: each side's exact
  error at the threshold ≤ α/2 (the method's bound, else Clopper–Pearson's).
* :mod:`._bounded_mean` — the fixed-n betting interval and test of the mean of i.i.d. values in
  known bounds (Waudby-Smith & Ramdas): valid at every sample size and shape.
"""

from assay.stats.intervals._bounded_mean import (
    TRUNCATION,
    bounded_mean_bounds,
    bounded_mean_p_value,
    unit_log_capital,
)
from assay.stats.intervals._intervals import (
    METHODS,
    Interval,
    min_trials_for_pass,
    proportion_bounds,
    proportion_interval,
    wilson_interval,
)
from assay.stats.intervals._verdict_interval import (
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
    "bounded_mean_bounds",
    "bounded_mean_p_value",
    "TRUNCATION",
    "unit_log_capital",
    "METHODS",
    "Interval",
    "min_trials_for_pass",
    "proportion_bounds",
    "proportion_interval",
    "wilson_interval",
    "replaced_bounds",
    "threshold_errors",
    "verdict_bounds",
    "verdict_fail_counts",
    "verdict_interval",
    "verdict_method",
    "verdict_min_trials_for_pass",
    "verdict_pass_counts",
    "verdict_sides",
]
