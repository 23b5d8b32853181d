"""What every command shares: the one-line error, and the options of an analysis."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NamedTuple, NoReturn

import typer

from assay.choices import (
    Adjustment,
    Engine,
    ErrorPolicy,
    IntervalMethod,
    OutputFormat,
    RegressionTest,
    ScoreInterval,
    SuiteInterval,
)
from assay.errors import ConfigError, OptionError

if TYPE_CHECKING:
    from rich.console import Console

EXIT_USAGE = 2


def fail(message: str) -> NoReturn:
    """Stop on a usage or input error: one line on stderr, exit 2.

    The one way a command reports one is a :class:`ConfigError`; :mod:`assay.cli` prints it.
    """
    raise ConfigError(message)


@contextlib.contextmanager
def flags_named(parameters: Mapping[str, str]) -> Iterator[None]:
    """Report a bad field of a library object under the flag that set it.

    A command's flag is named after its parameter (:mod:`assay.cli` says ``--roll-age`` for an
    :class:`OptionError` naming ``roll_age``). Where a field's name differs from the parameter
    that sets it (``roll_age_s`` from ``--roll-age``, ``roll_bytes`` from ``--roll-mb``),
    ``parameters`` maps the field to the parameter.
    """
    try:
        yield
    except OptionError as exc:
        raise OptionError(parameters.get(exc.field, exc.field), exc.problem) from None


def stdout_console() -> Console:
    """The console a command prints its tables to on stdout.

    On a terminal, its width; piped (a CI log, a file) 120 columns rather than rich's 80, so
    that `analyze`, `run` and its `--dry-run` plan cut a table at the same width. Colour is
    rich's choice: none when stdout is not a terminal, none under ``NO_COLOR``.
    """
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=120)


def write_text(path: Path, text: str | bytes, *, append: bool = False) -> None:
    """Write (or append) ``text`` (or UTF-8 bytes) to ``path``; a failure is one line and exit 2."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            with path.open("ab" if append else "wb") as handle:
                handle.write(text)
        else:
            with path.open("a" if append else "w", encoding="utf-8") as handle:
                handle.write(text)
    except OSError as exc:
        fail(f"{path}: cannot write ({exc.strerror})")


# The choices, offered by typer as they are (one definition each: ``assay.choices``).
ErrorsPolicy = ErrorPolicy
CIMethod = IntervalMethod
ScoreCI = ScoreInterval
ExactTest = RegressionTest
Adjust = Adjustment
SuiteCI = SuiteInterval


Paths = Annotated[list[str], typer.Argument(help="Trace set(s): folders, globs or Parquet files.")]
Threshold = Annotated[
    float | None,
    typer.Option(
        "--threshold",
        "--pass-rate",
        help="Required pass rate (default: what the suite or the trials record, else 0.8; "
        "watch reads none recorded; plan: the rate a threshold plan is for, no default).",
    ),
]
Confidence = Annotated[
    float | None,
    typer.Option(help="Two-sided confidence of intervals (default: as recorded, else 0.95)."),
]
CIMethodOpt = Annotated[CIMethod, typer.Option("--ci-method", help="Pass-rate interval method.")]
Errors = Annotated[
    ErrorsPolicy | None,
    typer.Option(
        help="Count error trials as failures, or exclude them from n (default: as recorded, "
        "else count)."
    ),
]
MinScore = Annotated[
    float | None, typer.Option(help="A score below this fails a trial without an outcome.")
]
TestAttribute = Annotated[
    str,
    typer.Option(help="Span attribute naming the test (e.g. gen_ai.agent.name for production)."),
]
PassWhen = Annotated[
    str | None,
    typer.Option(
        help="A passing trial meets this rule over its evaluations, scores and checks, e.g. "
        '"correctness.label == pass" or "quality >= 0.7" (docs/analysis.md).'
    ),
]
Ks = Annotated[str, typer.Option("--k", help="The k of pass@k and pass^k, e.g. 1,5,10.")]
ScoreCIOpt = Annotated[ScoreCI, typer.Option("--score-ci", help="Interval of mean scores.")]
MinMeanScore = Annotated[
    float | None,
    typer.Option(help="Variance check: the mean score must reach this (default: as recorded)."),
]
MaxStdDev = Annotated[
    float | None,
    typer.Option(help="Variance check: score std dev at most this (default: as recorded)."),
]
Test = Annotated[
    ExactTest,
    typer.Option(
        "--test",
        help="Test of a regression: an exact one, or anytime (used anyway when a version "
        "stopped adaptively or ran in several runs; plan plans the exact ones).",
    ),
]
Alpha = Annotated[
    float | None,
    typer.Option(help="Significance level: the chance of a wrong verdict against the baseline."),
]
Delta = Annotated[
    float | None,
    typer.Option(help="The smallest difference in pass rate that matters (0.1 = 10 points)."),
]
Power = Annotated[
    float,
    typer.Option(
        help="Power: the probability of the right verdict a check needs when the difference it "
        "looks for is there ('no regression' is a PASS only with it; plan finds the trials "
        "that reach it)."
    ),
]
Fixed = Annotated[
    bool,
    typer.Option(
        "--fixed",
        help="The fixed design: every test runs its maximum trials, judged once, no adaptive "
        "stop (plan: plan that design).",
    ),
]
Anytime = Annotated[
    bool,
    typer.Option(
        "--anytime",
        help="Judge with anytime-valid intervals and tests, valid however many times the "
        "trials were looked at (automatic for a test whose trials come from several runs).",
    ),
]
AdjustOpt = Annotated[
    Adjust,
    typer.Option(
        "--adjust",
        help="Adjust verdicts for testing many tests at once (with a baseline, a case's drop "
        "counts in the exit code adjusted across its suite's cases: holm unless bh is given).",
    ),
]
GateCases = Annotated[
    bool,
    typer.Option(
        "--gate-cases",
        help="Every case's verdict (threshold and unadjusted regression) counts in the exit "
        "code, even when a suite comparison with a baseline decides it (docs/cli.md).",
    ),
]
CaseBehaviour = Annotated[
    bool,
    typer.Option(
        "--case-behaviour",
        help="Diff every case's behaviour in a suite comparison, also cases whose trials "
        "cannot show a change adjusted across the suite (docs/reports.md).",
    ),
]
SuiteAttribute = Annotated[
    str,
    typer.Option(
        help="Span attribute of a trial naming its suite (trials without it form the set's "
        "own suite)."
    ),
]
SuiteThreshold = Annotated[
    float | None,
    typer.Option(
        help="Mean pass rate over cases a suite must reach; asking for it makes the suites' "
        "verdicts count in the exit code (default: the threshold, reported only)."
    ),
]
SuiteCIOpt = Annotated[
    SuiteCI,
    typer.Option(
        "--suite-ci",
        help="Interval of a suite's mean over cases, cases as clusters: betting (the default: "
        "keeps its level on each side at any number of cases), or the asymptotic t "
        "(cluster-robust) or bootstrap (BCa, seeded), which err more often with few or "
        "skewed cases (docs/statistics.md).",
    ),
]
Margin = Annotated[
    float | None,
    typer.Option(
        help="Can we switch? Non-inferiority margin of the suite comparison: PASS when the "
        "drop is shown to be below it (0.02 = 2 points)."
    ),
]
AllowMissingCases = Annotated[
    bool,
    typer.Option(
        "--allow-missing-cases",
        help="Let a suite comparison PASS over the cases both versions answered while some "
        "case has no answer from the current version (default: INCONCLUSIVE until every "
        "case is there; the worst case, missing trials counted as failures, is shown).",
    ),
]
AllCases = Annotated[
    bool,
    typer.Option(
        "--all-cases",
        help="List every case with its details (default: above a dozen cases, "
        "the FAILs and the cases that moved most, the rest counted).",
    ),
]
Quiet = Annotated[
    bool, typer.Option("--quiet", "-q", help="Less output: the summary box only, no progress.")
]


class FormatTarget(NamedTuple):
    """One ``--format NAME[:PATH]``: a rendering and where it goes."""

    format: OutputFormat
    path: Path | None
    """The file; None: stdout (or, for markdown, ``$GITHUB_STEP_SUMMARY`` when set)."""


def format_target(spec: str) -> FormatTarget:
    """Parse one ``--format NAME[:PATH]`` (typer's parser of the option).

    ``NAME:-`` is stdout, said explicitly (``Path("-")``).
    """
    name, colon, path = spec.partition(":")
    name = name.strip().lower()
    if name not in tuple(OutputFormat):
        raise ConfigError(f"--format {name!r} is not one of {', '.join(OutputFormat)}")
    if colon and not path:
        raise ConfigError(f"--format {spec}: give a file after the colon, or leave it out")
    return FormatTarget(OutputFormat(name), Path(path) if path else None)


Formats = Annotated[
    list[FormatTarget] | None,
    typer.Option(
        "--format",
        parser=format_target,
        metavar="NAME[:PATH]",
        help="Output format, repeatable: NAME or NAME:PATH, NAME one of "
        f"{', '.join(OutputFormat)} (github: annotations; plan: console, json, markdown; "
        "describe: console, json). Default: console.",
    ),
]
Output = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="The file to write: the one --format given without a PATH (report: its HTML).",
    ),
]
InconclusiveOk = Annotated[
    bool, typer.Option("--inconclusive-ok", help="Exit 0 instead of 3 on INCONCLUSIVE.")
]
RunId = Annotated[
    str | None,
    typer.Option(
        "--run-id",
        help="Only the trials of this assay.run.id, when a set holds several runs (compare: "
        "CURRENT's; --baseline-run-id: BASELINE's).",
    ),
]
_OUT = typer.Option(
    "--out",
    help="The trace set folder written: the spans table (run: default runs/RUN_ID, a folder "
    "of its own per run).",
)  # typer copies an option's declaration before it fills it in: one for both types
Out = Annotated[Path, _OUT]
"""``--out`` of ``collect`` (with a default) and ``import`` (required)."""
OutOrDefault = Annotated[Path | None, _OUT]
"""``--out`` of ``run``: None, a folder of its own."""
SkipBadFiles = Annotated[
    bool,
    typer.Option("--skip-bad-files", help="Skip unreadable files (listed) instead of failing."),
]
FailOnOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-on",
        help="Behaviour changes that fail a test, repeatable: behaviour, tools, or a feature "
        "with an optional limit, e.g. cost:+20%, tokens:+10%, uses:verify (docs/reports.md).",
    ),
]
Prices = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        help="Model price table (YAML/JSON, USD per 1M tokens) for cost; default: a dated "
        "built-in one.",
    ),
]


FANOUT = 10
"""``--fanout``'s default: the store's ``DEFAULT_FANOUT`` (the store is not imported to start;
a test checks they agree)."""
Fanout = Annotated[
    int,
    typer.Option(
        "--fanout",
        help="Merge a folder's files once it holds this many of one size tier (docs/scale.md).",
    ),
]
Buckets = Annotated[
    int | None,
    typer.Option(help="Also lay the output out in N bucket=NN folders by trace (large sets)."),
]
Labels = Annotated[
    Path | None,
    typer.Option(
        "--labels",
        help="People's labels of some trials (CSV or JSON Lines: trace_id, evaluation, label; "
        "optional span_id, labeller): the judge's agreement is measured and each verdict reads "
        "the pass rate corrected for its error (docs/statistics.md).",
    ),
]
MinAgreement = Annotated[
    float | None,
    typer.Option(
        "--min-agreement",
        help="With --labels: the Cohen's kappa the judge must reach with people; below it, a "
        "judge_below_agreement finding (default: none asked).",
    ),
]


# What reads a trace set, shared by analyze and report.
BaselineVersion = Annotated[
    str | None,
    typer.Option(
        help="The baseline's assay.agent.version: regressions are judged against its trials "
        "in the same set (run: of the --baseline set, needed when it holds several; watch: "
        "the drift reference, default each test's own earlier trials)."
    ),
]
CurrentVersion = Annotated[
    str | None, typer.Option(help="The version under test (when the set holds several).")
]
EngineOpt = Annotated[
    Engine,
    typer.Option("--engine", help="Where spans become trials: local (bucket by bucket) or spark."),
]
SparkMaster = Annotated[
    str | None,
    typer.Option(help="Spark master URL for --engine spark, e.g. local[4], spark://h:7077."),
]
ExportOtlp = Annotated[
    str | None,
    typer.Option(
        envvar="ASSAY_EXPORT_OTLP",
        help="Also send the verdicts to this OTLP/HTTP endpoint, e.g. http://127.0.0.1:4318: "
        "a span per test and suite with a gen_ai.evaluation.result event, and the pass rates "
        "and interval bounds as gauges (watch: gauges at every look, a span per verdict change "
        "or drift alarm; docs/reports.md).",
    ),
]
MaxDecompressedMb = Annotated[
    int,
    typer.Option(
        help="Most MB one request (collect) or input file (import) may decompress to (gzip "
        "bombs stop here)."
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
