from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.errors import InputError, SchemaError
from assay.store import (
    SPANS_SCHEMA,
    SpanRows,
    SpanWriter,
    decode_attributes,
    encode_attributes,
    open_trace_set,
    read_spans,
    sanitize_partition_value,
    write_spans,
)

DAY = 86_400 * 10**9


def _rows(
    count: int,
    *,
    start: int = 0,
    service: str = "svc",
    attrs: dict | None = None,
    first_id: int = 0,
) -> pa.Table:
    rows = SpanRows()
    for i in range(count):
        rows.append(
            trace_id=f"{i + first_id:032x}",
            span_id=f"{i + first_id:016x}",
            name="span",
            start_time=start + i,
            end_time=start + i + 1,
            service_name=service,
            attributes=encode_attributes(attrs or {"assay.test.id": f"t{i % 3}"}),
        )
    return rows.to_table()


def test_attributes_round_trip_with_their_types(tmp_path: Path) -> None:
    attrs = {
        "s": "text",
        "b": True,
        "i": 7,
        "d": 2.5,
        "nan": math.inf,
        "raw": b"\x00\x01",
        "ss": ["a", "b"],
        "ii": [1, 2],
        "dd": [1.5],
        "bb": [True, False],
        "mixed": [1, "x"],
        "map": {"k": 1},
        "assay.trial.index": "3",
    }
    write_spans(_rows(1, attrs=attrs), tmp_path)
    frame = read_spans(tmp_path)
    stored = frame["attributes"].to_list()[0]
    assert decode_attributes(stored)["ss"] == ["a", "b"]
    types = {a["key"]: a["type"] for a in stored}
    assert types == {
        "s": "string",
        "b": "bool",
        "i": "int",
        "d": "double",
        "nan": "double",
        "raw": "bytes",
        "ss": "string[]",
        "ii": "int[]",
        "dd": "double[]",
        "bb": "bool[]",
        "mixed": "array",
        "map": "kvlist",
        "assay.trial.index": "string",
    }
    values = decode_attributes(stored)
    assert values["i"] == 7 and values["d"] == 2.5 and values["raw"] == b"\x00\x01"
    assert values["nan"] == math.inf and values["b"] is True
    # promoted columns are typed; an exact coercion ("3" -> 3) is made, the original is kept
    assert frame["assay_trial_index"].to_list() == [3]


def test_writer_rolls_by_size_and_leaves_no_temporary_files(tmp_path: Path) -> None:
    rolled: list[tuple[Path, int]] = []
    writer = SpanWriter(
        tmp_path, max_file_bytes=1, row_group_rows=100, on_roll=lambda p, n: rolled.append((p, n))
    )
    for batch in range(5):
        writer.write(_rows(100, first_id=100 * batch))
    writer.flush()
    assert len(rolled) == 5 and sum(n for _, n in rolled) == 500
    assert not list(tmp_path.rglob("*.tmp"))
    assert read_spans(tmp_path).height == 500
    for path, _ in rolled:
        assert pq.read_schema(path).metadata == SPANS_SCHEMA.metadata


def test_open_files_are_invisible_until_flushed(tmp_path: Path) -> None:
    writer = SpanWriter(tmp_path, row_group_rows=10)
    writer.write(_rows(50))
    with pytest.raises(InputError, match="no .parquet files"):
        open_trace_set(tmp_path)
    writer.flush()
    assert read_spans(tmp_path).height == 50


def test_hive_partitions_by_date_and_sanitised_service(tmp_path: Path) -> None:
    table = pa.concat_tables(
        [_rows(3, start=0, service="../../etc"), _rows(2, start=DAY, service="api", first_id=3)]
    )
    write_spans(table, tmp_path, partition_by=("date", "service"))
    folders = sorted(str(p.parent.relative_to(tmp_path)) for p in tmp_path.rglob("*.parquet"))
    assert folders == ["date=1970-01-01/service=etc", "date=1970-01-02/service=api"]
    assert read_spans(tmp_path).height == 5


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("../x", "x"),
        ("my service.v2", "my_service.v2"),
        ("", "unknown"),
        (None, "unknown"),
        ("a/b\\c", "a_b_c"),
        ("..", "unknown"),
    ],
)
def test_sanitize_partition_value(value: str | None, expected: str) -> None:
    assert sanitize_partition_value(value) == expected


def test_reader_accepts_glob_and_file_list(tmp_path: Path) -> None:
    (first,) = write_spans(_rows(2), tmp_path / "a")
    write_spans(_rows(3, first_id=2), tmp_path / "b")
    assert read_spans([str(first), str(tmp_path / "b")]).height == 5
    assert read_spans(str(tmp_path / "*" / "**" / "*.parquet")).height == 5


def test_bad_inputs_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file or folder"):
        open_trace_set(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no .parquet files"):
        open_trace_set(tmp_path / "empty")
    text = tmp_path / "notes.parquet"
    text.write_text("not parquet at all")
    with pytest.raises(InputError, match="notes.parquet: not a readable Parquet file"):
        open_trace_set(text)
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"x": [1]}), plain)
    with pytest.raises(SchemaError, match="plain.parquet: not an assay spans file"):
        open_trace_set(plain)


def test_truncated_file_among_good_ones_is_named_or_skipped(tmp_path: Path) -> None:
    write_spans(_rows(4), tmp_path)
    (good,) = list(tmp_path.rglob("*.parquet"))
    broken = good.parent / "broken.parquet"
    broken.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(InputError, match="broken.parquet"):
        open_trace_set(tmp_path)
    trace_set = open_trace_set(tmp_path, skip_bad_files=True)
    assert [Path(s.path).name for s in trace_set.skipped] == ["broken.parquet"]
    assert trace_set.scan().collect().height == 4
