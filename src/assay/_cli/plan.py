"""``assay plan``: how many trials does a threshold or a regression check need?"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Annotated, Any

import typer

from assay._cli import _common as o
from assay.choices import PairedDesign, SummaryFormat


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
    paired: Annotated[
        bool,
        typer.Option(
            "--paired",
            help="Paired comparison of two versions over cases: cases x trials per case.",
        ),
    ] = False,
    between_sd: Annotated[
        float | None,
        typer.Option(help="Paired: SD over cases of the true per-case difference."),
    ] = None,
    within_var: Annotated[
        float | None,
        typer.Option(help="Paired: within-case variance of one trial pair's difference."),
    ] = None,
    pilot: Annotated[
        list[str] | None,
        typer.Option(help="Paired: measure both variances on this trace set."),
    ] = None,
    pilot_baseline_version: Annotated[
        str | None,
        typer.Option(help="Paired: the pilot holds two versions; this one is the baseline."),
    ] = None,
    trials_per_case: Annotated[
        str, typer.Option(help="Paired: the trials-per-case options, comma-separated.")
    ] = "1,2,3,5,10",
    design: Annotated[
        PairedDesign,
        typer.Option(
            "--design",
            help="Paired: plan the fixed design (all cases, one test) or the adaptive one "
            "(assay run --baseline-agent, by simulating its stopping rule).",
        ),
    ] = PairedDesign.FIXED,
) -> None:
    """Power analysis: how many trials a threshold or a regression check needs.

    A threshold check takes --threshold and --expected; a regression check --baseline-rate and
    --delta. Power is exact. A paired comparison of two versions over many cases (--paired,
    --delta, and --pilot SET or --between-sd and --within-var) lists the cases needed for each
    number of trials per case.
    """
    if paired:
        from assay._cli._paired_plan import plan_paired_command

        plan_paired_command(
            delta=delta,
            alpha=alpha,
            power=power,
            between_sd=between_sd,
            within_var=within_var,
            pilot=pilot,
            pilot_baseline_version=pilot_baseline_version,
            trials_per_case=trials_per_case,
            format=format,
            design=design,
        )
        return
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
