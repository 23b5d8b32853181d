"""``assay.analyze``: everything ``assay analyze`` does, as one Python call."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl

from assay.analysis import columns as tc
from assay.analysis import trials_from_spans
from assay.errors import ConfigError, InputError
from assay.stats import wilson_interval
from assay.store import TraceSet, open_trace_set
from assay.verdict import (
    AnalysisResult,
    DurationSummary,
    TestResult,
    Usage,
    Verdict,
    threshold_verdict,
)

ErrorsPolicy = Literal["count", "exclude"]


@dataclass(frozen=True, slots=True)
class AnalyzeOptions:
    """Options of an analysis (each one a flag of ``assay analyze``)."""

    threshold: float = 0.80
    """Required pass rate."""
    confidence: float = 0.95
    """Two-sided confidence level of the pass-rate interval."""
    errors: ErrorsPolicy = "count"
    """``count`` error trials as failures, or ``exclude`` them from n."""
    min_score: float | None = None
    """A score below this fails a trial that has no explicit outcome."""
    test_attribute: str = "assay.test.id"
    """The span attribute that names the test (another one maps production traces)."""

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first bad option."""
        if not 0 <= self.threshold <= 1:
            raise ConfigError(f"--threshold must lie in [0, 1] (got {self.threshold})")
        if not 0 < self.confidence < 1:
            raise ConfigError(
                f"--confidence must lie strictly between 0 and 1 (got {self.confidence})"
            )
        if self.errors not in ("count", "exclude"):
            raise ConfigError(f"--errors must be 'count' or 'exclude' (got {self.errors!r})")


@dataclass(frozen=True, slots=True)
class Analysis:
    """The outcome of :func:`analyze`: tables for notebooks, results for reports."""

    trials: pl.DataFrame
    """The trials table: one row per trial."""
    tests: pl.DataFrame
    """The per-test table: n, passed, errors, pass rate, interval, verdict."""
    result: AnalysisResult
    """Per-test results with every figure, as the reports render them."""
    trace_set: TraceSet
    """The files that were read (and any skipped)."""

    def to_dict(self) -> dict[str, Any]:
        """The ``assay.analysis/v1`` document as a dict."""
        from assay.report import analysis_to_dict

        return analysis_to_dict(self.result)

    def to_json(self) -> str:
        """Exactly what ``assay analyze --format json`` prints."""
        from assay.report import render_json

        return render_json(self.result)

    def exit_code(self, inconclusive_ok: bool = False) -> int:
        """The exit code ``assay analyze`` would end with."""
        return self.result.exit_code(inconclusive_ok)


def analyze(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    threshold: float = 0.80,
    confidence: float = 0.95,
    errors: ErrorsPolicy = "count",
    min_score: float | None = None,
    skip_bad_files: bool = False,
    test_attribute: str = "assay.test.id",
) -> Analysis:
    """Read a trace set and give every test its verdict.

    Args:
        paths: Folders, globs or spans files (see :func:`assay.store.open_trace_set`).
        threshold: Required pass rate.
        confidence: Two-sided confidence level of the Wilson interval.
        errors: ``count`` error trials as failures (default) or ``exclude`` them.
        min_score: Fail trials (without an explicit outcome) that have a score below this.
        skip_bad_files: Skip unreadable files (listed in the result) instead of failing.
        test_attribute: The span attribute that names the test; e.g. ``gen_ai.agent.name``
            analyses production traces that carry no ``assay.*`` attributes.

    Returns:
        An :class:`Analysis` with the trials and per-test tables and the results.

    Raises:
        InputError: Unreadable input (a missing path, a corrupt file, no trial spans).
        ConfigError: A bad option.
    """
    options = AnalyzeOptions(threshold, confidence, errors, min_score, test_attribute)
    options.validate()
    trace_set = open_trace_set(paths, skip_bad_files=skip_bad_files)
    try:
        trials = trials_from_spans(
            trace_set.scan(), min_score=min_score, test_attribute=test_attribute
        )
    except pl.exceptions.PolarsError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(f"could not read the trace set: {first}") from exc
    results = tuple(
        _test_result(test_id, frame, options)
        for (test_id,), frame in trials.group_by(tc.TEST_ID, maintain_order=True)
    )
    result = AnalysisResult(
        tests=tuple(sorted(results, key=lambda r: r.test_id)),
        options={
            "threshold": threshold,
            "confidence": confidence,
            "ci_method": "wilson",
            "errors": errors,
            "min_score": min_score,
            "test_attribute": test_attribute,
        },
        skipped_files=tuple((f.path, f.reason) for f in trace_set.skipped),
    )
    return Analysis(trials, _tests_table(result), result, trace_set)


def _test_result(test_id: Any, trials: pl.DataFrame, options: AnalyzeOptions) -> TestResult:
    errors = int(trials[tc.ERROR].sum())
    counted = trials.filter(~pl.col(tc.ERROR)) if options.errors == "exclude" else trials
    n = counted.height
    passed = int(counted[tc.PASSED].sum())
    durations = trials[tc.DURATION_S].drop_nulls().to_numpy()
    usage = Usage(
        llm_calls=int(trials[tc.LLM_CALLS].sum()),
        input_tokens=int(trials[tc.INPUT_TOKENS].sum()),
        output_tokens=int(trials[tc.OUTPUT_TOKENS].sum()),
    )
    duration = DurationSummary(
        mean=float(np.mean(durations)) if durations.size else None,
        p90=float(np.percentile(durations, 90)) if durations.size else None,
    )
    if n == 0:
        return TestResult(
            test_id=str(test_id),
            n=0,
            passed=0,
            errors=errors,
            pass_rate=None,
            interval=None,
            threshold=options.threshold,
            verdict=Verdict.INCONCLUSIVE,
            usage=usage,
            duration_s=duration,
            notes=("no trials left to judge: every trial was an error and errors are excluded",),
        )
    interval = wilson_interval(passed, n, options.confidence)
    decided = threshold_verdict(interval, options.threshold)
    return TestResult(
        test_id=str(test_id),
        n=n,
        passed=passed,
        errors=errors,
        pass_rate=passed / n,
        interval=interval,
        threshold=options.threshold,
        verdict=decided.verdict,
        usage=usage,
        duration_s=duration,
    )


def _tests_table(result: AnalysisResult) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "test_id": t.test_id,
                "n": t.n,
                "passed": t.passed,
                "errors": t.errors,
                "pass_rate": t.pass_rate,
                "ci_low": t.interval.low if t.interval else None,
                "ci_high": t.interval.high if t.interval else None,
                "threshold": t.threshold,
                "verdict": t.verdict.value,
            }
            for t in result.tests
        ],
        schema={
            "test_id": pl.String,
            "n": pl.Int64,
            "passed": pl.Int64,
            "errors": pl.Int64,
            "pass_rate": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "threshold": pl.Float64,
            "verdict": pl.String,
        },
    )
