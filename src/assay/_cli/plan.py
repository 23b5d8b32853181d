"""``assay plan``: how many trials does a threshold or a regression check need?"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Annotated, Any

import typer

from assay._cli import _common as o
from assay.choices import SummaryFormat


def plan(
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", "--pass-rate", help="Threshold check: the required pass rate."),
    ] = None,
    expected: Annotated[
        float | None, typer.Option(help="Threshold check: the true pass rate you expect.")
    ] = None,
    baseline_rate: Annotated[
        float | None, typer.Option(help="Regression check: the baseline's pass rate.")
    ] = None,
    delta: o.Delta = 0.10,
    alpha: o.Alpha = 0.05,
    power: Annotated[float, typer.Option(help="Wanted probability of the right verdict.")] = 0.80,
    confidence: Annotated[
        float, typer.Option(help="Two-sided confidence of the interval that decides.")
    ] = 0.95,
    ci_method: o.CIMethodOpt = o.CIMethod.WILSON,
    test: Annotated[
        o.ExactTest, typer.Option("--test", help="Exact test of the regression check.")
    ] = o.ExactTest.FISHER,
    format: Annotated[SummaryFormat, typer.Option("--format", help="Output format.")] = (
        SummaryFormat.CONSOLE
    ),
) -> None:
    """Power analysis: how many trials a threshold or a regression check needs.

    A threshold check takes --threshold and --expected; a regression check --baseline-rate and
    --delta. Power is exact.
    """
    from assay.errors import ConfigError
    from assay.stats import plan_regression, plan_threshold

    wants_threshold = threshold is not None or expected is not None
    if wants_threshold == (baseline_rate is not None):
        raise ConfigError(
            "give either --threshold and --expected (a threshold check) or --baseline-rate "
            "(a regression check)"
        )
    document: dict[str, Any]
    if wants_threshold:
        if threshold is None or expected is None:
            raise ConfigError("a threshold plan needs both --threshold and --expected")
        result = plan_threshold(threshold, expected, power, confidence, ci_method.value)
        # Which design the figures hold for (docs/adaptive.md: the adaptive default needs more).
        document = {
            "schema": "assay.plan/v1",
            "kind": "threshold",
            "design": "fixed",
            **asdict(result),
        }
        lines = [
            f"threshold check: PASS at {threshold:g} when the true rate is {expected:g}",
            "design: a fixed number of trials judged once (the verdict interval); `assay run` "
            "stops adaptively by default and needs more for the same probability "
            "(docs/adaptive.md)",
            _found(result.n, result.power, power, "trials"),
        ]
        if result.stable_n is not None and result.stable_n != result.n:
            lines.append(f"from {result.stable_n} trials on, the probability stays ≥ {power:g}")
    else:
        assert baseline_rate is not None
        reg = plan_regression(baseline_rate, delta, alpha, power, test.value)
        document = {"schema": "assay.plan/v1", "kind": "regression", **asdict(reg)}
        lines = [
            f"regression check ({test.value}, one-sided, alpha {alpha:g}): detect a drop of "
            f"{delta:g} from {baseline_rate:g}",
            _found(reg.n_per_arm, reg.power, power, "trials per version"),
        ]
        result = reg  # type: ignore[assignment]
    if result.note:
        lines.append(f"note: {result.note}")
    if format is SummaryFormat.JSON:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        print("\n".join(lines))


def _found(n: int | None, achieved: float | None, wanted: float, unit: str) -> str:
    if n is None or achieved is None:
        return f"no number of {unit} within the search limit reaches probability {wanted:g}"
    return f"{n} {unit} (exact probability {achieved:.3f} ≥ {wanted:g})"
