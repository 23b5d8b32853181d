"""How soon spans from ``ParquetSpanExporter`` reach a running ``assay watch``; how many files.

Run: ``python benchmarks/bench_visibility.py [--seconds 20] [--poll-interval S] [--grace S]``
(without ``--poll-interval`` / ``--grace``: watch's defaults). An agent in this process records one
trial (a trial span and a tool span) and calls ``provider.force_flush()`` once a second, under
the SDK's ``SimpleSpanProcessor`` and then its ``BatchSpanProcessor``, with the exporter's
defaults; then under ``BatchSpanProcessor`` without ``force_flush()``, as production code runs
(the SDK exports every ``OTEL_BSP_SCHEDULE_DELAY``, 5 s by default); a real
``assay watch DIR --metrics-port P`` process follows the folder. For each trial it prints the
seconds from the trial's end (or its flush) until its file is visible on disk, from then until
``/metrics`` counts it (watch's own share: a look, ``--grace``), and the sum, and at the end
the number of files written (the exporter's compaction off: ``bench_compaction.py`` measures
that). Then the same agent through the OTLP/HTTP exporter into a real
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
    while True:
        try:
            return sum(
                1
                for p in out.rglob("*.parquet")
                if not any(part.startswith((".", "_")) for part in p.relative_to(out).parts)
            )
        except FileNotFoundError:  # a staging folder removed while listed: list again
            continue


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


def measure(processor: str, seconds: int, flags: list[str]) -> None:
    """One run of the agent and a watch process; prints what it saw.

    ``processor``: ``simple`` or ``batch`` (the SDK's processors over the Parquet exporter), or
    ``collector`` (the SDK's OTLP/HTTP exporter, batched, into a real ``assay collect``);
    ``batch-noflush``: the batch processor without ``force_flush()``.
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
        provider.add_span_processor(make(ParquetSpanExporter(out, compact_fanout=None)))
    tracer = provider.get_tracer("bench")
    port = _free_port()
    log = out.parent / "watch.log"
    with log.open("wb") as sink:
        watch = subprocess.Popen(
            [ASSAY, "watch", str(out), "--metrics-port", str(port), *flags],
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
            if processor != "batch-noflush":
                provider.force_flush()
            files = _files(out)
            on_disk.append(_until(lambda f=files: _files(out) > f))  # type: ignore[misc]
            on_metrics.append(_until(lambda n=i + 1: _metrics_trials(port) >= n))  # type: ignore[misc]
            time.sleep(max(0.0, 1.0 - (time.monotonic() - started)))
        total = [a + b for a, b in zip(on_disk, on_metrics, strict=True)]
        print(
            f"{processor:<13} {seconds} trials: file on disk after median "
            f"{statistics.median(on_disk):.2f} s (max {max(on_disk):.2f}); then in /metrics "
            f"after median {statistics.median(on_metrics):.2f} s (max {max(on_metrics):.2f}); "
            f"trial end to /metrics median {statistics.median(total):.2f} s "
            f"(max {max(total):.2f}); {_files(out)} files"
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
    parser.add_argument(
        "--poll-interval", type=float, default=None, help="assay watch --poll-interval"
    )
    parser.add_argument("--grace", type=float, default=None, help="assay watch --grace")
    parser.add_argument(
        "--processors", default="simple,batch,batch-noflush,collector", help="which to run"
    )
    args = parser.parse_args()
    os.environ.setdefault("PYTHONFAULTHANDLER", "1")
    flags = [
        part
        for name in ("poll_interval", "grace")
        if getattr(args, name) is not None
        for part in (f"--{name.replace('_', '-')}", str(getattr(args, name)))
    ]
    print(f"assay watch {' '.join(flags) or '(defaults)'}; one trial a second")
    for processor in args.processors.split(","):
        measure(processor, args.seconds, flags)


if __name__ == "__main__":
    main()
