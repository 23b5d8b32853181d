"""The version of assay, read from the installed package's metadata (one source: pyproject)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("assay-otel")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
