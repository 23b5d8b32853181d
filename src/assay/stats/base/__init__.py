"""The kernels every room of statistics shares: range checks, search, moments, case order.

* :mod:`._checks` — the one set of range checks (``check_open_unit``, ``check_probability``,
  ``check_drop``), each with one message.
* :mod:`._search` — the smallest whole number for which a rising yes/no question turns yes.
* :mod:`._moments` — sum, mean, spread and percentiles of many samples at once.
* :mod:`._case_order` — the seeded random order in which a suite's cases are run and fed.
* :mod:`._preload` — scipy's statistics imported in the background while spans are read.
"""

from assay.stats.base._case_order import case_order
from assay.stats.base._checks import (
    check_drop,
    check_open_unit,
    check_probability,
    check_range,
    check_successes,
)
from assay.stats.base._moments import Moments, sample_moments
from assay.stats.base._preload import preload, preloaded
from assay.stats.base._search import smallest_passing

__all__ = [
    "case_order",
    "check_drop",
    "check_open_unit",
    "check_probability",
    "check_range",
    "check_successes",
    "Moments",
    "sample_moments",
    "preload",
    "preloaded",
    "smallest_passing",
]
