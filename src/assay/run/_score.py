"""EvalView's score, so that an EvalView file's ``min_score`` means what its users mean.

EvalView scores a run 0-100 as ``tool_accuracy * 100 * w_t + output_quality * w_q +
sequence_progress * 100 * w_s`` (weights 0.3 / 0.5 / 0.2 unless ``thresholds.weights`` or
``scoring.weights`` say otherwise). Tool accuracy and sequence progress come from the trial's
tool calls; output quality is EvalView's LLM judge, which assay does not run: it is the score
the agent records (``output_quality`` if so named, else the mean of its scores). Without one,
the score is the weighted mean of the two other parts (weights renormalised), and a test that
expects no tools and no sequence has no score at all: its ``min_score`` is not checked, and
the run says so (``docs/migrating.md``).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from assay import conventions as c
from assay.run._checks import sequence_progress
from assay.run._suite import Expected, ScoreWeights

EVALVIEW_SCORE = c.EVALVIEW_SCORE
"""The name of the ``assay.score`` event that records a trial's EvalView score (0-100)."""
QUALITY_SCORE = "output_quality"
"""A recorded score of this name is the output-quality part."""


@dataclass(frozen=True, slots=True)
class ScoreParts:
    """The parts of one trial's EvalView score."""

    tool_accuracy: float
    """Share of expected tools and categories used, in [0, 1] (1 when none is expected)."""
    sequence: float
    """Share of the expected sequence completed in order, in [0, 1]."""
    quality: float | None
    """The recorded output-quality score (0-100), or None."""
    value: float | None
    """The score (0-100), or None when nothing could be scored."""


def tool_accuracy(expected: Expected, tools: Sequence[str]) -> float:
    """Share of ``expected.tools`` called and ``expected.tool_categories`` satisfied."""
    called = set(tools)
    hits = sum(name in called for name in expected.tools)
    hits += sum(
        bool(called & expected.categories.get(c, frozenset())) for c in expected.tool_categories
    )
    total = len(expected.tools) + len(expected.tool_categories)
    return hits / total if total else 1.0


def quality_of(scores: Sequence[tuple[str, float]]) -> float | None:
    """The output-quality part from the scores a trial recorded."""
    named = [v for n, v in scores if n == QUALITY_SCORE]
    values = named or [v for n, v in scores if n != EVALVIEW_SCORE]
    return statistics.fmean(values) if values else None


def evalview_score(
    weights: ScoreWeights,
    expected: Expected,
    tools: Sequence[str],
    scores: Sequence[tuple[str, float]],
) -> ScoreParts:
    """One trial's EvalView score from its tool calls and recorded scores."""
    accuracy = tool_accuracy(expected, tools)
    progress = sequence_progress(list(tools), expected.tool_sequence, expected.sequence_mode)
    quality = quality_of(scores)
    parts = [
        (weights.tool_accuracy, accuracy * 100),
        (weights.sequence_correctness, progress * 100),
    ]
    scorable = bool(expected.tools or expected.tool_categories or expected.tool_sequence)
    if quality is not None:
        parts.append((weights.output_quality, quality))
    elif not scorable:
        return ScoreParts(accuracy, progress, None, None)
    total = sum(w for w, _ in parts)
    if total <= 0:
        return ScoreParts(accuracy, progress, quality, None)
    value = sum(w * x for w, x in parts) / total
    return ScoreParts(accuracy, progress, quality, round(value, 2))
