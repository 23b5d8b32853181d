"""Rendering an analysis in several formats in one run: ``--format NAME[:PATH]``."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._cli._common import write_text

if TYPE_CHECKING:
    from assay.api import Analysis
    from assay.judge import AnalysisResult

FORMATS = ("console", "json", "junit", "markdown", "github", "html")
"""Formats of ``--format NAME[:PATH]``; ``github`` is GitHub's workflow annotations."""


def parse_formats(specs: list[str] | None, output: Path | None) -> list[tuple[str, Path | None]]:
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


def emit(
    analysis: Analysis,
    targets: list[tuple[str, Path | None]],
    *,
    quiet: bool = False,
    inconclusive_ok: bool = False,
    trace_url: str | None = None,
    trials_of: Mapping[str, int] | None = None,
) -> None:
    """Render each requested format and write it (files first, then stdout).

    ``trials_of`` (test id → the most trials it could use) adds the ``trials`` column of
    ``assay run`` to the console table.
    """
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
                rp.render_console(result, console, quiet=quiet, trials=rows, trials_of=trials_of)
                continue
            text = _console_text(result, quiet, rows, trials_of)
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
            write_text(path, text, append=append)


def _console_text(
    result: AnalysisResult,
    quiet: bool,
    rows: list[dict[str, Any]] | None,
    trials_of: Mapping[str, int] | None,
) -> str:
    import io

    from rich.console import Console

    from assay.report import render_console

    buffer = io.StringIO()
    console = Console(file=buffer, no_color=True, width=120)
    render_console(result, console, quiet=quiet, trials=rows, trials_of=trials_of)
    return buffer.getvalue()
