"""Tool-choice consistency: do repeated trials take the same path of tool calls?"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


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
    distinct = list(counts)
    weights = np.array([counts[s] for s in distinct], dtype=np.float64)
    total = float((weights * (weights - 1) / 2).sum())  # identical pairs: similarity 1
    if len(distinct) > 1:
        first, second = np.triu_indices(len(distinct), k=1)
        similarity = _pairwise_similarity(distinct, first, second)
        total += float((weights[first] * weights[second] * similarity).sum())
    return ToolConsistency(n, agreement, total / (pairs / 2), len(counts), most_common)


def _pairwise_similarity(
    sequences: list[tuple[str, ...]], first: npt.NDArray[np.intp], second: npt.NDArray[np.intp]
) -> npt.NDArray[np.float64]:
    """:func:`sequence_similarity` of the pairs (first[k], second[k]), vectorised over pairs.

    The Wagner–Fischer programme runs once, its rows and columns advancing for all pairs at
    once; each pair's distance is read off where its own lengths end.
    """
    codes: dict[str, int] = {}
    lengths = np.array([len(s) for s in sequences], dtype=np.intp)
    width = max(int(lengths.max()), 1)
    encoded = np.full((len(sequences), width), -1, dtype=np.intp)
    for row, sequence in enumerate(sequences):
        encoded[row, : len(sequence)] = [codes.setdefault(t, len(codes)) for t in sequence]
    a, b = encoded[first], encoded[second]
    len_a, len_b = lengths[first], lengths[second]
    pairs = first.size
    distance = np.where(len_a == 0, len_b, 0).astype(np.float64)
    previous = np.broadcast_to(np.arange(width + 1, dtype=np.float64), (pairs, width + 1)).copy()
    rows = np.arange(pairs)
    for i in range(1, width + 1):
        current = np.empty_like(previous)
        current[:, 0] = i
        for j in range(1, width + 1):
            substitute = previous[:, j - 1] + (a[:, i - 1] != b[:, j - 1])
            current[:, j] = np.minimum(
                np.minimum(previous[:, j], current[:, j - 1]) + 1, substitute
            )
        done = len_a == i
        distance[done] = current[rows[done], len_b[done]]
        previous = current
    longest = np.maximum(np.maximum(len_a, len_b), 1)
    similarity: npt.NDArray[np.float64] = 1.0 - distance / longest
    return similarity
