"""Footers say what a trace set may hold; what the analysis skips on their word changes nothing."""

import sys
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from opentelemetry.context import Context

import assay
import assay.instrument as ai
from assay import conventions as c
from assay.analysis import _conventions as conv
from assay.analysis import columns as tc
from assay.analysis import read_trials, with_cost
from assay.analysis._work import WorkShape
from assay.store import SPANS_SCHEMA, SpanContents, open_trace_set, promoted_column, span_contents
from assay.store._contents import ATTRIBUTE_FAMILIES_KEY

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synthetic import generate  # noqa: E402


def _files(path: Path) -> list[str]:
    return [str(p) for p in sorted(path.rglob("*.parquet"))]


def test_synthetic_spans_hold_no_events_judgements_or_costs(tmp_path: Path) -> None:
    generate(tmp_path / "t", trials=40, spans_per_trial=6, tests=4)
    files = _files(tmp_path / "t")
    assert pq.read_metadata(files[0]).metadata[ATTRIBUTE_FAMILIES_KEY] == b"outcome"
    contents = span_contents(files)
    assert (contents.events, contents.judgements, contents.recorded_costs) == (False,) * 3
    assert contents.outcomes
    assert not contents.may_hold("status_code", "ERROR")
    assert contents.may_hold("gen_ai_operation_name", "chat")
    assert WorkShape.of(contents) == WorkShape(False, False, False, False)
    scan = open_trace_set(tmp_path / "t").scan()
    skipped = read_trials(scan, contents=span_contents(files))
    full = read_trials(scan, contents=None)
    assert skipped.table.equals(full.table) and skipped.data_quality == full.data_quality


def test_events_and_recorded_attributes_are_seen(parquet_sink, tracer) -> None:
    with ai.trial("scored", index=0) as trial:
        trial.score("quality", 0.5)
    path = parquet_sink.flush()
    contents = span_contents(_files(path))
    assert (contents.events, contents.judgements, contents.recorded_costs) == (True, False, False)
    with tracer.start_as_current_span(
        "trial", attributes={c.TEST_ID: "judged", f"{c.JUDGEMENT_PREFIX}threshold": 0.8}
    ):
        with tracer.start_as_current_span(
            "chat", attributes={c.GENAI_OPERATION: "chat", c.OPENINFERENCE_COST_TOTAL: 0.5}
        ):
            pass
    path = parquet_sink.flush()
    contents = span_contents(_files(path))
    assert (contents.events, contents.judgements, contents.recorded_costs) == (True, True, True)


def test_a_file_that_does_not_say_may_hold_anything(tmp_path: Path) -> None:
    generate(tmp_path / "t", trials=4, spans_per_trial=3, tests=1)
    table = pq.read_table(_files(tmp_path / "t")[0])
    bare = tmp_path / "bare.parquet"
    pq.write_table(table.replace_schema_metadata(None), bare, write_statistics=False)
    assert span_contents([str(bare)]) == SpanContents()
    assert span_contents(["s3://bucket/traces/spans.parquet"]) == SpanContents()


def _chat(tracer, model: str | None, tokens: int) -> None:
    attributes = {c.GENAI_OPERATION: "chat", c.GENAI_INPUT_TOKENS: tokens}
    if model is not None:
        attributes[c.GENAI_REQUEST_MODEL] = model
    with tracer.start_as_current_span("chat", attributes=attributes):
        pass


def test_costs_read_only_where_needed_equal_costs_read_call_by_call(parquet_sink, tracer) -> None:
    cases = {
        "one-model": ["gpt-4o", "gpt-4o"],
        "two-models": ["gpt-4o", "gpt-4o-mini"],
        "one-model-and-unnamed": ["gpt-4o", None],
        "unnamed": [None],
    }
    for name, models in cases.items():
        # A root span each (an empty context): one trial per trace, whatever ran before.
        with tracer.start_as_current_span("trial", Context(), attributes={c.TEST_ID: name}):
            for i, model in enumerate(models):
                _chat(tracer, model, 1000 + 100 * i)
    path = parquet_sink.flush()
    trials = assay.analyze(path).trials.drop(tc.COST_USD)
    spans = open_trace_set(path).scan()
    assert not span_contents(_files(path)).recorded_costs
    every, found_every = with_cost(trials, spans=spans, recorded_costs=True)
    needed, found_needed = with_cost(trials, spans=spans, recorded_costs=False)
    cost = dict(zip(needed[tc.TEST_ID], needed[tc.COST_USD], strict=True))
    expected = dict(zip(every[tc.TEST_ID], every[tc.COST_USD], strict=True))
    assert cost["one-model-and-unnamed"] is None  # the unnamed call has no price: no guess
    assert cost["two-models"] is not None  # priced call by call, not at the first model
    assert {k for k, v in cost.items() if v is None} == {
        k for k, v in expected.items() if v is None
    }
    assert {k: v for k, v in cost.items() if v is not None} == pytest.approx(
        {k: v for k, v in expected.items() if v is not None}, rel=1e-12
    )
    assert found_needed == found_every


def test_analysis_with_skips_equals_analysis_reading_everything(traces: Path) -> None:
    trace_set = open_trace_set(traces)
    contents = trace_set.contents()
    assert contents.events  # the example agent records scores
    full = read_trials(trace_set.scan())
    skipped = read_trials(trace_set.scan(), contents=contents)
    assert skipped.table.equals(full.table) and skipped.table.height > 0


@pytest.mark.parametrize(
    ("kind", "expression"),
    [
        ("agents", conv.is_agent_invocation()),
        ("handoffs", conv.handoff_target()),
        ("models", conv.model_name()),
        ("errors", pl.col("status_code") == "ERROR"),
    ],
)
def test_every_column_a_convention_reads_can_make_its_kind_possible(
    kind: str, expression: pl.Expr
) -> None:
    # The shape must know each column the convention reads: a column it forgot would let the
    # analysis drop, say, every agent run of a framework whose attribute only that column holds.
    # The span name alone marks nothing, nor does a handoff's target without its span type.
    read = set(expression.meta.root_names()) - {"name", promoted_column(c.OPENAI_AGENTS_HANDOFF_TO)}
    assert read
    for column in read:
        contents = SpanContents(null_columns=frozenset(SPANS_SCHEMA.names) - {column})
        assert getattr(WorkShape.of(contents), kind), column
    nothing = SpanContents(null_columns=frozenset(SPANS_SCHEMA.names))
    assert not getattr(WorkShape.of(nothing), kind)
