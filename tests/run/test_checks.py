"""Checks from `expected` on an output and a tool sequence."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from assay.run import Expected, OutputExpectation, evaluate_checks, output_text
from assay.run._checks import sequence_progress


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


def test_tool_categories_and_sequence_modes() -> None:
    expected = Expected(
        tool_categories=("search",),
        categories={"search": frozenset({"grep", "rg"})},
        tool_sequence=("a", "b"),
        sequence_mode="exact",
    )
    assert dict(evaluate_checks(expected, "", ["a", "rg", "b"])) == {
        "tool of category called: search": True,
        "tool sequence: a > b (exact)": False,
    }
    assert dict(evaluate_checks(expected, "", ["a", "b"]))["tool sequence: a > b (exact)"]
    unordered = replace(expected, sequence_mode="unordered")
    assert dict(evaluate_checks(unordered, "", ["b", "x", "a"]))["tool sequence: a > b (unordered)"]
    assert not dict(evaluate_checks(unordered, "", ["b"]))["tool of category called: search"]


@given(
    st.lists(st.sampled_from("abcd"), max_size=8),
    st.lists(st.sampled_from("abcd"), min_size=1, max_size=5).map(tuple),
    st.sampled_from(["subsequence", "exact", "unordered"]),
)
def test_sequence_progress_is_a_share_and_one_exactly_when_matched(
    calls: list[str], wanted: tuple[str, ...], mode: str
) -> None:
    progress = sequence_progress(calls, wanted, mode)
    assert 0 <= progress <= 1
    assert progress * len(wanted) == round(progress * len(wanted))  # a count of matched steps
    if mode == "exact":
        assert (calls == list(wanted)) <= (progress == 1)
    else:
        assert (progress == 1) == _matched(calls, wanted, mode)


def _matched(calls: list[str], wanted: tuple[str, ...], mode: str) -> bool:
    if mode == "unordered":
        return all(calls.count(x) >= wanted.count(x) for x in set(wanted))
    it = iter(calls)
    return all(any(c == w for c in it) for w in wanted)


def test_evalview_matching_ignores_case() -> None:
    out = OutputExpectation(contains=("Paris",), not_contains=("ERROR",), regex=("^yes.",))
    expected = Expected(output=replace(out, ignore_case=True))
    assert not dict(evaluate_checks(expected, "YES\nparis, no error", []))[
        "output does not contain: ERROR"
    ]
    results = dict(evaluate_checks(expected, "YES\nparis", []))
    assert all(results.values()), results  # DOTALL: `.` matches the newline, as in EvalView
    exact = dict(evaluate_checks(Expected(output=out), "YES\nparis", []))
    assert exact == {
        "output contains: Paris": False,
        "output does not contain: ERROR": True,
        "output matches: ^yes.": False,
    }
