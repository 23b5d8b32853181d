"""Recording real agent frameworks once per module, through Parquet and through the collector.

Each framework's recording runs its agent many times twice — wrapped in ``assay.instrument.trial``
and bare, as production code would — while the session's tracer provider sends every span both
to a ``ParquetSpanExporter`` and, over OTLP/HTTP, to a real collector (``assay collect``'s
options and ``Collector``, run in the recording process). The ground truth of every run comes
from the tool bodies and the fake models themselves.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

import assay
import assay.instrument as ai
from assay.analysis import columns as tc

sys.path.insert(0, str(Path(__file__).parents[1] / "collect"))
from collector_process import CollectorProcess, InProcessCollector  # noqa: E402

DURATION_SLACK_S = 0.005
"""Clock resolution: a trial's span covers its marked moments and lies inside the wall clock."""


class _Router(SpanExporter):
    def __init__(self) -> None:
        self.targets: list[SpanExporter] = []
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            for target in self.targets:
                target.export(spans)
        return SpanExportResult.SUCCESS


_ROUTER = _Router()


class _Roots(SpanProcessor):
    """Remembers the root spans started (the checker judges a run on its root, after it)."""

    def __init__(self) -> None:
        self.started: list[trace.SpanContext] = []

    def on_start(self, span: Span, parent_context: object = None) -> None:
        if span.parent is None:
            self.started.append(span.get_span_context())


_ROOTS = _Roots()


class _Held(SpanExporter):
    """Holds spans and sends them in batches at the end of a phase, as a batch processor would
    (one OTLP request per span would make every run wait for the collector)."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        for i in range(0, len(self.spans), 512):
            assert self.inner.export(self.spans[i : i + 512]) == SpanExportResult.SUCCESS
        self.inner.shutdown()


@dataclass
class Truth:
    """What one run did, as its tools and fake model saw it."""

    test_id: str
    tools: list[str] = field(default_factory=list)
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    outcome: str = "pass"
    wall_s: float = 0.0
    handoffs: list[str] = field(default_factory=list)
    first: float | None = None
    last: float | None = None
    error: str | None = None
    answer: str | None = None
    """The run's final answer (what a checker judges)."""

    def mark(self) -> None:
        """Note that the run is doing something now (its span must cover this moment)."""
        now = time.perf_counter()
        self.first = now if self.first is None else self.first
        self.last = now

    @property
    def inner_s(self) -> float:
        """Time from the first to the last moment marked: the run's span lasts at least this."""
        return 0.0 if self.first is None or self.last is None else self.last - self.first


@dataclass
class Recording:
    """Both trace sets of one framework and the truth of every run."""

    parquet_api: Path
    parquet_raw: Path
    collected: Path
    api: list[Truth]
    raw: list[Truth]

    def trials(self, source: str, api: bool, **options: object) -> pl.DataFrame:
        """The trials of the API or the bare runs, read from ``parquet`` or ``collector``."""
        own = self.parquet_api if api else self.parquet_raw
        chosen = assay.AnalyzeOptions(**options)
        if source == "parquet":
            return assay.analyze(own, chosen).trials
        # The collector holds both kinds of runs: keep the traces of the wanted kind.
        traces = assay.analyze(own, chosen).trials[tc.TRACE_ID]
        collected = assay.analyze(self.collected, chosen).trials
        return collected.filter(pl.col(tc.TRACE_ID).is_in(traces.implode()))


class Recorder:
    """Runs the agent of one framework, with and without the assay API, and records it all."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.api: list[Truth] = []
        self.raw: list[Truth] = []

    @contextmanager
    def phase(self, name: str, collector_url: str) -> Iterator[None]:
        parquet = ai.ParquetSpanExporter(self.root / name)
        otlp = _Held(OTLPSpanExporter(endpoint=collector_url + "/v1/traces"))
        _ROUTER.targets[:] = [parquet, otlp]
        try:
            yield
        finally:
            _ROUTER.targets[:] = []
            parquet.shutdown()
            otlp.shutdown()

    def run(
        self,
        truth: Truth,
        api: bool,
        body: Callable[[Truth], None],
        checker: Callable[[Truth], bool] | None = None,
    ) -> None:
        """Run ``body`` once (as an assay trial when ``api``); an exception is an error run.

        With ``checker``, a run that finished is judged: with the API, by a check of its trial
        (``Trial.check``); bare, after it, as an evaluator reading finished runs would, by a
        ``correctness`` evaluation (``gen_ai.evaluation.result``) on a span under the run's
        root (where the collector stores an evaluation log record too).
        """
        start = time.perf_counter()
        first_root = len(_ROOTS.started)
        try:
            if api:
                with ai.trial(truth.test_id) as t:
                    body(truth)
                    if checker is not None:
                        t.check("correctness", checker(truth))
            else:
                body(truth)
        except Exception as exc:
            truth.outcome = "error"
            truth.error = repr(exc)
        truth.wall_s = time.perf_counter() - start
        if checker is not None and truth.outcome != "error":
            passed = checker(truth)
            truth.outcome = "pass" if passed else "fail"
            if not api:
                _judge(_ROOTS.started[first_root], passed)
        (self.api if api else self.raw).append(truth)


def _judge(root: trace.SpanContext, passed: bool) -> None:
    parent = trace.set_span_in_context(trace.NonRecordingSpan(root))
    judged = trace.get_tracer("checker").start_span("evaluation", context=parent)
    judged.add_event(
        "gen_ai.evaluation.result",
        {
            "gen_ai.evaluation.name": "correctness",
            "gen_ai.evaluation.score.label": "pass" if passed else "fail",
            "gen_ai.evaluation.score.value": 1.0 if passed else 0.0,
        },
    )
    judged.end()


def start_recording(provider: TracerProvider) -> None:
    """Send the session provider's spans through the router (once per session)."""
    provider.add_span_processor(SimpleSpanProcessor(_ROUTER))
    provider.add_span_processor(_ROOTS)


def record_framework(
    name: str, runs: Callable[[Recorder, bool], None], root: Path, *, process: bool = False
) -> Recording:
    """Play ``runs(recorder, api)`` with and without the API into Parquet and a collector.

    With ``process``, the collector is a real ``assay collect`` process, not run in this one.
    """
    kind = CollectorProcess if process else InProcessCollector
    collector = kind(root / "collected", ["--roll-age", "0.2"]).start()
    try:
        recorder = Recorder(root)
        for api in (True, False):
            with recorder.phase("api" if api else "raw", collector.url):
                runs(recorder, api)
        assert collector.terminate() == 0, collector.output()
    finally:
        collector.kill()
    return Recording(root / "api", root / "raw", root / "collected", recorder.api, recorder.raw)


def in_run_order(trials: pl.DataFrame, test_ids: list[str]) -> pl.DataFrame:
    """The trials in the order their sequential runs had (``test_ids``, one per run).

    By start time; trials starting at the same instant (a clock of millisecond resolution, as
    JavaScript's, gives a run that crashed and the next one the same start) are put in the
    runs' order of tests, which their start times cannot tell.
    """
    rows = trials.with_row_index("_row").sort(tc.START_TIME, maintain_order=True).to_dicts()
    order: list[int] = []
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and rows[j][tc.START_TIME] == rows[i][tc.START_TIME]:
            j += 1
        tied = rows[i:j]
        for test_id in test_ids[i:j]:
            match = next((r for r in tied if r[tc.TEST_ID] == test_id), tied[0])
            tied.remove(match)
            order.append(match["_row"])
        order.extend(r["_row"] for r in tied)
        i = j
    return trials[order]


def assert_trials_match(trials: pl.DataFrame, truths: list[Truth], *, handoffs: bool = False):
    """Every trial equals its run's truth, field by field (runs were sequential)."""
    rows = in_run_order(trials, [t.test_id for t in truths]).to_dicts()
    assert len(rows) == len(truths), [r[tc.TEST_ID] for r in rows]
    for row, truth in zip(rows, truths, strict=True):
        got = {
            "test_id": row[tc.TEST_ID],
            "tools": row[tc.TOOL_SEQUENCE],
            "llm_calls": row[tc.LLM_CALLS],
            "input_tokens": row[tc.INPUT_TOKENS],
            "output_tokens": row[tc.OUTPUT_TOKENS],
            "outcome": row[tc.OUTCOME],
        }
        want = {
            "test_id": truth.test_id,
            "tools": truth.tools,
            "llm_calls": truth.llm_calls,
            "input_tokens": truth.input_tokens,
            "output_tokens": truth.output_tokens,
            "outcome": truth.outcome,
        }
        assert got == want, (row[tc.TRACE_ID], got, want, truth.error)
        if handoffs:
            assert row[tc.HANDOFFS] == truth.handoffs
        assert truth.inner_s <= row[tc.DURATION_S] <= truth.wall_s + DURATION_SLACK_S
