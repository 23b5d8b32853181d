"""Span times far from the others are named by ``assay import`` and kept as read.

OTLP times are plain nanoseconds, valid by the protocol: microseconds written there land in
January 1970, a broken clock puts one span decades from its trace. Nothing once said so; the
durations and the date partitions were silently wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from assay.cli import run

NOW = 1_750_000_000_000_000_000  # 2025-06-15, in nanoseconds
SECOND = 1_000_000_000
YEAR = 365 * 86_400 * SECOND


def _span(trace: int, span: int, start: int, *, parent: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": f"{trace:032x}",
        "spanId": f"{span:016x}",
        "name": "tool" if parent else "trial",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1000),
        "attributes": [] if parent else [{"key": "assay.test.id", "value": {"stringValue": "t"}}],
    }
    if parent:
        out["parentSpanId"] = f"{parent:016x}"
    return out


def _trial(trace: int, start: int, child: int | None = None) -> list[dict[str, Any]]:
    """A trial span and one child, starting at ``child`` (else a millisecond after it)."""
    root = trace * 10
    return [
        _span(trace, root, start),
        _span(trace, root + 1, start + 1_000_000 if child is None else child, parent=root),
    ]


def _import(tmp_path: Path, spans: list[dict[str, Any]], capsys: Any) -> tuple[Path, str]:
    source = tmp_path / "spans.json"
    source.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    out = tmp_path / "out"
    assert run(["import", str(source), "--out", str(out)]) == 0
    return out, capsys.readouterr().err


def test_times_far_from_the_others_are_named_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans = [s for t in range(1, 6) for s in _trial(t, NOW + t * SECOND)]
    spans += _trial(6, NOW + 6 * SECOND, child=(NOW + 6 * SECOND) // 1000)  # µs read as ns
    spans += _trial(7, NOW + 7 * SECOND, child=NOW + 80 * YEAR)  # a clock 80 years off
    spans += _trial(8, NOW + 45 * YEAR)  # a whole trace decades from the set
    out, err = _import(tmp_path, spans, capsys)
    assert err.count("\n") == 1 and err.startswith("assay: warning: span times far from")
    assert "kept as read" in err
    assert "1 start before 2000 (e.g. trace 00000000000000000000000000000006 at 1970-01-21" in err
    assert "2 start more than a year from the other spans of their trace (2 trace(s)" in err
    assert "one at 1970-01-21 06:06:40 UTC, 55 years from the others" in err
    assert "2 lie in 1 trace(s) more than 20 years from the rest of the set" in err
    assert f"(e.g. {8:032x})" in err
    stored = pl.read_parquet(out, hive_partitioning=False)
    assert stored.height == len(spans)  # nothing dropped


@pytest.mark.parametrize(
    "starts",
    [
        [NOW + t * SECOND for t in range(10)],  # one session
        [NOW + t * YEAR // 2 for t in range(7)],  # three years of archives, half a year apart
    ],
)
def test_ordinary_sets_are_not_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], starts: list[int]
) -> None:
    spans = [s for t, start in enumerate(starts, 1) for s in _trial(t, start)]
    _, err = _import(tmp_path, spans, capsys)
    assert "far from" not in err
