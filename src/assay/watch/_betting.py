"""The betting confidence sequence ``assay watch`` reads: its one home is :mod:`assay.stats`."""

from assay.stats import BoundedMeanSequence

__all__ = ["BoundedMeanSequence"]
