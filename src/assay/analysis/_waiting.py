"""Buckets' trials tables while the other buckets are read: packed once many trials wait.

A set's trials table is made bucket by bucket, and every bucket's table waits in memory until
the last bucket is read. For sets of millions of trials those tables, not the spans being read,
are most of the memory (4M trials: 0.9 GiB of tables waiting, beside two buckets' spans). Past
:data:`PACK_FROM_TRIALS` trials waiting, each further table waits as Arrow IPC compressed with
LZ4 (less than half its size held as columns, for about 0.12 s of a core per 200k trials
written and read back) and is read back, exactly as it was, when the set's table is made.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass, replace
from typing import Final

import polars as pl

from assay.analysis._trials import Trials
from assay.analysis._unwritten import with_unwritten_columns

__all__ = ["PACK_FROM_TRIALS", "Packed", "Waiting", "unpacked"]

PACK_FROM_TRIALS: Final = 1_000_000
"""Trials waiting as columns before further buckets' tables wait packed (about 0.3 GiB)."""


@dataclass(frozen=True, slots=True)
class Packed:
    """A bucket's trials with its table as LZ4-compressed Arrow IPC."""

    trials: Trials
    """The bucket's trials, their table emptied (its schema kept)."""
    data: bytes

    @classmethod
    def of(cls, trials: Trials) -> Packed:
        out = io.BytesIO()
        trials.table.write_ipc(out, compression="lz4")
        return cls(replace(trials, table=trials.table.clear()), out.getvalue())

    def unpacked(self) -> Trials:
        # Columns holding nothing are read back written: made anew, they hold no memory again.
        table = with_unwritten_columns(pl.read_ipc(io.BytesIO(self.data)))
        return replace(self.trials, table=table)


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


def unpacked(held: list[Trials | Packed | None]) -> list[Trials | None]:
    """The buckets' trials with every packed table read back, in their order.

    ``held`` is emptied on the way, so each packed copy goes as its table comes back.
    """
    out: list[Trials | None] = []
    for at, h in enumerate(held):
        out.append(h.unpacked() if isinstance(h, Packed) else h)
        held[at] = None
    held.clear()
    return out
