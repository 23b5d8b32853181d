"""Rendering an analysis in several formats in one run: ``--format NAME[:PATH]``.

Each :class:`~assay.choices.OutputFormat` has one renderer in :data:`RENDERERS`, a function from
the analysis (and the settings of the command) to the text it writes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from assay._cli._common import FormatTarget, stdout_console, write_text
from assay.choices import OutputFormat

if TYPE_CHECKING:
    from rich.console import Console

    from assay.api import Analysis


def parse_formats(
    specs: list[FormatTarget] | None,
    output: Path | None,
    offered: tuple[OutputFormat, ...] = tuple(OutputFormat),
    command: str = "",
) -> list[FormatTarget]:
    """``--format NAME[:PATH]`` (repeatable) and ``--output`` → (format, file or None=stdout).

    ``--output FILE`` gives the file of the one format named without a path (so ``--format
    json --output FILE`` works as it always has). Without a path, ``markdown`` goes to
    ``$GITHUB_STEP_SUMMARY`` when set; everything else to stdout (also ``NAME:-``), which one
    format at most may use (``github`` annotations may share it with ``console``).

    Args:
        specs: Each ``--format`` given (None: console).
        output: ``--output``.
        offered: The formats the command renders (``plan`` and ``describe`` fewer); another
            one is a usage error.
        command: The command's name, for that error.
    """
    import os

    from assay.errors import ConfigError

    stdout = Path("-")
    given = list(specs or [FormatTarget(OutputFormat.CONSOLE, None)])
    for target in given:
        if target.format not in offered:
            *some, last = offered
            listed = f"{', '.join(some)} or {last}" if some else last
            raise ConfigError(f"--format {target.format}: {command} writes {listed}")
    bare = [i for i, target in enumerate(given) if target.path is None]
    if output is not None:
        if len(bare) != 1:
            raise ConfigError("--output names the file of one format; write NAME:PATH instead")
        given[bare[0]] = given[bare[0]]._replace(path=output)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    targets = [
        FormatTarget(
            name,
            Path(summary_file) if name is OutputFormat.MARKDOWN and summary_file else stdout,
        )
        if path is None
        else FormatTarget(name, path)
        for name, path in given
    ]
    on_stdout = [name for name, path in targets if path == stdout]
    documents = [name for name in on_stdout if name is not OutputFormat.GITHUB]
    if len(documents) > 1 or (
        OutputFormat.GITHUB in on_stdout and documents not in ([], [OutputFormat.CONSOLE])
    ):
        raise ConfigError(
            f"--format: {' and '.join(sorted(set(on_stdout)))} would all write to stdout; "
            "give all but one a file (NAME:PATH)"
        )
    # Under GitHub Actions, a step summary comes with annotations unless stdout is a document.
    names = [name for name, _ in targets]
    if (
        os.environ.get("GITHUB_ACTIONS") == "true"
        and OutputFormat.GITHUB in offered
        and OutputFormat.MARKDOWN in names
        and OutputFormat.GITHUB not in names
        and set(documents) <= {OutputFormat.CONSOLE}
    ):
        targets.append(FormatTarget(OutputFormat.GITHUB, stdout))
    return [FormatTarget(name, None if path == stdout else path) for name, path in targets]


@dataclass(frozen=True, slots=True)
class Settings:
    """What a command adds to the analysis for its renderings."""

    quiet: bool = False
    """The console shows the summary box only."""
    inconclusive_ok: bool = False
    """JUnit and annotations treat INCONCLUSIVE as passing."""
    trace_url: str | None = None
    """The user's trace viewer (``{trace_id}`` is replaced): the HTML report links trials
    there, the console prints their URLs (``report/_links.py``)."""
    trials_of: Mapping[str, int] | None = None
    """Test id → the most trials it could use: the ``trials`` column of ``assay run``."""
    warnings: tuple[str, ...] = ()
    """Notes of the result that are warnings (``assay run``'s): on stderr, not in the console
    report on stdout."""
    all_cases: bool = False
    """List every case with its details (``--all-cases``), however many."""
    export_otlp: str | None = None
    """An OTLP/HTTP endpoint the verdicts are sent to (``--export-otlp``, report/_otlp.py)."""


Renderer = Callable[["Analysis", Settings], str | bytes]


def _print_console(
    analysis: Analysis, settings: Settings, console: Console, *, on_stdout: bool = False
) -> None:
    """The console report; on stdout without the diagnostics (:func:`_print_diagnostics`)."""
    from assay.analysis import columns as tc
    from assay.report import render_console

    result = analysis.result
    if on_stdout and settings.warnings:
        result = replace(result, notes=tuple(n for n in result.notes if n not in settings.warnings))
    # The sparklines need each trial's scores only (not the tool names as strings).
    trials = analysis.held_trials
    rows = None if settings.quiet else trials.select(tc.TEST_ID, tc.SCORES).to_dicts()
    render_console(
        result,
        console,
        quiet=settings.quiet,
        trials=rows,
        trials_of=settings.trials_of,
        with_diagnostics=not on_stdout,
        all_cases=settings.all_cases,
        trace_url=settings.trace_url,
    )


def _print_diagnostics(analysis: Analysis, settings: Settings) -> None:
    """Print the warnings about the input and the run on stderr, one line each.

    Stdout holds only the report or document, which a pipe or ``> file`` keeps clean.
    """
    from rich.console import Console

    from assay.report import data_text, diagnostics

    lines = [*diagnostics(analysis.result), *(f"warning: {w}" for w in settings.warnings)]
    stderr = Console(stderr=True)
    for line in lines:
        stderr.print(data_text(f"assay: {line}", style="yellow"), soft_wrap=True)


def _console(analysis: Analysis, settings: Settings) -> str:
    import io

    from rich.console import Console

    buffer = io.StringIO()
    _print_console(analysis, settings, Console(file=buffer, no_color=True, width=120))
    return buffer.getvalue()


def _json(analysis: Analysis, settings: Settings) -> bytes:
    from assay.report import render_json_bytes

    return render_json_bytes(analysis.result, inconclusive_ok=settings.inconclusive_ok)


def _junit(analysis: Analysis, settings: Settings) -> str:
    from assay.report import render_junit

    return render_junit(analysis.result, inconclusive_ok=settings.inconclusive_ok)


def _markdown(analysis: Analysis, settings: Settings) -> str:
    from assay.report import render_markdown

    return render_markdown(
        analysis.result, all_cases=settings.all_cases, trace_url=settings.trace_url
    )


def _annotations(analysis: Analysis, settings: Settings) -> str:
    from assay.report import render_annotations

    return render_annotations(analysis.result, inconclusive_ok=settings.inconclusive_ok)


def _html(analysis: Analysis, settings: Settings) -> str:
    from assay.analysis import tool_variants
    from assay.report import render_html

    return render_html(
        analysis.result,
        trials=analysis.trials.to_dicts(),
        variants=tool_variants(analysis.trials).to_dicts(),
        trace_url=settings.trace_url,
    )


RENDERERS: Mapping[OutputFormat, Renderer] = {
    OutputFormat.CONSOLE: _console,
    OutputFormat.JSON: _json,
    OutputFormat.JUNIT: _junit,
    OutputFormat.MARKDOWN: _markdown,
    OutputFormat.GITHUB: _annotations,
    OutputFormat.HTML: _html,
}
"""The renderer of each format."""


def emit(analysis: Analysis, targets: list[FormatTarget], settings: Settings) -> None:
    """Render each requested format and write it (files first, then stdout).

    Then the diagnostics (warnings about the input and the run) go to stderr.
    """
    import os

    from assay.report import checked_template

    if not settings.trace_url:
        settings = replace(settings, trace_url=os.environ.get("ASSAY_TRACE_URL") or None)
    template, said = checked_template(settings.trace_url)
    settings = replace(settings, trace_url=template, warnings=(*settings.warnings, *said))
    for name, path in sorted(targets, key=lambda target: target.path is None):
        if name is OutputFormat.CONSOLE and path is None:
            # On stdout the table is printed by rich itself (o.stdout_console: its width).
            _print_console(analysis, settings, stdout_console(), on_stdout=True)
            continue
        write_document(name, path, RENDERERS[name](analysis, settings))
        if path is not None:
            from assay.judge import SUITE_RULE
            from assay.report import counted

            # Where it went, and what it says, on stderr (every command writing a file says so)
            counts = ", ".join(f"{n} {v}" for v, n in analysis.result.counts.items())
            tests = counted(len(analysis.result.tests), "test")
            decision = analysis.result.decision
            # With a suite comparison deciding, the answer first: the case counts are not it.
            answer = (
                f"{decision.verdict.value} by the suite comparison; "
                if decision.rule == SUITE_RULE
                else ""
            )
            print(f"wrote {path} ({answer}{tests}: {counts})", file=sys.stderr)
    if settings.export_otlp:
        from assay.report import export_otlp

        problem = export_otlp(analysis.result, settings.export_otlp)
        # The verdicts and the exit code stand: the export is a copy of them, like a report file.
        print(
            f"assay: warning: --export-otlp: {problem}"
            if problem
            else f"sent the verdicts to {settings.export_otlp} (OTLP spans and metrics)",
            file=sys.stderr,
        )
    _print_diagnostics(analysis, settings)


def write_document(name: OutputFormat, path: Path | None, text: str | bytes) -> None:
    """Write one rendering (text, or UTF-8 bytes) to its file, or to stdout (None).

    Markdown whose file is ``$GITHUB_STEP_SUMMARY`` is appended: a job's steps share it.
    """
    import os

    if path is None:
        binary = getattr(sys.stdout, "buffer", None)
        if isinstance(text, bytes) and binary is not None:
            sys.stdout.flush()  # what was written as text first
            binary.write(text)
            binary.flush()
        else:
            text = text.decode() if isinstance(text, bytes) else text
            sys.stdout.write(text)
            sys.stdout.flush()
        return
    summary = name is OutputFormat.MARKDOWN and str(path) == os.environ.get("GITHUB_STEP_SUMMARY")
    write_text(path, text, append=summary)


def write_documents(targets: list[FormatTarget], render: Callable[[OutputFormat], str]) -> None:
    """Write what a command without an analysis renders (``plan``, ``describe``) to each target.

    Files first, each named on stderr, then stdout.
    """
    for name, path in sorted(targets, key=lambda target: target.path is None):
        write_document(name, path, render(name))
        if path is not None:
            print(f"wrote {path}", file=sys.stderr)
