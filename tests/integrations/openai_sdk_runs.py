"""A tool loop on the OpenAI SDK, recorded under traceloop-sdk or the openai-v2 instrumentation.

Both instrumentations patch the ``openai`` package for the rest of the process, so this runs in
a subprocess of its test: ``python openai_sdk_runs.py KIND ROOT`` records into ROOT and prints
the recording (paths and ground truth) as JSON.
"""

from __future__ import annotations

import json
import random
import sys
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI, Turn
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from recording import Recorder, Truth, record_framework, start_recording

from assay import conventions as c

CASES = ("lookup", "compute")
RUNS_PER_CASE = 10
TOOLS = ("search", "calculator")


def _plan(rng: random.Random, crash: bool) -> list[Turn]:
    turns = [
        Turn(tool_calls=((rng.choice(TOOLS), {}),), input_tokens=15 + i)
        for i in range(rng.randint(1, 3))
    ]
    if crash:
        turns.append(Turn(tool_calls=(("explode", {}),)))
    return [*turns, Turn(text="done", output_tokens=5)]


def _tool_runner(kind: str, truth: Truth):
    def body(name: str) -> str:
        truth.tools.append(name)
        if name == "explode":
            raise RuntimeError("the tool crashed")
        return "result"

    if kind == "traceloop":
        from traceloop.sdk.decorators import tool

        return lambda name: tool(name=name)(body)(name)
    tracer = trace.get_tracer("agent")

    def run(name: str) -> str:
        attributes = {c.GENAI_OPERATION: c.GENAI_EXECUTE_TOOL, c.GENAI_TOOL_NAME: name}
        with tracer.start_as_current_span(f"execute_tool {name}", attributes=attributes):
            return body(name)

    return run


def _loop(client: Any, call_tool: Any) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "help"}]
    while True:
        reply = client.chat.completions.create(model="fake-model", messages=messages)
        message = reply.choices[0].message
        if not message.tool_calls:
            return
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = call_tool(call.function.name)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


def _player(kind: str, fake: FakeOpenAI):
    from openai import OpenAI

    client = OpenAI(base_url=fake.base_url, api_key="x")

    def runs(recorder: Recorder, api: bool) -> None:
        rng = random.Random(5)
        for i in range(RUNS_PER_CASE * len(CASES)):
            case = CASES[i % 2]
            truth = Truth(test_id=case)
            turns = iter(_plan(rng, crash=(i == 4)))

            def script(body: Any, truth: Truth = truth, turns: Any = turns) -> Turn:
                truth.mark()
                turn = next(turns)
                truth.llm_calls += 1
                truth.input_tokens += turn.input_tokens
                truth.output_tokens += turn.output_tokens
                return turn

            fake.script = script
            call_tool = _tool_runner(kind, truth)
            if kind == "traceloop":
                from traceloop.sdk.decorators import agent, workflow

                run = workflow(name=case)(
                    agent(name="assistant")(lambda call_tool=call_tool: _loop(client, call_tool))
                )
            else:

                def run(case: str = case, call_tool: Any = call_tool) -> None:
                    tracer = trace.get_tracer("agent")
                    attributes = {c.GENAI_OPERATION: c.GENAI_INVOKE_AGENT, c.GENAI_AGENT_NAME: case}
                    with tracer.start_as_current_span(
                        f"invoke_agent {case}", attributes=attributes
                    ):
                        _loop(client, call_tool)

            recorder.run(truth, api, lambda truth, run=run: run())

    return runs


def main(kind: str, root: str) -> None:
    provider = TracerProvider()
    trace.set_tracer_provider(provider)
    start_recording(provider)
    if kind == "traceloop":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its pydantic models use deprecated class configs
            from traceloop.sdk import Traceloop
            from traceloop.sdk.instruments import Instruments

            # Traceloop adds its processor to the provider already installed; spans reach the
            # recording through the provider's own processor, so its processor only discards.
            Traceloop.init(
                app_name="assay-test",
                processor=SimpleSpanProcessor(InMemorySpanExporter()),
                telemetry_enabled=False,
                instruments={Instruments.OPENAI},
                api_key="offline",
                api_endpoint="http://127.0.0.1:9",
            )
    else:
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)
    fake = FakeOpenAI().start()
    recording = record_framework(kind, _player(kind, fake), Path(root))
    fake.stop()
    document = asdict(recording)
    print(json.dumps(document, default=str))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
