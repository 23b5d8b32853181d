"""LlamaIndex's FunctionAgent through OpenInference, mapped by ``session.id``, Parquet path.

The real packages against the fake OpenAI server on 127.0.0.1: each model call is recorded as
three LLM spans (one prepares the call, two nest around the request) and is read as one; a
streamed call without usage leaves the trial's tokens unknown (null) and said. The packages are
outside the ``frameworks`` extra (llama-index-llms-openai requires openai<3, docs/integrations.md):
the test is skipped where they are not installed.
"""

from __future__ import annotations

import asyncio
import importlib.util

import pytest
from fake_openai import FakeOpenAI, Turn, tool_results

import assay
import assay.instrument as ai
from assay import conventions as c
from assay.analysis import columns as tc

# llama-index-core 0.14 reads pydantic's deprecated ``__fields__``: its warning, not ours.
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

if importlib.util.find_spec("llama_index.llms.openai_like") is None:
    pytest.skip("llama-index-llms-openai-like is not installed", allow_module_level=True)


class _WhileRecording:
    """A span exporter passing spans to ``inner`` until closed, then dropping them."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def export(self, spans):
        from opentelemetry.sdk.trace.export import SpanExportResult

        if self.inner is not None:
            return self.inner.export(spans)
        return SpanExportResult.SUCCESS

    def close(self) -> None:
        inner, self.inner = self.inner, None
        inner.shutdown()

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _script(body: dict) -> Turn:
    if tool_results(body) == 0:
        return Turn(tool_calls=(("weather", {"city": "Paris"}),), input_tokens=20, output_tokens=5)
    return Turn(text="sunny", input_tokens=30, output_tokens=3)


@pytest.fixture(scope="module")
def recorded(provider, tmp_path_factory):
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.llms.openai_like import OpenAILike
    from openinference.instrumentation import using_session
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    fake = FakeOpenAI(script=_script).start()
    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    path = tmp_path_factory.mktemp("llama_index") / "traces"
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    # The session's provider keeps its processors: this one passes spans on while the module
    # records, and drops them after (other modules share the provider).
    exporter = _WhileRecording(ai.ParquetSpanExporter(path))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    ran: list[str] = []

    def weather(city: str) -> str:
        """The weather in a city."""
        ran.append("weather")
        return "sunny"

    llm = OpenAILike(
        model="fake",
        api_base=fake.base_url,
        api_key="x",
        is_chat_model=True,
        is_function_calling_model=True,
    )
    try:
        for test, streaming in (("plain", False), ("plain", False), ("streamed", True)):
            agent = FunctionAgent(tools=[weather], llm=llm, name="helper", streaming=streaming)

            async def run(agent=agent, test=test) -> None:
                with using_session(test):
                    await agent.run("weather?")

            asyncio.run(run())
    finally:
        instrumentor.uninstrument()
        exporter.close()
        fake.stop()
    return path, fake, ran


def test_each_model_call_is_one_call_and_unknown_usage_is_null(recorded) -> None:
    path, fake, ran = recorded
    result = assay.analyze(path, assay.AnalyzeOptions(test_attribute=c.OPENINFERENCE_SESSION_ID))
    rows = result.trials.sort(tc.START_TIME).to_dicts()
    assert [r[tc.TEST_ID] for r in rows] == ["plain", "plain", "streamed"]
    assert sum(r[tc.LLM_CALLS] for r in rows) == fake.requests == 6
    assert [r[tc.TOOL_SEQUENCE] for r in rows] == [["weather"]] * 3 and len(ran) == 3
    for row in rows[:2]:
        assert (row[tc.INPUT_TOKENS], row[tc.OUTPUT_TOKENS]) == (50, 8)
    assert fake.unreported == 2
    assert rows[2][tc.INPUT_TOKENS] is None and rows[2][tc.OUTPUT_TOKENS] is None
    kinds = {f.kind: f for f in result.result.data_quality.findings}
    assert "streamed" in kinds["usage_unknown"].message
