"""``assay describe``: what an unknown trace set holds, to find its ``--test-attribute``."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

from assay._cli import _common as o
from assay._cli._emit import parse_formats, write_documents
from assay._json_text import json_text
from assay.choices import OutputFormat

if TYPE_CHECKING:
    from assay.analysis import Description, Suggestion


def _text(d: Description, s: Suggestion | None) -> str:
    lines = [f"{d.spans} spans in {d.traces} traces", ""]
    for source in d.sources:  # what the format cannot tell is said, never filled in
        lines.append(f"imported from {source.label}: {source.traces} traces")
        lines += [f"  it does not record {missing}" for missing in source.not_recorded]
    lines += [""] if d.sources else []
    lines += ["span names (most common):"]
    lines += [f"  {count:>8}  {name}" for name, count in d.span_names]
    lines += ["", "conventions detected (spans):"]
    lines += [f"  {count:>8}  {label}" for label, count in d.conventions] or ["  none known"]
    if (u := d.unclaimed) is not None:  # never silently blind (analysis/_unclaimed.py)
        where = f"{u.spans} in {u.traces} of {u.looked_at} traces looked at"
        lines += [
            "",
            f"spans that look like work but no convention assay reads claims ({where}; their "
            "tools, LLM calls and tokens are not counted):",
        ]
        lines += [f"  {count:>8}  {name}" for name, count in u.names]
    if d.evaluations:  # what --pass-when can read (analysis/_evaluations.py)
        lines += ["", "evaluations, scores and checks (records; labels):"]
        for e in d.evaluations:
            labels = ", ".join(f"{label} {n}" for label, n in e.labels)
            where = f"{e.kind}, in {e.traces} traces" + (f"; labels {labels}" if labels else "")
            lines.append(f"  {e.records:>8}  {e.name} ({where})")
    lines += ["", "candidate test attributes:"]
    if not d.candidates:
        lines.append("  none: no root span carries a string attribute")
    for k in d.candidates:
        lines.append(
            f"  {k.attribute}: {k.values} values in {k.traces} traces, on {k.spans} spans "
            f"({k.on_roots} of them roots)"
        )
    if s is not None:
        lines += ["", f"try: {s.command}"]
        if s.pass_when is not None:  # a guess from the labels' names: said, to be checked
            lines.append(
                "  (without --pass-when a failed evaluation would pass its trial; check the rule)"
            )
        if s.unspelt:
            lines.append(f"  (no --pass-when can spell {', '.join(s.unspelt)}: left out)")
    return "\n".join(lines) + "\n"


DESCRIBED = (OutputFormat.CONSOLE, OutputFormat.JSON)
"""What ``describe`` renders."""


def describe(
    paths: o.Paths,
    format: o.Formats = None,
    output: o.Output = None,
    skip_bad_files: o.SkipBadFiles = False,
) -> None:
    """Describe a trace set: span names, conventions, candidate test attributes."""
    from assay.analysis import describe_spans, suggest
    from assay.store import READ_ERRORS, open_trace_set, read_failure

    targets = parse_formats(format, output, DESCRIBED, "describe")
    trace_set = open_trace_set(paths, skip_bad_files=skip_bad_files)
    try:
        scan = trace_set.scan()
        description = describe_spans(scan)
        suggestion = suggest(scan, description.candidates)
    except READ_ERRORS as exc:  # a file changed or removed while read: as analyze says it
        raise read_failure(exc, trace_set.names) from exc

    def render(name: OutputFormat) -> str:
        if name is OutputFormat.CONSOLE:
            return _text(description, suggestion)
        shown = asdict(description)
        if suggestion is not None:
            shown["suggestion"] = {**asdict(suggestion), "command": suggestion.command}
        return json_text(shown)

    write_documents(targets, render)
