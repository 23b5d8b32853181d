"""``assay watch``: live monitoring of a growing trace set with anytime-valid verdicts.

Per test, a confidence sequence on the pass rate (PASS / FAIL / INCONCLUSIVE that may be looked
at after every trial, forever) and a drift alarm (P(a false alarm, ever) <= alpha on a stream
that does not change). One idea per module:

* :mod:`._sequence` — the pass-rate confidence sequence, centred on the threshold;
* :mod:`._pass_rate` — a test's counts and its verdict;
* :mod:`._drift` — the drift alarm (its construction and proof in the docstring);
* :mod:`._follow` — each new complete Parquet file read once;
* :mod:`._pending` — traces held until their root span is in;
* :mod:`._seen` — the spans counted, so that a copy counts once (bounded);
* :mod:`._trials` — spans → trials, by ``analyze``'s mapping;
* :mod:`._status` — what a look shows (typed values);
* :mod:`._watcher` — one look: read, judge, update;
* :mod:`._metrics` — ``/metrics`` for Prometheus;
* :mod:`._console` — the console table (plain, and live on a terminal);
* :mod:`._events` — verdict changes and alarms, as JSON events;
* :mod:`._webhook` — posting them, retried, off the watch's thread;
* :mod:`._otlp` — the live verdicts as OTLP gauges and evaluation spans (``--export-otlp``).
"""

from assay.watch._console import event_line, live_table, notes_text, status_table
from assay.watch._drift import DriftDetector, DriftRule, lower_bounds, sequence_intervals
from assay.watch._events import EVENT_SCHEMA, events_between
from assay.watch._follow import FileFollower, NewSpans
from assay.watch._metrics import MAX_METRICS_TESTS, MetricsServer
from assay.watch._otlp import WatchExport, record_watch_events, set_watch_gauges
from assay.watch._pass_rate import PassRateCounts, sequence_verdict
from assay.watch._pending import PendingTraces, Released
from assay.watch._seen import MAX_SEEN_SPANS, SeenSpans
from assay.watch._sequence import pass_rate_sequence
from assay.watch._status import InputNote, TestStatus, WatchStatus
from assay.watch._trials import TrialBatch, trials_of
from assay.watch._watcher import Watcher, WatchOptions
from assay.watch._webhook import WebhookSender

__all__ = [
    "EVENT_SCHEMA",
    "MAX_METRICS_TESTS",
    "MAX_SEEN_SPANS",
    "SeenSpans",
    "WebhookSender",
    "WatchExport",
    "record_watch_events",
    "set_watch_gauges",
    "event_line",
    "events_between",
    "live_table",
    "DriftDetector",
    "DriftRule",
    "FileFollower",
    "InputNote",
    "MetricsServer",
    "NewSpans",
    "PassRateCounts",
    "PendingTraces",
    "Released",
    "TestStatus",
    "TrialBatch",
    "WatchOptions",
    "WatchStatus",
    "Watcher",
    "lower_bounds",
    "sequence_intervals",
    "pass_rate_sequence",
    "sequence_verdict",
    "notes_text",
    "status_table",
    "trials_of",
]
