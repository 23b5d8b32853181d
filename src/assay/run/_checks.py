"""Checks from a test's ``expected:`` on one trial's output and tool calls."""

from __future__ import annotations

import json
import re
from typing import Any

from assay.run._suite import Expected

_TEXT_KEYS = ("output", "response", "answer", "text", "content", "result")


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


def _in_order(sequence: list[str], wanted: tuple[str, ...]) -> bool:
    calls = iter(sequence)
    return all(any(call == name for call in calls) for name in wanted)


def evaluate_checks(expected: Expected, output: Any, tools: list[str]) -> list[tuple[str, bool]]:
    """Evaluate every check of ``expected``.

    Args:
        expected: The test's expectations.
        output: The agent's output.
        tools: The trial's tool calls in start-time order.

    Returns:
        ``(check name, passed)`` for each check, in a stable order.
    """
    results: list[tuple[str, bool]] = []
    called = set(tools)
    for name in expected.tools:
        results.append((f"tool called: {name}", name in called))
    if expected.tool_sequence:
        label = " > ".join(expected.tool_sequence)
        results.append((f"tool sequence: {label}", _in_order(tools, expected.tool_sequence)))
    # Forbidden tools are a safety contract: match them loosely, as EvalView does.
    called_keys = {_tool_key(t) for t in called}
    for name in expected.forbidden_tools:
        results.append((f"tool not called: {name}", _tool_key(name) not in called_keys))
    out = expected.output
    if out.contains or out.not_contains or out.regex:
        text = output_text(output)
        for needle in out.contains:
            results.append((f"output contains: {needle}", needle in text))
        for needle in out.not_contains:
            results.append((f"output does not contain: {needle}", needle not in text))
        for pattern in out.regex:
            results.append((f"output matches: {pattern}", re.search(pattern, text) is not None))
    if out.json_schema is not None:
        from jsonschema import validators

        validator = validators.validator_for(out.json_schema)(out.json_schema)
        results.append(("output matches JSON schema", validator.is_valid(_json_value(output))))
    return results
