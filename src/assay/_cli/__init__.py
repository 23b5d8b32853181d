"""The commands of ``assay``, one module per family; ``assay.cli`` registers them."""

# First of assay's modules: it configures Polars' allocator before anything loads Polars.
from assay._cli import _allocator  # noqa: F401
from assay._cli._analysis import show_defaults
from assay._cli._common import EXIT_USAGE, fail
from assay._cli._renamed import renamed

__all__ = ["EXIT_USAGE", "fail", "renamed", "show_defaults"]
