"""Per-trial features of a test's traces, for explaining which of them separate failures.

Each feature is one number (or flag) per trial, read from the trials table: a tool used or not,
a tool's call count, whether and where the tool path leaves the most common passing path, the
model used, error spans, step count, latency.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from assay.analysis import _columns as tc

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


def _divergence_step(sequence: tuple[str, ...], reference: tuple[str, ...]) -> int:
    """1-based step where ``sequence`` first differs from ``reference``; 0 if it never does."""
    for step, (a, b) in enumerate(zip(sequence, reference, strict=False), start=1):
        if a != b:
            return step
    return 0 if len(sequence) == len(reference) else min(len(sequence), len(reference)) + 1


def trial_features(trials: pl.DataFrame) -> list[Feature]:
    """The candidate features of one test's trials (constant features are left out).

    Args:
        trials: The trials of one test (rows of the trials table).

    Returns:
        Features with one value per row of ``trials``.
    """
    sequences = [tuple(s) for s in trials[tc.TOOL_SEQUENCE].to_list()]
    passed = trials[tc.PASSED].to_numpy()
    features: list[Feature] = []
    tools = sorted({t for s in sequences for t in s})
    for tool in tools:
        counts = np.array([s.count(tool) for s in sequences], dtype=float)
        features.append(
            Feature(f"uses:{tool}", "binary", (counts > 0).astype(float), f"use `{tool}`")
        )
        features.append(Feature(f"tool_calls:{tool}", "count", counts, f"calls to `{tool}`"))
    passing = [s for s, ok in zip(sequences, passed, strict=True) if ok]
    if passing:
        reference = Counter(passing).most_common(1)[0][0]
        steps = np.array([_divergence_step(s, reference) for s in sequences], dtype=float)
        features.append(
            Feature(
                "leaves_common_path",
                "binary",
                (steps > 0).astype(float),
                "leave the most common passing tool path",
            )
        )
    models = sorted({m for ms in trials[tc.MODELS].to_list() for m in ms})
    if len(models) > 1:
        for model in models:
            used = np.array([model in ms for ms in trials[tc.MODELS].to_list()], dtype=float)
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
