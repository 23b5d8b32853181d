"""The options of an analysis, declared once and spliced into every command that judges.

``analyze``, ``compare``, ``report`` and ``watch`` all build an ``AnalyzeOptions``. Each of its
fields is one entry of :data:`ANALYSIS_FLAGS` here: the flag's spelling, type and help (its
``Annotated`` declaration in :mod:`assay._cli._common`) and how the parsed value becomes the
field. typer builds a command's options from its signature, so :func:`analysis_options`
decorates a command that takes ``options: AnalyzeOptions``: it replaces that parameter in the
command's ``__signature__`` by one keyword-only parameter per field (typer reads the signature,
not the code), and the wrapper turns what typer passes back into one ``AnalyzeOptions``.

Every spliced flag defaults to "not given" (None), and only what was given reaches
``AnalyzeOptions``: its defaults are the only ones (docs/architecture.md, "Options declared
once"). ``--help`` shows them, read from the dataclass when help is drawn
(:func:`shown_defaults`), so that starting ``assay`` does not import the analysis.
The Python parameter is named after the field, so an ``OptionError`` naming a field is
reported under the flag that set it without a table (:mod:`assay.cli`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay._cli import _common as o

if TYPE_CHECKING:
    pass


def _same(value: Any) -> Any:
    return value


def _ks(text: str) -> tuple[int, ...]:
    from assay.judge import parse_ks

    return parse_ks(text)


@dataclass(frozen=True, slots=True)
class AnalysisFlag:
    """One field of :class:`AnalyzeOptions` as a command-line option."""

    field: str
    """The ``AnalyzeOptions`` field, also the command's parameter name."""
    annotation: Any
    """Its ``Annotated[type, typer.Option(...)]``: spelling, type and help, declared once."""
    to_field: Callable[[Any], Any] = _same
    """The parsed flag value → the field's value."""
    shown: Callable[[Any], str] = str
    """The field's default as ``--help`` shows it."""

    def parameter(self) -> inspect.Parameter:
        """The keyword-only parameter typer reads; None: not given (the library's default)."""
        return inspect.Parameter(
            self.field, inspect.Parameter.KEYWORD_ONLY, annotation=self.annotation, default=None
        )


ANALYSIS_FLAGS: tuple[AnalysisFlag, ...] = (
    AnalysisFlag("threshold", o.Threshold),
    AnalysisFlag("confidence", o.Confidence),
    AnalysisFlag("ci_method", o.CIMethodOpt),
    AnalysisFlag("anytime", o.Anytime),
    AnalysisFlag("errors", o.Errors),
    AnalysisFlag("min_score", o.MinScore),
    AnalysisFlag("test_attribute", o.TestAttribute),
    AnalysisFlag("pass_when", o.PassWhen),
    AnalysisFlag("ks", o.Ks, _ks, lambda ks: ",".join(str(k) for k in ks)),
    AnalysisFlag("score_ci", o.ScoreCIOpt),
    AnalysisFlag("min_mean_score", o.MinMeanScore),
    AnalysisFlag("max_std_dev", o.MaxStdDev),
    AnalysisFlag("regression_test", o.Test),
    AnalysisFlag("alpha", o.Alpha),
    AnalysisFlag("delta", o.Delta),
    AnalysisFlag("power", o.Power),
    AnalysisFlag("adjust", o.AdjustOpt),
    AnalysisFlag("fail_on", o.FailOnOpt, tuple),
    AnalysisFlag("prices", o.Prices, str),
    AnalysisFlag("suite_attribute", o.SuiteAttribute),
    AnalysisFlag("suite_threshold", o.SuiteThreshold),
    AnalysisFlag("suite_ci", o.SuiteCIOpt),
    AnalysisFlag("margin", o.Margin),
    AnalysisFlag("gate_cases", o.GateCases),
    AnalysisFlag("case_behaviour", o.CaseBehaviour),
    AnalysisFlag("allow_missing_cases", o.AllowMissingCases),
)
NOT_FLAGS = frozenset({"seed"})
"""Fields no command offers: the bootstrap's seed stays fixed so that results reproduce (and
``--seed`` is a run's base seed in ``assay run``: one flag, one meaning)."""


def shown_defaults() -> dict[str, str]:
    """The default ``--help`` shows for each analysis flag, read from ``AnalyzeOptions``.

    None and False (not given) show none.
    """
    from assay.judge import AnalyzeOptions

    defaults = AnalyzeOptions()
    shown = {}
    for flag in ANALYSIS_FLAGS:
        value = getattr(defaults, flag.field)
        if value is not None and value is not False and value != ():
            shown[flag.field] = flag.shown(value)
    return shown


def show_defaults(command: Any) -> None:
    """Show the library's default in ``--help`` on the analysis flags of a click command."""
    fields: frozenset[str] = getattr(command.callback, "analysis_fields", frozenset())
    if fields:
        shown = shown_defaults()
        for param in command.params:
            if param.name in fields and param.name in shown:
                # this command object only draws help (typer builds one per invocation)
                param.default = shown[param.name]


Command = Callable[..., None]


def analysis_options(*, only: Collection[str] | None = None) -> Callable[[Command], Command]:
    """Give a command taking ``options: AnalyzeOptions`` one flag per field instead.

    Args:
        only: The fields the command offers (``watch`` honours a few); None: every field. The
            rest keep the library's default.
    """
    flags = tuple(f for f in ANALYSIS_FLAGS if only is None or f.field in only)

    def decorate(command: Command) -> Command:
        # `options` is typed for mypy only: its annotation is not evaluated here
        own = inspect.signature(command, eval_str=True, locals={"AnalyzeOptions": object})
        kept = [p for p in own.parameters.values() if p.name != "options"]

        @functools.wraps(command)
        def with_options(**given: Any) -> None:
            from assay.judge import AnalyzeOptions

            chosen = {}
            for flag in flags:
                value = given.pop(flag.field)
                if value is not None and value is not False:  # given: else the library's default
                    chosen[flag.field] = flag.to_field(value)
            command(options=AnalyzeOptions(**chosen), **given)

        spliced = [*kept, *(flag.parameter() for flag in flags)]
        signature = own.replace(parameters=spliced)
        with_options.__signature__ = signature  # type: ignore[attr-defined]
        # evaluated, so that typer's get_type_hints needs none of the command's imports
        with_options.__annotations__ = {p.name: p.annotation for p in spliced}
        # read by --help through typer's wrapper (functools.update_wrapper copies __dict__)
        with_options.analysis_fields = frozenset(f.field for f in flags)  # type: ignore[attr-defined]
        return with_options

    return decorate
