"""Score ranges recorded in the traces: ``assay.score.range`` and the GenAI proposal's form."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl
import pytest

import assay.instrument as ai
from assay.analysis import parse_score_range, recorded_score_ranges
from assay.errors import ConfigError
from assay.store import read_spans

if TYPE_CHECKING:
    from conftest import ParquetSink


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[0, 100]", (0.0, 100.0)),
        ("[0.0,1.0]", (0.0, 1.0)),
        ("0-100", (0.0, 100.0)),
        ("1:5", (1.0, 5.0)),
        ("-1..1", (-1.0, 1.0)),
        ('"[0, 10]"', (0.0, 10.0)),
        ("[5, 1]", None),
        ("[0, 1, 2]", None),
        ("high is good", None),
        ("[true, 1]", None),
        (None, None),
    ],
)
def test_the_forms_a_range_is_read_in(text: str | None, expected: object) -> None:
    assert parse_score_range(text) == expected


def test_the_instrument_records_a_range_that_is_read_back(parquet_sink: ParquetSink) -> None:
    for value in (10.0, 90.0):
        with ai.trial("t") as trial:
            trial.score("quality", value, range=(0, 100))
            trial.score("unranged", 0.5)
    with ai.trial("u"):
        ai.score("quality", 3.0, range=(1, 5))  # another range for the name: both hold
    spans = read_spans(parquet_sink.flush())
    assert recorded_score_ranges(spans) == {"quality": (0.0, 100.0)}
    assert recorded_score_ranges(spans.lazy()) == recorded_score_ranges(spans)
    assert recorded_score_ranges(spans.drop("events")) == {}
    assert recorded_score_ranges(pl.DataFrame({"events": []})) == {}


def test_a_score_outside_its_own_range_is_refused() -> None:
    with ai.trial("t") as trial:
        with pytest.raises(ConfigError, match="outside its range"):
            trial.score("quality", 101, range=(0, 100))
        with pytest.raises(ConfigError, match="low < high"):
            trial.score("quality", 1, range=(5, 1))
