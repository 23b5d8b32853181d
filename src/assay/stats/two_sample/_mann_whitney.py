"""Mann–Whitney U p-values of many pairs of samples at once, each exactly scipy's.

``scipy.stats.mannwhitneyu`` (Mann & Whitney 1947) costs milliseconds a call in argument
handling alone; a behaviour diff of 2,000 cases calls it thousands of times. Pairs of the same
sizes are stacked and handed to one call along ``axis=1``. The only per-call decision scipy
makes — ``method="auto"`` takes the exact null distribution when either sample has at most 8
values and the pooled values have no ties, else the normal approximation with tie and
continuity corrections — is made here row by row with the same rule, and each method is asked
for by name, so every p-value is the one ``mannwhitneyu(x, y)`` would return on its own (a test
checks equality).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

_EXACT_UP_TO = 8
"""scipy's ``method="auto"``: exact when either sample has at most this many values (no ties)."""


def mann_whitney_p_values(
    pairs: Sequence[tuple[npt.ArrayLike, npt.ArrayLike]], alternative: str = "two-sided"
) -> list[float]:
    """``scipy.stats.mannwhitneyu(x, y, alternative=alternative).pvalue`` of every pair.

    Args:
        pairs: ``(x, y)`` samples, each non-empty and free of NaN.
        alternative: ``two-sided``, ``less`` or ``greater``, as scipy reads it.

    Returns:
        One p-value per pair, in order, equal to scipy's one-call result (same method, same
        floating-point operations).
    """
    from scipy import stats as sps

    samples = [
        (np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel())
        for x, y in pairs
    ]
    by_size: dict[tuple[int, int], list[int]] = {}
    for index, (x, y) in enumerate(samples):
        by_size.setdefault((x.size, y.size), []).append(index)
    p = np.empty(len(samples), dtype=np.float64)
    for (n1, n2), rows in by_size.items():
        xs = np.stack([samples[i][0] for i in rows])
        ys = np.stack([samples[i][1] for i in rows])
        pooled = np.sort(np.concatenate([xs, ys], axis=1), axis=1)
        tied = np.any(pooled[:, 1:] == pooled[:, :-1], axis=1)
        small = n1 <= _EXACT_UP_TO or n2 <= _EXACT_UP_TO
        exact = ~tied if small else np.zeros(len(rows), dtype=bool)
        for method, chosen in (("exact", exact), ("asymptotic", ~exact)):
            if chosen.any():
                result = sps.mannwhitneyu(
                    xs[chosen], ys[chosen], alternative=alternative, axis=1, method=method
                )
                p[np.asarray(rows)[chosen]] = np.asarray(result.pvalue, dtype=np.float64)
    return [float(v) for v in p]
