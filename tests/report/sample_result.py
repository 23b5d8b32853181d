"""A deterministic, hand-built analysis result for the report tests (no timing, no traces).

It holds every case a report must render: a FAIL with every nested figure filled (pass@k,
score, tool consistency as an object, flakiness with factors and explanations, a regression),
an INCONCLUSIVE with the other shapes (consistency as a number, per-score-name summaries), a
PASS whose nested figures are all null, and a test whose every trial was an error (n = 0). One
test id carries the characters each format must escape.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from assay.stats import wilson_interval
from assay.verdict import (
    AnalysisResult,
    DurationSummary,
    TestResult,
    Usage,
    Verdict,
    threshold_verdict,
)

GOLDEN = Path(__file__).parent / "golden"
ESCAPED_ID = 'search|answers <v2> & "co" [red]'


def check_golden(name: str, text: str) -> None:
    """Compare with ``golden/name``; ``ASSAY_REGEN_GOLDEN=1`` rewrites the file instead."""
    path = GOLDEN / name
    if os.environ.get("ASSAY_REGEN_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with ASSAY_REGEN_GOLDEN=1 to create it"
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} differs from its golden file; if the change is intended, "
        "regenerate with ASSAY_REGEN_GOLDEN=1 and review the diff"
    )


def _test(test_id: str, passed: int, n: int, errors: int = 0, **figures: Any) -> TestResult:
    interval = wilson_interval(passed, n) if n else None
    return TestResult(
        test_id=test_id,
        n=n,
        passed=passed,
        errors=errors,
        pass_rate=passed / n if n else None,
        interval=interval,
        threshold=0.8,
        verdict=threshold_verdict(interval, 0.8).verdict if interval else Verdict.INCONCLUSIVE,
        usage=Usage(llm_calls=2 * (n + errors), input_tokens=400 * n, output_tokens=90 * n),
        duration_s=DurationSummary(mean=1.25, p90=2.5),
        **figures,
    )


FLAKINESS = {
    "score": 0.52,
    "category": "flaky",
    "factors": [
        {
            "name": "outcome_instability",
            "value": 0.96,
            "detail": "outcomes split 12 pass / 18 fail: about as unpredictable as a coin",
        },
        {
            "name": "tool_path_inconsistency",
            "value": 0.61,
            "detail": "tool path varies: 4 distinct sequences in 30 trials",
        },
    ],
    "explanations": [
        {
            "feature": "tool_count:search",
            "detail": "failures call `search` twice as often (3.1 vs 1.4 per trial)",
            "p_value": 0.0004,
            "p_adjusted": 0.0012,
        }
    ],
}


def build_result() -> AnalysisResult:
    fail = _test(
        "checkout-flow",
        12,
        30,
        errors=2,
        pass_at_k={"1": 0.4, "3": 0.81, "5": 0.94},
        pass_hat_k={"1": 0.4, "3": 0.058, "5": None},
        score={
            "mean": 61.5,
            "std": 14.2,
            "min": 31.0,
            "max": 92.0,
            "p50": 60.0,
            "p90": 84.5,
            "ci_low": 56.2,
            "ci_high": 66.8,
        },
        tool_consistency={
            "agreement": 0.41,
            "distinct": 4,
            "similarity": 0.77,
            "top": [
                {"sequence": ["cart", "search", "pay"], "count": 14},
                {"sequence": ["cart", "search", "search", "pay"], "count": 9},
            ],
        },
        flakiness=FLAKINESS,
        regression={
            "test": "boschloo",
            "baseline_n": 30,
            "baseline_passed": 27,
            "p_value": 0.0003,
            "power": 0.91,
            "delta": 0.1,
            "alpha": 0.05,
            "verdict": "FAIL",
        },
    )
    inconclusive = _test(
        ESCAPED_ID,
        24,
        30,
        tool_consistency=0.83,
        flakiness={"score": 0.27, "category": "moderate_variance", "factors": []},
        notes=("about 45 more trials would likely settle it",),
        extra={
            "scores": {
                "quality": {"mean": 78.0, "ci_low": 74.1, "ci_high": 81.9, "min": 40, "max": 99},
                "latency_score": {"mean": 0.9, "std": 0.05, "min": 0.7, "max": 1.0},
            }
        },
    )
    passing = _test("greeting", 30, 30)
    all_errors = dataclasses.replace(
        _test("flaky-backend", 0, 0, errors=5),
        notes=("no trials left to judge: every trial was an error and errors are excluded",),
    )
    return AnalysisResult(
        tests=(fail, all_errors, passing, inconclusive),
        options={"threshold": 0.8, "confidence": 0.95, "ci_method": "wilson", "errors": "count"},
        skipped_files=(("traces/broken.parquet", "not a readable Parquet file"),),
    )


def build_trials() -> list[dict[str, Any]]:
    """Trials-table rows for the HTML report (two tests, scores, checks, tool sequences)."""
    rows = []
    for i in range(30):
        passed = i % 5 in (0, 2)
        sequence = ["cart", "search", "pay"] if passed else ["cart", "search", "search", "pay"]
        rows.append(
            {
                "test_id": "checkout-flow",
                "trial_index": i,
                "agent_version": "v2",
                "trace_id": f"{i:032x}",
                "passed": passed,
                "error": i in (7, 19),
                "scores": [{"name": "quality", "value": 80.0 + i % 7 if passed else 45.0 + i}],
                "checks": [{"name": "order placed", "passed": passed}],
                "tool_sequence": sequence,
                "duration_s": 1.0 + i / 10,
                "status_message": "payment API timed out" if i in (7, 19) else None,
            }
        )
    for i in range(30):
        rows.append(
            {
                "test_id": "greeting",
                "trial_index": i,
                "agent_version": "v2",
                "trace_id": f"{1000 + i:032x}",
                "passed": True,
                "error": False,
                "scores": [],
                "checks": [],
                "tool_sequence": ["hello"],
                "duration_s": 0.5,
                "status_message": None,
            }
        )
    return rows


def build_variants() -> list[dict[str, Any]]:
    return [
        {
            "test_id": "checkout-flow",
            "sequence": ["cart", "search", "search", "pay"],
            "count": 18,
            "passes": 0,
            "pass_rate": 0.0,
        },
        {
            "test_id": "checkout-flow",
            "sequence": ["cart", "search", "pay"],
            "count": 12,
            "passes": 12,
            "pass_rate": 1.0,
        },
        {"test_id": "greeting", "sequence": ["hello"], "count": 30, "passes": 30, "pass_rate": 1.0},
    ]
