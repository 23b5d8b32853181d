"""Checks from a test's ``expected:`` on one trial's output and tool calls.

Regular expressions run on the ``regex`` engine with ``concurrent=True`` (it releases the GIL)
in a worker thread the trial waits for only until its deadline: a catastrophic pattern turns
the trial into an ``error`` at ``--timeout`` / ``--max-time`` instead of hanging the run, and
the abandoned worker stops at the engine's own timeout (``docs/suites.md``).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import regex

from assay.run._pii import pii_found
from assay.run._suite import Expected

_TEXT_KEYS = ("output", "response", "answer", "text", "content", "result")


class CheckTimeoutError(TimeoutError):
    """A check did not finish within the trial's deadline (the trial becomes ``error``)."""


def output_text(output: Any) -> str:
    """The text the output checks read.

    A string is itself; a mapping with a string under ``output``, ``response``, ``answer``,
    ``text``, ``content`` or ``result`` is that string; anything else is its JSON.
    """
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        for key in _TEXT_KEYS:
            if isinstance(output.get(key), str):
                return str(output[key])
    try:
        return json.dumps(output, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(output)


def compile_pattern(pattern: str, *, ignore_case: bool = False) -> regex.Pattern[str]:
    """Compile a pattern as the checks run it (Python ``re`` syntax; EvalView's flags if asked).

    Raises:
        ValueError: The pattern is not a valid regular expression.
    """
    flags = regex.IGNORECASE | regex.DOTALL if ignore_case else 0
    try:
        return regex.compile(pattern, flags | regex.VERSION0)
    except regex.error as exc:
        raise ValueError(str(exc)) from None


def _json_value(output: Any) -> Any:
    """The value a JSON Schema applies to: the output, or the JSON its text holds."""
    if isinstance(output, str):
        try:
            return json.loads(output)
        except json.JSONDecodeError:
            return output
    return output


def _tool_key(name: str) -> str:
    """Case- and separator-insensitive tool name (``EditFile`` ~ ``edit_file`` ~ ``edit-file``)."""
    return name.lower().replace("_", "").replace("-", "")


def sequence_progress(sequence: list[str], wanted: tuple[str, ...], mode: str) -> float:
    """Share of ``wanted`` matched (EvalView's partial credit), in [0, 1]; 1 when nothing is wanted.

    ``subsequence``: the longest prefix of ``wanted`` found in order; ``exact``: positions
    equal; ``unordered``: calls present, counted with multiplicity.
    """
    if not wanted:
        return 1.0
    if mode == "exact":
        if len(sequence) == len(wanted):
            return sum(a == b for a, b in zip(sequence, wanted, strict=True)) / len(wanted)
        return sum(a == b for a, b in zip(sequence, wanted, strict=False)) / len(wanted)
    if mode == "unordered":
        left = list(sequence)
        hit = 0
        for name in wanted:
            if name in left:
                left.remove(name)
                hit += 1
        return hit / len(wanted)
    found = 0
    for call in sequence:
        if found < len(wanted) and call == wanted[found]:
            found += 1
    return found / len(wanted)


def _sequence_ok(sequence: list[str], wanted: tuple[str, ...], mode: str) -> bool:
    if mode == "exact":
        return sequence == list(wanted)
    return sequence_progress(sequence, wanted, mode) == 1.0


def _search_all(
    patterns: tuple[str, ...], text: str, ignore_case: bool, deadline: float | None
) -> list[bool]:
    """Whether each pattern matches ``text``, within ``deadline`` (a ``time.monotonic`` value).

    Raises:
        CheckTimeoutError: The deadline passed first.
    """
    compiled = [compile_pattern(p, ignore_case=ignore_case) for p in patterns]
    if deadline is None:
        return [c.search(text, concurrent=True) is not None for c in compiled]
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["hits"] = [
                c.search(text, concurrent=True, timeout=max(deadline - time.monotonic(), 0.001))
                is not None
                for c in compiled
            ]
        except TimeoutError:
            box["timeout"] = True

    worker = threading.Thread(target=work, daemon=True, name="assay-regex-check")
    worker.start()
    worker.join(max(deadline - time.monotonic(), 0.0))
    if worker.is_alive() or "timeout" in box:
        raise CheckTimeoutError(
            "output regex check did not finish within the trial's deadline "
            f"(patterns: {', '.join(repr(p) for p in patterns)})"
        )
    return list(box["hits"])


def evaluate_checks(
    expected: Expected, output: Any, tools: list[str], *, deadline: float | None = None
) -> list[tuple[str, bool]]:
    """Evaluate every check of ``expected``.

    Args:
        expected: The test's expectations.
        output: The agent's output.
        tools: The trial's tool calls in start-time order.
        deadline: ``time.monotonic()`` by which the checks must be done (None: no limit).

    Returns:
        ``(check name, passed)`` for each check, in a stable order.

    Raises:
        CheckTimeoutError: The regular expressions did not finish by ``deadline``.
    """
    results: list[tuple[str, bool]] = []
    called = set(tools)
    for name in expected.tools:
        results.append((f"tool called: {name}", name in called))
    for category in expected.tool_categories:
        members = expected.categories.get(category, frozenset())
        results.append((f"tool of category called: {category}", bool(called & members)))
    if expected.tool_sequence:
        label = " > ".join(expected.tool_sequence)
        if expected.sequence_mode != "subsequence":
            label += f" ({expected.sequence_mode})"
        ok = _sequence_ok(tools, expected.tool_sequence, expected.sequence_mode)
        results.append((f"tool sequence: {label}", ok))
    # Forbidden tools are a safety contract: match them loosely, as EvalView does.
    called_keys = {_tool_key(t) for t in called}
    for name in expected.forbidden_tools:
        results.append((f"tool not called: {name}", _tool_key(name) not in called_keys))
    out = expected.output
    if out.contains or out.not_contains or out.regex or out.no_pii:
        text = output_text(output)
        folded = text.lower() if out.ignore_case else text
        for needle in out.contains:
            wanted = needle.lower() if out.ignore_case else needle
            results.append((f"output contains: {needle}", wanted in folded))
        for needle in out.not_contains:
            unwanted = needle.lower() if out.ignore_case else needle
            results.append((f"output does not contain: {needle}", unwanted not in folded))
        if out.regex:
            hits = _search_all(out.regex, text, out.ignore_case, deadline)
            for pattern, hit in zip(out.regex, hits, strict=True):
                results.append((f"output matches: {pattern}", hit))
        if out.no_pii:
            results.append(("output holds no PII", not pii_found(text)))
    if out.json_schema is not None:
        from jsonschema import validators

        validator = validators.validator_for(out.json_schema)(out.json_schema)
        results.append(("output matches JSON schema", validator.is_valid(_json_value(output))))
    return results
