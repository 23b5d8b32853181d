"""Trace buckets: a trace set split by a stable hash of the trace id into whole traces.

A bucket can be analysed on its own. Writers lay a set out as Hive partitions ``bucket=NN``
(the last folder level, under ``date=`` and ``service=`` when those are used) and record the
bucket count in each file's metadata. Readers use that layout when every file has it;
otherwise they make buckets from whole Parquet row groups that share no trace, or, when
traces interleave too much for that, by writing a hashed copy of the set into a scratch
folder in one pass (see ``docs/scale.md``).
"""

from __future__ import annotations

import re
import shutil
import tempfile
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from assay.errors import ConfigError, InputError
from assay.store import _schema as s
from assay.store._arrow import int64_array
from assay.store._footers import Footer, open_parquet, read_footer
from assay.store._paths import is_remote

BUCKET_KEY: Final = "bucket"
"""The Hive partition key of a bucket folder (``bucket=07``)."""
BUCKET_COUNT_KEY: Final = b"assay.bucket.count"
"""Parquet file metadata: how many buckets the writer split the trace set into."""
MAX_BUCKETS: Final = 4096
_GOLDEN: Final = 0x9E3779B1  # Knuth's multiplicative constant: mixes the id's low bits
_FOLDER = re.compile(rf"(?:^|/){BUCKET_KEY}=(\d+)(?:/|$)")


def check_bucket_count(count: int) -> int:
    """Return ``count`` if it is a usable number of buckets, else raise :class:`ConfigError`."""
    if not 1 <= count <= MAX_BUCKETS:
        raise ConfigError(f"buckets must be between 1 and {MAX_BUCKETS} (got {count})")
    return count


def bucket_of(trace_ids: pl.Series, count: int) -> pl.Series:
    """The bucket (``0 … count-1``) of each trace id, the same in every process and version.

    A trace id is random hex (W3C Trace Context), so its last 8 hex digits are already a good
    hash; they are mixed by Knuth's multiplicative hash and scaled onto ``count`` buckets.
    Polars' own ``hash`` is not used: it may change between versions, and a bucket must not.
    Ids that are not hex (other systems) fall back to CRC-32 of their bytes.
    """
    tail = trace_ids.str.slice(-8).str.to_integer(base=16, strict=False).cast(pl.UInt64)
    if tail.null_count():
        fallback = pl.Series(
            [zlib.crc32(t.encode()) if t is not None else 0 for t in trace_ids.to_list()],
            dtype=pl.UInt64,
        )
        tail = tail.fill_null(fallback)
    mixed = (tail * _GOLDEN) % (1 << 32)
    return ((mixed * count) // (1 << 32)).cast(pl.UInt32).rename(BUCKET_KEY)


def bucket_folder(bucket: int, count: int) -> str:
    """The folder name of ``bucket`` among ``count`` (``bucket=07``: zero-padded, so sorted)."""
    width = max(2, len(str(count - 1)))
    return f"{BUCKET_KEY}={bucket:0{width}d}"


def split_by_bucket(table: pa.Table, count: int) -> list[tuple[int, pa.Table]]:
    """Split a spans batch into its buckets, keeping the order of spans within each."""
    trace_ids = pl.Series(table[s.TRACE_ID].combine_chunks())
    buckets = bucket_of(trace_ids, count).to_numpy()
    if (buckets == buckets[0]).all():
        return [(int(buckets[0]), table)]
    order = np.argsort(buckets, kind="stable")
    ranked = buckets[order]
    starts = np.concatenate(([0], np.flatnonzero(np.diff(ranked)) + 1))
    ends = np.append(starts[1:], len(ranked))
    taken = table.take(int64_array(order))
    return [(int(ranked[a]), taken.slice(a, b - a)) for a, b in zip(starts, ends, strict=True)]


@dataclass(frozen=True, slots=True)
class Bucket:
    """The files of one bucket: whole traces, analysable on their own."""

    number: int
    """The bucket's number (its ``bucket=NN`` folder)."""
    files: tuple[str, ...]
    """Its spans files."""
    ipc: bool = False
    """The files are Arrow IPC in the spans schema (a copy made by :func:`made_buckets`)."""
    row_ranges: tuple[tuple[tuple[int, int], ...], ...] | None = None
    """Only these ``(offset, rows)`` ranges of each file: whole row groups, read by a sliced
    scan so that Polars still reads only the columns it needs (see :func:`row_group_buckets`);
    no ranges: the whole file."""


def existing_buckets(files: tuple[str, ...]) -> list[Bucket] | None:
    """The buckets of a trace set laid out by a bucketing writer, or None if it is not.

    Every file must sit in a ``bucket=NN`` folder, and every local file must record the same
    bucket count: two writers with different counts put one trace in different buckets.
    """
    grouped: dict[int, list[str]] = {}
    counts: set[bytes | None] = set()
    for f in files:
        match = _FOLDER.search(f.replace("\\", "/"))
        if match is None:
            return None
        grouped.setdefault(int(match.group(1)), []).append(f)
        if not is_remote(f):
            counts.add(read_footer(f).schema_metadata.get(BUCKET_COUNT_KEY))
    if len(counts) > 1 or None in counts:
        return None
    return [Bucket(n, tuple(grouped[n])) for n in sorted(grouped)]


def total_spans(files: tuple[str, ...]) -> int:
    """The number of spans in ``files``, from their Parquet footers."""
    return sum(read_footer(f).rows for f in files)


def _parquet_file(path: str) -> pq.ParquetFile:
    """The Parquet file at ``path`` (local or object store)."""
    if is_remote(path):
        fs, inner = pafs.FileSystem.from_uri(path)
        return pq.ParquetFile(fs.open_input_file(inner))
    return pq.ParquetFile(path)


def _distinct(ids: pa.ChunkedArray) -> pa.ChunkedArray:
    """The trace ids of a row group's trace-id column read as a dictionary: its values.

    Writers store trace ids dictionary-encoded (a trace's spans repeat its id), so a row
    group's distinct ids are its dictionary: the id of every span need not be decoded. A value
    repeated (several dictionaries, or a column not so encoded) is only counted once later.
    """
    if pa.types.is_dictionary(ids.type):
        return pa.chunked_array([c.dictionary for c in ids.chunks], ids.type.value_type)
    return ids


def _unit_ids(path: str, footer: Footer) -> list[pa.ChunkedArray]:
    """The trace ids of each row group of a file (see :func:`_distinct`)."""
    if footer.trace_id_leaf is None:
        raise InputError(f"{path}: no {s.TRACE_ID} column")
    reader = open_parquet(path, dictionary=(footer.trace_id_leaf,))
    return [
        _distinct(reader.read_row_group(g, column_indices=[footer.trace_id_leaf]).column(0))
        for g in range(len(footer.row_groups))
    ]


def _shared_units(files: tuple[str, ...], footers: list[Footer]) -> list[tuple[int, int]]:
    """Pairs ``(first, other)`` of row groups (numbered over the files) that share a trace id.

    Reads each row group's trace ids (its dictionary), hashes them, and pairs the row groups
    holding a hash more than once (:func:`_pairs`).
    """

    def read(f: int) -> list[np.ndarray]:
        try:
            units = _unit_ids(files[f], footers[f])
        except (OSError, pa.ArrowException) as exc:
            raise InputError(f"{files[f]}: could not be read for bucketing ({exc})") from exc
        # Hashed as read: the strings of one file are held at a time, and the hashing runs
        # beside the other thread's reading. Any hash will do within one run (a collision
        # only joins two groups), as long as an id hashes alike whatever its string type.
        return [pl.Series(u.cast(pa.large_string())).hash(seed=0).to_numpy() for u in units]

    # Two files at a time: opening a file parses its footer in C++, without Python's lock
    # (2,000 files of 10k spans: 1.4 → 1.0 s).
    with ThreadPoolExecutor(2, thread_name_prefix="assay-trace-ids") as pool:
        ids = [unit for units in pool.map(read, range(len(files))) for unit in units]
    if not ids:
        return []
    hashes = np.concatenate(ids)
    units = np.repeat(np.arange(len(ids), dtype=np.int64), [len(unit) for unit in ids])
    return _pairs(hashes, units)


def _pairs(hashes: np.ndarray, units: np.ndarray) -> list[tuple[int, int]]:
    """Pairs ``(first, other)`` of units holding the same hash; ``units`` is ascending.

    By sorting: no hash table over every hash, whose memory Polars' allocator would keep. The
    hashes held more than once are found first, by a sort of the values (Polars' parallel sort
    of 4M hashes: 0.09 s, against 0.55 s for numpy's stable sort of their positions that pairs
    them); they are few (traces cut by a row group's end), and only they are looked up and
    paired.
    """
    values = pl.Series(hashes)
    ranked = values.sort().to_numpy()
    repeated = ranked[1:][ranked[1:] == ranked[:-1]]
    if not repeated.size:
        return []
    # Ascending positions: their units stay ascending.
    held = np.flatnonzero(values.is_in(pl.Series(repeated).implode()).to_numpy())
    hashes, units = hashes[held], units[held]
    # A stable sort keeps each hash's units ascending, so a run's first is its smallest.
    order = np.argsort(hashes, kind="stable")
    hashes, units = hashes[order], units[order]
    starts = np.empty(len(hashes), dtype=bool)
    starts[:1] = True
    np.not_equal(hashes[1:], hashes[:-1], out=starts[1:])
    first = units[np.flatnonzero(starts)][np.cumsum(starts) - 1]
    other = first != units
    found = np.unique(np.stack([first[other], units[other]], axis=1), axis=0)
    return [(int(a), int(b)) for a, b in found]


def row_group_buckets(
    files: tuple[str, ...], spans_per_bucket: int, *, largest: int | None = None
) -> list[Bucket] | None:
    """Buckets made of whole Parquet row groups, when traces do not interleave too much.

    Reads only the trace-id column, once — or not at all when the row groups' statistics show
    which trace-id ranges meet (see :func:`_overlapping`). Row groups that share a trace are
    joined into one
    group (a connected component); groups are packed, in file order, into buckets of about
    ``spans_per_bucket`` spans. Nothing is copied. Returns None when some group of row groups
    sharing traces is larger than ``largest`` spans (default: two buckets) — traces spread
    over the whole set — and a hashed copy (:func:`made_buckets`) is needed instead.
    """
    limit = 2 * spans_per_bucket if largest is None else largest
    units: list[tuple[int, int, int]] = []  # (file, first row, rows) of each row group
    ranges: list[tuple[str, str] | None] = []  # smallest and largest trace id of each
    footers: list[Footer] = []
    for fi, f in enumerate(files):
        try:
            footer = read_footer(f)
        except (OSError, pa.ArrowException) as exc:
            raise InputError(f"{f}: could not be read for bucketing ({exc})") from exc
        footers.append(footer)
        first = 0
        for rows, trace_ids in footer.row_groups:
            units.append((fi, first, rows))
            ranges.append(trace_ids)
            first += rows
    # From the footers alone, row groups whose trace-id ranges meet are kept together.
    pairs = _overlapping(ranges)
    if pairs is not None and _largest(_components(len(units), pairs), units) > limit:
        pairs = None  # ranges meet too widely: look at the ids themselves
    if pairs is None:
        # Some row groups may share a trace: read their trace ids to find which.
        pairs = _shared_units(files, footers)
    components = _components(len(units), pairs)
    if _largest(components, units) > limit:
        return None
    sizes = {c: sum(units[u][2] for u in members) for c, members in components.items()}
    packed: list[list[int]] = [[]]
    filled = 0
    for c in sorted(components):  # roots are the first unit of each group: file order
        if filled and filled + sizes[c] > spans_per_bucket:
            packed.append([])
            filled = 0
        packed[-1].extend(components[c])
        filled += sizes[c]
    return [_row_group_bucket(n, sorted(members), units, files) for n, members in enumerate(packed)]


def _overlapping(ranges: list[tuple[str, str] | None]) -> list[tuple[int, int]] | None:
    """Pairs ``(first, other)`` of row groups whose trace-id ranges meet; None if one is unknown.

    Two row groups can share a trace only if their ranges meet, so joining these pairs puts
    every trace's row groups together (and perhaps a few more): sets written in trace order
    with ordered ids (time-prefixed ids, or synthetic ones) are bucketed from their footers.
    """
    known = [r for r in ranges if r is not None]
    if len(known) < len(ranges):
        return None
    order = sorted(range(len(known)), key=lambda u: known[u])  # by smallest id
    pairs: list[tuple[int, int]] = []
    reach, holder = "", -1
    for u in order:
        low, high = known[u]
        if holder >= 0 and low <= reach:
            pairs.append((min(holder, u), max(holder, u)))
        if holder < 0 or high > reach:
            reach, holder = high, u
    return pairs


def _components(count: int, pairs: list[tuple[int, int]]) -> dict[int, list[int]]:
    """Groups of ``count`` row groups joined by ``pairs``, each keyed by its first row group."""
    parent = list(range(count))

    def root(u: int) -> int:
        while parent[u] != u:
            parent[u] = parent[parent[u]]
            u = parent[u]
        return u

    for a, b in pairs:
        ra, rb = root(a), root(b)
        parent[max(ra, rb)] = min(ra, rb)  # the smaller one stays the root: file order
    components: dict[int, list[int]] = {}
    for u in range(count):
        components.setdefault(root(u), []).append(u)
    return components


def _largest(components: dict[int, list[int]], units: list[tuple[int, int, int]]) -> int:
    """Spans in the largest of the groups of row groups."""
    return max((sum(units[u][2] for u in members) for members in components.values()), default=0)


def _row_group_bucket(
    number: int, members: list[int], units: list[tuple[int, int, int]], files: tuple[str, ...]
) -> Bucket:
    by_file: dict[int, list[tuple[int, int]]] = {}
    for u in members:
        f, offset, rows = units[u]
        ranges = by_file.setdefault(f, [])
        if ranges and sum(ranges[-1]) == offset:  # adjacent row groups: one range
            ranges[-1] = (ranges[-1][0], ranges[-1][1] + rows)
        else:
            ranges.append((offset, rows))
    file_rows: dict[int, int] = {}
    for f, _, rows in units:
        file_rows[f] = file_rows.get(f, 0) + rows
    return Bucket(
        number,
        tuple(files[f] for f in by_file),
        # A whole file is read as a file (no ranges): one scan of many small files, not a
        # sliced scan each (a collector rolling every minute writes thousands).
        row_ranges=tuple(
            () if ranges == [(0, file_rows[f])] else tuple(ranges) for f, ranges in by_file.items()
        ),
    )


def _conform(batch: pa.RecordBatch) -> pa.Table:
    """A batch in the current spans schema: missing columns as nulls, extra columns dropped."""
    columns = [
        batch.column(f.name) if f.name in batch.schema.names else pa.nulls(batch.num_rows, f.type)
        for f in s.SPANS_SCHEMA
    ]
    table = pa.Table.from_arrays(columns, names=s.SPANS_SCHEMA.names)
    if not table.schema.equals(s.SPANS_SCHEMA):
        table = table.cast(s.SPANS_SCHEMA)
    return table


@contextmanager
def made_buckets(
    files: tuple[str, ...], count: int, scratch: str | None = None
) -> Iterator[list[Bucket]]:
    """Write a bucketed copy of ``files`` into a scratch folder; yield its buckets.

    One pass over the input, a row group at a time, split by :func:`bucket_of` exactly as a
    bucketing writer splits. The copy is Arrow IPC (LZ4), not Parquet: it is read once, right
    away, and IPC costs little more than a memory copy to write, where Parquet encoding cost
    more than the analysis itself. The copy is deleted when the block ends.

    Args:
        files: The spans files of the trace set.
        count: How many buckets to make.
        scratch: Where the copy goes (default: the system's temporary folder).

    Raises:
        InputError: A file cannot be read.
    """
    root = Path(tempfile.mkdtemp(prefix="assay-buckets-", dir=scratch))
    # Buffered rows per bucket before a batch is written: about 2M rows in all.
    batch_rows = max(4096, 2 * 1024 * 1024 // count)
    writers: dict[int, pa.ipc.RecordBatchFileWriter] = {}
    made: dict[int, Path] = {}
    pending: dict[int, list[pa.Table]] = {}
    options = pa.ipc.IpcWriteOptions(compression="lz4")

    def write(number: int) -> None:
        if number not in writers:
            path = root / bucket_folder(number, count) / "spans.arrow"
            path.parent.mkdir()
            made[number] = path
            writers[number] = pa.ipc.new_file(path, s.SPANS_SCHEMA, options=options)
        writers[number].write_table(pa.concat_tables(pending.pop(number)))

    try:
        for f in files:
            try:
                for batch in _parquet_file(f).iter_batches(batch_size=64 * 1024):
                    for number, part in split_by_bucket(_conform(batch), count):
                        pending.setdefault(number, []).append(part)
                        if sum(p.num_rows for p in pending[number]) >= batch_rows:
                            write(number)
            except (OSError, pa.ArrowException) as exc:
                raise InputError(f"{f}: could not be read for bucketing ({exc})") from exc
        for number in list(pending):
            write(number)
        for number in list(writers):
            writers.pop(number).close()
        yield [Bucket(n, (str(path),), ipc=True) for n, path in sorted(made.items())]
    finally:
        for writer in writers.values():  # left open only when reading failed
            writer.close()
        shutil.rmtree(root, ignore_errors=True)
