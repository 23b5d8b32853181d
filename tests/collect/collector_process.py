"""Running ``assay collect`` on 127.0.0.1 for the tests: as a subprocess, or inside the test.

:class:`CollectorProcess` is the real command in its own process: for what only a process shows
(SIGTERM and kill -9, the decode worker processes, staying alive on a full disk).
:class:`InProcessCollector` reads the same command line through the CLI into the same
``CollectorConfig`` and runs the same :class:`assay.collect.Collector` in the test process,
without a Python start-up and its imports (about 2 CPU-seconds a collector, twice that with the
decode workers); ``terminate()`` is the drain ``run_collector`` does on SIGTERM. Both bind port
0 unless given a port, and report the ports they bound: no port is picked, released and hoped
for, so parallel test processes cannot clash.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from unittest import mock

if TYPE_CHECKING:
    from assay.collect import Collector, CollectorConfig

ASSAY = str(Path(sys.executable).parent / "assay")
#: What ``assay collect`` logs once it listens: the ports it bound.
_LISTENING = {
    "http": re.compile(r"OTLP/HTTP listening on https?://[^\s:]+:(\d+)"),
    "grpc": re.compile(r"OTLP/gRPC listening on [^\s:]+:(\d+)"),
}
_READY = "writing spans to "


@dataclass
class _Collector:
    """What both kinds share: the command line, the ports (0: any), the health endpoint."""

    out: Path
    args: list[str]
    http_port: int = 0
    grpc_port: int = 0
    tls: ssl.SSLContext | None = None
    """How a client reaches a collector serving TLS (``--tls-cert``); None: plain HTTP."""

    @property
    def url(self) -> str:
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.http_port}"

    def health(self) -> dict[str, int | str]:
        try:
            with urllib.request.urlopen(
                self.url + "/health", timeout=5, context=self.tls
            ) as response:
                document: dict[str, int | str] = json.loads(response.read())
        except urllib.error.HTTPError as exc:  # 503 while not ok
            document = json.loads(exc.read())
        return document

    def command(self, args: list[str]) -> list[str]:
        ports = ["--http-port", str(self.http_port), "--grpc-port", str(self.grpc_port)]
        return ["collect", "--out", str(self.out), *ports, *args]


@dataclass
class CollectorProcess(_Collector):
    """``assay collect --out OUT ARGS`` as a subprocess."""

    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    def start(self) -> CollectorProcess:
        self.log = self.out.parent / f"collector-{time.monotonic_ns()}.log"
        command = [ASSAY, *self.command(self.args)]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        # Generous: on a loaded machine its imports alone have taken 20 s (unloaded: ~2 s).
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"collector exited early:\n{self.log.read_text()}")
            text = self.log.read_text()
            if _READY in text:
                self.http_port, self.grpc_port = (
                    int(m.group(1)) if (m := _LISTENING[k].search(text)) else -1
                    for k in ("http", "grpc")
                )
                assert self.health()["status"] == "ok"
                return self
            time.sleep(0.02)
        raise RuntimeError(f"collector did not start:\n{self.log.read_text()}")

    def terminate(self, timeout: float = 30) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def output(self) -> str:
        return self.log.read_text() if self.log else ""


@dataclass
class InProcessCollector(_Collector):
    """``assay collect --out OUT ARGS`` in the test process (``--workers 0`` unless given)."""

    collector: Collector | None = None
    _log: io.StringIO | None = None
    _handler: logging.Handler | None = None

    def start(self) -> InProcessCollector:
        from assay.collect import Collector

        args = self.args if "--workers" in self.args else [*self.args, "--workers", "0"]
        config = parse_collect(self.command(args))
        self._log = io.StringIO()
        self._handler = logging.StreamHandler(self._log)
        self._handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger = logging.getLogger("assay.collect")
        logger.addHandler(self._handler)
        logger.setLevel(logging.INFO)
        self.collector = Collector(config)
        try:
            self.collector.start()
        except BaseException:
            self._detach()
            raise
        self.http_port = self.collector.http_port or -1
        self.grpc_port = self.collector.grpc_port or -1
        return self

    def terminate(self, timeout: float = 30) -> int:
        """Drain and stop, as on SIGTERM; 0, the exit code ``assay collect`` then has."""
        assert self.collector is not None
        try:
            self.collector.stop()
        finally:
            self._detach()
        return 0

    def kill(self) -> None:
        """Stop it if still running (the fixtures' clean-up; no kill -9 in a test process)."""
        if self.collector is not None and self._handler is not None:
            self.terminate()

    def output(self) -> str:
        return self._log.getvalue() if self._log else ""

    def _detach(self) -> None:
        if self._handler is not None:
            logger = logging.getLogger("assay.collect")
            logger.removeHandler(self._handler)
            if not logger.handlers:
                logger.setLevel(logging.NOTSET)
            self._handler = None


AnyCollector = CollectorProcess | InProcessCollector
CollectorFactory = Callable[..., AnyCollector]


def parse_collect(argv: list[str]) -> CollectorConfig:
    """The ``CollectorConfig`` that ``assay ARGV`` (a ``collect`` command line) would run."""
    from assay.cli import run

    made: list[CollectorConfig] = []
    with mock.patch("assay.collect.run_collector", lambda config: made.append(config)):
        code = run(argv)
    assert code == 0 and len(made) == 1, f"assay {' '.join(argv)} exited {code}"
    return made[0]
