"""LlamaIndex's FunctionAgent through OpenInference, mapped by ``session.id``.

The real packages against the fake OpenAI server on 127.0.0.1 (``scripted.py``): two tool calls
in one model turn, right and wrong answers judged by our checker, an HTTP 500 that crashes one
run per test. Each model call is recorded as three LLM spans (one prepares the call and sends
nothing, two nest around the request) and is one call; a streamed call without usage leaves the
trial's tokens unknown (null), and said.
"""

from __future__ import annotations

import pytest
from installed import installed
from scripted import assert_documented_commands_hold, assert_judged_runs_match

import assay
from assay import conventions as c

# llama-index-core 0.14 reads pydantic's deprecated ``__fields__``: its warning, not ours.
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

if not installed("llama_index.llms.openai_like"):
    pytest.skip("the frameworks extra is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def recording(record, provider):
    from llama_index_runs import runs
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
    from scripted import ScriptedServer

    server = ScriptedServer().start()
    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        return record("llama_index", lambda r, api: runs(r, api, server), process=True)
    finally:
        instrumentor.uninstrument()
        server.fake.stop()


@pytest.mark.parametrize("api", [False, True], ids=["bare", "api"])
@pytest.mark.parametrize("source", ["parquet", "collector"])
def test_each_trial_equals_its_runs_ground_truth(recording, source, api) -> None:
    """Bare runs mapped by session id, and runs framed by the assay API."""
    assert_judged_runs_match(recording, source, api, c.OPENINFERENCE_SESSION_ID)


def test_unknown_usage_is_said_for_the_streamed_test_only(recording) -> None:
    from scripted import PASS_WHEN

    options = assay.AnalyzeOptions(test_attribute=c.OPENINFERENCE_SESSION_ID, pass_when=PASS_WHEN)
    analysis = assay.analyze(recording.parquet_raw, options)
    (finding,) = [f for f in analysis.result.data_quality.findings if f.kind == "usage_unknown"]
    streamed = [t for t in recording.raw if t.test_id == "streamed" and t.llm_calls]
    assert finding.count == len(streamed)
    assert "1 test (streamed)" in finding.message


def test_the_documented_commands_read_the_runs(recording) -> None:
    assert_documented_commands_hold("LlamaIndex, through OpenInference", recording)


def test_describe_lists_no_step_as_unclaimed_work(recording) -> None:
    """``BaseWorkflowAgent.call_tool`` and ``aggregate_tool_results`` are CHAIN steps."""
    from assay.analysis import describe_spans
    from assay.store import open_trace_set

    description = describe_spans(open_trace_set(recording.parquet_raw).scan())
    assert description.unclaimed is None
    assert dict(description.span_names)["BaseWorkflowAgent.call_tool"] > 0
