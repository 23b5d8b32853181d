"""Reading an HTTP/1.1 chunked request body (RFC 9112 §7.1) within a size limit.

The OpenTelemetry JS exporters (and any sender that streams its body, e.g. through a gzip
stream) send ``Transfer-Encoding: chunked`` with no ``Content-Length``. The body is read chunk
by chunk and refused as soon as its total passes the limit, so a sender cannot make the
collector hold more than ``limit`` bytes by never ending the body.
"""

from __future__ import annotations

from io import BufferedIOBase

from assay.errors import TooLargeError

__all__ = ["ChunkedBodyError", "read_chunked"]

_MAX_LINE = 4096
"""Longest chunk-size line (size and extensions) or trailer line accepted."""
_MAX_TRAILERS = 64
"""Most trailer fields after the last chunk."""


class ChunkedBodyError(ValueError):
    """The body is not valid chunked encoding (or the connection ended inside it)."""


def _line(stream: BufferedIOBase) -> bytes:
    line = stream.readline(_MAX_LINE + 1)
    if not line.endswith(b"\n"):
        if len(line) > _MAX_LINE:
            raise ChunkedBodyError(f"a chunk line longer than {_MAX_LINE} bytes")
        raise ChunkedBodyError("the connection ended inside the chunked body")
    return line.rstrip(b"\r\n")


def read_chunked(stream: BufferedIOBase, limit: int, drain: int = 0) -> bytes:
    """Read a chunked body from ``stream``, trailers included; return the data.

    Args:
        stream: The connection, positioned after the request's headers.
        limit: Most data bytes accepted.
        drain: Most bytes read in all when the body is over ``limit``: the excess is read and
            dropped, so that a sender still writing it gets to read the refusal (one that
            cannot write is cut off with a broken pipe, which exporters take for a network
            error and retry).

    Raises:
        TooLargeError: The chunks add up to more than ``limit`` (the rest is left unread
            beyond ``drain``).
        ChunkedBodyError: A malformed chunk size or line, or the stream ended early.
    """
    parts: list[bytes] = []
    size = 0
    while True:
        text = _line(stream).split(b";", 1)[0].strip()  # chunk extensions are ignored
        try:
            length = int(text, 16)
        except ValueError:
            raise ChunkedBodyError(f"invalid chunk size {text[:40]!r}") from None
        # int() also takes "+5", "-5" and "0x5"; the grammar is hex digits only
        if length < 0 or not text.isalnum() or text[:2].lower() == b"0x":
            raise ChunkedBodyError(f"invalid chunk size {text[:40]!r}")
        if length == 0:
            break
        size += length
        if size > max(limit, drain):
            raise TooLargeError(_too_large(limit))
        data = stream.read(length)
        if len(data) < length:
            raise ChunkedBodyError("the connection ended inside the chunked body")
        if size <= limit:
            parts.append(data)
        if _line(stream):
            raise ChunkedBodyError("chunk data longer than its declared size")
    for _ in range(_MAX_TRAILERS + 1):
        if not _line(stream):  # the empty line that ends the trailers
            if size > limit:
                raise TooLargeError(_too_large(limit))
            return b"".join(parts)
    raise ChunkedBodyError(f"more than {_MAX_TRAILERS} trailer fields")


def _too_large(limit: int) -> str:
    return f"chunked body exceeds the limit of {limit} bytes"
