"""The behaviour diff and cost in the judgement spine: trials tables in, typed results out.

The bridge from ``assay.analysis`` (behaviour features, the cost column) to ``assay.verdict``
(behaviour verdicts, cost summaries, ``--fail-on`` rules), for analyze and compare alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import polars as pl

from assay.analysis import (
    DEFAULT_PRICES,
    DEFAULT_PRICES_AS_OF,
    PriceTable,
    behaviour_sample,
    load_prices,
)
from assay.analysis import columns as tc
from assay.judgement._options import DEFAULT_CONFIDENCE, AnalyzeOptions
from assay.verdict import (
    BehaviourResult,
    CostSummary,
    FailOn,
    TestResult,
    Verdict,
    behaviour_diffs,
    gate_failures,
    parse_fail_on,
)


def price_table(path: str | None) -> PriceTable:
    """The user's price table (``--prices``), else the dated default one."""
    return load_prices(path) if path is not None else DEFAULT_PRICES


def prices_label(path: str | None) -> str:
    """Where the prices come from, for reports."""
    return path if path is not None else f"default list prices of {DEFAULT_PRICES_AS_OF}"


def cost_summary(trials: pl.DataFrame, options: AnalyzeOptions) -> CostSummary | None:
    """A test's cost from its rows of the (costed) trials table; None without a cost column."""
    if tc.COST_USD not in trials.columns:
        return None
    values = trials[tc.COST_USD].cast(pl.Float64).fill_null(np.nan).to_numpy()
    return CostSummary.of(values, prices_label(options.prices))


def with_behaviour(
    results: dict[str, TestResult],
    current: Mapping[str, pl.DataFrame],
    baseline: Mapping[str, pl.DataFrame],
    options: AnalyzeOptions,
) -> None:
    """Give every test present in both versions its behaviour verdict (in place).

    Behaviour changes inform by default; a broken ``--fail-on`` rule makes the test FAIL, and
    its reason says which rule and which change.

    Args:
        results: The tests' results so far, by test id (with their regression verdicts).
        current: The current version's trials per test id.
        baseline: The baseline's trials per test id.
        options: The analysis options (alpha, power, adjust, confidence, fail_on).
    """

    def kept(name: str, frame: pl.DataFrame) -> pl.DataFrame:
        # Error trials left out of n are the harness's behaviour, not the agent's.
        excluded = results[name].n < results[name].trials
        return frame.filter(~pl.col(tc.ERROR)) if excluded else frame

    samples = {
        name: behaviour_sample(kept(name, baseline[name]), kept(name, current[name]))
        for name in results
        if name in baseline and name in current
    }
    diffs = behaviour_diffs(
        samples,
        alpha=options.alpha,
        adjust=options.adjust,
        power=options.power,
        confidence=options.confidence or DEFAULT_CONFIDENCE,
    )
    rules = [parse_fail_on(rule) for rule in options.fail_on]
    for name, diff in diffs.items():
        results[name] = _gated(results[name], diff, rules)


def _gated(result: TestResult, behaviour: BehaviourResult, rules: list[FailOn]) -> TestResult:
    broken = gate_failures(behaviour, rules)
    if not broken:
        return replace(result, behaviour=behaviour)
    # What the pass rate said stays in the reason, after the rule that decided.
    return replace(
        result,
        verdict=Verdict.FAIL,
        behaviour=behaviour,
        verdict_reason=f"{'; '.join(broken)}; pass rate: {result.verdict_reason}",
    )
