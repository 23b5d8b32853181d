"""smolagents through OpenInference, mapped by ``session.id``, judged by ``--pass-when``.

The real packages against the fake OpenAI server on 127.0.0.1 (``scripted.py``): two tool calls
in one model turn, right and wrong answers judged by our checker (a ``correctness`` evaluation),
and an HTTP 500 that crashes one run per test. A crashed run leaves its agent span unended, so
its trace has no root: it is one trial (an error), not one per orphaned step, and said.
"""

from __future__ import annotations

import pytest
from installed import installed
from scripted import assert_documented_commands_hold, assert_judged_runs_match

import assay
from assay import conventions as c

pytestmark = pytest.mark.slow  # importing the framework alone takes seconds

if not installed("smolagents"):
    pytest.skip("the frameworks extra is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def recording(record, provider):
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    from scripted import ScriptedServer
    from smolagents_runs import runs

    server = ScriptedServer().start()
    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        return record("smolagents", lambda r, api: runs(r, api, server), process=True)
    finally:
        instrumentor.uninstrument()
        server.fake.stop()


@pytest.mark.parametrize("api", [False, True], ids=["bare", "api"])
@pytest.mark.parametrize("source", ["parquet", "collector"])
def test_each_trial_equals_its_runs_ground_truth(recording, source, api) -> None:
    """Bare runs mapped by session id, and runs framed by the assay API."""
    assert_judged_runs_match(recording, source, api, c.OPENINFERENCE_SESSION_ID)


def test_a_crashed_run_is_one_trial_and_the_missing_root_is_said(recording) -> None:
    from scripted import PASS_WHEN

    options = assay.AnalyzeOptions(test_attribute=c.OPENINFERENCE_SESSION_ID, pass_when=PASS_WHEN)
    analysis = assay.analyze(recording.parquet_raw, options)
    findings = {f.kind: f for f in analysis.result.data_quality.findings}
    crashed = sum(t.outcome == "error" for t in recording.raw)
    assert crashed == 2
    assert findings["unended_roots"].count == crashed
    assert "incomplete_traces" not in findings


def test_the_documented_commands_read_the_runs(recording) -> None:
    assert_documented_commands_hold("smolagents, through OpenInference", recording)
