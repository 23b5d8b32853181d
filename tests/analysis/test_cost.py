import polars as pl
import pytest

import assay
import assay.instrument as ai
from assay.analysis import DEFAULT_PRICES, Price, PriceTable, load_prices, with_cost
from assay.analysis import columns as tc
from assay.errors import SchemaError


def _chat(tracer, model: str, tokens_in: int, tokens_out: int, extra=None) -> None:
    from assay import conventions as c

    attributes = {
        c.GENAI_OPERATION: "chat",
        c.GENAI_REQUEST_MODEL: model,
        c.GENAI_INPUT_TOKENS: tokens_in,
        c.GENAI_OUTPUT_TOKENS: tokens_out,
        **(extra or {}),
    }
    with tracer.start_as_current_span("chat", attributes=attributes):
        pass


def _record(sink) -> pl.DataFrame:
    with ai.trial("priced", index=0):
        with ai.llm("gpt-4o-2024-08-06") as call:
            call.usage(input_tokens=1000, output_tokens=200)
        with ai.llm("gpt-4o") as call:
            call.usage(input_tokens=500, output_tokens=100)
    with ai.trial("priced", index=1):
        with ai.tool("search"):
            pass
    with ai.trial("unpriced", index=0):
        with ai.llm("sim-model") as call:
            call.usage(input_tokens=10, output_tokens=1)
    with ai.trial("mixed", index=0):
        with ai.llm("gpt-4o-mini") as call:
            call.usage(input_tokens=100, output_tokens=10)
        with ai.llm("claude-sonnet-4-20250514") as call:
            call.usage(input_tokens=100, output_tokens=10)
    return assay.analyze(sink.flush()).trials


def test_cost_per_trial_from_tokens_and_the_default_table(parquet_sink) -> None:
    trials, findings = with_cost(_record(parquet_sink))
    cost = {
        (r[tc.TEST_ID], r[tc.TRIAL_INDEX]): r[tc.COST_USD]
        for r in trials.select(tc.TEST_ID, tc.TRIAL_INDEX, tc.COST_USD).to_dicts()
    }
    gpt4o = DEFAULT_PRICES.models["gpt-4o"]
    assert cost["priced", 0] == pytest.approx((1500 * gpt4o.input + 300 * gpt4o.output) / 1e6)
    assert cost["priced", 1] == 0.0  # no LLM call, nothing spent
    assert cost["unpriced", 0] is None
    mini = DEFAULT_PRICES.models["gpt-4o-mini"]
    assert cost["mixed", 0] == pytest.approx((200 * mini.input + 20 * mini.output) / 1e6)
    kinds = {f.kind: f for f in findings}
    assert set(kinds) == {"unpriced_models", "mixed_model_prices"}
    assert "sim-model" in kinds["unpriced_models"].message
    assert kinds["unpriced_models"].count == 1 and kinds["mixed_model_prices"].count == 1


def test_a_wildcard_prices_every_model(parquet_sink) -> None:
    trials, findings = with_cost(_record(parquet_sink), PriceTable({"*": Price(1.0, 2.0)}))
    assert trials[tc.COST_USD].null_count() == 0 and findings == ()


def test_load_prices_reads_the_runner_format(tmp_path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("per: 1000\nmodels:\n  m: {input: 1, output: 3}\n", encoding="utf-8")
    table = load_prices(path)
    assert table.per == 1000 and table.price("m-large") == Price(1.0, 3.0)
    assert table.source == str(path)
    path.write_text("models:\n  m: {input: -1}\n", encoding="utf-8")
    with pytest.raises(SchemaError, match="models.m.input"):
        load_prices(path)


def test_with_spans_each_call_is_priced_at_its_own_model_or_its_recorded_cost(
    parquet_sink, tracer
) -> None:
    from assay import conventions as c
    from assay.store import open_trace_set

    _record(parquet_sink)
    with ai.trial("recorded", index=0):
        _chat(tracer, "sim-model", 10, 1, {c.OPENINFERENCE_COST_TOTAL: 0.125})
    path = parquet_sink.flush()
    trials = assay.analyze(path).trials
    costed, findings = with_cost(trials, spans=open_trace_set(path).scan())
    cost = {r[tc.TEST_ID]: r[tc.COST_USD] for r in costed.to_dicts() if r[tc.TRIAL_INDEX] == 0}
    mini = DEFAULT_PRICES.models["gpt-4o-mini"]
    sonnet = DEFAULT_PRICES.models["claude-sonnet-4"]
    mixed = (100 * mini.input + 10 * mini.output + 100 * sonnet.input + 10 * sonnet.output) / 1e6
    assert cost["mixed"] == pytest.approx(mixed)  # call by call: no first-model guess
    assert cost["recorded"] == pytest.approx(0.125)  # the instrumentation's own figure
    assert cost["unpriced"] is None
    assert {f.kind for f in findings} == {"unpriced_models"}
    assert costed.columns == trials.columns  # analyze already adds the column; one copy


def test_trials_sharing_a_trace_fall_back_to_their_token_totals(parquet_sink, tracer) -> None:
    from assay import conventions as c
    from assay.store import open_trace_set

    with tracer.start_as_current_span("run"):
        for index in range(2):
            with tracer.start_as_current_span(
                "trial", attributes={c.TEST_ID: "shared", c.TRIAL_INDEX: index}
            ):
                for model in ("gpt-4o-mini", "gpt-4o"):
                    _chat(tracer, model, 1000, 100)
    path = parquet_sink.flush()
    costed, findings = with_cost(assay.analyze(path).trials, spans=open_trace_set(path).scan())
    mini = DEFAULT_PRICES.models["gpt-4o-mini"]
    first_model = (2000 * mini.input + 200 * mini.output) / 1e6
    assert costed[tc.COST_USD].to_list() == pytest.approx([first_model] * 2)
    assert [f.kind for f in findings] == ["mixed_model_prices"] and findings[0].count == 2


def test_calls_naming_no_model_are_known_from_the_reading_as_from_a_scan(
    parquet_sink, tracer, tmp_path
) -> None:
    """A trial naming one model beside a call that names none is costed call by call; the
    reading of the spans says which traces hold such calls, in one pass or in buckets, and the
    costs equal those of a scan of the spans for them."""
    from assay import conventions as c
    from assay.analysis import engine_trials, read_trials
    from assay.store import open_trace_set

    for index in range(6):
        with ai.trial("unnamed", index=index):
            _chat(tracer, "gpt-4o", 1000, 100)
            if index % 2:
                attributes = {c.GENAI_OPERATION: "chat", c.GENAI_INPUT_TOKENS: 10}
                with tracer.start_as_current_span("chat", attributes=attributes):
                    pass
    path = parquet_sink.flush()
    trace_set = open_trace_set(path)
    read = read_trials(trace_set.scan())
    odd = read.table.filter(pl.col(tc.TRIAL_INDEX) % 2 == 1)[tc.TRACE_ID]
    assert read.unnamed_calls is not None
    assert sorted(read.unnamed_calls.to_list()) == sorted(odd.to_list())
    bucketed = engine_trials(trace_set, spans_per_bucket=4)
    assert bucketed.unnamed_calls is not None
    assert sorted(bucketed.unnamed_calls.to_list()) == sorted(odd.to_list())
    known, _ = with_cost(read.table, spans=trace_set.scan(), unnamed_calls=read.unnamed_calls)
    scanned, _ = with_cost(read.table, spans=trace_set.scan())
    assert known[tc.COST_USD].to_list() == scanned[tc.COST_USD].to_list()
    costs = dict(zip(known[tc.TRIAL_INDEX].to_list(), known[tc.COST_USD].to_list(), strict=True))
    assert costs[0] is not None and costs[1] is None  # the call without a model has no price
