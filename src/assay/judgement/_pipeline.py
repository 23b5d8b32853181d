"""The one per-test pipeline: trials → judgement → figures → verdicts → typed results.

``assay analyze``, ``assay compare``, ``assay run`` (on the traces it has just written) and the
pytest plugin all judge their trials here, so that they agree test by test.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import replace

import polars as pl

from assay.analysis import columns as tc
from assay.judgement._behaviour import cost_summary, with_behaviour
from assay.judgement._options import AnalyzeOptions
from assay.judgement._recorded import resolve
from assay.judgement._regression import regression_result, with_regression
from assay.judgement._verdict import judge_test, replay
from assay.stats import false_verdict_risk, simultaneous_confidence
from assay.verdict import Judgement, TestResult, adjust_regressions


def by_test(trials: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The trials of each test, by test id (sorted).

    The trials table comes sorted by test, so each test is a slice of it (no copy); a table in
    another order is grouped.
    """
    tests = trials[tc.TEST_ID]
    if tests.null_count() == 0 and tests.is_sorted():
        runs = tests.rle()
        lengths = runs.struct.field("len").to_list()
        names = runs.struct.field("value").to_list()
        starts = [0, *itertools.accumulate(lengths)]
        return {str(n): trials.slice(a, k) for n, a, k in zip(names, starts, lengths, strict=False)}
    groups = {str(k[0]): f for k, f in trials.group_by(tc.TEST_ID, maintain_order=True)}
    return dict(sorted(groups.items()))


def _suite_confidence(confidence: float, options: AnalyzeOptions, tests: int) -> float:
    # Holm and BH have no interval form: the intervals use the Bonferroni level, which keeps
    # the chance of any false threshold verdict at 1 - confidence.
    if options.adjust != "none" and tests > 1:
        return simultaneous_confidence(confidence, tests)
    return confidence


def _suite_notes(options: AnalyzeOptions, results: tuple[TestResult, ...]) -> list[str]:
    tests = len(results)
    levels = sorted({t.interval.confidence for t in results if t.interval is not None})
    if options.adjust != "none" and tests > 1 and levels:
        shown = ", ".join(f"{level:.4g}" for level in levels)
        return [
            f"intervals at {shown} confidence each (Bonferroni over {tests} tests), so all hold "
            "together at the confidence asked for"
        ]
    if tests >= 10:
        confidence = levels[0] if levels else 0.95
        return [false_verdict_risk(tests, 1 - confidence, "none").note]
    return []


def judge(
    trials: pl.DataFrame,
    options: AnalyzeOptions,
    *,
    recorded: Mapping[str, Judgement] | None = None,
    baseline: pl.DataFrame | None = None,
) -> tuple[tuple[TestResult, ...], list[str]]:
    """Judge every test of a trials table.

    Args:
        trials: The trials table (of the version under test).
        options: The analysis options; a verdict option that is None means "as recorded".
        recorded: Trial span id → the judgement recorded on it (see ``read_judgements``).
        baseline: The baseline's trials: the verdicts become regression verdicts.

    Returns:
        One result per test, by test id, and notes about the whole analysis.
    """
    per_test = by_test(trials)
    results: dict[str, TestResult] = {}
    errors: dict[str, str] = {}
    for name, frame in per_test.items():
        resolved = resolve(frame, recorded or {}, options)
        judgement = resolved.judgement
        confidence = _suite_confidence(judgement.confidence, options, len(per_test))
        judgement = replace(judgement, confidence=confidence)
        errors[name] = judgement.errors
        sequential = None
        if resolved.replay and judgement.sequential is not None:
            sequential = replay(frame, judgement.sequential, judgement.errors == "exclude")
        results[name] = replace(
            judge_test(
                name, frame, judgement, options, sequential=sequential, notes=resolved.notes
            ),
            cost=cost_summary(frame, options),
        )
    notes = _suite_notes(options, tuple(results.values()))
    if baseline is not None:
        baseline_tests = by_test(baseline)
        notes += _regressions(results, per_test, baseline_tests, options, errors)
        with_behaviour(results, per_test, baseline_tests, options)
    return tuple(results.values()), notes


def _regressions(
    results: dict[str, TestResult],
    current: Mapping[str, pl.DataFrame],
    baseline: Mapping[str, pl.DataFrame],
    options: AnalyzeOptions,
    errors: Mapping[str, str],
) -> list[str]:
    """Turn each result into a regression verdict (in place); notes on unmatched tests."""
    pairs = {
        name: regression_result(baseline[name], current[name], options, errors[name])
        for name in results
        if name in baseline
    }
    rated = [p[0] for p in pairs.values() if p[0] is not None]
    adjusted = iter(adjust_regressions(rated, options.adjust))
    for name, (rate, scores) in pairs.items():
        results[name] = with_regression(
            results[name], next(adjusted) if rate is not None else None, scores
        )
    notes = []
    new = sorted(set(current) - set(baseline))
    gone = sorted(set(baseline) - set(current))
    if new:
        notes.append(f"no baseline for {', '.join(new)}: judged against the threshold only")
    if gone:
        notes.append(f"in the baseline only, not judged: {', '.join(gone)}")
    return notes
