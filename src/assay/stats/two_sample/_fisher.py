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
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

_TIE = 1e-14

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class _Margins:
    """The margins of some tables: the hypergeometric distribution of each one's first cell."""

    total: IntArray
    first_row: IntArray
    first_column: IntArray

    def __getitem__(self, rows: npt.NDArray[np.bool_]) -> _Margins:
        return _Margins(self.total[rows], self.first_row[rows], self.first_column[rows])

    def pmf(self, x: IntArray) -> FloatArray:
        return self._call("pmf", x)

    def cdf(self, x: IntArray) -> FloatArray:
        return self._call("cdf", x)

    def sf(self, x: IntArray) -> FloatArray:
        return self._call("sf", x)

    def _call(self, name: str, x: IntArray) -> FloatArray:
        from scipy.stats import hypergeom

        method = getattr(hypergeom, name)
        return np.asarray(method(x, self.total, self.first_row, self.first_column), np.float64)


_KNOWN: dict[tuple[int, ...], float] = {}
"""p-values of the tables tested so far: a set of thousands of small tests repeats few tables."""
_KNOWN_MAX = 1 << 16


def fisher_two_sided(tables: npt.ArrayLike) -> FloatArray:
    """Two-sided Fisher exact p-values of ``tables`` (shape ``(k, 2, 2)``, counts).

    Equal to ``scipy.stats.fisher_exact(table).pvalue`` for each table; 1 for a table with an
    empty row or column. Each table's p-value depends on that table alone, so one tested before
    is looked up.
    """
    keys = [tuple(row) for row in np.asarray(tables, dtype=np.int64).reshape(-1, 4).tolist()]
    new = [key for key in dict.fromkeys(keys) if key not in _KNOWN]
    if new:
        if len(_KNOWN) + len(new) > _KNOWN_MAX:
            _KNOWN.clear()
        _KNOWN.update(zip(new, _fisher(np.array(new, dtype=np.int64)).tolist(), strict=True))
    return np.array([_KNOWN[key] for key in keys], dtype=np.float64)


def _fisher(tables: npt.ArrayLike) -> FloatArray:
    t = np.asarray(tables, dtype=np.int64).reshape(-1, 2, 2)
    a, b, c, d = t[:, 0, 0], t[:, 0, 1], t[:, 1, 0], t[:, 1, 1]
    p = np.ones(t.shape[0])
    live = (a + b > 0) & (c + d > 0) & (a + c > 0) & (b + d > 0)
    if not live.any():
        return p
    a, b, c, d = a[live], b[live], c[live], d[live]
    margins = _Margins(a + b + c + d, a + b, a + c)
    # scipy computes the mode as int() of a float quotient; the same here.
    mode = ((margins.first_column + 1) * (margins.first_row + 1) / (margins.total + 2)).astype(
        np.int64
    )
    exact, at_mode = margins.pmf(a), margins.pmf(mode)
    with np.errstate(invalid="ignore", divide="ignore"):  # both 0: no tie, as in scipy
        tie = np.abs(exact - at_mode) / np.maximum(exact, at_mode) <= _TIE
    bound = exact * (1 + _TIE)
    out = np.ones(a.size)
    below = ~tie & (a < mode)
    if below.any():
        # The tail up to a, then from the first value past the mode as unlikely as a.
        m, last = margins[below], margins.first_column[below]
        tail = m.cdf(a[below])
        far = _search(lambda x, r: -m[r].pmf(x), -bound[below], mode[below], last)
        out[below] = np.where(m.pmf(last) > bound[below], tail, tail + m.sf(far))
    above = ~tie & ~(a < mode)
    if above.any():
        # The tail from a, then up to the last value before the mode as unlikely as a.
        m, none = margins[above], np.zeros(int(above.sum()), dtype=np.int64)
        tail = m.sf(a[above] - 1)
        far = _search(lambda x, r: m[r].pmf(x), bound[above], none, mode[above])
        out[above] = np.where(m.pmf(none) > bound[above], tail, tail + m.cdf(far))
    p[live] = np.minimum(out, 1.0)
    return p


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
