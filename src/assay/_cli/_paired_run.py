"""``assay run --baseline-agent`` / ``--baseline``: an adaptive comparison of two versions."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, NoReturn

from assay._cli._common import FormatTarget, write_text
from assay._json_text import json_text
from assay.choices import OutputFormat, SequentialMethod
from assay.errors import ConfigError

if TYPE_CHECKING:
    from rich.console import Console

    from assay.run import Agent, PairedRunResult, RunOptions, Suite, TestCase
    from assay.stats import PairedStatus

_PROGRESS_EVERY = 10
"""A progress line every this many cases (and at the decision)."""


class PairedAsk(NamedTuple):
    """The comparison's flags as given."""

    baseline_agent: str | None
    baseline: Path | None
    baseline_version: str | None
    delta: float | None
    alpha: float | None
    margin: float | None
    max_cases: int | None


def check_paired_flags(
    *,
    fixed: bool,
    sequential: SequentialMethod,
    beta: float | None,
) -> None:
    """Refuse the flags a comparison cannot honour (one line each)."""
    if fixed:
        raise ConfigError(
            "--fixed: a comparison stops adaptively; for the fixed design run each version "
            "with --fixed and `assay compare` them"
        )
    if sequential is not SequentialMethod.CONFIDENCE_SEQUENCE or beta is not None:
        raise ConfigError(
            "--sequential/--beta shape a single version's stopping rule; a comparison stops on "
            "the confidence sequence of the mean paired difference"
        )


def run_paired_command(
    suite: Suite,
    tests: Sequence[TestCase],
    agent: Agent,
    options: RunOptions,
    ask: PairedAsk,
    targets: Sequence[FormatTarget],
    *,
    quiet: bool,
    inconclusive_ok: bool,
    dry_run: bool,
) -> NoReturn:
    """Run the comparison, print it (console and/or JSON) and exit with its verdict's code."""
    from rich.console import Console

    from assay.judge import AnalyzeOptions
    from assay.run import PairedRunOptions, load_agent, load_baseline_rates, run_paired

    if ask.baseline_agent is not None and ask.baseline is not None:
        raise ConfigError("give one baseline: --baseline-agent or --baseline, not both")
    for target in targets:
        if target.format not in (OutputFormat.CONSOLE, OutputFormat.JSON):
            raise ConfigError(
                f"--format {target.format}: a comparison run writes console or json; "
                "re-read its traces with `assay compare` for the other reports"
            )
    rates = None
    source = "agent"
    version = ask.baseline_version or "baseline"
    if ask.baseline is not None:
        rates, version = load_baseline_rates(ask.baseline, ask.baseline_version)
        source = str(ask.baseline)
    judged = AnalyzeOptions()  # --delta and --alpha default as in the commands that judge
    paired = PairedRunOptions(
        delta=judged.delta if ask.delta is None else ask.delta,
        alpha=judged.alpha if ask.alpha is None else ask.alpha,
        margin=ask.margin,
        baseline_version=version,
        max_cases=ask.max_cases,
    )
    baseline_agent = load_agent(agent=ask.baseline_agent) if ask.baseline_agent else None
    stderr = Console(stderr=True)
    if dry_run:
        cases = len(tests) if paired.max_cases is None else min(len(tests), paired.max_cases)
        sides = 2 if baseline_agent is not None else 1
        trials = sum(options.runs or t.variance.runs for t in tests[:cases]) * sides
        print(
            f"assay run --dry-run: adaptive paired comparison of {agent.description} against "
            f"{baseline_agent.description if baseline_agent else source}: at most {cases} cases, "
            f"{trials} trials; it stops once the {1 - paired.alpha:.0%} anytime interval of "
            "the mean paired difference settles"
        )
        raise SystemExit(0)
    result = run_paired(
        suite,
        agent,
        options,
        paired,
        baseline_agent=baseline_agent,
        baseline_rates=rates,
        baseline_source=source,
        tests=tests,
        on_case=None if quiet else _progress(stderr, len(tests)),
    )
    wrote_stdout = False
    for target in targets:
        if target.format is OutputFormat.JSON:
            text = json_text(result.to_json())
            if target.path is None or str(target.path) == "-":
                sys.stdout.write(text)
                wrote_stdout = True
            else:
                write_text(target.path, text)
    console = stderr if wrote_stdout else Console(width=120)
    render_paired(result, console)
    if result.interrupted:
        raise SystemExit(130)
    raise SystemExit(result.exit_code(inconclusive_ok))


def _progress(console: Console, total: int) -> Callable[[PairedStatus], None]:
    def on_case(status: PairedStatus) -> None:
        if status.cases % _PROGRESS_EVERY and status.decision.value == "undecided":
            return
        mean = "" if status.mean is None else f"mean {status.mean * 100:+.1f} points, "
        console.print(
            f"case {status.cases}/{total}: {mean}interval [{status.low * 100:+.1f}, "
            f"{status.high * 100:+.1f}]: {status.decision.value}",
            markup=False,
            highlight=False,
        )

    return on_case


def render_paired(result: PairedRunResult, console: Console) -> None:
    """The verdict first, then the design, the cases used and where the traces are."""
    from assay.run import PAIRED_CONSTRUCTION as CONSTRUCTION
    from assay.run import PAIRED_DESIGN as DESIGN

    s = result.status

    def print_(text: str) -> None:
        console.print(text, markup=False, highlight=False)

    print_(
        f"{result.verdict.value}  {result.current_version} against {result.baseline_version}: "
        f"{result.reason}"
    )
    print_(
        f"design: {DESIGN}; cases used: {s.cases} of {result.suite_cases} (random order, "
        f"seed {result.order_seed}); {len(result.trials)} trials; {result.elapsed_s:.1f} s"
        + (f"; ${result.cost:.4f}" if result.cost else "")
    )
    print_(
        f"interval: {s.confidence:.0%} anytime-valid, [{s.low * 100:+.1f}, {s.high * 100:+.1f}] "
        f"points, {CONSTRUCTION}"
    )
    if result.versions:
        print_(
            "trials by version: "
            + " · ".join(
                f"{v.label} {v.trials} ({v.errors} error{'s' if v.errors != 1 else ''})"
                for v in result.versions
            )
        )
    for warning in result.warnings:
        print_(f"warning: {warning}")
    if result.baseline_source == "agent":
        again = (
            f"assay analyze {result.out} --run-id {result.run_id} --baseline-version "
            f"{result.baseline_version} --current-version {result.current_version}"
        )
    else:
        again = f"assay analyze {result.out} --run-id {result.run_id}"
    print_(f"traces: {result.out} (run id {result.run_id}); re-read: {again}")
    print_(
        "  (a re-read judges the cases run with the fixed-design test, which does not know "
        "this run stopped on its interval: the verdict above is the comparison's)"
    )
