from __future__ import annotations

import random
import zlib
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.errors import ConfigError
from assay.store import (
    SpanRows,
    SpanWriter,
    encode_attributes,
    read_spans,
    scan_bucket,
    write_spans,
)
from assay.store._buckets import (
    BUCKET_COUNT_KEY,
    Bucket,
    bucket_folder,
    bucket_of,
    existing_buckets,
    made_buckets,
    row_group_buckets,
    total_spans,
)

DAY = 86_400 * 10**9


def _expected_bucket(trace_id: str, count: int) -> int:
    """The documented rule, written out independently of the vectorised code."""
    try:
        tail = int(trace_id[-8:], 16)
    except ValueError:
        tail = zlib.crc32(trace_id.encode())
    return ((tail * 0x9E3779B1) % 2**32) * count // 2**32


def _spans(traces: int, per_trace: int = 3, *, start: int = 0) -> SpanRows:
    rows = SpanRows()
    rng = random.Random(7)
    for t in range(traces):
        trace_id = f"{rng.getrandbits(128):032x}"
        for i in range(per_trace):
            rows.append(
                trace_id=trace_id,
                span_id=f"{t * per_trace + i + 1:016x}",
                parent_span_id=None if i == 0 else f"{t * per_trace + 1:016x}",
                name="span",
                # Some traces cross midnight, so one trace spans two date partitions.
                start_time=start + t * DAY // 7 + i * DAY // 3,
                end_time=start + t * DAY // 7 + i * DAY // 3 + 1,
                service_name="svc",
                attributes=encode_attributes({"assay.test.id": "t"} if i == 0 else {}),
            )
    return rows


def test_bucket_of_follows_the_documented_rule() -> None:
    rng = random.Random(1)
    ids = [f"{rng.getrandbits(128):032x}" for _ in range(2000)] + ["not-hex-at-all", "x"]
    for count in (1, 2, 7, 64, 1000):
        got = bucket_of(pl.Series(ids), count).to_list()
        assert got == [_expected_bucket(i, count) for i in ids]
        assert all(0 <= b < count for b in got)


def test_buckets_are_balanced_for_random_and_sequential_ids() -> None:
    rng = random.Random(2)
    for ids in (
        [f"{rng.getrandbits(128):032x}" for _ in range(64_000)],
        [f"{i:032x}" for i in range(64_000)],
    ):
        counts = bucket_of(pl.Series(ids), 16).value_counts()["count"]
        assert counts.len() == 16
        assert counts.min() > 3600 and counts.max() < 4400  # 4000 each, within ±10%


def test_writer_lays_whole_traces_into_bucket_folders(tmp_path: Path) -> None:
    table = _spans(60).to_table()
    written = write_spans(table, tmp_path, partition_by=("date",), buckets=8)
    folders = {p.relative_to(tmp_path).parts[:-1] for p in written}
    assert all(f[0].startswith("date=") and f[1].startswith("bucket=") for f in folders)
    assert len({f[0] for f in folders}) > 1, "the fixture must span several days"
    for path in written:
        assert pq.read_schema(path).metadata[BUCKET_COUNT_KEY] == b"8"
        ids = pq.read_table(path, columns=["trace_id"])["trace_id"].to_pylist()
        expected = {bucket_folder(_expected_bucket(i, 8), 8) for i in ids}
        assert expected == {path.parent.name}
    back = read_spans(tmp_path).sort("span_id")
    assert back.equals(pl.from_arrow(table).sort("span_id"))
    buckets = existing_buckets(tuple(str(p) for p in sorted(written)))
    assert buckets is not None
    seen: dict[str, int] = {}
    for bucket in buckets:
        for tid in read_spans(list(bucket.files))["trace_id"].unique():
            assert seen.setdefault(tid, bucket.number) == bucket.number


def test_bucket_count_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="buckets must be between 1 and 4096"):
        SpanWriter(tmp_path / "out", buckets=0)
    assert not (tmp_path / "out").exists()


def test_layout_is_ignored_unless_every_file_agrees(tmp_path: Path) -> None:
    a = write_spans(_spans(10).to_table(), tmp_path / "a", partition_by=(), buckets=4)
    b = write_spans(_spans(10).to_table(), tmp_path / "b", partition_by=(), buckets=8)
    plain = write_spans(_spans(10).to_table(), tmp_path / "c", partition_by=())
    assert existing_buckets(tuple(map(str, a))) is not None
    assert existing_buckets(tuple(map(str, a + b))) is None  # two bucket counts
    assert existing_buckets(tuple(map(str, a + plain))) is None  # a file outside buckets


def test_made_buckets_copy_every_span_once_and_clean_up(tmp_path: Path) -> None:
    table = _spans(40).to_table()
    files = tuple(str(p) for p in write_spans(table, tmp_path / "in", partition_by=("date",)))
    with made_buckets(files, 5, scratch=str(tmp_path)) as buckets:
        assert [b.number for b in buckets] == sorted({b.number for b in buckets})
        frames = [scan_bucket(b).collect() for b in buckets]
        scratch = Path(buckets[0].files[0]).parents[1]
        assert scratch.exists()
    assert not scratch.exists()
    assert sum(f.height for f in frames) == table.num_rows == total_spans(files)
    per_trace = pl.concat(
        [
            f.select("trace_id").unique().with_columns(pl.lit(i).alias("b"))
            for i, f in enumerate(frames)
        ]
    )
    assert per_trace["trace_id"].is_unique().all()
    merged = pl.concat(frames).sort("span_id")
    assert merged.equals(pl.from_arrow(table).sort("span_id"))


def _row_grouped(tmp_path: Path, table, name: str) -> tuple[str, ...]:
    writer = SpanWriter(tmp_path / name, partition_by=(), row_group_rows=30)
    for start in range(0, table.num_rows, 30):
        writer.write(table.slice(start, 30))
    return tuple(str(p) for p in writer.flush())


def test_row_groups_that_share_no_trace_become_buckets_without_a_copy(tmp_path: Path) -> None:
    table = _spans(100, per_trace=4).to_table()  # whole traces in order: 4 spans each
    files = _row_grouped(tmp_path, table, "in")
    assert pq.ParquetFile(files[0]).num_row_groups > 10
    buckets = row_group_buckets(files, spans_per_bucket=90)
    assert buckets is not None and len(buckets) > 3
    frames = [scan_bucket(b).collect() for b in buckets]
    assert all(f.height <= 180 for f in frames)
    owner: dict[str, int] = {}
    for i, f in enumerate(frames):
        for tid in f["trace_id"].unique():
            assert owner.setdefault(tid, i) == i, "a trace was split between buckets"
    assert pl.concat(frames).sort("span_id").equals(pl.from_arrow(table).sort("span_id"))


def test_many_small_files_are_read_whole_in_file_order(tmp_path: Path) -> None:
    # A collector rolling often: files of 30 spans cut wherever the traces lie.
    table = _spans(100, per_trace=4).to_table()
    writer = SpanWriter(tmp_path / "in", partition_by=(), row_group_rows=30)
    for start in range(0, table.num_rows, 30):
        writer.write(table.slice(start, 30))
        writer.flush()
    files = tuple(sorted(str(p) for p in (tmp_path / "in").glob("*.parquet")))
    assert len(files) > 10
    buckets = row_group_buckets(files, spans_per_bucket=90)
    assert buckets is not None and len(buckets) > 3
    assert all(r == () for b in buckets for r in b.row_ranges or [None])  # whole files
    for b in buckets:
        # Each file whole, in the bucket's file order: the spans as the files hold them.
        alone = pl.concat([scan_bucket(Bucket(0, (f,))).collect() for f in b.files])
        assert scan_bucket(b).collect().equals(alone)
    spans = pl.concat([scan_bucket(b).collect() for b in buckets])
    assert spans.sort("span_id").equals(pl.from_arrow(table).sort("span_id"))


def test_traces_spread_over_every_row_group_need_a_copy(tmp_path: Path) -> None:
    table = _spans(100, per_trace=4).to_table()
    # Span i of every trace first, then span i+1 ...: each trace touches every row group.
    by_position = pl.from_arrow(table).with_row_index("i").sort(pl.col("i") % 4, "i").drop("i")
    files = _row_grouped(tmp_path, by_position.to_arrow(), "in")
    assert row_group_buckets(files, spans_per_bucket=90) is None


def test_files_of_both_string_types_sharing_a_trace_keep_it_in_one_bucket(tmp_path: Path) -> None:
    # Writers differ: one stores ids as string, another as large_string. A trace cut by the
    # end of the first file must still be found in both (its ids hash alike either way).
    table = _spans(100, per_trace=4).to_table()
    cut = 250  # inside the 63rd trace
    large = table.schema.set(
        table.schema.get_field_index("trace_id"), pa.field("trace_id", pa.large_string())
    )
    first, second = str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")
    pq.write_table(table.slice(0, cut), first, row_group_size=30)
    pq.write_table(table.slice(cut).cast(large), second, row_group_size=30)
    buckets = row_group_buckets((first, second), spans_per_bucket=90)
    assert buckets is not None and len(buckets) > 3
    owner: dict[str, int] = {}
    for i, bucket in enumerate(buckets):
        for tid in scan_bucket(bucket).collect()["trace_id"].unique():
            assert owner.setdefault(tid, i) == i, "a trace was split between buckets"
    assert len(owner) == 100
