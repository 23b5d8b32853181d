"""The ``assay.analysis/v1`` JSON document: a stable contract for programs (docs/json.md)."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from typing import Any

from assay.judge import AnalysisResult, TestResult
from assay.report._behaviour import behaviour_to_dict, cost_to_dict

SCHEMA = "assay.analysis/v1"


def _plain(value: Any) -> Any:
    """Dataclasses, enums and tuples as JSON-ready values; NaN/inf as null."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _plain(value.item())
    return value


def _sequential(test: TestResult) -> dict[str, Any] | None:
    outcome = test.sequential
    if outcome is None:
        return None
    interval = test.interval
    return {
        **_plain(outcome.design),
        "decision": outcome.decision.value,
        "decided_at": outcome.decided_at,
        "trials": outcome.trials,
        # The verdict's interval (= ci): kept under its earlier name too.
        "anytime_ci": {
            "low": interval.low if interval else None,
            "high": interval.high if interval else None,
        },
    }


def test_to_dict(test: TestResult) -> dict[str, Any]:
    """One test's object of the ``assay.analysis/v1`` document."""
    interval = test.interval
    return {
        "test_id": test.test_id,
        "n": test.n,
        "passed": test.passed,
        "errors": test.errors,
        "trials": test.trials,
        "pass_rate": test.pass_rate,
        "ci": {
            "method": interval.method if interval else None,
            "confidence": interval.confidence if interval else None,
            "low": interval.low if interval else None,
            "high": interval.high if interval else None,
        },
        "threshold": test.threshold,
        "verdict": test.verdict.value,
        "verdict_reason": test.verdict_reason,
        "sequential": _sequential(test),
        "pass_at_k": _plain(test.pass_at_k),
        "pass_hat_k": _plain(test.pass_hat_k),
        "score": _plain(test.score),
        "primary_score": test.primary_score,
        "scores": _plain(test.scores),
        "tool_consistency": _plain(test.tool_consistency),
        "flakiness": _plain(test.flakiness),
        "failure_explanations": _plain(test.failure_explanations),
        "variance_checks": _plain(test.variance_checks),
        "more_trials_needed": test.more_trials_needed,
        "min_trials_for_pass": test.min_trials_for_pass,
        "usage": _plain(test.usage),
        "duration_s": _plain(test.duration_s),
        "first_error": test.first_error,
        "regression": _plain(test.regression),
        "score_regression": _plain(test.score_regression),
        "threshold_verdict": _plain(test.threshold_verdict),
        "behaviour": behaviour_to_dict(test.behaviour) if test.behaviour else None,
        "cost": cost_to_dict(test.cost) if test.cost else None,
        "notes": list(test.notes),
        "tool_errors": _plain(test.tool_errors),
        "runs": _plain(test.runs),
        "agent_versions": _plain(test.agent_versions),
        "work_unknown": test.work_unknown,
    }


test_to_dict.__test__ = False  # type: ignore[attr-defined]


def analysis_to_dict(result: AnalysisResult) -> dict[str, Any]:
    """The whole ``assay.analysis/v1`` document as a dict."""
    return {
        "schema": SCHEMA,
        "options": _plain(result.options),
        "tests": [test_to_dict(t) for t in result.tests],
        "summary": {"tests": len(result.tests), **result.counts},
        "skipped_files": [{"path": p, "reason": r} for p, r in result.skipped_files],
        "data_quality": _plain(result.data_quality),
        "notes": list(result.notes),
    }


def render_json(result: AnalysisResult) -> str:
    """The ``assay.analysis/v1`` document as JSON text (what ``--format json`` prints)."""
    return json.dumps(analysis_to_dict(result), indent=2, allow_nan=False) + "\n"
