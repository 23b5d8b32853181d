"""``assay import``: recorded trace files → the spans table.

Reads other tools' exports too, told by their content (``_formats``: Jaeger, Tempo, Zipkin).
Reads what the OpenTelemetry Collector's file exporter writes: OTLP/JSON, one
``ExportTraceServiceRequest`` per line (``format: json``), or protobuf (``format: proto``,
each message prefixed by its 4-byte big-endian length), and also a single protobuf message per
file. Any of these may be gzip- or zstd-compressed (recognised by their magic bytes); pyarrow
decompresses, so no extra dependency is needed.

Everything is streamed and bounded (:class:`ImportLimits`): a 20 KB gzip bomb or a newline-free
stream ends in one clear error at the limit, never in the OOM killer.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import shutil
import struct
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from assay.errors import ConfigError, InputError
from assay.ingest._build import lone_surrogate, may_hold_surrogate
from assay.ingest._formats import (
    LANGFUSE,
    OTLP,
    PHOENIX,
    SourceFormat,
    decode_document,
    whole,
)
from assay.ingest._interrupt import Interruptible
from assay.ingest._langfuse import LangfuseJoin, langfuse_kind
from assay.ingest._otlp import (
    DecodedSpans,
    parse_traces_protobuf,
    traces_to_table,
)
from assay.ingest._phoenix import PARQUET_MAGIC, phoenix_requests
from assay.ingest._times import far_times
from assay.store import SpanWriter, fsync_dir

__all__ = ["ImportLimits", "ImportResult", "import_files", "read_otlp_file", "read_trace_file"]

_GZIP = b"\x1f\x8b"
_ZSTD = b"\x28\xb5\x2f\xfd"
_CHUNK = 1 << 20
_MB = 1024 * 1024
#: Default bound on one file's decompressed size (a gzip bomb stops here, not at the OOM).
MAX_DECOMPRESSED_BYTES = 1024 * _MB
#: Default bound on one JSON line or protobuf message: one export request, as the collector's
#: ``--max-decompressed-mb`` (a newline-free stream stops here).
MAX_MESSAGE_BYTES = 64 * _MB
#: Small decoded batches are gathered, up to this many tables or rows, before the writer.
GATHER_TABLES = 64
GATHER_ROWS = 16_384
#: Most bytes of spans an import holds before writing them (less when --max-message-mb is less).
ROW_GROUP_BYTES = 16 * _MB
#: Rows of a Langfuse CSV decoded at once (and together at most ``--max-message-mb``).
CSV_BATCH_ROWS = 1000


@dataclass(frozen=True, slots=True)
class ImportLimits:
    """What one import may cost: each bound is a flag of ``assay import``."""

    max_decompressed_bytes: int = MAX_DECOMPRESSED_BYTES
    """Most bytes one input file may inflate to."""
    max_message_bytes: int = MAX_MESSAGE_BYTES
    """Most bytes in one JSON line or protobuf message (held in memory at once)."""

    def __post_init__(self) -> None:
        if self.max_decompressed_bytes <= 0 or self.max_message_bytes <= 0:
            raise ConfigError("import limits must be positive")


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import read and wrote."""

    files_read: int
    """Input files decoded."""
    spans: int
    """Spans written."""
    rejected: int
    """Always 0: a span the table cannot hold now stops the import, named (kept so callers
    reading it keep working)."""
    written: tuple[Path, ...]
    """The Parquet files created."""
    formats: tuple[tuple[SourceFormat, int], ...] = ()
    """The formats read (told by content), each with its spans, in the order first met."""
    notes: tuple[str, ...] = ()
    """What was read but not imported, and why (printed by ``assay import``)."""


class _Stream:
    """A file's decompressed bytes, read in chunks, never more than the limit in total."""

    def __init__(self, path: Path, limits: ImportLimits) -> None:
        self.path = path
        self._limit = limits.max_decompressed_bytes
        try:
            with path.open("rb") as handle:
                head = handle.read(4)
        except OSError as exc:
            raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from exc
        self.compression = "gzip" if head.startswith(_GZIP) else "zstd" if head == _ZSTD else None
        self._stream = pa.input_stream(str(path), compression=self.compression)
        self._read = 0

    def __enter__(self) -> _Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stream.close()

    def read(self, size: int = _CHUNK) -> bytes:
        """Up to ``size`` more bytes (``b""`` at the end)."""
        try:
            data: bytes = self._stream.read(size)
        except (OSError, pa.ArrowException) as exc:
            what = f"{self.compression} data" if self.compression else "the file"
            raise InputError(f"{self.path}: cannot decompress {what} ({exc})") from exc
        self._read += len(data)
        if self._read > self._limit:
            raise InputError(
                f"{self.path}: more than {self._limit // _MB} MB once decompressed (the limit; "
                "raise it with --max-decompressed-mb)"
            )
        return data

    def read_exactly(self, size: int) -> bytes:
        """``size`` bytes, or fewer only at the end of the file."""
        parts: list[bytes] = []
        wanted = size
        while wanted:
            chunk = self.read(min(wanted, _CHUNK))
            if not chunk:
                break
            parts.append(chunk)
            wanted -= len(chunk)
        return b"".join(parts)


_NON_BLANK = re.compile(rb"\S")


def _lines(stream: _Stream, first: bytes, limit: int) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` of each non-blank line, from ``first`` and then the stream.

    Lines hold at most ``limit`` bytes. Blank runs are skipped by one regex search and counted
    by ``bytes.count``, so a file of newlines costs time per byte in C, not per line in Python.
    """
    buffer = bytearray(first)
    start = 0
    number = 0  # newlines before ``start``
    while True:
        found = _NON_BLANK.search(buffer, start)
        end = found.start() if found is not None else len(buffer)
        number += buffer.count(b"\n", start, end)
        start = end
        if found is not None:
            newline = buffer.find(b"\n", start)
            if newline >= 0:
                yield number + 1, bytes(buffer[start:newline])
                number += 1
                start = newline + 1
                continue
        del buffer[:start]
        start = 0
        if len(buffer) > limit:
            raise _TooLong(number + 1)
        chunk = stream.read()
        if not chunk:
            if buffer:
                yield number + 1, bytes(buffer)
            return
        buffer += chunk


class _TooLong(Exception):
    """A line or message over the limit (turned into an InputError naming the line)."""


def _framed(data: bytes) -> list[bytes] | None:
    """Split 4-byte big-endian length-prefixed messages, or None if ``data`` is not framed."""
    frames: list[bytes] = []
    offset = 0
    while offset < len(data):
        if offset + 4 > len(data):
            return None
        (size,) = struct.unpack_from(">I", data, offset)
        offset += 4
        # An empty message carries nothing: zeros are not millions of frames (a NUL-filled
        # file or a gzip of zeros once took gigabytes and minutes to "import 0 spans").
        if size == 0 or offset + size > len(data):
            return None
        frames.append(data[offset : offset + size])
        offset += size
    return frames or None


def _json_document(text: bytes, join: LangfuseJoin) -> tuple[SourceFormat, DecodedSpans] | None:
    """Decode one JSON document by its content (``_formats``); None for OTLP metrics.

    Raises:
        InputError: Not JSON, or not a trace format assay reads.
    """
    try:
        document = json.loads(text)
    except RecursionError:
        raise InputError(
            "not valid JSON (nested deeper than the JSON decoder reads, about 1,000 levels)"
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"not valid JSON ({exc})") from exc
    if may_hold_surrogate(text):
        where = lone_surrogate(document)
        if where is not None:
            raise InputError(f"{where} holds a lone UTF-16 surrogate (\\ud800…), which is not text")
    return decode_document(document, join)


def read_otlp_file(
    path: str | os.PathLike[str], limits: ImportLimits | None = None
) -> Iterator[DecodedSpans]:
    """Yield decoded spans-table batches from one recorded trace file.

    The file is streamed: one JSON line or one length-prefixed protobuf message is in memory at
    a time, so memory stays near ``limits.max_message_bytes`` however large the file. JSON
    lines may mix signals, as the file exporter writes them: trace requests become spans, log
    requests their GenAI evaluation results (as in the collector), metric requests are skipped.
    A JSON line (or a whole file holding one JSON document) may also be another tool's
    export: Jaeger JSON, a Tempo query result or Zipkin v2 JSON (:func:`read_trace_file`).

    Raises:
        InputError: The file cannot be read, holds something else, or exceeds a limit; the
            message names the file (and the line, for JSON lines).
    """
    for _, decoded in read_trace_file(path, limits):
        yield decoded


def read_trace_file(
    path: str | os.PathLike[str],
    limits: ImportLimits | None = None,
    join: LangfuseJoin | None = None,
) -> Iterator[tuple[SourceFormat, DecodedSpans]]:
    """:func:`read_otlp_file`, with the format each batch was read from (by its content).

    Args:
        path: The file.
        limits: Its bounds.
        join: What Langfuse rows of one file need from another's (one for a whole import);
            without it the file is read on its own and its trace-level scores are joined to its
            own observations at its end.

    Raises:
        InputError: As :func:`read_otlp_file`.
    """
    limits = limits or ImportLimits()
    if join is None:
        own = LangfuseJoin(limits.max_message_bytes)
        yield from read_trace_file(path, limits, own)
        if own.pending:
            yield LANGFUSE, whole(traces_to_table(own.finish()))
        return
    p = Path(path)
    limit = limits.max_message_bytes
    if _magic(p) == PARQUET_MAGIC:  # Phoenix's trace datasets are Parquet, read by row group
        for request in phoenix_requests(p, limit):
            yield PHOENIX, whole(traces_to_table(request))
        return
    with _Stream(p, limits) as stream:
        head = stream.read_exactly(limit + 1)
        small = len(head) <= limit  # the whole file is in ``head``
        head = _utf8(p, head)
        if head.lstrip()[:1] in (b"{", b"[", b""):
            yield from _json_lines(p, stream, head, small, limit, join)
        elif _is_langfuse_csv(head):
            yield from _langfuse_csv(p, stream, head, limit, join)
        elif small:
            yield from ((OTLP, d) for d in _protobuf_file(p, head))
        else:
            yield from ((OTLP, d) for d in _protobuf_frames(p, stream, head, limit))


_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _utf8(path: Path, head: bytes) -> bytes:
    """``head`` without a UTF-8 byte-order mark (Windows tools write one).

    Raises:
        InputError: UTF-16 text (told by a NUL beside each of its first ASCII characters,
            after its byte-order mark if any): named, where it was once called corrupt
            protobuf.
    """
    if head.startswith(_UTF8_BOM):
        return head[len(_UTF8_BOM) :]
    start = head[2:66] if head.startswith(_UTF16_BOMS) else head[:64]
    utf16 = (
        len(start) >= 4
        and (start[1::2].count(0) == len(start[1::2]) or start[0::2].count(0) == len(start[0::2]))
        and any(32 < b < 127 for b in start)
    )
    if utf16:
        raise InputError(
            f"{path}: UTF-16 text; assay reads UTF-8 (convert it first, e.g. "
            "iconv -f UTF-16 -t UTF-8)"
        )
    return head


def _magic(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(4)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from exc


def _header(head: bytes) -> list[str]:
    """The fields of a CSV header line at the start of ``head`` (empty when there is none)."""
    line = head[: 1 << 16].split(b"\n", 1)[0].decode("utf-8", "replace").lstrip("\ufeff").strip()
    try:
        return next(csv.reader([line]), [])
    except csv.Error:  # binary data or no line at all: not a CSV header
        return []


def _is_langfuse_csv(head: bytes) -> bool:
    """A CSV export of Langfuse: its header row names a kind of Langfuse row."""
    return langfuse_kind(dict.fromkeys(_header(head), "")) is not None


class _Reader(io.RawIOBase):
    """The stream's bytes from ``head`` on, as a file object (for the csv module)."""

    def __init__(self, stream: _Stream, head: bytes) -> None:
        self._stream = stream
        self._buffer = memoryview(head)

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        if not self._buffer:
            self._buffer = memoryview(self._stream.read())
        size = min(len(target), len(self._buffer))
        target[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]  # a view: the rest is not copied for each read
        return size


def _langfuse_csv(
    p: Path, stream: _Stream, head: bytes, limit: int, join: LangfuseJoin
) -> Iterator[tuple[SourceFormat, DecodedSpans]]:
    """A Langfuse CSV export, a batch of rows at a time.

    A field holds at most ``limit`` characters, and so does a batch of rows (at most
    :data:`CSV_BATCH_ROWS` of them): 1,000 rows of fields each under the limit once took 3.7 GB.
    """
    text = io.TextIOWrapper(io.BufferedReader(_Reader(stream, head)), "utf-8-sig", newline="")
    old = csv.field_size_limit()
    csv.field_size_limit(limit)
    try:
        reader = csv.DictReader(text)
        batch: list[dict[str, Any]] = []
        size = 0
        first = 2  # the header is line 1
        end = 1  # the line the last row read ended on
        try:
            for row in reader:
                row_size = sum(len(v) for v in row.values() if isinstance(v, str))
                if batch and size + row_size > limit:
                    yield _csv_batch(p, batch, first, join)
                    first = end + 1
                    batch, size = [], 0
                end = reader.line_num
                batch.append({k: (v if v != "" else None) for k, v in row.items()})
                size += row_size
                if len(batch) == CSV_BATCH_ROWS:
                    yield _csv_batch(p, batch, first, join)
                    first = reader.line_num + 1
                    batch, size = [], 0
        except csv.Error as exc:
            raise InputError(f"{p}:{reader.line_num}: not valid CSV ({exc})") from exc
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{p}: after line {reader.line_num}: not UTF-8 text ({exc.reason})"
            ) from exc
        if batch:
            yield _csv_batch(p, batch, first, join)
    finally:
        csv.field_size_limit(old)


def _csv_batch(
    p: Path, rows: list[dict[str, Any]], first: int, join: LangfuseJoin
) -> tuple[SourceFormat, DecodedSpans]:
    decoded = decode_document(rows, join, f"{p}: rows from line {first}: ")
    assert decoded is not None  # Langfuse rows always decode to spans
    return decoded


def _json_lines(
    p: Path, stream: _Stream, head: bytes, small: bool, limit: int, join: LangfuseJoin
) -> Iterator[tuple[SourceFormat, DecodedSpans]]:
    seen = 0
    try:
        for number, line in _lines(stream, head, limit):
            seen += 1
            try:
                decoded = _json_document(line, join)
            except InputError as exc:
                if seen == 1 and b"\n" in head.strip() and (small or "valid JSON" in str(exc)):
                    # Perhaps one pretty-printed document rather than JSON lines (as Jaeger,
                    # Tempo and Zipkin exports are): read whole, within the message limit.
                    if not small and str(exc).startswith("not valid JSON"):
                        raise InputError(
                            f"{p}: not JSON lines, and one JSON document larger than "
                            f"{limit // _MB} MB (the limit; raise it with --max-message-mb)"
                        ) from exc
                    try:
                        decoded = _json_document(head, join)
                    except InputError as whole_exc:
                        if str(exc).startswith("not valid JSON") and not str(whole_exc).startswith(
                            "not valid JSON"
                        ):
                            raise InputError(f"{p}: {whole_exc}") from whole_exc  # a document
                        raise InputError(f"{p}:{number}: {exc}") from exc
                    if decoded is not None:
                        yield decoded
                    return
                raise InputError(f"{p}:{number}: {exc}") from exc
            if decoded is not None:
                yield decoded
    except _TooLong as exc:
        raise InputError(
            f"{p}:{exc.args[0]}: line longer than {limit // _MB} MB (the limit; raise it with "
            "--max-message-mb)"
        ) from None
    if seen == 0:
        raise InputError(f"{p}: holds no OTLP data (the file is empty or blank)")


def _protobuf_file(p: Path, data: bytes) -> Iterator[DecodedSpans]:
    """A whole file that fits the message limit: length-prefixed messages, or one message."""
    frames = _framed(data)
    if frames is not None:
        try:
            requests = [parse_traces_protobuf(f) for f in frames]
        except InputError:
            requests = []
        if requests:
            for number, request in enumerate(requests, start=1):
                try:
                    yield whole(traces_to_table(request))
                except InputError as exc:
                    raise InputError(f"{p}: message {number}: {exc}") from exc
            return
    try:
        request = parse_traces_protobuf(data)
    except InputError as exc:
        raise InputError(f"{p}: neither OTLP JSON lines nor OTLP protobuf ({exc})") from exc
    if not request.resource_spans:
        raise InputError(f"{p}: neither OTLP JSON lines nor OTLP protobuf (no resource spans)")
    try:
        yield whole(traces_to_table(request))
    except InputError as exc:
        raise InputError(f"{p}: {exc}") from exc


def _protobuf_frames(p: Path, stream: _Stream, head: bytes, limit: int) -> Iterator[DecodedSpans]:
    """A file larger than one message: it must be length-prefixed messages; stream them."""
    buffer = head
    offset = 0
    number = 0
    while True:
        if len(buffer) - offset < 4:
            buffer = buffer[offset:] + stream.read_exactly(4 - (len(buffer) - offset))
            offset = 0
            if not buffer:
                return
            if len(buffer) < 4:
                raise InputError(f"{p}: truncated protobuf message length at the end")
        (size,) = struct.unpack_from(">I", buffer, offset)
        number += 1
        if size == 0:
            raise InputError(
                f"{p}: message {number} is empty: the file is neither OTLP JSON lines nor "
                "length-prefixed OTLP protobuf"
            )
        if size > limit:
            raise InputError(
                f"{p}: message {number} of {size} bytes is over the {limit // _MB} MB limit, or "
                "the file is neither OTLP JSON lines nor length-prefixed OTLP protobuf"
            )
        offset += 4
        body = buffer[offset : offset + size]
        offset += len(body)
        if len(body) < size:
            body += stream.read_exactly(size - len(body))
            if len(body) < size:
                raise InputError(f"{p}: message {number} is truncated")
        try:
            yield whole(traces_to_table(parse_traces_protobuf(body)))
        except InputError as exc:
            raise InputError(f"{p}: message {number}: {exc}") from exc


def _expand(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    files: list[Path] = []
    for name in paths:
        p = Path(name)
        if p.is_dir():
            found = sorted(
                f
                for f in p.rglob("*")
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
            if not found:
                raise InputError(f"{p}: folder holds no files")
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            raise InputError(f"{p}: no such file or folder")
    return files


def import_files(
    paths: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    partition_by: Sequence[str] = ("date", "service"),
    limits: ImportLimits | None = None,
    buckets: int | None = None,
) -> ImportResult:
    """Import recorded OTLP files into a spans-table folder, all or nothing.

    Inputs are streamed into a hidden staging folder inside ``out`` (readers skip it) and only
    moved into place once every input was read and written; bad input, a limit or a full disk
    leaves ``out`` as it was. Importing a file twice stores its spans twice, and readers count
    them once (see :func:`assay.store.open_trace_set`).

    Args:
        paths: Files or folders (searched recursively, hidden files skipped).
        out: The output folder.
        partition_by: Hive partition keys, as for :class:`assay.store.SpanWriter`.
        limits: Decompressed-size and message-size bounds (defaults are safe).
        buckets: Also lay the output out by trace bucket, as for the ``SpanWriter``.

    Raises:
        InputError: An input is missing, unreadable, not OTLP or over a limit, or ``out``
            cannot be written; the message names it.
    """
    files = _expand(paths)
    if not files:
        raise InputError("no input files given")
    root = Path(out)
    existed = root.exists()
    staging = root / f"_import-{uuid.uuid4().hex[:12]}"
    limits = limits or ImportLimits()
    interruptible = Interruptible()
    try:
        with interruptible:
            return _import(files, root, staging, limits, partition_by, buckets, interruptible)
    except BaseException:
        # Nothing was imported: an output folder this import made is removed again (rmdir
        # removes it only when empty), so a failed import leaves the disk as it was.
        if not existed:
            with contextlib.suppress(OSError):
                root.rmdir()
        raise


def _import(
    files: list[Path],
    root: Path,
    staging: Path,
    limits: ImportLimits,
    partition_by: Sequence[str],
    buckets: int | None,
    interruptible: Interruptible,
) -> ImportResult:
    spans = rejected = 0
    formats: dict[SourceFormat, int] = {}
    join = LangfuseJoin(limits.max_message_bytes)
    # Langfuse's legacy trace rows first: their fields go onto the observations read after.
    files.sort(key=lambda f: not _holds_langfuse_traces(f, limits))
    try:
        writer = SpanWriter(
            staging,
            partition_by=partition_by,
            buckets=buckets,
            row_group_bytes=min(limits.max_message_bytes, ROW_GROUP_BYTES),
        )
        gathered = _Gathered(writer, min(limits.max_message_bytes, ROW_GROUP_BYTES))
        for source, decoded in _all_batches(files, limits, join):
            gathered.write(decoded.table)
            spans += decoded.table.num_rows
            rejected += decoded.rejected
            formats[source] = formats.get(source, 0) + decoded.table.num_rows
        gathered.flush()
        staged = writer.flush()
        far = far_times(staged)  # said, never dropped: the spans are what the files hold
        with interruptible.held(then_raise=False):  # a few renames: never left half done
            written = _publish(staging, root, staged)
    except OSError as exc:
        raise InputError(
            f"{root}: cannot write ({exc.strerror or exc}); nothing was imported"
        ) from exc
    finally:
        with interruptible.held():
            shutil.rmtree(staging, ignore_errors=True)
    notes: tuple[str, ...] = ()
    if join.unmatched:
        notes = (
            f"{join.unmatched} Langfuse score(s) judge a session, or a trace with no "
            "observation in the input: not imported",
        )
    if far is not None:
        notes = (*notes, far)
    return ImportResult(len(files), spans, rejected, tuple(written), tuple(formats.items()), notes)


class _Gathered:
    """Small batches gathered into one table before they reach the writer.

    A JSON line of one span decodes to a table of one row, and each such table costs about
    90 KB of Arrow allocations (some 45 columns, each with its buffers): 8,000 of them, held
    by the writer until its row group filled, took 793 MB. Gathered here by the
    :data:`GATHER_TABLES` and copied into one contiguous table, they cost their bytes.
    """

    def __init__(self, writer: SpanWriter, max_bytes: int) -> None:
        self._writer = writer
        self._max_bytes = max_bytes
        self._tables: list[pa.Table] = []
        self._rows = 0
        self._bytes = 0

    def write(self, table: pa.Table) -> None:
        """Hold ``table`` with the others; write them together once there are enough."""
        self._tables.append(table)
        self._rows += table.num_rows
        self._bytes += table.nbytes
        if (
            len(self._tables) >= GATHER_TABLES
            or self._rows >= GATHER_ROWS
            or self._bytes >= self._max_bytes
        ):
            self.flush()

    def flush(self) -> None:
        """Write what is held, as one table."""
        if len(self._tables) == 1:
            self._writer.write(self._tables[0])
        elif self._tables:
            self._writer.write(pa.concat_tables(self._tables).combine_chunks())
        self._tables = []
        self._rows = 0
        self._bytes = 0


def _all_batches(
    files: list[Path], limits: ImportLimits, join: LangfuseJoin
) -> Iterator[tuple[SourceFormat, DecodedSpans]]:
    for f in files:
        yield from read_trace_file(f, limits, join)
    if join.pending:
        yield LANGFUSE, whole(traces_to_table(join.finish()))


def _holds_langfuse_traces(path: Path, limits: ImportLimits) -> bool:
    """Whether a file's first row is a Langfuse trace row (a look at its first 64 KB)."""
    if _magic(path) == PARQUET_MAGIC:
        return False
    with _Stream(path, limits) as stream:
        head = stream.read_exactly(1 << 16)
    text = head.removeprefix(_UTF8_BOM).lstrip()
    if text[:1] == b"[":
        text = text[1:].lstrip()
    if text[:1] == b"{":
        try:
            first, _ = json.JSONDecoder().raw_decode(text.decode("utf-8", "replace"))
        except (ValueError, RecursionError):  # not JSON, or nested deeper than it reads
            return False
        return langfuse_kind(first) == "trace"
    return langfuse_kind(dict.fromkeys(_header(head), "")) == "trace"


def _publish(staging: Path, root: Path, staged: list[Path]) -> list[Path]:
    """Move staged files into ``root``; on a failure move back those already moved."""
    targets = [root / p.relative_to(staging) for p in staged]
    for folder in {t.parent for t in targets}:
        folder.mkdir(parents=True, exist_ok=True)  # the step that may need space: first
    moved: list[tuple[Path, Path]] = []
    try:
        for source, target in zip(staged, targets, strict=True):
            os.replace(source, target)
            moved.append((source, target))
        for folder in {t.parent for t in targets}:
            fsync_dir(folder)
    except OSError:
        for source, target in reversed(moved):
            os.replace(target, source)
        raise
    return targets
