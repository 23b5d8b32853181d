"""Traces whose spans are still arriving: held until their root span is in, then judged.

The collector rolls its files by time, so one trace's spans may be split across files and a
trace's last spans may arrive a little after its first. A trace is judged once its root span
(no parent) has arrived and a short grace has passed: in OpenTelemetry the root span ends last,
so the spans that ended before it were exported with it or before. A trace whose root never
comes (its root lives in a service that exports elsewhere, or was lost) is judged with what
arrived after a timeout, and counted as such. The memory held is bounded: past ``max_traces``
the oldest traces are judged at once (counted too). Spans that arrive after their trace was
judged form a trace of their own, which holds no trial and is counted as late.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from assay.analysis import columns as tc

__all__ = ["PendingTraces", "Released"]

TRACE_ID = tc.TRACE_ID
# The spans table's column (assay.store's schema); null on a root span.
PARENT_SPAN_ID = "parent_span_id"


@dataclass(frozen=True, slots=True)
class Released:
    """The spans of the traces judged at one look."""

    spans: pl.DataFrame
    """Their spans."""
    traces: int
    """How many traces."""
    without_root: int
    """Of those, how many were judged without their root span (timed out, or pushed out)."""


@dataclass(slots=True)
class PendingTraces:
    """Spans held by trace until the trace is complete (see the module docstring)."""

    grace: float = 1.0
    """Seconds to wait after a trace's root span arrived, for spans split into a later file."""
    timeout: float = 60.0
    """Seconds after which a trace whose root span has not arrived is judged as it is."""
    max_traces: int = 100_000
    """Traces held at most; past this the oldest are judged at once."""
    _spans: pl.DataFrame | None = None
    _first_seen: dict[str, float] = field(default_factory=dict)
    _root_seen: dict[str, float] = field(default_factory=dict)

    @property
    def traces(self) -> int:
        """Traces held now."""
        return len(self._first_seen)

    def add(self, spans: pl.DataFrame, now: float) -> None:
        """Hold new spans (any number of traces), noting when each trace and root arrived."""
        if spans.height == 0:
            return
        for trace in spans[TRACE_ID].unique().to_list():
            self._first_seen.setdefault(trace, now)
        roots = spans.filter(pl.col(PARENT_SPAN_ID).is_null())[TRACE_ID].unique().to_list()
        for trace in roots:
            self._root_seen.setdefault(trace, now)
        self._spans = spans if self._spans is None else pl.concat([self._spans, spans])

    @property
    def spans(self) -> pl.DataFrame | None:
        """The spans held now (None before any arrived)."""
        return self._spans

    def due(self) -> float | None:
        """When the next trace held becomes ready to judge (the clock ``add`` was given).

        None when no trace is held. The watch looks then, not at its next interval.
        """
        times = [seen + self.grace for seen in self._root_seen.values()]
        times += [
            seen + self.timeout for t, seen in self._first_seen.items() if t not in self._root_seen
        ]
        return min(times, default=None)

    def release(self, now: float, *, everything: bool = False) -> Released:
        """The traces complete at ``now`` (with ``everything``: every trace held), removed.

        Args:
            now: The current time (seconds, the clock ``add`` was given).
            everything: Release every trace held, complete or not (``--once``, shutting down).
        """
        ready = {t for t, seen in self._root_seen.items() if everything or seen + self.grace <= now}
        rootless = {
            t
            for t, seen in self._first_seen.items()
            if t not in self._root_seen and (everything or seen + self.timeout <= now)
        }
        excess = len(self._first_seen) - len(ready) - len(rootless) - self.max_traces
        if excess > 0:
            waiting = (t for t in self._first_seen if t not in ready and t not in rootless)
            for trace in waiting:  # dicts keep arrival order: the oldest first
                if excess <= 0:
                    break
                (ready if trace in self._root_seen else rootless).add(trace)
                excess -= 1
        chosen = ready | rootless
        if not chosen or self._spans is None:
            return Released(_empty_like(self._spans), 0, 0)
        mask = pl.col(TRACE_ID).is_in(pl.Series(sorted(chosen), dtype=pl.String).implode())
        released = self._spans.filter(mask)
        self._spans = self._spans.filter(~mask)
        for trace in chosen:
            self._first_seen.pop(trace, None)
            self._root_seen.pop(trace, None)
        return Released(released, len(chosen), len(rootless))


def _empty_like(spans: pl.DataFrame | None) -> pl.DataFrame:
    if spans is not None:
        return spans.head(0)
    from assay.store import polars_schema

    return pl.DataFrame(schema=polars_schema())
