"""The ``assay.analysis/v1`` JSON document: a stable contract for programs (docs/json.md)."""

from __future__ import annotations

import dataclasses
import enum
import math
import operator
from collections.abc import Callable
from typing import Any

from assay._json_text import json_bytes
from assay.judge import (
    AnalysisResult,
    SuiteBehaviour,
    SuiteComparison,
    SuiteEstimate,
    SuiteResult,
    TestResult,
    Verdict,
    collector_paused,
)
from assay.report._behaviour import behaviour_to_dict, cost_to_dict
from assay.report._judge import (
    judge_error_to_dict,
    judge_report_to_dict,
    judge_scores_to_dict,
)

SCHEMA = "assay.analysis/v1"


def _plain(value: Any) -> Any:
    """Dataclasses, enums and tuples as JSON-ready values; NaN/inf as null."""
    kind = type(value)
    if kind in _AS_IS:
        return value  # the most common values first, without the checks below
    if kind is float:
        return value if value - value == 0.0 else None  # inf - inf and NaN are NaN
    if kind not in _FIELDS:
        _FIELDS[kind] = _fields(value)
    fields = _FIELDS[kind]
    if fields is not None:
        names, read = fields
        return {
            name: item if type(item) in _AS_IS else _plain(item)
            for name, item in zip(names, read(value), strict=True)
        }
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [item if type(item) in _AS_IS else _plain(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _plain(value.item())
    return value


_AS_IS = frozenset({str, int, bool, type(None)})
"""Types :func:`_plain` returns as they are (exact types: an enum is a subclass)."""
_FIELDS: dict[type, tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]] | None] = {}
"""Per type: its dataclass fields' names and a reader of their values; None for no dataclass."""


def _fields(value: Any) -> tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]] | None:
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return None
    names = tuple(f.name for f in dataclasses.fields(value))
    if len(names) == 1:
        (name,) = names
        return names, lambda v: (getattr(v, name),)
    return names, operator.attrgetter(*names) if names else (lambda v: ())


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
        "judge_error": judge_error_to_dict(test.judge_error),
        "judge_scores": judge_scores_to_dict(test.judge_scores),
    }


test_to_dict.__test__ = False  # type: ignore[attr-defined]


def _interval(interval: Any) -> dict[str, Any]:
    return {
        "low": interval.low if interval else None,
        "high": interval.high if interval else None,
        "method": interval.method if interval else None,
        "confidence": interval.confidence if interval else None,
    }


def _estimate(estimate: SuiteEstimate | None) -> dict[str, Any] | None:
    if estimate is None:
        return None
    return {
        "value": estimate.value,
        "cases": estimate.cases,
        "interval": _interval(estimate.interval),
    }


def _comparison(comparison: SuiteComparison | None) -> dict[str, Any] | None:
    if comparison is None:
        return None
    paired = comparison.paired

    def shift(figure: Any) -> dict[str, Any] | None:
        if figure is None:
            return None
        return {
            "difference": figure.difference,
            "interval": _interval(figure.interval),
            "p_value": figure.p_value,
            "cases": figure.cases,
        }

    return {
        "baseline_cases": comparison.baseline_cases,
        "current_cases": comparison.current_cases,
        "paired_cases": comparison.paired_cases,
        "unpaired_cases": comparison.unpaired_cases,
        "only_baseline": list(comparison.only_baseline),
        "only_current": list(comparison.only_current),
        "difference": comparison.difference,
        "interval": _interval(comparison.interval),
        "test": comparison.test,
        "p_value": comparison.p_value,
        "p_value_error": paired.p_value_error if paired else None,
        "power": comparison.power,
        "delta": comparison.delta,
        "min_detectable_drop": comparison.min_detectable_drop,
        "drop_bounds": (
            {"lower": paired.drop_lower, "upper": paired.drop_upper} if paired else None
        ),
        "margin": comparison.margin,
        "verdict": comparison.verdict.value,
        "reason": comparison.reason,
        "score": shift(comparison.score),
        "cost_usd": shift(comparison.cost_usd),
        "cost_usd_reason": comparison.cost_usd_reason,
        "duration_s": shift(comparison.duration_s),
        "moved": [{"test_id": t, "difference": d} for t, d in comparison.moved],
        "missing_current": list(comparison.missing_current),
        "baseline_silent": list(comparison.baseline_silent),
        "worst_case": _worst_case(comparison),
        "behaviour": _suite_behaviour(comparison.behaviour),
    }


def _suite_behaviour(behaviour: SuiteBehaviour | None) -> dict[str, Any] | None:
    """The suite's behaviour diff: its verdict and every feature's mean paired change."""
    if behaviour is None:
        return None
    return {
        "verdict": behaviour.verdict.value,
        "reason": behaviour.reason,
        "cases": behaviour.cases,
        "alpha": behaviour.alpha,
        "adjustment": behaviour.adjustment,
        "required_power": behaviour.required_power,
        "left_out": list(behaviour.left_out),
        "fail_on": list(behaviour.fail_on),
        "features": [
            {
                "feature": f.feature,
                "label": f.label,
                "kind": f.kind,
                "baseline": f.baseline,
                "current": f.current,
                "difference": f.difference,
                "relative": f.relative,
                "interval": _interval(f.interval),
                "test": f.test,
                "p_value": f.p_value,
                "p_value_error": f.p_value_error,
                "adjusted_p": f.adjusted_p,
                "changed": f.changed,
                "minimal_effect": f.minimal_effect,
                "power": f.power,
                "detectable": f.detectable,
            }
            for f in behaviour.features
        ],
    }


def _worst_case(comparison: SuiteComparison) -> dict[str, Any] | None:
    """The comparison with the current version's missing cases counted as failures."""
    worst = comparison.worst_case
    if worst is None or comparison.worst_case_verdict is None:
        return None
    return {
        "cases": worst.cases,
        "difference": worst.difference,
        "interval": _interval(worst.interval),
        "p_value": worst.p_value,
        "drop_bounds": {"lower": worst.drop_lower, "upper": worst.drop_upper},
        "verdict": comparison.worst_case_verdict.value,
    }


def suite_to_dict(suite: SuiteResult) -> dict[str, Any]:
    """One suite's object of the document's ``suites`` list (docs/json.md)."""
    return {
        "suite": suite.suite,
        "cases": suite.cases,
        "trials": suite.trials,
        "pass_rate": suite.pass_rate,
        "interval": _interval(suite.interval),
        "threshold": suite.threshold,
        "verdict": suite.verdict.value,
        "reason": suite.reason,
        "score": _estimate(suite.score),
        "score_name": suite.score_name,
        "pass_at_k": {k: _estimate(v) for k, v in (suite.pass_at_k or {}).items()},
        "pass_hat_k": {k: _estimate(v) for k, v in (suite.pass_hat_k or {}).items()},
        "comparison": _comparison(suite.comparison),
        "notes": list(suite.notes),
    }


def decision_to_dict(result: AnalysisResult, *, inconclusive_ok: bool = False) -> dict[str, Any]:
    """The document's ``decision``: the answer, the exit code and what decided it."""
    decision = result.decision
    return {
        "verdict": decision.verdict.value,
        "exit_code": decision.exit_code(inconclusive_ok),
        "rule": decision.rule,
        "decided_by": decision.decided_by,
        "counted": [
            {"what": c.what, "kind": c.kind, "verdict": c.verdict.value}
            for c in decision.counted
            if c.kind not in ("case", "case threshold") or c.verdict is not Verdict.PASS
        ],
        "not_counted": decision.not_counted,
        "case_tests": decision.case_tests,
    }


def analysis_to_dict(result: AnalysisResult, *, inconclusive_ok: bool = False) -> dict[str, Any]:
    """The whole ``assay.analysis/v1`` document as a dict."""
    return {
        "schema": SCHEMA,
        "decision": decision_to_dict(result, inconclusive_ok=inconclusive_ok),
        "options": _plain(result.options),
        "suites": [suite_to_dict(s) for s in result.suites],
        "tests": [test_to_dict(t) for t in result.tests],
        "summary": {"tests": len(result.tests), **result.counts},
        "skipped_files": [{"path": p, "reason": r} for p, r in result.skipped_files],
        "data_quality": _plain(result.data_quality),
        "notes": list(result.notes),
        "judge": judge_report_to_dict(result.judge),
    }


def render_json(result: AnalysisResult, *, inconclusive_ok: bool = False) -> str:
    """The ``assay.analysis/v1`` document as JSON text (what ``--format json`` prints).

    ``inconclusive_ok`` gives ``decision.exit_code`` as the command exits with
    ``--inconclusive-ok``.

    orjson writes it (``assay._json_text``; docs/architecture.md, "Parsers and encoders we
    do not write").
    """
    return render_json_bytes(result, inconclusive_ok=inconclusive_ok).decode()


def render_json_bytes(result: AnalysisResult, *, inconclusive_ok: bool = False) -> bytes:
    """:func:`render_json`'s text as UTF-8, as the CLI writes it.

    A large document is not decoded to be encoded again.
    """
    with collector_paused():  # a dict or more a figure: no garbage, many objects
        document = analysis_to_dict(result, inconclusive_ok=inconclusive_ok)
    return json_bytes(document)
