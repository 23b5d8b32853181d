"""The ``assay`` command line: thin; parses options, calls the library, picks an exit code.

Exit codes (docs/cli.md): 0 nothing failed or was inconclusive, 1 at least one FAIL, 2 usage or
input error, 3 nothing failed but something is INCONCLUSIVE (``--inconclusive-ok`` makes it 0).

Each command lives in ``assay._cli``; this module registers them and turns every usage error
and every :class:`~assay.errors.AssayError` into one line on stderr and exit code 2.
"""

from __future__ import annotations

import gc
import re
import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperCommand
from typer.exceptions import TyperException

# First of assay's modules: the package configures Polars' allocator before anything loads it.
from assay._cli import EXIT_USAGE, fail, renamed, show_defaults
from assay._cli.analyze import analyze, compare, report
from assay._cli.collect import collect, import_
from assay._cli.compact import compact
from assay._cli.describe import describe
from assay._cli.plan import plan
from assay._cli.run import run_command
from assay._cli.watch import watch
from assay.errors import AssayError, ConfigError, OptionError

__all__ = ["app", "fail", "main", "run"]

app = typer.Typer(
    name="assay",
    help="Statistical verdicts for AI agents, read from OpenTelemetry traces.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    # `-h` as well, on every command (click's children inherit the context settings).
    context_settings={"help_option_names": ["-h", "--help"]},
)


_LIST = re.compile(r"<list\[(\w+)\]>")
_REQUIRED = re.compile(r"\{(\w+)\}")


def _usage(line: str) -> str:
    """``assay analyze [OPTIONS] {paths}...`` as ``assay analyze [OPTIONS] PATHS...``."""
    return _REQUIRED.sub(lambda m: m.group(1).upper(), line)


class _Command(TyperCommand):
    """A command whose help reads as click's and POSIX's do: ``assay analyze [OPTIONS] PATHS...``.

    typer writes a required argument ``{paths}`` on the usage line and a repeated value's
    placeholder ``<list[str]>``; the ``...`` already says it repeats, so ``<str>`` is shown.
    """

    def get_help(self, ctx: Any) -> str:  # typer's own click Context
        show_defaults(self)
        text = super().get_help(ctx)
        usage, _, rest = text.partition("\n")
        # padded to the same width, so the help column stays aligned
        rest = _LIST.sub(lambda m: f"<{m.group(1).lower()}>".ljust(len(m.group(0))), rest)
        return f"{_usage(usage)}\n{rest}"

    def get_usage(self, ctx: Any) -> str:
        return _usage(super().get_usage(ctx))

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return list(super().parse_args(ctx, renamed(str(self.name), args)))

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except OptionError as exc:  # the library names a field: say the flag that set it
            raise ConfigError(f"{self.flag(exc.field)} {exc.problem}") from None

    def flag(self, field: str) -> str:
        """The flag of this command that sets ``field``: its parameter is named after it."""
        for param in self.params:
            if param.name == field:
                return next((str(o) for o in param.opts if o.startswith("--")), field)
        return field


def _print_version(value: bool) -> None:
    if value:
        from assay.version import __version__

        print(f"assay {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        is_eager=True,
        callback=_print_version,
        help="Print the version and exit.",
    ),
) -> None:
    """Statistical verdicts for AI agents, read from OpenTelemetry traces."""


# `assay -h` lists each command with a whole phrase: click cuts a docstring at its first full
# stop or at the column limit ("Follow a growing trace set (e.g."), so each says it in short.
_COMMANDS = (
    ("analyze", analyze, "Give every test of a trace set a verdict (the CI entry point)."),
    ("compare", compare, "Did CURRENT get worse than BASELINE, and what changed?"),
    ("plan", plan, "Power analysis: how many trials a verdict needs."),
    ("report", report, "Write the HTML report of a trace set."),
    ("collect", collect, "Receive OTLP (HTTP and gRPC) and write the spans table."),
    ("import", import_, "Import recorded OTLP files into Parquet."),
    ("run", run_command, "Run an agent's suite many times and record its traces."),
    ("describe", describe, "What a trace set holds: names, conventions, test attributes."),
    ("watch", watch, "Follow a growing trace set and judge every test live."),
    ("compact", compact, "Merge a trace set's small files into few (crash-safe)."),
)
for _name, _function, _short in _COMMANDS:
    app.command(_name, cls=_Command, short_help=_short)(_function)


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
        context = getattr(exc, "ctx", None)  # typer's click is private: read it duck-typed
        hint = ""
        if type(exc).__name__ == "MissingParameter" and context is not None:
            # what to type instead, as argparse shows it; the error stays the last line
            print(context.get_usage(), file=sys.stderr)
            hint = f" (see '{context.command_path} -h')"
        print(f"assay: error: {exc.format_message()}{hint}", file=sys.stderr)
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
    code = run()
    # The process ends here. Python's finalization would then run full garbage collections
    # over every object left, scipy's thousands of modules among them: 0.2-0.3 s of one core
    # after an analysis, for nothing the system does not free at exit anyway. Frozen, they are
    # left out of those collections; atexit handlers (an exporter's flush) still run.
    gc.freeze()
    sys.exit(code)
