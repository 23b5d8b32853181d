"""Footers are parsed once per process; what is kept says what the parsed footer said."""

from __future__ import annotations

import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.store import (
    SPANS_SCHEMA,
    SpanContents,
    _buckets,
    _footers,
    open_trace_set,
    span_contents,
)
from assay.store._buckets import row_group_buckets, total_spans
from assay.store._coercion import PROMOTION_KEY, PROMOTION_RULE
from assay.store._contents import (
    ATTRIBUTE_FAMILIES_KEY,
    FAMILIES,
    JUDGEMENT,
    OUTCOME,
    RECORDED_COST,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synthetic import generate  # noqa: E402

assert set(FAMILIES) == {JUDGEMENT, RECORDED_COST, OUTCOME}


@pytest.fixture(autouse=True)
def _fresh() -> None:
    _footers.forget_footers()


# --- span_contents as it was before the footers were kept: read from pq.read_metadata -----


@dataclass
class _Column:
    known: bool = True
    all_null: bool = True
    bounded: bool = True
    low: str | None = None
    high: str | None = None


def _old_column_facts(metadata: pq.FileMetaData, columns: dict[str, _Column]) -> None:
    present = {metadata.schema.column(i).path.split(".")[0] for i in range(metadata.num_columns)}
    for name in SPANS_SCHEMA.names:
        if name not in present:
            columns.setdefault(name, _Column()).known = False
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        for i in range(group.num_columns):
            chunk = group.column(i)
            name = chunk.path_in_schema
            if "." in name:
                continue
            fact = columns.setdefault(name, _Column())
            stats = chunk.statistics
            if stats is None or stats.null_count is None:
                fact.known = False
                continue
            if stats.null_count == group.num_rows:
                continue
            fact.all_null = False
            if not stats.has_min_max or not isinstance(stats.min, str):
                fact.bounded = False
                continue
            if max(len(stats.min), len(stats.max)) >= 64:
                fact.bounded = False
                continue
            fact.low = stats.min if fact.low is None else min(fact.low, stats.min)
            fact.high = stats.max if fact.high is None else max(fact.high, stats.max)


def _old_may_have_events(metadata: pq.FileMetaData) -> bool:
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        if group.num_rows == 0:
            continue
        leaves = {group.column(i).path_in_schema: group.column(i) for i in range(group.num_columns)}
        for leaf in ("events.list.element.time_unix_nano", "events.list.element.name"):
            column = leaves.get(leaf)
            if column is None:
                return True
            stats = column.statistics
            if stats is None or stats.null_count is None:
                return True
            if stats.null_count != column.num_values:
                return True
    return False


def _old_span_contents(files: list[str]) -> SpanContents:
    events = judgements = costs = outcomes = False
    columns: dict[str, _Column] = {}
    for f in files:
        metadata = pq.read_metadata(f)
        events = events or _old_may_have_events(metadata)
        footer = metadata.metadata or {}
        recorded = footer.get(ATTRIBUTE_FAMILIES_KEY)
        if recorded is None:
            judgements = costs = outcomes = True
        else:
            families = set(recorded.decode().split(","))
            judgements = judgements or JUDGEMENT in families
            costs = costs or RECORDED_COST in families
            current = footer.get(PROMOTION_KEY) == PROMOTION_RULE
            outcomes = outcomes or OUTCOME in families or not current
        _old_column_facts(metadata, columns)
    return SpanContents(
        events=events,
        judgements=judgements,
        recorded_costs=costs,
        outcomes=outcomes,
        null_columns=frozenset(n for n, f in columns.items() if f.known and f.all_null),
        bounds=tuple(
            (n, f.low, f.high)
            for n, f in sorted(columns.items())
            if f.known and f.bounded and f.low is not None and f.high is not None
        ),
    )


def _variants(root: Path) -> list[list[str]]:
    """Sets whose footers say different things: statistics, columns, row groups, rows."""
    generate(root / "g", trials=30, spans_per_trial=5, tests=3)
    made = sorted(str(p) for p in (root / "g").rglob("*.parquet"))
    table = pq.read_table(made[0])
    grouped = root / "grouped.parquet"
    pq.write_table(table, grouped, row_group_size=40)  # several row groups
    bare = root / "bare.parquet"
    pq.write_table(table, bare, write_statistics=False)  # no statistics at all
    some = root / "some.parquet"
    pq.write_table(table, some, write_statistics=["trace_id", "span_id", "name"])
    fewer = root / "fewer.parquet"
    kept = [n for n in table.column_names if not n.startswith("gen_ai")]
    pq.write_table(table.select(kept), fewer)  # promoted columns missing
    long = root / "long.parquet"
    names = pa.array(["x" * 80] * table.num_rows)
    pq.write_table(table.set_column(table.schema.get_field_index("name"), "name", names), long)
    empty = root / "empty.parquet"
    pq.write_table(table.slice(0, 0), empty)
    return [
        made,
        [str(grouped)],
        [str(bare)],
        [str(some)],
        [str(fewer)],
        [str(long)],
        [str(empty)],
        [str(empty), *made],
        [*made, str(grouped), str(some), str(fewer), str(long)],
    ]


def test_contents_from_kept_footers_equal_the_parsed_footers(tmp_path: Path) -> None:
    for files in _variants(tmp_path):
        assert span_contents(files) == _old_span_contents(files), files
        assert span_contents(files) == _old_span_contents(files), files  # kept, read again
        assert total_spans(tuple(files)) == sum(pq.read_metadata(f).num_rows for f in files)


def test_row_group_facts_equal_the_parsed_footer(tmp_path: Path) -> None:
    for files in _variants(tmp_path):
        for f in files:
            footer = _footers.read_footer(f)
            metadata = pq.read_metadata(f)
            groups = [metadata.row_group(g) for g in range(metadata.num_row_groups)]
            assert [rows for rows, _ in footer.row_groups] == [g.num_rows for g in groups]
            for (_, ids), group in zip(footer.row_groups, groups, strict=True):
                stats = group.column(0).statistics
                if stats is None or not stats.has_min_max:
                    assert ids is None
                else:
                    assert ids == (stats.min, stats.max)
            arrow = pq.read_schema(f)
            assert footer.names == tuple(arrow.names)
            assert footer.schema_metadata == dict(arrow.metadata or {})


def _count_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths ``_footers`` opens from now on (a footer parsed), in order."""
    opened: list[str] = []
    original = _footers.open_parquet

    def counting(path: str, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(path)
        return original(path, **kwargs)

    monkeypatch.setattr(_footers, "open_parquet", counting)
    return opened


def test_each_footer_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generate(tmp_path / "t", trials=40, spans_per_trial=5, tests=2)
    for i, f in enumerate(sorted((tmp_path / "t").rglob("*.parquet"))):
        table = pq.read_table(f)
        for start in range(0, table.num_rows, 25):  # many small files, as a collector writes
            pq.write_table(table.slice(start, 25), tmp_path / "t" / f"small-{i}-{start}.parquet")
        f.unlink()
    opened = _count_opens(monkeypatch)
    trace_set = open_trace_set(tmp_path / "t")
    trace_set.contents()
    total_spans(trace_set.files)
    assert row_group_buckets(trace_set.files, 100) is not None
    assert sorted(opened) == sorted(trace_set.files)  # one parse a file, for every step


def test_a_rewritten_or_replaced_file_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generate(tmp_path / "g", trials=10, spans_per_trial=4, tests=1)
    table = pq.read_table(next((tmp_path / "g").rglob("*.parquet")))
    path = tmp_path / "spans.parquet"
    pq.write_table(table, path)
    assert _footers.read_footer(str(path)).rows == table.num_rows
    pq.write_table(table.slice(0, 7), path)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # however coarse the clock
    assert _footers.read_footer(str(path)).rows == 7
    # Replaced by another file (a rename, as writers publish) of the same size and mtime.
    stat = path.stat()
    twin = tmp_path / "twin.parquet"
    twin.write_bytes(path.read_bytes())
    os.utime(twin, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    opened = _count_opens(monkeypatch)
    _footers.read_footer(str(path))
    assert not opened  # unchanged: kept
    os.replace(twin, path)
    _footers.read_footer(str(path))
    assert opened == [str(path)]


def test_footers_kept_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_footers, "CACHED_FOOTERS", 2)
    generate(tmp_path / "g", trials=10, spans_per_trial=4, tests=1)
    table = pq.read_table(next((tmp_path / "g").rglob("*.parquet")))
    for i in range(4):
        pq.write_table(table, tmp_path / f"{i}.parquet")
        _footers.read_footer(str(tmp_path / f"{i}.parquet"))
    assert list(_footers._footers) == [str(tmp_path / "2.parquet"), str(tmp_path / "3.parquet")]


def test_equal_column_facts_are_kept_once(tmp_path: Path) -> None:
    """Files of one schema share their equal facts: one object each, not one per file.

    (That the facts say what the footers say is pinned by the tests above.)
    """
    generate(tmp_path / "g", trials=10, spans_per_trial=4, tests=1)
    table = pq.read_table(next((tmp_path / "g").rglob("*.parquet")))
    for i in range(2):
        pq.write_table(table, tmp_path / f"{i}.parquet")
    first, second = (_footers.read_footer(str(tmp_path / f"{i}.parquet")) for i in range(2))
    assert first.columns == second.columns
    for a, b in zip(first.columns, second.columns, strict=True):
        assert a is b
    assert len({id(c) for c in first.columns}) == len(set(first.columns))


def _brute_pairs(hashes: list[int], units: list[int]) -> set[tuple[int, int]]:
    holders: dict[int, set[int]] = {}
    for h, u in zip(hashes, units, strict=True):
        holders.setdefault(h, set()).add(u)
    return {(min(us), u) for us in holders.values() for u in us if u != min(us)}


def test_row_groups_sharing_an_id_are_paired_as_a_group_by_pairs_them() -> None:
    rng = random.Random(3)
    for _ in range(200):
        n = rng.randint(0, 60)
        units = sorted(rng.randint(0, 9) for _ in range(n))
        hashes = [rng.randint(0, 12) for _ in range(n)]
        got = _buckets._pairs(np.array(hashes, dtype=np.uint64), np.array(units, dtype=np.int64))
        assert set(got) == _brute_pairs(hashes, units)
        assert len(got) == len(set(got))
