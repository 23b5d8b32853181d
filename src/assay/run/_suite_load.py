"""Loading suites: YAML files (one file or a folder), validated with precise errors.

A file holds either a suite (a mapping with ``tests:``) or one test case (a mapping with
``name``/``id`` and ``input`` or ``turns``: the layout of an EvalView test file, read with
EvalView's meaning, see :mod:`assay.run._evalview`). Every error names the file, the line,
the test and the field. The schema is documented in ``docs/suites.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, InputError, SchemaError
from assay.quality import Finding
from assay.run import _evalview as ev
from assay.run._checks import compile_pattern
from assay.run._suite import (
    Expected,
    OutputExpectation,
    ScoreWeights,
    Suite,
    TestCase,
    Thresholds,
    Turn,
    Variance,
)
from assay.run._yaml import (
    Where,
    boolean,
    check_jsonable,
    kind,
    known,
    label,
    mapping,
    number,
    rate,
    read_yaml,
    strings,
)

_SUITE_KEYS = {"name", "description", "defaults", "tests"}
_DEFAULT_KEYS = {"expected", "thresholds", "variance", "difficulty", "tags"}
_EXPECTED_KEYS = {
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
_OUTPUT_KEYS = {
    "contains",
    "not_contains",
    "regex",
    "regex_patterns",
    "json_schema",
    "no_pii",
    *ev.UNSUPPORTED_OUTPUT,
}
_THRESHOLD_KEYS = {"min_score", "max_cost", "max_latency", "weights", "variance"}
_VARIANCE_KEYS = {"runs", "pass_rate", "min_mean_score", "max_std_dev", "confidence_level"}
_SEQUENCE_MODES = ("subsequence", "exact", "unordered")


@dataclass(slots=True)
class _File:
    """What the parse of one file needs besides the YAML: its dialect and what it noticed."""

    evalview: bool
    """EvalView's layout (one test per file): EvalView's meaning of its fields."""
    config: ev.EvalViewConfig
    """The folder's ``config.yaml`` (categories, weights), or an empty one."""
    unsupported: dict[str, str] = field(default_factory=dict)
    """Field -> what honouring it would take; one finding per file."""


def _parse_output(value: object, w: Where, base: OutputExpectation, f: _File) -> OutputExpectation:
    """The output checks; each key given replaces the same key of ``base`` (the defaults)."""
    m = mapping(value, w, "expected.output")
    w = w.at(m)
    known(m, _OUTPUT_KEYS, w, "expected.output")
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


def _parse_expected(value: object, w: Where, base: Expected, f: _File) -> Expected:
    if value is None:
        return base
    m = mapping(value, w, "expected")
    w = w.at(m)
    known(m, _EXPECTED_KEYS, w, "expected")
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


def _parse_thresholds(value: object, w: Where, base: Thresholds) -> Thresholds:
    if value is None:
        return base
    m = mapping(value, w, "thresholds")
    w = w.at(m)
    known(m, _THRESHOLD_KEYS, w, "thresholds")
    out = base
    for key in ("min_score", "max_cost", "max_latency"):
        if m.get(key) is not None:
            low = None if key == "min_score" else 0.0
            out = replace(out, **{key: number(m[key], w, f"thresholds.{key}", low=low)})
    return out


def _parse_variance(value: object, w: Where, base: Variance, path: str) -> Variance:
    if value is None:
        return base
    m = mapping(value, w, path)
    w = w.at(m)
    known(m, _VARIANCE_KEYS, w, path)
    out = base
    if m.get("runs") is not None:
        runs = m["runs"]
        if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
            raise w.error(f"{path}.runs", f"must be a whole number >= 1 (got {runs!r})")
        out = replace(out, runs=runs)
    if m.get("pass_rate") is not None:
        out = replace(out, pass_rate=rate(m["pass_rate"], w, f"{path}.pass_rate"))
    if m.get("confidence_level") is not None:
        level = number(m["confidence_level"], w, f"{path}.confidence_level")
        if not 0.5 <= level < 1:
            raise w.error(f"{path}.confidence_level", f"must lie in [0.5, 1) (got {level})")
        out = replace(out, confidence_level=level)
    if m.get("min_mean_score") is not None:
        low_mean = number(m["min_mean_score"], w, f"{path}.min_mean_score")
        out = replace(out, min_mean_score=low_mean)
    if m.get("max_std_dev") is not None:
        out = replace(out, max_std_dev=number(m["max_std_dev"], w, f"{path}.max_std_dev", low=0.0))
    return out


def _variance_of(m: dict[str, Any], w: Where, base: Variance, f: _File) -> Variance:
    """``thresholds.variance`` (where EvalView reads it) or the top-level alias ``variance``."""
    thresholds = m.get("thresholds")
    nested = thresholds.get("variance") if isinstance(thresholds, dict) else None
    if nested is not None and m.get("variance") is not None:
        raise w.at(m, "variance").error(
            "variance", "given twice: keep `thresholds.variance` (EvalView's place) only"
        )
    if nested is not None:
        assert isinstance(thresholds, dict)
        if f.evalview:
            # EvalView's VarianceConfig defaults: 10 runs unless the block says otherwise.
            base = replace(base, runs=ev.EVALVIEW_DEFAULT_RUNS)
        return _parse_variance(nested, w.at(thresholds), base, "thresholds.variance")
    return _parse_variance(m.get("variance"), w, base, "variance")


@dataclass(frozen=True, slots=True)
class _Defaults:
    expected: Expected = field(default_factory=Expected)
    thresholds: Thresholds = field(default_factory=Thresholds)
    variance: Variance = field(default_factory=Variance)
    difficulty: str | None = None
    tags: tuple[str, ...] = ()


def _parse_defaults(value: object, w: Where, f: _File) -> _Defaults:
    if value is None:
        return _Defaults()
    m = mapping(value, w, "defaults")
    w = w.at(m)
    known(m, _DEFAULT_KEYS, w, "defaults")
    base = _Defaults()
    return _Defaults(
        expected=_parse_expected(m.get("expected"), w, base.expected, f),
        thresholds=_parse_thresholds(m.get("thresholds"), w, base.thresholds),
        variance=_variance_of(m, w, base.variance, f),
        difficulty=label(m["difficulty"], w, "defaults.difficulty")
        if m.get("difficulty") is not None
        else None,
        tags=strings(m["tags"], w, "defaults.tags") if m.get("tags") is not None else (),
    )


def _with_categories(expected: Expected, table: dict[str, frozenset[str]], w: Where) -> Expected:
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


def _parse_turns(
    value: object, w: Where, base: Expected, f: _File, table: dict[str, frozenset[str]]
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
        expected = _parse_expected(t.get("expected"), tw, base, f)
        turns.append(Turn(query, context, _with_categories(expected, table, tw)))
    return tuple(turns)


def _parse_test(value: object, w: Where, defaults: _Defaults, position: int, f: _File) -> TestCase:
    m = mapping(value, w, f"tests[{position}]")
    w = w.at(m)
    raw_id = m.get("id", m.get("name"))
    if raw_id is None:
        raise w.error(f"tests[{position}]", "needs an `id` or a `name`")
    test_id = label(raw_id, w, "id" if "id" in m else "name")
    w = w.for_test(test_id)
    known(m, ev.TEST_KEYS, w, "")
    ev.note_unsupported(m, "", f.unsupported)
    extra = ev.parse_test_extras(m, w, f.config, f.unsupported)
    table = extra.categories
    base_expected = replace(
        defaults.expected, output=replace(defaults.expected.output, ignore_case=f.evalview)
    )
    turns = _parse_turns(m["turns"], w, base_expected, f, table) if "turns" in m else ()
    if "input" not in m and not turns:
        raise w.error("input", "is required (any JSON-able value), or `turns`")
    test_input = m["input"] if "input" in m else {"query": turns[0].query}
    check_jsonable(test_input, w, "input")
    test_input = ev.with_tools(test_input, extra.tools, w)
    tags = defaults.tags
    if m.get("tags") is not None:
        own = strings(m["tags"], w, "tags")
        if f.evalview:  # EvalView lower-cases tags (and --tag compares that way)
            own = tuple(t.strip().lower() for t in own)
        tags = tuple(dict.fromkeys((*defaults.tags, *own)))
    if extra.suite_type is not None:
        tags = tuple(dict.fromkeys((*tags, extra.suite_type)))
    thresholds_raw = m.get("thresholds")
    weights = ev.parse_weights(thresholds_raw, w, f.config.weights)
    # EvalView's files mean its weighted score by min_score; an assay suite opts in with weights.
    own_weights = isinstance(thresholds_raw, dict) and thresholds_raw.get("weights") is not None
    if f.evalview:
        score: ScoreWeights | None = weights or ScoreWeights()
    else:
        score = weights if own_weights else None
    expected = _parse_expected(m.get("expected"), w, base_expected, f)
    if extra.sequence_mode is not None:
        expected = replace(expected, sequence_mode=extra.sequence_mode)
    if extra.pii:  # checks.pii: EvalView's switch for the same PII check
        expected = replace(expected, output=replace(expected.output, no_pii=True))
    return TestCase(
        id=test_id,
        input=test_input,
        expected=_with_categories(expected, table, w),
        thresholds=_parse_thresholds(thresholds_raw, w, defaults.thresholds),
        variance=_variance_of(m, w, defaults.variance, f),
        difficulty=label(m["difficulty"], w, "difficulty")
        if m.get("difficulty") is not None
        else defaults.difficulty,
        tags=tags,
        source=f"{w.file}:{w.line}" if w.line else w.file,
        turns=turns,
        score=score,
        agent=extra.agent,
        mocks=extra.mocks,
        suite_type=extra.suite_type,
        fixed_runs=f.evalview,
    )


def _load_file(
    path: Path, config: ev.EvalViewConfig
) -> tuple[str | None, list[TestCase], Finding | None]:
    document, w = read_yaml(path)
    if document is None:
        raise w.error("", "the file is empty")
    m = mapping(document, w, "")
    w = w.at(m)
    if "tests" in m:
        f = _File(evalview=False, config=config)
        known(m, _SUITE_KEYS, w, "")
        name = label(m["name"], w, "name") if m.get("name") is not None else None
        defaults = _parse_defaults(m.get("defaults"), w, f)
        tests = m["tests"]
        if not isinstance(tests, list) or not tests:
            raise w.error("tests", f"must be a non-empty list of tests (got {kind(tests)})")
        parsed = [_parse_test(t, w, defaults, i, f) for i, t in enumerate(tests)]
        return name, parsed, ev.finding(str(path), f.unsupported)
    if "input" in m or "id" in m or "name" in m or "turns" in m:
        # One test case per file: EvalView's layout, read with EvalView's meaning.
        f = _File(evalview=True, config=config)
        test = _parse_test(m, w, _Defaults(), 0, f)
        return None, [test], ev.finding(str(path), f.unsupported)
    raise w.error("", "a suite file needs `tests:` (a list), or one test with `name` and `input`")


def load_suite(path: str | Path) -> Suite:
    """Load a suite from a YAML file, or from every ``*.yaml``/``*.yml`` file under a folder.

    A folder in EvalView's layout may hold a ``config.yaml`` (or ``.evalview/config.yaml``):
    it is not a test; its ``adapter`` and ``endpoint`` become the suite's agent.

    Args:
        path: A file, or a folder searched recursively (files in sorted order).

    Returns:
        The suite, validated, with one finding per file naming what assay does not honour.

    Raises:
        InputError: The path does not exist, or holds no YAML file.
        SchemaError: A file breaks the schema; the message names file, line, test and field.
    """
    root = Path(path)
    if root.is_dir():
        found = sorted(p for p in root.rglob("*") if p.suffix in {".yaml", ".yml"} and p.is_file())
        files = [p for p in found if not ev.is_config_file(p)]
        if not files:
            raise InputError(f"{root}: no *.yaml or *.yml suite files in this folder")
    elif root.is_file():
        files = [root]
    else:
        raise InputError(f"{root}: no such suite file or folder")
    config = ev.load_config(root)
    tests: list[TestCase] = []
    findings: list[Finding] = [config.finding] if config.finding else []
    seen: dict[str, str] = {}
    name: str | None = None
    for file in files:
        file_name, file_tests, finding = _load_file(file, config)
        if finding is not None:
            findings.append(finding)
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
    return Suite(suite_name or "suite", tuple(tests), str(root), tuple(findings), config.agent)


def filter_error(difficulty: str | None, tags: Sequence[str]) -> ConfigError:
    """The error for a filter that selects no test."""
    parts = [f"difficulty {difficulty!r}"] if difficulty else []
    if tags:
        parts.append("tags " + ", ".join(repr(t) for t in tags))
    return ConfigError(f"no test matches {' and '.join(parts)}")
