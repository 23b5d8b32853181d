"""``assay import``: recorded OTLP files → the spans table.

Reads what the OpenTelemetry Collector's file exporter writes: OTLP/JSON, one
``ExportTraceServiceRequest`` per line (``format: json``), or protobuf (``format: proto``,
each message prefixed by its 4-byte big-endian length), and also a single protobuf message per
file. Any of these may be gzip- or zstd-compressed (recognised by their magic bytes); pyarrow
decompresses, so no extra dependency is needed.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from assay.errors import InputError
from assay.ingest._logs import logs_to_table, parse_logs_json
from assay.ingest._otlp import (
    DecodedSpans,
    parse_traces_json,
    parse_traces_protobuf,
    traces_to_table,
)
from assay.store import SpanWriter

__all__ = ["ImportResult", "import_files", "read_otlp_file"]

_GZIP = b"\x1f\x8b"
_ZSTD = b"\x28\xb5\x2f\xfd"
_MAX_FILE_BYTES = 4 * 1024 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import read and wrote."""

    files_read: int
    """Input files decoded."""
    spans: int
    """Spans written."""
    rejected: int
    """Spans left out because their trace or span ID was invalid."""
    written: tuple[Path, ...]
    """The Parquet files created."""


def _read_bytes(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    compression = "gzip" if head.startswith(_GZIP) else "zstd" if head == _ZSTD else None
    try:
        with pa.input_stream(str(path), compression=compression) as stream:
            data: bytes = stream.read(_MAX_FILE_BYTES + 1)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"{path}: cannot decompress {compression} data ({exc})") from exc
    if len(data) > _MAX_FILE_BYTES:
        raise InputError(f"{path}: more than {_MAX_FILE_BYTES} bytes once decompressed")
    return data


def _framed(data: bytes) -> list[bytes] | None:
    """Split 4-byte big-endian length-prefixed messages, or None if ``data`` is not framed."""
    frames: list[bytes] = []
    offset = 0
    while offset < len(data):
        if offset + 4 > len(data):
            return None
        (size,) = struct.unpack_from(">I", data, offset)
        offset += 4
        if offset + size > len(data):
            return None
        frames.append(data[offset : offset + size])
        offset += size
    return frames or None


def _json_document(text: bytes) -> DecodedSpans | None:
    """Decode one OTLP/JSON document: traces, or logs (evaluation results); None for metrics.

    Raises:
        InputError: Not JSON, or not an OTLP traces, logs or metrics request.
    """
    try:
        document = json.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise InputError(f"not valid JSON ({exc})") from exc
    if not isinstance(document, dict):
        raise InputError("not an OTLP/JSON request (not a JSON object)")
    if "resourceSpans" in document or "resource_spans" in document:
        return traces_to_table(parse_traces_json(document))
    if "resourceLogs" in document or "resource_logs" in document:
        logs = logs_to_table(parse_logs_json(document))
        return DecodedSpans(logs.table, 0)
    if "resourceMetrics" in document or "resource_metrics" in document:
        return None  # the file exporter may mix signals; metrics are not spans
    raise InputError("not an OTLP/JSON request (no resourceSpans, resourceLogs or resourceMetrics)")


def read_otlp_file(path: str | os.PathLike[str]) -> Iterator[DecodedSpans]:
    """Yield decoded spans-table batches from one recorded OTLP file (JSON lines or protobuf).

    JSON lines may mix signals, as the file exporter writes them: trace requests become spans,
    log requests their GenAI evaluation results (as in the collector), metric requests are
    skipped.

    Raises:
        InputError: The file cannot be read or holds something else; the message names the
            file (and the line, for JSON lines).
    """
    p = Path(path)
    data = _read_bytes(p)
    if data.lstrip()[:1] in (b"{", b""):
        lines = data.splitlines()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                decoded = _json_document(line)
            except InputError as exc:
                if number == 1 and len(lines) > 1:
                    # Perhaps one pretty-printed document rather than JSON lines.
                    try:
                        decoded = _json_document(data)
                    except InputError:
                        raise InputError(f"{p}:{number}: {exc}") from exc
                    if decoded is not None:
                        yield decoded
                    return
                raise InputError(f"{p}:{number}: {exc}") from exc
            if decoded is not None:
                yield decoded
        return
    frames = _framed(data)
    if frames is not None:
        try:
            requests = [parse_traces_protobuf(f) for f in frames]
        except InputError:
            requests = []
        if requests:
            for request in requests:
                yield traces_to_table(request)
            return
    try:
        request = parse_traces_protobuf(data)
    except InputError as exc:
        raise InputError(f"{p}: neither OTLP JSON lines nor OTLP protobuf ({exc})") from exc
    if not request.resource_spans:
        raise InputError(f"{p}: neither OTLP JSON lines nor OTLP protobuf (no resource spans)")
    yield traces_to_table(request)


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
    buckets: int | None = None,
) -> ImportResult:
    """Import recorded OTLP files into a spans-table folder.

    Every input is decoded before anything is written, so bad input leaves ``out`` untouched.

    Args:
        paths: Files or folders (searched recursively, hidden files skipped).
        out: The output folder.
        partition_by: Hive partition keys, as for :class:`assay.store.SpanWriter`.
        buckets: Also lay the output out by trace bucket, as for the ``SpanWriter``.

    Raises:
        InputError: An input is missing, unreadable or not OTLP; the message names it.
    """
    files = _expand(paths)
    if not files:
        raise InputError("no input files given")
    decoded: list[DecodedSpans] = []
    for f in files:
        decoded.extend(read_otlp_file(f))
    spans = sum(d.table.num_rows for d in decoded)
    writer = SpanWriter(out, partition_by=partition_by, buckets=buckets)
    for d in decoded:
        writer.write(d.table)
    written = writer.flush()
    return ImportResult(len(files), spans, sum(d.rejected for d in decoded), tuple(written))
