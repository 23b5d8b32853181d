"""Process-wide defaults for trials: run id, agent version, per-test trial counters."""

from __future__ import annotations

import itertools
import os
import threading
import uuid
from collections import defaultdict
from collections.abc import Iterator

_lock = threading.Lock()
_counters: defaultdict[str, Iterator[int]] = defaultdict(itertools.count)
_run_id: str | None = None


def default_run_id() -> str:
    """``ASSAY_RUN_ID`` if set, else one random id shared by every trial of this process."""
    global _run_id
    with _lock:
        if _run_id is None:
            _run_id = os.environ.get("ASSAY_RUN_ID") or uuid.uuid4().hex[:16]
        return _run_id


def default_agent_version() -> str | None:
    """``ASSAY_AGENT_VERSION`` if set."""
    return os.environ.get("ASSAY_AGENT_VERSION") or None


def next_trial_index(test_id: str) -> int:
    """The next 0-based trial number for ``test_id`` in this process."""
    with _lock:
        return next(_counters[test_id])


def reset() -> None:
    """Forget the run id and trial counters (for tests and long-lived processes)."""
    global _run_id
    with _lock:
        _run_id = None
        _counters.clear()
