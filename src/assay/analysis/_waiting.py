"""Buckets' trials tables while the other buckets are read: packed once many trials wait.

A set's trials table is made bucket by bucket, and every bucket's table waits in memory until
the last bucket is read. For sets of millions of trials those tables, not the spans being read,
are most of the memory (4M trials: 0.9 GiB of tables waiting, beside two buckets' spans). Past
:data:`PACK_FROM_TRIALS` trials waiting, each further table waits column by column as Arrow IPC
compressed with LZ4 (less than half its size held as columns, for about 0.12 s of a core per
200k trials written and read back). The set's table is then made a column at a time
(:class:`ColumnWaiting`): each column is read back, exactly as it was, only when its turn comes,
and its packed copies are let go as it is read, so the packed and the read-back tables are never
held whole at once.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass, replace
from typing import Final

import polars as pl

from assay.analysis._trials import Trials
from assay.analysis._unwritten import with_unwritten_columns

__all__ = ["PACK_FROM_TRIALS", "ColumnWaiting", "Packed", "Waiting", "columns_waiting"]

PACK_FROM_TRIALS: Final = 1_000_000
"""Trials waiting as columns before further buckets' tables wait packed (about 0.3 GiB)."""


@dataclass(frozen=True, slots=True)
class Packed:
    """A bucket's trials with each column of its table as LZ4-compressed Arrow IPC."""

    trials: Trials
    """The bucket's trials, their table emptied (its schema kept)."""
    columns: dict[str, bytes]
    """Each column, by name, in the table's order."""

    @classmethod
    def of(cls, trials: Trials) -> Packed:
        # A column apiece, so that each is let go once read back (see ColumnWaiting); as fast
        # to write and read as the whole table in one stream (0.03 and 0.02 s for 50k trials).
        columns = {column.name: _packed(column) for column in trials.table.iter_columns()}
        return cls(replace(trials, table=trials.table.clear()), columns)

    def unpacked(self) -> Trials:
        """The bucket's trials with their table read back whole."""
        table = pl.DataFrame([_read(data) for data in self.columns.values()])
        # Columns holding nothing are read back written: made anew, they hold no memory again.
        return replace(self.trials, table=with_unwritten_columns(table))


def _packed(column: pl.Series) -> bytes:
    out = io.BytesIO()
    column.to_frame().write_ipc_stream(out, compression="lz4")
    return out.getvalue()


def _read(data: bytes) -> pl.Series:
    return pl.read_ipc_stream(io.BytesIO(data)).to_series()


class Waiting:
    """Decides which buckets' tables wait packed; safe to use from the threads reading buckets."""

    def __init__(self, pack_from: int = PACK_FROM_TRIALS) -> None:
        self._pack_from = pack_from
        self._rows = 0
        self._lock = threading.Lock()

    def hold(self, trials: Trials | None) -> Trials | Packed | None:
        """``trials`` to wait: packed if :data:`PACK_FROM_TRIALS` trials already wait."""
        if trials is None:
            return None
        with self._lock:
            pack = self._rows >= self._pack_from
            self._rows += trials.table.height
        return Packed.of(trials) if pack else trials


@dataclass(slots=True)
class ColumnWaiting:
    """One column of the set's table as the buckets hold it: a piece per bucket, in order.

    A piece is the bucket's column, or its packed copy (:class:`Packed`).
    """

    name: str
    pieces: list[pl.Series | bytes]

    def read(self) -> pl.Series:
        """The column, a chunk per piece.

        The pieces are taken out as they are read, so each packed copy goes once read back:
        for that no one else may hold them.
        """
        read: list[pl.Series] = []
        self.pieces.reverse()
        while self.pieces:
            piece = self.pieces.pop()
            read.append(piece if isinstance(piece, pl.Series) else _read(piece))
            del piece
        return read[0] if len(read) == 1 else pl.concat(read, rechunk=False)


def columns_waiting(held: list[Trials | Packed]) -> list[ColumnWaiting]:
    """The columns of the buckets' tables ``held`` (all of one schema), in the table's order.

    ``held`` is emptied, so that the columns handed back are the only holders of the pieces.
    """
    first = held[0]
    names = (first.trials if isinstance(first, Packed) else first).table.columns
    columns = [ColumnWaiting(name, []) for name in names]
    for h in held:
        for column in columns:
            piece: pl.Series | bytes = (
                h.columns[column.name] if isinstance(h, Packed) else h.table[column.name]
            )
            column.pieces.append(piece)
    held.clear()
    return columns
