"""Google ADK, through its built-in OpenTelemetry instrumentation, mapped by
``gen_ai.workflow.name``.

The real package against the fake OpenAI server on 127.0.0.1 (``scripted.py``, through an ADK
model adapter): two tool calls in one model turn, right and wrong answers judged by our checker,
an HTTP 500 that crashes one run per test. ADK adds an ``execute_tool (merged)`` span after a
turn of two tool calls: it is not a tool call.
"""

from __future__ import annotations

import pytest
from installed import installed
from scripted import assert_documented_commands_hold, assert_judged_runs_match

from assay import conventions as c

pytestmark = pytest.mark.slow  # importing the framework alone takes seconds

if not installed("google.adk"):
    pytest.skip("the frameworks extra is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def recording(record):
    from adk_runs import runs
    from scripted import ScriptedServer

    server = ScriptedServer().start()
    try:
        return record("google_adk", lambda r, api: runs(r, api, server), process=True)
    finally:
        server.fake.stop()


@pytest.mark.parametrize("api", [False, True], ids=["bare", "api"])
@pytest.mark.parametrize("source", ["parquet", "collector"])
def test_each_trial_equals_its_runs_ground_truth(recording, source, api) -> None:
    """Bare runs mapped by workflow name, and runs framed by the assay API."""
    assert_judged_runs_match(recording, source, api, c.GENAI_WORKFLOW_NAME)


def test_describe_ranks_the_workflow_name_first_as_a_known_attribute(recording) -> None:
    from assay.analysis import describe_spans
    from assay.store import open_trace_set

    description = describe_spans(open_trace_set(recording.parquet_raw).scan())
    best = description.candidates[0]
    assert best.attribute == c.GENAI_WORKFLOW_NAME and best.known
    assert best.values == len({t.test_id for t in recording.raw})


def test_the_documented_commands_read_the_runs(recording) -> None:
    assert_documented_commands_hold("Google ADK (built-in OpenTelemetry)", recording)
