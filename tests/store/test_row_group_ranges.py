"""Row groups whose trace-id ranges overlap nowhere are bucketed from their footers alone."""

import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from assay.store import _buckets
from assay.store._buckets import row_group_buckets

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synthetic import generate  # noqa: E402


@pytest.mark.parametrize("rows", [1_000, 1_234])  # row groups of whole traces, or cut mid-trace
def test_footer_ranges_give_the_buckets_reading_the_ids_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int
) -> None:
    generate(tmp_path / "g", trials=300, spans_per_trial=50, tests=3)  # ids in trace order
    table = pq.read_table(next((tmp_path / "g").rglob("*.parquet")))
    (tmp_path / "t").mkdir()
    # Written 2,000 spans (40 whole traces) at a time, as a writer flushes its batches.
    with pq.ParquetWriter(tmp_path / "t" / "spans.parquet", table.schema) as writer:
        for start in range(0, table.num_rows, 2_000):
            writer.write_table(table.slice(start, 2_000), row_group_size=rows)
    files = (str(tmp_path / "t" / "spans.parquet"),)
    read: list[int] = []
    original = _buckets._unit_ids

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        read.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(_buckets, "_unit_ids", counting)
    from_footers = row_group_buckets(files, 4_000)
    assert from_footers is not None and len(from_footers) > 1 and not read
    monkeypatch.setattr(_buckets, "_overlapping", lambda ranges: None)
    from_ids = row_group_buckets(files, 4_000)
    assert read and from_ids == from_footers


def test_ranges_that_meet_are_paired_and_unknown_ones_give_up() -> None:
    assert _buckets._overlapping([("a", "c"), ("d", "f")]) == []
    assert _buckets._overlapping([("c", "f"), ("a", "d")]) == [(0, 1)]
    assert _buckets._overlapping([("a", "c"), ("c", "e"), ("f", "g")]) == [(0, 1)]
    assert _buckets._overlapping([("a", "z"), ("b", "c"), ("x", "y")]) == [(0, 1), (0, 2)]
    assert _buckets._overlapping([("a", "c"), None]) is None
