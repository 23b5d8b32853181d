"""Running ``assay collect`` as a real subprocess on 127.0.0.1 (used by the fixtures)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ASSAY = str(Path(sys.executable).parent / "assay")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class CollectorProcess:
    out: Path
    args: list[str]
    http_port: int = field(default_factory=free_port)
    grpc_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def start(self) -> CollectorProcess:
        self.log = self.out.parent / f"collector-{time.monotonic_ns()}.log"
        command = [
            ASSAY,
            "collect",
            "--out",
            str(self.out),
            "--http-port",
            str(self.http_port),
            "--grpc-port",
            str(self.grpc_port),
            *self.args,
        ]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"collector exited early:\n{self.log.read_text()}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1) as response:
                    if response.status == 200:
                        return self
            except (OSError, urllib.error.URLError):
                time.sleep(0.05)
        raise RuntimeError(f"collector did not start:\n{self.log.read_text()}")

    def health(self) -> dict[str, int | str]:
        with urllib.request.urlopen(self.url + "/health", timeout=5) as response:
            document: dict[str, int | str] = json.loads(response.read())
            return document

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
