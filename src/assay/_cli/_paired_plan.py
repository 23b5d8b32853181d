"""``assay plan --paired``: cases × trials per case for a paired comparison of two versions."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from assay._cli._plain import Plain
from assay.choices import PairedDesign
from assay.stats import PairedPlan, PilotVariances


def plan_paired_command(
    *,
    delta: float,
    alpha: float,
    power: float,
    between_sd: float | None,
    within_var: float | None,
    pilot: list[str] | None,
    pilot_baseline_version: str | None,
    trials_per_case: str,
    design: PairedDesign = PairedDesign.FIXED,
) -> Plain:
    """Plan a paired comparison from assumed variances or a pilot set."""
    from assay.errors import ConfigError
    from assay.stats import plan_adaptive_paired, plan_paired

    if (pilot is None) == (between_sd is None and within_var is None):
        raise ConfigError("a paired plan needs either --pilot SET or --between-sd and --within-var")
    measured: PilotVariances | None = None
    if pilot is not None:
        measured = _pilot(pilot, pilot_baseline_version)
        between, within = measured.between_case_sd, measured.within_case_var
    else:
        if between_sd is None or within_var is None:
            raise ConfigError("a paired plan needs both --between-sd and --within-var")
        between, within = between_sd, within_var
    planner = plan_adaptive_paired if design is PairedDesign.ADAPTIVE else plan_paired
    plan = planner(
        delta,
        alpha=alpha,
        power=power,
        between_case_sd=between,
        within_case_var=within,
        trials_per_case=_ks(trials_per_case),
    )
    document: dict[str, Any] = {
        "schema": "assay.plan/v1",
        "kind": "paired",
        **asdict(plan),
        "pilot": None if measured is None else {"paths": pilot, **asdict(measured)},
    }
    return _plain(document, plan, measured, pilot)


def _ks(text: str) -> list[int]:
    from assay.errors import ConfigError

    try:
        ks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"--trials-per-case: not a list of whole numbers: {text!r}") from None
    if not ks or min(ks) < 1:
        raise ConfigError(f"--trials-per-case: each must be at least 1 (got {text!r})")
    return ks


def _pilot(paths: list[str], baseline_version: str | None) -> PilotVariances:
    """Per-case counts of the pilot (one version, or two with a baseline version)."""
    from assay.analysis import columns
    from assay.api import analyze
    from assay.errors import ConfigError
    from assay.stats import pilot_variances

    analysis = analyze(paths, baseline_version=baseline_version)
    tests = analysis.result.tests
    if baseline_version is None:
        versions = analysis.trials[columns.AGENT_VERSION].drop_nulls().unique().sort().to_list()
        if len(versions) > 1:
            # Counting both versions' trials as one would pass their difference off as noise.
            raise ConfigError(
                f"--pilot holds several assay.agent.version values ({', '.join(versions)}): "
                "name the baseline with --pilot-baseline-version"
            )
        counted = [t for t in tests if t.n > 0]
        return pilot_variances([t.passed for t in counted], [t.n for t in counted])
    pairs = [
        t.regression
        for t in tests
        if t.regression is not None and t.regression.baseline_n > 0 and t.regression.current_n > 0
    ]
    return pilot_variances(
        [r.baseline_passed for r in pairs],
        [r.baseline_n for r in pairs],
        [r.current_passed for r in pairs],
        [r.current_n for r in pairs],
    )


def _plain(
    document: dict[str, Any],
    plan: PairedPlan,
    measured: PilotVariances | None,
    pilot: list[str] | None,
) -> Plain:
    """The plan's lines, its table of options, and what follows it."""
    source = "assumed"
    if measured is not None and pilot is not None:
        versions = "two versions" if measured.versions == 2 else "one version"
        source = f"measured on {', '.join(pilot)} ({measured.cases} cases, {versions})"
    adaptive = plan.design == PairedDesign.ADAPTIVE
    lines = [
        (
            f"paired comparison (anytime interval, confidence {1 - plan.alpha:g}): FAIL a mean "
            f"drop of {plan.delta:g} over cases with probability {plan.power:g}"
            if adaptive
            else f"paired comparison (sign-flip test, one-sided, alpha {plan.alpha:g}): detect "
            f"a mean drop of {plan.delta:g} over cases with power {plan.power:g}"
        ),
        (
            "design: adaptive (assay run --baseline-agent: cases in a random order until the "
            "interval of the mean difference settles; C is the suite size, the cases used are "
            "fewer)"
            if adaptive
            else "design: fixed (every case run K times on each version, then one test; "
            "--design adaptive plans the adaptive comparison)"
        ),
        f"variances ({source}): between-case SD of the difference {plan.between_case_sd:.4f}, "
        f"within-case variance of a trial pair's difference {plan.within_case_var:.4f}",
        "Var(mean difference) = (between² + within / K) / C  (Miller 2024, arXiv:2411.00640)",
        "",
    ]
    table = [
        f"{'trials/case K':>13}  {'cases C':>8}  {'trials, both versions':>21}  {'power':>6}"
        + (f"  {'mean cases at delta':>19}  {'no change':>9}" if adaptive else ""),
    ]
    for option in plan.options:
        if option.cases is None or option.power is None or option.trials is None:
            limit = "the simulation's cap" if adaptive else "1,000,000 cases"
            table.append(f"{option.trials_per_case:>13}  {f'none up to {limit}':>39}")
            continue
        line = (
            f"{option.trials_per_case:>13}  {option.cases:>8,}  {option.trials:>21,}  "
            f"{option.power:>6.3f}"
        )
        if option.mean_cases_at_delta is not None and option.mean_cases_no_change is not None:
            line += f"  {option.mean_cases_at_delta:>19.0f}  {option.mean_cases_no_change:>9.0f}"
        table.append(line)
    after = [f"power: {plan.method}"]
    if measured is not None and measured.note:
        after.append(f"note: {measured.note}")
    return Plain(document, lines, table, after)
