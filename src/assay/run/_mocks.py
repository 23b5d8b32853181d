"""EvalView's ``mocks`` for an in-process agent: serve a tool mock instead of the tool.

An agent run with ``--agent module:function`` whose function has a ``mocks`` parameter
receives the test's ``mocks`` mapping; :func:`mocked_result` applies its ``tool_mocks`` the way
EvalView's simulator does: the first mock for the tool whose ``match_params`` are a subset of
the call's parameters answers, after ``latency_ms``, with ``returns`` (or raises its
``error``); an unmatched call falls through to the real tool unless ``strict`` is set.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any


class MockError(Exception):
    """A tool mock's ``error``, raised in place of the tool's result."""


def mocked_result(
    mocks: Mapping[str, Any] | None, tool: str, params: Mapping[str, Any] | None = None
) -> tuple[bool, Any]:
    """Serve ``tool``'s mock, if any.

    Args:
        mocks: The test's ``mocks`` (what the agent's ``mocks`` parameter received), or None.
        tool: The tool being called.
        params: Its parameters.

    Returns:
        ``(True, value)`` when a mock answers, ``(False, None)`` when the real tool should run.

    Raises:
        MockError: The matching mock has an ``error``.
        LookupError: No mock matches and ``mocks.strict`` is true.
    """
    if not mocks:
        return False, None
    given = dict(params or {})
    for mock in mocks.get("tool_mocks") or ():
        if not isinstance(mock, Mapping) or mock.get("tool") != tool:
            continue
        wanted = mock.get("match_params") or {}
        if any(given.get(k) != v for k, v in wanted.items()):
            continue
        latency = mock.get("latency_ms") or 0
        if latency:
            time.sleep(float(latency) / 1000)
        if mock.get("error"):
            raise MockError(str(mock["error"]))
        return True, mock.get("returns")
    if mocks.get("strict"):
        raise LookupError(f"no mock for tool {tool!r} with parameters {given!r} (mocks.strict)")
    return False, None
