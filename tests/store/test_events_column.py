"""The spans holding events, read by pyarrow, are those the Polars scan of the bucket holds."""

import sys
from dataclasses import replace
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.analysis import read_trials
from assay.store import (
    Bucket,
    bucket_events,
    events_column,
    open_trace_set,
    row_group_buckets,
    scan_bucket,
)
from assay.store._events_column import _holding

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from shapes import Shape, generate  # noqa: E402


def _set(tmp_path: Path, **shape: object) -> tuple[str, ...]:
    """A small set of the benchmark shapes, traces cut across files, in row groups of 500 spans."""
    options = {"trials": 300, "spans": 300 * 12, "files": 5, **shape}
    generate(Shape("t", **options), tmp_path / "set")  # type: ignore[arg-type]
    files = tuple(sorted(str(p) for p in (tmp_path / "set").rglob("*.parquet")))
    for f in files:
        table = pq.read_table(f)
        pq.write_table(table, f, row_group_size=500)
    return files


def _scan_events(scan: pl.LazyFrame) -> pl.DataFrame:
    """What the scan says: the positions of the spans holding events, and their events."""
    return (
        scan.select("events")
        .with_row_index("_row")
        .filter(pl.col("events").list.len() > 0)
        .collect()
    )


@pytest.mark.parametrize("events", [1, 5])
def test_the_events_of_whole_files_are_the_scans(tmp_path: Path, events: int) -> None:
    files = _set(tmp_path, events=events)
    held = events_column(files)
    assert held is not None
    read = held()
    assert read is not None
    expected = _scan_events(open_trace_set(list(files)).scan())
    assert read.spans == sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    assert read.rows.to_list() == expected["_row"].to_list()
    assert read.events.equals(expected["events"])


def test_the_events_of_a_row_group_bucket_are_its_scans(tmp_path: Path) -> None:
    files = _set(tmp_path, events=5, trials=600, spans=600 * 12, files=2)
    trace_set = open_trace_set(list(files))
    buckets = row_group_buckets(trace_set.files, 1_000, largest=4_000)
    assert buckets is not None and any(r for b in buckets for r in b.row_ranges or ())
    for bucket in buckets:
        reader = bucket_events(bucket, trace_set)
        assert reader is not None
        read = reader()
        assert read is not None
        expected = _scan_events(scan_bucket(bucket, trace_set))
        assert read.rows.to_list() == expected["_row"].to_list()
        assert read.events.equals(expected["events"])


def test_a_range_that_is_not_whole_row_groups_is_left_to_the_scan(tmp_path: Path) -> None:
    files = _set(tmp_path, files=1)
    assert pq.ParquetFile(files[0]).metadata.num_row_groups > 1
    reader = events_column(files, [((0, 5),)])
    assert reader is not None and reader() is None
    reader = events_column(files, [((0, 500), (1000, 500))])
    read = reader() if reader is not None else None
    assert read is not None and read.spans == 1000


def test_what_the_scan_reorders_or_collapses_is_left_to_it(tmp_path: Path) -> None:
    files = _set(tmp_path)
    trace_set = open_trace_set(list(files))
    bucket = Bucket(0, files)
    assert bucket_events(bucket, trace_set) is not None
    assert bucket_events(bucket, replace(trace_set, deduplicate=True)) is None
    assert bucket_events(replace(bucket, ipc=True), trace_set) is None
    rebuilt = replace(trace_set, rebuilt=((files[0], ("gen_ai_tool_name",)),))
    assert bucket_events(bucket, rebuilt) is None
    assert events_column(("s3://bucket/spans.parquet",)) is None


def test_a_file_with_other_events_is_left_to_the_scan(tmp_path: Path) -> None:
    files = _set(tmp_path, files=1)
    table = pq.read_table(files[0])
    events = pa.array([[]] * table.num_rows, pa.list_(pa.struct([("name", pa.string())])))
    other = table.set_column(table.schema.get_field_index("events"), "events", events)
    pq.write_table(other, tmp_path / "other.parquet")
    reader = events_column((str(tmp_path / "other.parquet"),))
    assert reader is not None and reader() is None
    pq.write_table(table.drop(["events"]), tmp_path / "none.parquet")
    reader = events_column((str(tmp_path / "none.parquet"),))
    assert reader is not None and reader() is None


@pytest.mark.parametrize("shape", [{"events": 5}, {"events": 1, "nested": True}])
def test_the_trials_are_those_of_the_scan(tmp_path: Path, shape: dict[str, object]) -> None:
    files = _set(tmp_path, **shape)
    trace_set = open_trace_set(list(files))
    contents = trace_set.contents()
    scan = trace_set.scan()
    by_scan = read_trials(scan, contents=contents)
    by_pyarrow = read_trials(scan, contents=contents, events=bucket_events(Bucket(0, files)))
    assert by_pyarrow.table.equals(by_scan.table)
    assert by_pyarrow.data_quality == by_scan.data_quality
    assert by_scan.table["scores"].list.len().sum() > 0


def test_null_events_hold_nothing(tmp_path: Path) -> None:
    files = _set(tmp_path, files=1)
    table = pq.read_table(files[0])
    events = table.column("events").combine_chunks()
    nulls = [i % 3 == 0 for i in range(len(events))]  # some of them held events
    nullable = pa.ListArray.from_arrays(
        events.offsets, events.values, mask=pa.array(nulls, pa.bool_())
    )
    assert nullable.null_count > 0
    changed = table.set_column(table.schema.get_field_index("events"), "events", nullable)
    pq.write_table(changed, tmp_path / "nulls.parquet", row_group_size=500)
    reader = events_column((str(tmp_path / "nulls.parquet"),))
    read = reader() if reader is not None else None
    assert read is not None
    expected = _scan_events(open_trace_set([str(tmp_path / "nulls.parquet")]).scan())
    assert read.rows.to_list() == expected["_row"].to_list()
    assert read.events.equals(expected["events"])


def test_a_null_list_over_values_holds_nothing() -> None:
    # Arrow lets a null list span values; a reader other than Parquet's may hand one over.
    lists = pa.ListArray.from_arrays(
        pa.array([0, 1, 1, 3, 4], pa.int32()),
        pa.array([1, 2, 3, 4]),
        mask=pa.array([False, False, True, False]),
    )
    assert _holding(pa.chunked_array([lists, lists.slice(1)])).tolist() == [0, 3, 6]


def test_the_trials_take_the_readers_events_when_it_read_every_span(tmp_path: Path) -> None:
    files = _set(tmp_path, events=1)
    trace_set = open_trace_set(list(files))
    contents = trace_set.contents()
    scan = trace_set.scan()
    reader = bucket_events(Bucket(0, files))
    assert reader is not None
    read = reader()
    assert read is not None
    # A reader that found no events: the trials have no scores, so its answer was used.
    nothing = replace(read, rows=read.rows.head(0), events=read.events.head(0))
    used = read_trials(scan, contents=contents, events=lambda: nothing)
    assert used.table["scores"].list.len().sum() == 0
    # A reader that read another number of spans than the scan: the scan's events are used.
    miscounted = replace(nothing, spans=read.spans + 1)
    scanned = read_trials(scan, contents=contents, events=lambda: miscounted)
    assert scanned.table["scores"].list.len().sum() > 0
    assert scanned.table.equals(read_trials(scan, contents=contents).table)
