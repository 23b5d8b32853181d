"""pydantic-ai, through its built-in OpenTelemetry GenAI instrumentation, mapped by agent name.

Offline: a ``FunctionModel`` plays the model from a seeded plan (``pydantic_ai_runs.py``). Tools
choose at random, one raises ``ModelRetry`` (the agent recovers: not an error), one run crashes
(an error).
"""

from __future__ import annotations

import pytest
from installed import installed
from recording import assert_trials_match

from assay import conventions as c

pytestmark = pytest.mark.slow  # importing the framework alone takes seconds

# find_spec, not an import: the framework is imported by the fixture, in the one worker that
# records it, and a broken install fails the tests instead of skipping them.
if not installed("pydantic_ai"):
    pytest.skip("the frameworks extra is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def recording(record):
    from pydantic_ai_runs import runs

    return record("pydantic_ai", runs)


@pytest.mark.parametrize("source", ["parquet", "collector"])
def test_bare_runs_mapped_by_agent_name_equal_ground_truth(recording, source) -> None:
    trials = recording.trials(source, api=False, test_attribute=c.GENAI_AGENT_NAME)
    assert_trials_match(trials, recording.raw)
    assert sorted(set(trials["outcome"])) == ["error", "pass"]
    assert trials.filter(trials["retries"] > 0).height == sum(
        t.tools.count("flaky") == 2 for t in recording.raw
    )


@pytest.mark.parametrize("source", ["parquet", "collector"])
def test_runs_framed_by_the_assay_api_equal_ground_truth(recording, source) -> None:
    assert_trials_match(recording.trials(source, api=True), recording.api)


def test_the_mapping_is_reported_as_nesting_not_analysed_in_silence(recording) -> None:
    import assay

    analysis = assay.analyze(
        recording.parquet_raw, assay.AnalyzeOptions(test_attribute=c.GENAI_AGENT_NAME)
    )
    kinds = {f.kind for f in analysis.result.data_quality.findings}
    assert "nested_mapping" in kinds and "outcome_from_errors_only" in kinds


def test_tool_errors_reach_every_test_result(recording) -> None:
    import assay

    analysis = assay.analyze(
        recording.parquet_raw, assay.AnalyzeOptions(test_attribute=c.GENAI_AGENT_NAME)
    )
    document = analysis.to_dict()
    for test, shown in zip(analysis.result.tests, document["tests"], strict=True):
        # A ModelRetry (flaky called twice) and the crashing tool are the tool errors.
        per_run = [
            int(t.tools.count("flaky") == 2) + t.tools.count("explode")
            for t in recording.raw
            if t.test_id == test.test_id
        ]
        assert test.tool_errors is not None
        assert (test.tool_errors.count, test.tool_errors.trials) == (
            sum(per_run),
            sum(n > 0 for n in per_run),
        )
        assert shown["tool_errors"]["count"] == sum(per_run)
        assert test.tool_errors.messages and test.tool_errors.first_trace_id
        if test.first_error is not None:
            assert not test.first_error.startswith("trial ?")
