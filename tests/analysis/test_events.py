"""Score, check and evaluation events: each attribute read from the event that carries it."""

from __future__ import annotations

import math

import polars as pl
import pyarrow as pa
import pytest

from assay.analysis._events import explode_events
from assay.errors import SchemaError
from assay.store import EVENT_TYPE


def _attribute(key: str, value: object) -> dict[str, object]:
    kind = {bool: "bool", int: "int", float: "double", str: "string"}[type(value)]
    field = {"bool": "bool_value", "int": "int_value", "double": "double_value"}
    return {"key": key, "type": kind, field.get(kind, "string_value"): value}


def _evented(*spans: list[tuple[str, list[dict[str, object]]]]) -> pl.DataFrame:
    events = [
        [
            {"time_unix_nano": 10 * i + j, "name": name, "attributes": attributes}
            for j, (name, attributes) in enumerate(span)
        ]
        for i, span in enumerate(spans)
    ]
    table = pa.table(
        {
            "trace_id": [f"t{i}" for i in range(len(spans))],
            "span_id": [f"s{i}" for i in range(len(spans))],
            "events": pa.array(events, pa.list_(EVENT_TYPE)),
        }
    )
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame


def test_each_event_keeps_its_own_attributes_in_order() -> None:
    evented = _evented(
        [
            (
                "assay.score",
                [_attribute("assay.score.name", "a"), _attribute("assay.score.value", 1)],
            ),
            ("log", [_attribute("assay.score.value", 5.0)]),  # not a score event: left out
            ("assay.check", [_attribute("assay.check.passed", False)]),
        ],
        [
            (
                "gen_ai.evaluation.result",
                [
                    _attribute("gen_ai.evaluation.score.label", "good"),
                    _attribute("gen_ai.evaluation.name", "rel"),
                ],
            ),
            (
                "assay.score",
                [
                    _attribute("assay.score.value", 0.25),
                    _attribute("assay.score.value", 0.75),  # a repeated key: the first counts
                    _attribute("assay.score.name", "b"),
                ],
            ),
        ],
    )
    rows = explode_events(evented).rows()
    assert rows == [
        ("t0", "s0", 0, "score", "a", 1.0, None, None),
        ("t0", "s0", 2, "check", "score", None, None, False),
        ("t1", "s1", 10, "score", "rel", None, "good", None),
        ("t1", "s1", 11, "score", "b", 0.25, None, None),
    ]


def test_a_score_that_is_not_a_number_is_named() -> None:
    evented = _evented([("assay.score", [_attribute("assay.score.value", "high")])])
    with pytest.raises(SchemaError, match=r"span s0 .*non-numeric assay.score.value .*'high'"):
        explode_events(evented)


def test_nan_scores_stay_nan() -> None:
    evented = _evented([("assay.score", [_attribute("assay.score.value", math.nan)])])
    assert math.isnan(explode_events(evented)["value"][0])
