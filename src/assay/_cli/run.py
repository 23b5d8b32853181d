"""``assay run``: run an agent's test suite many times (adaptively, within budgets).

The library side is :mod:`assay.run`; this module parses options, calls it and picks the exit
code (0 all PASS, 1 any FAIL, 2 usage or input error, 3 INCONCLUSIVE and no FAIL, 130 Ctrl-C).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from assay._cli import _common as o
from assay._cli._emit import Settings, emit, parse_formats
from assay.choices import OutputFormat, SequentialMethod
from assay.errors import ConfigError


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
    pass_rate: o.Threshold = None,
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
    out: o.OutOrDefault = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Base seed; each trial gets a derived seed.")
    ] = None,
    fixed: o.Fixed = False,
    method: Annotated[
        SequentialMethod,
        typer.Option(
            "--sequential",
            help="Adaptive stopping rule: confidence-sequence stops once the anytime-valid "
            "interval lies on one side of the threshold; sprt stops where Wald's test decides. "
            "The verdict is that interval either way.",
        ),
    ] = SequentialMethod.CONFIDENCE_SEQUENCE,
    sprt_delta: Annotated[
        float | None,
        typer.Option(
            help="SPRT: the width of its indifference zone [threshold, threshold + this] "
            "(default 0.1)."
        ),
    ] = None,
    sprt_alpha: Annotated[
        float | None,
        typer.Option(
            help="SPRT: the chance of its PASS decision at the threshold (default 1 - the "
            "suite's confidence)."
        ),
    ] = None,
    delta: o.Delta = None,
    alpha: o.Alpha = None,
    beta: Annotated[
        float | None,
        typer.Option(
            "--beta", help="SPRT only: the chance of its FAIL decision at threshold + delta."
        ),
    ] = None,
    errors: o.Errors = None,
    baseline_agent: Annotated[
        str | None,
        typer.Option(
            "--baseline-agent",
            help="Compare with this baseline version (Python callable module:function): both "
            "run each case, cases in a seeded random order, until the anytime interval of the "
            "mean paired difference settles (docs/adaptive.md).",
        ),
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="Compare with a recorded baseline trace set (its pass rate per case) instead.",
        ),
    ] = None,
    baseline_version: o.BaselineVersion = None,
    margin: o.Margin = None,
    max_cases: Annotated[
        int | None, typer.Option("--max-cases", help="Budget of a comparison: cases started.")
    ] = None,
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
    prices: o.Prices = None,
    agent_version: Annotated[
        str | None, typer.Option("--agent-version", help="assay.agent.version of the trials.")
    ] = None,
    run_id: Annotated[
        str | None,
        typer.Option(
            "--assign-run-id",
            help="The assay.run.id this run's trials get (default ASSAY_RUN_ID, else random); "
            "--run-id elsewhere selects a run's trials.",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan (trials, cost) and run nothing.")
    ] = False,
    inconclusive_ok: o.InconclusiveOk = False,
    quiet: o.Quiet = False,
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Exit 2 if a file has fields assay cannot honour."),
    ] = False,
    format: o.Formats = None,
    output: o.Output = None,
) -> None:
    """Run an agent's test suite many times (adaptively, within budgets) and record traces.

    Exit codes: 0 all PASS, 1 any FAIL, 2 usage or input error, 3 INCONCLUSIVE and no FAIL,
    130 interrupted.
    """
    import sys

    from rich.console import Console

    from assay import run as r

    targets = parse_formats(format, output)
    stderr = Console(stderr=True)
    loaded = r.load_suite(suite)
    if strict and loaded.findings:
        for finding in loaded.findings:
            stderr.print(f"assay: warning: {finding.message}", markup=False, highlight=False)
        raise ConfigError(
            f"--strict: {len(loaded.findings)} file(s) have fields assay cannot honour "
            "(listed above)"
        )
    tests = loaded.select(difficulty=difficulty, tags=tag or ())
    if not tests:
        raise r.filter_error(difficulty, tag or ())
    price_table = r.load_prices(prices) if prices is not None else None
    comparing = baseline_agent is not None or baseline is not None
    if comparing:
        from assay._cli._paired_run import PairedAsk, check_paired_flags

        check_paired_flags(fixed=fixed, sequential=method, beta=beta)
        if sprt_delta is not None or sprt_alpha is not None:
            given = "--sprt-delta" if sprt_delta is not None else "--sprt-alpha"
            raise ConfigError(f"{given} shapes the SPRT; a comparison reads --delta and --alpha")
        ask = PairedAsk(baseline_agent, baseline, baseline_version, delta, alpha, margin, max_cases)
    else:  # --delta and --alpha were the SPRT's before they meant a comparison's alone
        sprt_delta = _sprt_alias("--delta", delta, "--sprt-delta", sprt_delta)
        sprt_alpha = _sprt_alias("--alpha", alpha, "--sprt-alpha", sprt_alpha)
    if not comparing and (margin is not None or max_cases is not None or baseline_version):
        given = "--margin" if margin is not None else "--max-cases"
        given = "--baseline-version" if baseline_version is not None else given
        raise ConfigError(f"{given} applies to a comparison (--baseline-agent or --baseline)")
    options = r.RunOptions(
        runs=runs,
        pass_rate=pass_rate,
        adaptive=not fixed,
        method=method,
        delta=sprt_delta,
        alpha=sprt_alpha,
        beta=beta,
        errors=errors or o.ErrorsPolicy.COUNT,
        concurrency=concurrency,
        timeout=timeout,
        out=str(out) if out is not None else None,
        seed=seed,
        budget=r.Budget(max_trials, max_tokens, max_cost, max_time),
        prices=price_table,
        agent_version=agent_version,
        run_id=run_id,
    )
    rows = r.plan(tests, options)  # validates the sequential design of every test
    per_test: dict[str, r.Agent] = {}
    if agent is None and command is None and url is None:
        # EvalView's layout: the files (or the folder's config.yaml) name the endpoint.
        the_agent, per_test = r.agents_for(tests, loaded.agent)
    else:
        the_agent = r.load_agent(agent=agent, command=command, url=url)
    if comparing:
        from assay._cli._paired_run import run_paired_command

        run_paired_command(
            loaded,
            tests,
            the_agent,
            options,
            ask,
            targets,
            quiet=quiet,
            inconclusive_ok=inconclusive_ok,
            dry_run=dry_run,
        )
    if dry_run:
        r.render_plan(rows, options, the_agent.description, o.stdout_console(), price_table)
        raise SystemExit(0)
    progress: r.RichProgress | r.LogProgress | None = None
    if not quiet:
        # Bars redrawn in place on a terminal; in a log, a line per settled test and a heartbeat.
        progress = (
            r.RichProgress(stderr)
            if stderr.is_terminal
            else r.LogProgress(sys.stderr, options.budget)
        )
    result = r.run_suite(
        loaded, the_agent, options, tests=tests, progress=progress, agents=per_test
    )
    if result.analysis is not None:
        emit(
            result.analysis,
            targets,
            Settings(
                quiet=quiet,
                inconclusive_ok=inconclusive_ok,
                trials_of=result.max_runs,
                warnings=result.warnings,
            ),
        )
    # The summary goes where the console table went; a document on stdout keeps it clean.
    document_on_stdout = any(
        path is None and name is not OutputFormat.CONSOLE for name, path in targets
    )
    if document_on_stdout:
        summary = stderr
    else:
        summary = o.stdout_console()
    r.render_run_summary(result, summary)
    if result.interrupted:
        raise SystemExit(130)
    raise SystemExit(result.exit_code(inconclusive_ok))


def _sprt_alias(old: str, value: float | None, new: str, given: float | None) -> float | None:
    """The SPRT's value of ``new``, read from its deprecated spelling ``old`` if that was used."""
    if value is None:
        return given
    if given is not None:
        raise ConfigError(f"{old} without a baseline is the deprecated {new}: give {new} alone")
    print(
        f"assay run: {old} is deprecated for the SPRT, use {new} ({old} is a comparison's, "
        "as in compare)",
        file=sys.stderr,
    )
    return value
