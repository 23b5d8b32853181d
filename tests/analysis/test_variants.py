"""Tool-sequence variants: counts and pass rates per distinct tool path."""

from __future__ import annotations

import polars as pl

from assay.analysis import columns as tc
from assay.analysis import tool_variants


def _trials(rows: list[tuple[str, list[str], bool]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            tc.TEST_ID: [r[0] for r in rows],
            tc.TOOL_SEQUENCE: [r[1] for r in rows],
            tc.PASSED: [r[2] for r in rows],
        },
        schema={tc.TEST_ID: pl.String, tc.TOOL_SEQUENCE: pl.List(pl.String), tc.PASSED: pl.Boolean},
    )


def test_counts_passes_and_order() -> None:
    trials = _trials(
        [
            ("b", ["x"], True),
            ("a", ["s", "s", "p"], False),
            ("a", ["s", "p"], True),
            ("a", ["s", "s", "p"], False),
            ("a", ["s", "p"], True),
            ("a", ["s", "s", "p"], True),
            ("a", [], False),
        ]
    )
    variants = tool_variants(trials)
    assert variants.columns == [tc.TEST_ID, "sequence", "count", "passes", "pass_rate"]
    assert variants.rows() == [
        ("a", ["s", "s", "p"], 3, 1, 1 / 3),
        ("a", ["s", "p"], 2, 2, 1.0),
        ("a", [], 1, 0, 0.0),
        ("b", ["x"], 1, 1, 1.0),
    ]
    # Every trial is in exactly one variant.
    assert variants["count"].sum() == trials.height


def test_ties_are_ordered_by_sequence() -> None:
    trials = _trials([("t", ["b"], True), ("t", ["a"], False)])
    assert tool_variants(trials)["sequence"].to_list() == [["a"], ["b"]]


def test_empty_trials_table() -> None:
    assert tool_variants(_trials([])).height == 0
