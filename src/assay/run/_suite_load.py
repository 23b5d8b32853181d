"""Loading suites: YAML files (one file or a folder), validated with precise errors.

A file holds either a suite (a mapping with ``tests:``) or one test case (a mapping with
``name``/``id`` and ``input`` or ``turns``: the layout of an EvalView test file, read with
EvalView's meaning, see :mod:`assay.run._evalview`). Every error names the file, the line,
the test and the field. The schema is documented in ``docs/suites.md``.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, InputError, SchemaError
from assay.quality import Finding
from assay.run import _evalview as ev
from assay.run._evalview_config import (
    EvalViewConfig,
    finding,
    is_config_file,
    load_config,
    parse_weights,
)
from assay.run._expected_load import FileContext, parse_expected, parse_turns, with_categories
from assay.run._suite import (
    Expected,
    ScoreWeights,
    Suite,
    TestCase,
    Thresholds,
    Variance,
)
from assay.run._yaml import (
    Where,
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
_THRESHOLD_KEYS = {"min_score", "max_cost", "max_latency", "weights", "variance"}
_VARIANCE_KEYS = {"runs", "pass_rate", "min_mean_score", "max_std_dev", "confidence_level"}


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


def _variance_of(m: dict[str, Any], w: Where, base: Variance, f: FileContext) -> Variance:
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


def _parse_defaults(value: object, w: Where, f: FileContext) -> _Defaults:
    if value is None:
        return _Defaults()
    m = mapping(value, w, "defaults")
    w = w.at(m)
    known(m, _DEFAULT_KEYS, w, "defaults")
    base = _Defaults()
    return _Defaults(
        expected=parse_expected(m.get("expected"), w, base.expected, f),
        thresholds=_parse_thresholds(m.get("thresholds"), w, base.thresholds),
        variance=_variance_of(m, w, base.variance, f),
        difficulty=label(m["difficulty"], w, "defaults.difficulty")
        if m.get("difficulty") is not None
        else None,
        tags=strings(m["tags"], w, "defaults.tags") if m.get("tags") is not None else (),
    )


def _parse_test(
    value: object, w: Where, defaults: _Defaults, position: int, f: FileContext
) -> TestCase:
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
    turns = parse_turns(m["turns"], w, base_expected, f, table) if "turns" in m else ()
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
    weights = parse_weights(thresholds_raw, w, f.config.weights)
    # EvalView's files mean its weighted score by min_score; an assay suite opts in with weights.
    own_weights = isinstance(thresholds_raw, dict) and thresholds_raw.get("weights") is not None
    if f.evalview:
        score: ScoreWeights | None = weights or ScoreWeights()
    else:
        score = weights if own_weights else None
    expected = parse_expected(m.get("expected"), w, base_expected, f)
    if extra.sequence_mode is not None:
        expected = replace(expected, sequence_mode=extra.sequence_mode)
    if extra.pii:  # checks.pii: EvalView's switch for the same PII check
        expected = replace(expected, output=replace(expected.output, no_pii=True))
    return TestCase(
        id=test_id,
        input=test_input,
        expected=with_categories(expected, table, w),
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


MAX_TESTS = 10_000
"""Most tests one suite file may hold: each costs a trial plan and a verdict, and 100,000 once
took 79 s and 1.1 GB to dry-run. Split larger suites into files."""


def _load_file(
    path: Path, config: EvalViewConfig
) -> tuple[str | None, list[TestCase], Finding | None]:
    document, w = read_yaml(path)
    if document is None:
        raise w.error("", "the file is empty")
    m = mapping(document, w, "")
    w = w.at(m)
    if "tests" in m:
        f = FileContext(evalview=False, config=config)
        known(m, _SUITE_KEYS, w, "")
        name = label(m["name"], w, "name") if m.get("name") is not None else None
        defaults = _parse_defaults(m.get("defaults"), w, f)
        tests = m["tests"]
        if not isinstance(tests, list) or not tests:
            raise w.error("tests", f"must be a non-empty list of tests (got {kind(tests)})")
        if len(tests) > MAX_TESTS:
            raise w.error(
                "tests", f"{len(tests):,} tests; a suite file holds at most {MAX_TESTS:,}"
            )
        parsed = [_parse_test(t, w, defaults, i, f) for i, t in enumerate(tests)]
        return name, parsed, finding(str(path), f.unsupported)
    if "input" not in m and "turns" not in m:
        # Not a test case (it has no input): a key close to `tests` is a misspelt suite, named
        # as such rather than read as a test's unknown field.
        for key in m:
            if difflib.get_close_matches(key.lower(), ["tests"], n=1, cutoff=0.75):
                raise w.at(m, key).error("", f"unknown field {key!r} (did you mean 'tests'?)")
    if "input" in m or "id" in m or "name" in m or "turns" in m:
        # One test case per file: EvalView's layout, read with EvalView's meaning.
        f = FileContext(evalview=True, config=config)
        test = _parse_test(m, w, _Defaults(), 0, f)
        return None, [test], finding(str(path), f.unsupported)
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
        files = [p for p in found if not is_config_file(p)]
        if not files:
            raise InputError(f"{root}: no *.yaml or *.yml suite files in this folder")
    elif root.is_file():
        files = [root]
    else:
        raise InputError(f"{root}: no such suite file or folder")
    config = load_config(root)
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
