"""The exit-code rule as a library value (``AnalysisResult.decision``), on small real suites.

The 300-case suites of issue 47 and the CLI runs are in ``tests/test_exit_rule.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from assay.api import analyze, compare
from assay.judge import CASE_RULE, SUITE_RULE, AnalyzeOptions, Verdict, exit_code

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from suite_sets import write_pair  # noqa: E402


@pytest.fixture(scope="module")
def twelve(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two draws of one agent over 12 cases × 3 trials (Beta(2, 1) case rates)."""
    return write_pair(tmp_path_factory.mktemp("twelve"), 12, 3, drop=0.0, seed=0)


def test_exit_code_of_verdicts() -> None:
    assert exit_code([]) == 0
    assert exit_code([Verdict.PASS, Verdict.INCONCLUSIVE]) == 3
    assert exit_code([Verdict.PASS, Verdict.INCONCLUSIVE], inconclusive_ok=True) == 0
    assert exit_code([Verdict.INCONCLUSIVE, Verdict.FAIL], inconclusive_ok=True) == 1


def test_with_a_baseline_the_suite_comparison_decides(twelve: tuple[Path, Path]) -> None:
    result = compare(*map(str, twelve)).result
    decision = result.decision
    (suite,) = [s for s in result.suites if s.comparison is not None]
    assert decision.rule == SUITE_RULE
    # Only the comparison counts: no case's drop survives Holm at 3 trials a version.
    assert [(c.kind, c.verdict) for c in decision.counted] == [
        ("comparison", suite.comparison.verdict)  # type: ignore[union-attr]
    ]
    assert decision.verdict is suite.comparison.verdict  # type: ignore[union-attr]
    assert result.exit_code() == exit_code([decision.verdict])
    assert decision.not_counted is not None and decision.case_tests is not None
    assert "no single case can show a drop" in decision.case_tests
    # The cases' own verdicts are reported beside it, and differ from it here.
    assert any(t.verdict is not Verdict.PASS for t in result.tests)


def test_gate_cases_and_an_explicit_threshold_count_the_cases(twelve: tuple[Path, Path]) -> None:
    gated = compare(*map(str, twelve), AnalyzeOptions(gate_cases=True)).result
    kinds = {c.kind for c in gated.decision.counted}
    assert kinds == {"comparison", "case"} and gated.decision.not_counted is None
    severity = [Verdict.PASS, Verdict.INCONCLUSIVE, Verdict.FAIL].index
    (suite,) = [s for s in gated.suites if s.comparison is not None]
    every = [t.verdict for t in gated.tests] + [suite.comparison.verdict]  # type: ignore[union-attr]
    assert gated.decision.verdict is max(every, key=severity)
    asked = compare(*map(str, twelve), AnalyzeOptions(threshold=0.5)).result
    assert {c.kind for c in asked.decision.counted} == {"comparison", "case threshold"}


def test_without_a_baseline_every_case_counts(twelve: tuple[Path, Path]) -> None:
    result = analyze(str(twelve[1])).result
    assert result.decision.rule == CASE_RULE
    assert {c.what for c in result.decision.counted} == {t.test_id for t in result.tests}
    assert result.exit_code() == exit_code(t.verdict for t in result.tests)
