"""The GenAI agent conventions as they stand, read alike in their old and new forms.

Up to semantic-conventions v1.41 a workflow is its own ``invoke_workflow`` span named by
``gen_ai.workflow.name``; from semantic-conventions-genai v0.1.0 it is an internal agent span
(``gen_ai.operation.name`` still ``invoke_workflow``) naming the workflow by ``gen_ai.agent.name``,
with no ``gen_ai.agent.id`` on internal spans. ``invoke_agent`` comes as a CLIENT span (a remote
agent) or an INTERNAL one (v1.41); ``gen_ai.agent.version`` exists since v1.40. Spans are written
by the real OTel SDK through assay's exporter, as a framework would write them.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind

import assay
from assay.instrument import ParquetSpanExporter

_MAPPING = {"old": "gen_ai.workflow.name", "new": "gen_ai.agent.name"}


def _record(folder: Path, form: str, *, under_a_test_span: bool = False) -> None:
    """20 workflow runs: agent ``triage`` (in process), then ``billing`` (remote); 1 in 5 fails."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(folder)))
    tracer = provider.get_tracer("a-framework")
    for i in range(20):
        workflow: dict[str, str] = {"gen_ai.operation.name": "invoke_workflow"}
        if form == "old":
            workflow["gen_ai.workflow.name"] = "support-flow"
        else:
            workflow.update({"gen_ai.agent.name": "support-flow", "gen_ai.agent.version": "2.1"})
        triage = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"}
        if form == "old":
            triage["gen_ai.agent.id"] = "asst_1"  # dropped from internal spans in v0.1.0
        outer = (
            tracer.start_as_current_span("run", attributes={"assay.test.id": "support-flow"})
            if under_a_test_span
            else None
        )
        if outer is not None:
            outer.__enter__()
        try:
            with tracer.start_as_current_span(
                "invoke_workflow support-flow", kind=SpanKind.INTERNAL, attributes=workflow
            ):
                with tracer.start_as_current_span(
                    "invoke_agent triage", kind=SpanKind.INTERNAL, attributes=triage
                ):
                    llm = {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": "gpt-4o",
                        "gen_ai.usage.input_tokens": 100,
                        "gen_ai.usage.output_tokens": 10,
                    }
                    with tracer.start_as_current_span(
                        "chat gpt-4o", kind=SpanKind.CLIENT, attributes=llm
                    ):
                        pass
                    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}
                    with tracer.start_as_current_span("execute_tool search", attributes=tool):
                        pass
                remote = {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "billing",
                    "gen_ai.agent.id": "asst_2",  # kept on client spans
                }
                with tracer.start_as_current_span(
                    "invoke_agent billing", kind=SpanKind.CLIENT, attributes=remote
                ):
                    pass
                if i % 5 == 0:
                    raise RuntimeError("the workflow gave up")
        except RuntimeError:
            pass
        finally:
            if outer is not None:
                outer.__exit__(None, None, None)
    provider.shutdown()


@pytest.fixture(scope="module")
def read(tmp_path_factory: pytest.TempPathFactory) -> dict[str, assay.Analysis]:
    out = {}
    for form, attribute in _MAPPING.items():
        folder = tmp_path_factory.mktemp(form)
        _record(folder, form)
        out[form] = assay.analyze(folder, assay.AnalyzeOptions(test_attribute=attribute))
    return out


def test_both_forms_give_the_same_trials(read: dict[str, assay.Analysis]) -> None:
    columns = ["test_id", "agents", "tool_sequence", "llm_calls", "input_tokens", "error"]
    old, new = (read[f].trials.select(columns).sort(pl.all()) for f in ("old", "new"))
    assert old.height == 20 and old.equals(new)
    # the workflow is no agent of its own run; both kinds of invoke_agent span are runs
    assert old["agents"].to_list()[0] == ["triage", "billing"]
    # an exception escaping the workflow is an error trial, in both forms
    assert old["error"].sum() == 4


def test_the_new_form_warns_of_nothing_the_old_does_not(read: dict[str, assay.Analysis]) -> None:
    def warned(form: str) -> set[str]:
        return {f.kind for f in read[form].result.data_quality.warnings}

    # the agents inside a v0.1.0 workflow name themselves by gen_ai.agent.name: its shape
    assert "nested_mapping_values" not in warned("new")
    assert warned("new") == warned("old")


def test_gen_ai_agent_version_is_the_version_where_assay_s_is_absent(
    read: dict[str, assay.Analysis], tmp_path: Path
) -> None:
    assert read["new"].trials["agent_version"].unique().to_list() == ["2.1"]
    assert read["old"].trials["agent_version"].null_count() == 20
    # assay.agent.version, set for this purpose, wins over the framework's
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(tmp_path)))
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "triage",
        "gen_ai.agent.version": "2.1",
        "assay.agent.version": "candidate",
    }
    with provider.get_tracer("t").start_as_current_span(
        "invoke_agent triage", attributes=attributes
    ):
        pass
    provider.shutdown()
    both = assay.analyze(tmp_path, assay.AnalyzeOptions(test_attribute="gen_ai.agent.name"))
    assert both.trials["agent_version"].to_list() == ["candidate"]


@pytest.mark.parametrize("form", ["old", "new"])
def test_an_exception_escaping_a_workflow_inside_a_trial_makes_it_an_error(
    tmp_path: Path, form: str
) -> None:
    _record(tmp_path, form, under_a_test_span=True)
    trials = assay.analyze(tmp_path).trials
    assert trials.height == 20 and trials["error"].sum() == 4


def test_gen_ai_agent_version_is_read_from_agent_and_workflow_trial_spans_only(
    tmp_path: Path,
) -> None:
    """The convention gives the attribute to agent and workflow spans; an own trial span is not one.

    An agent span inside assay's own trial span keeps its version to itself (the trial's
    version is the one assay.agent.version gives, here none), and a trial span of another kind
    that happens to carry the attribute is not read for it either.
    """
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(tmp_path)))
    tracer = provider.get_tracer("t")
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.version": "2.1"}
    with tracer.start_as_current_span("run", attributes={"assay.test.id": "inside"}):
        with tracer.start_as_current_span("invoke_agent triage", attributes=agent):
            pass
    chat = {"assay.test.id": "chat", "gen_ai.operation.name": "chat", "gen_ai.agent.version": "9"}
    with tracer.start_as_current_span("chat", attributes=chat):
        pass
    provider.shutdown()
    trials = assay.analyze(tmp_path).trials.sort("test_id")
    assert trials["test_id"].to_list() == ["chat", "inside"]
    assert trials["agent_version"].to_list() == [None, None]
