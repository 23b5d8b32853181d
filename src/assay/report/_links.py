"""Links from a report into the user's own trace viewer: ``--trace-url`` / ``ASSAY_TRACE_URL``.

A template is a URL holding ``{trace_id}``, replaced by the trial's trace id (32 lower-case hex
digits, as OpenTelemetry writes it). docs/reports.md lists the templates of Jaeger,
Grafana/Tempo, Phoenix and Langfuse.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["TRACE_ID_FIELD", "TraceText", "trace_link"]

TraceText = Callable[[str, str], str]
"""How a report shows a trace id it names: ``(trace_id, text) -> shown``. Plain-text reports show
the text; the Markdown report makes it a link when a template is given."""

TRACE_ID_FIELD = "{trace_id}"
"""The field of a template that the trace id replaces."""


def trace_link(template: str | None, trace_id: str | None) -> str | None:
    """The URL of ``trace_id`` in the viewer ``template`` names; None without either."""
    if not template or not trace_id:
        return None
    return template.replace(TRACE_ID_FIELD, trace_id)
