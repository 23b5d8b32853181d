"""Reading a file the user names, never more than a bound: a price table, a suite, a key.

A path given on the command line may be anything: ``/dev/zero``, a FIFO, a 10 GB log. Read
whole, it takes the machine's memory and ends in a MemoryError traceback. Every such file is
read through :func:`read_bounded`, at most ``limit + 1`` bytes: past the limit it is refused
in one line, exit code 2, as any bad input is (docs/reliability.md).
"""

from __future__ import annotations

import os
from typing import Final

from assay.errors import InputError

__all__ = ["MAX_DOCUMENT_BYTES", "read_bounded", "read_text_bounded"]

MAX_DOCUMENT_BYTES: Final = 16 * 1024 * 1024
"""The largest configuration document read (a price table, a suite, a certificate): 16 MiB,
far above any real one (a suite of 10,000 cases is about 2 MiB)."""


def read_bounded(path: str | os.PathLike[str], what: str, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of ``path``, refused past ``limit``.

    Args:
        path: The file.
        what: What it is, for the message (``price table``, ``suite``).
        limit: The most bytes read.

    Raises:
        InputError: It cannot be read, or holds more than ``limit`` bytes.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputError(
            f"{path}: {what} larger than {limit // (1024 * 1024)} MiB: not read "
            "(is it the right file?)"
        )
    return data


def read_text_bounded(
    path: str | os.PathLike[str], what: str, limit: int = MAX_DOCUMENT_BYTES
) -> str:
    """:func:`read_bounded`, decoded as UTF-8 (an undecodable file is refused the same way)."""
    try:
        return read_bounded(path, what, limit).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: cannot read {what}: not UTF-8 ({exc.reason})") from None
