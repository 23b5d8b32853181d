import numpy as np
import polars as pl

import assay
import assay.instrument as ai
from assay.analysis import behaviour_sample, behaviour_samples, with_cost
from assay.analysis import columns as tc
from assay.judge import by_test
from assay.stats import FeaturePair


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


def _equal(a: FeaturePair, b: FeaturePair) -> bool:
    return (
        (a.name, a.kind, a.label, a.baseline_paths, a.current_paths)
        == (b.name, b.kind, b.label, b.baseline_paths, b.current_paths)
        and np.array_equal(a.baseline, b.baseline)
        and np.array_equal(a.current, b.current)
    )


def test_many_tests_at_once_are_each_tests_own_sample(parquet_sink) -> None:
    """One pass over every test's rows gives each test the sample its own rows give."""
    for version in ("v1", "v2"):
        for case, tools in (("alpha", ["search"]), ("beta", ["verify", "verify"]), ("gamma", [])):
            for index in range(2 + len(tools)):
                with ai.trial(case, agent_version=version, index=index):
                    with ai.llm("gpt-4o" if case != "beta" else "o3") as call:
                        call.usage(input_tokens=10 * (index + 1), output_tokens=index)
                    for tool in tools[: index + 1]:
                        with ai.tool(tool):
                            pass
    trials, _ = with_cost(assay.analyze(parquet_sink.flush()).trials)
    # One test without a price in the current version: only its cost feature goes.
    trials = trials.with_columns(
        pl.when((pl.col(tc.TEST_ID) == "beta") & (pl.col(tc.AGENT_VERSION) == "v2"))
        .then(None)
        .otherwise(pl.col(tc.COST_USD))
        .alias(tc.COST_USD)
    )
    base = by_test(trials.filter(pl.col(tc.AGENT_VERSION) == "v1"))
    cur = by_test(trials.filter(pl.col(tc.AGENT_VERSION) == "v2"))
    together = behaviour_samples({name: (base[name], cur[name]) for name in base})
    assert list(together) == ["alpha", "beta", "gamma"]
    for name, sample in together.items():
        alone = behaviour_sample(base[name], cur[name])
        assert (sample.baseline_ids, sample.current_ids) == (alone.baseline_ids, alone.current_ids)
        assert sample.baseline_ids == tuple(base[name][tc.TRACE_ID].to_list())
        assert len(sample.features) == len(alone.features)
        assert all(_equal(a, b) for a, b in zip(sample.features, alone.features, strict=True))
        by_name = {f.name: f for f in sample.features}
        np.testing.assert_array_equal(
            by_name["latency"].current, cur[name][tc.DURATION_S].to_numpy()
        )
        np.testing.assert_array_equal(
            by_name["input_tokens"].baseline, base[name][tc.INPUT_TOKENS].to_numpy()
        )
        assert ("cost" in by_name) == (name != "beta")
    assert {f.name for f in together["beta"].features} >= {"uses:verify", "model:o3"}
    assert "uses:search" not in {f.name for f in together["beta"].features}


def test_trials_without_tools_or_models_have_empty_paths(parquet_sink) -> None:
    for version in ("v1", "v2"):
        for index in range(3):
            with ai.trial("bare", agent_version=version, index=index):
                pass
    trials = assay.analyze(parquet_sink.flush()).trials
    sample = behaviour_sample(
        trials.filter(pl.col(tc.AGENT_VERSION) == "v1"),
        trials.filter(pl.col(tc.AGENT_VERSION) == "v2"),
    )
    by_name = {f.name: f for f in sample.features}
    assert by_name["path"].baseline_paths == by_name["path"].current_paths == ((),) * 3
    assert not any(name.startswith(("uses:", "tool_calls:", "model:")) for name in by_name)
