"""What a test's trials cost: the figure every report shows beside token usage."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
import polars as pl

from assay.analysis import DEFAULT_PRICES, DEFAULT_PRICES_AS_OF, PriceTable, load_prices
from assay.analysis import columns as tc
from assay.stats import sample_moments


@dataclass(frozen=True, slots=True)
class CostSummary:
    """USD spent by a test's trials, from their tokens and a price table."""

    total_usd: float
    """Sum over the priced trials."""
    mean_usd: float | None
    """Mean per priced trial; None when no trial could be priced."""
    priced: int
    """Trials with a cost."""
    unpriced: int
    """Trials left without a cost because a model they used has no price."""
    prices: str
    """Where the prices come from: ``default list prices of 2025-06``, a file's path, or ``as
    recorded by the instrumentation`` (``gen_ai.usage.cost``, ``llm.cost.total``), alone or
    before the table that priced the other trials."""

    @classmethod
    def of(cls, costs: npt.ArrayLike, prices: str) -> CostSummary:
        """Summarise per-trial costs; NaN marks a trial without a price."""
        return _summaries([np.asarray(costs, dtype=np.float64).ravel()], prices)[0]


def price_table(path: str | None) -> PriceTable:
    """The user's price table (``--prices``), else the dated default one."""
    return load_prices(path) if path is not None else DEFAULT_PRICES


def prices_label(path: str | None) -> str:
    """Where the prices come from, for reports."""
    return path if path is not None else f"default list prices of {DEFAULT_PRICES_AS_OF}"


def cost_summaries(
    trials: pl.DataFrame, tests: Sequence[tuple[int, int]], prices: str | None
) -> list[CostSummary | None]:
    """Each test's cost, from its range of rows of the (costed) trials table, read at once.

    None for every test when the table has no cost column.
    """
    if tc.COST_USD not in trials.columns:
        return [None] * len(tests)
    # Read by numpy (a null is NaN), not cast and filled by Polars queries a test.
    values = np.asarray(trials[tc.COST_USD].to_numpy(), dtype=np.float64)
    label = prices_label(prices)
    summaries: list[CostSummary | None] = [*_summaries([values[a:b] for a, b in tests], label)]
    if tc.COST_RECORDED not in trials.columns:
        return summaries
    # Where the instrumentation recorded the cost, no price table priced it: the label says so.
    recorded = trials[tc.COST_RECORDED].fill_null(False).to_numpy()
    spent = np.nan_to_num(values) > 0
    for i, (a, b) in enumerate(tests):
        summary = summaries[i]
        mine, paid = recorded[a:b], spent[a:b]
        if summary is None or not mine.any():
            continue
        every = bool(mine[paid].all()) if paid.any() else True
        source = "as recorded by the instrumentation"
        summaries[i] = replace(summary, prices=source if every else f"{source}, else {label}")
    return summaries


def _summaries(costs: Sequence[npt.NDArray[np.float64]], label: str) -> list[CostSummary]:
    """The :class:`CostSummary` of each test's per-trial costs (NaN: unpriced).

    The sums and means of tests of one size are taken together
    (:func:`assay.stats.sample_moments`: each the lone test's, bit for bit).
    """
    known = [v[~np.isnan(v)] for v in costs]
    m = sample_moments(known, spread=False, percentiles=False)
    return [
        CostSummary(total, mean if priced else None, priced, v.size - priced, label)
        for v, total, mean, priced in zip(
            costs, m.total.tolist(), m.mean.tolist(), m.n.tolist(), strict=True
        )
    ]
