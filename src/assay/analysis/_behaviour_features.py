"""Per-trial behaviour features of one test in two versions, for the behaviour diff.

Read from the trials table only: the tool path, each tool's use and calls, steps (tool calls),
LLM calls, input and output tokens, cost (when the table has a complete ``cost_usd``), latency,
error spans and the models used. Tools and models are taken from both versions together, so a
tool that appears or vanishes is compared against zero on the other side.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from assay.analysis import _columns as tc
from assay.stats import BehaviourKind, BehaviourSample, FeaturePair


def _pair(
    name: str, kind: BehaviourKind, label: str, baseline: np.ndarray, current: np.ndarray
) -> FeaturePair:
    # Views where the values are floats already (a slice of the side's column): no copy.
    return FeaturePair(
        name,
        kind,
        label,
        baseline.astype(np.float64, copy=False),
        current.astype(np.float64, copy=False),
    )


_NUMERIC: tuple[tuple[str, str, BehaviourKind, str], ...] = (
    ("steps", tc.TOOL_CALLS, "count", "tool calls per trial"),
    ("llm_calls", tc.LLM_CALLS, "count", "LLM calls per trial"),
    ("input_tokens", tc.INPUT_TOKENS, "continuous", "input tokens per trial"),
    ("output_tokens", tc.OUTPUT_TOKENS, "continuous", "output tokens per trial"),
    ("latency", tc.DURATION_S, "continuous", "latency per trial (s)"),
)
"""Feature name, trials-table column, kind and label of the per-trial numbers."""


@dataclass(frozen=True, slots=True)
class _Side:
    """The behaviour columns of many tests' trials (one version), read in one pass."""

    numbers: dict[str, np.ndarray]
    """Trials-table column → one float per trial (nulls as 0), every test one after another."""
    cost_null: np.ndarray | None
    """Per trial, whether its ``cost_usd`` is null; None when the table has no such column."""
    paths: list[tuple[str, ...]]
    """One tool path per trial."""
    models: list[set[str]]
    """The models each trial used."""
    ids: list[str]
    """Each trial's trace id."""
    starts: list[int]
    """Where each test's trials begin, and (last) where the last test's end."""


def _side(frames: Sequence[pl.DataFrame]) -> _Side:
    """Every frame's behaviour columns at once: one Polars pass, not a dozen per test.

    The frames are one version's trials of different tests (one schema); reading each column of
    their concatenation once and slicing the arrays costs a fraction of reading each test's.
    """
    starts = [0, *itertools.accumulate(f.height for f in frames)]
    table = pl.concat(frames, how="vertical", rechunk=False)
    columns = [*(c for _, c, _, _ in _NUMERIC), tc.ERROR_SPANS]
    numbers = {
        name: table[name].fill_null(0).to_numpy().astype(np.float64)
        for name in ([*columns, tc.COST_USD] if tc.COST_USD in table.columns else columns)
    }
    return _Side(
        numbers,
        table[tc.COST_USD].is_null().to_numpy() if tc.COST_USD in table.columns else None,
        [tuple(s or ()) for s in _lists(table[tc.TOOL_SEQUENCE])],
        [set(m or ()) for m in _lists(table[tc.MODELS])],
        [str(i) for i in table[tc.TRACE_ID].to_list()],
        starts,
    )


def _lists(column: pl.Series) -> list[list[str] | None]:
    """A list column's values; when every list is empty or null, Nones (no Python lists made)."""
    if isinstance(column.dtype, pl.List) and int(column.list.len().sum()) == 0:
        return [None] * column.len()
    return column.to_list()


def behaviour_samples(
    tests: Mapping[str, tuple[pl.DataFrame, pl.DataFrame]],
) -> dict[str, BehaviourSample]:
    """:func:`behaviour_sample` of many tests at once, by test id (in the input order).

    Args:
        tests: Per test id, its baseline rows and its current rows of the trials tables (every
            baseline frame of one schema, every current frame of one schema).

    Returns:
        Each test's sample, exactly as :func:`behaviour_sample` would make it.
    """
    if not tests:
        return {}
    base = _side([b for b, _ in tests.values()])
    cur = _side([c for _, c in tests.values()])
    return {name: _sample(base, cur, index) for index, name in enumerate(tests)}


def behaviour_sample(baseline: pl.DataFrame, current: pl.DataFrame) -> BehaviourSample:
    """The features of one test's trials in the baseline and the current version.

    Args:
        baseline: The baseline's rows of the trials table for one test.
        current: The current version's rows for the same test.

    Returns:
        Trace ids and one :class:`assay.stats.FeaturePair` per feature, in a stable order.
    """
    return behaviour_samples({"": (baseline, current)})[""]


def _sample(base: _Side, cur: _Side, index: int) -> BehaviourSample:
    """The sample of the ``index``-th test of both sides."""
    b0, b1 = base.starts[index], base.starts[index + 1]
    c0, c1 = cur.starts[index], cur.starts[index + 1]

    def pair(name: str, kind: BehaviourKind, label: str, column: str) -> FeaturePair:
        return _pair(name, kind, label, base.numbers[column][b0:b1], cur.numbers[column][c0:c1])

    paths_b, paths_c = base.paths[b0:b1], cur.paths[c0:c1]
    features: list[FeaturePair] = [
        FeaturePair(
            "path", "path", "tool path", np.empty(0), np.empty(0), tuple(paths_b), tuple(paths_c)
        )
    ]
    for tool in sorted({t for p in (*paths_b, *paths_c) for t in p}):
        calls_b = np.array([p.count(tool) for p in paths_b], dtype=np.float64)
        calls_c = np.array([p.count(tool) for p in paths_c], dtype=np.float64)
        features.append(_pair(f"uses:{tool}", "binary", f"use `{tool}`", calls_b > 0, calls_c > 0))
        features.append(
            _pair(f"tool_calls:{tool}", "count", f"calls to `{tool}` per trial", calls_b, calls_c)
        )
    for name, column, kind, label in _NUMERIC:
        features.append(pair(name, kind, label, column))
    if (
        base.cost_null is not None
        and cur.cost_null is not None
        and not base.cost_null[b0:b1].any()
        and not cur.cost_null[c0:c1].any()
    ):
        features.append(pair("cost", "continuous", "cost per trial (USD)", tc.COST_USD))
    spans_b, spans_c = base.numbers[tc.ERROR_SPANS][b0:b1], cur.numbers[tc.ERROR_SPANS][c0:c1]
    features.append(_pair("error_spans", "binary", "have error spans", spans_b > 0, spans_c > 0))
    models_b, models_c = base.models[b0:b1], cur.models[c0:c1]
    # A model used in every trial of both versions is constant and left untested.
    for model in sorted(set().union(*models_b, *models_c)):
        features.append(
            _pair(
                f"model:{model}",
                "binary",
                f"use model `{model}`",
                np.array([model in m for m in models_b]),
                np.array([model in m for m in models_c]),
            )
        )
    return BehaviourSample(tuple(base.ids[b0:b1]), tuple(cur.ids[c0:c1]), tuple(features))
