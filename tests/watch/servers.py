"""Real servers on 127.0.0.1 for the watch tests: ``assay watch`` itself and Prometheus."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ASSAY = str(Path(sys.executable).parent / "assay")
_METRICS = re.compile(r"/metrics on http://127\.0\.0\.1:(\d+)/metrics")


def start_watch(args: list[str], log: Path) -> tuple[subprocess.Popen[bytes], int | None]:
    """``assay watch ARGS`` as a process; its /metrics port when it serves one."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [ASSAY, "watch", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **FAULT_HANDLER},
        )
    if "--metrics-port" not in args:
        return proc, None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = _METRICS.search(log.read_text())
        if found:
            return proc, int(found.group(1))
        if proc.poll() is not None:
            raise RuntimeError(f"assay watch exited early:\n{log.read_text()}")
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"assay watch did not serve /metrics:\n{log.read_text()}")


FAULT_HANDLER = {"PYTHONFAULTHANDLER": "1"}
"""The environment that makes an aborted ``assay watch`` print every thread's stack."""


def stop(proc: subprocess.Popen[bytes]) -> int:
    """SIGTERM, as a service manager stops it; its exit code.

    A process still running 20 s later is sent SIGABRT (a Python started with
    :data:`FAULT_HANDLER` then prints where each thread was), and killed 10 s after that.
    """
    proc.terminate()
    try:
        return proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
    try:
        return proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(timeout=10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Prometheus:
    """Debian's ``prometheus`` on 127.0.0.1, scraping one target every second."""

    def __init__(self, folder: Path, target_port: int) -> None:
        binary = shutil.which("prometheus")
        if binary is None:
            pytest.skip("prometheus is not installed (Debian package `prometheus`; make test)")
        self.binary = binary
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        config = folder / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: assay-watch\n    static_configs:\n"
            f"      - targets: ['127.0.0.1:{target_port}']\n"
        )
        self.config = config
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    def start(self) -> Prometheus:
        # Prometheus cannot report a port it picked itself: take a free one, retry on a clash.
        for _ in range(3):
            self.port = _free_port()
            with (self.folder / "prometheus.log").open("wb") as log:
                self.proc = subprocess.Popen(
                    [
                        self.binary,
                        f"--config.file={self.config}",
                        f"--storage.tsdb.path={self.folder / 'data'}",
                        f"--web.listen-address=127.0.0.1:{self.port}",
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as r:
                        if r.status == 200:
                            return self
                except OSError:
                    time.sleep(0.2)
            self.stop()
        raise RuntimeError((self.folder / "prometheus.log").read_text())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def query(self, promql: str) -> list[dict[str, object]]:
        """The instant query's result vector (``/api/v1/query``)."""
        url = self.url + "/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=10) as response:
            document = json.loads(response.read())
        assert document["status"] == "success", document
        result: list[dict[str, object]] = document["data"]["result"]
        return result

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            stop(self.proc)
        self.proc = None


def wait_for_log(log: Path, text: str, timeout: float = 60) -> str:
    """The log once it holds ``text`` (a look has happened), else fail."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        content = log.read_text()
        if text in content:
            return content
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared in {log}:\n{log.read_text()[-2000:]}")
