"""The ``assay`` command line: thin; parses options, calls the library, picks an exit code.

Exit codes (DESIGN.md): 0 nothing failed or was inconclusive, 1 at least one FAIL, 2 usage or
input error, 3 nothing failed but something is INCONCLUSIVE (``--inconclusive-ok`` makes it 0).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from typer.exceptions import TyperException

from assay.errors import AssayError

if TYPE_CHECKING:
    from assay import Analysis
    from assay.verdict import AnalysisResult

EXIT_USAGE = 2

app = typer.Typer(
    name="assay",
    help="Statistical verdicts for AI agents, read from OpenTelemetry traces.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def fail(message: str) -> NoReturn:
    """Print one line to stderr and exit with the usage/input error code."""
    print(f"assay: error: {message}", file=sys.stderr)
    raise SystemExit(EXIT_USAGE)


@app.callback()
def _root() -> None:
    """Statistical verdicts for AI agents, read from OpenTelemetry traces."""


class ErrorsPolicy(StrEnum):
    """How error trials count."""

    COUNT = "count"
    EXCLUDE = "exclude"


@app.command()
def analyze(
    paths: Annotated[
        list[str], typer.Argument(help="Trace set(s): folders, globs or Parquet files.")
    ],
    threshold: Annotated[float, typer.Option(help="Required pass rate.")] = 0.80,
    confidence: Annotated[
        float, typer.Option(help="Two-sided confidence level of the interval.")
    ] = 0.95,
    format: Annotated[
        list[str] | None,
        typer.Option(
            "--format",
            help="Output format, repeatable: NAME or NAME:PATH, NAME one of console, json, "
            "junit, markdown, github (annotations), html. Default: console.",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the one format given without a PATH here."),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Console: print the summary box only.")
    ] = False,
    errors: Annotated[
        ErrorsPolicy,
        typer.Option(help="Count error trials as failures, or exclude them from n."),
    ] = ErrorsPolicy.COUNT,
    min_score: Annotated[
        float | None, typer.Option(help="A score below this fails a trial without an outcome.")
    ] = None,
    test_attribute: Annotated[
        str,
        typer.Option(
            help="Span attribute naming the test (e.g. gen_ai.agent.name for production)."
        ),
    ] = "assay.test.id",
    inconclusive_ok: Annotated[
        bool, typer.Option("--inconclusive-ok", help="Exit 0 instead of 3 on INCONCLUSIVE.")
    ] = False,
    skip_bad_files: Annotated[
        bool,
        typer.Option("--skip-bad-files", help="Skip unreadable files (listed) instead of failing."),
    ] = False,
) -> None:
    """Read a trace set and give every test a verdict (the CI entry point)."""
    from assay import analyze as run_analysis

    targets = _parse_formats(format, output)
    analysis = run_analysis(
        paths,
        threshold=threshold,
        confidence=confidence,
        errors="exclude" if errors is ErrorsPolicy.EXCLUDE else "count",
        min_score=min_score,
        skip_bad_files=skip_bad_files,
        test_attribute=test_attribute,
    )
    _emit(analysis, targets, quiet=quiet, inconclusive_ok=inconclusive_ok)
    raise SystemExit(analysis.exit_code(inconclusive_ok))


def _write(path: Path, text: str, *, append: bool = False) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a" if append else "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        fail(f"{path}: cannot write ({exc.strerror})")


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` and return its exit code instead of exiting.

    Usage errors and every :class:`AssayError` become one line on stderr and code 2.
    """
    try:
        result = app(args=list(argv) if argv is not None else None, standalone_mode=False)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except typer.Exit as exc:
        return exc.exit_code
    except TyperException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `assay` or `assay analyze`
            print(exc.format_message(), file=sys.stderr)
            return EXIT_USAGE
        print(f"assay: error: {exc.format_message()}", file=sys.stderr)
        return EXIT_USAGE
    except typer.Abort:
        print("assay: aborted", file=sys.stderr)
        return 130
    except AssayError as exc:
        print(f"assay: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return result if isinstance(result, int) else 0


def main() -> None:
    """Entry point of the ``assay`` console script."""
    sys.exit(run())


# --- Reports: several formats in one run, and `assay report` -------------------------------

FORMATS = ("console", "json", "junit", "markdown", "github", "html")
"""Formats of ``--format NAME[:PATH]``; ``github`` is GitHub's workflow annotations."""


def _parse_formats(specs: list[str] | None, output: Path | None) -> list[tuple[str, Path | None]]:
    """``--format NAME[:PATH]`` (repeatable) and ``--output`` → (format, file or None=stdout).

    ``--output FILE`` gives the file of the one format named without a path (so ``--format
    json --output FILE`` works as it always has). Without a path, ``markdown`` goes to
    ``$GITHUB_STEP_SUMMARY`` when set; everything else to stdout (also ``NAME:-``), which one
    format at most may use (``github`` annotations may share it with ``console``).
    """
    import os

    from assay.errors import ConfigError

    stdout = Path("-")
    given: list[tuple[str, Path | None]] = []
    for spec in specs or ["console"]:
        name, colon, path = spec.partition(":")
        name = name.strip().lower()
        if name not in FORMATS:
            raise ConfigError(
                f"Invalid value for '--format': {name!r} is not one of {', '.join(FORMATS)}"
            )
        if colon and not path:
            raise ConfigError(f"--format {spec}: give a file after the colon, or leave it out")
        given.append((name, Path(path) if path else None))
    bare = [i for i, (_, path) in enumerate(given) if path is None]
    if output is not None:
        if len(bare) != 1:
            raise ConfigError("--output names the file of one format; write NAME:PATH instead")
        given[bare[0]] = (given[bare[0]][0], output)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    targets = [
        (name, Path(summary_file) if name == "markdown" and summary_file else stdout)
        if path is None
        else (name, path)
        for name, path in given
    ]
    on_stdout = [name for name, path in targets if path == stdout]
    documents = [name for name in on_stdout if name != "github"]
    if len(documents) > 1 or ("github" in on_stdout and documents not in ([], ["console"])):
        raise ConfigError(
            f"--format: {' and '.join(sorted(set(on_stdout)))} would all write to stdout; "
            "give all but one a file (NAME:PATH)"
        )
    # Under GitHub Actions, a step summary comes with annotations unless stdout is a document.
    names = [name for name, _ in targets]
    if (
        os.environ.get("GITHUB_ACTIONS") == "true"
        and "markdown" in names
        and "github" not in names
        and set(documents) <= {"console"}
    ):
        targets.append(("github", stdout))
    return [(name, None if path == stdout else path) for name, path in targets]


def _emit(
    analysis: Analysis,
    targets: list[tuple[str, Path | None]],
    *,
    quiet: bool = False,
    inconclusive_ok: bool = False,
    trace_url: str | None = None,
) -> None:
    """Render each requested format and write it (files first, then stdout)."""
    import os

    from rich.console import Console

    from assay import report as rp
    from assay.analysis import columns as tc
    from assay.analysis import tool_variants

    result = analysis.result
    trace_url = trace_url or os.environ.get("ASSAY_TRACE_URL") or None
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    for name, path in sorted(targets, key=lambda target: target[1] is None):
        if name == "console":
            # The sparklines need each trial's scores only.
            rows = None if quiet else analysis.trials.select(tc.TEST_ID, tc.SCORES).to_dicts()
            if path is None:
                # Piped output gets a wide table rather than rich's 80-column default; rich
                # drops colour when stdout is not a terminal and honours NO_COLOR.
                console = Console() if sys.stdout.isatty() else Console(width=120)
                rp.render_console(result, console, quiet=quiet, trials=rows)
                continue
            text = _console_text(result, quiet, rows)
        elif name == "json":
            text = rp.render_json(result)
        elif name == "junit":
            text = rp.render_junit(result, inconclusive_ok=inconclusive_ok)
        elif name == "markdown":
            text = rp.render_markdown(result)
        elif name == "github":
            text = rp.render_annotations(result, inconclusive_ok=inconclusive_ok)
        else:
            text = rp.render_html(
                result,
                trials=analysis.trials.to_dicts(),
                variants=tool_variants(analysis.trials).to_dicts(),
                trace_url=trace_url,
            )
        if path is None:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            append = name == "markdown" and summary_file is not None and str(path) == summary_file
            _write(path, text, append=append)


def _console_text(result: AnalysisResult, quiet: bool, rows: list[dict[str, Any]] | None) -> str:
    import io

    from rich.console import Console

    from assay.report import render_console

    buffer = io.StringIO()
    render_console(result, Console(file=buffer, no_color=True, width=120), quiet=quiet, trials=rows)
    return buffer.getvalue()


@app.command()
def report(
    paths: Annotated[
        list[str], typer.Argument(help="Trace set(s): folders, globs or Parquet files.")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")] = Path(
        "assay-report.html"
    ),
    threshold: Annotated[float, typer.Option(help="Required pass rate.")] = 0.80,
    confidence: Annotated[
        float, typer.Option(help="Two-sided confidence level of the interval.")
    ] = 0.95,
    errors: Annotated[
        ErrorsPolicy,
        typer.Option(help="Count error trials as failures, or exclude them from n."),
    ] = ErrorsPolicy.COUNT,
    min_score: Annotated[
        float | None, typer.Option(help="A score below this fails a trial without an outcome.")
    ] = None,
    inconclusive_ok: Annotated[
        bool, typer.Option("--inconclusive-ok", help="Exit 0 instead of 3 on INCONCLUSIVE.")
    ] = False,
    skip_bad_files: Annotated[
        bool,
        typer.Option("--skip-bad-files", help="Skip unreadable files (listed) instead of failing."),
    ] = False,
    test_attribute: Annotated[
        str,
        typer.Option(
            help="Span attribute naming the test (e.g. gen_ai.agent.name for production)."
        ),
    ] = "assay.test.id",
    trace_url: Annotated[
        str | None,
        typer.Option(
            envvar="ASSAY_TRACE_URL",
            help="Link trace ids to a trace viewer, e.g. http://localhost:16686/trace/{trace_id}.",
        ),
    ] = None,
) -> None:
    """Write the HTML report of a trace set (exit code as for analyze)."""
    from assay import analyze as run_analysis

    analysis = run_analysis(
        paths,
        threshold=threshold,
        confidence=confidence,
        errors="exclude" if errors is ErrorsPolicy.EXCLUDE else "count",
        min_score=min_score,
        skip_bad_files=skip_bad_files,
        test_attribute=test_attribute,
    )
    _emit(analysis, [("html", output)], trace_url=trace_url)
    counts = ", ".join(f"{n} {v}" for v, n in analysis.result.counts.items())
    print(f"wrote {output} ({len(analysis.result.tests)} tests: {counts})", file=sys.stderr)
    raise SystemExit(analysis.exit_code(inconclusive_ok))


# --- collector and import (owned by the collector work) -------------------------------------


@app.command("collect")
def collect(
    out: Annotated[Path, typer.Option("--out", help="Output folder of the spans table.")] = Path(
        "traces"
    ),
    host: Annotated[
        str, typer.Option(help="Interface to bind (0.0.0.0 exposes it to the network).")
    ] = "127.0.0.1",
    http_port: Annotated[
        int, typer.Option(help="OTLP/HTTP port (0: any free port, -1: disabled).")
    ] = 4318,
    grpc_port: Annotated[
        int, typer.Option(help="OTLP/gRPC port (0: any free port, -1: disabled).")
    ] = 4317,
    token: Annotated[
        str | None,
        typer.Option(envvar="ASSAY_COLLECT_TOKEN", help="Bearer token senders must present."),
    ] = None,
    wal_dir: Annotated[
        Path | None, typer.Option(help="Write-ahead log folder (default: OUT/_wal).")
    ] = None,
    roll_age: Annotated[
        float, typer.Option(help="Seconds after which a Parquet file is rolled.")
    ] = 60.0,
    roll_mb: Annotated[int, typer.Option(help="Roll a Parquet file after this many MB.")] = 128,
    max_body_mb: Annotated[int, typer.Option(help="Largest request body accepted.")] = 16,
    max_decompressed_mb: Annotated[
        int, typer.Option(help="Largest request once decompressed.")
    ] = 64,
    max_queue_mb: Annotated[
        int, typer.Option(help="Request MB waiting to be converted before pushing back.")
    ] = 128,
    fsync: Annotated[
        bool, typer.Option(help="fsync the write-ahead log before acknowledging.")
    ] = True,
    workers: Annotated[
        int | None,
        typer.Option(help="Decoding processes (default: one per core, at most 4; 0: none)."),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log every request.")] = False,
) -> None:
    """Receive OTLP (HTTP and gRPC) and write the spans table; SIGTERM drains and stops."""
    import logging

    from assay.collect import CollectorConfig, run_collector
    from assay.errors import AssayError

    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    mb = 1024 * 1024
    try:
        config = CollectorConfig(
            out=out,
            host=host,
            http_port=None if http_port < 0 else http_port,
            grpc_port=None if grpc_port < 0 else grpc_port,
            token=token,
            wal_dir=wal_dir,
            roll_age_s=roll_age,
            roll_bytes=roll_mb * mb,
            max_body_bytes=max_body_mb * mb,
            max_decompressed_bytes=max_decompressed_mb * mb,
            max_queue_bytes=max_queue_mb * mb,
            fsync=fsync,
            workers=workers,
        )
        run_collector(config)
    except AssayError as exc:
        fail(str(exc))


@app.command("import")
def import_(
    paths: Annotated[
        list[Path], typer.Argument(help="OTLP files or folders (JSON lines or protobuf).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Output folder of the spans table.")],
) -> None:
    """Import recorded OTLP files (JSON lines or protobuf, optionally gzip/zstd) into Parquet."""
    from assay.errors import AssayError
    from assay.ingest import import_files

    try:
        result = import_files(paths, out)
    except AssayError as exc:
        fail(str(exc))
    rejected = f", {result.rejected} rejected (invalid IDs)" if result.rejected else ""
    typer.echo(
        f"imported {result.spans} spans from {result.files_read} file(s) into "
        f"{len(result.written)} Parquet file(s) in {out}{rejected}"
    )


# --- assay run (the runner's command; self-contained) ------------------------------------------


@app.command("run")
def run_command(
    suite: Annotated[Path, typer.Argument(help="Suite: a YAML file or a folder of them.")],
    agent: Annotated[
        str | None, typer.Option("--agent", help="Python callable module:function.")
    ] = None,
    command: Annotated[
        str | None, typer.Option("--command", help="Command: JSON on stdin, JSON on stdout.")
    ] = None,
    url: Annotated[str | None, typer.Option("--url", help="HTTP endpoint: POST JSON.")] = None,
    runs: Annotated[
        int | None, typer.Option("--runs", help="Maximum trials per test (default: suite, 30).")
    ] = None,
    pass_rate: Annotated[
        float | None, typer.Option("--pass-rate", help="Required pass rate (default: suite, 0.8).")
    ] = None,
    difficulty: Annotated[
        str | None, typer.Option("--difficulty", help="Only tests of this difficulty.")
    ] = None,
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", metavar="TAG", help="Only tests with this tag (repeatable)."),
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Trials at once.")] = 4,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds before a trial becomes an error.")
    ] = 300.0,
    out: Annotated[Path, typer.Option("--out", help="Trace set folder.")] = Path("traces"),
    seed: Annotated[
        int | None, typer.Option("--seed", help="Base seed; each trial gets a derived seed.")
    ] = None,
    fixed: Annotated[
        bool, typer.Option("--fixed", help="Run every test to its maximum (no adaptive stop).")
    ] = False,
    sequential: Annotated[
        str, typer.Option("--sequential", help="Adaptive method: sprt | confidence-sequence.")
    ] = "sprt",
    delta: Annotated[
        float, typer.Option("--delta", help="Indifference zone: [threshold, threshold+delta].")
    ] = 0.1,
    alpha: Annotated[
        float | None,
        typer.Option("--alpha", help="P(PASS) bound at the threshold (default 1-confidence)."),
    ] = None,
    beta: Annotated[
        float, typer.Option("--beta", help="P(FAIL) bound at threshold + delta.")
    ] = 0.2,
    errors: Annotated[
        str, typer.Option("--errors", help="Error trials: count (as failures) or exclude.")
    ] = "count",
    max_trials: Annotated[
        int | None, typer.Option("--max-trials", help="Budget: trials in the whole run.")
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option("--max-cost", help="Budget: USD (needs --prices).")
    ] = None,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="Budget: tokens.")] = None,
    max_time: Annotated[
        float | None, typer.Option("--max-time", help="Budget: seconds of wall time.")
    ] = None,
    prices: Annotated[
        Path | None, typer.Option("--prices", help="Price table (YAML/JSON), USD per 1M tokens.")
    ] = None,
    agent_version: Annotated[
        str | None, typer.Option("--agent-version", help="assay.agent.version of the trials.")
    ] = None,
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="assay.run.id (default ASSAY_RUN_ID, random).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan (trials, cost) and run nothing.")
    ] = False,
    inconclusive_ok: Annotated[
        bool, typer.Option("--inconclusive-ok", help="Exit 0 instead of 3 on INCONCLUSIVE.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress display.")] = False,
    output_format: Annotated[
        str, typer.Option("--format", help="console, or json (the assay.analysis/v1 document).")
    ] = "console",
) -> None:
    """Run an agent's test suite many times (adaptively, within budgets) and record traces.

    Exit codes: 0 all PASS, 1 any FAIL, 2 usage or input error, 3 INCONCLUSIVE and no FAIL,
    130 interrupted.
    """
    from rich.console import Console

    stdout = Console()
    stderr = Console(stderr=True)
    try:
        from assay import run as r
        from assay.errors import ConfigError
        from assay.run._suite_load import filter_error

        if output_format not in ("console", "json"):
            raise ConfigError(f"--format must be console or json (got {output_format!r})")

        loaded = r.load_suite(suite)
        tests = loaded.select(difficulty=difficulty, tags=tag or ())
        if not tests:
            raise filter_error(difficulty, tag or ())
        price_table = r.load_prices(prices) if prices is not None else None
        options = r.RunOptions(
            runs=runs,
            pass_rate=pass_rate,
            adaptive=not fixed,
            method=sequential,
            delta=delta,
            alpha=alpha,
            beta=beta,
            errors=errors,
            concurrency=concurrency,
            timeout=timeout,
            out=str(out),
            seed=seed,
            budget=r.Budget(max_trials, max_tokens, max_cost, max_time),
            prices=price_table,
            agent_version=agent_version,
            run_id=run_id,
        )
        rows = r.plan(tests, options)  # validates the sequential design of every test
        the_agent = r.load_agent(agent=agent, command=command, url=url)
        if dry_run:
            r.render_plan(rows, options, the_agent.description, stdout, price_table)
            raise SystemExit(0)
        progress = None if quiet else r.RichProgress(stderr)
        result = r.run_suite(loaded, the_agent, options, tests=tests, progress=progress)
    except AssayError as exc:
        fail(str(exc))
    if output_format == "json":
        from assay.report import render_json

        sys.stdout.write(render_json(result.to_analysis()))
        r.render_summary(result, stderr)
    else:
        r.render_result(result, stdout if sys.stdout.isatty() else Console(width=140))
    if result.interrupted:
        raise SystemExit(130)
    raise SystemExit(result.exit_code(inconclusive_ok))
