"""``assay analyze``, ``assay compare`` and ``assay report``: verdicts from trace sets."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay._cli import _common as o
from assay._cli._emit import Settings, emit, parse_formats
from assay._cli._progress import described, working
from assay.choices import DEFAULT_REGRESSION_TEST, OutputFormat

ExportOtlp = Annotated[
    str | None,
    typer.Option(
        envvar="ASSAY_EXPORT_OTLP",
        help="Also send the verdicts to this OTLP/HTTP endpoint, e.g. http://127.0.0.1:4318: "
        "a span per test and suite with a gen_ai.evaluation.result event, and the pass rates "
        "and interval bounds as gauges (docs/reports.md).",
    ),
]
TraceUrl = Annotated[
    str | None,
    typer.Option(
        envvar="ASSAY_TRACE_URL",
        help="Your trace viewer's URL of a trace, e.g. http://localhost:16686/trace/{trace_id}: "
        "trials named in reports link there (docs/reports.md lists Jaeger, Grafana/Tempo, "
        "Phoenix and Langfuse templates).",
    ),
]


def analyze(
    paths: o.Paths,
    threshold: o.Threshold = None,
    confidence: o.Confidence = None,
    ci_method: o.CIMethodOpt = o.CIMethod.WILSON,
    anytime: o.Anytime = False,
    format: o.Formats = None,
    output: o.Output = None,
    quiet: o.Quiet = False,
    errors: o.Errors = None,
    min_score: o.MinScore = None,
    test_attribute: o.TestAttribute = "assay.test.id",
    pass_when: o.PassWhen = None,
    k: o.Ks = "1,5,10",
    score_ci: o.ScoreCIOpt = o.ScoreCI.T,
    min_mean_score: o.MinMeanScore = None,
    max_std_dev: o.MaxStdDev = None,
    baseline_version: Annotated[
        str | None,
        typer.Option(help="Judge regressions against this assay.agent.version in the same set."),
    ] = None,
    current_version: Annotated[
        str | None, typer.Option(help="The version under test (when the set holds several).")
    ] = None,
    run_id: o.RunId = None,
    test: o.Test = DEFAULT_REGRESSION_TEST,
    alpha: o.Alpha = 0.05,
    delta: o.Delta = 0.10,
    power: o.Power = 0.80,
    adjust: o.AdjustOpt = o.Adjust.NONE,
    fail_on: o.FailOnOpt = None,
    prices: o.Prices = None,
    suite_attribute: o.SuiteAttribute = "assay.suite",
    suite_threshold: o.SuiteThreshold = None,
    suite_ci: o.SuiteCIOpt = o.SuiteCI.T,
    margin: o.Margin = None,
    allow_missing_cases: o.AllowMissingCases = False,
    all_cases: o.AllCases = False,
    inconclusive_ok: o.InconclusiveOk = False,
    skip_bad_files: o.SkipBadFiles = False,
    engine: Annotated[
        str,
        typer.Option(help="Where spans become trials: local (bucket by bucket) or spark."),
    ] = "local",
    spark_master: Annotated[
        str | None,
        typer.Option(help="Spark master URL for --engine spark, e.g. local[4], spark://h:7077."),
    ] = None,
    trace_url: TraceUrl = None,
    export_otlp: ExportOtlp = None,
    labels: o.Labels = None,
    min_agreement: o.MinAgreement = None,
) -> None:
    """Read a trace set and give every test a verdict (the CI entry point)."""
    from assay.api import analyze as run_analysis
    from assay.judge import AnalyzeOptions, parse_ks

    options = AnalyzeOptions(
        threshold=threshold,
        confidence=confidence,
        ci_method=ci_method,
        anytime=anytime,
        errors=errors,
        min_score=min_score,
        test_attribute=test_attribute,
        ks=parse_ks(k),
        score_ci=score_ci,
        min_mean_score=min_mean_score,
        max_std_dev=max_std_dev,
        regression_test=test,
        alpha=alpha,
        delta=delta,
        power=power,
        adjust=adjust,
        pass_when=pass_when,
        fail_on=tuple(fail_on or ()),
        prices=prices,
        suite_attribute=suite_attribute,
        suite_threshold=suite_threshold,
        suite_ci=suite_ci,
        margin=margin,
        allow_missing_cases=allow_missing_cases,
    )
    targets = parse_formats(format, output)
    with working(f"analysing {described(paths)}", quiet=quiet):
        analysis = run_analysis(
            paths,
            options,
            skip_bad_files=skip_bad_files,
            baseline_version=baseline_version,
            current_version=current_version,
            run_id=run_id,
            engine=engine,
            spark_master=spark_master,
            labels=labels,
            min_agreement=min_agreement,
        )
    emit(
        analysis,
        targets,
        Settings(
            quiet=quiet,
            inconclusive_ok=inconclusive_ok,
            all_cases=all_cases,
            trace_url=trace_url,
            export_otlp=export_otlp,
        ),
    )
    raise SystemExit(analysis.exit_code(inconclusive_ok))


def compare(
    baseline: Annotated[str, typer.Argument(help="The baseline trace set.")],
    current: Annotated[str, typer.Argument(help="The trace set under test.")],
    test: o.Test = DEFAULT_REGRESSION_TEST,
    alpha: o.Alpha = 0.05,
    delta: o.Delta = 0.10,
    power: o.Power = 0.80,
    adjust: o.AdjustOpt = o.Adjust.NONE,
    threshold: o.Threshold = None,
    confidence: o.Confidence = None,
    ci_method: o.CIMethodOpt = o.CIMethod.WILSON,
    anytime: o.Anytime = False,
    format: o.Formats = None,
    output: o.Output = None,
    quiet: o.Quiet = False,
    errors: o.Errors = None,
    min_score: o.MinScore = None,
    test_attribute: o.TestAttribute = "assay.test.id",
    pass_when: o.PassWhen = None,
    k: o.Ks = "1,5,10",
    score_ci: o.ScoreCIOpt = o.ScoreCI.T,
    fail_on: o.FailOnOpt = None,
    prices: o.Prices = None,
    suite_attribute: o.SuiteAttribute = "assay.suite",
    suite_threshold: o.SuiteThreshold = None,
    suite_ci: o.SuiteCIOpt = o.SuiteCI.T,
    margin: o.Margin = None,
    allow_missing_cases: o.AllowMissingCases = False,
    all_cases: o.AllCases = False,
    inconclusive_ok: o.InconclusiveOk = False,
    skip_bad_files: o.SkipBadFiles = False,
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="Only CURRENT's trials of this assay.run.id.")
    ] = None,
    baseline_run_id: Annotated[
        str | None,
        typer.Option("--baseline-run-id", help="Only BASELINE's trials of this assay.run.id."),
    ] = None,
    trace_url: TraceUrl = None,
    export_otlp: ExportOtlp = None,
    labels: o.Labels = None,
    min_agreement: o.MinAgreement = None,
) -> None:
    """Regression and behaviour verdicts: did CURRENT get worse than BASELINE, what changed?"""
    from assay.api import compare as run_compare
    from assay.judge import AnalyzeOptions, parse_ks

    options = AnalyzeOptions(
        threshold=threshold,
        confidence=confidence,
        ci_method=ci_method,
        anytime=anytime,
        errors=errors,
        min_score=min_score,
        test_attribute=test_attribute,
        ks=parse_ks(k),
        score_ci=score_ci,
        regression_test=test,
        alpha=alpha,
        delta=delta,
        power=power,
        adjust=adjust,
        pass_when=pass_when,
        fail_on=tuple(fail_on or ()),
        prices=prices,
        suite_attribute=suite_attribute,
        suite_threshold=suite_threshold,
        suite_ci=suite_ci,
        margin=margin,
        allow_missing_cases=allow_missing_cases,
    )
    targets = parse_formats(format, output)
    with working(f"comparing {described(current)} with {described(baseline)}", quiet=quiet):
        analysis = run_compare(
            baseline,
            current,
            options,
            skip_bad_files=skip_bad_files,
            run_id=run_id,
            baseline_run_id=baseline_run_id,
            labels=labels,
            min_agreement=min_agreement,
        )
    emit(
        analysis,
        targets,
        Settings(
            quiet=quiet,
            inconclusive_ok=inconclusive_ok,
            all_cases=all_cases,
            trace_url=trace_url,
            export_otlp=export_otlp,
        ),
    )
    raise SystemExit(analysis.exit_code(inconclusive_ok))


def report(
    paths: o.Paths,
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")] = Path(
        "assay-report.html"
    ),
    threshold: o.Threshold = None,
    confidence: o.Confidence = None,
    ci_method: o.CIMethodOpt = o.CIMethod.WILSON,
    anytime: o.Anytime = False,
    errors: o.Errors = None,
    min_score: o.MinScore = None,
    test_attribute: o.TestAttribute = "assay.test.id",
    pass_when: o.PassWhen = None,
    k: o.Ks = "1,5,10",
    baseline_version: Annotated[
        str | None, typer.Option(help="Show regressions against this assay.agent.version.")
    ] = None,
    current_version: Annotated[
        str | None, typer.Option(help="The version under test (when the set holds several).")
    ] = None,
    test: o.Test = DEFAULT_REGRESSION_TEST,
    delta: o.Delta = 0.10,
    fail_on: o.FailOnOpt = None,
    prices: o.Prices = None,
    inconclusive_ok: o.InconclusiveOk = False,
    skip_bad_files: o.SkipBadFiles = False,
    trace_url: TraceUrl = None,
    run_id: o.RunId = None,
    labels: o.Labels = None,
    min_agreement: o.MinAgreement = None,
) -> None:
    """Write the HTML report of a trace set (exit code as for analyze)."""
    from assay.api import analyze as run_analysis
    from assay.judge import AnalyzeOptions, parse_ks

    options = AnalyzeOptions(
        threshold=threshold,
        confidence=confidence,
        ci_method=ci_method,
        anytime=anytime,
        errors=errors,
        min_score=min_score,
        test_attribute=test_attribute,
        ks=parse_ks(k),
        regression_test=test,
        delta=delta,
        pass_when=pass_when,
        fail_on=tuple(fail_on or ()),
        prices=prices,
    )
    with working(f"analysing {described(paths)}"):
        analysis = run_analysis(
            paths,
            options,
            skip_bad_files=skip_bad_files,
            baseline_version=baseline_version,
            current_version=current_version,
            run_id=run_id,
            labels=labels,
            min_agreement=min_agreement,
        )
    emit(analysis, [o.FormatTarget(OutputFormat.HTML, output)], Settings(trace_url=trace_url))
    raise SystemExit(analysis.exit_code(inconclusive_ok))
