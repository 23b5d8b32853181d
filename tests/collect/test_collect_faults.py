"""Faults around the collector: a shared output folder, slow clients, floods of connections
or gzip members — each refused or closed, and the collector keeps serving."""

from __future__ import annotations

import contextlib
import gzip
import socket
import subprocess
from pathlib import Path

import pytest
from collector_process import ASSAY, AnyCollector, CollectorFactory
from otlp_helpers import make_request, post

from assay.store import read_spans

PROTOBUF = {"Content-Type": "application/x-protobuf"}


@pytest.mark.slow
def test_two_collectors_cannot_share_one_output_folder(
    tmp_path: Path, collector_factory: CollectorFactory
) -> None:
    out = tmp_path / "traces"
    first = collector_factory(out, ["--wal-dir", str(tmp_path / "wal-a")], process=True).start()
    request, ids = make_request(5)
    assert post(first.http_port, "/v1/traces", request.SerializeToString(), PROTOBUF)[0] == 200
    result = subprocess.run(
        [ASSAY, "collect", "--out", str(out), "--wal-dir", str(tmp_path / "wal-b")]
        + ["--http-port", "0", "--grpc-port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"assay: error: {out}: another collector is using this output folder; "
        "give each collector its own --out"
    )
    first.kill()  # kill -9: the acknowledged spans are in wal-a only
    again = collector_factory(out, ["--wal-dir", str(tmp_path / "wal-a")]).start()
    assert again.terminate() == 0
    assert sorted(read_spans(out)["span_id"].to_list()) == sorted(ids)


def _ok(collector: AnyCollector) -> int:
    request, _ = make_request(2)
    return post(collector.http_port, "/v1/traces", request.SerializeToString(), PROTOBUF)[0]


def _closed_while_sending(sock: socket.socket, trickle: bytes = b"") -> bool:
    """Send ``trickle`` a byte every 0.2 s (or, without one, wait as long as 1,000 bytes would
    take); return whether the server closed the connection, unanswered, before the client was
    done."""
    sock.settimeout(0.2)
    for byte in trickle or b"x" * 1000:
        try:
            if trickle:
                sock.sendall(bytes([byte]))
            answer = sock.recv(4096)
            assert answer == b"", answer[:100]  # closed at the deadline, not refused
            return True
        except TimeoutError:
            pass
        except ConnectionError:
            return True
    return False


def test_slow_clients_are_cut_off_and_connections_are_bounded(
    tmp_path: Path, collector_factory: CollectorFactory
) -> None:
    collector = collector_factory(
        tmp_path / "traces",
        ["--header-timeout", "1", "--body-timeout", "1", "--max-connections", "3"],
    ).start()
    with contextlib.ExitStack() as stack:
        headers, body, idle, fourth = (
            stack.enter_context(socket.create_connection(("127.0.0.1", collector.http_port)))
            for _ in range(4)
        )
        _slow_clients(headers, body, idle, fourth)
    assert _ok(collector) == 200


def _slow_clients(
    headers: socket.socket, body: socket.socket, idle: socket.socket, fourth: socket.socket
) -> None:
    # All three slots are taken: the fourth connection is answered 503 at once.
    fourth.settimeout(5)
    assert fourth.recv(100).startswith(b"HTTP/1.1 503 Service Unavailable")
    # slowloris: a header byte every 0.2 s would keep a per-read timeout happy for ever
    endless_header = b"POST /v1/traces HTTP/1.1\r\nX-Slow: " + b"a" * 200
    assert _closed_while_sending(headers, endless_header)
    body.sendall(
        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
        b"Content-Length: 100000\r\n\r\n"
    )
    assert _closed_while_sending(body, b"\x00" * 200)
    assert _closed_while_sending(idle)  # an idle connection is also let go


def test_a_flood_of_gzip_members_is_refused(
    tmp_path: Path, collector_factory: CollectorFactory
) -> None:
    collector = collector_factory(tmp_path / "traces", ["--max-gzip-members", "4"]).start()
    request, _ = make_request(3)
    payload = request.SerializeToString()
    headers = {**PROTOBUF, "Content-Encoding": "gzip"}
    # Legitimate multi-member bodies within the bound are accepted ...
    two = gzip.compress(payload[:10]) + gzip.compress(payload[10:])
    assert post(collector.http_port, "/v1/traces", two, headers)[0] == 200
    # ... thousands of empty members are not inflated one by one.
    flood = gzip.compress(payload) + gzip.compress(b"") * 50_000
    status, _, body = post(collector.http_port, "/v1/traces", flood, headers)
    assert status == 400 and b"more than 4 gzip members" in body
    assert _ok(collector) == 200
