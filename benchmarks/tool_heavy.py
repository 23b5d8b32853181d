"""A tool-heavy trace set for ``bench_tool_heavy.py`` (issue 49): trials of 12–20 tool calls.

Every trial is the root span of its own trace; under it one LLM call (``chat``, with token
usage) and 12–20 tool calls (uniform), each a random one of 8 tools, so nearly every trial takes
a tool path of its own (the worst case for the per-test tool figures). 20 tests. At
``trials=1_000_000`` the set holds about 18M spans, the issue's shape (17.8M there). Written
with the project's :class:`SpanWriter` (promoted columns, attribute families in the footers),
a chunk at a time, as a collector writes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from shapes import _attributes, _hex, _mix

from assay.store import SPANS_SCHEMA, SpanWriter, promoted_column

TOOLS = 8
FEWEST, MOST = 12, 20
TESTS = 20
_ROOT, _LLM, _TOOL = range(3)


def _chunk(rng: np.random.Generator, first: int, count: int) -> pa.Table:
    """Trials ``first … first+count-1`` as one spans table."""
    calls = rng.integers(FEWEST, MOST + 1, count)
    sizes = calls + 2
    rows = int(sizes.sum())
    trial = np.arange(first, first + count)
    local = np.repeat(np.arange(count), sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    position = np.arange(rows) - np.repeat(starts, sizes)
    role = np.minimum(position, _TOOL)
    # Span numbers unique over the set: trials are at most 22 spans apart.
    number = trial[local] * (MOST + 2) + position
    start = 1_795_000_000_000_000_000 + trial[local] * 10**8 + position * 10**6
    end = start + rng.integers(10**5, 9 * 10**5, rows)
    end = np.where(role == _ROOT, start + np.repeat(sizes, sizes) * 10**6 + 10**5, end)
    is_root, is_llm, is_tool = (pa.array(role == r) for r in (_ROOT, _LLM, _TOOL))
    tool_names = pa.array([f"tool_{i}" for i in range(TOOLS)]).take(
        pa.array(rng.integers(0, TOOLS, rows))
    )
    null_str = pa.scalar(None, pa.string())
    no_int = pa.scalar(None, pa.int64())
    tests = pa.array([f"test-{i:02d}" for i in range(TESTS)]).take(pa.array(trial % TESTS))
    passed = rng.random(count) < np.linspace(0.5, 1.0, TESTS)[trial % TESTS]
    test_ids = tests.take(pa.array(local))
    outcome = pa.array(np.where(passed, "pass", "fail")[local])
    operation = pa.array(np.array([None, "chat", "execute_tool"], dtype=object)[role], pa.string())
    name = pc.if_else(
        is_tool,
        pc.binary_join_element_wise("execute_tool ", tool_names, ""),
        pa.array(np.array(["trial", "chat gpt-4o", ""], dtype=object)[role], pa.string()),
    )
    tokens = rng.integers(100, 2000, rows)
    root_number = trial[local] * (MOST + 2)
    columns: dict[str, pa.Array] = {
        "trace_id": pc.binary_join_element_wise(
            _hex(_mix(trial[local]) >> np.uint64(7)), _hex(_mix(trial[local])), ""
        ),
        "span_id": _hex(_mix(number + 1)),
        "parent_span_id": pc.if_else(is_root, null_str, _hex(_mix(root_number + 1))),
        "name": name,
        "kind": pa.array(np.where(role == _LLM, "CLIENT", "INTERNAL")),
        "start_time_unix_nano": pa.array(start),
        "end_time_unix_nano": pa.array(end),
        "status_code": pa.array(["UNSET"] * rows),
        "service_name": pa.array(["agent"] * rows),
    }
    promoted = {
        "assay.test.id": pc.if_else(is_root, test_ids, null_str),
        "assay.trial.outcome": pc.if_else(is_root, outcome, null_str),
        "gen_ai.operation.name": operation,
        "gen_ai.tool.name": pc.if_else(is_tool, tool_names, null_str),
        "gen_ai.request.model": pc.if_else(is_llm, "gpt-4o", null_str),
    }
    for attribute, values in promoted.items():
        columns[promoted_column(attribute)] = values
    columns[promoted_column("assay.trial.index")] = pc.if_else(
        is_root, pa.array(trial[local] // TESTS), no_int
    )
    columns[promoted_column("gen_ai.usage.input_tokens")] = pc.if_else(
        is_llm, pa.array(tokens), no_int
    )
    columns[promoted_column("gen_ai.usage.output_tokens")] = pc.if_else(
        is_llm, pa.array(tokens // 10), no_int
    )
    # Two attributes a span: what its promoted columns hold (the attribute list is the truth).
    first_key = pa.array(
        np.array(["assay.test.id", "gen_ai.operation.name", "gen_ai.operation.name"])[role]
    )
    second_key = pa.array(
        np.array(["assay.trial.outcome", "gen_ai.request.model", "gen_ai.tool.name"])[role]
    )
    first_value = pc.coalesce(promoted["assay.test.id"], operation)
    second_value = pc.coalesce(
        promoted["assay.trial.outcome"],
        promoted["gen_ai.request.model"],
        promoted["gen_ai.tool.name"],
    )
    columns["attributes"] = _attributes([first_key, second_key], [first_value, second_value], rows)
    return pa.table(
        {f.name: columns.get(f.name, pa.nulls(rows, f.type)) for f in SPANS_SCHEMA},
        schema=SPANS_SCHEMA,
    )


def generate(out: Path, trials: int, seed: int = 0) -> int:
    """Write ``trials`` tool-heavy trials into ``out``; return the number of spans written."""
    rng = np.random.default_rng(seed)
    writer = SpanWriter(out, partition_by=(), row_group_rows=256 * 1024)
    chunk = 12_500
    total = 0
    for first in range(0, trials, chunk):
        table = _chunk(rng, first, min(chunk, trials - first))
        total += table.num_rows
        writer.write(table)
    writer.flush()
    return total
