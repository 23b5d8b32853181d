"""The spans already counted, by ``(trace_id, span_id)``: a copy is counted once, in bounded memory.

A span can reach a watched folder twice: a file copied (``cp x.parquet backup.parquet``), a
hard link added later, a batch a collector stored again after a crash (an exporter retries
what it was never told was stored). ``analyze`` collapses such repeats (``assay.store``'s
screen); :class:`SeenSpans` does the same for a set that grows, look after look.

Each span is known by a 64-bit hash of its ``(trace_id, span_id)``, held in open-addressing
hash tables of ``uint64`` (numpy, no Python object per span) beside the rank of the copy counted
(:func:`assay.store.rule_rank`: its outcome, status and end as the copies rule orders them), so
that a copy arriving after its trace was judged that ``analyze`` would count instead is named.
A look costs what its new spans hold, never what was read before. The memory is bounded: the
spans are held in two generations of at most ``max_spans / 2`` each; when the newer one is full
the older is dropped. So a repeat is always recognised when fewer than ``max_spans / 2``
distinct spans were read between the two copies (and up to ``max_spans``); a copy that arrives
later than that is counted again. The default, 4,000,000 spans, holds 128 MiB at most
(docs/monitoring.md).
Two different spans share a hash with probability about ``n**2 / 2**65`` (n spans held:
3e-7 at 4M); the second would be taken for a repeat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt
import polars as pl

from assay.analysis import columns as tc
from assay.store import rule_rank

__all__ = ["MAX_SEEN_SPANS", "SeenSpans"]

MAX_SEEN_SPANS: Final = 4_000_000
"""Spans remembered at most (``--max-seen-spans``); at least half of them are the latest."""
_FIRST_SLOTS: Final = 1 << 16
_EMPTY: Final = np.uint64(0)

Keys = npt.NDArray[np.uint64]


SPAN_KEY: Final = pl.struct(tc.TRACE_ID, tc.SPAN_ID).hash(seed=0x5EED)
"""The 64-bit hash of a span's ``(trace_id, span_id)``: its key (see :func:`as_keys`)."""


def as_keys(hashed: pl.Series) -> Keys:
    """The keys of :data:`SPAN_KEY`'s hashes (0 is kept for an empty slot)."""
    keys = hashed.to_numpy().astype(np.uint64, copy=False)
    return np.where(keys == _EMPTY, np.uint64(1), keys)


def span_keys(spans: pl.DataFrame) -> tuple[Keys, Keys]:
    """Each span's key (its ids) and its rank (:func:`assay.store.rule_rank`)."""
    hashed = spans.select(SPAN_KEY.alias("_key"), rule_rank().alias("_rank"))
    return as_keys(hashed["_key"]), ranks_of(hashed["_rank"])


def ranks_of(hashed: pl.Series) -> Keys:
    """Ranks (:func:`assay.store.rule_rank`) as :class:`SeenSpans` holds them."""
    return hashed.to_numpy().astype(np.uint64, copy=False)


@dataclass(slots=True)
class _Table:
    """One generation: an open-addressing hash map of keys to their copy's rank.

    Linear probing, load <= 1/2; ``values[i]`` belongs to the key in ``slots[i]``.
    """

    slots: Keys = field(default_factory=lambda: np.zeros(_FIRST_SLOTS, np.uint64))
    values: Keys = field(default_factory=lambda: np.zeros(_FIRST_SLOTS, np.uint64))
    count: int = 0

    def find(self, keys: Keys) -> npt.NDArray[np.int64]:
        """The slot holding each of ``keys``, -1 where it is not held."""
        mask = np.uint64(self.slots.size - 1)
        found = np.full(keys.size, -1, dtype=np.int64)
        slot = keys & mask
        pending = np.arange(keys.size)
        while pending.size:
            held = self.slots[slot[pending]]
            hit = held == keys[pending]
            found[pending[hit]] = slot[pending[hit]].astype(np.int64)
            pending = pending[~hit & (held != _EMPTY)]
            slot[pending] = (slot[pending] + np.uint64(1)) & mask
        return found

    def insert(self, keys: Keys, values: Keys) -> None:
        """Add ``keys`` (distinct, none held yet) with their values, keeping the load <= 1/2."""
        size = self.slots.size
        while 2 * (self.count + keys.size) > size:
            size *= 2
        if size != self.slots.size:
            full = self.slots != _EMPTY
            held, held_values = self.slots[full], self.values[full]
            self.slots, self.values = np.zeros(size, np.uint64), np.zeros(size, np.uint64)
            self.count = 0
            self._place(held, held_values)
        self._place(keys, values)

    def _place(self, keys: Keys, values: Keys) -> None:
        mask = np.uint64(self.slots.size - 1)
        slot = keys & mask
        pending = np.arange(keys.size)
        while pending.size:
            free = self.slots[slot[pending]] == _EMPTY
            candidates = pending[free]
            # several keys may probe the same free slot at once: the first takes it
            _, first = np.unique(slot[candidates], return_index=True)
            winners = candidates[first]
            self.slots[slot[winners]] = keys[winners]
            self.values[slot[winners]] = values[winners]
            placed = np.zeros(keys.size, dtype=bool)
            placed[winners] = True
            pending = pending[~placed[pending]]
            slot[pending] = (slot[pending] + np.uint64(1)) & mask
        self.count += keys.size


@dataclass(slots=True)
class SeenSpans:
    """The spans counted so far, each with the rank of the copy counted (see the module)."""

    max_spans: int = MAX_SEEN_SPANS
    """Spans remembered at most; at least the latest ``max_spans // 2`` always are."""
    _newer: _Table = field(default_factory=_Table)
    _older: _Table | None = None

    def __post_init__(self) -> None:
        if self.max_spans < 2:
            raise ValueError("max_spans must be at least 2")

    @property
    def held(self) -> int:
        """Spans remembered now."""
        return self._newer.count + (self._older.count if self._older is not None else 0)

    def fresh(self, keys: Keys, ranks: Keys | None = None) -> npt.NDArray[np.bool_]:
        """Which of ``keys`` were not seen before (nor earlier in ``keys``); remember them.

        Args:
            keys: The spans' keys (:func:`span_keys`).
            ranks: Each span's rank (:func:`assay.store.rule_rank`), remembered with its key
                (:meth:`ranks`); 0 (unknown) when not given.
        """
        first = np.zeros(keys.size, dtype=bool)
        _, at = np.unique(keys, return_index=True)
        first[at] = True
        if keys.size:
            first &= self._lookup(keys)[1] < 0
        values = np.zeros(keys.size, np.uint64) if ranks is None else ranks
        self._remember(keys[first], values[first])
        return first

    def ranks(self, keys: Keys) -> Keys:
        """The rank held for each of ``keys``: 0 where the key is not held, or its rank unknown."""
        table, slot = self._lookup(keys)
        held = np.zeros(keys.size, np.uint64)
        for generation, which in ((self._newer, 0), (self._older, 1)):
            if generation is not None:
                at = (table == which) & (slot >= 0)
                held[at] = generation.values[slot[at]]
        return held

    def update(self, keys: Keys, ranks: Keys) -> None:
        """Set the rank held for ``keys`` (the copy counted); keys not held are ignored."""
        table, slot = self._lookup(keys)
        for generation, which in ((self._newer, 0), (self._older, 1)):
            if generation is not None:
                at = (table == which) & (slot >= 0)
                generation.values[slot[at]] = ranks[at]

    def _lookup(self, keys: Keys) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int64]]:
        """For each key, the generation holding it (0 newer, 1 older) and its slot (-1: none)."""
        slot = self._newer.find(keys)
        table = np.zeros(keys.size, np.int8)
        if self._older is not None:
            missing = slot < 0
            older = self._older.find(keys[missing])
            slot[missing] = older
            table[missing] = 1
        return table, slot

    def _remember(self, keys: Keys, values: Keys) -> None:
        generation = max(1, self.max_spans // 2)
        while keys.size:
            room = generation - self._newer.count
            if room == 0:
                self._older, self._newer = self._newer, _Table()
                continue
            self._newer.insert(keys[:room], values[:room])
            keys, values = keys[room:], values[room:]
