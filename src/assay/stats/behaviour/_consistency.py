"""Tool-choice consistency: do repeated trials take the same path of tool calls?"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.stats.behaviour._tool_paths import ToolPaths


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
    similarity_pairs: int | None = None
    """None when ``mean_similarity`` is exact over all pairs; else the number of trial pairs,
    drawn at random with a fixed seed, whose mean it is (an unbiased estimate)."""


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


#: Above this many pairs of distinct sequences, mean similarity is estimated from a sample.
MAX_SIMILARITY_PAIRS = 1000


def tool_consistency(
    sequences: Sequence[Sequence[str]] | ToolPaths,
    top: int = 3,
    *,
    similarity: bool = True,
    max_pairs: int = MAX_SIMILARITY_PAIRS,
    seed: int = 0,
) -> ToolConsistency:
    """Consistency of the tool paths of N trials.

    ``agreement`` is Σ_j c_j (c_j − 1) / (N (N − 1)) over the distinct sequences j with counts
    c_j: the probability that two trials drawn without replacement took the same path. It is
    the unbiased estimator of Σ p_j² (Simpson 1949, Nature 163:688), so it does not drift with
    N. ``mean_similarity`` credits near-misses: the mean over all trial pairs of normalised
    Levenshtein similarity.

    When there are more than ``max_pairs`` pairs of distinct sequences, the mean similarity is
    the mean over ``max_pairs`` trial pairs drawn uniformly at random (seeded, so repeatable):
    an unbiased estimate whose standard error is at most 0.5 / sqrt(max_pairs) (0.016).

    Args:
        sequences: Each trial's tool names in call order, or their :class:`ToolPaths`.
        top: How many of the most common sequences to keep.
        similarity: Compute ``mean_similarity`` (the costly part); else it is None.
        max_pairs: Most pairs of distinct sequences compared exactly.
        seed: Seed of the pair sample.

    Returns:
        The consistency figures.
    """
    paths = ToolPaths.of(sequences)
    counts = paths.counts
    n, distinct = len(paths), len(paths.distinct)
    most_common = tuple(paths.most_common(top))
    if n < 2:
        return ToolConsistency(n, None, None, distinct, most_common)
    pairs = n * (n - 1)
    agreement = float((counts * (counts - 1)).sum()) / pairs
    if not similarity:
        return ToolConsistency(n, agreement, None, distinct, most_common)
    if distinct * (distinct - 1) // 2 > max_pairs:
        return _sampled(paths, agreement, most_common, max_pairs, seed)
    weights = counts.astype(np.float64)
    total = float((weights * (weights - 1) / 2).sum())  # identical pairs: similarity 1
    if distinct > 1:
        first, second = _pairs(distinct)
        alike = _known_similarity(paths.distinct, first, second)
        total += float((weights[first] * weights[second] * alike).sum())
    return ToolConsistency(n, agreement, total / (pairs / 2), distinct, most_common)


def _sampled(
    paths: ToolPaths,
    agreement: float,
    most_common: tuple[tuple[tuple[str, ...], int], ...],
    pairs: int,
    seed: int,
) -> ToolConsistency:
    """Mean similarity over ``pairs`` uniformly drawn pairs of different trials."""
    n = len(paths)
    rng = np.random.default_rng(seed)
    first = rng.integers(0, n, pairs)
    second = (first + rng.integers(1, n, pairs)) % n  # uniform over the other n - 1 trials
    a, b = paths.index[first], paths.index[second]
    values = np.ones(pairs)
    differ = a != b
    if differ.any():
        # Encode only the sequences the sample touches.
        used, inverse = np.unique(np.concatenate([a[differ], b[differ]]), return_inverse=True)
        chosen = [paths.distinct[k] for k in used]
        half = int(differ.sum())
        values[differ] = _pairwise_similarity(chosen, inverse[:half], inverse[half:])
    return ToolConsistency(
        n, agreement, float(values.mean()), len(paths.distinct), most_common, pairs
    )


@functools.lru_cache(maxsize=64)
def _pairs(distinct: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """``np.triu_indices(distinct, k=1)``, made once per count (read-only)."""
    first, second = np.triu_indices(distinct, k=1)
    first.setflags(write=False)
    second.setflags(write=False)
    return first, second


_SIMILARITY: dict[tuple[tuple[str, ...], tuple[str, ...]], float] = {}
"""Similarity of the pairs of sequences compared so far: the tests of a set repeat few paths."""
_SIMILARITY_MAX = 1 << 16


def _known_similarity(
    sequences: Sequence[tuple[str, ...]],
    first: npt.NDArray[np.intp],
    second: npt.NDArray[np.intp],
) -> npt.NDArray[np.float64]:
    """:func:`_pairwise_similarity`, each pair of sequences computed once.

    A pair's similarity depends on its two sequences alone (the programme's other pairs and
    its width never reach its cells), so a pair compared before is looked up.
    """
    keys = [
        (sequences[a], sequences[b]) for a, b in zip(first.tolist(), second.tolist(), strict=True)
    ]
    new = [i for i, key in enumerate(keys) if key not in _SIMILARITY]
    if new:
        if len(_SIMILARITY) + len(new) > _SIMILARITY_MAX:
            _SIMILARITY.clear()
        rows = np.array(new, dtype=np.intp)
        found = _pairwise_similarity(list(sequences), first[rows], second[rows])
        _SIMILARITY.update(zip([keys[i] for i in new], found.tolist(), strict=True))
    return np.array([_SIMILARITY[key] for key in keys], dtype=np.float64)


def _pairwise_similarity(
    sequences: list[tuple[str, ...]], first: npt.NDArray[np.intp], second: npt.NDArray[np.intp]
) -> npt.NDArray[np.float64]:
    """:func:`sequence_similarity` of the pairs (first[k], second[k]), vectorised over pairs.

    The Wagner–Fischer programme runs once, its rows and columns advancing for all pairs at
    once; each pair's distance is read off where its own lengths end.
    """
    lengths = np.fromiter(map(len, sequences), np.intp, len(sequences))
    width = max(int(lengths.max()), 1)
    # Each tool name a number (only equality is read), every call of every sequence at once.
    flat = list(itertools.chain.from_iterable(sequences))
    codes = {t: i for i, t in enumerate(dict.fromkeys(flat))}
    encoded = np.full((len(sequences), width), -1, dtype=np.intp)
    encoded[np.arange(width) < lengths[:, None]] = np.fromiter(
        map(codes.__getitem__, flat), np.intp, len(flat)
    )
    # Pairs run along the last (contiguous) axis, so each step is one vector operation.
    a, b = encoded[first].T, encoded[second].T
    len_a, len_b = lengths[first], lengths[second]
    pairs = first.size
    # Distances are small integers: int32 rows keep the arithmetic exact and fast.
    distance = np.where(len_a == 0, len_b, 0).astype(np.int32)
    steps = np.arange(width + 1, dtype=np.int32)[:, None]
    previous = np.broadcast_to(steps, (width + 1, pairs)).copy()
    t = np.empty_like(previous)
    columns = np.arange(pairs)
    for i in range(1, int(len_a.max()) + 1):
        # Row i of the Wagner–Fischer table for every pair at once. The left-neighbour term
        # current[j] = min(.., current[j-1] + 1) unrolls to j + cummin(t[k] - k) over k ≤ j.
        t[0] = i
        np.add(previous[:-1], a[i - 1] != b, out=t[1:])
        np.minimum(t[1:], previous[1:] + 1, out=t[1:])
        t -= steps
        current = np.minimum.accumulate(t, axis=0)
        current += steps
        done = len_a == i
        distance[done] = current[len_b[done], columns[done]]
        previous = current
    longest = np.maximum(np.maximum(len_a, len_b), 1)
    similarity: npt.NDArray[np.float64] = 1.0 - distance / longest
    return similarity
