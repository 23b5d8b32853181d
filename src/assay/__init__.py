"""assay: statistical verdicts for AI agents, read natively from OpenTelemetry traces.

::

    import assay

    analysis = assay.analyze("traces/")
    analysis.tests        # Polars DataFrame: one row per test, with its verdict
    analysis.trials       # Polars DataFrame: one row per trial
    print(analysis.to_json())
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay.version import __version__

__all__ = ["Analysis", "AnalyzeOptions", "__version__", "analyze", "compare"]

if TYPE_CHECKING:
    from assay.api import Analysis, analyze, compare
    from assay.judge import AnalyzeOptions


def __getattr__(name: str) -> Any:
    # Lazy: `import assay` (and `assay --help`) must not pay for Polars and SciPy.
    if name == "AnalyzeOptions":
        from assay.judge import AnalyzeOptions

        return AnalyzeOptions
    if name in ("Analysis", "analyze", "compare"):
        from assay import api

        return getattr(api, name)
    raise AttributeError(f"module 'assay' has no attribute {name!r}")
