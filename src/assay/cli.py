"""The ``assay`` command line: thin; parses options, calls the library, picks an exit code.

Exit codes (DESIGN.md): 0 nothing failed or was inconclusive, 1 at least one FAIL, 2 usage or
input error, 3 nothing failed but something is INCONCLUSIVE (``--inconclusive-ok`` makes it 0).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from typer.exceptions import TyperException

from assay.errors import AssayError

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


class OutputFormat(StrEnum):
    """Formats of ``assay analyze``."""

    console = "console"
    json = "json"


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
    format: Annotated[OutputFormat, typer.Option("--format", help="Output format.")] = (
        OutputFormat.console
    ),
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report to this file.")
    ] = None,
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
    from rich.console import Console

    from assay import analyze as run_analysis
    from assay.report import render_console, render_json

    result = run_analysis(
        paths,
        threshold=threshold,
        confidence=confidence,
        errors="exclude" if errors is ErrorsPolicy.EXCLUDE else "count",
        min_score=min_score,
        skip_bad_files=skip_bad_files,
        test_attribute=test_attribute,
    ).result
    if format is OutputFormat.json:
        text = render_json(result)
        if output is None:
            sys.stdout.write(text)
        else:
            _write(output, text)
    elif output is None:
        # Piped output gets a wide, colourless table rather than rich's 80-column default.
        render_console(result, Console() if sys.stdout.isatty() else Console(width=120))
    else:
        with output.open("w", encoding="utf-8") as handle:
            render_console(result, Console(file=handle, no_color=True, width=120))
    raise SystemExit(result.exit_code(inconclusive_ok))


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
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
