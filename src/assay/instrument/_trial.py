"""``trial``: one execution of one test case, as an OpenTelemetry span with its verdict."""

from __future__ import annotations

import contextvars
import copy
import functools
import inspect
import math
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, cast

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from assay import conventions as c
from assay.errors import ConfigError
from assay.instrument import _context
from assay.version import __version__

P = ParamSpec("P")
R = TypeVar("R")

_current: contextvars.ContextVar[Trial | None] = contextvars.ContextVar(
    "assay_current_trial", default=None
)


def _tracer() -> trace.Tracer:
    return trace.get_tracer("assay", __version__)


class Trial:
    """A running trial: record scores and checks, or set the outcome explicitly.

    Obtained from ``with trial(...) as t``; module-level :func:`score` and :func:`check` act
    on the innermost running trial.
    """

    def __init__(self, span: Span, test_id: str, min_score: float | None) -> None:
        self.span = span
        """The trial's span."""
        self.test_id = test_id
        """The test case."""
        self._min_score = min_score
        self._outcome: str | None = None
        self._failed_checks: list[str] = []
        self._low_scores: list[str] = []

    def score(self, name: str, value: float, *, range: tuple[float, float] | None = None) -> None:
        """Record a named score (an ``assay.score`` event on the trial span).

        Args:
            name: ``assay.score.name``.
            value: ``assay.score.value``.
            range: The scale the score lies on, ``(low, high)``, recorded as
                ``assay.score.range``: ``assay watch`` bounds the score's mean by it (an
                anytime-valid interval needs the bounds; without them it assumes [0, 1]).
        """
        if not _finite(value):
            raise ConfigError(f"score {name!r}: value must be a finite number (got {value!r})")
        attributes: dict[str, Any] = {c.SCORE_NAME: name, c.SCORE_VALUE: float(value)}
        if range is not None:
            low, high = range
            if not (_finite(low) and _finite(high) and low < high):
                raise ConfigError(f"score {name!r}: range must be two numbers, low < high")
            if not low <= value <= high:
                raise ConfigError(f"score {name!r}: {value} lies outside its range [{low}, {high}]")
            attributes[c.SCORE_RANGE] = [float(low), float(high)]
        self.span.add_event(c.SCORE_EVENT, attributes)
        if self._min_score is not None and value < self._min_score:
            self._low_scores.append(name)

    def check(self, name: str, passed: bool) -> bool:
        """Record one assertion (an ``assay.check`` event); returns ``passed``."""
        passed = bool(passed)
        self.span.add_event(c.CHECK_EVENT, {c.CHECK_NAME: name, c.CHECK_PASSED: passed})
        if not passed:
            self._failed_checks.append(name)
        return passed

    def outcome(self, value: str) -> None:
        """Set the outcome explicitly: ``"pass"``, ``"fail"`` or ``"error"``."""
        if value not in c.OUTCOMES:
            raise ConfigError(f"outcome must be one of {', '.join(c.OUTCOMES)} (got {value!r})")
        self._outcome = value

    def passed(self) -> None:
        """Mark the trial passed."""
        self.outcome(c.OUTCOME_PASS)

    def failed(self) -> None:
        """Mark the trial failed."""
        self.outcome(c.OUTCOME_FAIL)

    def _finish(self, exc: BaseException | None) -> str:
        if exc is not None and self._outcome is None:
            self.span.record_exception(exc)
            self.span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
            outcome = c.OUTCOME_ERROR
        elif self._outcome is not None:
            outcome = self._outcome
        elif self._failed_checks or self._low_scores:
            outcome = c.OUTCOME_FAIL
        else:
            # No explicit outcome, no failed check, no low score: the trial passed.
            outcome = c.OUTCOME_PASS
        if outcome == c.OUTCOME_ERROR and exc is None:
            self.span.set_status(Status(StatusCode.ERROR, "trial marked as error"))
        self.span.set_attribute(c.TRIAL_OUTCOME, outcome)
        return outcome


class trial:  # noqa: N801 - used like a function: `with trial("t"):` and `@trial("t")`
    """Run one trial of a test case, as a context manager or a decorator.

    The trial is a span carrying ``assay.test.id`` (and the other attributes of the trial
    contract). Its outcome is set explicitly (:meth:`Trial.outcome`), or from its checks and
    scores (fail if a check failed or a score is below ``min_score``, else pass), or ``error``
    when an exception escapes. By default each trial starts a new trace.

    Example:
        >>> with trial("refund-policy", suite="support") as t:  # doctest: +SKIP
        ...     answer = agent("Can I get a refund?")
        ...     t.check("mentions 30 days", "30 days" in answer)

    Args:
        test_id: The test case.
        suite: Suite name (``assay.suite``).
        run_id: The batch of trials; defaults to ``ASSAY_RUN_ID`` or one id per process.
        agent_version: The version under test; defaults to ``ASSAY_AGENT_VERSION``.
        index: Trial number; defaults to a per-test counter in this process.
        difficulty: ``assay.test.difficulty``.
        tags: ``assay.test.tags``.
        min_score: A score below this fails the trial.
        new_trace: Start a new trace (default) instead of nesting under the current span.
        suppress_errors: Swallow an exception after recording it as an ``error`` trial.
        attributes: More span attributes.
    """

    def __init__(
        self,
        test_id: str,
        *,
        suite: str | None = None,
        run_id: str | None = None,
        agent_version: str | None = None,
        index: int | None = None,
        difficulty: str | None = None,
        tags: Sequence[str] | None = None,
        min_score: float | None = None,
        new_trace: bool = True,
        suppress_errors: bool = False,
        attributes: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(test_id, str) or not test_id:
            raise ConfigError("trial: test_id must be a non-empty string")
        self.test_id = test_id
        self.suite = suite
        self.run_id = run_id
        self.agent_version = agent_version
        self.index = index
        self.difficulty = difficulty
        self.tags = list(tags) if tags else None
        self.min_score = min_score
        self.new_trace = new_trace
        self.suppress_errors = suppress_errors
        self.attributes = dict(attributes or {})
        self._stack: list[tuple[Trial, object, contextvars.Token[Trial | None], Any]] = []

    def _span_attributes(self) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            c.TEST_ID: self.test_id,
            c.RUN_ID: self.run_id or _context.default_run_id(),
            c.TRIAL_INDEX: self.index
            if self.index is not None
            else _context.next_trial_index(self.test_id),
        }
        version = self.agent_version or _context.default_agent_version()
        optional = {
            c.SUITE: self.suite,
            c.AGENT_VERSION: version,
            c.TEST_DIFFICULTY: self.difficulty,
            c.TEST_TAGS: self.tags,
        }
        attributes.update({k: v for k, v in optional.items() if v is not None})
        attributes.update(self.attributes)
        return attributes

    def __enter__(self) -> Trial:
        parent = otel_context.Context() if self.new_trace else None
        span = _tracer().start_span(
            f"trial {self.test_id}", context=parent, attributes=self._span_attributes()
        )
        token_ctx = otel_context.attach(trace.set_span_in_context(span))
        handle = Trial(span, self.test_id, self.min_score)
        token_trial = _current.set(handle)
        self._stack.append((handle, token_ctx, token_trial, span))
        return handle

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        handle, token_ctx, token_trial, span = self._stack.pop()
        try:
            handle._finish(exc)
        finally:
            _current.reset(token_trial)
            otel_context.detach(cast(Any, token_ctx))
            span.end()
        return exc is not None and self.suppress_errors and isinstance(exc, Exception)

    def __call__(self, func: Callable[P, R]) -> Callable[P, R]:
        """Use as a decorator: every call of ``func`` is one trial."""
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
                with self._fresh():
                    return await func(*args, **kwargs)

            return cast(Callable[P, R], async_wrapper)

        @functools.wraps(func)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            result: R | None = None  # stays None when suppress_errors swallowed an exception
            with self._fresh():
                result = func(*args, **kwargs)
            return cast(R, result)

        return wrapper

    def _fresh(self) -> trial:
        # Each call gets its own copy, so concurrent calls (threads, async tasks) never share
        # the stack of running trials.
        fresh = copy.copy(self)
        fresh._stack = []
        return fresh


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def current_trial() -> Trial:
    """The innermost running trial; :class:`ConfigError` outside any trial."""
    handle = _current.get()
    if handle is None:
        raise ConfigError(
            "no trial is running: call this inside `with assay.instrument.trial(...)`"
        )
    return handle


def score(name: str, value: float, *, range: tuple[float, float] | None = None) -> None:
    """Record a named score on the current trial (see :meth:`Trial.score`)."""
    current_trial().score(name, value, range=range)


def check(name: str, passed: bool) -> bool:
    """Record one assertion on the current trial; returns ``passed``."""
    return current_trial().check(name, passed)
