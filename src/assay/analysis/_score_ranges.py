"""The scales scores are recorded on: ``assay.score.range`` and ``gen_ai.evaluation.score.range``.

A score's mean gets an anytime-valid interval in ``assay watch`` only when the score's bounds are
known (docs/monitoring.md). A trace may say them itself: ``assay.instrument``'s
``score(name, value, range=(0, 100))`` records ``assay.score.range`` on the ``assay.score``
event, and the OTel GenAI proposal (semantic-conventions-genai#39) adds
``gen_ai.evaluation.score.range`` to ``gen_ai.evaluation.result``. Its form is not settled, so it
is read as a two-number array or as a string naming two numbers (``"[0, 100]"``, ``"0-100"``,
``"0:100"``, ``"0..100"``); anything else is not a range and is ignored (the score is then
bounded as if nothing were recorded, and ``watch`` says why it has no interval).
"""

from __future__ import annotations

import json
import math
import re

import polars as pl

from assay import conventions as c

__all__ = ["parse_score_range", "recorded_score_ranges"]

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_PAIR = re.compile(rf"^\s*[\[(]?\s*({_NUMBER})\s*(?:,|:|\.\.|-|–|to)\s*({_NUMBER})\s*[\])]?\s*$")
_NAMES = {c.SCORE_EVENT: c.SCORE_NAME, c.EVALUATION_EVENT: c.EVALUATION_NAME}
_RANGES = {c.SCORE_EVENT: c.SCORE_RANGE, c.EVALUATION_EVENT: c.EVALUATION_SCORE_RANGE}
"""Per event, the attribute naming its score and the one holding its range."""


def parse_score_range(text: str | None) -> tuple[float, float] | None:
    """``(low, high)`` from a recorded range (a JSON array or a string), None if it is none."""
    if text is None:
        return None
    values: object
    try:
        values = json.loads(text)
    except ValueError:
        match = _PAIR.match(text)
        values = [float(match.group(1)), float(match.group(2))] if match else None
    if isinstance(values, str):
        return parse_score_range(values) if values != text else None
    if not isinstance(values, list) or len(values) != 2:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return None
    low, high = float(values[0]), float(values[1])
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        return None
    return low, high


def recorded_score_ranges(spans: pl.LazyFrame | pl.DataFrame) -> dict[str, tuple[float, float]]:
    """The range recorded for each score name in ``spans`` (their ``events`` column).

    A name recorded with several ranges gets the smallest range holding them all: each bound
    then still holds for every value.
    """
    frame = spans.lazy()
    if not isinstance(frame.collect_schema().get("events"), pl.List):
        return {}  # no events column (a projection), or one with nothing in it
    attribute = pl.element().struct.field("key")
    has_range = pl.col("attributes").list.eval(attribute.is_in(list(_RANGES.values()))).list.any()

    def first(key: str, field: str) -> pl.Expr:
        return (
            pl.col("attributes")
            .list.eval(pl.element().filter(attribute == key).struct.field(field))
            .list.first()
        )

    def recorded(range_key: str) -> pl.Expr:
        return pl.coalesce(first(range_key, "json_value"), first(range_key, "string_value"))

    is_score = pl.col("name") == c.SCORE_EVENT
    found = (
        frame.select("events")
        .filter(pl.col("events").list.len() > 0)
        .explode("events")
        .unnest("events")
        .filter(pl.col("name").is_in(list(_NAMES)) & has_range)
        .select(
            pl.when(is_score)
            .then(first(c.SCORE_NAME, "string_value"))
            .otherwise(first(c.EVALUATION_NAME, "string_value"))
            .alias("score"),
            pl.when(is_score)
            .then(recorded(c.SCORE_RANGE))
            .otherwise(recorded(c.EVALUATION_SCORE_RANGE))
            .alias("range"),
        )
        .unique()
        .collect()
    )
    ranges: dict[str, tuple[float, float]] = {}
    for name, text in found.iter_rows():
        parsed = parse_score_range(text)
        if name is None or parsed is None:
            continue
        known = ranges.get(name)
        ranges[name] = (
            parsed if known is None else (min(known[0], parsed[0]), max(known[1], parsed[1]))
        )
    return ranges
