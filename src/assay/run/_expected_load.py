"""Loading a test's ``expected:`` (and its turns): tool, sequence and output checks.

Part of :mod:`assay.run._suite_load`; EvalView's names (``sequence``, ``regex_patterns``,
``tool_categories``) are read with EvalView's meaning.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from assay.run import _evalview as ev
from assay.run._checks import compile_pattern
from assay.run._evalview_config import EvalViewConfig
from assay.run._suite import Expected, OutputExpectation, Turn
from assay.run._yaml import Where, boolean, check_jsonable, kind, known, mapping, strings

EXPECTED_KEYS = {
    "tools",
    "tool_sequence",
    "sequence",
    "sequence_mode",
    "forbidden_tools",
    "tool_categories",
    "output",
    *ev.UNSUPPORTED_EXPECTED,
    *ev.UNSUPPORTED_EXPECTED_JUDGED,
}
OUTPUT_KEYS = {
    "contains",
    "not_contains",
    "regex",
    "regex_patterns",
    "json_schema",
    "no_pii",
    *ev.UNSUPPORTED_OUTPUT,
}
_SEQUENCE_MODES = ("subsequence", "exact", "unordered")


@dataclass(slots=True)
class FileContext:
    """What the parse of one file needs besides the YAML: its dialect and what it noticed."""

    evalview: bool
    """EvalView's layout (one test per file): EvalView's meaning of its fields."""
    config: EvalViewConfig
    """The folder's ``config.yaml`` (categories, weights), or an empty one."""
    unsupported: dict[str, str] = field(default_factory=dict)
    """Field -> what honouring it would take; one finding per file."""


def _parse_output(
    value: object, w: Where, base: OutputExpectation, f: FileContext
) -> OutputExpectation:
    """The output checks; each key given replaces the same key of ``base`` (the defaults)."""
    m = mapping(value, w, "expected.output")
    w = w.at(m)
    known(m, OUTPUT_KEYS, w, "expected.output")
    ev.note_unsupported(m, "expected.output.", f.unsupported)
    out = base
    if m.get("contains") is not None:
        out = replace(out, contains=strings(m["contains"], w, "expected.output.contains"))
    if m.get("not_contains") is not None:
        forbidden = strings(m["not_contains"], w, "expected.output.not_contains")
        out = replace(out, not_contains=forbidden)
    patterns: tuple[str, ...] = ()
    for key in ("regex", "regex_patterns"):  # regex_patterns: EvalView's name
        if m.get(key) is not None:
            patterns += strings(m[key], w, f"expected.output.{key}")
    for pattern in patterns:
        try:
            compile_pattern(pattern, ignore_case=f.evalview)
        except ValueError as exc:
            message = f"bad regular expression {pattern!r}: {exc}"
            raise w.error("expected.output.regex", message) from None
    if patterns:
        out = replace(out, regex=patterns)
    if m.get("json_schema") is not None:
        schema = mapping(m["json_schema"], w, "expected.output.json_schema")
        from jsonschema import exceptions, validators

        try:
            validators.validator_for(schema).check_schema(schema)
        except exceptions.SchemaError as exc:
            message = f"not a valid JSON Schema: {exc.message}"
            raise w.error("expected.output.json_schema", message) from None
        out = replace(out, json_schema=schema)
    if m.get("no_pii") is not None:
        out = replace(out, no_pii=boolean(m["no_pii"], w, "expected.output.no_pii"))
    return out


def parse_expected(value: object, w: Where, base: Expected, f: FileContext) -> Expected:
    if value is None:
        return base
    m = mapping(value, w, "expected")
    w = w.at(m)
    known(m, EXPECTED_KEYS, w, "expected")
    ev.note_unsupported(m, "expected.", f.unsupported)
    out = base
    if m.get("tools") is not None:
        out = replace(out, tools=strings(m["tools"], w, "expected.tools"))
    for key in ("tool_sequence", "sequence"):  # sequence: EvalView's alias
        if m.get(key) is not None:
            out = replace(out, tool_sequence=strings(m[key], w, f"expected.{key}"))
    if m.get("sequence_mode") is not None:
        mode = m["sequence_mode"]
        if mode not in _SEQUENCE_MODES:
            allowed = ", ".join(_SEQUENCE_MODES)
            raise w.error("expected.sequence_mode", f"must be one of {allowed} (got {mode!r})")
        out = replace(out, sequence_mode=mode)
    if m.get("forbidden_tools") is not None:
        forbidden = strings(m["forbidden_tools"], w, "expected.forbidden_tools")
        out = replace(out, forbidden_tools=forbidden)
    if m.get("tool_categories") is not None:
        wanted = strings(m["tool_categories"], w, "expected.tool_categories")
        out = replace(out, tool_categories=wanted)
    if m.get("output") is not None:
        out = replace(out, output=_parse_output(m["output"], w, out.output, f))
    overlap = set(out.tools) & set(out.forbidden_tools)
    if overlap:
        raise w.error("expected.forbidden_tools", f"also required: {', '.join(sorted(overlap))}")
    return out


def with_categories(expected: Expected, table: dict[str, frozenset[str]], w: Where) -> Expected:
    """Resolve the tools of each category ``expected`` names (unknown names are errors)."""
    if not expected.tool_categories:
        return expected
    missing = [name for name in expected.tool_categories if name not in table]
    if missing:
        allowed = ", ".join(sorted(table))
        raise w.error(
            "expected.tool_categories", f"unknown category {missing[0]!r} (known: {allowed})"
        )
    return replace(expected, categories={n: table[n] for n in expected.tool_categories})


def parse_turns(
    value: object, w: Where, base: Expected, f: FileContext, table: dict[str, frozenset[str]]
) -> tuple[Turn, ...]:
    if not isinstance(value, list) or len(value) < 2:
        raise w.error("turns", f"must be a list of at least 2 turns (got {kind(value)})")
    turns = []
    for i, item in enumerate(value):
        t = mapping(item, w, f"turns[{i}]")
        tw = w.at(t)
        known(t, {"query", "expected", "context"}, tw, f"turns[{i}]")
        query = t.get("query")
        if not isinstance(query, str):
            raise tw.error(f"turns[{i}].query", f"must be a string (got {kind(query)})")
        context = mapping(t["context"], tw, f"turns[{i}].context") if t.get("context") else None
        check_jsonable(context, tw, f"turns[{i}].context")
        expected = parse_expected(t.get("expected"), tw, base, f)
        turns.append(Turn(query, context, with_categories(expected, table, tw)))
    return tuple(turns)
