"""An adaptive comparison of two versions over a suite: stop once the paired difference settles.

Each case runs on both versions (the suite's trials per case, as a fixed run: no per-case
stop), or on the current one against a recorded baseline set's pass rate. Cases start in a
random order fixed by the seed (:func:`assay.stats.case_order`), and each finished case's
difference of pass rates ``current - baseline`` is fed, in that order, to the betting confidence
sequence of the mean difference over cases (:class:`assay.stats.PairedDifferenceSequence`,
Waudby-Smith & Ramdas 2024). The run starts no further case once its interval settles the
question — drop shown (FAIL), no drop of delta or within the margin (PASS), beyond the margin
(FAIL) — or when a budget or the suite runs out (INCONCLUSIVE). The verdict is read from the
interval shown, never from the rule that stopped: the interval covers the mean difference at
every case count at once, so stopping whenever it settles keeps its error rate (at most alpha
for a wrong FAIL and for a wrong PASS alike).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from assay import conventions as c
from assay.errors import ConfigError, InputError
from assay.judge import Verdict
from assay.run._agents import Agent
from assay.run._budget import Spending
from assay.run._options import RunOptions, test_judgement, test_plan
from assay.run._results import TrialRecord
from assay.run._runner import _Runner, _sigterm_as_ctrl_c
from assay.run._state import TestState
from assay.run._suite import Suite, TestCase
from assay.stats import (
    PairedDecision,
    PairedDifferenceSequence,
    PairedStatus,
    case_order,
)

DESIGN = "adaptive paired sequence"
"""The design's name in the output and the JSON."""
CONSTRUCTION = "betting confidence sequence (Waudby-Smith & Ramdas 2024)"
"""What the interval is, as the output cites it."""

SILENT_STOP = 10
"""A comparison run starts no further case once a version's first this many trials (or more,
all finished so far) were all errors: it has answered nothing, so nothing can be compared."""

_VERDICTS = {
    PairedDecision.DROP: Verdict.FAIL,
    PairedDecision.BEYOND_MARGIN: Verdict.FAIL,
    PairedDecision.NO_DROP: Verdict.PASS,
    PairedDecision.WITHIN_MARGIN: Verdict.PASS,
    PairedDecision.UNDECIDED: Verdict.INCONCLUSIVE,
}


@dataclass(frozen=True, slots=True)
class PairedRunOptions:
    """What an adaptive comparison asks (the same vocabulary as ``assay compare``)."""

    delta: float = 0.10
    """The drop that matters: PASS once the interval shows any drop is smaller."""
    alpha: float = 0.05
    """The interval's miss rate over the whole run: bounds a wrong FAIL and a wrong PASS."""
    margin: float | None = None
    """Non-inferiority margin ("can we switch?"); None: drop / no drop of delta."""
    baseline_version: str = "baseline"
    """``assay.agent.version`` of the baseline's trials (or the recorded set's version)."""
    max_cases: int | None = None
    """Start at most this many cases (budget); None: the whole suite."""

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ConfigError(f"--alpha must lie strictly between 0 and 1 (got {self.alpha})")
        if self.max_cases is not None and self.max_cases < 1:
            raise ConfigError(f"--max-cases must be at least 1 (got {self.max_cases})")
        PairedDifferenceSequence(1 - self.alpha, self.delta, self.margin)  # checks the rest


@dataclass(frozen=True, slots=True)
class PairedCase:
    """One case fed to the comparison, in the order it was fed."""

    case: str
    """The test id."""
    current: float
    """The current version's pass rate on it."""
    baseline: float
    """The baseline's pass rate on it."""

    @property
    def difference(self) -> float:
        """``current - baseline`` (negative: a drop)."""
        return self.current - self.baseline


@dataclass(frozen=True, slots=True)
class VersionTally:
    """One version's trials in a comparison run, and how many were errors."""

    role: str
    """``current`` or ``baseline``."""
    version: str
    """Its ``assay.agent.version``."""
    trials: int
    """Trials finished."""
    errors: int
    """Error trials among them (an exception, a timeout, no trial span): the harness or the
    version broke, so nothing was learned about its pass rate."""
    first_error: str | None = None
    """The first error's message."""

    @property
    def label(self) -> str:
        """``baseline v1``, or the role alone when the version is named after it."""
        return self.role if self.version == self.role else f"{self.role} {self.version}"


@dataclass(frozen=True, slots=True)
class PairedRunResult:
    """An adaptive comparison of two versions over a suite: the interval and its verdict."""

    suite: str
    """Suite name."""
    run_id: str
    """``assay.run.id`` of every trial (both versions)."""
    out: str
    """The trace set both versions' trials were written to."""
    current_version: str
    """``assay.agent.version`` of the current version's trials."""
    baseline_version: str
    """The baseline's version."""
    baseline_source: str
    """``"agent"`` (run here), or the recorded set's path."""
    suite_cases: int
    """Cases of the suite (after ``--tag`` / ``--difficulty``)."""
    order_seed: int
    """The seed of the case order."""
    cases: tuple[PairedCase, ...]
    """The cases fed, in order."""
    unpaired: tuple[str, ...]
    """Cases reached but not fed: no baseline rate, or no trial counted on a side."""
    status: PairedStatus
    """The mean difference, its anytime-valid interval and the decision."""
    options: PairedRunOptions
    """What was asked."""
    trials: tuple[TrialRecord, ...]
    """Every finished trial (both versions), in completion order."""
    elapsed_s: float
    """Wall time."""
    tokens: int
    """Tokens used."""
    cost: float
    """USD spent."""
    stop_reason: str | None
    """Why the run stopped before a decision (a budget, an interrupt, the suite ran out)."""
    interrupted: bool
    """True if stopped by Ctrl-C or SIGTERM."""
    warnings: tuple[str, ...] = ()
    """Things the user should know."""
    versions: tuple[VersionTally, ...] = ()
    """Each version's trials and error trials (the current version first)."""
    one_version_only: tuple[str, ...] = ()
    """Every case that ended with trials of one version only (the run stopped before the
    other's): a re-read cannot pair it."""
    never_answered: tuple[str, ...] = ()
    """Cases not compared because one version's trials on them were all errors."""
    silent_stop: bool = False
    """The run stopped starting cases because a version's first :data:`SILENT_STOP` trials
    were all errors."""

    @property
    def silent(self) -> VersionTally | None:
        """A version that ran trials and answered none (every one an error), if any."""
        return next((v for v in self.versions if v.trials and v.errors == v.trials), None)

    @property
    def verdict(self) -> Verdict:
        """What the interval shown settles: FAIL, PASS or INCONCLUSIVE.

        FAIL: drop shown, or beyond the margin; PASS: no drop of delta, or within the margin.
        """
        return _VERDICTS[self.status.decision]

    @property
    def reason(self) -> str:
        """One sentence: the decision, the interval, the cases used and why it stopped."""
        s = self.status
        silent = self.silent
        if silent is not None and s.decision is PairedDecision.UNDECIDED:
            # No evidence: a version that never answered is not a version that failed.
            return (
                f"no evidence: the {silent.label} answered none of its "
                f"{silent.trials} trials, every one an error"
                + (f" (first: {silent.first_error})" if silent.first_error else "")
                + "; nothing to compare"
                + (", so no further case was started" if self.silent_stop else "")
                + f" ({DESIGN})"
            )
        level = f"{s.confidence:.0%} anytime interval [{_pt(s.low)}, {_pt(s.high)}] points"
        mean = "no case yet" if s.mean is None else f"mean difference {_pt(s.mean)} points"
        used = f"after {s.cases} of {self.suite_cases} cases"
        margin, delta = self.options.margin, self.options.delta
        if s.decision is PairedDecision.DROP:
            what = "drop shown: the interval lies below 0"
        elif s.decision is PairedDecision.NO_DROP:
            what = f"no drop of {_pt(delta, signed=False)} points: the interval lies above -delta"
        elif s.decision is PairedDecision.WITHIN_MARGIN:
            what = f"within the margin: the interval lies above -{_pt(margin or 0, signed=False)}"
        elif s.decision is PairedDecision.BEYOND_MARGIN:
            what = f"beyond the margin: the interval lies below -{_pt(margin or 0, signed=False)}"
        else:
            asked = (
                f"0 or -{_pt(margin, signed=False)}"
                if margin is not None
                else f"0 and -{_pt(delta, signed=False)}"
            )
            stop = self.stop_reason or "the suite ran out of cases"
            what = f"undecided: the interval still spans {asked}; stopped: {stop}"
        return f"{what} ({mean}, {level}, {used}; {DESIGN})"

    def exit_code(self, inconclusive_ok: bool = False) -> int:
        """0 PASS, 1 FAIL, 3 INCONCLUSIVE (0 if ``inconclusive_ok``).

        A version that answered none of its trials exits 3 even with ``inconclusive_ok``: the
        run broke, it did not merely lack trials (docs/cli.md).
        """
        if self.verdict is Verdict.FAIL:
            return 1
        if self.verdict is Verdict.INCONCLUSIVE and (not inconclusive_ok or self.silent):
            return 3
        return 0

    def to_json(self) -> dict[str, Any]:
        """The comparison as the JSON document ``assay run --format json`` writes."""
        s = self.status
        return {
            "schema": "assay.paired-run/v1",
            "suite": self.suite,
            "run_id": self.run_id,
            "out": self.out,
            "design": DESIGN,
            "construction": CONSTRUCTION,
            "current_version": self.current_version,
            "baseline_version": self.baseline_version,
            "baseline_source": self.baseline_source,
            "order_seed": self.order_seed,
            "suite_cases": self.suite_cases,
            "cases_used": s.cases,
            "unpaired_cases": list(self.unpaired),
            "difference": s.mean,
            "interval": {"low": s.low, "high": s.high, "confidence": s.confidence},
            "alpha": self.options.alpha,
            "delta": self.options.delta,
            "margin": self.options.margin,
            "decision": s.decision.value,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "trials": len(self.trials),
            "elapsed_s": self.elapsed_s,
            "tokens": self.tokens,
            "cost": self.cost,
            "stop_reason": self.stop_reason,
            "warnings": list(self.warnings),
            "versions": [
                {
                    "role": v.role,
                    "version": v.version,
                    "trials": v.trials,
                    "errors": v.errors,
                    "first_error": v.first_error,
                }
                for v in self.versions
            ],
            "one_version_only": list(self.one_version_only),
            "never_answered": list(self.never_answered),
            "silent_stop": self.silent_stop,
            "per_case": [
                {"case": c.case, "current": c.current, "baseline": c.baseline} for c in self.cases
            ],
        }


def _pt(value: float, *, signed: bool = True) -> str:
    """A difference in percentage points, one decimal (never ``-0.0``)."""
    shown = round(value * 100, 1) + 0.0
    return f"{shown:+.1f}" if signed else f"{shown:.1f}"


class _PairedRunner(_Runner):
    """The run loop of :class:`_Runner`, scheduling cases in order on two versions."""

    def __init__(
        self,
        suite: Suite,
        ordered: Sequence[TestCase],
        agent: Agent,
        options: RunOptions,
        paired: PairedRunOptions,
        current_version: str,
        baseline_agent: Agent | None,
        baseline_rates: Mapping[str, float] | None,
        on_case: Callable[[PairedStatus], None] | None,
    ) -> None:
        super().__init__(suite, ordered, agent, options, None)
        self.paired = paired
        self.baseline_agent = baseline_agent
        self.baseline_rates = baseline_rates
        self.on_case = on_case
        self.current_version = current_version
        self.sequence = PairedDifferenceSequence(1 - paired.alpha, paired.delta, paired.margin)
        # one state per case and version, the baseline's beside the current one's
        self.current = {s.test.id: s for s in self.states}
        self.baseline: dict[str, TestState] = {}
        for state in self.states:
            state.version = current_version
        if baseline_agent is not None:
            for test in ordered:
                runs, _, _ = test_plan(test, options)
                judgement = test_judgement(test, options)
                self.baseline[test.id] = TestState(
                    test,
                    runs,
                    judgement,
                    window=options.concurrency,
                    version=paired.baseline_version,
                )
        self.order = [t.id for t in ordered]
        self.unpaired: list[str] = []
        if baseline_rates is not None:
            # a case the recorded set lacks has nothing to pair with: named, never run
            self.unpaired = [c for c in self.order if c not in baseline_rates]
            self.order = [c for c in self.order if c in baseline_rates]
        if paired.max_cases is not None:
            self.order = self.order[: paired.max_cases]
        self.cursor = 0
        self.fed: list[PairedCase] = []
        self.never_answered: list[str] = []

    def _agent_of(self, state: TestState) -> Agent:
        if state.version == self.paired.baseline_version and self.baseline_agent is not None:
            return self.baseline_agent
        return self.agent

    def _next(self) -> TestState | None:
        """The first state in case order that wants a trial, while the question is open."""
        if self.sequence.decide() is not PairedDecision.UNDECIDED:
            return None
        if self._silent_side() is not None:
            return None  # a version that has answered nothing yet: no further case starts
        # every case before the cursor has all its trials in: start the search there
        for i in range(self.cursor, len(self.order)):
            case = self.order[i]
            for state in (self.current[case], self.baseline.get(case)):
                if state is not None and state.wants_more():
                    return state
        return None

    def _fed(self, state: TestState) -> None:
        """Feed every case, in order, whose trials are all in (both versions)."""
        while self.cursor < len(self.order):
            case = self.order[self.cursor]
            current, baseline = self.current[case], self.baseline.get(case)
            if not _complete(current) or (baseline is not None and not _complete(baseline)):
                return
            rate = _rate(current)
            base = _rate(baseline) if baseline is not None else self._recorded(case)
            self.cursor += 1
            if _silent(current) or (baseline is not None and _silent(baseline)):
                # Every trial of a side was an error: that version never answered this case.
                self.never_answered.append(case)
                continue
            if rate is None or base is None:
                self.unpaired.append(case)
                continue
            self.fed.append(PairedCase(case, rate, base))
            self.sequence.add([rate - base])
            if self.on_case is not None:
                self.on_case(self.sequence.status())

    def _recorded(self, case: str) -> float | None:
        return None if self.baseline_rates is None else self.baseline_rates.get(case)

    def compare(self, baseline_source: str, suite_cases: int, order_seed: int) -> PairedRunResult:
        """Run until the interval settles or a budget (or the suite) runs out."""
        # in case order, each case's baseline beside it: the loop's budget and shutdown read these
        self.states = [
            s for c in self.order for s in (self.current[c], self.baseline.get(c)) if s is not None
        ]
        spending, trials, stop_reason, interrupted = self._loop()
        return self._result(
            spending, trials, stop_reason, interrupted, baseline_source, suite_cases, order_seed
        )

    def _result(
        self,
        spending: Spending,
        trials: list[TrialRecord],
        stop_reason: str | None,
        interrupted: bool,
        baseline_source: str,
        suite_cases: int,
        order_seed: int,
    ) -> PairedRunResult:
        status = self.sequence.status()
        warnings = list(self.warnings)
        if self.unpaired:
            shown = ", ".join(self.unpaired[:3]) + (" …" if len(self.unpaired) > 3 else "")
            warnings.append(
                f"{len(self.unpaired)} case(s) not compared (no baseline pass rate: not run; "
                f"or no trial counted on a side): {shown}"
            )
        versions = self._tallies()
        if self.never_answered:
            warnings.append(
                f"{len(self.never_answered)} case(s) not compared: one version's trials on "
                f"them were all errors: {_listed(self.never_answered)}"
            )
        for tally in versions:
            if tally.errors and tally.errors < tally.trials:
                excluded = all(state.judgement.excludes_errors for state in self.states)
                counted = "left out" if excluded else "counted as failures"
                favours = " (they favour the current version)" if tally.role == "baseline" else ""
                warnings.append(
                    f"{tally.errors} of the {tally.role}'s {tally.trials} trials were errors, "
                    f"{counted}{favours}; first: {tally.first_error}"
                )
        one_side = self._one_version_only()
        if one_side:
            warnings.append(
                f"{len(one_side)} case(s) ended with one version's trials only (the run "
                f"stopped before the other's; a re-read leaves them unpaired): {_listed(one_side)}"
            )
        silent = self._silent_side()
        silent_stop = status.decision is PairedDecision.UNDECIDED and stop_reason is None
        silent_stop = silent_stop and silent is not None
        if silent_stop:
            stop_reason = f"the {silent} answered none of its first {SILENT_STOP} trials"
        if status.decision is PairedDecision.UNDECIDED and stop_reason is None:
            stop_reason = f"all {len(self.order)} cases ran"
        elif status.decision is not PairedDecision.UNDECIDED:
            stop_reason = None  # the interval settled; a budget reached later changed nothing
        return PairedRunResult(
            suite=self.suite.name,
            run_id=self.run_id,
            out=str(Path(self.out)),
            current_version=self.current_version,
            baseline_version=self.paired.baseline_version,
            baseline_source=baseline_source,
            suite_cases=suite_cases,
            order_seed=order_seed,
            cases=tuple(self.fed),
            unpaired=tuple(self.unpaired),
            status=status,
            options=self.paired,
            trials=tuple(trials),
            elapsed_s=spending.elapsed(),
            tokens=spending.tokens,
            cost=spending.cost,
            stop_reason=stop_reason,
            interrupted=interrupted,
            warnings=tuple(warnings),
            versions=versions,
            one_version_only=tuple(one_side),
            never_answered=tuple(self.never_answered),
            silent_stop=silent_stop,
        )

    def _silent_side(self) -> str | None:
        """The role whose first :data:`SILENT_STOP` trials (or more) were all errors, if any.

        Every later trial would cost time (and the other version's calls) for a comparison
        that cannot be made; the run stops starting cases and says so.
        """
        sides = [("current version", self.current.values()), ("baseline", self.baseline.values())]
        for role, states in sides:
            finished = errors = 0
            for state in states:
                finished += len(state.records)
                errors += state.errors
            if finished >= SILENT_STOP and errors == finished:
                return role
        return None

    def _tallies(self) -> tuple[VersionTally, ...]:
        """Each version's trials and errors, the current version first."""
        sides = [("current", self.current_version, list(self.current.values()))]
        if self.baseline_agent is not None:
            sides.append(("baseline", self.paired.baseline_version, list(self.baseline.values())))
        out = []
        for role, version, states in sides:
            records = [r for state in states for r in state.records]
            errors = [r for r in records if r.outcome == c.OUTCOME_ERROR]
            first = next((r.error for r in errors if r.error), None)
            out.append(VersionTally(role, version, len(records), len(errors), first))
        return tuple(out)

    def _one_version_only(self) -> list[str]:
        """The cases, in run order, where one version finished trials and the other none."""
        if self.baseline_agent is None:
            return []
        return [
            case
            for case in self.order
            if (len(self.current[case].records) > 0) != (len(self.baseline[case].records) > 0)
        ]


def _listed(cases: Sequence[str]) -> str:
    """Every case named (the JSON lists them too)."""
    return ", ".join(cases)


def _silent(state: TestState) -> bool:
    """True when the state ran trials and every one was an error."""
    return bool(state.records) and state.errors == len(state.records)


def _complete(state: TestState) -> bool:
    return len(state.records) >= state.max_runs


def _rate(state: TestState) -> float | None:
    return state.passed / state.counted if state.counted else None


def load_baseline_rates(
    path: str | Path, version: str | None = None
) -> tuple[dict[str, float], str]:
    """Each case's pass rate in a recorded trace set, judged as ``assay analyze`` judges it.

    Returns the rates by test id and the set's version. A set holding several
    ``assay.agent.version`` values needs ``version`` (its trials would otherwise be pooled). A
    case whose trials are all errors gets no rate (it is then named as not compared).

    Raises:
        InputError: The set cannot be read, holds several versions and none was named, or
            every trial in it is an error.
    """
    from assay.analysis import columns
    from assay.api import analyze

    if version is None:
        versions = analyze(str(path)).trials[columns.AGENT_VERSION].drop_nulls().unique()
        if len(versions) > 1:
            shown = ", ".join(sorted(str(v) for v in versions))
            raise InputError(
                f"--baseline {path}: holds several assay.agent.version values ({shown}); "
                "name one with --baseline-version"
            )
        version = str(versions[0]) if len(versions) else None
    analysis = analyze(str(path), current_version=version)
    tests = analysis.result.tests
    # A case whose recorded trials are all errors has no pass rate: that version never
    # answered it (errors counted as failures would read as a rate of 0).
    rates = {
        t.test_id: t.pass_rate for t in tests if t.pass_rate is not None and t.errors < t.trials
    }
    if tests and not rates:
        raise InputError(
            f"--baseline {path}: every trial of the recorded set is an error (first: "
            f"{next((t.first_error for t in tests if t.first_error), 'none recorded')}): "
            "a version that never answered is nothing to compare against"
        )
    return rates, version or "baseline"


def run_paired(
    suite: Suite,
    agent: Agent,
    options: RunOptions | None = None,
    paired: PairedRunOptions | None = None,
    *,
    baseline_agent: Agent | None = None,
    baseline_rates: Mapping[str, float] | None = None,
    baseline_source: str = "agent",
    tests: Sequence[TestCase] | None = None,
    on_case: Callable[[PairedStatus], None] | None = None,
) -> PairedRunResult:
    """Compare ``agent`` with a baseline over a suite, stopping once the question is settled.

    Give exactly one of ``baseline_agent`` (both run every case, the suite's trials per case)
    and ``baseline_rates`` (a recorded set's pass rate per case, :func:`load_baseline_rates`;
    cases it lacks are skipped and named). Cases run in the order
    ``case_order(len(tests), options.seed or 0)``; trials of both versions go to
    ``options.out`` under one run id, tagged ``options.agent_version`` (default
    ``ASSAY_AGENT_VERSION``, else ``"current"``) and ``paired.baseline_version``.

    Args:
        suite: The loaded suite.
        agent: The current version.
        options: How to run (``adaptive`` is ignored: each case runs all its trials).
        paired: delta, alpha, margin, the baseline's version, a case budget.
        baseline_agent: The baseline version, run here.
        baseline_rates: Or the baseline's recorded pass rates by test id.
        baseline_source: Where the baseline came from, for the output.
        tests: A selection of the suite's tests (default all).
        on_case: Called with the comparison's status after each case is fed.

    Returns:
        The interval of the mean difference, its decision and verdict, the cases used.
    """
    options = options or RunOptions()
    paired = paired or PairedRunOptions()
    if (baseline_agent is None) == (baseline_rates is None):
        raise ConfigError("a paired run needs exactly one baseline: an agent or a recorded set")
    current_version = options.agent_version or os.environ.get("ASSAY_AGENT_VERSION") or "current"
    if current_version == paired.baseline_version:
        raise ConfigError(
            f"--agent-version and --baseline-version are both {current_version!r}: the two "
            "versions' trials must be told apart"
        )
    chosen = list(suite.tests if tests is None else tests)
    if not chosen:
        raise ConfigError("no test to run")
    if baseline_rates is not None and not any(t.id in baseline_rates for t in chosen):
        raise InputError(
            f"--baseline {baseline_source}: the recorded set has a pass rate for none of the "
            f"suite's {len(chosen)} case(s) (matched by test id)"
        )
    seed = options.seed if options.seed is not None else 0
    ordered = [chosen[i] for i in case_order(len(chosen), seed)]
    fixed = replace(options, adaptive=False)
    with _sigterm_as_ctrl_c():
        runner = _PairedRunner(
            suite,
            ordered,
            agent,
            fixed,
            paired,
            current_version,
            baseline_agent,
            baseline_rates,
            on_case,
        )
        return runner.compare(baseline_source, len(chosen), seed)
