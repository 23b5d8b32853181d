"""Per-trial behaviour features of one test in two versions, for the behaviour diff.

Read from the trials table only: the tool path, each tool's use and calls, steps (tool calls),
LLM calls, input and output tokens, cost (when the table has a complete ``cost_usd``), latency,
error spans and the models used. Tools and models are taken from both versions together, so a
tool that appears or vanishes is compared against zero on the other side.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from assay.analysis import _columns as tc
from assay.stats import BehaviourKind, BehaviourSample, FeaturePair


def _column(frame: pl.DataFrame, name: str) -> np.ndarray:
    return frame[name].fill_null(0).to_numpy().astype(np.float64)


def _pair(
    name: str, kind: BehaviourKind, label: str, baseline: np.ndarray, current: np.ndarray
) -> FeaturePair:
    return FeaturePair(name, kind, label, baseline.astype(np.float64), current.astype(np.float64))


_NUMERIC: tuple[tuple[str, str, BehaviourKind, str], ...] = (
    ("steps", tc.TOOL_CALLS, "count", "tool calls per trial"),
    ("llm_calls", tc.LLM_CALLS, "count", "LLM calls per trial"),
    ("input_tokens", tc.INPUT_TOKENS, "continuous", "input tokens per trial"),
    ("output_tokens", tc.OUTPUT_TOKENS, "continuous", "output tokens per trial"),
    ("latency", tc.DURATION_S, "continuous", "latency per trial (s)"),
)
"""Feature name, trials-table column, kind and label of the per-trial numbers."""


def _paths(frame: pl.DataFrame) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(s or ()) for s in frame[tc.TOOL_SEQUENCE].to_list())


def _models(frame: pl.DataFrame) -> list[set[str]]:
    return [set(m or ()) for m in frame[tc.MODELS].to_list()]


def behaviour_sample(baseline: pl.DataFrame, current: pl.DataFrame) -> BehaviourSample:
    """The features of one test's trials in the baseline and the current version.

    Args:
        baseline: The baseline's rows of the trials table for one test.
        current: The current version's rows for the same test.

    Returns:
        Trace ids and one :class:`assay.stats.FeaturePair` per feature, in a stable order.
    """
    paths_b, paths_c = _paths(baseline), _paths(current)
    features: list[FeaturePair] = [
        FeaturePair("path", "path", "tool path", np.empty(0), np.empty(0), paths_b, paths_c)
    ]
    for tool in sorted({t for p in (*paths_b, *paths_c) for t in p}):
        calls_b = np.array([p.count(tool) for p in paths_b], dtype=np.float64)
        calls_c = np.array([p.count(tool) for p in paths_c], dtype=np.float64)
        features.append(_pair(f"uses:{tool}", "binary", f"use `{tool}`", calls_b > 0, calls_c > 0))
        features.append(
            _pair(f"tool_calls:{tool}", "count", f"calls to `{tool}` per trial", calls_b, calls_c)
        )
    for name, column, kind, label in _NUMERIC:
        features.append(
            _pair(name, kind, label, _column(baseline, column), _column(current, column))
        )
    if all(
        tc.COST_USD in f.columns and f[tc.COST_USD].null_count() == 0 for f in (baseline, current)
    ):
        features.append(
            _pair(
                "cost",
                "continuous",
                "cost per trial (USD)",
                _column(baseline, tc.COST_USD),
                _column(current, tc.COST_USD),
            )
        )
    features.append(
        _pair(
            "error_spans",
            "binary",
            "have error spans",
            _column(baseline, tc.ERROR_SPANS) > 0,
            _column(current, tc.ERROR_SPANS) > 0,
        )
    )
    models_b, models_c = _models(baseline), _models(current)
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
    return BehaviourSample(
        tuple(str(i) for i in baseline[tc.TRACE_ID].to_list()),
        tuple(str(i) for i in current[tc.TRACE_ID].to_list()),
        tuple(features),
    )
