"""How many trials, cases or labels does a check need? Planning by exact power or simulation.

* :mod:`._planning` — trials needed for a threshold or a regression check.
* :mod:`._suite_planning` — cases × trials per case for a paired comparison, and a pilot's
  between- and within-case variances.
* :mod:`._adaptive_planning` — the suite size an adaptive paired comparison needs, simulated.
* :mod:`._adaptive_threshold_plan` — the maximum trials ``assay run``'s adaptive check needs.
"""

from assay.stats.planning._adaptive_planning import plan_adaptive_paired
from assay.stats.planning._adaptive_threshold_plan import (
    AdaptiveThresholdPlan,
    adaptive_run_characteristics,
    plan_adaptive_threshold,
)
from assay.stats.planning._planning import (
    RegressionPlan,
    ThresholdPlan,
    pass_probability,
    plan_regression,
    plan_threshold,
)
from assay.stats.planning._suite_planning import (
    PairedPlan,
    PairedPlanOption,
    PilotVariances,
    pilot_variances,
    plan_paired,
)

__all__ = [
    "plan_adaptive_paired",
    "AdaptiveThresholdPlan",
    "adaptive_run_characteristics",
    "plan_adaptive_threshold",
    "RegressionPlan",
    "ThresholdPlan",
    "pass_probability",
    "plan_regression",
    "plan_threshold",
    "PairedPlan",
    "PairedPlanOption",
    "PilotVariances",
    "pilot_variances",
    "plan_paired",
]
