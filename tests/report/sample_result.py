"""A deterministic analysis result for the report tests, built from the real dataclasses.

Every figure comes from the function that produces it in an analysis (``score_summary``,
``tool_consistency``, ``flakiness``, ``explain_failures``, ``regression_test``, the sequential
replay) run on fixed data, so the reports are tested on the shapes the engine produces. It
holds every case a report must render: a FAIL with every figure filled and a regression, an
INCONCLUSIVE with two named scores and notes, a PASS where adaptive stopping ended (its
anytime-valid interval, reason), and a test whose every trial was an error (n = 0). One test
id carries the characters each format must escape.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import numpy as np

from assay.judge import (
    AnalysisResult,
    DurationSummary,
    SequentialDesign,
    SequentialOutcome,
    SequentialTracker,
    TestResult,
    Usage,
    Verdict,
    anytime_interval,
    regression_test,
    threshold_verdict,
)
from assay.judge._pipeline import with_regression
from assay.judge._reasons import anytime_reason, threshold_reason, with_errors
from assay.quality import DataQuality, Finding
from assay.stats import (
    explain_failures,
    flakiness,
    score_summary,
    tool_consistency,
    wilson_interval,
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
    interval = figures.pop("interval", wilson_interval(passed, n) if n else None)
    verdict = threshold_verdict(interval, 0.8).verdict if interval else Verdict.INCONCLUSIVE
    return TestResult(
        test_id=test_id,
        n=n,
        passed=passed,
        errors=errors,
        pass_rate=passed / n if n else None,
        interval=interval,
        threshold=0.8,
        verdict=figures.pop("verdict", verdict),
        verdict_reason=figures.pop(
            "verdict_reason",
            with_errors(threshold_reason(verdict, passed, n, interval, 0.8), errors),
        ),
        trials=n + errors,
        usage=Usage(llm_calls=2 * (n + errors), input_tokens=400 * n, output_tokens=90 * n),
        duration_s=DurationSummary(mean=1.25, p90=2.5),
        **figures,
    )


def _checkout() -> TestResult:
    """A FAIL: 12 of 30 passed, failing trials search twice; a regression from 27 of 30."""
    passed = np.array([i % 5 in (0, 2) for i in range(30)])
    sequences = [
        ("cart", "search", "pay") if ok else ("cart", "search", "search", "pay") for ok in passed
    ]
    quality = np.array([80.0 + i % 7 if ok else 45.0 + i for i, ok in enumerate(passed)])
    errors = np.array([i in (7, 19) for i in range(30)])
    searches = np.array([s.count("search") for s in sequences], dtype=float)
    explanations = tuple(explain_failures(passed, {"tool_count:search": searches}))
    summary = score_summary(quality)
    judged = _test(
        "checkout-flow",
        12,
        30,
        errors=2,
        pass_at_k={"1": 0.4, "3": 0.81, "5": 0.94},
        pass_hat_k={"1": 0.4, "3": 0.058, "5": None},
        score=summary,
        primary_score="quality",
        scores={"quality": summary},
        tool_consistency=tool_consistency(sequences),
        flakiness=flakiness(
            passed, errors=errors, scores=quality, tool_sequences=sequences, step_counts=searches
        ),
        failure_explanations=explanations,
        first_error="trial 7: payment API timed out",
    )
    return with_regression(judged, regression_test(27, 30, 12, 30), None)


def _escaped() -> TestResult:
    """An INCONCLUSIVE with two named scores, one steady tool path and a note."""
    quality = score_summary(np.linspace(40.0, 99.0, 24))
    latency = score_summary(np.linspace(0.7, 1.0, 24))
    sequences = [("search", "answer")] * 25 + [("answer",)] * 5
    return _test(
        ESCAPED_ID,
        24,
        30,
        tool_consistency=tool_consistency(sequences),
        flakiness=flakiness(np.array([i % 5 != 0 for i in range(30)]), tool_sequences=sequences),
        score=quality,
        primary_score="quality",
        scores={"latency_score": latency, "quality": quality},
        more_trials_needed=45,
        notes=("about 45 more trials would likely settle it",),
    )


def _greeting() -> TestResult:
    """A PASS where the confidence sequence stopped: the anytime-valid interval beside it."""
    design = SequentialDesign.of("confidence-sequence", 0.8, 60)
    tracker = SequentialTracker(design.build())
    while tracker.decision is None:
        tracker.feed(True, False)
    n = tracker.counted
    outcome = SequentialOutcome(design, tracker.decision, tracker.decided_at, tracker.fed)
    interval = anytime_interval(n, n, design, 0.95)
    verdict = threshold_verdict(interval, 0.8).verdict
    return _test(
        "greeting",
        n,
        n,
        interval=interval,
        verdict=verdict,
        verdict_reason=anytime_reason(verdict, n, n, interval, 0.8, outcome),
        sequential=outcome,
    )


def build_result() -> AnalysisResult:
    all_errors = dataclasses.replace(
        _test("flaky-backend", 0, 0, errors=5),
        verdict_reason="no trials left to judge: every trial was an error and errors are excluded",
        first_error="trial 0: ConnectionRefusedError",
    )
    return AnalysisResult(
        tests=(_checkout(), all_errors, _greeting(), _escaped()),
        options={"threshold": 0.8, "confidence": 0.95, "ci_method": "wilson", "errors": "count"},
        skipped_files=(("traces/broken.parquet", "not a readable Parquet file"),),
        data_quality=DataQuality(
            (
                Finding("incomplete_traces", "3 traces have spans whose parent is absent", 3),
                Finding("duplicate_spans", "2 duplicated spans collapsed", 2, severity="info"),
            )
        ),
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
                "work_unknown": False,
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
                "work_unknown": False,
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
