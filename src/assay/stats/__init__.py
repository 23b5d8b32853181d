"""Statistics on numbers and arrays: pure functions, numpy and scipy only, no Polars, no I/O."""

from assay.stats._intervals import Interval, wilson_interval

__all__ = ["Interval", "wilson_interval"]
