"""What assay noticed about the data it read: the findings behind ``data_quality``.

When assay has to guess or leave something out — duplicated spans collapsed, a file skipped,
incomplete traces, a mapping whose trials nest — it never does so in silence. Each such fact
is a :class:`Finding`; the reader (``assay.store``) and the analysis (``assay.analysis``)
produce them, the result of an analysis carries them, and every report shows them (JSON under
``data_quality``, the console and reports as warnings).

This module is a leaf, like ``conventions`` and ``errors``: any package may import it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["DataQuality", "Finding", "Severity"]

Severity = Literal["info", "warning"]
"""``warning``: figures may be affected and the user should look; ``info``: handled, noted."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One fact about the input that the user must be told."""

    kind: str
    """A stable machine-readable name, e.g. ``duplicate_spans`` or ``incomplete_traces``."""
    message: str
    """One plain sentence for people, naming files, attributes or counts."""
    count: int = 0
    """How many spans, traces, trials or files it concerns (0 when not countable)."""
    examples: tuple[str, ...] = ()
    """A few ids or paths to look at (at most a handful)."""
    severity: Severity = "warning"
    """``warning`` or ``info``."""
    tests: tuple[str, ...] = ()
    """The tests it concerns, by id; empty when it concerns the whole set (or no test)."""


@dataclass(frozen=True, slots=True)
class DataQuality:
    """Every finding of one analysis, in the order they were made."""

    findings: tuple[Finding, ...] = ()
    """The findings; empty when the data gave nothing to remark on."""

    @property
    def warnings(self) -> tuple[Finding, ...]:
        """The findings of severity ``warning``."""
        return tuple(f for f in self.findings if f.severity == "warning")

    def merged(self, *others: DataQuality | Iterable[Finding]) -> DataQuality:
        """This and other findings together (duplicates of the same kind and message dropped)."""
        seen = {(f.kind, f.message) for f in self.findings}
        out = list(self.findings)
        for other in others:
            for finding in other.findings if isinstance(other, DataQuality) else other:
                if (finding.kind, finding.message) not in seen:
                    seen.add((finding.kind, finding.message))
                    out.append(finding)
        return DataQuality(tuple(out))
