"""The OTLP/HTTP receiver alone: its CPU per request, without decoding or writing.

Runs ``HttpReceiver`` in a child process with an intake that accepts every request without
decoding it, sends the same 512-span protobuf request (191 KiB) from keep-alive connections on
threads for a while, and prints requests/s and the receiver process's CPU per request (from
/proc), with ``Content-Length`` bodies and with 16 KiB chunks (``Transfer-Encoding:
chunked``). The child imports assay from ``PYTHONPATH``, so two source trees can be compared
in interleaved rounds (docs/architecture.md).

    python benchmarks/bench_http_receiver.py [--seconds 8] [--connections 4]
"""

from __future__ import annotations

import argparse
import http.client
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

from bench_collector import cpu_seconds, make_bodies

SERVER = r"""
import tempfile, time
from pathlib import Path
from assay.collect._config import CollectorConfig
from assay.collect._counters import Counters
from assay.collect._http import HttpReceiver
from assay.collect._intake import Accepted

class Accepting:
    draining = False
    def authorized(self, header):
        return True
    def traces(self, body, *, json=False):
        return Accepted(512, 0, "")

config = CollectorConfig(out=Path(tempfile.mkdtemp()), http_port=0, grpc_port=None)
receiver = HttpReceiver(config, Accepting(), Counters())  # type: ignore[arg-type]
receiver.start()
print(receiver.port, flush=True)
time.sleep(3600)
"""
HEADERS = {"Content-Type": "application/x-protobuf"}


def _pieces(body: bytes) -> Iterator[bytes]:
    for start in range(0, len(body), 16384):
        yield body[start : start + 16384]


def run(body: bytes, seconds: float, connections: int, chunked: bool) -> tuple[float, float]:
    """Requests/s and the receiver's CPU-µs per request."""
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        counts: list[int] = []
        stop = time.monotonic() + seconds

        def worker() -> None:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            done = 0
            while time.monotonic() < stop:
                payload = _pieces(body) if chunked else body
                connection.request(
                    "POST", "/v1/traces", body=payload, headers=HEADERS, encode_chunked=chunked
                )
                response = connection.getresponse()
                response.read()
                assert response.status == 200, response.status
                done += 1
            connection.close()
            counts.append(done)

        cpu, started = cpu_seconds(server.pid), time.monotonic()
        threads = [threading.Thread(target=worker) for _ in range(connections)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed, cpu = time.monotonic() - started, cpu_seconds(server.pid) - cpu
    finally:
        server.kill()
        server.wait()
    requests = sum(counts)
    return requests / elapsed, cpu / requests * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--connections", type=int, default=4)
    args = parser.parse_args()
    body = make_bodies(1)[0]
    print(f"{len(body) / 1024:.0f} KiB requests, {args.connections} connections")
    for chunked in (False, True):
        rate, cpu = run(body, args.seconds, args.connections, chunked)
        framing = "chunked (16 KiB)" if chunked else "Content-Length"
        print(f"{framing:17s} {rate:8,.0f} requests/s  {cpu:6.0f} CPU-µs per request")
    print(f"load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
