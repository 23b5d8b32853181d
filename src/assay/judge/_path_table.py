"""Distinct lists of names held as codes, each made a tuple of strings only when read.

A set of tool-heavy trials takes nearly a path of its own per trial: 300k trials of 16 tool
calls made 300k tuples of 16 names (4.8M pointers, 0.25–0.45 CPU-s) that almost nothing reads.
The figures read few of them: a test's most common paths, the paths a sample of pairs touches,
the reference path of the failure features; everything else reads counts and codes. A
:class:`PathTable` keeps the lists as one array of name codes; :class:`PathView` is some of
them (a test's), in the table's order of its codes. Both are read-only sequences of tuples,
equal to the tuples they stand for item by item.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np
import numpy.typing as npt

__all__ = ["PathTable", "PathView"]


class _Lists(Sequence[tuple[str, ...]]):
    """A read-only sequence of tuples of names, read one at a time by :meth:`_at`."""

    __slots__ = ()

    @overload
    def __getitem__(self, k: int) -> tuple[str, ...]: ...

    @overload
    def __getitem__(self, k: slice) -> tuple[tuple[str, ...], ...]: ...

    def __getitem__(self, k: int | slice) -> tuple[str, ...] | tuple[tuple[str, ...], ...]:
        if isinstance(k, slice):
            return tuple(self._at(i) for i in range(*k.indices(len(self))))
        return self._at(operator.index(k))

    def _at(self, k: int) -> tuple[str, ...]:
        raise NotImplementedError


class PathTable(_Lists):
    """Lists of names held as codes: list ``k`` is ``element[bounds[k]:bounds[k + 1]]``.

    Each code is a position in ``names``; ``bounds`` holds one more entry than there are lists.
    """

    __slots__ = ("_bounds", "_element", "_names")

    def __init__(
        self,
        names: Sequence[str],
        element: npt.NDArray[np.integer],
        bounds: npt.NDArray[np.int64],
    ) -> None:
        self._names = tuple(names)
        # Up to 256 names, one byte a code: a slice of bytes reads as ints without numpy's
        # per-call cost (a list is read in 1.5 µs, not 3.5 µs).
        self._element: bytes | npt.NDArray[np.integer] = (
            element.astype(np.uint8).tobytes() if len(self._names) <= 256 else element
        )
        self._bounds = bounds

    def __len__(self) -> int:
        return int(self._bounds.size) - 1

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return map(self.item, range(len(self)))

    def _at(self, k: int) -> tuple[str, ...]:
        size = len(self)
        at = k + size if k < 0 else k
        if not 0 <= at < size:
            raise IndexError(k)
        return self.item(at)

    def item(self, at: int) -> tuple[str, ...]:
        """List ``at`` (``0 ≤ at < len(self)``, unchecked) as a tuple of its names."""
        codes = self._element[self._bounds[at] : self._bounds[at + 1]]
        return tuple(
            map(self._names.__getitem__, codes if isinstance(codes, bytes) else codes.tolist())
        )

    def view(self, codes: npt.NDArray[np.integer]) -> PathView:
        """The lists ``codes`` (positions in this table), in that order."""
        return PathView(self, codes)


class PathView(_Lists):
    """Some lists of a :class:`PathTable`, by their positions in it."""

    __slots__ = ("_codes", "_table")

    def __init__(self, table: PathTable, codes: npt.NDArray[np.integer]) -> None:
        self._table = table
        self._codes = codes

    def __len__(self) -> int:
        return int(self._codes.size)

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return map(self._table.item, self._codes.tolist())

    def _at(self, k: int) -> tuple[str, ...]:
        # numpy's own indexing counts from the end and raises IndexError past it.
        return self._table.item(int(self._codes[k]))
