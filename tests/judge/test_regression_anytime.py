"""A comparison where either version stopped adaptively uses the anytime-valid test, and says so."""

from __future__ import annotations

import json
from typing import Any

import assay
import assay.instrument as ai
from assay.cli import run
from assay.judge import Judgement, SequentialDesign
from assay.stats import DropSequence

ADAPTIVE = Judgement(0.8, 0.95, sequential=SequentialDesign.of("confidence-sequence", 0.8, 100))


def _record(
    passes: list[bool], attributes: dict[str, Any] | None = None, runs: int = 1, test: str = "t"
) -> None:
    for index, passed in enumerate(passes):
        run_id = f"r{index % runs}"
        with ai.trial(test, index=index, run_id=run_id, attributes=attributes or {}) as t:
            t.check("ok", passed)


def test_a_baseline_that_stopped_early_is_compared_anytime(parquet_sink, switch_sink) -> None:
    # The case: the baseline stopped after 28 passing trials because it looked
    # perfect; Boschloo on 28/28 against 89/100 says p = 0.04, a FAIL.
    _record([True] * 28, ADAPTIVE.to_attributes())
    baseline = parquet_sink.flush()
    sink = switch_sink("current")
    _record([True] * 89 + [False] * 11)
    (test,) = assay.compare(baseline, sink.flush()).result.tests
    regression = test.regression
    assert regression.test == "anytime"
    assert regression.anytime_reason == "the baseline stopped adaptively after 28 of 100 trials"
    # It pairs the trials in run order: the baseline's 28 with the current's first 28.
    found = DropSequence(0.95).test([True] * 28, [True] * 89 + [False] * 11)
    assert regression.p_value == found.p_value and regression.e_value == found.e_value
    assert (regression.drop_low, regression.drop_high) == (found.low, found.high)
    assert regression.pairs == found.pairs == 28
    assert regression.verdict.value != "FAIL"
    assert (
        "so the comparison uses the anytime-valid test on the first 28 trials of each version"
        in test.verdict_reason
    )


def test_the_anytime_test_pairs_the_trials_in_run_order(parquet_sink, switch_sink) -> None:
    # Two baseline runs recorded alternately: run r0 (started first) holds the even indices.
    outcomes = [index % 2 == 0 or index % 3 == 0 for index in range(30)]
    _record(outcomes, runs=2)
    baseline = parquet_sink.flush()
    sink = switch_sink("current")
    current = [index % 4 != 1 for index in range(24)]
    _record(current)
    (test,) = assay.compare(baseline, sink.flush()).result.tests
    in_order = outcomes[0::2] + outcomes[1::2]  # r0's trials by index, then r1's
    found = DropSequence(0.95).test(in_order, current)
    assert found.e_value != DropSequence(0.95).test(outcomes, current).e_value  # order matters
    regression = test.regression
    assert regression.anytime_reason == "the baseline trials come from 2 runs"
    assert (regression.e_value, regression.drop_low, regression.pairs) == (
        found.e_value,
        found.low,
        24,
    )


def test_a_drop_that_reverses_says_no_single_drop_fits(parquet_sink, switch_sink) -> None:
    # Baseline passes then fails, current the other way round: equal rates, but no one drop
    # fits both halves of the pairs — the verdict says so.
    _record([True] * 30 + [False] * 30, ADAPTIVE.to_attributes())
    baseline = parquet_sink.flush()
    sink = switch_sink("current")
    _record([False] * 30 + [True] * 30)
    (test,) = assay.compare(baseline, sink.flush()).result.tests
    regression = test.regression
    assert regression.drop_low > regression.drop_high
    assert "no single drop fits all the pairs" in test.verdict_reason


def test_fixed_runs_keep_the_exact_test_and_several_runs_do_not(parquet_sink, switch_sink) -> None:
    _record([True] * 27 + [False] * 3)
    baseline = parquet_sink.flush()
    sink = switch_sink("current")
    _record([True] * 12 + [False] * 18)
    (test,) = assay.compare(baseline, sink.flush()).result.tests
    assert test.regression.test == "boschloo" and test.regression.anytime_reason is None
    assert test.regression.verdict.value == "FAIL"
    pooled = switch_sink("pooled")
    _record([True] * 12 + [False] * 18, runs=3)
    (test,) = assay.compare(baseline, pooled.flush()).result.tests
    assert test.regression.test == "anytime"
    assert test.regression.anytime_reason == "the current trials come from 3 runs"
    assert test.regression.verdict.value == "FAIL"  # a drop this large shows either way


def test_the_anytime_test_can_be_asked_for(parquet_sink, switch_sink, capsys) -> None:
    _record([True] * 30)
    baseline = parquet_sink.flush()
    sink = switch_sink("current")
    _record([True] * 28 + [False] * 2)
    current = sink.flush()
    run(["compare", str(baseline), str(current), "--test", "anytime", "--format", "json"])
    (test,) = json.loads(capsys.readouterr().out)["tests"]
    assert test["regression"]["test"] == "anytime"
    assert test["regression"]["anytime_reason"] == "asked for with --test anytime"
    assert test["regression"]["drop_low"] < 0 < test["regression"]["drop_high"]


def test_the_one_anytime_flag_also_asks_for_the_anytime_test(
    parquet_sink, switch_sink, capsys
) -> None:
    _record([True] * 30)
    baseline = parquet_sink.flush()
    sink = switch_sink("current")
    _record([True] * 28 + [False] * 2)
    current = sink.flush()
    run(["compare", str(baseline), str(current), "--anytime", "--format", "json"])
    (test,) = json.loads(capsys.readouterr().out)["tests"]
    assert test["regression"]["test"] == "anytime"
    assert test["regression"]["anytime_reason"] == "asked for with --anytime"
    assert test["ci"]["method"] == "confidence-sequence"
