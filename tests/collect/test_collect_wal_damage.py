"""A damaged write-ahead log loses only the damaged record — counted, named and kept.

Before format 2, one flipped byte 20% into a segment of 2,000 acknowledged spans dropped 1,600
of them (logged as "never acknowledged") and the segment was deleted; a cut header lost 40
with no warning.
"""

from __future__ import annotations

import logging
import struct
import threading
import zlib
from pathlib import Path

import pytest
from otlp_helpers import make_request

from assay.collect import CollectorConfig, Counters, WriteAheadLog, recover
from assay.collect._records import FILE_MAGIC, HEADER_SIZE
from assay.collect._wal import KIND_TRACES, list_segments
from assay.store import read_spans

RECORDS, SPANS = 100, 20


def _log(config: CollectorConfig, segments: int = 1) -> tuple[list[list[str]], list[int]]:
    """Write RECORDS records of SPANS spans, over ``segments`` segments; ids and sizes."""
    sealed = threading.Semaphore(0)
    wal = WriteAheadLog(
        config.wal_path,
        on_durable=lambda *_: None,
        on_sealed=lambda _: sealed.release(),
        fsync=False,
    )
    ids: list[list[str]] = []
    sizes: list[int] = []
    per_segment = RECORDS // segments
    for i in range(RECORDS):
        request, span_ids = make_request(SPANS)
        payload = request.SerializeToString()
        wal.append(KIND_TRACES, payload, SPANS)
        ids.append(span_ids)
        sizes.append(HEADER_SIZE + len(payload))
        if (i + 1) % per_segment == 0 and i + 1 < RECORDS:
            wal.request_rotation()
            assert sealed.acquire(timeout=10)
    wal.close()
    return ids, sizes


def _offset(sizes: list[int], record: int) -> int:
    return len(FILE_MAGIC) + sum(sizes[:record])


def _recover(config: CollectorConfig) -> tuple[int, Counters, list[str]]:
    counters = Counters()
    recovered = recover(config, counters)
    return recovered, counters, read_spans(config.out)["span_id"].to_list()


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x40
    path.write_bytes(bytes(data))


@pytest.fixture
def config(tmp_path: Path) -> CollectorConfig:
    return CollectorConfig(out=tmp_path / "traces")


def test_a_flipped_payload_byte_loses_only_its_record(
    config: CollectorConfig, caplog: pytest.LogCaptureFixture
) -> None:
    ids, sizes = _log(config)
    ((_, segment),) = list_segments(config.wal_path)
    damaged = RECORDS // 5  # 20% into the segment
    _flip(segment, _offset(sizes, damaged) + HEADER_SIZE + 10)
    with caplog.at_level(logging.INFO, logger="assay.collect"):
        recovered, counters, stored = _recover(config)
    expected = [s for i, record in enumerate(ids) if i != damaged for s in record]
    assert recovered == len(stored) == RECORDS * SPANS - SPANS
    assert sorted(stored) == sorted(expected)
    assert counters.snapshot()["wal_damaged_records"] == 1
    assert counters.snapshot()["wal_lost_spans"] == SPANS
    (message,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert "1 damaged record(s) skipped, 20 acknowledged span(s) lost" in message
    assert "never acknowledged" not in caplog.text
    kept = config.wal_path / "quarantine" / segment.name
    assert kept.exists() and kept.stat().st_size == _offset(sizes, RECORDS)
    assert not list_segments(config.wal_path)  # the converted segment itself is gone


@pytest.mark.parametrize("how", ["flip", "cut"])
def test_a_damaged_or_cut_header_loses_only_its_record(
    config: CollectorConfig, caplog: pytest.LogCaptureFixture, how: str
) -> None:
    ids, sizes = _log(config, segments=2)
    (_, first), _ = list_segments(config.wal_path)
    damaged = 40
    at = _offset(sizes, damaged) + 6
    if how == "flip":
        _flip(first, at)
    else:  # three bytes of the header gone: the records after it move
        data = first.read_bytes()
        first.write_bytes(data[:at] + data[at + 3 :])
    with caplog.at_level(logging.INFO, logger="assay.collect"):
        recovered, counters, stored = _recover(config)
    expected = [s for i, record in enumerate(ids) if i != damaged for s in record]
    assert sorted(stored) == sorted(expected)
    assert counters.snapshot()["wal_damaged_records"] == 1
    assert "that cannot be counted (a damaged header)" in caplog.text
    assert (config.wal_path / "quarantine" / first.name).exists()


def test_a_sealed_segment_cut_short_is_damage_not_a_torn_write(
    config: CollectorConfig, caplog: pytest.LogCaptureFixture
) -> None:
    ids, sizes = _log(config, segments=2)
    (_, first), _ = list_segments(config.wal_path)
    cut = RECORDS // 2 - 1  # the last record of the first segment, its payload cut
    data = first.read_bytes()
    first.write_bytes(data[: _offset(sizes, cut) + HEADER_SIZE + 5])
    with caplog.at_level(logging.INFO, logger="assay.collect"):
        _, counters, stored = _recover(config)
    assert len(stored) == RECORDS * SPANS - SPANS
    assert counters.snapshot()["wal_lost_spans"] == SPANS
    assert "record cut short" in caplog.text


def _legacy_record(payload: bytes) -> bytes:
    return (
        struct.pack("<IBI", len(payload), KIND_TRACES, zlib.crc32(payload, KIND_TRACES)) + payload
    )


def test_a_segment_of_the_old_format_is_read_and_its_damage_kept(
    config: CollectorConfig, caplog: pytest.LogCaptureFixture
) -> None:
    """Left by an older version that stopped before converting it."""
    config.wal_path.mkdir(parents=True)
    segments = [
        [_legacy_record(make_request(SPANS)[0].SerializeToString()) for _ in range(10)]
        for _ in range(3)
    ]
    (config.wal_path / "wal-000000000001.log").write_bytes(b"".join(segments[0]))
    damaged = bytearray(b"".join(segments[1]))
    damaged[len(segments[1][0]) * 5 + 20] ^= 1  # in the sixth record
    (config.wal_path / "wal-000000000002.log").write_bytes(bytes(damaged))
    torn = segments[2][0] + segments[2][1][:7]  # a write cut by a crash, in the newest
    (config.wal_path / "wal-000000000003.log").write_bytes(torn)
    with caplog.at_level(logging.INFO, logger="assay.collect"):
        _, counters, stored = _recover(config)
    # all of segment 1, the first five of segment 2, the first record of segment 3
    assert len(stored) == (10 + 5 + 1) * SPANS
    assert counters.snapshot()["wal_damaged_records"] == 1
    assert (config.wal_path / "quarantine" / "wal-000000000002.log").exists()
    assert not (config.wal_path / "quarantine" / "wal-000000000003.log").exists()
