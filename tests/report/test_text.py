"""The shared words and numbers of every report."""

from __future__ import annotations

from assay.report import _text as tx


def test_sequence_text_folds_repeats() -> None:
    assert tx.sequence_text(["a", "b", "b", "b", "c", "a"]) == "a → b ×3 → c → a"
    assert tx.sequence_text([]) == "(no tool calls)"
    assert tx.sequence_text(["x"]) == "x"


def test_tool_consistency_both_forms() -> None:
    assert tx.tool_consistency_text(None) is None
    assert tx.tool_consistency_text(0.5) == "consistency 50%"
    text = tx.tool_consistency_text(
        {"agreement": 0.25, "distinct": 1, "mean_similarity": 0.9, "most_common": [[["a"], 3]]}
    )
    assert text == (
        "25% of trial pairs took the same path; 1 distinct sequence; mean similarity 0.9; "
        "most common: a (3×)"
    )


def test_passk_orders_k_numerically() -> None:
    assert tx.passk_text({"10": 1.0, "2": 0.5, "1": 0.25}, "pass@") == (
        "pass@1 25% · pass@2 50% · pass@10 100%"
    )
    assert tx.passk_text(None, "pass@") is None
    # Objects with a value (and a reason when it is null) are read too.
    assert tx.passk_text({"1": {"k": 1, "value": 0.5}, "50": {"value": None}}, "pass^") == (
        "pass^1 50% · pass^50 —"
    )
    assert tx.passk_text({}, "pass@") is None


def test_flakiness_reasons_tolerate_partial_objects() -> None:
    assert tx.flakiness_reasons(None) == []
    assert tx.flakiness_headline({"score": None}) is None
    reasons = tx.flakiness_reasons(
        {
            "score": 0.3,
            "factors": [
                {"name": "error_rate", "value": 0.1},
                "junk",
                {"name": "latency_dispersion", "value": 0.0, "detail": "steady"},
            ],
        }
    )
    assert reasons == ["error rate [error rate 0.1]"]  # factors at 0 explain nothing
    steady = {"factors": [{"name": "a", "value": 0.0, "detail": "x"}, {"name": "b", "value": 0}]}
    assert tx.flakiness_reasons(steady) == ["x [a 0]"]


def test_failure_explanations_from_flakiness_or_test() -> None:
    item = {"feature": "calls:search", "detail": "failing trials search more", "p_value": 0.004}
    assert tx.failure_explanations({"flakiness": {"explanations": [item]}}) == [
        "failing trials search more (p = 0.004)"
    ]
    with_p = {**item, "detail": "failing trials search more, p < 0.001"}
    assert tx.failure_explanations({"flakiness": None, "explanations": [with_p]}) == [
        "failing trials search more, p < 0.001"
    ]
    assert tx.failure_explanations({"flakiness": None}) == []


def test_missing_numbers_print_as_dashes() -> None:
    assert tx.pct(None) == "—" and tx.pct(float("nan")) == "—" and tx.pct(True) == "—"
    assert tx.num(None) == "—"
    assert tx.regression_text({"regression": None}) is None
    assert tx.regression_text({"regression": {"verdict": "PASS"}}) == "regression PASS"


def test_every_format_renders_an_empty_result() -> None:
    import io

    from rich.console import Console

    from assay.report import (
        render_annotations,
        render_console,
        render_html,
        render_json,
        render_junit,
        render_markdown,
    )
    from assay.verdict import AnalysisResult

    empty = AnalysisResult(tests=(), options={"threshold": 0.8, "confidence": 0.95})
    assert "## assay: no tests (0 tests)" in render_markdown(empty)
    assert 'tests="0"' in render_junit(empty)
    assert render_annotations(empty) == ""
    assert "<svg" not in render_html(empty)
    assert '"tests": 0' in render_json(empty)
    buffer = io.StringIO()
    render_console(empty, Console(file=buffer, width=100))
    assert "0 tests" in buffer.getvalue()
