"""What decides a test's verdict, and the one sequential loop that applies it.

A :class:`Judgement` is recorded on every trial span that ``assay run`` and the pytest plugin
write (``assay.judgement.*`` attributes, ``docs/spans-table.md``), so that ``assay analyze`` on
those traces judges them the same way: same threshold, same variance limits, same error policy,
and the same sequential test replayed in trial-index order by :class:`SequentialTracker`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from assay import conventions as c
from assay.stats import SequentialDecision, SequentialState, SequentialTest, sequential_test

AttributeValue = str | bool | int | float
"""A value of a span attribute as the judgement writes it."""


@dataclass(frozen=True, slots=True)
class SequentialDesign:
    """A sequential test of the pass rate: method, indifference zone, error rates, maximum."""

    method: str
    """``sprt`` (Wald) or ``confidence-sequence`` (Robbins)."""
    p0: float
    """The threshold: a PASS is wrong when the true rate is at most this."""
    p1: float
    """A FAIL is wrong when the true rate is at least this (``p0 + delta``, narrowed near 1)."""
    delta: float
    """Width of the indifference zone asked for."""
    alpha: float
    """Bound on P(PASS) at ``p0``."""
    beta: float
    """Bound on P(FAIL) at ``p1``."""
    max_trials: int
    """Truncation: INCONCLUSIVE when reached unsettled."""

    @classmethod
    def of(
        cls, method: str, threshold: float, delta: float, alpha: float, beta: float, runs: int
    ) -> SequentialDesign:
        """The design of ``method`` at this threshold (raises ``ConfigError`` if invalid)."""
        seq = sequential_test(
            method, threshold, delta=delta, alpha=alpha, beta=beta, max_trials=runs
        )
        return cls(seq.name, seq.p0, seq.p1, delta, seq.alpha, seq.beta, runs)

    def build(self) -> SequentialTest:
        """The sequential test this design describes."""
        return sequential_test(
            self.method,
            self.p0,
            delta=self.delta,
            alpha=self.alpha,
            beta=self.beta,
            max_trials=self.max_trials,
        )


@dataclass(frozen=True, slots=True)
class Judgement:
    """Everything a test's verdict is decided with (DESIGN.md: a trace set carries it)."""

    threshold: float
    """Required pass rate."""
    confidence: float
    """Two-sided confidence of the pass-rate interval."""
    errors: str = "count"
    """``count`` error trials as failures, or ``exclude`` them from n."""
    min_mean_score: float | None = None
    """Variance check: the mean score must reach this."""
    max_std_dev: float | None = None
    """Variance check: the scores' standard deviation must not exceed this."""
    sequential: SequentialDesign | None = None
    """The sequential test that decided when to stop; None for a fixed number of trials."""

    def to_attributes(self) -> dict[str, AttributeValue]:
        """The judgement as trial-span attributes (absent values left out)."""
        out: dict[str, AttributeValue] = {
            c.JUDGEMENT_THRESHOLD: self.threshold,
            c.JUDGEMENT_CONFIDENCE: self.confidence,
            c.JUDGEMENT_ERRORS: self.errors,
        }
        if self.min_mean_score is not None:
            out[c.JUDGEMENT_MIN_MEAN_SCORE] = self.min_mean_score
        if self.max_std_dev is not None:
            out[c.JUDGEMENT_MAX_STD_DEV] = self.max_std_dev
        seq = self.sequential
        if seq is not None:
            out.update(
                {
                    c.SEQUENTIAL_METHOD: seq.method,
                    c.SEQUENTIAL_P0: seq.p0,
                    c.SEQUENTIAL_P1: seq.p1,
                    c.SEQUENTIAL_DELTA: seq.delta,
                    c.SEQUENTIAL_ALPHA: seq.alpha,
                    c.SEQUENTIAL_BETA: seq.beta,
                    c.SEQUENTIAL_MAX_TRIALS: seq.max_trials,
                }
            )
        return out

    @classmethod
    def from_attributes(cls, attributes: Mapping[str, object]) -> Judgement | None:
        """The judgement recorded in these attributes; None when none was recorded.

        Raises:
            ValueError: A recorded value has the wrong type (the caller names the trace set).
        """
        if c.JUDGEMENT_THRESHOLD not in attributes:
            return None

        def number(key: str) -> float | None:
            value = attributes.get(key)
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{key} must be a number (got {value!r})")
            return float(value)

        def required(key: str) -> float:
            value = number(key)
            if value is None:
                raise ValueError(f"{key} is missing")
            return value

        design = None
        if c.SEQUENTIAL_METHOD in attributes:
            design = SequentialDesign(
                str(attributes[c.SEQUENTIAL_METHOD]),
                required(c.SEQUENTIAL_P0),
                required(c.SEQUENTIAL_P1),
                required(c.SEQUENTIAL_DELTA),
                required(c.SEQUENTIAL_ALPHA),
                required(c.SEQUENTIAL_BETA),
                int(required(c.SEQUENTIAL_MAX_TRIALS)),
            )
        return cls(
            threshold=required(c.JUDGEMENT_THRESHOLD),
            confidence=required(c.JUDGEMENT_CONFIDENCE),
            errors=str(attributes.get(c.JUDGEMENT_ERRORS, "count")),
            min_mean_score=number(c.JUDGEMENT_MIN_MEAN_SCORE),
            max_std_dev=number(c.JUDGEMENT_MAX_STD_DEV),
            sequential=design,
        )


@dataclass(slots=True)
class SequentialTracker:
    """The one sequential loop: trial outcomes in trial-index order → a decision.

    ``assay run``, the pytest plugin and the replay of ``assay analyze`` all feed it, so they
    stop at the same trial with the same decision.
    """

    test: SequentialTest
    """The sequential test."""
    exclude_errors: bool = False
    """Error trials do not count (``errors="exclude"``)."""
    fed: int = 0
    """Trials fed, error trials included."""
    counted: int = 0
    """Trials that count towards the pass rate."""
    passed: int = 0
    """Passing trials among them."""
    decision: SequentialDecision | None = None
    """PASS, FAIL or INCONCLUSIVE once settled; None while it continues."""
    decided_at: int | None = None
    """Trials fed (error trials included) when it settled."""
    last: SequentialState | None = None
    """The latest state (bounds on the pass rate)."""

    def feed(self, passed: bool, error: bool) -> None:
        """Take the next trial in index order (ignored once settled)."""
        self.fed += 1
        if self.decision is not None or (error and self.exclude_errors):
            return
        self.counted += 1
        self.passed += passed
        self.last = self.test.state(self.passed, self.counted)
        if self.last.decision is not SequentialDecision.CONTINUE:
            self.decision = self.last.decision
            self.decided_at = self.fed
