"""Buckets' tables waiting packed come back exactly as they were, in the buckets' order."""

from __future__ import annotations

import threading

import polars as pl
import pytest

from assay.analysis import columns as tc
from assay.analysis._per_bucket import COMPACT_TOOLS, concat_trials
from assay.analysis._trials import Trials
from assay.analysis._waiting import Packed, Waiting, columns_waiting
from assay.quality import DataQuality, Finding

SCORE = pl.Struct({"name": pl.String, "value": pl.Float64})


def _bucket(first: int, rows: int) -> Trials:
    index = list(range(first, first + rows))
    table = pl.DataFrame(
        {
            tc.TEST_ID: [f"t{i % 3}" for i in index],
            tc.SUITE: pl.Series([None] * rows, dtype=pl.String),
            tc.TRIAL_INDEX: index,
            tc.TRACE_ID: [f"{i:032x}" for i in index],
            tc.SPAN_ID: [f"{i:016x}" for i in index],
            tc.SCORES: [[{"name": "q", "value": i / 7}] for i in index],
            tc.TOOL_SEQUENCE: [["search", "answer"][: i % 3] for i in index],
            tc.RETRIES: [0] * rows,
            tc.START_TIME: [10 * i for i in index],
            tc.DURATION_S: [i / 3 for i in index],
        },
        schema_overrides={tc.SCORES: pl.List(SCORE)},
    ).with_columns(pl.col(tc.TOOL_SEQUENCE).cast(COMPACT_TOOLS))
    found = Finding("orphan_spans", f"bucket at {first}", rows, severity="warning")
    return Trials(table, DataQuality((found,)), pl.Series(tc.TRACE_ID, [f"{first:032x}"]))


def test_a_packed_table_is_read_back_exactly() -> None:
    trials = _bucket(0, 50)
    back = Packed.of(trials).unpacked()
    assert back.table.schema == trials.table.schema
    assert back.table.equals(trials.table)
    assert back.data_quality == trials.data_quality
    assert back.unnamed_calls is not None and back.unnamed_calls.equals(trials.unnamed_calls)


def test_tables_pack_once_enough_trials_wait() -> None:
    waiting = Waiting(pack_from=100)
    held = [waiting.hold(_bucket(at, 60)) for at in range(0, 300, 60)]
    assert [isinstance(h, Packed) for h in held] == [False, False, True, True, True]
    assert waiting.hold(None) is None


@pytest.mark.parametrize("pack_from", [0, 100, 10_000])
def test_the_set_table_is_the_same_packed_or_not(pack_from: int) -> None:
    buckets = [_bucket(at, 40) for at in range(0, 400, 40)]
    plain = concat_trials(list(buckets), lambda: 0, "assay.test.id")
    waiting = Waiting(pack_from=pack_from)
    held: list[Trials | Packed | None] = [waiting.hold(b) for b in buckets]
    packed = concat_trials(held, lambda: 0, "assay.test.id")
    assert held == []  # the buckets' tables are let go as the set's table is made
    assert packed.table.equals(plain.table)
    assert packed.table.schema == plain.table.schema
    assert packed.data_quality == plain.data_quality
    assert packed.unnamed_calls is not None and plain.unnamed_calls is not None
    assert packed.unnamed_calls.equals(plain.unnamed_calls)


def test_a_packed_table_of_another_schema_joins_by_name() -> None:
    first = _bucket(0, 30)
    other = _bucket(30, 30)
    reordered = other.table.select(reversed(other.table.columns))
    other = Trials(reordered.with_columns(pl.lit(None).alias(tc.SUITE)), other.data_quality)
    assert other.table.schema[tc.SUITE] == pl.Null
    got = concat_trials([first, Packed.of(other)], lambda: 0, "assay.test.id").table
    want = concat_trials([first, _bucket(30, 30)], lambda: 0, "assay.test.id").table
    assert got.columns == want.columns
    assert got.equals(want)


def test_a_column_lets_its_packed_pieces_go_as_it_is_read() -> None:
    held: list[Trials | Packed] = [_bucket(0, 20), Packed.of(_bucket(20, 20))]
    columns = columns_waiting(held)
    assert held == []
    assert [c.name for c in columns] == _bucket(0, 1).table.columns
    scores = next(c for c in columns if c.name == tc.SCORES)
    assert [type(p) for p in scores.pieces] == [pl.Series, bytes]
    read = scores.read()
    assert scores.pieces == []
    assert (
        read.to_list()
        == pl.concat([_bucket(0, 20).table, _bucket(20, 20).table])[tc.SCORES].to_list()
    )


def test_threads_holding_at_once_count_every_trial() -> None:
    waiting = Waiting(pack_from=1_000)
    results: list[Trials | Packed | None] = []
    lock = threading.Lock()

    def hold(first: int) -> None:
        out = waiting.hold(_bucket(first, 10))
        with lock:
            results.append(out)

    threads = [threading.Thread(target=hold, args=(i * 10,)) for i in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # 2,000 trials held: exactly those beyond the first 1,000 waiting were packed.
    assert sum(isinstance(r, Packed) for r in results) == 100
