"""The behaviour diff and cost of the judgement spine: trials tables in, typed results out.

The bridge from ``assay.analysis`` (features, cost column) to ``assay.verdict`` (behaviour
verdicts, cost summaries, ``--fail-on`` rules), used by ``analyze`` and ``compare`` alike.
"""

from __future__ import annotations

from collections.abc import Mapping

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
from assay.verdict import BehaviourResult, CostSummary, behaviour_diffs


def price_table(path: str | None) -> PriceTable:
    """The user's price table (``--prices``), else the dated default one."""
    return load_prices(path) if path is not None else DEFAULT_PRICES


def prices_label(prices: PriceTable) -> str:
    """Where the prices come from, for reports."""
    if prices.source == "default":
        return f"default list prices of {DEFAULT_PRICES_AS_OF}"
    return prices.source


def cost_summary(trials: pl.DataFrame, prices: PriceTable) -> CostSummary | None:
    """A test's cost from its rows of the (costed) trials table; None without a cost column."""
    if tc.COST_USD not in trials.columns:
        return None
    values = trials[tc.COST_USD].cast(pl.Float64).fill_null(np.nan).to_numpy()
    return CostSummary.of(values, prices_label(prices))


def behaviour_results(
    baseline: Mapping[str, pl.DataFrame],
    current: Mapping[str, pl.DataFrame],
    *,
    alpha: float,
    adjust: str,
    power: float,
    confidence: float,
    exclude_errors: bool,
) -> dict[str, BehaviourResult]:
    """The behaviour verdict of every test present in both versions.

    Args:
        baseline: The baseline's trials per test id.
        current: The current version's trials per test id.
        alpha: Significance level.
        adjust: ``--adjust`` (none: Holm within each test; holm / bh: across the suite).
        power: The power UNCHANGED needs.
        confidence: Level of the effects' intervals.
        exclude_errors: Leave error trials out (``--errors exclude``): their behaviour is the
            harness's, not the agent's.
    """

    def kept(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.filter(~pl.col(tc.ERROR)) if exclude_errors else frame

    samples = {
        test_id: behaviour_sample(kept(baseline[test_id]), kept(frame))
        for test_id, frame in current.items()
        if test_id in baseline
    }
    return behaviour_diffs(samples, alpha=alpha, adjust=adjust, power=power, confidence=confidence)
