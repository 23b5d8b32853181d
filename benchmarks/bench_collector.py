"""Collector throughput: OTLP/HTTP protobuf, 512 spans × ~10 attributes per request, fsync on.

Runs, with the same load generator (keep-alive HTTP connections on threads):

1. the *floor*: a trivial server (a separate process) that reads each request and answers
   200 without decoding or writing — the rate the network path allows;
2. ``assay collect`` (a separate process, fsync on, default limits).

Prints spans/s acknowledged, the end-to-end rate (including the time to convert everything to
Parquet after the load stops), p50/p99 request latency, and the collector's peak RSS.

    python benchmarks/bench_collector.py [--seconds 10] [--connections 4]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

SPANS_PER_REQUEST = 512
HEADERS = {"Content-Type": "application/x-protobuf"}

FLOOR_SERVER = r"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
server.daemon_threads = True
server.serve_forever()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_bodies(count: int) -> list[bytes]:
    bodies = []
    number = 0
    for r in range(count):
        request = ExportTraceServiceRequest()
        resource_spans = request.resource_spans.add()
        resource_spans.resource.attributes.append(
            KeyValue(key="service.name", value=AnyValue(string_value=f"agent-{r % 4}"))
        )
        scope_spans = resource_spans.scope_spans.add()
        scope_spans.scope.name = "bench"
        for i in range(SPANS_PER_REQUEST):
            number += 1
            span = scope_spans.spans.add()
            span.trace_id = number.to_bytes(16, "big")
            span.span_id = number.to_bytes(8, "big")
            span.parent_span_id = (number + 1).to_bytes(8, "big")
            span.name = "chat gpt-x"
            span.kind = 3
            span.start_time_unix_nano = time.time_ns()
            span.end_time_unix_nano = span.start_time_unix_nano + 1_000_000
            for key, value in (
                ("gen_ai.operation.name", AnyValue(string_value="chat")),
                ("gen_ai.request.model", AnyValue(string_value="gpt-x")),
                ("gen_ai.response.model", AnyValue(string_value="gpt-x-2026")),
                ("gen_ai.usage.input_tokens", AnyValue(int_value=100 + i)),
                ("gen_ai.usage.output_tokens", AnyValue(int_value=20 + i)),
                ("assay.test.id", AnyValue(string_value=f"test-{i % 10}")),
                ("assay.trial.index", AnyValue(int_value=i)),
                ("http.status_code", AnyValue(int_value=200)),
                ("gen_ai.request.temperature", AnyValue(double_value=0.7)),
                ("cache.hit", AnyValue(bool_value=i % 2 == 0)),
            ):
                span.attributes.append(KeyValue(key=key, value=value))
        bodies.append(request.SerializeToString())
    return bodies


def wait_ready(port: int, path: str = "/health") -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server on port {port} did not start")


def load(port: int, bodies: list[bytes], seconds: float, connections: int) -> dict[str, float]:
    latencies: list[float] = []
    accepted = 0
    throttled = 0
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def worker(index: int) -> None:
        nonlocal accepted, throttled
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        i = index
        mine: list[float] = []
        ok = refused = 0
        while time.monotonic() < stop_at:
            body = bodies[i % len(bodies)]
            i += connections
            started = time.perf_counter()
            connection.request("POST", "/v1/traces", body=body, headers=HEADERS)
            response = connection.getresponse()
            response.read()
            mine.append(time.perf_counter() - started)
            if response.status == 200:
                ok += 1
            else:
                refused += 1
                time.sleep(float(response.getheader("Retry-After") or 1) / 10)
            if response.getheader("Connection", "").lower() == "close":
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.close()
        with lock:
            latencies.extend(mine)
            accepted += ok
            throttled += refused

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    latencies.sort()
    return {
        "elapsed": elapsed,
        "spans": accepted * SPANS_PER_REQUEST,
        "spans_per_s": accepted * SPANS_PER_REQUEST / elapsed,
        "throttled": throttled,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def decode_workers(pid: int) -> list[int]:
    """The collector's decode worker processes (not multiprocessing's resource tracker)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(int(child))
    return found


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=4)
    args = parser.parse_args()
    bodies = make_bodies(40)
    print(
        f"load: {SPANS_PER_REQUEST} spans x 10 attributes per request, "
        f"{len(bodies[0]) / 1024:.0f} KiB each, {args.connections} connections, "
        f"{args.seconds:.0f} s per run, fsync on"
    )

    port = free_port()
    floor_proc = subprocess.Popen([sys.executable, "-c", FLOOR_SERVER, str(port)])
    try:
        wait_ready(port, "/")
        floor = load(port, bodies, args.seconds, args.connections)
    finally:
        floor_proc.kill()
        floor_proc.wait()

    assay = str(Path(sys.executable).parent / "assay")
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        out = Path(tmp) / "traces"
        port = free_port()
        log = Path(tmp) / "collector.log"
        with log.open("wb") as handle:
            proc = subprocess.Popen(
                [
                    assay,
                    "collect",
                    "--out",
                    str(out),
                    "--http-port",
                    str(port),
                    "--grpc-port",
                    "-1",
                ],
                stdout=handle,
                stderr=subprocess.STDOUT,
            )
        try:
            wait_ready(port)
            generator_cpu = time.process_time()
            result = load(port, bodies, args.seconds, args.connections)
            generator_cpu = time.process_time() - generator_cpu
            drain_started = time.monotonic()
            workers = decode_workers(proc.pid)
            while True:  # wait until everything acknowledged is converted
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health") as response:
                    health = json.loads(response.read())
                if health["queue_records"] == 0 and health["queue_bytes"] == 0:
                    break
                time.sleep(0.1)
            rss = peak_rss_mb(proc.pid)
            cpu_main = cpu_seconds(proc.pid)
            cpu_workers = sum(cpu_seconds(w) for w in workers)
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=600)
            drain = time.monotonic() - drain_started
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        import pyarrow.parquet as pq

        written = sum(
            pq.ParquetFile(f).metadata.num_rows
            for f in out.rglob("*.parquet")
            if "_staging" not in f.parts
        )
        files = len([f for f in out.rglob("*.parquet") if "_staging" not in f.parts])

    end_to_end = written / (result["elapsed"] + drain)
    print(
        f"floor (read + 200, no decode/write): {floor['spans_per_s']:>10,.0f} spans/s   "
        f"p50 {floor['p50_ms']:.1f} ms  p99 {floor['p99_ms']:.1f} ms"
    )
    print(
        f"assay collect (acknowledged, durable): {result['spans_per_s']:>8,.0f} spans/s   "
        f"p50 {result['p50_ms']:.1f} ms  p99 {result['p99_ms']:.1f} ms  "
        f"429s {result['throttled']:.0f}"
    )
    print(
        f"assay collect end to end (incl. {drain:.1f} s to drain into Parquet): "
        f"{end_to_end:,.0f} spans/s; {written:,} spans in {files} files"
    )
    print(f"floor / collector ratio: {floor['spans_per_s'] / result['spans_per_s']:.2f}x")
    print(f"collector peak RSS: {rss:.0f} MiB (main process; plus {len(workers)} decode workers)")
    per = 100_000 / max(written, 1)
    print(
        f"CPU per 100k spans: {cpu_main * per:.2f} s in the receiver/writer process, "
        f"{cpu_workers * per:.2f} s in decode workers ({len(workers)}), "
        f"{generator_cpu * per:.2f} s in the load generator"
    )
    cores = os.cpu_count() or 1
    capacity = cores / ((cpu_main + cpu_workers + generator_cpu) / max(written, 1))
    print(
        f"CPU-bound capacity on {cores} otherwise idle cores (load generator included): "
        f"~{capacity:,.0f} spans/s; load average now {os.getloadavg()[0]:.1f}"
    )
    if written != result["spans"]:
        print(f"MISMATCH: {result['spans']} acknowledged, {written} written", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
