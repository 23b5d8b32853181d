"""Copies of one span that differ: named as a conflict, counted by a rule blind to row order.

The sweep's input: one OTLP/JSON file in which five trial spans appear twice, one copy ``pass``
and one ``fail``. Keeping the first copy made the verdict follow the order of the rows (5/5
PASS one way, FAIL the other) while the finding called them harmless copies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.analysis import read_trials
from assay.ingest import import_files
from assay.store import open_trace_set

OPTIONS = assay.AnalyzeOptions(threshold=0.5)


def _span(trial: int, outcome: str, *, end: int = 2_000) -> dict[str, Any]:
    return {
        "traceId": f"{trial + 1:032x}",
        "spanId": f"{trial + 1:016x}",
        "name": "trial",
        "startTimeUnixNano": str(1_750_000_000_000_000_000 + trial),
        "endTimeUnixNano": str(1_750_000_000_000_000_000 + trial + end),
        "attributes": [
            {"key": "assay.test.id", "value": {"stringValue": "t"}},
            {"key": "assay.trial.outcome", "value": {"stringValue": outcome}},
        ],
    }


def _line(spans: list[dict[str, Any]]) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})


def _analysed(tmp_path: Path, name: str, lines: list[str]) -> tuple[Any, dict[str, Any]]:
    source = tmp_path / f"{name}.jsonl"
    source.write_text("\n".join(lines) + "\n")
    out = tmp_path / name
    import_files([source], out)
    report = json.loads(assay.analyze(out, OPTIONS).to_json())
    return read_trials(open_trace_set(out).scan()), report


def test_conflicting_copies_are_named_and_counted_the_same_in_any_order(tmp_path: Path) -> None:
    passing = _line([_span(i, "pass") for i in range(5)])
    failing = _line([_span(i, "fail") for i in range(3)])  # three of the five disputed
    results = [
        _analysed(tmp_path, "pass-first", [passing, failing]),
        _analysed(tmp_path, "fail-first", [failing, passing]),
    ]
    tables = [r[0].table.sort("trace_id") for r in results]
    assert tables[0].equals(tables[1])
    assert tables[0]["outcome"].to_list() == ["fail"] * 3 + ["pass"] * 2  # never a disputed pass
    for _, report in results:
        (test,) = report["tests"]
        assert (test["n"], test["passed"]) == (5, 2)
        findings = {f["kind"]: f for f in report["data_quality"]["findings"]}
        conflict = findings["conflicting_spans"]
        assert conflict["count"] == 3
        assert conflict["examples"][0] == (
            f"span {1:016x} of trace {1:032x}: copies say fail / pass, counted as fail"
        )
        assert "import run twice" not in findings["duplicate_spans"]["message"]


def test_identical_copies_are_no_conflict(tmp_path: Path) -> None:
    line = _line([_span(i, "pass") for i in range(5)])
    trials, report = _analysed(tmp_path, "twice", [line, line])
    kinds = {f["kind"] for f in report["data_quality"]["findings"]}
    assert "duplicate_spans" in kinds and "conflicting_spans" not in kinds
    assert trials.table.height == 5


@pytest.mark.parametrize("first", ["early", "late"])
def test_copies_saying_the_same_outcome_keep_the_latest_end(tmp_path: Path, first: str) -> None:
    early, late = _line([_span(0, "pass", end=1_000)]), _line([_span(0, "pass", end=9_000)])
    lines = [early, late] if first == "early" else [late, early]
    trials, report = _analysed(tmp_path, first, lines)
    assert trials.table["duration_s"].to_list() == [9e-6]
    (conflict,) = [
        f for f in report["data_quality"]["findings"] if f["kind"] == "conflicting_spans"
    ]
    assert conflict["examples"] == [
        f"span {1:016x} of trace {1:032x}: copies say pass, counted as pass"
    ]
