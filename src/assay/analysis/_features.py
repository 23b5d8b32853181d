"""Per-trial features of a test's traces, for explaining which of them separate failures.

Each feature is one number (or flag) per trial, read from the trials table: a tool used or not,
a tool's call count, whether and where the tool path leaves the most common passing path, the
model used, error spans, step count, latency.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from assay.analysis import _columns as tc
from assay.stats import ToolPaths

FeatureKind = Literal["binary", "count", "continuous"]


@dataclass(frozen=True, slots=True)
class Feature:
    """One per-trial feature of a test."""

    name: str
    """Machine name, e.g. ``tool_calls:search``."""
    kind: FeatureKind
    """``binary`` (0/1), ``count`` (non-negative integers) or ``continuous``."""
    values: np.ndarray
    """One value per trial, in the trials' order."""
    label: str
    """Words for a person, e.g. "calls to `search`"."""


_IN_PYTHON = 500
"""Rows up to which :func:`distinct_lists` reads the lists in Python."""


def distinct_lists(values: pl.Series) -> tuple[list[tuple[str, ...]], npt.NDArray[np.intp]]:
    """Each distinct list of a ``list[str]`` column once, and per row the position of its list.

    Lists come in the order rows first hold them (null counts as empty). Above a few hundred
    rows the rows' lists never become Python objects one by one; below, a Polars group-by
    costs more than reading them (a set of thousands of small tests asks once a test).
    """
    if values.len() <= _IN_PYTHON:
        seen: dict[tuple[str, ...], int] = {}
        codes = [seen.setdefault(tuple(v) if v else (), len(seen)) for v in values.to_list()]
        return list(seen), np.array(codes, dtype=np.intp)
    if not values.list.len().fill_null(0).max():
        # Every list empty (models where no span names one): nothing to group.
        return [()], np.zeros(values.len(), dtype=np.intp)
    frame = pl.DataFrame({"_list": values.fill_null([])}).with_row_index("_row")
    groups = frame.group_by("_list", maintain_order=True).agg(pl.col("_row"))
    index = np.empty(frame.height, dtype=np.intp)
    members = groups.with_row_index("_k").select("_k", "_row").explode("_row")
    index[members["_row"].to_numpy()] = members["_k"].to_numpy()
    return [tuple(v) for v in groups["_list"].to_list()], index


def tool_paths(trials: pl.DataFrame) -> ToolPaths:
    """The tool paths of a set of trials (rows of the trials table)."""
    distinct, index = distinct_lists(trials[tc.TOOL_SEQUENCE])
    return ToolPaths(tuple(distinct), index)


def _divergence_step(sequence: tuple[str, ...], reference: tuple[str, ...]) -> int:
    """1-based step where ``sequence`` first differs from ``reference``; 0 if it never does."""
    for step, (a, b) in enumerate(zip(sequence, reference, strict=False), start=1):
        if a != b:
            return step
    return 0 if len(sequence) == len(reference) else min(len(sequence), len(reference)) + 1


def trial_features(trials: pl.DataFrame, paths: ToolPaths | None = None) -> list[Feature]:
    """The candidate features of one test's trials (constant features are left out).

    Args:
        trials: The trials of one test (rows of the trials table).
        paths: Their tool paths, when the caller has them already.

    Returns:
        Features with one value per row of ``trials``.
    """
    paths = paths if paths is not None else tool_paths(trials)
    passed = trials[tc.PASSED].to_numpy().astype(bool)
    features: list[Feature] = []
    tools = sorted({t for s in paths.distinct for t in s})
    # Calls of each tool per distinct path, then per trial through the path index.
    calls = np.array(
        [[s.count(tool) for tool in tools] for s in paths.distinct], dtype=float
    ).reshape(len(paths.distinct), len(tools))[paths.index]
    for column, tool in enumerate(tools):
        counts = calls[:, column]
        features.append(
            Feature(f"uses:{tool}", "binary", (counts > 0).astype(float), f"use `{tool}`")
        )
        features.append(Feature(f"tool_calls:{tool}", "count", counts, f"calls to `{tool}`"))
    reference = paths.most_common_among(passed)
    if reference is not None:
        steps = np.array([_divergence_step(s, reference) for s in paths.distinct], dtype=float)
        features.append(
            Feature(
                "leaves_common_path",
                "binary",
                (steps[paths.index] > 0).astype(float),
                "leave the most common passing tool path",
            )
        )
    model_sets, model_index = distinct_lists(trials[tc.MODELS])
    models = sorted({m for ms in model_sets for m in ms})
    if len(models) > 1:
        for model in models:
            used = np.array([model in ms for ms in model_sets], dtype=float)[model_index]
            features.append(Feature(f"model:{model}", "binary", used, f"use model `{model}`"))
    errors = trials[tc.ERROR_SPANS].to_numpy().astype(float)
    features.append(
        Feature("has_error_spans", "binary", (errors > 0).astype(float), "have error spans")
    )
    features.append(
        Feature("steps", "count", trials[tc.TOOL_CALLS].to_numpy().astype(float), "tool steps")
    )
    features.append(
        Feature("llm_calls", "count", trials[tc.LLM_CALLS].to_numpy().astype(float), "LLM calls")
    )
    durations = trials[tc.DURATION_S].to_numpy().astype(float)
    features.append(Feature("latency", "continuous", durations, "latency (s)"))
    # A feature that never varies cannot separate anything.
    return [f for f in features if np.unique(f.values).size > 1]
