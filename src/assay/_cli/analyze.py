"""``assay analyze``, ``assay compare`` and ``assay report``: verdicts from trace sets.

Their analysis options are declared once, in :mod:`assay._cli._analysis`, and spliced into
each signature by :func:`analysis_options`; each command here declares only what is its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from assay._cli import _common as o
from assay._cli._analysis import analysis_options
from assay._cli._emit import Settings, emit, parse_formats
from assay._cli._progress import described, working
from assay.choices import Engine, OutputFormat

if TYPE_CHECKING:
    from assay.judge import AnalyzeOptions


@analysis_options()
def analyze(
    paths: o.Paths,
    options: AnalyzeOptions,
    format: o.Formats = None,
    output: o.Output = None,
    quiet: o.Quiet = False,
    baseline_version: o.BaselineVersion = None,
    current_version: o.CurrentVersion = None,
    run_id: o.RunId = None,
    all_cases: o.AllCases = False,
    inconclusive_ok: o.InconclusiveOk = False,
    skip_bad_files: o.SkipBadFiles = False,
    engine: o.EngineOpt = Engine.LOCAL,
    spark_master: o.SparkMaster = None,
    trace_url: o.TraceUrl = None,
    export_otlp: o.ExportOtlp = None,
    labels: o.Labels = None,
    min_agreement: o.MinAgreement = None,
) -> None:
    """Read a trace set and give every test a verdict (the CI entry point)."""
    from assay.api import analyze as run_analysis

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


@analysis_options()
def compare(
    baseline: Annotated[str, typer.Argument(help="The baseline trace set.")],
    current: Annotated[str, typer.Argument(help="The trace set under test.")],
    options: AnalyzeOptions,
    format: o.Formats = None,
    output: o.Output = None,
    quiet: o.Quiet = False,
    all_cases: o.AllCases = False,
    inconclusive_ok: o.InconclusiveOk = False,
    skip_bad_files: o.SkipBadFiles = False,
    run_id: o.RunId = None,
    baseline_run_id: Annotated[
        str | None,
        typer.Option("--baseline-run-id", help="Only BASELINE's trials of this assay.run.id."),
    ] = None,
    trace_url: o.TraceUrl = None,
    export_otlp: o.ExportOtlp = None,
    labels: o.Labels = None,
    min_agreement: o.MinAgreement = None,
) -> None:
    """Regression and behaviour verdicts: did CURRENT get worse than BASELINE, what changed?"""
    from assay.api import compare as run_compare

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


@analysis_options()
def report(
    paths: o.Paths,
    options: AnalyzeOptions,
    output: o.Output = Path("assay-report.html"),
    quiet: o.Quiet = False,
    baseline_version: o.BaselineVersion = None,
    current_version: o.CurrentVersion = None,
    run_id: o.RunId = None,
    inconclusive_ok: o.InconclusiveOk = False,
    skip_bad_files: o.SkipBadFiles = False,
    engine: o.EngineOpt = Engine.LOCAL,
    spark_master: o.SparkMaster = None,
    trace_url: o.TraceUrl = None,
    export_otlp: o.ExportOtlp = None,
    labels: o.Labels = None,
    min_agreement: o.MinAgreement = None,
) -> None:
    """Write the HTML report of a trace set (verdicts and exit code as analyze's)."""
    from assay.api import analyze as run_analysis

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
        [o.FormatTarget(OutputFormat.HTML, output)],
        Settings(quiet=quiet, trace_url=trace_url, export_otlp=export_otlp),
    )
    raise SystemExit(analysis.exit_code(inconclusive_ok))
