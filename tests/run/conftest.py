"""Fixtures of the runner's tests: the session's SDK provider, the test agents, an HTTP agent."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _sdk_provider(provider: TracerProvider, monkeypatch: pytest.MonkeyPatch) -> TracerProvider:
    """Every runner test records through the session's real SDK provider."""
    monkeypatch.syspath_prepend(str(HERE))
    return provider


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body.get("mode") == "500":
            self.send_response(500)
            self.end_headers()
            return
        payload = {"answer": body.get("answer", "ok"), "traceparent": self.headers["traceparent"]}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture()
def http_agent() -> Iterator[str]:
    """The URL of a JSON echo endpoint on 127.0.0.1."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/agent"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture()
def command_agent() -> str:
    """The command line of the test command agent (append a mode)."""
    return f"{sys.executable} {HERE / 'assay_test_agents.py'}"
