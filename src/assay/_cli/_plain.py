"""A command's answer that is not an analysis (``plan``): its JSON document and its lines.

One answer, three renderings of it for ``--format``: the lines as the console shows them, the
JSON document, and markdown (a heading, a list, the fixed-width table as a code block) for a
step summary or a pull request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay._json_text import json_text
from assay.choices import OutputFormat

PLAIN_FORMATS = (OutputFormat.CONSOLE, OutputFormat.JSON, OutputFormat.MARKDOWN)
"""What a plain answer renders as."""


@dataclass(frozen=True, slots=True)
class Plain:
    """An answer as a document and as lines for people."""

    document: Mapping[str, Any]
    """The JSON document (``--format json``)."""
    lines: Sequence[str]
    """What it says, one statement a line; the first one heads it."""
    block: Sequence[str] = ()
    """A fixed-width table after the lines (kept monospaced in markdown)."""
    after: Sequence[str] = ()
    """Lines after the table."""

    def render(self, name: OutputFormat) -> str:
        """The answer in the format ``name`` (one of :data:`PLAIN_FORMATS`)."""
        if name is OutputFormat.JSON:
            return json_text(self.document)
        if name is OutputFormat.MARKDOWN:
            head, *rest = self.lines
            parts = [f"### {head}", _items(rest)]
            if self.block:
                parts.append("\n".join(["```text", *self.block, "```"]))
            parts.append(_items(self.after))
            return "\n\n".join(part for part in parts if part) + "\n"
        return "\n".join([*self.lines, *self.block, *self.after]) + "\n"


def _items(lines: Sequence[str]) -> str:
    return "\n".join(f"- {line}" for line in lines if line)
