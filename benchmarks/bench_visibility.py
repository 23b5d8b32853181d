"""How soon spans from ``ParquetSpanExporter`` reach a running ``assay watch``; how many files.

Run: ``python benchmarks/bench_visibility.py [--seconds 20] [--interval 2] [--grace 2]``.
An agent in this process records one trial (a trial span and a tool span) and calls
``provider.force_flush()`` once a second, under the SDK's ``SimpleSpanProcessor`` and then its
``BatchSpanProcessor``,
with the exporter's defaults; a real ``assay watch DIR --metrics-port P`` process follows the
folder. For each flush it prints the seconds until the trial's file is visible on disk and until
``/metrics`` counts it (which adds watch's own ``--grace`` and ``--interval``), and at the
end the number of files written. Then the same agent through the OTLP/HTTP exporter into a real
``assay collect`` (its ``--idle-flush``, 0.5 s, makes the files visible).
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter

from assay import conventions as c
from assay.instrument import ParquetSpanExporter

ASSAY = str(Path(sys.executable).parent / "assay")
_TRIALS = re.compile(r'^assay_test_trials_total\{test="support"\} (\S+)$', re.M)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _files(out: Path) -> int:
    """Visible files: not hidden (being written), not in the collector's ``_staging``."""
    return sum(
        1
        for p in out.rglob("*.parquet")
        if not any(part.startswith((".", "_")) for part in p.relative_to(out).parts)
    )


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False


def _metrics_trials(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
            found = _TRIALS.search(r.read().decode())
    except OSError:
        return -1  # not serving yet
    return int(float(found.group(1))) if found else 0


def _until(done: object, limit: float = 120.0) -> float:
    start = time.monotonic()
    while not done() and time.monotonic() - start < limit:  # type: ignore[operator]
        time.sleep(0.01)
    return time.monotonic() - start


def measure(processor: str, seconds: int, interval: float, grace: float) -> None:
    """One run of the agent and a watch process; prints what it saw.

    ``processor``: ``simple`` or ``batch`` (the SDK's processors over the Parquet exporter), or
    ``collector`` (the SDK's OTLP/HTTP exporter, batched, into a real ``assay collect``).
    """
    out = Path(tempfile.mkdtemp(prefix="assay-visibility-")) / "traces"
    provider = TracerProvider()
    collector = None
    if processor == "collector":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        http = _free_port()
        collector = subprocess.Popen(
            [ASSAY, "collect", "--out", str(out), "--http-port", str(http), "--grpc-port", "0"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _until(lambda: _answers(f"http://127.0.0.1:{http}/health"), 60)
        exporter: SpanExporter = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{http}/v1/traces")
        provider.add_span_processor(BatchSpanProcessor(exporter))
    else:
        out.mkdir(parents=True)
        make = SimpleSpanProcessor if processor == "simple" else BatchSpanProcessor
        provider.add_span_processor(make(ParquetSpanExporter(out)))
    tracer = provider.get_tracer("bench")
    port = _free_port()
    log = out.parent / "watch.log"
    with log.open("wb") as sink:
        watch = subprocess.Popen(
            [ASSAY, "watch", str(out), "--metrics-port", str(port)]
            + ["--interval", str(interval), "--grace", str(grace)],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    on_disk: list[float] = []
    on_metrics: list[float] = []
    try:
        _until(lambda: _metrics_trials(port) >= 0 or watch.poll() is not None, 30)
        for i in range(seconds):
            started = time.monotonic()
            attributes = {c.TEST_ID: "support", c.TRIAL_INDEX: i, c.TRIAL_OUTCOME: c.OUTCOME_PASS}
            with tracer.start_as_current_span("trial", attributes=attributes):
                with tracer.start_as_current_span("tool", attributes={"gen_ai.tool.name": "s"}):
                    pass
            provider.force_flush()
            files = _files(out)
            on_disk.append(_until(lambda f=files: _files(out) > f))  # type: ignore[misc]
            on_metrics.append(_until(lambda n=i + 1: _metrics_trials(port) >= n))  # type: ignore[misc]
            time.sleep(max(0.0, 1.0 - (time.monotonic() - started)))
        print(
            f"{processor:<6} {seconds} flushes: visible on disk after median "
            f"{statistics.median(on_disk):.2f} s (max {max(on_disk):.2f}); in /metrics after "
            f"median {statistics.median(on_metrics):.2f} s (max {max(on_metrics):.2f}); "
            f"{_files(out)} files"
        )
    finally:
        watch.terminate()
        watch.wait(timeout=30)
        provider.shutdown()
        if collector is not None:
            collector.terminate()
            collector.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--interval", type=float, default=2.0, help="assay watch --interval")
    parser.add_argument("--grace", type=float, default=2.0, help="assay watch --grace")
    args = parser.parse_args()
    os.environ.setdefault("PYTHONFAULTHANDLER", "1")
    print(
        f"assay watch --interval {args.interval} --grace {args.grace}; "
        "one trial and force_flush() a second"
    )
    for processor in ("simple", "batch", "collector"):
        measure(processor, args.seconds, args.interval, args.grace)


if __name__ == "__main__":
    main()
