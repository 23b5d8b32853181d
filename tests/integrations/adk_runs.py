"""Google ADK runs for ``test_google_adk.py`` (imported by its fixture: importing the framework
takes seconds, paid only by the test process that records it).

ADK talks to Gemini by default; any model is a ``BaseLlm``. ``FakeChat`` is one that calls the
fake OpenAI server with the openai client, as a user's adapter to an OpenAI-compatible model
would: ADK's own spans around it (``invoke_workflow``, ``invoke_agent``, ``generate_content``,
``execute_tool``) are what the framework records for any model.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from typing import Any

import openai
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types
from recording import Recorder, Truth
from scripted import ScriptedServer, checker, plans, tools

CASES = ("forecaster", "researcher")
"""The root agents' names: ADK's ``gen_ai.workflow.name``, the tests."""
RUNS_PER_CASE = 5


def _messages(request: LlmRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for content in request.contents:
        for part in content.parts or []:
            if part.function_call is not None:
                call = part.function_call
                out.append(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": json.dumps(call.args)},
                            }
                        ],
                    }
                )
            elif part.function_response is not None:
                response = part.function_response
                out.append(
                    {"role": "tool", "tool_call_id": response.id, "content": str(response.response)}
                )
            elif part.text:
                role = "assistant" if content.role == "model" else "user"
                out.append({"role": role, "content": part.text})
    return out


class FakeChat(BaseLlm):
    """An ADK model answering from an OpenAI-compatible chat-completions server."""

    base_url: str

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        client = openai.AsyncOpenAI(base_url=self.base_url, api_key="x", max_retries=0)
        answer = await client.chat.completions.create(
            model=self.model, messages=_messages(llm_request)
        )
        message = answer.choices[0].message
        parts = [
            types.Part(
                function_call=types.FunctionCall(
                    id=call.id, name=call.function.name, args=json.loads(call.function.arguments)
                )
            )
            for call in message.tool_calls or []
        ]
        if message.content:
            parts.append(types.Part(text=message.content))
        usage = answer.usage
        assert usage is not None
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=usage.prompt_tokens,
                candidates_token_count=usage.completion_tokens,
                total_token_count=usage.total_tokens,
            ),
        )


def runs(recorder: Recorder, api: bool, server: ScriptedServer) -> None:
    """Every run of both cases, with the assay API (``api``) or bare."""
    model = FakeChat(model="fake", base_url=server.base_url)
    for case, plan in plans(CASES, RUNS_PER_CASE, seed=7):
        truth = Truth(test_id=case)
        server.begin(plan, truth)
        agent = LlmAgent(name=case, model=model, tools=tools(truth), instruction="Help.")
        runner = InMemoryRunner(agent=agent, app_name="weather")

        def play(truth: Truth, runner: Any = runner) -> None:
            async def run() -> str:
                session = await runner.session_service.create_session(
                    app_name="weather", user_id="user"
                )
                texts: list[str] = []
                message = types.Content(role="user", parts=[types.Part(text="The weather?")])
                async for event in runner.run_async(
                    user_id="user", session_id=session.id, new_message=message
                ):
                    parts = event.content.parts if event.content else None
                    texts += [p.text for p in parts or [] if p.text]
                return " ".join(texts)

            truth.answer = asyncio.run(run())

        recorder.run(truth, api, play, checker)
