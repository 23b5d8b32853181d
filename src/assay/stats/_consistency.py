"""Tool-choice consistency: do repeated trials take the same path of tool calls?"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ToolConsistency:
    """How alike the tool sequences of a test's trials are."""

    n: int
    """Number of trials (sequences)."""
    agreement: float | None
    """Chance that two different trials took exactly the same tool sequence; None for n < 2."""
    mean_similarity: float | None
    """Mean over trial pairs of 1 − Levenshtein distance / longer length; None for n < 2."""
    distinct: int
    """Number of distinct tool sequences."""
    most_common: tuple[tuple[tuple[str, ...], int], ...]
    """The most common sequences with their counts, most frequent first."""


def levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    """Edit distance between two tool sequences (insertions, deletions, substitutions).

    Levenshtein (1966), Soviet Physics Doklady 10:707; the Wagner–Fischer dynamic programme.
    """
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def sequence_similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """1 − levenshtein(a, b) / max(len(a), len(b)); 1.0 for two empty sequences."""
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1.0 - levenshtein(a, b) / longest


def tool_consistency(sequences: Sequence[Sequence[str]], top: int = 3) -> ToolConsistency:
    """Consistency of the tool paths of N trials.

    ``agreement`` is Σ_j c_j (c_j − 1) / (N (N − 1)) over the distinct sequences j with counts
    c_j: the probability that two trials drawn without replacement took the same path. It is
    the unbiased estimator of Σ p_j² (Simpson 1949, Nature 163:688), so it does not drift with
    N. ``mean_similarity`` credits near-misses: the mean over all trial pairs of normalised
    Levenshtein similarity.

    Args:
        sequences: Each trial's tool names in call order.
        top: How many of the most common sequences to keep.

    Returns:
        The consistency figures.
    """
    counts = Counter(tuple(s) for s in sequences)
    n = sum(counts.values())
    most_common = tuple(counts.most_common(top))
    if n < 2:
        return ToolConsistency(n, None, None, len(counts), most_common)
    pairs = n * (n - 1)
    agreement = sum(c * (c - 1) for c in counts.values()) / pairs
    distinct = list(counts.items())
    total = sum(c * (c - 1) / 2 for c in counts.values())  # identical pairs: similarity 1
    for i, (a, ca) in enumerate(distinct):
        for b, cb in distinct[i + 1 :]:
            total += ca * cb * sequence_similarity(a, b)
    return ToolConsistency(n, agreement, total / (pairs / 2), len(counts), most_common)
