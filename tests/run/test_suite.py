"""Suites: loading, defaults, EvalView files, and a precise error for every bad suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import InputError, SchemaError
from assay.run import load_suite

ROOT = Path(__file__).resolve().parents[2]


def test_example_suite_loads_with_defaults_merged() -> None:
    suite = load_suite(ROOT / "examples" / "suite.yaml")
    assert suite.name == "example-support"
    by_id = {t.id: t for t in suite.tests}
    research = by_id["multi-step-research"]
    assert research.variance.runs == 60 and research.variance.pass_rate == 0.8
    assert research.tags == ("support", "research")
    assert research.expected.output.contains == ("resolved",)
    greeting = by_id["greeting"]  # its own output.json_schema merges with the defaults' output
    assert greeting.expected.output.contains == ("resolved",)
    assert greeting.expected.output.not_contains == ("could not",)
    assert greeting.expected.output.json_schema is not None
    assert research.expected.tools == ("search_kb", "summarise")
    assert suite.select(difficulty="hard") == (research,)
    assert {t.id for t in suite.select(tags=["research"])} == {"multi-step-research"}


EVALVIEW = """
name: "Stock price lookup"
description: "Statistical mode: runs several times"
input:
  query: "What is the price of AAPL?"
  context: {}
expected:
  tools: [fetch_stock_price]
  output:
    contains: ["AAPL"]
    not_contains: ["error"]
thresholds:
  min_score: 70
  max_cost: 0.50
  max_latency: 5000
variance:
  runs: 10
  pass_rate: 0.8
  min_mean_score: 70
  max_std_dev: 15
adapter: http
endpoint: http://localhost:8000/invoke
"""


def test_an_evalview_statistical_mode_file_loads_as_is(tmp_path: Path) -> None:
    (tmp_path / "stock.yaml").write_text(EVALVIEW)
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "other.yml").write_text("name: other\ninput: hi\n")
    suite = load_suite(tmp_path)
    other, stock = suite.tests  # files in sorted path order: nested/other.yml first
    assert stock.id == "Stock price lookup"
    assert stock.variance.runs == 10 and stock.variance.min_mean_score == 70
    assert stock.variance.max_std_dev == 15
    assert stock.thresholds.max_latency == 5000 and stock.thresholds.min_score == 70
    assert stock.input == {"query": "What is the price of AAPL?", "context": {}}
    assert other.input == "hi" and other.variance.runs == 30


def _error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(SchemaError) as info:
        load_suite(path)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("tests: [\n", ["bad.yaml:", "not valid YAML"]),
        ("", ["the file is empty"]),
        ("- a\n- b\n", ["must be a mapping"]),
        ("foo: 1\n", ["needs `tests:`"]),
        ("tests: []\n", ["tests:", "non-empty list"]),
        ("tests:\n  - input: 1\n", ["bad.yaml:2", "tests[0]", "needs an `id` or a `name`"]),
        ("tests:\n  - name: a\n", ["test 'a'", "input:", "is required"]),
        (
            "tests:\n  - name: a\n    input: 1\n    expectd: {}\n",
            ["bad.yaml:4", "test 'a'", "expectd:", "unknown field"],
        ),
        (
            "tests:\n  - name: a\n    input: 1\n    expected:\n"
            "      tools: search\n      tool: [x]\n",
            ["bad.yaml:6", "expected.tool:", "unknown field"],
        ),
        (
            "tests:\n  - name: a\n    input: 1\n    expected: {tools: [1]}\n",
            ["expected.tools[0]", "non-empty string"],
        ),
        (
            "tests:\n  - name: a\n    input: 1\n    expected: {output: {contains: [no]}}\n",
            ["expected.output.contains[0]", "quote it"],
        ),
        (
            "tests:\n  - name: a\n    input: 1\n    expected: {output: {regex: ['(']}}\n",
            ["expected.output.regex", "bad regular expression"],
        ),
        (
            "tests:\n  - name: a\n    input: 1\n    expected: {output: {json_schema: {type: 5}}}\n",
            ["expected.output.json_schema", "not a valid JSON Schema"],
        ),
        (
            "tests:\n  - name: a\n    input: 1\n    expected: {tools: [x], forbidden_tools: [x]}\n",
            ["expected.forbidden_tools", "also required: x"],
        ),
        (
            "tests:\n  - name: a\n    input: 1\n    variance: {runs: 0}\n",
            ["test 'a'", "variance.runs", ">= 1"],
        ),
        (
            "tests:\n  - name: a\n    input: 1\n    variance: {pass_rate: 1.5}\n",
            ["variance.pass_rate", "[0, 1]"],
        ),
        (
            "tests:\n  - name: a\n    input: 1\n    variance: {confidence_level: 1}\n",
            ["variance.confidence_level"],
        ),
        (
            "tests:\n  - name: a\n    input: 1\n    thresholds: {max_cost: -1}\n",
            ["thresholds.max_cost", "at least 0"],
        ),
        (
            "tests:\n  - name: a\n    input: 1\n    thresholds: {max_latency: fast}\n",
            ["thresholds.max_latency", "must be a number"],
        ),
        ("tests:\n  - name: a\n    input: 1\n  - name: a\n    input: 2\n", ["duplicate test id"]),
        ("defaults: {variance: {runs: x}}\ntests:\n  - {name: a, input: 1}\n", ["variance.runs"]),
        ("defaults: {runs: 3}\ntests:\n  - {name: a, input: 1}\n", ["defaults.runs", "unknown"]),
        ("tests:\n  - name: a\n    input: .nan\n", ["input", "JSON-able"]),
        ("tests:\n  - name: a\n    input: {1: x}\n", ["input", "keys must be strings"]),
    ],
)
def test_bad_suites_get_one_precise_line(tmp_path: Path, text: str, fragments: list[str]) -> None:
    message = _error(tmp_path, text)
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("test:\n  - {name: a, input: 1}\n", 1, "test"),
        ("name: s\ntest:\n  - {name: a, input: 1}\n", 2, "test"),
        ("name: s\ndefaults: {variance: {runs: 5}}\nTests:\n  - {name: a, input: 1}\n", 3, "Tests"),
    ],
)
def test_misspelt_tests_key_is_named(tmp_path: Path, text: str, line: int, key: str) -> None:
    # Not read as one test case whose `defaults` or `test` would be an unknown field.
    assert _error(tmp_path, text) == (
        f"{tmp_path / 'bad.yaml'}:{line}: unknown field {key!r} (did you mean 'tests'?)"
    )


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such suite"):
        load_suite(tmp_path / "nope.yaml")
    with pytest.raises(InputError, match="no \\*.yaml"):
        load_suite(tmp_path)


def _laughs(levels: int) -> str:
    """A YAML alias bomb: ``levels`` lines that expand to 10**levels strings."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        refs = ", ".join([f"*l{i - 1}"] * 10)
        lines.append(f"l{i}: &l{i} [{refs}]")
    return "tests:\n  - id: t\n    input:\n" + "".join(f"      {line}\n" for line in lines)


def test_hostile_suite_files_are_refused_in_bounded_time(tmp_path: Path) -> None:
    """An alias bomb ran > 120 s even with --dry-run; 100,000-deep nesting was a
    RecursionError traceback; 100,000 tests took 79 s and 1.1 GB to dry-run."""
    import time

    cases = [
        (_laughs(9), "through its aliases (an alias bomb?)"),
        (
            "tests:\n  - id: t\n    input: " + "[" * 100_000 + "]" * 100_000 + "\n",
            "nested deeper than 64",
        ),
        ("tests: &a\n  - *a\n", "refers to a value holding itself"),
        (
            "tests:\n" + "  - {id: t, input: x}\n" * 10_001,
            "10,001 tests; a suite file holds at most 10,000",
        ),
    ]
    for text, expected in cases:
        started = time.process_time()
        message = _error(tmp_path, text)
        assert expected in message and "bad.yaml:" in message, message
        assert time.process_time() - started < 10, expected
    small = _laughs(3)  # aliases that expand to a thousand values are fine
    (tmp_path / "ok.yaml").write_text(small)
    (test,) = load_suite(tmp_path / "ok.yaml").tests
    assert len(test.input["l2"]) == 10
