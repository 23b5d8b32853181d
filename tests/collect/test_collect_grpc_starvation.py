"""gRPC callers that never send their message cannot starve the other exporters.

Before, 16 such calls held the synchronous server's 16 threads, so every other exporter's call
timed out; 256 made it answer RESOURCE_EXHAUSTED to everyone while they were held.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from collector_process import CollectorFactory
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from otlp_helpers import make_request

from assay.store import read_spans

TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def _never(release: threading.Event) -> Iterator[bytes]:
    release.wait()  # the call is open, its headers sent, its message never
    yield from ()


@pytest.mark.slow
@pytest.mark.parametrize("idle", [16, 256])
def test_idle_calls_do_not_starve_an_exporter(
    tmp_path: Path, collector_factory: CollectorFactory, idle: int
) -> None:
    collector = collector_factory(tmp_path / "traces", ["--body-timeout", "15"]).start()
    address = f"127.0.0.1:{collector.grpc_port}"
    release = threading.Event()
    # Each its own connection (gRPC would otherwise share one between channels).
    own = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.insecure_channel(address, options=own) for _ in range(max(1, idle // 16))]
    held = [
        channels[i % len(channels)].stream_unary(TRACES).future(_never(release), timeout=60)
        for i in range(idle)
    ]
    try:
        time.sleep(1.0)  # every idle call is open on the server
        assert not any(call.done() for call in held)
        sent: list[str] = []
        with grpc.insecure_channel(address, options=own) as channel:
            export = channel.unary_unary(TRACES)
            for _ in range(5):
                request, ids = make_request(3)
                # Answered while every idle call is still held: not queued behind them (the
                # deadline only keeps a starved call from waiting for ever).
                reply = export(request.SerializeToString(), timeout=60)
                assert not any(call.done() for call in held)
                partial = ExportTraceServiceResponse.FromString(reply).partial_success
                assert partial.rejected_spans == 0
                sent += ids
        # The idle calls are cut at the body deadline, not held for ever.
        codes = {call.exception(timeout=120).code() for call in held}  # type: ignore[union-attr]
        assert codes == {grpc.StatusCode.DEADLINE_EXCEEDED}
    finally:
        release.set()
        for channel in channels:
            channel.close()
    assert collector.terminate() == 0
    assert sorted(read_spans(collector.out)["span_id"].to_list()) == sorted(sent)
