"""Loading suites: YAML files (one file or a folder), validated with precise errors.

A file holds either a suite (a mapping with ``tests:``) or one test case (a mapping with
``name``/``id`` and ``input``, the shape of an EvalView test file). Every error names the
file, the line, the test and the field. The schema is documented in ``docs/suites.md``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from assay.errors import ConfigError, InputError, SchemaError
from assay.run._suite import (
    Expected,
    OutputExpectation,
    Suite,
    TestCase,
    Thresholds,
    Variance,
)

# --- YAML with line numbers -------------------------------------------------------------------


class _LineLoader(yaml.SafeLoader):
    """A safe loader that remembers the line of every mapping it builds."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.lines: dict[int, int] = {}
        self.key_lines: dict[tuple[int, str], int] = {}


def _construct_map(loader: _LineLoader, node: yaml.MappingNode) -> Any:
    data: dict[Any, Any] = {}
    loader.lines[id(data)] = node.start_mark.line + 1
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            loader.key_lines[(id(data), key_node.value)] = key_node.start_mark.line + 1
    yield data
    data.update(loader.construct_mapping(node))


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)


@dataclass(slots=True)
class _Where:
    """Where a value sits, for error messages: file, line, test, field path."""

    file: str
    lines: dict[int, int]
    line: int | None = None
    test: str | None = None
    key_lines: dict[tuple[int, str], int] = field(default_factory=dict)

    def at(self, mapping: object, key: str | None = None) -> _Where:
        line = self.lines.get(id(mapping), self.line)
        if key is not None:
            line = self.key_lines.get((id(mapping), key), line)
        return _Where(self.file, self.lines, line, self.test, self.key_lines)

    def error(self, path: str, message: str) -> SchemaError:
        place = self.file if self.line is None else f"{self.file}:{self.line}"
        test = f" test {self.test!r}:" if self.test else ""
        where = f" {path}:" if path else ""
        return SchemaError(f"{place}:{test}{where} {message}")


# --- validation -------------------------------------------------------------------------------

_TEST_KEYS = {
    "id",
    "name",
    "input",
    "expected",
    "thresholds",
    "variance",
    "difficulty",
    "tags",
}
# EvalView test files carry these; assay reads the test and ignores them (docs/suites.md).
_IGNORED_TEST_KEYS = {
    "description",
    "adapter",
    "endpoint",
    "model",
    "timeout",
    "metadata",
    "suite_type",
    "checks",
    "category",
}
_SUITE_KEYS = {"name", "description", "defaults", "tests"}
_DEFAULT_KEYS = {"expected", "thresholds", "variance", "difficulty", "tags"}
_EXPECTED_KEYS = {"tools", "tool_sequence", "forbidden_tools", "output"}
_IGNORED_EXPECTED_KEYS = {"metrics", "hallucination", "safety", "sequence_mode"}
_OUTPUT_KEYS = {"contains", "not_contains", "regex", "json_schema"}
_THRESHOLD_KEYS = {"min_score", "max_cost", "max_latency"}
_VARIANCE_KEYS = {"runs", "pass_rate", "min_mean_score", "max_std_dev", "confidence_level"}


def _mapping(value: object, where: _Where, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise where.error(path, f"must be a mapping (got {_kind(value)})")
    for key in value:
        if not isinstance(key, str):
            raise where.at(value).error(path, f"keys must be strings (got {key!r})")
    return value


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def _known(value: dict[str, Any], known: set[str], ignored: set[str], w: _Where, path: str) -> None:
    for key in value:
        if key not in known and key not in ignored:
            allowed = ", ".join(sorted(known))
            name = f"{path}.{key}" if path else key
            raise w.at(value, key).error(name, f"unknown field (allowed: {allowed})")


def _strings(value: object, w: _Where, path: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list):
        raise w.error(path, f"must be a list of non-empty strings (got {_kind(value)})")
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item:
            hint = (
                " (quote it: YAML reads yes/no/on/off as booleans)"
                if isinstance(item, bool)
                else ""
            )
            raise w.error(f"{path}[{i}]", f"must be a non-empty string (got {item!r}){hint}")
    return tuple(value)


def _number(value: object, w: _Where, path: str, *, low: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise w.error(path, f"must be a number (got {value!r})")
    if low is not None and value < low:
        raise w.error(path, f"must be at least {low} (got {value})")
    return float(value)


def _rate(value: object, w: _Where, path: str) -> float:
    x = _number(value, w, path)
    if not 0 <= x <= 1:
        raise w.error(path, f"must lie in [0, 1] (got {value!r})")
    return x


def _parse_output(value: object, w: _Where, base: OutputExpectation) -> OutputExpectation:
    """The output checks; each key given replaces the same key of ``base`` (the defaults)."""
    m = _mapping(value, w, "expected.output")
    w = w.at(m)
    _known(m, _OUTPUT_KEYS, set(), w, "expected.output")
    out = base
    if m.get("contains") is not None:
        out = replace(out, contains=_strings(m["contains"], w, "expected.output.contains"))
    if m.get("not_contains") is not None:
        forbidden = _strings(m["not_contains"], w, "expected.output.not_contains")
        out = replace(out, not_contains=forbidden)
    if m.get("regex") is not None:
        regex = _strings(m["regex"], w, "expected.output.regex")
        for pattern in regex:
            try:
                re.compile(pattern)
            except re.error as exc:
                message = f"bad regular expression {pattern!r}: {exc}"
                raise w.error("expected.output.regex", message) from None
        out = replace(out, regex=regex)
    if m.get("json_schema") is not None:
        schema = _mapping(m["json_schema"], w, "expected.output.json_schema")
        from jsonschema import exceptions, validators

        try:
            validators.validator_for(schema).check_schema(schema)
        except exceptions.SchemaError as exc:
            message = f"not a valid JSON Schema: {exc.message}"
            raise w.error("expected.output.json_schema", message) from None
        out = replace(out, json_schema=schema)
    return out


def _parse_expected(value: object, w: _Where, base: Expected) -> Expected:
    if value is None:
        return base
    m = _mapping(value, w, "expected")
    w = w.at(m)
    _known(m, _EXPECTED_KEYS, _IGNORED_EXPECTED_KEYS, w, "expected")
    out = base
    if m.get("tools") is not None:
        out = replace(out, tools=_strings(m["tools"], w, "expected.tools"))
    if m.get("tool_sequence") is not None:
        out = replace(out, tool_sequence=_strings(m["tool_sequence"], w, "expected.tool_sequence"))
    if m.get("forbidden_tools") is not None:
        forbidden = _strings(m["forbidden_tools"], w, "expected.forbidden_tools")
        out = replace(out, forbidden_tools=forbidden)
    if m.get("output") is not None:
        out = replace(out, output=_parse_output(m["output"], w, out.output))
    overlap = set(out.tools) & set(out.forbidden_tools)
    if overlap:
        raise w.error("expected.forbidden_tools", f"also required: {', '.join(sorted(overlap))}")
    return out


def _parse_thresholds(value: object, w: _Where, base: Thresholds) -> Thresholds:
    if value is None:
        return base
    m = _mapping(value, w, "thresholds")
    w = w.at(m)
    _known(m, _THRESHOLD_KEYS, set(), w, "thresholds")
    out = base
    for key in _THRESHOLD_KEYS:
        if m.get(key) is not None:
            low = None if key == "min_score" else 0.0
            out = replace(out, **{key: _number(m[key], w, f"thresholds.{key}", low=low)})
    return out


def _parse_variance(value: object, w: _Where, base: Variance) -> Variance:
    if value is None:
        return base
    m = _mapping(value, w, "variance")
    w = w.at(m)
    _known(m, _VARIANCE_KEYS, set(), w, "variance")
    out = base
    if m.get("runs") is not None:
        runs = m["runs"]
        if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
            raise w.error("variance.runs", f"must be a whole number >= 1 (got {runs!r})")
        out = replace(out, runs=runs)
    if m.get("pass_rate") is not None:
        out = replace(out, pass_rate=_rate(m["pass_rate"], w, "variance.pass_rate"))
    if m.get("confidence_level") is not None:
        level = _number(m["confidence_level"], w, "variance.confidence_level")
        if not 0.5 <= level < 1:
            raise w.error("variance.confidence_level", f"must lie in [0.5, 1) (got {level})")
        out = replace(out, confidence_level=level)
    if m.get("min_mean_score") is not None:
        out = replace(
            out, min_mean_score=_number(m["min_mean_score"], w, "variance.min_mean_score")
        )
    if m.get("max_std_dev") is not None:
        out = replace(
            out, max_std_dev=_number(m["max_std_dev"], w, "variance.max_std_dev", low=0.0)
        )
    return out


@dataclass(frozen=True, slots=True)
class _Defaults:
    expected: Expected = field(default_factory=Expected)
    thresholds: Thresholds = field(default_factory=Thresholds)
    variance: Variance = field(default_factory=Variance)
    difficulty: str | None = None
    tags: tuple[str, ...] = ()


def _parse_label(value: object, w: _Where, path: str) -> str:
    if not isinstance(value, str | int | float) or isinstance(value, bool) or value == "":
        raise w.error(path, f"must be a non-empty string (got {_kind(value)})")
    return str(value)


def _parse_defaults(value: object, w: _Where) -> _Defaults:
    if value is None:
        return _Defaults()
    m = _mapping(value, w, "defaults")
    w = w.at(m)
    _known(m, _DEFAULT_KEYS, set(), w, "defaults")
    base = _Defaults()
    return _Defaults(
        expected=_parse_expected(m.get("expected"), w, base.expected),
        thresholds=_parse_thresholds(m.get("thresholds"), w, base.thresholds),
        variance=_parse_variance(m.get("variance"), w, base.variance),
        difficulty=_parse_label(m["difficulty"], w, "defaults.difficulty")
        if m.get("difficulty") is not None
        else None,
        tags=_strings(m["tags"], w, "defaults.tags") if m.get("tags") is not None else (),
    )


def _parse_test(value: object, w: _Where, defaults: _Defaults, position: int) -> TestCase:
    m = _mapping(value, w, f"tests[{position}]")
    w = w.at(m)
    raw_id = m.get("id", m.get("name"))
    if raw_id is None:
        raise w.error(f"tests[{position}]", "needs an `id` or a `name`")
    test_id = _parse_label(raw_id, w, "id" if "id" in m else "name")
    w = _Where(w.file, w.lines, w.line, test_id, w.key_lines)
    _known(m, _TEST_KEYS, _IGNORED_TEST_KEYS, w, "")
    if "input" not in m:
        raise w.error("input", "is required (any JSON-able value)")
    _check_jsonable(m["input"], w, "input")
    tags = defaults.tags
    if m.get("tags") is not None:
        tags = tuple(dict.fromkeys((*defaults.tags, *_strings(m["tags"], w, "tags"))))
    return TestCase(
        id=test_id,
        input=m["input"],
        expected=_parse_expected(m.get("expected"), w, defaults.expected),
        thresholds=_parse_thresholds(m.get("thresholds"), w, defaults.thresholds),
        variance=_parse_variance(m.get("variance"), w, defaults.variance),
        difficulty=_parse_label(m["difficulty"], w, "difficulty")
        if m.get("difficulty") is not None
        else defaults.difficulty,
        tags=tags,
        source=f"{w.file}:{w.line}" if w.line else w.file,
    )


def _check_jsonable(value: object, w: _Where, path: str) -> None:
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise w.error(path, f"must be JSON-able (got {value!r})")
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_jsonable(item, w, f"{path}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise w.error(path, f"keys must be strings to be JSON-able (got {key!r})")
            _check_jsonable(item, w, f"{path}.{key}")
        return
    raise w.error(path, f"must be JSON-able (got {type(value).__name__}: {value!r})")


def _load_file(path: Path) -> tuple[str | None, list[TestCase]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read suite: {exc}") from None
    loader = _LineLoader(text)
    try:
        document = loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        place = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SchemaError(f"{place}: not valid YAML: {problem}") from None
    finally:
        loader.dispose()
    w = _Where(str(path), loader.lines, 1, None, loader.key_lines)
    if document is None:
        raise w.error("", "the file is empty")
    m = _mapping(document, w, "")
    w = w.at(m)
    if "tests" in m:
        _known(m, _SUITE_KEYS, set(), w, "")
        name = _parse_label(m["name"], w, "name") if m.get("name") is not None else None
        defaults = _parse_defaults(m.get("defaults"), w)
        tests = m["tests"]
        if not isinstance(tests, list) or not tests:
            raise w.error("tests", f"must be a non-empty list of tests (got {_kind(tests)})")
        return name, [_parse_test(t, w, defaults, i) for i, t in enumerate(tests)]
    if "input" in m or "id" in m or "name" in m:
        # One test case per file (EvalView's layout).
        return None, [_parse_test(m, w, _Defaults(), 0)]
    raise w.error("", "a suite file needs `tests:` (a list), or one test with `name` and `input`")


def load_suite(path: str | Path) -> Suite:
    """Load a suite from a YAML file, or from every ``*.yaml``/``*.yml`` file under a folder.

    Args:
        path: A file, or a folder searched recursively (files in sorted order).

    Returns:
        The suite, validated.

    Raises:
        InputError: The path does not exist, or holds no YAML file.
        SchemaError: A file breaks the schema; the message names file, line, test and field.
    """
    root = Path(path)
    if root.is_dir():
        files = sorted(p for p in root.rglob("*") if p.suffix in {".yaml", ".yml"} and p.is_file())
        if not files:
            raise InputError(f"{root}: no *.yaml or *.yml suite files in this folder")
    elif root.is_file():
        files = [root]
    else:
        raise InputError(f"{root}: no such suite file or folder")
    tests: list[TestCase] = []
    seen: dict[str, str] = {}
    name: str | None = None
    for file in files:
        file_name, file_tests = _load_file(file)
        name = name or file_name
        for test in file_tests:
            if test.id in seen:
                raise SchemaError(
                    f"{test.source}: test {test.id!r}: duplicate test id (first at {seen[test.id]})"
                )
            seen[test.id] = test.source
            tests.append(test)
    suite_name = (
        name if (name and len(files) == 1) else (root.stem if root.is_file() else root.name)
    )
    return Suite(suite_name or "suite", tuple(tests), str(root))


def filter_error(difficulty: str | None, tags: Sequence[str]) -> ConfigError:
    """The error for a filter that selects no test."""
    parts = [f"difficulty {difficulty!r}"] if difficulty else []
    if tags:
        parts.append("tags " + ", ".join(repr(t) for t in tags))
    return ConfigError(f"no test matches {' and '.join(parts)}")
