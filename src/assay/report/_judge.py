"""The judge's agreement with people, and a verdict's corrected rate, as JSON objects."""

from __future__ import annotations

from typing import Any

from assay.judge import JudgeError, JudgeReport, ScoreCorrection
from assay.stats import Interval
from assay.stats.judges import Agreement


def _ci(interval: Interval | None) -> dict[str, Any] | None:
    if interval is None:
        return None
    return {
        "method": interval.method,
        "confidence": interval.confidence,
        "low": interval.low,
        "high": interval.high,
    }


def _finite(value: float | None) -> float | None:
    return value if value is not None and value == value else None


def agreement_to_dict(agreement: Agreement) -> dict[str, Any]:
    """The 2×2 table, sensitivity and specificity (exact CIs) and kappa (its CI)."""
    kappa = agreement.kappa
    return {
        "labelled": agreement.labelled,
        "table": {
            "true_pass": agreement.true_pass,
            "false_fail": agreement.false_fail,
            "false_pass": agreement.false_pass,
            "true_fail": agreement.true_fail,
        },
        "sensitivity": {
            "estimate": agreement.sensitivity,
            "ci": _ci(agreement.sensitivity_interval),
        },
        "specificity": {
            "estimate": agreement.specificity,
            "ci": _ci(agreement.specificity_interval),
        },
        "kappa": {"estimate": _finite(kappa.estimate), "ci": _ci(kappa.interval)},
    }


def judge_error_to_dict(judge: JudgeError | None) -> dict[str, Any] | None:
    """A test's ``judge_error`` object: the judge's own figures and the correction."""
    if judge is None:
        return None
    corrected = judge.corrected
    return {
        "judge_only": {
            "pass_rate": judge.judge_rate,
            "ci": _ci(judge.judge_interval),
            "verdict": judge.judge_verdict.value,
        },
        "corrected": {
            "identifiable": corrected.identifiable,
            "reason": corrected.reason,
            "estimate_among_graded": corrected.estimate,
            "ci_among_graded": _ci(corrected.interval),
            "graded": corrected.judged,
            "graded_passed": corrected.judged_passed,
            "graded_share": judge.graded_share,
        },
        "agreement_used": agreement_to_dict(judge.used),
        "test_agreement": (
            agreement_to_dict(judge.test_agreement) if judge.test_agreement else None
        ),
    }


def judge_scores_to_dict(scores: tuple[ScoreCorrection, ...]) -> list[dict[str, Any]]:
    """A test's ``judge_scores``: each judged score's mean corrected by people's (PPI++)."""
    return [
        {
            "evaluation": s.evaluation,
            "estimate": s.mean.estimate,
            "ci": _ci(s.mean.interval),
            "tuning": s.mean.tuning,
            "labelled": s.mean.labelled,
            "unlabelled": s.mean.unlabelled,
            "judge_mean": s.mean.judge_mean,
        }
        for s in scores
    ]


def judge_report_to_dict(report: JudgeReport | None) -> dict[str, Any] | None:
    """The analysis's ``judge`` object: agreement overall and per evaluation."""
    if report is None:
        return None
    return {
        "labels": report.labels,
        "labelled_trials": report.labelled_trials,
        "evaluations": list(report.overall.evaluations),
        "agreement": agreement_to_dict(report.overall.agreement),
        "by_evaluation": {name: agreement_to_dict(a) for name, a in report.by_evaluation.items()},
        "self_agreement": [
            {
                "evaluation": own.evaluation,
                "trials": own.trials,
                "flipped": own.flipped,
                "flip_rate": own.flip_rate,
                "ci": _ci(own.interval),
            }
            for own in report.self_agreement
        ],
        "min_agreement": report.min_agreement,
        "graders": [
            {
                "evaluation": g.evaluation,
                "model": g.model,
                "prompt_version": g.prompt_version,
                "records": g.records,
            }
            for g in report.graders
        ],
    }
