"""The drift alarm: an anytime-valid test that a pass rate has dropped below its reference.

The question: has the pass rate of the recent trials fallen more than ``delta`` below the
reference rate (the trials before them, or a baseline version's trials)? The alarm may be
looked at after every trial, forever; on a stream that does not change, the chance that it is
*ever* raised is at most ``alpha``.

Construction (confidence sequences with the error spent over windows by a union bound; the
idea of Howard, Ramdas, McAuliffe & Sekhon 2021 and of the change detectors built from
confidence sequences in Shin, Ramdas & Rinaldo 2023, "E-detectors", section 2):

* The **reference** runs one two-sided confidence sequence (:func:`pass_rate_sequence`, the
  beta-binomial mixture of :mod:`assay.stats`) at level ``alpha / 2``; ``L(k)`` is its lower
  end after the reference's first ``k`` trials.
* Every ``spacing`` trials of the watched stream a **window** opens: window ``m`` (the m-th,
  ``m = 1, 2, ...``) opens after trial ``k_m = m * spacing`` and runs its own confidence
  sequence on the trials after ``k_m`` only, at level ``alpha_m = (alpha / 2) / (m (m + 1))``.
  Its boundary ``b_m = L(k_m) - delta`` is fixed when it opens.
* The alarm is raised while some open window's interval lies wholly below its boundary.
* Windows are closed as they age, keeping about ``keep`` per doubling of age (a window's
  index must be a multiple of a power of two that grows with its age): memory is bounded by
  ``keep`` times the number of doublings, whatever the number of trials.

Proof that ``P(the alarm is ever raised) <= alpha`` when the reference's rate is ``p`` and the
watched stream's rate never falls more than ``delta`` below ``p`` (in particular: a stream that
does not change). Let ``E_0`` be the event that the reference sequence covers ``p`` at every
``k``, and ``E_m`` the event that window ``m``'s sequence covers the stream's rate ``q >= p -
delta`` at every trial after it opened. By Ville's inequality applied to each mixture
martingale (the window's given the trials before it opened, which fix ``b_m``),
``P(not E_0) <= alpha / 2`` and ``P(not E_m) <= alpha_m``; and ``sum_m alpha_m = (alpha / 2)
sum_m (1/m - 1/(m + 1)) = alpha / 2``. On ``E_0`` and every ``E_m``: ``b_m = L(k_m) - delta <=
p - delta <= q``, and window ``m``'s interval holds ``q``, so it never lies wholly below
``b_m``: no alarm, at any trial, for any window. Hence ``P(ever an alarm) <= P(not E_0) +
sum_m P(not E_m) <= alpha``. Closing windows, and looking only now and then, only remove
chances to alarm, so neither changes the bound; the bound holds for every stopping rule.

The price of "ever" is that later windows ask for more evidence (``log(1/alpha_m)`` grows like
``2 log m``): detection delay grows with the logarithm of the time of the change, not with the
time itself. The calibration benchmark (``benchmarks/bench_watch.py``) measures both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from assay.stats import BernoulliConfidenceSequence
from assay.watch._sequence import pass_rate_sequence

__all__ = ["DriftDetector", "DriftRule", "lower_bounds"]

_EDGE = 1e-12
_BISECTIONS = 40

Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class DriftRule:
    """The drift alarm's settings (see the module docstring for what they guarantee)."""

    delta: float = 0.02
    """The margin: the alarm asks whether the pass rate fell more than this below the
    reference (0.02 = 2 points); smaller drifts never raise it, falsely or not."""
    alpha: float = 0.05
    """The bound on P(a false alarm, ever) on a stream that does not drop by ``delta``."""
    centre: float = 0.80
    """Where the mixing priors are centred (the test's threshold): tightest there."""
    spacing: int = 20
    """A window opens every ``spacing`` trials of the watched stream."""
    keep: int = 8
    """Windows kept per doubling of age."""
    doublings: int = 12
    """Windows older than ``spacing * keep * 2**doublings`` trials are closed."""

    @property
    def reference_sequence(self) -> BernoulliConfidenceSequence:
        """The reference's confidence sequence, at level ``alpha / 2``."""
        return pass_rate_sequence(self.centre, 1 - self.alpha / 2)

    @property
    def window_sequence(self) -> BernoulliConfidenceSequence:
        """The windows' mixture (each window has its own level, :meth:`window_level`)."""
        return pass_rate_sequence(self.centre - self.delta, 1 - self.alpha / 2)

    def window_level(self, m: npt.ArrayLike) -> Floats:
        """``log(1 / alpha_m)``, ``alpha_m = (alpha / 2) / (m (m + 1))``: window m's bar."""
        index = np.asarray(m, dtype=np.float64)
        return np.asarray(
            math.log(2 / self.alpha) + np.log(index) + np.log1p(index), dtype=np.float64
        )

    def kept(self, m: npt.NDArray[np.int64], age: npt.NDArray[np.int64]) -> Bools:
        """Whether windows ``m`` of the given ages (in trials) stay open."""
        young = self.spacing * self.keep
        doubling = np.where(
            age < young, 0, np.floor(np.log2(np.maximum(age, 1) / young)).astype(np.int64) + 1
        )
        return np.asarray((m % (2 ** np.minimum(doubling, 62)) == 0) & (doubling <= self.doublings))


def lower_bounds(
    sequence: BernoulliConfidenceSequence, successes: npt.ArrayLike, n: int | npt.ArrayLike
) -> Floats:
    """The lower ends of ``sequence``'s intervals after ``successes`` of ``n``, elementwise.

    Bisection on the mixture's log evidence (convex in ``p``, least at the observed rate), all
    elements at once, to 2**-40 (1e-12); the end returned never lies above the exact one (a
    conservative boundary). ``sequence.interval`` gives the same, one by one.
    """
    s = np.asarray(successes, dtype=np.float64)
    trials = np.broadcast_to(np.asarray(n, dtype=np.float64), s.shape)
    bar = -math.log(sequence.alpha)
    low = np.zeros_like(s)
    high = np.divide(s, trials, out=np.zeros_like(s), where=trials > 0)
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        excluded = sequence.log_evidence(s, trials, np.maximum(middle, _EDGE)) >= bar
        low = np.where(excluded, middle, low)
        high = np.where(excluded, high, middle)
    return np.where(s > 0, low, 0.0)


def sequence_intervals(
    sequence: BernoulliConfidenceSequence, successes: npt.ArrayLike, n: npt.ArrayLike
) -> tuple[Floats, Floats]:
    """``sequence.interval`` of many counts at once: ``(lows, highs)``, elementwise.

    The lower ends by :func:`lower_bounds`; the upper ends as the lower ends of the mirrored
    sequence (the failures' rate, its prior's mean ``1 - m``: the mixture is symmetric under
    that swap), subtracted from 1. To 2**-40 of the root ``interval`` finds, and never
    narrower; ``n == 0`` gives ``[0, 1]``. One test's interval costs a root finding (about
    0.5 ms); a look over 50,000 tests needs them all at once.
    """
    s = np.asarray(successes, dtype=np.float64)
    trials = np.asarray(n, dtype=np.float64)
    mirror = replace(sequence, prior_mean=1 - sequence.prior_mean)
    low = lower_bounds(sequence, s, trials)
    high = 1 - lower_bounds(mirror, trials - s, trials)
    empty = trials == 0
    return np.where(empty, 0.0, low), np.where(empty, 1.0, high)


@dataclass(slots=True)
class DriftDetector:
    """The drift alarm of one test, or of ``streams`` simulated tests at once (benchmarks).

    ``add`` feeds the watched stream; with a separate reference (a baseline version),
    ``add_reference`` feeds the reference, else the stream is its own reference.
    """

    rule: DriftRule
    """The settings."""
    streams: int = 1
    """How many streams advance together (1 in ``assay watch``)."""
    own_reference: bool = True
    """The reference is the stream's own earlier trials (else ``add_reference`` feeds it)."""
    trials: int = 0
    """Trials of the watched stream so far."""
    reference_trials: int = 0
    """Trials of the reference so far."""
    reference_passes: Floats = field(default_factory=lambda: np.zeros(0))
    alarm: Bools = field(default_factory=lambda: np.zeros(0, dtype=bool))
    """Whether the alarm is raised now, per stream."""
    first_alarm: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    """The stream's trial count when the alarm was first raised (-1: never), per stream."""
    _index: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    _opened: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    _passes: Floats = field(default_factory=lambda: np.zeros((0, 0)))
    _boundary: Floats = field(default_factory=lambda: np.zeros((0, 0)))

    def __post_init__(self) -> None:
        if self.reference_passes.size == 0:
            self.reference_passes = np.zeros(self.streams)
            self.alarm = np.zeros(self.streams, dtype=bool)
            self.first_alarm = np.full(self.streams, -1, dtype=np.int64)
            self._passes = np.zeros((self.streams, 0))
            self._boundary = np.zeros((self.streams, 0))

    @property
    def windows(self) -> int:
        """Windows open now (the memory held, in windows)."""
        return int(self._index.size)

    def add_reference(self, outcomes: npt.ArrayLike) -> None:
        """Feed reference trials (``streams`` rows of pass/fail, oldest first)."""
        passed = np.asarray(outcomes, dtype=bool).reshape(self.streams, -1)
        self.reference_passes = self.reference_passes + passed.sum(axis=1)
        self.reference_trials += passed.shape[1]

    def add(self, outcomes: npt.ArrayLike) -> None:
        """Feed watched trials (``streams`` rows of pass/fail, oldest first), then look.

        One pass over the batch, whatever its length: the windows it opens are found from
        the cumulative passes (a window opened after the batch's ``k``-th trial holds the
        passes after it), so a batch of ``m`` trials costs O(m + windows), never one step
        per window opened (a restart's backlog opens thousands).
        """
        passed = np.asarray(outcomes, dtype=bool).reshape(self.streams, -1)
        m = passed.shape[1]
        cum = np.zeros((self.streams, m + 1))
        np.cumsum(passed, axis=1, out=cum[:, 1:])
        total = cum[:, -1]
        self._passes += total[:, None]
        # the batch's k-th trial (1-based) opens a window when trials + k is a multiple
        first = self.rule.spacing - self.trials % self.rule.spacing
        ks = np.arange(first, m + 1, self.rule.spacing, dtype=np.int64)
        if ks.size:
            since = total[:, None] - cum[:, ks]
            if self.own_reference:
                references = self.reference_passes[:, None] + cum[:, ks]
                counts = self.reference_trials + ks
            else:
                references = np.repeat(self.reference_passes[:, None], ks.size, axis=1)
                counts = np.full(ks.size, self.reference_trials, dtype=np.int64)
            self._open(self.trials + ks, since, references, counts)
        if self.own_reference:
            self.add_reference(passed)
        self.trials += m
        self._close_old()
        self._look()

    def _open(self, trials: Ints, since: Floats, references: Floats, counts: Ints) -> None:
        """Open windows after watched trials ``trials`` (passes ``since`` each opened)."""
        low = lower_bounds(self.rule.reference_sequence, references, counts[None, :])
        self._index = np.append(self._index, trials // self.rule.spacing)
        self._opened = np.append(self._opened, trials)
        self._passes = np.hstack([self._passes, since])
        self._boundary = np.hstack([self._boundary, low - self.rule.delta])

    def _close_old(self) -> None:
        open_ = self.rule.kept(self._index, self.trials - self._opened)
        if not open_.all():
            self._index, self._opened = self._index[open_], self._opened[open_]
            self._passes, self._boundary = self._passes[:, open_], self._boundary[:, open_]

    def _look(self) -> None:
        n = self.trials - self._opened
        seen = n > 0
        below = seen & (self._passes < self._boundary * np.maximum(n, 1))  # rate < boundary
        alarm = np.zeros(self.streams, dtype=bool)
        if below.any():
            rows, cols = np.nonzero(below)
            evidence = self.rule.window_sequence.log_evidence(
                self._passes[rows, cols], n[cols], np.clip(self._boundary[rows, cols], _EDGE, 1)
            )
            hit = evidence >= self.rule.window_level(self._index[cols])
            alarm[rows[hit]] = True
        self.alarm = alarm
        self.first_alarm = np.where(alarm & (self.first_alarm < 0), self.trials, self.first_alarm)
