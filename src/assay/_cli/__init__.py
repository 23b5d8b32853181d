"""The commands of ``assay``, one module per family; ``assay.cli`` registers them."""

# First of assay's modules: it configures Polars' allocator before anything loads Polars.
from assay._cli import _allocator  # noqa: F401
from assay._cli._common import EXIT_USAGE, fail

__all__ = ["EXIT_USAGE", "fail"]
