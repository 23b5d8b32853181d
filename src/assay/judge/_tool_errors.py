"""A test's tool errors: how many, in how many trials, the first messages and where to look.

A tool call with status ERROR is not an error trial (the agent may recover: pydantic-ai's
``ModelRetry``, a LangChain ``handle_tool_error``), but it is the evidence users debug with,
so every report gives it per test (docs/reports.md, "Tool errors").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from assay.analysis import columns as tc

__all__ = ["ToolErrors", "tool_errors"]

_MESSAGES = 3


@dataclass(frozen=True, slots=True)
class ToolErrors:
    """The tool calls with status ERROR in a test's trials."""

    count: int
    """Tool calls with status ERROR."""
    trials: int
    """Trials with at least one."""
    messages: tuple[str, ...] = ()
    """The first distinct status messages (trials in index order, calls in time order)."""
    first_trace_id: str | None = None
    """The trace of the first trial with a tool error: the one to open."""
    first_trial_index: int | None = None
    """That trial's index, when it has one."""


def tool_errors(trials: pl.DataFrame) -> ToolErrors:
    """The tool errors of one test's trials (rows of the trials table)."""
    # Rows picked and ordered in numpy: most tests have no tool error, and a Polars filter and
    # sort per test cost more than the test's other figures (a set of thousands of tests).
    counts = np.asarray(trials[tc.TOOL_ERRORS].to_numpy(), dtype=np.float64)
    rows = np.flatnonzero(counts > 0)  # null: NaN, not > 0
    if rows.size == 0:
        return ToolErrors(0, 0)
    index = np.asarray(trials[tc.TRIAL_INDEX].to_numpy(), dtype=np.float64)[rows]  # null: NaN
    missing = np.isnan(index)
    known = np.where(missing, 0, index)
    # In trial index order, trials without one last, ties in table order (a stable sort).
    failed = trials[rows[np.lexsort((known, missing))]]
    messages: list[str] = []
    for per_trial in failed[tc.TOOL_ERROR_MESSAGES].to_list():
        for message in per_trial or ():
            if message not in messages and len(messages) < _MESSAGES:
                messages.append(message)
    first = failed.row(0, named=True)
    return ToolErrors(
        count=int(failed[tc.TOOL_ERRORS].sum()),
        trials=failed.height,
        messages=tuple(messages),
        first_trace_id=first[tc.TRACE_ID],
        first_trial_index=first[tc.TRIAL_INDEX],
    )
