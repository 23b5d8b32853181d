"""``assay.analyze`` and ``assay.compare``: what the CLI does, each as one Python call."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import polars as pl

from assay._assemble import regression_result, test_result, with_regression
from assay._options import AnalyzeOptions, ErrorsPolicy
from assay.analysis import Engine, engine_trials
from assay.analysis import columns as tc
from assay.errors import ConfigError, InputError
from assay.stats import false_verdict_risk, simultaneous_confidence
from assay.store import TraceSet, open_trace_set
from assay.verdict import AnalysisResult, TestResult, adjust_regressions

Paths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]

__all__ = ["Analysis", "AnalyzeOptions", "ErrorsPolicy", "analyze", "compare"]


@dataclass(frozen=True, slots=True)
class Analysis:
    """The outcome of :func:`analyze` or :func:`compare`: tables, and results for reports."""

    trials: pl.DataFrame
    """The trials table: one row per trial (of the current version, when comparing)."""
    tests: pl.DataFrame
    """The per-test table: n, passed, errors, pass rate, interval, verdict."""
    result: AnalysisResult
    """Per-test results with every figure, as the reports render them."""
    trace_set: TraceSet
    """The files that were read (and any skipped)."""
    baseline_trials: pl.DataFrame | None = None
    """The baseline's trials, when comparing."""

    def to_dict(self) -> dict[str, Any]:
        """The ``assay.analysis/v1`` document as a dict."""
        from assay.report import analysis_to_dict

        return analysis_to_dict(self.result)

    def to_json(self) -> str:
        """Exactly what ``assay analyze --format json`` prints."""
        from assay.report import render_json

        return render_json(self.result)

    def exit_code(self, inconclusive_ok: bool = False) -> int:
        """The exit code the CLI would end with."""
        return self.result.exit_code(inconclusive_ok)


def _options(overrides: dict[str, Any]) -> AnalyzeOptions:
    known = {f.name for f in fields(AnalyzeOptions)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ConfigError(f"unknown option(s): {', '.join(unknown)}")
    if "ks" in overrides:
        overrides["ks"] = tuple(overrides["ks"])
    options = AnalyzeOptions(**overrides)
    options.validate()
    return options


def _read_trials(
    paths: Paths,
    options: AnalyzeOptions,
    skip_bad_files: bool,
    engine: Engine | str = Engine.LOCAL,
    spark_master: str | None = None,
) -> tuple[TraceSet, pl.DataFrame]:
    trace_set = open_trace_set(paths, skip_bad_files=skip_bad_files)
    try:
        trials = engine_trials(
            trace_set,
            engine=engine,
            min_score=options.min_score,
            test_attribute=options.test_attribute,
            spark_master=spark_master,
        )
    except pl.exceptions.PolarsError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(f"could not read the trace set: {first}") from exc
    return trace_set, trials


def _by_test(trials: pl.DataFrame) -> dict[str, pl.DataFrame]:
    return {str(key[0]): frame for key, frame in trials.group_by(tc.TEST_ID, maintain_order=True)}


def _suite_notes(options: AnalyzeOptions, tests: int) -> tuple[float, list[str]]:
    """The interval confidence to use across the suite, and a note on chance verdicts."""
    confidence = options.confidence
    notes: list[str] = []
    if options.adjust != "none" and tests > 1:
        # Holm and BH have no interval form: the intervals use the Bonferroni level, which
        # keeps the chance of any false threshold verdict at 1 - confidence.
        confidence = simultaneous_confidence(options.confidence, tests)
        notes.append(
            f"intervals at {confidence:.4g} confidence each (Bonferroni over {tests} tests), "
            f"so all hold together at {options.confidence:g}"
        )
    elif tests >= 10:
        risk = false_verdict_risk(tests, 1 - options.confidence, "none")
        notes.append(risk.note)
    return confidence, notes


def _results(
    per_test: dict[str, pl.DataFrame],
    options: AnalyzeOptions,
    baseline: dict[str, pl.DataFrame] | None,
) -> tuple[tuple[TestResult, ...], list[str]]:
    confidence, notes = _suite_notes(options, len(per_test))
    judged = AnalyzeOptions(**{**_as_dict(options), "confidence": confidence})
    results = {name: test_result(name, frame, judged) for name, frame in sorted(per_test.items())}
    if baseline is not None:
        pairs = {
            name: regression_result(baseline[name], per_test[name], options)
            for name in results
            if name in baseline
        }
        rated = [p[0] for p in pairs.values() if p[0] is not None]
        adjusted = iter(adjust_regressions(rated, options.adjust))
        for name, (rate, scores) in pairs.items():
            results[name] = with_regression(
                results[name], next(adjusted) if rate is not None else None, scores
            )
        new = sorted(set(per_test) - set(baseline))
        gone = sorted(set(baseline) - set(per_test))
        if new:
            notes.append(f"no baseline for {', '.join(new)}: judged against the threshold only")
        if gone:
            notes.append(f"in the baseline only, not judged: {', '.join(gone)}")
    return tuple(results.values()), notes


def _as_dict(options: AnalyzeOptions) -> dict[str, Any]:
    return {f.name: getattr(options, f.name) for f in fields(AnalyzeOptions)}


def _analysis(
    trace_set: TraceSet,
    trials: pl.DataFrame,
    options: AnalyzeOptions,
    baseline_trials: pl.DataFrame | None,
    extra_options: dict[str, Any],
    skipped: Sequence[tuple[str, str]] = (),
) -> Analysis:
    baseline = _by_test(baseline_trials) if baseline_trials is not None else None
    tests, notes = _results(_by_test(trials), options, baseline)
    result = AnalysisResult(
        tests=tests,
        options={**_as_dict(options), "ks": list(options.ks), **extra_options},
        skipped_files=tuple((f.path, f.reason) for f in trace_set.skipped) + tuple(skipped),
        notes=tuple(notes),
    )
    return Analysis(trials, _tests_table(result), result, trace_set, baseline_trials)


def analyze(
    paths: Paths,
    *,
    skip_bad_files: bool = False,
    baseline_version: str | None = None,
    current_version: str | None = None,
    engine: Engine | str = Engine.LOCAL,
    spark_master: str | None = None,
    **options: Any,
) -> Analysis:
    """Read a trace set and give every test its verdict.

    Args:
        paths: Folders, globs or spans files (see :func:`assay.store.open_trace_set`).
        skip_bad_files: Skip unreadable files (listed in the result) instead of failing.
        baseline_version: Compare against the trials of this ``assay.agent.version``; each
            test's verdict then answers "did it get worse?" (see :func:`compare`).
        current_version: The version under test when the set holds more than two.
        engine: Where spans become trials: ``local`` (here, bucket by bucket) or ``spark``
            (see ``docs/scale.md``); the statistics are the same either way.
        spark_master: The Spark master URL for ``engine="spark"``.
        **options: Any field of :class:`AnalyzeOptions` — ``threshold=0.8``,
            ``confidence=0.95``, ``ci_method="wilson"``, ``errors="count"``, ``ks=(1, 5, 10)``,
            ``regression_test="boschloo"``, ``delta=0.1``, ...

    Returns:
        An :class:`Analysis` with the trials and per-test tables and the results.

    Raises:
        InputError: Unreadable input (a missing path, a corrupt file, no trial spans).
        ConfigError: A bad option.
    """
    settings = _options(options)
    trace_set, trials = _read_trials(paths, settings, skip_bad_files, engine, spark_master)
    if baseline_version is None:
        if current_version is not None:
            trials = _version(trials, current_version)
        return _analysis(trace_set, trials, settings, None, {})
    baseline = _version(trials, baseline_version)
    if current_version is None:
        others = sorted(
            v for v in trials[tc.AGENT_VERSION].unique().to_list() if v != baseline_version
        )
        if len(others) != 1:
            shown = ", ".join(str(v) for v in others) or "none"
            raise ConfigError(
                f"--baseline-version {baseline_version}: need exactly one other "
                f"assay.agent.version to compare (found {shown}); name it with --current-version"
            )
        current_version = others[0]
    current = _version(trials, current_version)
    return _analysis(
        trace_set,
        current,
        settings,
        baseline,
        {"baseline_version": baseline_version, "current_version": current_version},
    )


def compare(
    baseline: Paths,
    current: Paths,
    *,
    skip_bad_files: bool = False,
    **options: Any,
) -> Analysis:
    """Regression verdicts between two trace sets: did the current one get worse?

    Per test, a one-sided exact test (Boschloo by default) asks whether the current pass rate
    is below the baseline's: FAIL if it rejects at ``alpha``; PASS if it does not and the test
    had at least ``power`` to detect a drop of ``delta``; INCONCLUSIVE otherwise. The threshold
    verdict of the current set is kept beside it.

    Args:
        baseline: The baseline trace set.
        current: The trace set under test.
        skip_bad_files: Skip unreadable files instead of failing.
        **options: Fields of :class:`AnalyzeOptions`, as for :func:`analyze`.
    """
    settings = _options(options)
    base_set, base_trials = _read_trials(baseline, settings, skip_bad_files)
    trace_set, trials = _read_trials(current, settings, skip_bad_files)
    skipped = tuple((f.path, f.reason) for f in base_set.skipped)
    return _analysis(trace_set, trials, settings, base_trials, {}, skipped)


def _version(trials: pl.DataFrame, version: str) -> pl.DataFrame:
    chosen = trials.filter(pl.col(tc.AGENT_VERSION) == version)
    if chosen.height == 0:
        known = sorted(str(v) for v in trials[tc.AGENT_VERSION].unique().to_list())
        raise ConfigError(
            f"no trials of assay.agent.version {version!r} (versions in the set: "
            f"{', '.join(known) or 'none'})"
        )
    return chosen


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
                "regression_p_value": t.regression.p_value if t.regression else None,
                "regression_power": t.regression.power if t.regression else None,
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
            "regression_p_value": pl.Float64,
            "regression_power": pl.Float64,
        },
    )
