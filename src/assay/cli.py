"""The ``assay`` command line: thin; parses options, calls the library, picks an exit code."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="assay",
    help="Statistical verdicts for AI agents, read from OpenTelemetry traces.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Statistical verdicts for AI agents, read from OpenTelemetry traces."""


def main() -> None:
    """Entry point of the ``assay`` console script."""
    app()
