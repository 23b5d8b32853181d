"""Per-trial features of a test's traces, for explaining which of them separate failures.

Each feature is one number (or flag) per trial, read from the trials table: a tool used or not,
a tool's call count, whether and where the tool path leaves the most common passing path, the
model used, error spans, step count, latency.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
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
    lengths = values.list.len().fill_null(0)
    longest = lengths.max()
    if not longest:
        # Every list empty (models where no span names one): nothing to group.
        return [()], np.zeros(values.len(), dtype=np.intp)
    if lengths.min() == longest:
        flat = values.explode()
        if flat.eq_missing(flat[0]).all():
            # Lists of one length holding one value are one list (every trial called one
            # model): no group-by of the lists (4M trials: 0.44 s). Comparing each value with
            # the first costs little where they differ (8M tool names: 0.01 s, against 0.08 s
            # to count the distinct ones).
            return [tuple(values[0].to_list())], np.zeros(values.len(), dtype=np.intp)
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


def trial_features(trials: pl.DataFrame, paths: ToolPaths | None = None) -> list[Feature]:
    """The candidate features of one test's trials (constant features are left out).

    Args:
        trials: The trials of one test (rows of the trials table).
        paths: Their tool paths, when the caller has them already.

    Returns:
        Features with one value per row of ``trials``.
    """
    return features_of(
        trials[tc.PASSED].to_numpy().astype(bool),
        paths if paths is not None else tool_paths(trials),
        distinct_lists(trials[tc.MODELS]),
        error_spans=trials[tc.ERROR_SPANS].to_numpy().astype(float),
        tool_calls=trials[tc.TOOL_CALLS].to_numpy().astype(float),
        llm_calls=trials[tc.LLM_CALLS].to_numpy().astype(float),
        durations=trials[tc.DURATION_S].to_numpy().astype(float),
    )


def features_of(
    passed: npt.NDArray[np.bool_],
    paths: ToolPaths,
    models: tuple[Sequence[tuple[str, ...]], npt.NDArray[np.intp]],
    *,
    error_spans: npt.NDArray[np.float64],
    tool_calls: npt.NDArray[np.float64],
    llm_calls: npt.NDArray[np.float64],
    durations: npt.NDArray[np.float64],
) -> list[Feature]:
    """:func:`trial_features` of trials given as arrays (one value per trial, nulls as NaN).

    Args:
        passed: Whether each trial passed.
        paths: Their tool paths (of these trials: each distinct path some trial's).
        models: The distinct model lists of these trials (each some trial's) and each
            trial's position in them.
        error_spans: Error spans per trial.
        tool_calls: Tool calls per trial.
        llm_calls: LLM calls per trial.
        durations: Duration per trial, in seconds.
    """
    model_sets, model_index = models
    return [
        *(_per_trial(f, paths.index) for f in path_features(paths, passed)),
        *(_per_trial(f, model_index) for f in model_features(model_sets)),
        *column_features(
            error_spans=error_spans, tool_calls=tool_calls, llm_calls=llm_calls, durations=durations
        ),
    ]


def _per_trial(feature: Feature, index: npt.NDArray[np.intp]) -> Feature:
    return Feature(feature.name, feature.kind, feature.values[index], feature.label)


def path_features(paths: ToolPaths, passed: npt.NDArray[np.bool_]) -> list[Feature]:
    """The features read from the tool path, one value per distinct path (not per trial).

    A trial's value is its path's (through ``paths.index``). A feature varies across the
    trials exactly when it varies across their distinct paths (each is some trial's), so the
    constant ones are left out here, before any per-trial array is made. The values are
    read-only: tests of one set share few distinct paths, and their features are made once.

    Args:
        paths: The trials' tool paths (each distinct path some trial's).
        passed: Whether each trial passed (the most common passing path is the reference).
    """
    reference = paths.most_common_at(passed)
    if paths.calls is not None:
        return list(_features(len(paths.distinct), reference, *paths.calls))
    return list(_path_features(tuple(paths.distinct), reference))


@functools.lru_cache(maxsize=4096)
def _path_features(
    distinct: tuple[tuple[str, ...], ...], reference: int | None
) -> tuple[Feature, ...]:
    return _features(len(distinct), reference, *_call_counts(distinct))


def _features(
    paths: int,
    reference: int | None,
    tools: Sequence[str],
    calls: npt.NDArray[np.int32] | npt.NDArray[np.int64],
) -> tuple[Feature, ...]:
    """The features of ``paths`` distinct paths, given each one's calls to each of ``tools``.

    ``reference`` is the position of the most common passing path among them.
    """
    features: list[Feature] = []
    for column, tool in enumerate(tools):
        counts = calls[:, column]
        uses = counts > 0
        if uses.any() and not uses.all():
            features.append(Feature(f"uses:{tool}", "binary", _fixed(uses), f"use `{tool}`"))
        if varies(counts):
            label = f"calls to `{tool}`"
            features.append(Feature(f"tool_calls:{tool}", "count", _fixed(counts), label))
    if reference is not None:
        # A path leaves the reference at some step exactly when it is another path: the
        # step is 0 only where every common step agrees and the lengths are equal. No two
        # distinct paths are equal, so every path but the reference's own leaves it.
        leaves = np.arange(paths) != reference
        if leaves.any() and not leaves.all():
            features.append(
                Feature(
                    "leaves_common_path",
                    "binary",
                    _fixed(leaves),
                    "leave the most common passing tool path",
                )
            )
    return tuple(features)


def _call_counts(
    distinct: Sequence[tuple[str, ...]],
) -> tuple[list[str], npt.NDArray[np.int64]]:
    """The tools named in ``distinct`` (sorted), and each path's calls to each: one row a path.

    Counted by one ``np.bincount`` over every call of every path, not a count per path and
    tool in Python: a test of 50,000 distinct paths of 16 calls spent seconds there.
    """
    flat = list(itertools.chain.from_iterable(distinct))
    tools = sorted(set(flat))
    if not tools:
        return tools, np.zeros((len(distinct), 0), dtype=np.int64)
    code = {tool: i for i, tool in enumerate(tools)}
    codes = np.fromiter(map(code.__getitem__, flat), np.int64, len(flat))
    lengths = np.fromiter(map(len, distinct), np.int64, len(distinct))
    rows = np.repeat(np.arange(len(distinct), dtype=np.int64), lengths)
    width = len(tools)
    calls = np.bincount(rows * width + codes, minlength=len(distinct) * width)
    return tools, calls.reshape(len(distinct), width)


def _fixed(values: Sequence[float] | npt.NDArray[np.generic]) -> npt.NDArray[np.float64]:
    """``values`` as a read-only float array (shared by the tests a cached feature serves)."""
    array = np.array(values, dtype=float)
    array.setflags(write=False)
    return array


def model_features(model_sets: Sequence[tuple[str, ...]]) -> list[Feature]:
    """The models used, one value per distinct list of models (each some trial's)."""
    names = sorted({m for ms in model_sets for m in ms})
    if len(names) < 2:
        return []
    features = []
    for model in names:
        used = [float(model in ms) for ms in model_sets]
        if len(set(used)) > 1:
            label = f"use model `{model}`"
            features.append(Feature(f"model:{model}", "binary", np.array(used), label))
    return features


def column_features(
    *,
    error_spans: npt.NDArray[np.float64],
    tool_calls: npt.NDArray[np.float64],
    llm_calls: npt.NDArray[np.float64],
    durations: npt.NDArray[np.float64],
) -> list[Feature]:
    """The features read from the trials' own columns, those that vary."""
    per_trial = (
        Feature("has_error_spans", "binary", (error_spans > 0).astype(float), "have error spans"),
        Feature("steps", "count", tool_calls, "tool steps"),
        Feature("llm_calls", "count", llm_calls, "LLM calls"),
        Feature("latency", "continuous", durations, "latency (s)"),
    )
    # A feature that never varies cannot separate anything.
    return [f for f in per_trial if varies(f.values)]


def varies(
    values: npt.NDArray[np.float64] | npt.NDArray[np.int64] | npt.NDArray[np.int32],
) -> bool:
    """Whether ``values`` hold two different values (NaN equal to NaN): ``np.unique`` size > 1.

    One comparison with the first value instead of a sort, once per feature of every test.
    """
    if values.size < 2:
        return False
    first = values[0]
    if first != first:  # NaN: any number differs
        return not bool(np.isnan(values).all())
    return bool((values != first).any())  # a NaN differs from a number too
