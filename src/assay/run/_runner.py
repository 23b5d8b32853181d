"""Executing a suite: bounded concurrency, timeouts, adaptive stopping, budgets, Ctrl-C.

The main thread schedules; every trial runs in its own daemon thread, and the agent call in
another one inside it, so a hung agent costs a thread, not a slot: after ``timeout`` the trial
ends as ``error`` and the run goes on. Results are fed to each test's sequential test in
trial-index order (not completion order), so fast failures cannot bias the decision.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
import queue
import signal
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from opentelemetry.sdk.trace import ReadableSpan

from assay import conventions as c
from assay.errors import AgentError, ConfigError, InputError
from assay.instrument import configure, trial
from assay.run._agents import Agent, CallableAgent, stop_commands
from assay.run._budget import Budget, Spending, unmetered_warning
from assay.run._live import TrialSpanCollector
from assay.run._options import RunOptions, run_folder, test_judgement, test_plan
from assay.run._results import RunResult, TrialRecord
from assay.run._score import EVALVIEW_SCORE
from assay.run._state import Progress, TestState
from assay.run._suite import Suite, TestCase
from assay.run._turns import judge, run_calls, run_notes, summarize
from assay.run._verdicts import judge_run


def _trial_seed(seed: int | None, test_id: str, index: int) -> int | None:
    if seed is None:
        return None
    digest = hashlib.sha256(f"{seed}:{test_id}:{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that a run stops the same way (CI cancels, ``kill``)."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise _Terminated()


@contextlib.contextmanager
def _sigterm_as_ctrl_c() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _no_interrupts(active: bool) -> Iterator[None]:
    """After a first Ctrl-C or SIGTERM, ignore more while the finished trials are written."""
    if not active or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in _STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


class _Runner:
    def __init__(
        self,
        suite: Suite,
        tests: Sequence[TestCase],
        agent: Agent,
        options: RunOptions,
        progress: Progress | None,
        agents: Mapping[str, Agent] | None = None,
    ) -> None:
        self.suite = suite
        self.agent = agent
        self.agents = dict(agents or {})
        self.started = time.monotonic()
        self.progress = progress
        self.run_id = options.run_id or os.environ.get("ASSAY_RUN_ID") or uuid.uuid4().hex[:16]
        self.options = options
        # None: a folder of this run's own, never mixed with another run's trials
        self.out = options.out if options.out is not None else run_folder(self.run_id)
        self.states: list[TestState] = []
        for test in tests:
            runs, _, _ = test_plan(test, options)
            self.states.append(
                TestState(test, runs, test_judgement(test, options), window=options.concurrency)
            )
        self.results: queue.Queue[tuple[TestState, TrialRecord]] = queue.Queue()
        self.collector = TrialSpanCollector()
        self.warnings = run_notes(tests, self._takes_mocks, priced=options.prices is not None)
        self._notes: set[tuple[str, str]] = set()
        self._unpriced: set[str] = set()
        self._unmetered: dict[str, int] = {}
        """LLM calls without token usage, per test: counted as 0 by the budgets and the cost."""
        self._lock = threading.Lock()

    # --- one trial (in its own thread) -------------------------------------------------------

    def _takes_mocks(self, test: TestCase) -> bool:
        agent = self.agents.get(test.id, self.agent)
        return isinstance(agent, CallableAgent) and agent.takes_mocks

    def _agent_of(self, state: TestState) -> Agent:
        """The agent a trial of ``state`` calls (a paired run calls two)."""
        return self.agents.get(state.test.id, self.agent)

    def _deadline(self, started: float) -> float | None:
        """When a trial begun at ``started`` must end: ``--timeout``, and ``--max-time``."""
        ends = [started + self.options.timeout] if self.options.timeout else []
        if self.options.budget.max_time is not None:
            ends.append(self.started + self.options.budget.max_time)
        return min(ends) if ends else None

    def _call_agent(self, input: Any, seed: int | None, state: TestState, started: float) -> Any:
        box: dict[str, Any] = {}
        agent = self._agent_of(state)
        timeout = self.options.timeout
        if timeout is not None:  # the turns of a trial share its timeout
            timeout = max(started + timeout - time.monotonic(), 0.001)

        def target() -> None:
            try:
                box["output"] = agent.invoke(input, timeout=timeout, seed=seed)
            except BaseException as exc:  # handed to the trial thread, recorded on the span
                box["error"] = exc

        context = contextvars.copy_context()
        worker = threading.Thread(target=context.run, args=(target,), daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            raise TimeoutError(f"agent did not finish within {self.options.timeout:g} s")
        if "error" in box:
            error = box["error"]
            if not isinstance(error, Exception):  # SystemExit, KeyboardInterrupt in the agent
                raise AgentError(f"agent raised {type(error).__name__}: {error}") from error
            raise error
        return box.get("output")

    def _trial(self, state: TestState, index: int) -> None:
        """Run one trial and hand its record to the scheduler, whatever happens."""
        try:
            record = self._trial_record(state, index)
        except Exception as exc:  # a bug past the agent call must not hang the scheduler
            message = f"assay runner: {type(exc).__name__}: {exc}"
            record = TrialRecord(state.test.id, index, c.OUTCOME_ERROR, 0.0, 0, 0, 0, 0.0, message)
        self.results.put((state, record))

    def _trial_record(self, state: TestState, index: int) -> TrialRecord:
        test = state.test
        seed = _trial_seed(self.options.seed, test.id, index)
        started = time.monotonic()
        cost = 0.0
        tokens_in = tokens_out = llm_calls = 0
        handle = trial(
            test.id,
            suite=self.suite.name,
            run_id=self.run_id,
            agent_version=state.version or self.options.agent_version,
            index=index,
            difficulty=test.difficulty,
            tags=test.tags or None,
            # An EvalView file's min_score is on its weighted score (checked in judge()).
            min_score=test.thresholds.min_score if test.score is None else None,
            suppress_errors=True,
            attributes={
                **state.judgement.to_attributes(),
                **({c.TRIAL_SEED: seed} if seed is not None else {}),
            },
        )
        with handle as t:
            trace_id = t.span.get_span_context().trace_id
            self.collector.watch(trace_id)
            try:
                exchanges = run_calls(test, lambda x: self._call_agent(x, seed, state, started))
            finally:
                spans = self.collector.take(trace_id)
                tokens_in, tokens_out = spans.input_tokens, spans.output_tokens
                llm_calls = len(spans.llm_calls)
                if spans.unmetered:
                    with self._lock:
                        held = self._unmetered.get(test.id, 0)
                        self._unmetered[test.id] = held + spans.unmetered
                if self.options.prices is not None:
                    cost, unpriced = self.options.prices.cost(spans.llm_calls)
                    with self._lock:
                        self._unpriced |= unpriced
            judged = judge(
                test,
                exchanges,
                spans.tools,
                _scores(cast(ReadableSpan, t.span)),
                deadline=self._deadline(started),
            )
            for name, ok in judged.checks:
                t.check(name, ok)
            if judged.score is not None:
                t.score(EVALVIEW_SCORE, judged.score)
            with self._lock:
                self._notes |= judged.notes
            limits = test.thresholds
            if limits.max_latency is not None:
                elapsed_ms = (time.monotonic() - started) * 1000
                t.check(f"latency <= {limits.max_latency:g} ms", elapsed_ms <= limits.max_latency)
            # A cost with an unknown part is no evidence either way: not checked (and said).
            if (
                limits.max_cost is not None
                and self.options.prices is not None
                and not spans.unmetered
            ):
                t.check(f"cost <= ${limits.max_cost:g}", cost <= limits.max_cost)
        span = cast(ReadableSpan, t.span)
        attributes = span.attributes or {}
        outcome = str(attributes.get(c.TRIAL_OUTCOME, c.OUTCOME_ERROR))
        error = span.status.description if outcome == c.OUTCOME_ERROR else None
        return TrialRecord(
            test.id,
            index,
            outcome,
            time.monotonic() - started,
            tokens_in,
            tokens_out,
            llm_calls,
            cost,
            error,
            tuple(spans.tool_sequence),
        )

    # --- scheduling (main thread) ------------------------------------------------------------

    def _next(self) -> TestState | None:
        candidates = [s for s in self.states if s.wants_more()]
        return min(candidates, key=lambda s: s.launched) if candidates else None

    def _fed(self, state: TestState) -> None:
        """``state`` took a finished trial (a paired run feeds its comparison here)."""

    def run(self) -> RunResult:
        spending, trials, stop_reason, interrupted = self._loop()
        return self._judge(spending, trials, stop_reason, interrupted)

    def _loop(self) -> tuple[Spending, list[TrialRecord], str | None, bool]:
        """Start trials while a test wants more and the budget allows; keep every one that ends.

        Returns the spending, the finished trials, why the run stopped early and whether it
        was interrupted; the tracer is shut down and every trial written.
        """
        self.started = time.monotonic()
        spending = Spending(self.started)
        try:
            configured = configure(self.out)
        except OSError as exc:
            raise InputError(
                f"--out {self.out}: cannot write a trace set there: {exc.strerror or exc}"
            ) from None
        configured.provider.add_span_processor(self.collector)
        if self.progress is not None:
            self.progress.start([s.test for s in self.states], [s.max_runs for s in self.states])
        in_flight = 0
        stop_reason: str | None = None
        interrupted = False
        trials: list[TrialRecord] = []
        try:
            while True:
                while stop_reason is None and in_flight < self.options.concurrency:
                    state = self._next()
                    if state is None:
                        break
                    stop_reason = spending.exhausted(self.options.budget)
                    if stop_reason is not None:
                        break
                    index = state.launched
                    state.launched += 1
                    spending.trials += 1
                    in_flight += 1
                    threading.Thread(
                        target=self._trial,
                        args=(state, index),
                        daemon=True,
                        name=f"assay-trial-{state.test.id}-{index}",
                    ).start()
                if in_flight == 0:
                    break
                try:
                    state, record = self.results.get(timeout=0.2)
                except queue.Empty:
                    if stop_reason is None:
                        stop_reason = self._time_out(spending)
                    continue
                in_flight -= 1
                trials.append(record)
                spending.tokens += record.input_tokens + record.output_tokens
                spending.cost += record.cost
                state.feed(record)
                self._fed(state)
                if self.progress is not None:
                    self.progress.update(state.status())
        except KeyboardInterrupt as exc:
            interrupted = True
            how = "SIGTERM" if isinstance(exc, _Terminated) else "Ctrl-C"
            stop_reason = f"interrupted ({how}) with {in_flight} trial(s) in flight"
        finally:
            with _no_interrupts(interrupted):
                if self.progress is not None:
                    for s in self.states:
                        if s.decision is None:
                            stopped = "stopped" if stop_reason else None
                            self.progress.update(s.status(stopped=stopped))
                    self.progress.stop()
                self.collector.shutdown()
                configured.flush()
                configured.shutdown()
                if interrupted:
                    # After the shutdown, so a trial ended by this is not recorded as an error.
                    stop_commands()  # their process groups: grandchildren too
        self.warnings.extend(summarize(self._notes))
        return spending, trials, stop_reason, interrupted

    def _judge(
        self,
        spending: Spending,
        trials: list[TrialRecord],
        stop_reason: str | None,
        interrupted: bool,
    ) -> RunResult:
        """The run's verdicts: its traces read back and judged as ``assay analyze`` judges."""
        if self._unpriced:
            names = ", ".join(sorted(self._unpriced))
            self.warnings.append(f"no price for model(s) {names}: their cost counts as 0")
        checked = [t.id for t in self.suite.tests if t.thresholds.max_cost is not None]
        said = unmetered_warning(
            self._unmetered, self.options.budget, self.options.prices is not None, checked
        )
        if said is not None:
            self.warnings.append(said)
        prices = self.options.prices
        analysis, result = judge_run(
            self.out,
            self.run_id,
            self.states,
            stop_reason,
            self.warnings,
            self.suite.findings,
            # The run's own price table costs its trials in the verdicts too.
            prices=prices.source if prices is not None and prices.source != "default" else None,
        )
        return RunResult(
            suite=self.suite.name,
            run_id=self.run_id,
            out=str(Path(self.out)),
            result=result,
            max_runs={s.test.id: s.max_runs for s in self.states},
            trials=tuple(trials),
            max_trials=sum(s.max_runs for s in self.states),
            elapsed_s=spending.elapsed(),
            tokens=spending.tokens,
            cost=spending.cost,
            stop_reason=stop_reason,
            interrupted=interrupted,
            warnings=tuple(self.warnings),
            analysis=analysis,
        )

    def _time_out(self, spending: Spending) -> str | None:
        budget = self.options.budget
        if budget.max_time is not None and spending.elapsed() >= budget.max_time:
            return spending.exhausted(Budget(max_time=budget.max_time))
        return None


def _scores(span: ReadableSpan) -> list[tuple[str, float]]:
    """The ``(name, value)`` of every score recorded on a trial span so far."""
    return [
        (str(e.attributes.get(c.SCORE_NAME, "")), float(cast(float, e.attributes[c.SCORE_VALUE])))
        for e in span.events
        if e.name == c.SCORE_EVENT and e.attributes and c.SCORE_VALUE in e.attributes
    ]


def run_suite(
    suite: Suite,
    agent: Agent,
    options: RunOptions | None = None,
    *,
    tests: Sequence[TestCase] | None = None,
    progress: Progress | None = None,
    agents: Mapping[str, Agent] | None = None,
) -> RunResult:
    """Run every test of ``suite`` (or ``tests``) against ``agent`` and record the trials.

    Each trial is an ``assay.instrument.trial`` span written to ``options.out``; the agent's
    own spans land inside it. Each test stops once its sequential test settles (unless
    ``options.adaptive`` is off) or at its maximum; the run stops starting trials when a budget
    is spent or on Ctrl-C, keeping every finished trial.

    Args:
        suite: The loaded suite.
        agent: What to call (see :func:`assay.run.load_agent`).
        options: How to run; defaults throughout if None.
        tests: A selection of the suite's tests (default all).
        progress: Receives progress updates.
        agents: Per-test agents (by test id) that replace ``agent`` for those tests.

    Returns:
        Per-test verdicts and per-trial records.
    """
    options = options or RunOptions()
    chosen = list(suite.tests if tests is None else tests)
    if not chosen:
        raise ConfigError("no test to run")
    with _sigterm_as_ctrl_c():
        return _Runner(suite, chosen, agent, options, progress, agents).run()
