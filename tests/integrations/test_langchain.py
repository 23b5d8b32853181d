"""LangChain / LangGraph through OpenInference, mapped by ``session.id``.

OpenInference copies ``session.id`` onto every span; the trial is the top-most one. Offline: a
fake chat model answers from a seeded plan with tool calls; a handled ``ToolException`` is
recovered from (not an error); one run crashes in a tool.
"""

from __future__ import annotations

import pytest
from installed import installed
from recording import assert_trials_match

from assay import conventions as c

pytestmark = pytest.mark.slow  # importing the framework alone takes seconds

# find_spec, not an import: the framework is imported by the fixture, in the one worker that
# records it (``langchain_runs.py``), and a broken install fails the tests instead of skipping.
if not installed("langgraph"):
    pytest.skip("the frameworks extra is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def recording(record, provider):
    from langchain_runs import runs
    from openinference.instrumentation.langchain import LangChainInstrumentor

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        return record("langchain", runs)
    finally:
        instrumentor.uninstrument()


@pytest.mark.parametrize("source", ["parquet", "collector"])
def test_bare_runs_mapped_by_session_id_equal_ground_truth(recording, source) -> None:
    trials = recording.trials(source, api=False, test_attribute=c.OPENINFERENCE_SESSION_ID)
    assert_trials_match(trials, recording.raw)
    assert sorted(set(trials["outcome"])) == ["error", "pass"]


@pytest.mark.parametrize("source", ["parquet", "collector"])
def test_runs_framed_by_the_assay_api_equal_ground_truth(recording, source) -> None:
    assert_trials_match(recording.trials(source, api=True), recording.api)
