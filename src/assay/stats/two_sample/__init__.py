"""Did a rate or a score drop between two samples? Exact two-sample tests and their power.

* :mod:`._exact2x2` — one-sided exact Fisher / Boschloo / Barnard p-values for a drop.
* :mod:`._prefix_power` — Fisher's power at any size, summed row by row.
* :mod:`._power` — their rejection regions and exact power, cached per group sizes.
* :mod:`._fisher` — two-sided Fisher exact tests of many 2 × 2 tables at once.
* :mod:`._mann_whitney` — the one Mann–Whitney U engine: p-values of many pairs of samples in
  one pass, each equal to scipy's.
"""

from assay.stats.two_sample._exact2x2 import (
    MAX_TABLES,
    TESTS,
    check_test,
    enumerable,
    regression_p_value,
)
from assay.stats.two_sample._fisher import fisher_two_sided
from assay.stats.two_sample._mann_whitney import mann_whitney_p_values
from assay.stats.two_sample._power import regression_power, rejection_probability, rejection_region

__all__ = [
    "MAX_TABLES",
    "TESTS",
    "enumerable",
    "regression_p_value",
    "check_test",
    "fisher_two_sided",
    "mann_whitney_p_values",
    "regression_power",
    "rejection_probability",
    "rejection_region",
]
