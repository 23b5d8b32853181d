"""An OpenAI-compatible chat-completions server on 127.0.0.1, answering from a script.

The script is a function of the request body (the conversation so far) returning the next
assistant turn: text, or tool calls. Every response reports the usage the script chose, so
the ground truth of LLM calls and tokens is what this server answered.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Turn:
    """One assistant answer."""

    text: str | None = None
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    input_tokens: int = 11
    output_tokens: int = 7
    fail: bool = False
    """Answer HTTP 500 instead (the call fails; the server counts no tokens for it)."""


Script = Callable[[dict[str, Any]], Turn]


@dataclass
class FakeOpenAI:
    """The server; ``script`` answers each request, ``requests`` counts them."""

    script: Script = field(default=lambda body: Turn(text="ok"))
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    failed: int = 0
    """Requests answered with HTTP 500."""
    unreported: int = 0
    """Streamed answers whose usage was not sent (no ``stream_options.include_usage``)."""

    def answer(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The response to ``body``, or None for an HTTP 500."""
        turn = self.script(body)
        with self._lock:
            self.requests += 1
            number = self.requests
            if turn.fail:
                self.failed += 1
                return None
            self.input_tokens += turn.input_tokens
            self.output_tokens += turn.output_tokens
        message: dict[str, Any] = {"role": "assistant", "content": turn.text}
        if turn.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{number}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(turn.tool_calls)
            ]
        return {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body.get("model", "fake-model"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if turn.tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": turn.input_tokens,
                "completion_tokens": turn.output_tokens,
                "total_tokens": turn.input_tokens + turn.output_tokens,
            },
        }

    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self.send_error(404, "only chat completions here")
                    return
                answer = fake.answer(body)
                if answer is None:
                    self.send_error(500, "failed on purpose")
                    return
                if body.get("stream"):
                    usage = (body.get("stream_options") or {}).get("include_usage", False)
                    if not usage:
                        with fake._lock:
                            fake.unreported += 1
                    payload = _as_stream(answer, usage)
                    kind = "text/event-stream"
                else:
                    payload = json.dumps(answer).encode()
                    kind = "application/json"
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def _as_stream(answer: dict[str, Any], usage: bool) -> bytes:
    """``answer`` as server-sent chunks, as OpenAI streams it (usage last, when asked for)."""
    choice = answer["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message["content"]}
    if "tool_calls" in message:
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
    head = {k: answer[k] for k in ("id", "created", "model")}
    chunks = [
        {**head, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]},
        {
            **head,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
        },
    ]
    if usage:
        chunks.append(
            {**head, "object": "chat.completion.chunk", "choices": [], "usage": answer["usage"]}
        )
    lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


def tool_results(body: dict[str, Any]) -> int:
    """How many tool results the conversation holds (how far the agent got)."""
    return sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
