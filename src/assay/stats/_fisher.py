"""Two-sided Fisher exact tests of many 2 × 2 tables at once.

``scipy.stats.fisher_exact`` tests one table per call, and most of its cost is the Python
overhead of the dozen hypergeometric calls of its search for the other tail. The explanations
of a test run a few such tests; this runs them together, through the same scipy hypergeometric
functions, element by element, so each p-value is the one ``fisher_exact`` gives, bit for bit
(checked by a property test against scipy).

Two-sided p-value (Fisher 1935): the probability, with the table's margins fixed, of every
table no more likely than the observed one. With the observed cell ``a`` on one side of the
distribution's mode, that is the tail beyond ``a`` plus the tail on the other side of the mode
from the first value whose probability is at most ``a``'s (times ``1 + 1e-14``, scipy's
tolerance for ties); that value is found by bisection, the distribution being unimodal.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

_TIE = 1e-14

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def fisher_two_sided(tables: npt.ArrayLike) -> FloatArray:
    """Two-sided Fisher exact p-values of ``tables`` (shape ``(k, 2, 2)``, counts).

    Equal to ``scipy.stats.fisher_exact(table).pvalue`` for each table; 1 for a table with an
    empty row or column.
    """
    from scipy.stats import hypergeom

    t = np.asarray(tables, dtype=np.int64).reshape(-1, 2, 2)
    a, b, c, d = t[:, 0, 0], t[:, 0, 1], t[:, 1, 0], t[:, 1, 1]
    n1, n2, n = a + b, c + d, a + c
    total = n1 + n2
    p = np.ones(t.shape[0])
    live = (n1 > 0) & (n2 > 0) & (n > 0) & (b + d > 0)
    if not live.any():
        return p
    a, n1, n, total = a[live], n1[live], n[live], total[live]

    def pmf(x: IntArray, rows: npt.NDArray[np.bool_]) -> FloatArray:
        return np.asarray(hypergeom.pmf(x, total[rows], n1[rows], n[rows]), dtype=np.float64)

    # scipy computes the mode as int() of a float quotient; the same here.
    mode = ((n + 1) * (n1 + 1) / (total + 2)).astype(np.int64)
    everyone = np.ones(a.size, dtype=bool)
    exact = pmf(a, everyone)
    at_mode = pmf(mode, everyone)
    out = np.ones(a.size)
    with np.errstate(invalid="ignore", divide="ignore"):  # both 0: no tie, as in scipy
        tie = np.abs(exact - at_mode) / np.maximum(exact, at_mode) <= _TIE
    bound = exact * (1 + _TIE)
    below = ~tie & (a < mode)
    above = ~tie & ~(a < mode)
    if below.any():
        rows = below
        tail = np.asarray(hypergeom.cdf(a[rows], total[rows], n1[rows], n[rows]))
        last = pmf(n[rows], rows)
        far = _search(lambda x, r: -pmf(x, _within(rows, r)), -bound[rows], mode[rows], n[rows])
        other = np.asarray(hypergeom.sf(far, total[rows], n1[rows], n[rows]))
        out[rows] = np.where(last > bound[rows], tail, tail + other)
    if above.any():
        rows = above
        tail = np.asarray(hypergeom.sf(a[rows] - 1, total[rows], n1[rows], n[rows]))
        first = pmf(np.zeros(int(rows.sum()), dtype=np.int64), rows)
        far = _search(
            lambda x, r: pmf(x, _within(rows, r)), bound[rows], np.zeros_like(a[rows]), mode[rows]
        )
        other = np.asarray(hypergeom.cdf(far, total[rows], n1[rows], n[rows]))
        out[rows] = np.where(first > bound[rows], tail, tail + other)
    p[live] = np.minimum(out, 1.0)
    return p


def _within(rows: npt.NDArray[np.bool_], sub: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """The mask over all tables of the members ``sub`` of the tables ``rows``."""
    chosen = np.zeros(rows.size, dtype=bool)
    chosen[np.flatnonzero(rows)[sub]] = True
    return chosen


def _search(
    f: Callable[[IntArray, npt.NDArray[np.bool_]], FloatArray],
    target: FloatArray,
    lo: IntArray,
    hi: IntArray,
) -> IntArray:
    """Per table, the ``i`` in ``[lo, hi]`` with ``f(i) <= target < f(i + 1)``, ``f`` ascending.

    The bisection of scipy's ``fisher_exact``, run for every table at once: ``f(x, r)`` gives
    the values at ``x`` of the tables selected by the mask ``r``. A table whose midpoint value
    equals its target stops there, as scipy's does.
    """
    lo, hi = lo.copy(), hi.copy()
    found = np.full(lo.size, -1, dtype=np.int64)
    open_ = lo < hi
    while open_.any():
        mid = lo[open_] + (hi[open_] - lo[open_]) // 2
        value = f(mid, open_)
        goal = target[open_]
        rows = np.flatnonzero(open_)
        less, more = value < goal, value > goal
        lo[rows[less]] = mid[less] + 1
        hi[rows[more]] = mid[more] - 1
        hit = ~less & ~more
        found[rows[hit]] = mid[hit]
        open_[rows[hit]] = False
        open_ &= lo < hi
    rest = found < 0
    if rest.any():
        at = f(lo[rest], rest)
        found[rest] = np.where(at <= target[rest], lo[rest], lo[rest] - 1)
    return found
