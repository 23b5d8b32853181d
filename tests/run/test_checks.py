"""Checks from `expected` on an output and a tool sequence."""

from __future__ import annotations

from assay.run import Expected, OutputExpectation, evaluate_checks, output_text


def test_tools_sequence_and_forbidden() -> None:
    expected = Expected(
        tools=("search",),
        tool_sequence=("search", "book"),
        forbidden_tools=("EditFile",),
    )
    ok = dict(evaluate_checks(expected, "x", ["plan", "search", "think", "book"]))
    assert ok == {
        "tool called: search": True,
        "tool sequence: search > book": True,
        "tool not called: EditFile": True,
    }
    bad = dict(evaluate_checks(expected, "x", ["book", "search", "edit-file"]))
    assert bad == {
        "tool called: search": True,
        "tool sequence: search > book": False,
        "tool not called: EditFile": False,
    }


def test_output_checks_read_the_answer_text_and_json_schema() -> None:
    schema = {"type": "object", "required": ["answer"]}
    expected = Expected(
        output=OutputExpectation(
            contains=("30 days",), not_contains=("sorry",), regex=(r"\d+ days",), json_schema=schema
        )
    )
    results = dict(evaluate_checks(expected, {"answer": "within 30 days"}, []))
    assert all(results.values()), results
    results = dict(evaluate_checks(expected, "sorry, no", []))
    assert results == {
        "output contains: 30 days": False,
        "output does not contain: sorry": False,
        "output matches: \\d+ days": False,
        "output matches JSON schema": False,
    }
    assert dict(evaluate_checks(expected, '{"answer": "30 days"}', []))[
        "output matches JSON schema"
    ]


def test_output_text() -> None:
    assert output_text("plain") == "plain"
    assert output_text({"response": "r", "x": 1}) == "r"
    assert output_text({"x": [1, 2]}) == '{"x": [1, 2]}'
    assert output_text(None) == "null"
