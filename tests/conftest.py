"""Shared fixtures.

OpenTelemetry allows one global tracer provider per process, so the tests install one real SDK
provider once and route its spans, per test, to whichever exporter the test wants.

``make test`` runs the tests in several pytest-xdist worker processes; what takes seconds to make
and is only read (the example agent's trace set) is made once for all of them (``shared_path``).
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import settings
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from assay.instrument import ParquetSpanExporter

# Hypothesis's per-example deadline is a wall-clock bound: on a busy machine (CI shares two
# cores with the suite's own subprocesses) an example that takes 20 ms alone can take 400 ms.
# No test asserts time (docs/architecture.md), so none has a deadline.
settings.register_profile("assay", deadline=None)
settings.load_profile("assay")


class RoutingExporter(SpanExporter):
    """Forwards spans to the exporter the current test chose."""

    def __init__(self) -> None:
        self.targets: list[SpanExporter] = []
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            for target in self.targets:
                target.export(spans)
        return SpanExportResult.SUCCESS


_ROUTER = RoutingExporter()
ROOT = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules with slow-marked tests first, the rest after, each group in its own order.

    xdist (``--dist loadscope --no-loadscope-reorder``) hands modules to workers in this order:
    a long module started last would keep one worker busy while the others have finished.
    """
    slow = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in slow)


def shared_path(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]
) -> Path:
    """``make(folder)`` once per test run, whatever the number of xdist workers: the folder.

    The first worker to get here makes it; the others wait on a lock, then read the same folder
    (its contents must only be read). Without xdist this is ``tmp_path_factory.mktemp``.
    """
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, above each worker's own
    folder = base / f"shared-{name}"
    with (base / f"shared-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder / ".made"
        if not done.exists():  # not made, or a worker's attempt failed half-way
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example agent's trace set: 30 trials × 4 cases (PASS, FAIL and INCONCLUSIVE)."""

    def record(folder: Path) -> None:
        agent = str(ROOT / "examples" / "agent.py")
        out = str(folder / "traces")
        subprocess.run(
            [sys.executable, agent, "--out", out, "--trials", "30"],
            check=True,
            capture_output=True,
            timeout=120,
        )

    return shared_path(tmp_path_factory, "example", record) / "traces"


@pytest.fixture(scope="session")
def provider() -> TracerProvider:
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        return current
    sdk = TracerProvider(resource=Resource.create({"service.name": "assay-tests"}))
    sdk.add_span_processor(SimpleSpanProcessor(_ROUTER))
    trace.set_tracer_provider(sdk)
    return sdk


@pytest.fixture()
def memory_spans(provider: TracerProvider) -> Iterator[InMemorySpanExporter]:
    """Every span finished during the test, in memory."""
    exporter = InMemorySpanExporter()
    _ROUTER.targets.append(exporter)
    yield exporter
    _ROUTER.targets.remove(exporter)


class HeldSpans(SpanExporter):
    """Holds the spans it is given and hands them to ``inner`` in one batch on a flush.

    The session provider exports each span as it ends (a ``SimpleSpanProcessor``: spans reach
    the test before it reads them); written one by one, the thousands some tests record take
    seconds. The one export per flush is what a ``BatchSpanProcessor`` would make. The exporter's
    span-at-a-time path is exercised by the framework recordings and ``instrument``'s tests.
    """

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self._spans: list[ReadableSpan] = []
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            self._spans.extend(spans)
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        with self._lock:
            spans, self._spans = self._spans, []
        if spans and self.inner.export(spans) != SpanExportResult.SUCCESS:
            return False
        return self.inner.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.force_flush()
        self.inner.shutdown()


class ParquetSink:
    """A Parquet trace set the test's spans go to (written on :meth:`flush`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.exporter = HeldSpans(ParquetSpanExporter(path))

    def flush(self) -> Path:
        assert self.exporter.force_flush(), f"spans not written to {self.path}"
        return self.path


@pytest.fixture()
def parquet_sink(provider: TracerProvider, tmp_path: Path) -> Iterator[ParquetSink]:
    """Spans finished during the test are written to ``tmp_path / "traces"``."""
    sink = ParquetSink(tmp_path / "traces")
    _ROUTER.targets.append(sink.exporter)
    yield sink
    _ROUTER.targets.remove(sink.exporter)
    sink.exporter.shutdown()


@pytest.fixture()
def tracer(provider: TracerProvider) -> trace.Tracer:
    """A tracer of the real SDK provider (for spans written without assay's helpers)."""
    return provider.get_tracer("tests")


@pytest.fixture()
def switch_sink(parquet_sink: ParquetSink, tmp_path: Path) -> Iterator[object]:
    """A function ``switch_sink(name)``: from now on, spans go to ``tmp_path / name`` only."""
    made: list[ParquetSink] = []

    def switch(name: str) -> ParquetSink:
        sink = ParquetSink(tmp_path / name)
        for target in [parquet_sink.exporter, *(m.exporter for m in made)]:
            if target in _ROUTER.targets:
                _ROUTER.targets.remove(target)
        _ROUTER.targets.append(sink.exporter)
        made.append(sink)
        return sink

    yield switch
    for sink in made:
        if sink.exporter in _ROUTER.targets:
            _ROUTER.targets.remove(sink.exporter)
    if parquet_sink.exporter not in _ROUTER.targets:
        _ROUTER.targets.append(parquet_sink.exporter)


class SmallDisk:
    """A real, tiny filesystem (tmpfs) for disk-full tests, and a way to fill it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fill(self) -> Path:
        """Write a file until the disk is full (ENOSPC); return it (unlink it to free)."""
        filler = self.path / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
        finally:
            os.close(fd)
        return filler


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    """A 4 MiB tmpfs mounted for the test (needs root; skipped, saying why, elsewhere)."""
    mount = tmp_path / "small"
    mount.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {result.stderr.strip()}")
    try:
        yield SmallDisk(mount)
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
