import polars as pl
import pytest

import assay
import assay.instrument as ai
from assay.analysis import DEFAULT_PRICES, Price, PriceTable, load_prices, with_cost
from assay.analysis import columns as tc
from assay.errors import SchemaError


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
