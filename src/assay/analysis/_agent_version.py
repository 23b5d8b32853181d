"""The version under test: ``assay.agent.version``, else the GenAI ``gen_ai.agent.version``.

A trial span that an agent framework wrote (``--test-attribute gen_ai.agent.name`` maps its
``invoke_agent`` span to a trial) carries the agent's version as ``gen_ai.agent.version``
(semantic conventions v1.40 and later) and no ``assay.agent.version``. That version is the one
``compare`` and ``--baseline-version`` compare, so it is read where assay's own is absent; a
trial span carrying both keeps assay's (the user set it for this purpose).

The attribute is not a promoted column, so it is read from the attribute lists of the
versionless trial spans that are themselves ``invoke_agent`` / ``invoke_workflow`` spans (the
spans the convention gives the attribute), and only when a file may hold such spans (its footer
does not rule them out): a set of assay's own trials pays nothing for it, even with agent spans
nested inside them.
"""

from __future__ import annotations

import polars as pl

from assay import conventions as c
from assay.analysis._attribute import attribute_as_string
from assay.store import SpanContents, promoted_column

__all__ = ["read_agent_versions"]

_COLUMN = promoted_column(c.AGENT_VERSION)
_OPERATION = promoted_column(c.GENAI_OPERATION)
_KEYS = ["trace_id", "span_id"]
_FOUND = "_genai_agent_version"


def read_agent_versions(
    spans: pl.LazyFrame, carriers: pl.DataFrame, contents: SpanContents | None
) -> pl.DataFrame:
    """``carriers`` (the trial spans) with ``gen_ai.agent.version`` where they record no version."""
    if not carriers[_COLUMN].null_count():
        return carriers
    operations = (c.GENAI_INVOKE_AGENT, c.GENAI_INVOKE_WORKFLOW)
    if contents is not None and not any(contents.may_hold(_OPERATION, op) for op in operations):
        return carriers
    # Only an agent or workflow span carries gen_ai.agent.version: a set whose trial spans are
    # assay's own (agent spans inside them) is not read again, its attribute lists least of all.
    versionless = carriers.filter(
        pl.col(_COLUMN).is_null() & pl.col(_OPERATION).is_in(operations).fill_null(False)
    ).select(_KEYS)
    if versionless.height == 0:
        return carriers
    found = (
        spans.join(versionless.lazy(), on=_KEYS, how="semi")
        .select(*_KEYS, attribute_as_string(c.GENAI_AGENT_VERSION).alias(_FOUND))
        .filter(pl.col(_FOUND).is_not_null())
        .collect()
    )
    if found.height == 0:
        return carriers
    return (
        carriers.join(found, on=_KEYS, how="left")
        .with_columns(pl.coalesce(_COLUMN, _FOUND).alias(_COLUMN))
        .drop(_FOUND)
    )
