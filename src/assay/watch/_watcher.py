"""The watch loop's one step: read what is new, judge the complete traces, update every test.

Memory is bounded by the number of tests (each holds a few counts and its drift windows) plus
the traces still arriving (:class:`PendingTraces`, itself bounded): trials are counted, never
kept.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import polars as pl

from assay import conventions as c
from assay.analysis import columns as tc
from assay.choices import ErrorPolicy

# The defaults of every command (docs/cli.md), defined once in assay.judge.
from assay.judge import DEFAULT_CONFIDENCE, DEFAULT_THRESHOLD, AnalyzeOptions, check_range
from assay.stats import BernoulliConfidenceSequence
from assay.watch._drift import DriftDetector, DriftRule
from assay.watch._follow import FileFollower
from assay.watch._means import RunningMean
from assay.watch._pass_rate import PassRateCounts, sequence_verdict
from assay.watch._pending import PendingTraces
from assay.watch._sequence import pass_rate_sequence
from assay.watch._status import InputNote, TestStatus, WatchStatus
from assay.watch._trials import trials_of

__all__ = ["WatchOptions", "Watcher"]


@dataclass(frozen=True, slots=True)
class WatchOptions:
    """What ``assay watch`` is asked: the options of ``analyze`` and the watch's own."""

    analysis: AnalyzeOptions = field(default_factory=AnalyzeOptions)
    """Mapping (``test_attribute``, ``pass_when``, ``min_score``), ``threshold``,
    ``confidence`` and ``errors``, as ``analyze`` reads them."""
    alpha: float = DriftRule().alpha
    """The drift alarm's bound on P(a false alarm, ever) on a stream that does not drop."""
    delta: float = DriftRule().delta
    """The drift alarm's margin: a drop of more than this below the reference alarms."""
    baseline_version: str | None = None
    """The drift reference is this ``assay.agent.version``'s trials; the rest are watched."""
    grace: float = 2.0
    """Seconds to wait after a trace's root span arrived before judging it."""
    trace_timeout: float = 60.0
    """Seconds after which a trace whose root span never came is judged as it is."""
    max_pending_traces: int = 100_000
    """Traces held at most while their spans arrive."""
    skip_bad_files: bool = False
    """Skip unreadable files (named) instead of failing."""
    max_cost: float | None = None
    """A known upper bound on a trial's cost in USD: the mean cost gets an anytime-valid
    interval (without one it is shown alone; see :mod:`assay.watch._means`)."""
    score_ranges: tuple[tuple[str, float, float], ...] = ()
    """Declared ranges of scores, ``(name, low, high)``; the name ``*`` is every other score.
    A score with none lies in [0, 1] (``--score-range``; see :mod:`assay.watch._means`)."""

    def score_range(self, name: str) -> tuple[float, float]:
        """The range of score ``name``.

        Its own, else the one assay records it in (``assay run``'s EvalView score: 0-100), else
        ``*``'s, else [0, 1].
        """
        ranges = {n: (low, high) for n, low, high in self.score_ranges}
        known = c.KNOWN_SCORE_RANGES.get(name)
        return ranges.get(name) or known or ranges.get("*", (0.0, 1.0))

    @property
    def threshold(self) -> float:
        """The pass rate required (``--threshold``, else 0.80)."""
        given = self.analysis.threshold
        return DEFAULT_THRESHOLD if given is None else given

    @property
    def confidence(self) -> float:
        """The confidence of the pass-rate sequences (``--confidence``, else 0.95)."""
        given = self.analysis.confidence
        return DEFAULT_CONFIDENCE if given is None else given

    @property
    def errors(self) -> ErrorPolicy:
        """How error trials count (``--errors``, else ``count``)."""
        return ErrorPolicy(self.analysis.errors or ErrorPolicy.COUNT)

    @property
    def drift(self) -> DriftRule:
        """The drift alarm's settings."""
        return DriftRule(delta=self.delta, alpha=self.alpha, centre=self.threshold)


@dataclass(slots=True)
class _Test:
    counts: PassRateCounts
    drift: DriftDetector
    cost: RunningMean
    scores: dict[str, RunningMean] = field(default_factory=dict)


@dataclass(slots=True)
class Watcher:
    """Follows a trace set; each :meth:`look` judges what arrived since the last one."""

    paths: tuple[str, ...]
    """Folders, globs or files (a collector's ``--out`` folder)."""
    options: WatchOptions = field(default_factory=WatchOptions)
    """What is asked."""
    _follower: FileFollower = field(init=False)
    _pending: PendingTraces = field(init=False)
    _sequence: BernoulliConfidenceSequence = field(init=False)
    _tests: dict[str, _Test] = field(default_factory=dict)
    _notes: dict[str, InputNote] = field(default_factory=dict)
    _files: int = 0
    _spans: int = 0
    _changed_noted: int = 0

    def __post_init__(self) -> None:
        self.options.analysis.validate()
        check_range("alpha", self.options.alpha)
        check_range("delta", self.options.delta)
        self._follower = FileFollower(self.paths, self.options.skip_bad_files)
        self._pending = PendingTraces(
            self.options.grace, self.options.trace_timeout, self.options.max_pending_traces
        )
        self._sequence = pass_rate_sequence(self.options.threshold, self.options.confidence)

    def look(self, *, final: bool = False, now: float | None = None) -> WatchStatus:
        """Read new files, judge every complete trace, and return every test's status.

        Args:
            final: Judge every trace held, complete or not (``--once``, and on shutdown).
            now: The time (``time.monotonic()`` unless given: tests pass their own clock).
        """
        clock = time.monotonic() if now is None else now
        new = self._follower.read_new()
        self._files += len(new.files)
        self._spans += new.spans.height
        for path, reason in new.skipped:
            self._note("skipped_files", 1, f"{path}: {reason} (skipped)")
        for path in self._follower.changed[self._changed_noted :]:
            self._note("changed_files", 1, f"{path} changed after it was read; not read again")
        self._changed_noted = len(self._follower.changed)
        self._pending.add(new.spans, clock)
        released = self._pending.release(clock, everything=final)
        if released.without_root:
            self._note(
                "judged_without_root",
                released.without_root,
                "trace(s) judged without their root span (it never arrived in time)",
            )
        if released.traces:
            self._judge(released.spans)
        return self.status()

    def _judge(self, spans: pl.DataFrame) -> None:
        batch = trials_of(spans, self.options.analysis)
        for finding in batch.findings:
            self._note(finding.kind, finding.count, finding.message)
        if batch.refused is not None:
            self._note("spans_without_trial", spans.height, batch.refused)
            return
        self._note_recorded(batch.recorded or {})
        baseline = self.options.baseline_version
        trials = batch.trials
        if baseline is not None:
            versionless = trials.filter(pl.col(tc.AGENT_VERSION).is_null())
            if versionless.height:
                self._note(
                    "versionless_trials",
                    versionless.height,
                    f"trial(s) carry no assay.agent.version: left out of the comparison "
                    f"with {baseline}",
                )
            trials = trials.filter(pl.col(tc.AGENT_VERSION).is_not_null())
        for (test_id,), rows in trials.group_by(tc.TEST_ID, maintain_order=True):
            test = self._tests.get(str(test_id))
            if test is None:
                test = self._tests[str(test_id)] = self._new_test()
            if baseline is not None:
                reference = rows.filter(pl.col(tc.AGENT_VERSION) == baseline)
                test.drift.add_reference(reference[tc.PASSED].to_numpy()[None, :])
                rows = rows.filter(pl.col(tc.AGENT_VERSION) != baseline)
            passed = rows[tc.PASSED].to_numpy().astype(bool)
            errors = rows[tc.ERROR].to_numpy().astype(bool)
            test.counts.add(rows.height, int(passed.sum()), int(errors.sum()))
            if self.options.errors == ErrorPolicy.EXCLUDE:
                passed = passed[~errors]
            if passed.size:
                test.drift.add(passed[None, :])
            self._means(str(test_id), test, rows)

    def _new_test(self) -> _Test:
        baseline = self.options.baseline_version
        cost = RunningMean(
            tc.COST_USD,
            self.options.confidence,
            self.options.max_cost,
            "cost per trial has no known bound (--max-cost gives one): no anytime-valid interval",
        )
        detector = DriftDetector(self.options.drift, own_reference=baseline is None)
        return _Test(PassRateCounts(), detector, cost)

    def _means(self, test_id: str, test: _Test, rows: pl.DataFrame) -> None:
        scores = rows.select(pl.col(tc.SCORES).explode()).drop_nulls().unnest(tc.SCORES)
        for (name,), values in scores.group_by("name", maintain_order=True):
            score = test.scores.get(str(name))
            if score is None:
                low, high = self.options.score_range(str(name))
                score = test.scores[str(name)] = RunningMean(
                    str(name),
                    self.options.confidence,
                    high,
                    low=low,
                    range_hint=f" (--score-range {name}=LOW:HIGH declares its range)",
                )
            if not score.add(values["value"].cast(pl.Float64).to_numpy()):
                self._note("score_out_of_range", 1, f"{test_id}: score {name}: {score.note}")
        if tc.COST_USD in rows.columns:
            costs = rows[tc.COST_USD].drop_nulls().cast(pl.Float64).to_numpy()
            if not test.cost.add(costs):
                self._note("cost_above_bound", 1, f"{test_id}: {test.cost.note}")

    def _note_recorded(self, recorded: dict[tuple[float, float, str], int]) -> None:
        """Say so when trials record a judgement other than the one watch judges them by."""
        used = (self.options.threshold, self.options.confidence, str(self.options.errors))
        other = {k: n for k, n in recorded.items() if k != used}
        if other:
            (threshold, confidence, errors), _ = max(other.items(), key=lambda kv: kv[1])
            self._note(
                "recorded_judgement_not_read",
                sum(other.values()),
                f"trial(s) record a judgement (e.g. threshold {threshold:g}, confidence "
                f"{confidence:g}, errors {errors}) that watch does not read: judged at "
                f"threshold {used[0]:g}, confidence {used[1]:g}, errors {used[2]} (give "
                "--threshold, --confidence, --errors to match)",
            )

    def _note(self, kind: str, count: int, message: str) -> None:
        before = self._notes.get(kind)
        self._notes[kind] = InputNote(kind, count + (before.count if before else 0), message)

    def status(self) -> WatchStatus:
        """Every test's status now (intervals computed at this look)."""
        tests = []
        for test_id in sorted(self._tests):
            test = self._tests[test_id]
            passes, n = test.counts.judged(self.options.errors)
            low, high = self._sequence.interval(passes, n)
            first = int(test.drift.first_alarm[0])
            tests.append(
                TestStatus(
                    test_id=test_id,
                    trials=test.counts.trials,
                    passed=test.counts.passed,
                    errors=test.counts.errors,
                    n=n,
                    low=low,
                    high=high,
                    threshold=self.options.threshold,
                    verdict=sequence_verdict(self._sequence, passes, n, self.options.threshold),
                    drift_alarm=bool(test.drift.alarm[0]),
                    alarm_since=first if first >= 0 else None,
                    reference_trials=test.drift.reference_trials,
                    scores=tuple(test.scores[k].status() for k in sorted(test.scores)),
                    cost=test.cost.status() if test.cost.n else None,
                )
            )
        return WatchStatus(
            tests=tuple(tests),
            confidence=self.options.confidence,
            files_read=self._files,
            spans_read=self._spans,
            pending_traces=self._pending.traces,
            notes=tuple(self._notes.values()),
        )
