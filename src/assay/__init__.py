"""assay: statistical verdicts for AI agents, read natively from OpenTelemetry traces.

::

    import assay

    analysis = assay.analyze("traces/")
    analysis.tests        # Polars DataFrame: one row per test, with its verdict
    analysis.trials       # Polars DataFrame: one row per trial
    print(analysis.to_json())
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _installed_version
from typing import TYPE_CHECKING, Any

try:
    # One source of truth: pyproject.toml's version, as the installed distribution records it.
    __version__ = _installed_version("assay-otel")
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"

__all__ = ["Analysis", "AnalyzeOptions", "__version__", "analyze", "compare"]

if TYPE_CHECKING:
    from assay.judgement import Analysis, AnalyzeOptions, analyze, compare


def __getattr__(name: str) -> Any:
    # Lazy: `import assay` (and `assay --help`) must not pay for Polars and SciPy.
    if name in ("Analysis", "AnalyzeOptions", "analyze", "compare"):
        from assay import judgement

        return getattr(judgement, name)
    raise AttributeError(f"module 'assay' has no attribute {name!r}")
