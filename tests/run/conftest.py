"""Fixtures of the runner's tests: the session's SDK provider, the test agents, an HTTP agent."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
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


class JSONHandler(BaseHTTPRequestHandler):
    """A handler that answers JSON and logs nothing."""

    def reply(self, payload: object) -> None:
        """Answer 200 with ``payload`` as JSON."""
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Handler(JSONHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body.get("mode") == "500":
            self.send_response(500)
            self.end_headers()
            return
        self.reply({"answer": body.get("answer", "ok"), "traceparent": self.headers["traceparent"]})


@contextlib.contextmanager
def serve(handler: type[BaseHTTPRequestHandler], path: str) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (a free port) while the block runs; yields the URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{path}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture()
def http_agent() -> Iterator[str]:
    """The URL of a JSON echo endpoint on 127.0.0.1."""
    with serve(_Handler, "/agent") as url:
        yield url


@pytest.fixture()
def command_agent() -> str:
    """The command line of the test command agent (append a mode)."""
    return f"{sys.executable} {HERE / 'command_agent.py'}"


@dataclass(frozen=True)
class EvalViewWheel:
    """What the tests read out of EvalView's published wheel (never vendored)."""

    version: str
    templates: dict[str, str]
    """Shipped test templates, file name -> YAML text."""
    chat_prompt: str
    """``evalview/chat_prompt.py``: its documented test-case schema."""
    types: str
    """``evalview/core/types.py``: the ``TestCase`` model."""
    categories: str
    """``evalview/core/tool_categories.py``: the default tool categories."""


EVALVIEW_VERSION = "0.8.1"


#: Where ``make``'s set-up step puts the wheel (``EVALVIEW`` in the Makefile is this version).
FETCHED = Path(sys.prefix) / "wheels"


@pytest.fixture(scope="session")
def evalview_wheel(tmp_path_factory: pytest.TempPathFactory) -> EvalViewWheel:
    """EvalView's wheel: fetched by the set-up step, else from the package index now."""
    wheels = sorted(FETCHED.glob(f"evalview-{EVALVIEW_VERSION}-*.whl"))
    if not wheels:
        folder = tmp_path_factory.mktemp("evalview-wheel")
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", f"evalview=={EVALVIEW_VERSION}"]
            + ["--no-deps", "--disable-pip-version-check", "-q", "-d", str(folder)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        wheels = list(folder.glob("evalview-*.whl"))
        if done.returncode != 0 or not wheels:
            stderr = done.stderr[-300:]
            pytest.skip(f"evalview {EVALVIEW_VERSION} wheel not downloadable: {stderr}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = wheel.namelist()
        templates = {
            n.rsplit("/", 1)[1]: wheel.read(n).decode()
            for n in names
            if n.startswith("evalview/templates/patterns/") and n.endswith(".yaml")
        }
        return EvalViewWheel(
            EVALVIEW_VERSION,
            templates,
            wheel.read("evalview/chat_prompt.py").decode(),
            wheel.read("evalview/core/types.py").decode(),
            wheel.read("evalview/core/tool_categories.py").decode(),
        )
