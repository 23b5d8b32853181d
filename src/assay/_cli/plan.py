"""``assay plan``: how many trials does a threshold or a regression check need?"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any

import typer

from assay._cli import _common as o
from assay._cli._analysis import analysis_options
from assay._cli._emit import parse_formats, write_documents
from assay._cli._plain import PLAIN_FORMATS, Plain
from assay.choices import PairedDesign, RegressionTest
from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.judge import AnalyzeOptions

PLANNED = frozenset(
    {"threshold", "confidence", "ci_method", "regression_test", "alpha", "delta", "power"}
)
"""The analysis options a plan is for: the flags, help and defaults of the commands that judge."""


@analysis_options(only=PLANNED)
def plan(
    options: AnalyzeOptions,
    expected: Annotated[
        float | None, typer.Option(help="Threshold check: the true pass rate you expect.")
    ] = None,
    baseline_rate: Annotated[
        float | None, typer.Option(help="Regression check: the baseline's pass rate.")
    ] = None,
    fixed: o.Fixed = False,
    format: o.Formats = None,
    output: o.Output = None,
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
    judge_sensitivity: Annotated[
        float | None,
        typer.Option(
            help="Labels: the LLM judge's sensitivity (share of true passes it passes); with "
            "--judge-specificity, --trials, --threshold and --expected, plans the human labels "
            "a verdict corrected for the judge's error needs."
        ),
    ] = None,
    judge_specificity: Annotated[
        float | None,
        typer.Option(help="Labels: the judge's specificity (share of true failures it fails)."),
    ] = None,
    trials: Annotated[int | None, typer.Option(help="Labels: the trials the judge grades.")] = None,
) -> None:
    """Power analysis: how many trials a threshold or a regression check needs.

    A threshold check takes --threshold and --expected and plans the adaptive run `assay run`
    does by default (the maximum trials, --runs), or with --fixed a fixed number of trials; a
    regression check takes --baseline-rate and --delta. Power is exact. A paired comparison of
    two versions over many cases (--paired, --delta, and --pilot SET or --between-sd and
    --within-var) lists the cases needed for each number of trials per case. The defaults are
    those of the commands that judge.
    """
    from assay.judge import DEFAULT_CONFIDENCE

    targets = parse_formats(format, output, PLAIN_FORMATS, "plan")
    threshold, power, alpha, delta = options.threshold, options.power, options.alpha, options.delta
    confidence = DEFAULT_CONFIDENCE if options.confidence is None else options.confidence
    answer: Plain
    if judge_sensitivity is not None or judge_specificity is not None:
        answer = _labels_plan(
            threshold, expected, judge_sensitivity, judge_specificity, trials, power, confidence
        )
        write_documents(targets, answer.render)
        return
    if fixed and (paired or baseline_rate is not None):
        raise ConfigError("--fixed applies to a threshold plan (--threshold and --expected)")
    if paired:
        from assay._cli._paired_plan import plan_paired_command

        answer = plan_paired_command(
            delta=delta,
            alpha=alpha,
            power=power,
            between_sd=between_sd,
            within_var=within_var,
            pilot=pilot,
            pilot_baseline_version=pilot_baseline_version,
            trials_per_case=trials_per_case,
            design=design,
        )
        write_documents(targets, answer.render)
        return
    from assay.stats import plan_regression

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
        document, lines, note = _threshold_plan(
            threshold, expected, power, confidence, options.ci_method.value, fixed
        )
    else:
        assert baseline_rate is not None
        test = options.regression_test
        if test is RegressionTest.ANYTIME:
            raise ConfigError(
                "--test anytime: plan plans the exact tests only (boschloo, fisher or barnard)"
            )
        reg = plan_regression(baseline_rate, delta, alpha, power, test.value)
        document = {"schema": "assay.plan/v1", "kind": "regression", **asdict(reg)}
        lines = [
            f"regression check ({test.value}, one-sided, alpha {alpha:g}): detect a drop of "
            f"{delta:g} from {baseline_rate:g}",
            _found(reg.n_per_arm, reg.power, power, "trials per version"),
        ]
        note = reg.note
    if note:
        lines.append(f"note: {note}")
    write_documents(targets, Plain(document, lines).render)


def _labels_plan(
    threshold: float | None,
    expected: float | None,
    sensitivity: float | None,
    specificity: float | None,
    trials: int | None,
    power: float,
    confidence: float,
) -> Plain:
    """How many human labels a corrected verdict needs (docs/statistics.md)."""
    from assay.stats.judges import plan_labels

    if None in (threshold, expected, sensitivity, specificity, trials):
        raise ConfigError(
            "a labels plan needs --threshold, --expected, --judge-sensitivity, "
            "--judge-specificity and --trials"
        )
    assert threshold is not None and expected is not None and trials is not None
    assert sensitivity is not None and specificity is not None
    result = plan_labels(threshold, expected, sensitivity, specificity, trials, power, confidence)
    document = {"schema": "assay.plan/v1", "kind": "labels", **asdict(result)}
    lines = [
        f"labels for a verdict corrected for the judge's error: {result.verdict} at "
        f"{threshold:g} when the true rate is {expected:g}; the judge (sensitivity "
        f"{sensitivity:g}, specificity {specificity:g}) shows {result.judge_rate:.3f} on "
        f"{trials} trials",
    ]
    if result.labels is None:
        lines.append(
            f"even labelling all {trials} trials does not reach probability {power:g}: more "
            "trials are needed too"
        )
    else:
        lines.append(
            f"{result.labels} human labels of trials drawn at random (simulated probability "
            f"{result.probability:.3f} ≥ {power:g}, {result.repetitions} seeded repetitions)"
        )
    return Plain(document, lines)


ADAPTIVE_DOC = "docs/adaptive.md"
"""Where the adaptive run, its maximum and its operating characteristics are explained."""


def _threshold_plan(
    threshold: float, expected: float, power: float, confidence: float, method: str, fixed: bool
) -> tuple[dict[str, Any], list[str], str | None]:
    """The threshold plan of the design ``assay run`` will use: its JSON, lines and note.

    Adaptive unless ``fixed`` (or a threshold of 0 or 1, which ``assay run`` runs fixed).
    """
    from assay.stats import plan_adaptive_threshold, plan_threshold

    head = f"threshold check: PASS at {threshold:g} when the true rate is {expected:g}"
    edge = not 0 < threshold < 1
    if fixed or edge:
        result = plan_threshold(threshold, expected, power, confidence, method)
        why = "--fixed" if fixed else "a threshold of 0 or 1 runs every trial"
        lines = [
            head,
            f"design: fixed ({why}): a fixed number of trials judged once by the verdict "
            f"interval, as `assay run --fixed` does; the adaptive default needs more "
            f"({ADAPTIVE_DOC})",
            _found(result.n, result.power, power, "trials"),
        ]
        if result.stable_n is not None and result.stable_n != result.n:
            lines.append(f"from {result.stable_n} trials on, the probability stays ≥ {power:g}")
        document = {"schema": "assay.plan/v1", "kind": "threshold", "design": "fixed"}
        document |= {**asdict(result), "docs": ADAPTIVE_DOC}
        return document, lines, result.note
    plan = plan_adaptive_threshold(threshold, expected, power, confidence)
    lines = [
        head,
        f"design: adaptive, as `assay run` runs by default: it stops once the {confidence:.0%} "
        "anytime-valid interval lies on one side of the threshold, at the latest after the "
        f"maximum (the suite's runs, --runs) ({ADAPTIVE_DOC}; --fixed plans a fixed run)",
        _found(plan.max_trials, plan.power, power, "trials at most", "maximum"),
    ]
    if method != o.CIMethod.WILSON:
        lines.append(
            f"--ci-method {method} shapes a fixed run only (--fixed): the adaptive run is judged "
            "by its anytime-valid interval"
        )
    if plan.expected_trials is not None:
        lines.append(
            f"at a true rate of {expected:g} it runs {plan.expected_trials:.1f} trials on average"
        )
    if plan.fail_at_threshold is not None and plan.pass_at_threshold is not None:
        lines.append(
            f"at a true rate equal to the threshold: P(FAIL) = {plan.fail_at_threshold:.4f} "
            f"(wrong), P(PASS) = {plan.pass_at_threshold:.4f} (the most a rate below it gets)"
        )
    document = {"schema": "assay.plan/v1", "kind": "threshold", "design": "adaptive"}
    document |= {**asdict(plan), "docs": ADAPTIVE_DOC}
    return document, lines, plan.note


def _found(
    n: int | None, achieved: float | None, wanted: float, unit: str, none: str | None = None
) -> str:
    if n is None or achieved is None:
        what = none or f"number of {unit}"
        return f"no {what} within the search limit reaches probability {wanted:g}"
    return f"{n} {unit} (exact probability {achieved:.3f} ≥ {wanted:g})"
