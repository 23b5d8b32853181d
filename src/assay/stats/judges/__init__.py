"""When an LLM judge grades the trials: its agreement with people, and the rate it hides.

* :mod:`._agreement` — the judge against human labels: sensitivity, specificity (exact
  intervals), Cohen's kappa with its interval.
* :mod:`._correction` — the true pass rate behind the judge's: the Rogan–Gladen estimate and
  the interval carrying the error of both the trials and the labels (MOVER test inversion).
* :mod:`._planning` — how many human labels a corrected verdict needs (``assay plan``).
* :mod:`._ppi` — a mean score corrected by human scores of some trials: prediction-powered
  inference with power tuning (PPI++).

See docs/statistics.md, "When the judge is wrong".
"""

from assay.stats.judges._agreement import Agreement, Kappa, cohen_kappa
from assay.stats.judges._correction import (
    METHOD,
    CorrectedRate,
    corrected_bounds,
    corrected_mean,
    corrected_rate,
    rogan_gladen,
    youden_lower,
)
from assay.stats.judges._planning import LabelPlan, plan_labels, right_verdict_probability
from assay.stats.judges._ppi import PredictionPoweredMean, ppi_mean

__all__ = [
    "METHOD",
    "Agreement",
    "CorrectedRate",
    "Kappa",
    "LabelPlan",
    "PredictionPoweredMean",
    "cohen_kappa",
    "corrected_bounds",
    "corrected_mean",
    "corrected_rate",
    "plan_labels",
    "ppi_mean",
    "right_verdict_probability",
    "rogan_gladen",
    "youden_lower",
]
