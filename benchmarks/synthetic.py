"""A fast generator of synthetic trace sets in the spans-table format (pyarrow, no OTel SDK).

Each trial is the root span of its own trace, with ``spans_per_trial - 1`` child spans that
alternate between tool calls (GenAI conventions) and LLM calls with token usage.

Tool paths are drawn from ``path_variants`` variants per trial, skewed towards the first, as an
agent's paths are; ``path_variants=0`` makes every call a random tool instead, so that every
trial takes a different path (the worst case for tool-consistency figures).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from assay.store import ATTRIBUTE_TYPE, SPANS_SCHEMA, SpanWriter, promoted_column


def _attributes(keys: np.ndarray, values: np.ndarray, per_row: int, rows: int) -> pa.Array:
    """A list<attribute> column of string attributes, ``per_row`` per row."""
    n = len(keys)
    nulls = pa.nulls(n)
    struct = pa.StructArray.from_arrays(
        [
            pa.array(keys, pa.string()),
            pa.array(np.full(n, "string"), pa.string()),
            pa.array(values, pa.string()),
            nulls.cast(pa.bool_()),
            nulls.cast(pa.int64()),
            nulls.cast(pa.float64()),
            nulls.cast(pa.binary()),
            nulls.cast(pa.string()),
        ],
        fields=list(ATTRIBUTE_TYPE),
    )
    offsets = pa.array(np.arange(0, rows * per_row + 1, per_row, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, struct)


def generate(
    out: Path,
    *,
    trials: int,
    spans_per_trial: int,
    tests: int = 50,
    seed: int = 0,
    path_variants: int = 6,
) -> int:
    """Write ``trials × spans_per_trial`` spans into ``out``; return the number of spans."""
    rng = np.random.default_rng(seed)
    writer = SpanWriter(out, partition_by=(), row_group_rows=256 * 1024)
    chunk = max(1, 200_000 // spans_per_trial)
    for first in range(0, trials, chunk):
        count = min(chunk, trials - first)
        rows = count * spans_per_trial
        trial_no = np.repeat(np.arange(first, first + count), spans_per_trial)
        position = np.tile(np.arange(spans_per_trial), count)
        is_trial = position == 0
        trace_ids = np.char.mod("%032x", trial_no)
        span_ids = np.char.mod("%016x", trial_no * spans_per_trial + position + 1)
        parent = np.where(is_trial, None, np.char.mod("%016x", trial_no * spans_per_trial + 1))
        start = 1_795_000_000_000_000_000 + trial_no * 10**9 + position * 10**6
        end = start + rng.integers(10**5, 10**7, rows)
        is_tool = ~is_trial & (position % 2 == 1)
        is_llm = ~is_trial & ~is_tool
        test_ids = np.char.mod("test-%03d", trial_no % tests)
        passed = (
            rng.random(count)
            < np.linspace(0.5, 1.0, tests)[np.arange(first, first + count) % tests]
        )
        outcome = np.where(passed, "pass", "fail")
        if path_variants > 0:
            weights = 0.5 ** np.arange(path_variants)
            variant = rng.choice(path_variants, count, p=weights / weights.sum())
            shift = np.repeat(variant, spans_per_trial) * (position % 5 == 0)
            tool_names = np.char.mod("tool_%d", (position + shift) % 6)
        else:
            tool_names = np.char.mod("tool_%d", rng.integers(0, 6, rows))
        columns: dict[str, pa.Array] = {
            "trace_id": pa.array(trace_ids),
            "span_id": pa.array(span_ids),
            "parent_span_id": pa.array(parent, pa.string()),
            "name": pa.array(
                np.where(is_trial, "trial", np.where(is_tool, "execute_tool", "chat"))
            ),
            "kind": pa.array(np.full(rows, "INTERNAL")),
            "start_time_unix_nano": pa.array(start),
            "end_time_unix_nano": pa.array(end),
            "status_code": pa.array(np.full(rows, "UNSET")),
            "service_name": pa.array(np.full(rows, "bench")),
        }
        promoted = {
            "assay.test.id": np.where(is_trial, test_ids, None),
            "assay.trial.outcome": np.where(is_trial, np.repeat(outcome, spans_per_trial), None),
            "gen_ai.operation.name": np.where(
                is_tool, "execute_tool", np.where(is_llm, "chat", None)
            ),
            "gen_ai.tool.name": np.where(is_tool, tool_names, None),
        }
        for attribute, values in promoted.items():
            columns[promoted_column(attribute)] = pa.array(values, pa.string())
        columns[promoted_column("assay.trial.index")] = pa.array(
            np.where(is_trial, trial_no // tests, None), pa.int64()
        )
        tokens = rng.integers(100, 2000, rows)
        columns[promoted_column("gen_ai.usage.input_tokens")] = pa.array(
            np.where(is_llm, tokens, None), pa.int64()
        )
        columns[promoted_column("gen_ai.usage.output_tokens")] = pa.array(
            np.where(is_llm, tokens // 10, None), pa.int64()
        )
        keys = np.stack(
            [
                np.where(is_trial, "assay.test.id", "gen_ai.operation.name"),
                np.where(is_trial, "assay.trial.outcome", "gen_ai.tool.name"),
            ],
            axis=1,
        ).reshape(-1)
        values = np.stack(
            [
                np.where(is_trial, test_ids, promoted["gen_ai.operation.name"]),
                np.where(is_trial, np.repeat(outcome, spans_per_trial), tool_names),
            ],
            axis=1,
        ).reshape(-1)
        columns["attributes"] = _attributes(keys, values, 2, rows)
        table = pa.table(
            {f.name: columns.get(f.name, pa.nulls(rows, f.type)) for f in SPANS_SCHEMA},
            schema=SPANS_SCHEMA,
        )
        writer.write(table)
    writer.flush()
    return trials * spans_per_trial
