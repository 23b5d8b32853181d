"""An anytime-valid confidence sequence for the mean of bounded values: betting.

Values with known bounds ``[lower, upper]`` are rescaled to [0, 1]; for each candidate mean
``m`` (a grid over [0, 1]) two gamblers bet on the values: one that the
mean lies above ``m``, one below, each with a predictable stake, so that their capital

    K+_t(m) = prod_i (1 + l+_i(m) (x_i - m)),   K-_t(m) = prod_i (1 - l-_i(m) (x_i - m))

is, when the true mean is ``m``, a non-negative martingale with mean 1, and so is the hedged
capital ``K_t(m) = (K+_t(m) + K-_t(m)) / 2``. By Ville's inequality ``P(K_t(m) >= 1/alpha for
some t) <= alpha``: the set ``{m : K_t(m) < 1/alpha}`` covers the true mean at every ``t`` at
once with probability at least ``1 - alpha``. Stakes are the predictable plug-in of
Waudby-Smith & Ramdas (2024), ``l_t = sqrt(2 log(2/alpha) / (s2_{t-1} t log(1 + t)))`` from the
running variance estimate ``s2``, truncated at ``c/m`` and ``c/(1 - m)`` (``c = 1/2``) so the
capital stays positive. Memory is the grid (two numbers per grid point), whatever ``t``.

The values must lie within the bounds given (``[0, 1]`` by default: a score; ``[-1, 1]`` for
the per-case difference of two pass rates, :mod:`._paired_sequence`); a value outside breaks the
guarantee, so :meth:`BoundedMeanSequence.add` refuses it. ``assay watch`` (mean scores and cost)
and the paired comparison of two versions read their sequences here.

Reference:
    Waudby-Smith & Ramdas (2024), "Estimating means of bounded random variables by betting",
    J. R. Statist. Soc. B 86(1):1–27, sections 4–5 (hedged capital, predictable plug-in).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError, InputError
from assay.stats.base import check_open_unit

__all__ = ["BoundedMeanSequence"]

_TRUNCATION = 0.5
_GRID = 1000
GRID = (np.arange(_GRID) + 0.5) / _GRID
"""The candidate means on [0, 1] (cell centres)."""
FloatArray = npt.NDArray[np.float64]


@dataclass(slots=True)
class BoundedMeanSequence:
    """The betting confidence sequence of a bounded mean, fed value by value."""

    confidence: float = 0.95
    """``1 - alpha``: the chance the sequence covers the true mean at every ``t`` at once."""
    lower: float = 0.0
    """The values' known lower bound."""
    upper: float = 1.0
    """The values' known upper bound (above ``lower``)."""
    n: int = 0
    """Values so far."""
    total: float = 0.0
    """Their sum."""
    _log_up: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(_GRID))
    _log_down: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(_GRID))
    _squares: float = 0.25
    _means: float = 0.5

    def __post_init__(self) -> None:
        check_open_unit("confidence", self.confidence)
        if not (math.isfinite(self.lower) and math.isfinite(self.upper)) or (
            self.upper <= self.lower
        ):
            raise ConfigError(f"bounds must be finite with lower < upper (got {self.bounds})")

    @property
    def bounds(self) -> str:
        """``[lower, upper]``, as messages show it."""
        return f"[{self.lower:g}, {self.upper:g}]"

    @property
    def mean(self) -> float | None:
        """The observed mean (None before the first value)."""
        return self.total / self.n if self.n else None

    def add(self, values: npt.ArrayLike) -> None:
        """Feed values (each within the bounds), oldest first.

        Raises:
            InputError: A value outside the bounds or not finite (the guarantee needs them).
        """
        raw = np.asarray(values, dtype=np.float64).ravel()
        if raw.size and not (
            np.isfinite(raw).all() and raw.min() >= self.lower and raw.max() <= self.upper
        ):
            raise InputError(
                f"a value outside {self.bounds}: the bounded-mean sequence needs bounds"
            )
        x = np.clip((raw - self.lower) / (self.upper - self.lower), 0.0, 1.0)
        alpha = 1 - self.confidence
        means: FloatArray | np.float64 = np.float64(self._means)
        squares: FloatArray | np.float64 = np.float64(self._squares)
        for value in x:
            means, squares = bet(
                self._log_up, self._log_down, means, squares, self.n + 1, value, alpha
            )
            self.n += 1
        self._means, self._squares = float(means), float(squares)
        self.total += float(raw.sum())

    def interval(self) -> tuple[float, float]:
        """The interval ``{m : K_t(m) < 1/alpha}``, widened to the grid's cells around it.

        Returns:
            ``(low, high)`` within ``[lower, upper]``; the bounds before the first value.
        """
        low, high = self._unit_interval()
        span = self.upper - self.lower
        return self.lower + low * span, self.lower + high * span

    def _unit_interval(self) -> tuple[float, float]:
        if self.n == 0:
            return 0.0, 1.0
        mean = (self.total / self.n - self.lower) / (self.upper - self.lower)
        low, high = unit_interval(
            self._log_up, self._log_down, np.float64(mean), 1 - self.confidence
        )
        return float(low), float(high)


def bet(
    log_up: FloatArray,
    log_down: FloatArray,
    means: FloatArray | np.float64,
    squares: FloatArray | np.float64,
    t: int,
    value: FloatArray | np.float64,
    alpha: float,
) -> tuple[FloatArray | np.float64, FloatArray | np.float64]:
    """The ``t``-th value's bets at every grid point, for one sequence or many side by side.

    ``log_up`` and ``log_down`` (the two gamblers' log capital, last axis the grid) grow in
    place; ``value`` (in [0, 1]), ``means`` and ``squares`` hold one entry per sequence (or are
    scalars). Returns the running sums the next stake reads. :class:`BoundedMeanSequence` and
    the simulation of many sequences at once (:mod:`._paired_simulation`) both step here, so
    they are one construction.
    """
    m = GRID
    variance = squares / t  # s2_{t-1}: from the values before this one
    stake = np.sqrt(2 * math.log(2 / alpha) / (variance * t * math.log(1 + t)))[..., None]
    up = np.minimum(stake, _TRUNCATION / m)
    down = np.minimum(stake, _TRUNCATION / (1 - m))
    centred = np.asarray(value)[..., None] - m
    log_up += np.log1p(up * centred)
    log_down += np.log1p(-down * centred)
    # the running estimates the next stake reads (Waudby-Smith & Ramdas, eq. 26):
    # mu_t = (1/2 + sum x) / (t + 1), s2_t = (1/4 + sum (x_i - mu_i)^2) / (t + 1)
    means = means + value
    squares = squares + (value - means / (t + 1)) ** 2
    return means, squares


def unit_interval(
    log_up: FloatArray, log_down: FloatArray, mean: FloatArray | np.float64, alpha: float
) -> tuple[FloatArray, FloatArray]:
    """The interval ``{m : K_t(m) < 1/alpha}`` on [0, 1], widened to the grid cells around it.

    Row-wise for many sequences (last axis the grid); ``mean`` is each one's observed mean on
    [0, 1], the interval's centre when every grid point is rejected (the mean then lies between
    two of them).
    """
    hedged = np.logaddexp(log_up, log_down) - math.log(2)
    kept = hedged < -math.log(alpha)
    any_kept = kept.any(axis=-1)
    first = np.argmax(kept, axis=-1)
    last = _GRID - 1 - np.argmax(kept[..., ::-1], axis=-1)
    centre = np.clip(mean, 0.0, 1.0)
    # the set's true ends lie within one cell of the outermost grid points kept
    low = np.where(any_kept, GRID[first] - 1 / _GRID, centre - 1 / _GRID)
    high = np.where(any_kept, GRID[last] + 1 / _GRID, centre + 1 / _GRID)
    return np.maximum(low, 0.0), np.minimum(high, 1.0)
