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
import pyarrow.compute as pc

from assay.store import ATTRIBUTE_TYPE, SPANS_SCHEMA, SpanWriter, promoted_column


def _attributes(keys: pa.Array, values: pa.Array, per_row: int, rows: int) -> pa.Array:
    """A list<attribute> column of string attributes, ``per_row`` per row."""
    n = len(keys)
    nulls = pa.nulls(n)
    struct = pa.StructArray.from_arrays(
        [
            keys,
            pa.array(["string"] * n, pa.string()),
            values,
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


_HEX = pa.array([f"{i:02x}" for i in range(256)])


def _hex(values: np.ndarray, width: int) -> pa.Array:
    """Zero-padded lowercase hex of non-negative integers, ``width`` bytes, vectorised."""
    raw = values.astype(">u8").view(np.uint8).reshape(-1, 8)
    parts = [pc.take(_HEX, pa.array(raw[:, i])) for i in range(8)]
    return pc.binary_join_element_wise(*(["00"] * (width - 8)), *parts, "")


def _where(mask: pa.Array, values: pa.Array | str) -> pa.Array:
    """``values`` where ``mask`` holds, else null (strings)."""
    return pc.if_else(mask, values, pa.scalar(None, pa.string()))


def _chunk(
    rng: np.random.Generator,
    first: int,
    count: int,
    spans_per_trial: int,
    tests: int,
    path_variants: int,
) -> pa.Table:
    """Trials ``first … first+count-1`` as one spans table."""
    rows = count * spans_per_trial
    trial = np.arange(first, first + count)
    local = np.repeat(np.arange(count), spans_per_trial)
    trial_no = trial[local]
    position = np.tile(np.arange(spans_per_trial), count)
    is_trial_np = position == 0
    is_trial = pa.array(is_trial_np)
    start = 1_795_000_000_000_000_000 + trial_no * 10**9 + position * 10**6
    end = start + rng.integers(10**5, 10**7, rows)
    is_tool_np = ~is_trial_np & (position % 2 == 1)
    is_llm_np = ~is_trial_np & ~is_tool_np
    is_tool, is_llm = pa.array(is_tool_np), pa.array(is_llm_np)
    test_ids = pa.array(np.char.mod("test-%03d", trial % tests)).take(pa.array(local))
    passed = rng.random(count) < np.linspace(0.5, 1.0, tests)[trial % tests]
    outcome = pa.array(np.where(passed, "pass", "fail")).take(pa.array(local))
    if path_variants > 0:
        weights = 0.5 ** np.arange(path_variants)
        variant = rng.choice(path_variants, count, p=weights / weights.sum())
        shift = np.repeat(variant, spans_per_trial) * (position % 5 == 0)
        tool_index = (position + shift) % 6
    else:
        tool_index = rng.integers(0, 6, rows)
    tool_names = pa.array([f"tool_{i}" for i in range(6)]).take(pa.array(tool_index))
    operation = _where(is_tool, "execute_tool").fill_null(_where(is_llm, "chat"))
    trial_span = _hex(trial_no * spans_per_trial + 1, 8)
    columns: dict[str, pa.Array] = {
        "trace_id": _hex(trial_no, 16),
        "span_id": _hex(trial_no * spans_per_trial + position + 1, 8),
        "parent_span_id": pc.if_else(is_trial, pa.scalar(None, pa.string()), trial_span),
        "name": pc.if_else(is_trial, "trial", pc.if_else(is_tool, "execute_tool", "chat")),
        "kind": pa.array(["INTERNAL"] * rows),
        "start_time_unix_nano": pa.array(start),
        "end_time_unix_nano": pa.array(end),
        "status_code": pa.array(["UNSET"] * rows),
        "service_name": pa.array(["bench"] * rows),
    }
    promoted = {
        "assay.test.id": _where(is_trial, test_ids),
        "assay.trial.outcome": _where(is_trial, outcome),
        "gen_ai.operation.name": operation,
        "gen_ai.tool.name": _where(is_tool, tool_names),
    }
    for attribute, values in promoted.items():
        columns[promoted_column(attribute)] = values
    no_int = pa.scalar(None, pa.int64())
    columns[promoted_column("assay.trial.index")] = pc.if_else(
        is_trial, pa.array(trial_no // tests), no_int
    )
    tokens = rng.integers(100, 2000, rows)
    columns[promoted_column("gen_ai.usage.input_tokens")] = pc.if_else(
        is_llm, pa.array(tokens), no_int
    )
    columns[promoted_column("gen_ai.usage.output_tokens")] = pc.if_else(
        is_llm, pa.array(tokens // 10), no_int
    )
    first_key = pc.if_else(is_trial, "assay.test.id", "gen_ai.operation.name")
    second_key = pc.if_else(is_trial, "assay.trial.outcome", "gen_ai.tool.name")
    first_value = pc.if_else(is_trial, test_ids, operation)
    second_value = pc.if_else(is_trial, outcome, tool_names)
    # Two attributes a row, interleaved: row i holds items 2i and 2i+1.
    interleave = pa.array(np.stack([np.arange(rows), np.arange(rows) + rows], axis=1).ravel())
    keys = pa.concat_arrays([first_key, second_key]).take(interleave)
    values = pa.concat_arrays([first_value, second_value]).take(interleave)
    columns["attributes"] = _attributes(keys, values, 2, rows)
    return pa.table(
        {f.name: columns.get(f.name, pa.nulls(rows, f.type)) for f in SPANS_SCHEMA},
        schema=SPANS_SCHEMA,
    )


def generate(
    out: Path,
    *,
    trials: int,
    spans_per_trial: int,
    tests: int = 50,
    seed: int = 0,
    path_variants: int = 6,
    buckets: int | None = None,
) -> int:
    """Write ``trials × spans_per_trial`` spans into ``out``; return the number of spans.

    Chunks of 200,000 spans are made and written one at a time, so any size streams to disk;
    ``buckets`` lays the set out by trace bucket, as the writers' option does.
    """
    rng = np.random.default_rng(seed)
    # Bucketed: one row group is buffered per bucket, so they are kept smaller.
    rows = 256 * 1024 if buckets is None else max(16 * 1024, 2 * 1024 * 1024 // buckets)
    writer = SpanWriter(out, partition_by=(), row_group_rows=rows, buckets=buckets)
    chunk = max(1, 200_000 // spans_per_trial)
    for first in range(0, trials, chunk):
        count = min(chunk, trials - first)
        writer.write(_chunk(rng, first, count, spans_per_trial, tests, path_variants))
    writer.flush()
    return trials * spans_per_trial
