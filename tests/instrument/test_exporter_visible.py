"""Spans from ``ParquetSpanExporter`` under the SDK's own processors reach ``assay watch``.

The SDK's processors hand the exporter their spans but never call its ``force_flush``; before,
files became visible only at the next export once 60 s old, so an agent flushing every second
showed ``watch`` nothing until it exited. The provider is never shut down here: only the
exporter's idle flush can show the spans. How soon is measured by
``benchmarks/bench_visibility.py`` (docs/instrumentation.md), not asserted here.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

from assay import conventions as c
from assay.errors import ConfigError
from assay.instrument import ParquetSpanExporter
from assay.watch import Watcher, WatchOptions


def _files(out: Path) -> list[Path]:
    """The visible files (a file being written is hidden, named ``.NAME.parquet.tmp``)."""
    return [p for p in out.rglob("*.parquet") if not p.name.startswith(".")]


def _trials_seen(watcher: Watcher, expected: int) -> int:
    # The deadline (half the exporter's 60 s roll age) only keeps a broken idle flush from being
    # rescued by the roll, or the test from waiting for ever.
    deadline = time.monotonic() + 30
    seen = 0
    while seen < expected and time.monotonic() < deadline:
        time.sleep(0.05)
        seen = sum(t.trials for t in watcher.look().tests)
    return seen


@pytest.mark.parametrize("processor", [SimpleSpanProcessor, BatchSpanProcessor])
def test_an_idle_agents_spans_reach_watch_one_file_per_pause(
    tmp_path: Path, processor: type[SimpleSpanProcessor] | type[BatchSpanProcessor]
) -> None:
    out = tmp_path / "traces"
    exporter = ParquetSpanExporter(out)
    provider = TracerProvider()
    provider.add_span_processor(processor(exporter))
    tracer = provider.get_tracer("assay.tests.instrument")
    watcher = Watcher((str(out),), WatchOptions(grace=0.0))
    try:
        for burst in range(3):
            for i in range(4):
                attributes = {
                    c.TEST_ID: "support",
                    c.TRIAL_INDEX: burst * 4 + i,
                    c.TRIAL_OUTCOME: c.OUTCOME_PASS,
                }
                with tracer.start_as_current_span("trial", attributes=attributes):
                    with tracer.start_as_current_span("tool", attributes={"gen_ai.tool.name": "s"}):
                        pass
            provider.force_flush()  # what the agent does; the exporter is not told
            assert _trials_seen(watcher, (burst + 1) * 4) == (burst + 1) * 4
        # One file per pause, not one per export (the simple processor exports each span alone).
        assert len(_files(out)) == 3
    finally:
        provider.shutdown()
    assert len(_files(out)) == 3  # nothing was left to write at exit


def test_without_the_idle_flush_spans_wait_for_a_flush(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    exporter = ParquetSpanExporter(out, idle_flush_s=None, max_file_age_s=None)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("t").start_as_current_span("trial"):
        pass
    time.sleep(0.3)
    assert _files(out) == []
    exporter.force_flush()
    assert len(_files(out)) == 1
    provider.shutdown()


@pytest.mark.parametrize("value", [0, -1.0])
def test_an_idle_flush_that_is_not_positive_is_refused(tmp_path: Path, value: float) -> None:
    with pytest.raises(ConfigError, match="idle_flush_s"):
        ParquetSpanExporter(tmp_path, idle_flush_s=value)
