"""Write-ahead log records on disk: encoding, and a reader that survives damage.

Format 2 (see ``_wal``)::

    segment := FILE_MAGIC record*
    record  := MARKER · length u32 · kind u8 · items u32 · payload crc32 u32   (17 bytes)
               · crc32 of those 17 bytes u32 · payload

Little-endian. ``items`` is how many spans (or log records) the payload holds, so that a
damaged record is counted in spans. The header CRC lets the reader trust a length before
using it; the marker lets it find the next record after a damaged header. Format 1 (no file
header) is ``length u32 · kind u8 · crc32(payload, kind) u32 · payload``.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from typing import Final

__all__ = ["FILE_MAGIC", "Damage", "ScanReport", "encode_record", "scan_records"]

FILE_MAGIC: Final = b"ASSAYWL2"
"""The first bytes of a format-2 segment."""
_MARKER: Final = b"\xa5\x5a\x17\xe5"
_FIELDS = struct.Struct("<4sIBII")
_CRC = struct.Struct("<I")
HEADER_SIZE: Final = _FIELDS.size + _CRC.size
_LEGACY = struct.Struct("<IBI")
_KINDS = (1, 2)


def encode_record(kind: int, payload: bytes, items: int) -> bytes:
    """One format-2 record."""
    fields = _FIELDS.pack(_MARKER, len(payload), kind, items, zlib.crc32(payload))
    return fields + _CRC.pack(zlib.crc32(fields)) + payload


@dataclass(frozen=True, slots=True)
class Damage:
    """Bytes of a segment that hold acknowledged records assay cannot read."""

    offset: int
    """Where the damage starts."""
    size: int
    """Bytes skipped."""
    records: int
    """Records lost (at least 1)."""
    items: int | None
    """Spans or log records lost, when the header that counts them is intact."""
    what: str
    """What is wrong, in words."""


@dataclass(slots=True)
class ScanReport:
    """What a segment holds."""

    records: list[tuple[int, bytes]] = field(default_factory=list)
    """``(kind, payload)`` of every readable record, in order."""
    damage: list[Damage] = field(default_factory=list)
    """Unreadable parts, in order."""
    torn: bool = False
    """The segment ends with an incomplete record: a write cut by a crash."""


def _header(data: bytes, offset: int) -> tuple[int, int, int, int] | None:
    """``(length, kind, items, payload crc)`` of an intact header at ``offset``, else None."""
    end = offset + HEADER_SIZE
    if end > len(data) or data[offset : offset + 4] != _MARKER:
        return None
    (crc,) = _CRC.unpack_from(data, offset + _FIELDS.size)
    if zlib.crc32(data[offset : offset + _FIELDS.size]) != crc:
        return None
    _, length, kind, items, payload_crc = _FIELDS.unpack_from(data, offset)
    return length, kind, items, payload_crc


def _next_header(data: bytes, start: int) -> int:
    """The offset of the next intact header at or after ``start``, or ``len(data)``."""
    position = data.find(_MARKER, start)
    while position >= 0:
        if _header(data, position) is not None:
            return position
        position = data.find(_MARKER, position + 1)
    return len(data)


def scan_records(data: bytes, *, newest: bool) -> ScanReport:
    """Read a segment's bytes: its records, its damage, and whether its tail is a cut write.

    Args:
        data: The whole segment.
        newest: Whether a crash may have cut its last write (only the newest segment).
    """
    if not data.startswith(FILE_MAGIC):
        return _scan_legacy(data, newest=newest)
    report = ScanReport()
    offset = len(FILE_MAGIC)
    size = len(data)
    while offset < size:
        header = _header(data, offset)
        if header is None:
            if newest and (size - offset < HEADER_SIZE or not data[offset:].strip(b"\0")):
                report.torn = True  # a header cut short, or zeros a crash left at the end
                return report
            following = _next_header(data, offset + 1)
            report.damage.append(
                Damage(offset, following - offset, 1, None, "damaged record header")
            )
            offset = following
            continue
        length, kind, items, payload_crc = header
        start = offset + HEADER_SIZE
        end = start + length
        if end > size:
            if newest:
                report.torn = True
            else:
                report.damage.append(Damage(offset, size - offset, 1, items, "record cut short"))
            return report
        payload = data[start:end]
        if zlib.crc32(payload) != payload_crc or kind not in _KINDS:
            report.damage.append(Damage(offset, end - offset, 1, items, "payload checksum fails"))
        else:
            report.records.append((kind, payload))
        offset = end
    return report


def _scan_legacy(data: bytes, *, newest: bool) -> ScanReport:
    """Format 1: records without a marker; a damaged one ends what can be read."""
    report = ScanReport()
    offset = 0
    size = len(data)
    while offset < size:
        if size - offset < _LEGACY.size:
            report.torn = newest
            break
        length, kind, crc = _LEGACY.unpack_from(data, offset)
        start = offset + _LEGACY.size
        payload = data[start : start + length]
        if len(payload) < length and newest:
            report.torn = True
            break
        if len(payload) != length or zlib.crc32(payload, kind) != crc:
            what = "format-1 record damaged; the rest of the segment cannot be located"
            report.damage.append(Damage(offset, size - offset, 1, None, what))
            break
        report.records.append((kind, payload))
        offset = start + length
    if offset < size and not report.torn and not report.damage:
        report.damage.append(Damage(offset, size - offset, 1, None, "format-1 record cut short"))
    return report
