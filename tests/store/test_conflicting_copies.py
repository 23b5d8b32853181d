"""Copies of one span that differ: named as a conflict, counted by a rule blind to row order.

The sweep's input: one OTLP/JSON file in which five trial spans appear twice, one copy ``pass``
and one ``fail``. Keeping the first copy made the verdict follow the order of the rows (5/5
PASS one way, FAIL the other) while the finding called them harmless copies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import assay
from assay import conventions as c
from assay.analysis import read_trials
from assay.ingest import import_files
from assay.store import (
    one_copy_each,
    open_trace_set,
    polars_schema,
    promoted_column,
    rule_rank,
)

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


def test_the_copy_of_larger_rank_is_the_copy_kept() -> None:
    """``rule_rank`` packs the rule's first three keys: where two copies' ranks differ, the
    copy ``one_copy_each`` keeps is the one of larger rank (``assay watch`` relies on it)."""
    rng = np.random.default_rng(7)
    n = 2_000
    outcomes = np.array([None, "pass", "fail", "error", "skipped", "FAIL"], dtype=object)
    statuses = np.array([None, "OK", "ERROR", "UNSET"], dtype=object)
    schema = polars_schema()
    ids = [f"{i:016x}" for i in range(n)] * 2
    copies = pl.DataFrame(
        {
            "trace_id": [f"{i:032x}" for i in range(n)] * 2,
            "span_id": ids,
            promoted_column(c.TRIAL_OUTCOME): rng.choice(outcomes, 2 * n).tolist(),
            "status_code": rng.choice(statuses, 2 * n).tolist(),
            # ends close together (ties within 4 ns) and far apart
            "end_time_unix_nano": (
                1_750_000_000_000_000_000
                + rng.integers(0, 12, 2 * n) * rng.choice([1, 10**6], 2 * n)
            ).tolist(),
        }
    )
    spans = pl.DataFrame(schema=schema).vstack(
        copies.select(pl.col(k).cast(schema[k]) for k in copies.columns).pipe(
            lambda f: f.with_columns(
                [pl.lit(None, schema[k]).alias(k) for k in schema if k not in f.columns]
            ).select(list(schema))
        )
    )
    ranked = spans.with_columns(rule_rank().alias("_rank"), pl.int_range(pl.len()).alias("_row"))
    kept = one_copy_each(ranked.lazy()).collect()
    best = ranked.group_by("span_id").agg(
        pl.col("_rank").max().alias("_best"), pl.col("_rank").n_unique().alias("_ranks")
    )
    checked = kept.join(best, on="span_id").filter(pl.col("_ranks") > 1)
    assert checked.height > n // 2  # most pairs differ in rank
    assert (checked["_rank"] == checked["_best"]).all()
