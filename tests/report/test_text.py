"""The shared words and numbers of every report, read from the typed result."""

from __future__ import annotations

import dataclasses

from sample_result import build_result

from assay.report import _text as tx
from assay.stats import Factor, Flakiness, ToolConsistency


def test_sequence_text_folds_repeats() -> None:
    assert tx.sequence_text(["a", "b", "b", "b", "c", "a"]) == "a → b ×3 → c → a"
    assert tx.sequence_text([]) == "(no tool calls)"
    assert tx.sequence_text(["x"]) == "x"


def test_tool_consistency_text() -> None:
    assert tx.tool_consistency_text(None) is None
    text = tx.tool_consistency_text(ToolConsistency(3, 0.25, 0.9, 1, ((("a",), 3),)))
    assert text == (
        "25% of trial pairs took the same path; 1 distinct sequence; mean similarity 0.9; "
        "most common: a (3×)"
    )


def test_passk_orders_k_numerically() -> None:
    assert tx.passk_text({"10": 1.0, "2": 0.5, "1": 0.25}, "pass@") == (
        "pass@1 25% · pass@2 50% · pass@10 100%"
    )
    assert tx.passk_text({"1": 0.5, "50": None}, "pass^") == "pass^1 50% · pass^50 —"
    assert tx.passk_text(None, "pass@") is None
    assert tx.passk_text({}, "pass@") is None


def test_flakiness_reasons_leave_steady_factors_out() -> None:
    assert tx.flakiness_reasons(None) == []
    assert tx.flakiness_headline(None) is None
    flaky = Flakiness(
        0.3,
        "moderate_variance",
        (Factor("error_rate", 0.1, ""), Factor("latency_dispersion", 0.0, "steady")),
    )
    assert tx.flakiness_headline(flaky) == "0.3 (moderate variance)"
    assert tx.flakiness_reasons(flaky) == ["error rate [error rate 0.1]"]
    steady = Flakiness(0.0, "stable", (Factor("a", 0.0, "x"), Factor("b", 0.0, "y")))
    assert tx.flakiness_reasons(steady) == ["x [a 0]"]


def test_failure_explanations_add_the_p_value_once() -> None:
    test = build_result().tests[0]
    (factor,) = test.failure_explanations
    bare = dataclasses.replace(factor, detail="failing trials search more")
    plain = dataclasses.replace(test, failure_explanations=(bare,))
    assert tx.failure_explanations(plain) == [
        f"failing trials search more (p = {factor.p_adjusted:.2g})"
    ]
    with_p = dataclasses.replace(factor, detail="failing trials search more, p < 0.001")
    marked = dataclasses.replace(test, failure_explanations=(with_p,))
    assert tx.failure_explanations(marked) == ["failing trials search more, p < 0.001"]
    assert tx.failure_explanations(dataclasses.replace(test, failure_explanations=())) == []


def test_missing_numbers_print_as_dashes() -> None:
    assert tx.pct(None) == "—" and tx.pct(float("nan")) == "—"
    assert tx.num(None) == "—" and tx.num(float("inf")) == "—"
    passing = build_result().tests[2]
    assert tx.regression_text(passing) is None


def test_an_adaptive_verdict_shows_its_anytime_interval() -> None:
    greeting = build_result().tests[2]
    assert greeting.sequential is not None and greeting.interval is not None
    low, high = greeting.interval.low, greeting.interval.high
    assert greeting.interval.method == "confidence-sequence"
    assert low >= greeting.threshold  # the PASS is the interval's
    assert tx.shown_interval(greeting) == (low, high)
    assert tx.interval_label(greeting) == f"anytime [{tx.pct(low)}, {tx.pct(high)}]"
    text = tx.sequential_text(greeting)
    assert text is not None and text.startswith(f"anytime-valid interval [{tx.pct(low)}")
    fixed = build_result().tests[0]
    assert fixed.interval is not None and tx.sequential_text(fixed) is None
    assert tx.shown_interval(fixed) == (fixed.interval.low, fixed.interval.high)


def test_every_format_renders_an_empty_result() -> None:
    import io

    from rich.console import Console

    from assay.judge import AnalysisResult
    from assay.report import (
        render_annotations,
        render_console,
        render_html,
        render_json,
        render_junit,
        render_markdown,
    )

    empty = AnalysisResult(tests=(), options={"threshold": 0.8, "confidence": 0.95})
    assert "## assay: no tests (0 tests)" in render_markdown(empty)
    assert 'tests="0"' in render_junit(empty)
    assert render_annotations(empty) == ""
    assert "<svg" not in render_html(empty)
    assert '"tests": 0' in render_json(empty)
    buffer = io.StringIO()
    render_console(empty, Console(file=buffer, width=100))
    assert "0 tests" in buffer.getvalue()


def test_score_text_says_when_the_interval_was_cut_or_scores_tied() -> None:
    from assay.report._text import score_text
    from assay.stats import score_summary

    cut = score_text(score_summary([0.2, 1.0, 1.0], bounds=(0.0, 1.0), bounds_source="assumed"))
    assert "cut to its assumed range 0–1" in cut
    tied = score_text(score_summary([0.8] * 5))
    assert "(all tied: no interval)" in tied and "CI" not in tied
    plain = score_text(score_summary([0.4, 0.5, 0.6], bounds=(0.0, 1.0)))
    assert "CI" in plain and "cut" not in plain
