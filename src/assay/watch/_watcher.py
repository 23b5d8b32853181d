"""The watch loop's one step: read what is new, judge the complete traces, update every test.

Memory is bounded by the number of tests (each holds a few counts and its drift windows) plus
the traces still arriving (:class:`PendingTraces`, itself bounded): trials are counted, never
kept.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import polars as pl

from assay import conventions as c
from assay.analysis import NoTrialSpans, recorded_score_ranges
from assay.analysis import columns as tc
from assay.choices import ErrorPolicy
from assay.errors import SchemaError

# The defaults of every command (docs/cli.md), defined once in assay.judge.
from assay.judge import DEFAULT_CONFIDENCE, DEFAULT_THRESHOLD, AnalyzeOptions, check_range
from assay.stats import BernoulliConfidenceSequence, watch_family_risk
from assay.store import (
    CONFLICTING_SPANS,
    DUPLICATE_SPANS,
    conflicting_copies,
    one_copy_each,
    open_trace_set,
    rule_rank,
)
from assay.watch._drift import DriftDetector, DriftRule, sequence_intervals
from assay.watch._follow import UNREADABLE, FileFollower
from assay.watch._means import RunningMean
from assay.watch._pass_rate import PassRateCounts, sequence_verdict
from assay.watch._pending import PARENT_SPAN_ID, TRACE_ID, PendingTraces
from assay.watch._seen import (
    MAX_SEEN_SPANS,
    SPAN_KEY,
    SeenSpans,
    as_keys,
    ranks_of,
    span_keys,
)
from assay.watch._sequence import pass_rate_sequence
from assay.watch._status import InputNote, TestStatus, WatchStatus
from assay.watch._trials import trials_of

__all__ = ["WatchOptions", "Watcher"]

FAMILY_FROM = 2
"""Tests watched from which the family-wide statement is shown: with two, a per-test
guarantee is already not a guarantee about the set (docs/monitoring.md)."""
_WITHOUT_ROOT = "trace(s) judged without their root span (it never arrived in time)"
_IDS = [TRACE_ID, tc.SPAN_ID]
LATE_CONFLICTING_SPANS = "late_conflicting_spans"
"""The kind of the note about a copy ``analyze`` would count arriving after its trace was judged."""
_LATE_CONFLICT = (
    "span(s) arrived again after their trace was judged, as a copy that analyze's rule counts "
    "instead of the one counted (a worse outcome, an ERROR status or a later end; same trace_id "
    "and span_id): a trial counted is never un-counted, so here watch and analyze differ (a "
    "restart of watch reads the set by analyze's rule; docs/reliability.md)"
)
_LOST_CONFLICT = (
    "span(s) are stored as copies that differ (same trace_id and span_id, another outcome, "
    "status or end); each is counted once, as analyze counts it: the copy with the worst "
    "outcome, then an ERROR status, then the latest end (docs/reliability.md)"
)


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
    grace: float = 1.0
    """Seconds to wait after a trace's root span arrived before judging it (for spans of the
    trace that another process exports later; docs/monitoring.md)."""
    trace_timeout: float = 60.0
    """Seconds after which a trace whose root span never came is judged as it is."""
    max_pending_traces: int = 100_000
    """Traces held at most while their spans arrive."""
    skip_bad_files: bool = False
    """Skip unreadable files (named) instead of failing."""
    max_seen_spans: int = MAX_SEEN_SPANS
    """Spans remembered to count a repeated span once (:class:`assay.watch.SeenSpans`)."""
    max_cost: float | None = None
    """A known upper bound on a trial's cost in USD: the mean cost gets an anytime-valid
    interval (without one it is shown alone; see :mod:`assay.watch._means`)."""
    score_ranges: tuple[tuple[str, float, float], ...] = ()
    """Declared ranges of scores, ``(name, low, high)``; the name ``*`` is every other score.
    A score with none lies in [0, 1] (``--score-range``; see :mod:`assay.watch._means`)."""

    def __post_init__(self) -> None:
        """Raise :class:`~assay.errors.OptionError` naming the first bad field."""
        check_range("alpha", self.alpha)
        check_range("delta", self.delta)

    def score_range(
        self, name: str, recorded: tuple[float, float] | None = None
    ) -> tuple[float, float]:
        """The range of score ``name``.

        Its own ``--score-range``, else the one the traces record with it (``recorded``:
        ``assay.score.range``, ``gen_ai.evaluation.score.range``), else the one assay records it
        in (``assay run``'s EvalView score: 0-100), else ``*``'s, else [0, 1].
        """
        ranges = {n: (low, high) for n, low, high in self.score_ranges}
        known = c.KNOWN_SCORE_RANGES.get(name)
        return ranges.get(name) or recorded or known or ranges.get("*", (0.0, 1.0))

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


def _scores_by_test(trials: pl.DataFrame) -> dict[str, dict[str, npt.NDArray[np.float64]]]:
    """Each test's scores by name, in the trials' order (one pass over the batch)."""
    scores = (
        trials.select(tc.TEST_ID, tc.SCORES)
        .explode(tc.SCORES)
        .drop_nulls(tc.SCORES)
        .unnest(tc.SCORES)
        .group_by(tc.TEST_ID, "name", maintain_order=True)
        .agg(pl.col("value").cast(pl.Float64))
    )
    out: dict[str, dict[str, npt.NDArray[np.float64]]] = {}
    for test_id, name, values in scores.select(tc.TEST_ID, "name", "value").iter_rows():
        out.setdefault(str(test_id), {})[str(name)] = np.asarray(values, dtype=np.float64)
    return out


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
    _seen: SeenSpans = field(init=False)
    _tests: dict[str, _Test] = field(default_factory=dict)
    _notes: dict[str, InputNote] = field(default_factory=dict)
    _files: int = 0
    _spans: int = 0
    _changed_noted: int = 0
    _started: bool = False
    _intervals: dict[str, tuple[tuple[int, int], tuple[float, float]]] = field(default_factory=dict)
    _ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    """The scales the traces record scores on (:func:`assay.analysis.recorded_score_ranges`)."""

    def __post_init__(self) -> None:
        self._follower = FileFollower(self.paths, self.options.skip_bad_files)
        self._pending = PendingTraces(
            self.options.grace, self.options.trace_timeout, self.options.max_pending_traces
        )
        self._seen = SeenSpans(self.options.max_seen_spans)
        self._sequence = pass_rate_sequence(self.options.threshold, self.options.confidence)

    def due(self) -> float | None:
        """When (``time.monotonic()``) a trace held becomes ready to judge; None if none is held."""
        return self._pending.due()

    def look(self, *, final: bool = False, now: float | None = None) -> WatchStatus:
        """Read new files, judge every complete trace, and return every test's status.

        Args:
            final: Judge every trace held, complete or not (``--once``, and on shutdown).
            now: The time (``time.monotonic()`` unless given: tests pass their own clock).
        """
        clock = time.monotonic() if now is None else now
        backlog: list[str] | None = None
        if not self._started:  # the first look (a start, a restart): the backlog at once
            self._started = True
            backlog, linked = self._follower.claim_new()
            self._note_linked(linked)
            if backlog and self._backlog(backlog, clock, final):
                backlog = None
        new = self._follower.read_new(backlog)
        self._files += len(new.files)
        self._spans += new.spans.height
        for path, reason in new.skipped:
            self._note("skipped_files", 1, f"{path}: {reason} (skipped)")
        for path in self._follower.changed[self._changed_noted :]:
            self._note("changed_files", 1, f"{path} changed after it was read; not read again")
        self._note_linked(new.linked)
        self._changed_noted = len(self._follower.changed)
        spans = self._fresh(new.spans)
        self._pending.add(spans, clock)
        released = self._pending.release(clock, everything=final)
        if released.without_root:
            self._note("judged_without_root", released.without_root, _WITHOUT_ROOT)
        if released.traces:
            self._judge(released.spans)
        return self.status()

    def _note_linked(self, linked: Sequence[tuple[str, str]]) -> None:
        for path, first in linked:
            self._note("linked_files", 1, f"{path} is {first} (a link): not read again")

    def _backlog(self, files: list[str], clock: float, final: bool) -> bool:
        """Judge the files found at start by ``analyze``'s reading path (bucket by bucket).

        Traces without their root span wait, as in every look (unless ``final``). Returns
        False when a trial breaks the trial contract: the files are then read as later looks
        read them, so that the trace is named and the rest counted.
        """
        from assay.api import read_set_trials

        try:
            read = read_set_trials(
                files, self.options.analysis, skip_bad_files=self.options.skip_bad_files
            )
        except NoTrialSpans as exc:
            read = None
            refused = str(exc)
        except SchemaError:
            return False
        except UNREADABLE:
            vanished = [f for f in files if not os.path.exists(f)]
            if not vanished:
                raise
            # A compaction merged some away since they were listed: read file by file, as
            # later looks do (a file gone is then read from the merged file that names it).
            self._follower.forget(vanished)
            return False
        skip = self.options.skip_bad_files
        trace_set = (
            read.trace_set if read is not None else open_trace_set(files, skip_bad_files=skip)
        )
        for skipped in trace_set.skipped:
            self._note("skipped_files", 1, f"{skipped.path}: {skipped.reason} (skipped)")
        scan = trace_set.scan()
        # One pass over three columns: each span's key, its trace's hash, whether it is a root.
        trace_key = pl.col(TRACE_ID).hash(seed=0x5EED)
        ids = scan.select(
            SPAN_KEY.alias("_key"),
            rule_rank().alias("_rank"),
            trace_key.alias("_trace"),
            pl.col(PARENT_SPAN_ID).is_null().alias("_root"),
        ).collect()
        keys = as_keys(ids["_key"])
        # The reader kept one copy of each span by the rule, and counted the repeats (a
        # finding, below); the copy kept is the one a later copy is compared with.
        self._seen.fresh(keys, ranks_of(ids["_rank"]))
        self._files += len(trace_set.files)
        self._spans += keys.size
        rootless = (
            ids.lazy()
            .group_by("_trace")
            .agg(pl.col("_root").any())
            .filter(~pl.col("_root"))
            .collect()["_trace"]
        )
        del ids
        if final and rootless.len():
            self._note("judged_without_root", rootless.len(), _WITHOUT_ROOT)
            rootless = rootless.clear()
        elif rootless.len():  # they wait for their root, as in every look
            waiting = trace_key.is_in(rootless.implode())
            self._pending.add(scan.filter(waiting).collect(), clock)
        if read is None:
            self._note("spans_without_trial", keys.size, refused)
            return True
        for finding in read.findings:
            self._note(finding.kind, finding.count, finding.message)
        self._record_ranges(recorded_score_ranges(scan))
        trials = read.trials.filter(~trace_key.is_in(rootless.implode()))
        recorded: dict[tuple[float, float, str], int] = {}
        if read.recorded:  # trial span id -> the judgement it records
            kept = set(trials[tc.SPAN_ID].to_list())
            for span_id, judgement in read.recorded.items():
                if span_id in kept:
                    key = (judgement.threshold, judgement.confidence, str(judgement.errors))
                    recorded[key] = recorded.get(key, 0) + 1
        self._note_recorded(recorded)
        self._count(trials.sort(tc.START_TIME, tc.TEST_ID, tc.TRIAL_INDEX, nulls_last=True))
        return True

    def _fresh(self, spans: pl.DataFrame) -> pl.DataFrame:
        """``spans`` less the copies of spans already judged (a copied file, a batch stored again).

        A copy whose first copy is still held (in this look, or its trace not judged yet) is
        kept: the trace is judged with the copy ``analyze``'s rule keeps (:meth:`_one_copy`).
        """
        if spans.height == 0:
            return spans
        keys, ranks = span_keys(spans)
        fresh = self._seen.fresh(keys, ranks)
        repeats = int(fresh.size - fresh.sum())
        if not repeats:
            return spans
        self._note(
            DUPLICATE_SPANS,
            repeats,
            "span(s) read again (the same trace_id and span_id: a copied or linked file, a "
            "batch stored twice): counted once",
        )
        held = [keys[fresh]]
        if self._pending.spans is not None and self._pending.spans.height:
            held.append(span_keys(self._pending.spans)[0])
        waiting = fresh | np.isin(keys, np.concatenate(held))
        late = ~waiting
        counted, arrived = self._seen.ranks(keys[late]), ranks[late]
        known = counted != 0
        wins = int((known & (arrived > counted)).sum())
        loses = int((known & (arrived < counted)).sum())
        if wins:  # the one case where watch cannot count what analyze counts
            self._note(LATE_CONFLICTING_SPANS, wins, _LATE_CONFLICT)
        if loses:  # the copy counted is the rule's: a conflict, as analyze names it
            self._note(CONFLICTING_SPANS, loses, _LOST_CONFLICT)
        return spans.filter(pl.Series(waiting))

    def _one_copy(self, spans: pl.DataFrame) -> pl.DataFrame:
        """``spans`` with one copy of each span, chosen as ``analyze`` chooses it.

        The rule is :func:`assay.store.one_copy_each`'s; copies that differ are named as
        ``analyze`` names them (``conflicting_spans``), and the copy kept is remembered as the
        one counted.
        """
        ids = pl.struct(_IDS)
        repeated = spans.filter(ids.is_duplicated()).select(_IDS).unique()
        if repeated.height == 0:
            return spans
        conflict = conflicting_copies(spans.lazy(), repeated)
        if conflict is not None:
            self._note(conflict.kind, conflict.count, conflict.message)
        kept = one_copy_each(spans.lazy()).collect()
        self._seen.update(*span_keys(kept.join(repeated, on=_IDS, how="semi")))
        return kept

    def _judge(self, spans: pl.DataFrame) -> None:
        spans = self._one_copy(spans)
        batch = trials_of(spans, self.options.analysis)
        for finding in batch.findings:
            self._note(finding.kind, finding.count, finding.message)
        for trace, reason in batch.rejected:
            self._note("rejected_traces", 1, f"trace {trace}: {reason}: left out, the rest counted")
        if batch.refused is not None:
            self._note("spans_without_trial", spans.height, batch.refused)
            return
        self._note_recorded(batch.recorded or {})
        self._record_ranges(recorded_score_ranges(spans))
        if batch.trials.height:  # every trace of the look rejected: nothing to count
            self._count(batch.trials)

    def _record_ranges(self, found: dict[str, tuple[float, float]]) -> None:
        """Add the score ranges of a look; a name seen with two gets the range holding both."""
        for name, (low, high) in found.items():
            known = self._ranges.get(name, (low, high))
            self._ranges[name] = (min(low, known[0]), max(high, known[1]))

    def _count(self, trials: pl.DataFrame) -> None:
        """Add trials (in the order they started) to their tests' counts and alarms."""
        baseline = self.options.baseline_version
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
        # One pass per column over the batch, not one per test: a look may bring thousands.
        columns = [tc.PASSED, tc.ERROR]
        if baseline is not None:
            columns.append(tc.AGENT_VERSION)
        if tc.COST_USD in trials.columns:
            columns.append(tc.COST_USD)
        per_test = trials.group_by(tc.TEST_ID, maintain_order=True).agg(columns)
        scores = _scores_by_test(trials)
        for row in per_test.iter_rows(named=True):
            test_id = str(row[tc.TEST_ID])
            test = self._tests.get(test_id)
            if test is None:
                test = self._tests[test_id] = self._new_test()
            passed = np.asarray(row[tc.PASSED], dtype=bool)
            errors = np.asarray(row[tc.ERROR], dtype=bool)
            costs = row.get(tc.COST_USD)
            cost = np.asarray([np.nan if c is None else c for c in costs or []], dtype=float)
            if baseline is not None:
                reference = np.asarray([v == baseline for v in row[tc.AGENT_VERSION]])
                test.drift.add_reference(passed[reference][None, :])
                passed, errors = passed[~reference], errors[~reference]
                cost = cost[~reference] if cost.size else cost
            test.counts.add(passed.size, int(passed.sum()), int(errors.sum()))
            if self.options.errors == ErrorPolicy.EXCLUDE:
                passed = passed[~errors]
            if passed.size:
                test.drift.add(passed[None, :])
            self._means(test_id, test, scores.get(test_id, {}), cost)

    def _new_test(self) -> _Test:
        baseline = self.options.baseline_version
        cost = RunningMean(
            tc.COST_USD,
            self.options.confidence,
            self.options.max_cost,
            "no interval without a known bound: --trial-cost-bound USD gives one",
        )
        detector = DriftDetector(self.options.drift, own_reference=baseline is None)
        return _Test(PassRateCounts(), detector, cost)

    def _means(
        self,
        test_id: str,
        test: _Test,
        scores: dict[str, npt.NDArray[np.float64]],
        costs: npt.NDArray[np.float64],
    ) -> None:
        for name, values in scores.items():
            score = test.scores.get(name)
            if score is None:
                low, high = self.options.score_range(name, self._ranges.get(name))
                score = test.scores[name] = RunningMean(
                    name,
                    self.options.confidence,
                    high,
                    low=low,
                    range_hint=f" (--score-range {name}=LOW:HIGH declares its range)",
                )
            if not score.add(values):
                self._note("score_out_of_range", 1, f"{test_id}: score {name}: {score.note}")
        costs = costs[~np.isnan(costs)]
        if costs.size and not test.cost.add(costs):
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

    def _update_intervals(self) -> None:
        """Each test's interval, computed (all at once) only where its counts changed."""
        changed: list[tuple[str, tuple[int, int]]] = []
        for test_id, test in self._tests.items():
            counts = test.counts.judged(self.options.errors)
            held = self._intervals.get(test_id)
            if held is None or held[0] != counts:
                changed.append((test_id, counts))
        if not changed:
            return
        passes = np.array([c[0] for _, c in changed], dtype=np.float64)
        n = np.array([c[1] for _, c in changed], dtype=np.float64)
        lows, highs = sequence_intervals(self._sequence, passes, n)
        for (test_id, counts), low, high in zip(changed, lows, highs, strict=True):
            self._intervals[test_id] = (counts, (float(low), float(high)))

    def status(self) -> WatchStatus:
        """Every test's status now (intervals computed at this look)."""
        tests = []
        self._update_intervals()
        for test_id in sorted(self._tests):
            test = self._tests[test_id]
            passes, n = test.counts.judged(self.options.errors)
            low, high = self._intervals[test_id][1]
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
            family=(
                watch_family_risk(len(tests), self.options.confidence, self.options.alpha)
                if len(tests) >= FAMILY_FROM
                else None
            ),
        )
