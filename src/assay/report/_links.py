"""Links from a report into the user's own trace viewer: ``--trace-url`` / ``ASSAY_TRACE_URL``.

A template is a URL holding ``{trace_id}``, replaced by the trial's trace id (32 lower-case hex
digits, as OpenTelemetry writes it). docs/reports.md lists the templates of Jaeger,
Grafana/Tempo, Phoenix and Langfuse.

A template is checked once (:func:`checked_template`): at most :data:`MAX_TEMPLATE_CHARS`
characters (a 100 KB template once made a 103 MB HTML report, copied into every link), links
only for ``http`` and ``https`` (a ``javascript:`` template would run in the report), and a
warning for a placeholder other than ``{trace_id}``, which stays in the links as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from assay.errors import ConfigError

__all__ = ["MAX_TEMPLATE_CHARS", "TRACE_ID_FIELD", "TraceText", "checked_template", "trace_link"]

MAX_TEMPLATE_CHARS = 2048
"""The longest template: the URL length browsers and servers commonly accept."""
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")

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


def checked_template(template: str | None) -> tuple[str | None, tuple[str, ...]]:
    """The template reports may use (None: no links), and the warnings to print about it.

    Raises:
        ConfigError: Longer than :data:`MAX_TEMPLATE_CHARS`.
    """
    if not template:
        return None, ()
    if len(template) > MAX_TEMPLATE_CHARS:
        raise ConfigError(
            f"--trace-url (or ASSAY_TRACE_URL) is {len(template):,} characters long; a trace "
            f"viewer's URL has at most {MAX_TEMPLATE_CHARS:,}"
        )
    scheme = _SCHEME.match(template.strip())
    if scheme is None or scheme.group(1).lower() not in ("http", "https"):
        named = f"scheme {scheme.group(1)!r}" if scheme else "no scheme"
        return None, (
            f"--trace-url has {named}, not http or https: trials are shown without links "
            f"(a report does not link to {template[:40]!r})",
        )
    unknown = sorted({p for p in _PLACEHOLDER.findall(template) if p != TRACE_ID_FIELD})
    warnings: list[str] = []
    if unknown:
        warnings.append(
            f"--trace-url names {', '.join(unknown)}, which assay does not fill (only "
            f"{TRACE_ID_FIELD}): the links keep it as written"
        )
    if TRACE_ID_FIELD not in template:
        warnings.append(
            f"--trace-url holds no {TRACE_ID_FIELD}: every trial links to the same page"
        )
    return template, tuple(warnings)
