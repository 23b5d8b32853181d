"""Row groups whose trace-id ranges overlap nowhere are bucketed from their footers alone."""

import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from assay.store import _buckets
from assay.store._buckets import row_group_buckets

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synthetic import generate  # noqa: E402


def test_footer_ranges_give_the_buckets_reading_the_ids_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generate(tmp_path / "g", trials=300, spans_per_trial=50, tests=3)  # ids in trace order
    table = pq.read_table(next((tmp_path / "g").rglob("*.parquet")))
    (tmp_path / "t").mkdir()
    pq.write_table(table, tmp_path / "t" / "spans.parquet", row_group_size=1_000)
    files = (str(tmp_path / "t" / "spans.parquet"),)
    read: list[int] = []
    original = _buckets.pq.ParquetFile.read_row_group

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        read.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(_buckets.pq.ParquetFile, "read_row_group", counting)
    from_footers = row_group_buckets(files, 4_000)
    assert from_footers is not None and len(from_footers) > 1 and not read
    monkeypatch.setattr(_buckets, "_disjoint", lambda ranges: False)
    from_ids = row_group_buckets(files, 4_000)
    assert read and from_ids == from_footers


def test_overlapping_or_unknown_ranges_are_not_disjoint() -> None:
    assert _buckets._disjoint([("a", "c"), ("d", "f")])
    assert not _buckets._disjoint([("a", "d"), ("c", "f")])
    assert not _buckets._disjoint([("a", "c"), None])
