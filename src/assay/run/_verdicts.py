"""A run's verdicts: its own traces, read back and judged as ``assay analyze`` judges them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from assay.errors import InputError
from assay.judge import AnalysisResult, DurationSummary, TestResult, Usage, Verdict
from assay.quality import Finding
from assay.run._state import TestState

if TYPE_CHECKING:
    from assay.api import Analysis


def _not_run(state: TestState, stop_reason: str | None) -> TestResult:
    """A test that finished no trial (a budget ran out before it started)."""
    return TestResult(
        test_id=state.test.id,
        n=0,
        passed=0,
        errors=0,
        pass_rate=None,
        interval=None,
        threshold=state.judgement.threshold,
        verdict=Verdict.INCONCLUSIVE,
        usage=Usage(0, 0, 0),
        duration_s=DurationSummary(None, None),
        verdict_reason=f"stopped after 0 of {state.max_runs} trials: {stop_reason or 'no trials'}",
    )


def judge_run(
    out: str,
    run_id: str,
    states: Sequence[TestState],
    stop_reason: str | None,
    warnings: Sequence[str] = (),
    findings: Sequence[Finding] = (),
    prices: str | None = None,
) -> tuple[Analysis | None, AnalysisResult]:
    """The verdict of every test of a run, from the trials it wrote to ``out``.

    The trial spans record each test's judgement (threshold, variance limits, error policy,
    sequential design), so reading them back through :func:`assay.analyze` gives the verdicts
    the live sequential test reached, at the same trial, with every figure computed once.
    ``findings`` (what the suite's files ask for that assay cannot do) join ``data_quality``;
    ``prices`` (the run's ``--prices`` file) costs each test's trials.
    """
    from assay.api import analyze
    from assay.judge import AnalyzeOptions

    analysis = None
    if any(state.records for state in states):
        try:
            analysis = analyze(out, AnalyzeOptions(prices=prices), run_id=run_id)
        except InputError:  # no trial span was written (every trial broke before its span)
            analysis = None
    judged = {t.test_id: t for t in analysis.result.tests} if analysis is not None else {}
    tests = []
    for state in states:
        test = judged.get(state.test.id)
        if test is None:
            test = _not_run(state, stop_reason)
        elif stop_reason is not None and state.decision is None:
            test = replace(test, notes=(*test.notes, f"the run stopped early: {stop_reason}"))
        tests.append(test)
    base = analysis.result if analysis is not None else AnalysisResult(tests=(), options={})
    result = replace(
        base,
        tests=tuple(sorted(tests, key=lambda t: t.test_id)),
        options={**base.options, "run_id": run_id},
        notes=(*base.notes, *warnings),
        data_quality=base.data_quality.merged(findings),  # e.g. what the suite's files ask for
    )
    return (replace(analysis, result=result) if analysis is not None else None), result
