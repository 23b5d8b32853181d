"""assay: statistical verdicts for AI agents, read natively from OpenTelemetry traces."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
