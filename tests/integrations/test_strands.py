"""Strands Agents, through its built-in OpenTelemetry GenAI instrumentation, mapped by agent name.

The real package against the fake OpenAI server on 127.0.0.1 (``scripted.py``): two tool calls
in one model turn, right and wrong answers judged by our checker, an HTTP 500 that crashes one
run per test. Strands' ``invoke_agent`` span carries the run's token totals: it is no LLM call,
so they are not counted twice.
"""

from __future__ import annotations

import pytest
from installed import installed
from scripted import assert_documented_commands_hold, assert_judged_runs_match

from assay import conventions as c

pytestmark = pytest.mark.slow  # importing the framework alone takes seconds

if not installed("strands"):
    pytest.skip("the frameworks extra is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def recording(record):
    from scripted import ScriptedServer
    from strands_runs import runs

    server = ScriptedServer().start()
    try:
        return record("strands", lambda r, api: runs(r, api, server), process=True)
    finally:
        server.fake.stop()


@pytest.mark.parametrize("api", [False, True], ids=["bare", "api"])
@pytest.mark.parametrize("source", ["parquet", "collector"])
def test_each_trial_equals_its_runs_ground_truth(recording, source, api) -> None:
    """Bare runs mapped by agent name, and runs framed by the assay API."""
    assert_judged_runs_match(recording, source, api, c.GENAI_AGENT_NAME)


def test_the_documented_commands_read_the_runs(recording) -> None:
    assert_documented_commands_hold("Strands Agents (built-in OpenTelemetry)", recording)
