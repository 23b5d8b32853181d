"""The tool paths of a set of trials: each distinct sequence once, and which one each trial took.

Trials of one test mostly repeat a handful of paths, so the figures that look at paths (tool
consistency, flakiness, failure features) work on the distinct sequences and an index array,
never on one Python tuple per trial.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class ToolPaths:
    """Distinct tool sequences in order of first occurrence, and each trial's one."""

    distinct: Sequence[tuple[str, ...]]
    """Each distinct sequence once, in the order trials first took it (no two equal)."""
    index: npt.NDArray[np.intp]
    """Per trial, the position of its sequence in :attr:`distinct`."""
    calls: tuple[tuple[str, ...], npt.NDArray[np.int32]] | None = None
    """Where known already: tool names (sorted) and each distinct sequence's calls to each
    (one row a sequence, aligned with :attr:`distinct`; names no sequence calls count 0)."""

    @classmethod
    def of(cls, sequences: Sequence[Sequence[str]] | ToolPaths) -> ToolPaths:
        """The paths of ``sequences`` (one sequence of tool names per trial)."""
        if isinstance(sequences, ToolPaths):
            return sequences
        positions: dict[tuple[str, ...], int] = {}
        index = np.array(
            [positions.setdefault(tuple(s), len(positions)) for s in sequences], dtype=np.intp
        )
        return cls(tuple(positions), index)

    def __len__(self) -> int:
        return int(self.index.size)

    @property
    def counts(self) -> npt.NDArray[np.intp]:
        """Trials per distinct sequence, aligned with :attr:`distinct`."""
        return np.bincount(self.index, minlength=len(self.distinct))

    def most_common(self, top: int | None = None) -> list[tuple[tuple[str, ...], int]]:
        """Sequences with their counts, most frequent first (ties: first taken first)."""
        counts = self.counts
        order = np.argsort(-counts, kind="stable")[:top]
        return [(self.distinct[k], int(counts[k])) for k in order]

    def most_common_among(self, keep: npt.NDArray[np.bool_]) -> tuple[str, ...] | None:
        """The sequence taken most often by the trials ``keep`` (ties: the one they took first).

        None when no trial is kept.
        """
        at = self.most_common_at(keep)
        return None if at is None else self.distinct[at]

    def most_common_at(self, keep: npt.NDArray[np.bool_]) -> int | None:
        """:meth:`most_common_among` as its position in :attr:`distinct` (None: none kept)."""
        chosen = self.index[keep]
        if chosen.size == 0:
            return None
        counts = np.bincount(chosen, minlength=len(self.distinct))
        most = np.flatnonzero(counts == counts.max())
        if most.size == 1:  # no tie: no need to know which they took first
            return int(most[0])
        first = np.full(len(self.distinct), chosen.size, dtype=np.intp)
        np.minimum.at(first, chosen, np.arange(chosen.size))
        return int(np.lexsort((first, -counts))[0])
