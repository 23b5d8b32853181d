"""A webhook receiver on 127.0.0.1: records each POSTed JSON body; can fail or stall first."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """``fail_first`` requests answer 503; each request waits ``stall`` seconds first."""

    def __init__(self, fail_first: int = 0, stall: float = 0.0) -> None:
        self.events: list[dict[str, Any]] = []
        self.attempts = 0
        self.fail_first, self.stall = fail_first, stall
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                time.sleep(owner.stall)
                owner.attempts += 1
                if owner.attempts <= owner.fail_first:
                    self.send_response(503)
                    self.end_headers()
                    return
                assert self.headers["Content-Type"] == "application/json"
                owner.events.append(json.loads(body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hook"

    def wait_for(self, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.events) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.events

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
