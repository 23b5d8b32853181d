import numpy as np
import polars as pl

import assay
import assay.instrument as ai
from assay.analysis import behaviour_sample, with_cost
from assay.analysis import columns as tc


def _record(sink) -> pl.DataFrame:
    for version, tools in (("v1", ["search", "verify"]), ("v2", ["search", "search"])):
        for index in range(3):
            with ai.trial("case", agent_version=version, index=index):
                with ai.llm("gpt-4o") as call:
                    call.usage(input_tokens=100 * (index + 1), output_tokens=10)
                for tool in tools[: index + 1] if version == "v1" else tools:
                    with ai.tool(tool):
                        pass
    trials, _ = with_cost(assay.analyze(sink.flush()).trials)
    return trials


def test_features_cover_paths_tools_counts_tokens_cost(parquet_sink) -> None:
    trials = _record(parquet_sink)
    base = trials.filter(pl.col(tc.AGENT_VERSION) == "v1")
    cur = trials.filter(pl.col(tc.AGENT_VERSION) == "v2")
    sample = behaviour_sample(base, cur)
    assert sample.baseline_ids == tuple(base[tc.TRACE_ID].to_list())
    by_name = {f.name: f for f in sample.features}
    assert {
        "path",
        "uses:search",
        "uses:verify",
        "tool_calls:search",
        "tool_calls:verify",
        "steps",
        "llm_calls",
        "input_tokens",
        "output_tokens",
        "latency",
        "cost",
        "error_spans",
        "model:gpt-4o",
    } == set(by_name)
    assert by_name["path"].baseline_paths == (
        ("search",),
        ("search", "verify"),
        ("search", "verify"),
    )
    assert by_name["path"].current_paths == (("search", "search"),) * 3
    np.testing.assert_array_equal(by_name["uses:verify"].baseline, [0, 1, 1])
    np.testing.assert_array_equal(by_name["uses:verify"].current, [0, 0, 0])
    np.testing.assert_array_equal(by_name["tool_calls:search"].current, [2, 2, 2])
    np.testing.assert_array_equal(by_name["input_tokens"].baseline, [100, 200, 300])
    assert by_name["cost"].kind == "continuous" and by_name["cost"].baseline[0] > 0


def test_cost_is_left_out_when_a_trial_has_no_price(parquet_sink) -> None:
    trials = _record(parquet_sink).with_columns(pl.lit(None, dtype=pl.Float64).alias(tc.COST_USD))
    sample = behaviour_sample(trials.head(3), trials.tail(3))
    assert "cost" not in {f.name for f in sample.features}
