"""The OpenAI Agents SDK under both OpenTelemetry bridges, against a fake OpenAI server.

``openai-agents-opentelemetry`` is mapped by ``agent.workflow.name`` (``RunConfig``), the
OpenInference bridge by ``session.id`` (``using_session``). Runs choose tools and handoffs at
random; a tool failure the model recovers from is not an error; one run crashes.
"""

from __future__ import annotations

import pytest
from installed import installed
from recording import assert_trials_match

from assay import conventions as c
from assay.analysis import columns as tc

pytestmark = pytest.mark.slow  # importing the framework alone takes seconds

# find_spec, not an import: the framework is imported by the fixtures, in the one worker that
# records it (``openai_agents_runs.py``), and a broken install fails the tests instead of
# skipping them.
if not installed("agents"):
    pytest.skip("the frameworks extra is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def fake():
    from fake_openai import FakeOpenAI

    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def otel_bridge(record, fake):
    from agents import set_trace_processors
    from openai_agents_opentelemetry import OpenTelemetryTracingProcessor
    from openai_agents_runs import player

    set_trace_processors([OpenTelemetryTracingProcessor()])
    try:
        return record("openai_agents_otel", player("otel", fake))
    finally:
        set_trace_processors([])


@pytest.fixture(scope="module")
def openinference_bridge(record, fake, provider):
    from agents import set_trace_processors
    from openai_agents_runs import player
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        return record("openai_agents_openinference", player("openinference", fake))
    finally:
        instrumentor.uninstrument()
        set_trace_processors([])


BRIDGES = {
    "otel": ("otel_bridge", c.OPENAI_AGENTS_WORKFLOW),
    "openinference": ("openinference_bridge", c.OPENINFERENCE_SESSION_ID),
}


@pytest.mark.parametrize("source", ["parquet", "collector"])
@pytest.mark.parametrize("bridge", sorted(BRIDGES))
def test_bare_runs_mapped_by_the_natural_attribute_equal_ground_truth(
    request, bridge, source
) -> None:
    fixture, attribute = BRIDGES[bridge]
    recording = request.getfixturevalue(fixture)
    trials = recording.trials(source, api=False, test_attribute=attribute)
    assert_trials_match(trials, recording.raw, handoffs=True)
    # the crashed run is an error although the workflow root span is OK
    assert trials.filter(trials[tc.OUTCOME] == "error").height == 1


@pytest.mark.parametrize("source", ["parquet", "collector"])
@pytest.mark.parametrize("bridge", sorted(BRIDGES))
def test_runs_framed_by_the_assay_api_equal_ground_truth(request, bridge, source) -> None:
    recording = request.getfixturevalue(BRIDGES[bridge][0])
    assert_trials_match(recording.trials(source, api=True), recording.api, handoffs=True)


def test_a_handoff_run_has_one_path_under_both_bridges(otel_bridge, openinference_bridge) -> None:
    columns = [tc.TOOL_SEQUENCE, tc.HANDOFFS, tc.AGENTS, tc.TOOL_ERRORS]
    otel = otel_bridge.trials("parquet", api=True).sort(tc.START_TIME).select(columns)
    oi = openinference_bridge.trials("parquet", api=True).sort(tc.START_TIME).select(columns)
    assert otel.to_dicts() == oi.to_dicts()
    assert any(h for h in otel[tc.HANDOFFS].to_list())
