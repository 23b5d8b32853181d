"""Fixtures of the report tests: the hand-built result of ``sample_result.py``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from sample_result import build_result

from assay.judge import AnalysisResult


@pytest.fixture()
def result() -> AnalysisResult:
    return build_result()


@pytest.fixture()
def empty_result() -> AnalysisResult:
    """The same tests with every nested figure null (as before the statistics are wired)."""
    built = build_result()
    bare = tuple(
        dataclasses.replace(
            t,
            pass_at_k=None,
            pass_hat_k=None,
            score=None,
            primary_score=None,
            scores={},
            tool_consistency=None,
            flakiness=None,
            failure_explanations=(),
            regression=None,
            threshold_verdict=None,
            sequential=None,
        )
        for t in built.tests
    )
    return dataclasses.replace(built, tests=bare)


@pytest.fixture(autouse=True)
def _not_on_github(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("ASSAY_TRACE_URL", raising=False)
    yield
