"""The garbage collector held off while many long-lived objects are made."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Hold off Python's automatic garbage collection inside the block.

    Judging or rendering thousands of tests makes hundreds of thousands of objects that live
    until the end (results, figures, the JSON document's dicts); each automatic full
    collection walks all of them and finds nothing to free (they hold no cycles), so the
    collector's passes grow with the number of tests. Collection resumes after the block,
    as it was (a caller that had disabled it keeps it disabled).
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
