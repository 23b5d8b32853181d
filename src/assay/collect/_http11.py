"""One HTTP/1.1 connection of the OTLP/HTTP receiver, framed by h11, under deadlines.

h11 (https://h11.readthedocs.io, the HTTP/1.1 state machine under httpx and uvicorn) parses
the request line and headers, the ``Content-Length`` and ``Transfer-Encoding: chunked`` body
framing (RFC 9112), ``Expect: 100-continue`` and keep-alive; it refuses what it cannot frame
(a bad ``Content-Length``, a malformed chunk, a ``Transfer-Encoding`` other than chunked, an
HTTP/1.1 request without ``Host``, a head still incomplete after ``_MAX_HEAD`` bytes) with the
status it names. This module adds what h11 leaves to the
server: the socket, the deadlines and the body limits.

- The header deadline covers the whole request line and headers, the wait for them (idle
  keep-alive time) included; the body deadline the whole body. A per-read timeout alone would
  let a slow client (slowloris) keep a connection by sending a byte just before each timeout.
- A body is counted as it arrives and refused once past its limit, so a sender cannot make
  the receiver hold more than the limit by never ending it.
"""

from __future__ import annotations

import email.utils
import http
import socket
import time
from dataclasses import dataclass

import h11

from assay.errors import TooLargeError

__all__ = ["FramingError", "Head", "Http11Connection"]

_READ_SIZE = 1 << 18
"""Most bytes asked of the socket at once (a 191 KiB OTLP request in one or two reads)."""
_SERVER = b"assay-collector"
_MAX_HEAD = 64 * 1024
"""Most bytes of a request line and headers still incomplete, or of a chunk's size line or
trailers (h11's default is 16 KiB; http.server took lines of 64 KiB). Past it: 431."""
_MAX_REASON = 120
"""Most characters of h11's reason kept (it quotes the sender's bytes)."""


class FramingError(Exception):
    """The sender broke HTTP/1.1 framing: the status to answer and why (h11's reason).

    Args:
        status: 400, or the status h11 names (431 for headers too large, 501 for a transfer
            coding other than chunked).
        reason: What was wrong, for the sender and the log.
    """

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Head:
    """A request's line and headers.

    Attributes:
        method: ``GET``, ``POST``, ...
        path: The target without its query.
        headers: Lower-cased names; a repeated header keeps its first value.
        content_length: The ``Content-Length`` header's value; None without one.
        chunked: Whether the body is sent ``Transfer-Encoding: chunked``.
        expects_continue: The sender waits for ``100 Continue`` before sending the body.
    """

    method: str
    path: str
    headers: dict[str, str]
    content_length: int | None
    chunked: bool
    expects_continue: bool


class Http11Connection:
    """Requests read from, and answers written to, one connected socket.

    Args:
        sock: The connection (TLS already negotiated, if any).
        header_timeout_s: Deadline for each request's line and headers, from the moment the
            connection is ready for it.
        body_timeout_s: Deadline for each request's body, from the end of its headers; also
            the time an answer may take to be written.
    """

    def __init__(self, sock: socket.socket, header_timeout_s: float, body_timeout_s: float) -> None:
        self._sock = sock
        self._h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_HEAD)
        self._header_timeout_s = header_timeout_s
        self._body_timeout_s = body_timeout_s
        self._deadline = float("inf")
        self._method = b""
        self._content_length: int | None = None
        self._ended = False
        """The sender has closed its side of the connection."""

    # --- reading ------------------------------------------------------------------------------
    def next_request(self) -> Head | None:
        """The next request's head, or None once the sender closed the connection.

        Raises:
            FramingError: The request line or headers cannot be framed.
            TimeoutError: They did not all arrive within the header deadline.
            ConnectionError: The connection broke.
        """
        self._deadline = time.monotonic() + self._header_timeout_s
        event = self._next_event("request")
        if isinstance(event, h11.ConnectionClosed):
            return None
        assert isinstance(event, h11.Request)
        self._deadline = time.monotonic() + self._body_timeout_s
        self._method = event.method
        headers: dict[str, str] = {}
        for name, value in event.headers:
            headers.setdefault(name.decode("ascii"), value.decode("latin-1"))
        length = headers.get("content-length")
        # h11 has checked that the value is digits, and is one when repeated
        self._content_length = None if length is None else int(length)
        return Head(
            method=event.method.decode("ascii"),
            path=event.target.decode("ascii").split("?", 1)[0],
            headers=headers,
            content_length=self._content_length,
            chunked="transfer-encoding" in headers,
            expects_continue=self._h11.they_are_waiting_for_100_continue,
        )

    def read_body(self, limit: int, drain: int = 0) -> bytes:
        """The request's body, once it has all arrived within the body deadline.

        Args:
            limit: Most bytes accepted.
            drain: Most bytes read in all when the body is over ``limit``: the excess is read
                and dropped, so that a sender still writing it gets to read the refusal (one
                that cannot write is cut off with a broken pipe, which exporters take for a
                network error and retry).

        Raises:
            TooLargeError: The body is over ``limit`` (the rest is left unread beyond
                ``drain``); the connection cannot serve another request.
            FramingError: A malformed chunk.
            TimeoutError: The body deadline passed.
            ConnectionError: The sender closed the connection inside the body.
        """
        parts: list[bytes] = []
        size = 0
        while True:
            event = self._next_event("chunked body" if self._content_length is None else "body")
            if isinstance(event, h11.EndOfMessage):
                break
            if not isinstance(event, h11.Data):  # only a closed connection comes here
                raise ConnectionError("the connection ended inside the request's body")
            size += len(event.data)
            if size > max(limit, drain):
                break
            if size <= limit:
                parts.append(event.data)
        if size > limit:
            what = "chunked body" if self._content_length is None else "body"
            raise TooLargeError(f"{what} exceeds the limit of {limit} bytes")
        return b"".join(parts)

    def discard_body(self, limit: int) -> None:
        """Read and drop a body of at most ``limit`` bytes; a larger one is left unread.

        A refused request's body is read before the answer so that the sender, still writing
        it, gets to read the answer; no error of the body's is raised (the connection is
        closed after the answer anyway).
        """
        if self._content_length is not None and self._content_length > limit:
            return
        try:
            self.read_body(0, drain=limit)
        except (TooLargeError, FramingError, TimeoutError, ConnectionError):
            pass

    def _next_event(self, what: str) -> h11.Event:
        """The next event from h11, reading the socket as it needs; ``what`` is being read."""
        while True:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as exc:
                if self._ended:
                    raise ConnectionError(f"the connection ended inside the {what}") from None
                reason = f"malformed {what}: {exc}"
                if len(reason) > _MAX_REASON:
                    reason = reason[: _MAX_REASON - 1] + "…"
                if exc.error_status_hint == 501:
                    reason += " (to compress, use Content-Encoding: gzip)"
                raise FramingError(exc.error_status_hint, reason) from None
            if event is h11.NEED_DATA:
                data = self._recv()
                self._ended = not data
                self._h11.receive_data(data)
                continue
            assert isinstance(event, h11.Event)  # never PAUSED: a cycle ends before the next
            return event

    def _recv(self) -> bytes:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("read deadline passed")
        self._sock.settimeout(remaining)
        return self._sock.recv(_READ_SIZE)

    # --- writing ------------------------------------------------------------------------------
    def send_continue(self) -> None:
        """Ask a sender waiting with ``Expect: 100-continue`` for the body."""
        self._write(
            self._h11.send(
                h11.InformationalResponse(status_code=100, headers=[], reason=b"Continue")
            )
        )

    def respond(
        self,
        status: int,
        body: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
        *,
        close: bool = False,
    ) -> None:
        """Write a whole answer; with ``close`` it says ``Connection: close``.

        An answer sent before the request's body was read also closes the connection: what is
        left of the body cannot be told from a next request.
        """
        close = close or self._h11.their_state is not h11.DONE
        fields = [
            (b"Server", _SERVER),
            (b"Date", email.utils.formatdate(usegmt=True).encode("ascii")),
            (b"Content-Type", content_type.encode("ascii")),
            (b"Content-Length", str(len(body)).encode("ascii")),
            *(
                (name.encode("ascii"), value.encode("latin-1"))
                for name, value in (headers or {}).items()
            ),
        ]
        if close:
            fields.append((b"Connection", b"close"))
        phrase = http.HTTPStatus(status).phrase.encode("ascii")
        data = self._h11.send(h11.Response(status_code=status, headers=fields, reason=phrase))
        if self._method != b"HEAD":  # h11 frames a HEAD answer without a body
            data += self._h11.send(h11.Data(data=body))
        self._write(data + self._h11.send(h11.EndOfMessage()))

    def _write(self, data: bytes | None) -> None:
        # Reads may have left a nearly spent deadline as the socket timeout; writing the
        # answer gets its own (a sender that stops reading is still cut off).
        self._sock.settimeout(self._body_timeout_s)
        self._sock.sendall(data or b"")

    def next_cycle(self) -> bool:
        """After an answer: whether the connection may carry another request."""
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
            self._method = b""
            self._content_length = None
            return True
        return False
