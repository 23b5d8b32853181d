"""Every figure of every test, from ``figures_by_test``: the one place figures are computed.

Checked on random trials tables holding what real ones hold — errors, nulls, NaN, several
score names (and a name twice in a trial), empty and null tool paths, several models, unknown
work, tool errors, tests of one trial and of more than 500 — against numpy and scipy computed
here from each test's rows, and for the property the vectorised reading rests on: a test's
figures are those of its rows alone, however the table around it is read.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import replace
from unittest import mock

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from scipy.special import comb

from assay.analysis import columns as tc
from assay.choices import ErrorPolicy
from assay.judge import AnalyzeOptions, _figures, judge
from assay.judge import _all_figures as all_figures
from assay.judge._all_figures import TestRows, figures_by_test
from assay.judge._cost import CostSummary, cost_summaries
from assay.judge._figures import Figures
from assay.judge._pipeline import _rows_by_test
from assay.stats import flakiness

_PATHS = [
    ["search", "answer"],
    ["search", "search", "answer"],
    ["answer"],
    ["read", "search", "answer"],
    [],
    None,
]
_MODELS = [["gpt"], ["gpt"], ["claude"], ["gpt", "claude"], [], None]
_SCHEMA = {
    tc.TEST_ID: pl.String,
    tc.RUN_ID: pl.String,
    tc.AGENT_VERSION: pl.String,
    tc.TRIAL_INDEX: pl.Int64,
    tc.TRACE_ID: pl.String,
    tc.SPAN_ID: pl.String,
    tc.PASSED: pl.Boolean,
    tc.ERROR: pl.Boolean,
    tc.STATUS_MESSAGE: pl.String,
    tc.SCORES: pl.List(pl.Struct({"name": pl.String, "value": pl.Float64})),
    tc.TOOL_SEQUENCE: pl.List(pl.String),
    tc.TOOL_CALLS: pl.Int64,
    tc.LLM_CALLS: pl.Int64,
    tc.INPUT_TOKENS: pl.Int64,
    tc.OUTPUT_TOKENS: pl.Int64,
    tc.ERROR_SPANS: pl.Int64,
    tc.MODELS: pl.List(pl.String),
    tc.TOOL_ERRORS: pl.Int64,
    tc.TOOL_ERROR_MESSAGES: pl.List(pl.String),
    tc.DURATION_S: pl.Float64,
    tc.WORK_UNKNOWN: pl.Boolean,
    tc.COST_USD: pl.Float64,
}


def _scores(rng: np.random.Generator, twice: bool, clean: bool) -> list[dict] | None:
    if clean:  # one score a trial, always known: the fast path of a clean column
        return [{"name": "quality", "value": float(np.round(rng.random(), 2))}]
    draw = rng.random()
    if draw < 0.05:
        return None
    out: list[dict] = []
    for name in ("quality", "tone"):
        if rng.random() < (0.9 if name == "quality" else 0.4):
            value = None if rng.random() < 0.05 else float(np.round(rng.random(), 2))
            out.append({"name": name, "value": value})
    if twice and rng.random() < 0.3:
        out.append({"name": "quality", "value": float(rng.random())})
        if rng.random() < 0.3:  # a third time (evaluations repeat a name), unknown or NaN too
            third = [None, float("nan"), float(rng.random())][int(rng.integers(3))]
            out.append({"name": "quality", "value": third})
    return out


def _table(
    seed: int, *, twice: bool = False, big: bool = False, clean: bool = False
) -> pl.DataFrame:
    """A random trials table: tests of 1 to 40 trials (one of 600 if ``big``).

    ``twice``: some trials name a score twice; ``clean``: no null or NaN where a number is,
    one model.
    """
    rng = np.random.default_rng(seed)
    gap = 0.0 if clean else 1.0  # the chance of a null or NaN, scaled
    rows: list[dict] = []
    tests = int(rng.integers(1, 9))
    for t in range(tests):
        size = 600 if big and t == 0 else int(rng.integers(1, 41))
        rate = float(rng.choice([0.0, 1.0, rng.random()]))
        unknown_test = rng.random() < 0.15
        for i in range(size):
            error = bool(rng.random() < 0.1)
            path = _PATHS[int(rng.integers(0, len(_PATHS)))]
            tool_errors = int(rng.integers(1, 3)) if rng.random() < 0.1 else 0
            duration = float(np.round(rng.random() * 3, 1))
            if rng.random() < 0.05 * gap:
                duration = float("nan")
            rows.append(
                {
                    tc.TEST_ID: f"test-{t:02d}",
                    tc.RUN_ID: None if rng.random() < 0.8 else "run-b",
                    tc.AGENT_VERSION: None,
                    tc.TRIAL_INDEX: None if rng.random() < 0.1 else int(rng.integers(0, 50)),
                    tc.TRACE_ID: f"{t:02d}{i:04d}",
                    tc.SPAN_ID: f"s{t:02d}{i:04d}",
                    tc.PASSED: (not error) and bool(rng.random() < rate),
                    tc.ERROR: error,
                    tc.STATUS_MESSAGE: "boom" if error and rng.random() < 0.5 else None,
                    tc.SCORES: _scores(rng, twice, clean),
                    tc.TOOL_SEQUENCE: path,
                    tc.TOOL_CALLS: None if rng.random() < 0.05 * gap else len(path or ()),
                    tc.LLM_CALLS: int(rng.integers(1, 4)),
                    tc.INPUT_TOKENS: None if rng.random() < 0.05 else int(rng.integers(0, 999)),
                    tc.OUTPUT_TOKENS: int(rng.integers(0, 99)),
                    tc.ERROR_SPANS: int(rng.random() < 0.2),
                    tc.MODELS: ["gpt"] if clean else _MODELS[int(rng.integers(0, len(_MODELS)))],
                    tc.TOOL_ERRORS: tool_errors,
                    tc.TOOL_ERROR_MESSAGES: [f"failed {k}" for k in range(tool_errors)],
                    tc.DURATION_S: None if rng.random() < 0.03 * gap else duration,
                    tc.WORK_UNKNOWN: unknown_test and bool(rng.random() < 0.5),
                    tc.COST_USD: None if rng.random() < 0.1 else float(rng.random() / 100),
                }
            )
    table = pl.DataFrame(rows, schema=_SCHEMA)
    if rng.random() < 0.3:
        table = table.sample(fraction=1.0, shuffle=True, seed=seed)  # not sorted by test
    return table


def _tests(table: pl.DataFrame, rng: np.random.Generator) -> tuple[pl.DataFrame, list[TestRows]]:
    ordered, rows = _rows_by_test(table)
    tests = [
        TestRows(a, b, bool(rng.random() < 0.5), float(rng.choice([0.9, 0.95, 0.99])))
        for a, b in rows.values()
    ]
    return ordered, tests


def _alone(
    table: pl.DataFrame, test: TestRows, alpha: float, ks: tuple[int, ...] = (1, 5, 10)
) -> Figures:
    """The test's figures from a table of its rows only (one range)."""
    rows = table.slice(test.start, test.stop - test.start)
    alone = TestRows(0, rows.height, test.exclude_errors, test.confidence)
    return figures_by_test(rows, [alone], ks=ks, score_ci="t", seed=0, alpha=alpha)[0]


@settings(deadline=None, max_examples=40)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.booleans(), st.booleans())
def test_a_tests_figures_are_those_of_its_rows_alone(
    seed: int, twice: bool, big: bool, clean: bool
) -> None:
    table = _table(seed, twice=twice and not clean, big=big, clean=clean)
    table, tests = _tests(table, np.random.default_rng(seed))
    alpha = 0.3  # explanations found often: their words are compared too
    together = figures_by_test(table, tests, ks=(1, 5, 10), score_ci="t", seed=0, alpha=alpha)
    alone = [_alone(table, t, alpha) for t in tests]
    # repr: every float to the last bit, NaN equal to NaN. The failure explanations are
    # adjusted over every test of the set, so they are compared apart.
    assert [repr(replace(f, failure_explanations=())) for f in together] == [
        repr(replace(f, failure_explanations=())) for f in alone
    ]
    # Holm over the whole set is stricter than over one test: each finding of the set is one
    # of the test's own, with the same p-value and an adjusted p-value at least as large.
    for set_wide, own in zip(together, alone, strict=True):
        by_name = {(f.feature, f.level): f for f in own.failure_explanations}
        for f in set_wide.failure_explanations:
            mine = by_name[(f.feature, f.level)]
            assert f.p_value == mine.p_value and f.p_adjusted >= mine.p_adjusted


@settings(deadline=None, max_examples=25)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60))
def test_tests_read_in_runs_of_rows_get_the_same_figures(seed: int, rows: int) -> None:
    table = _table(seed, twice=seed % 2 == 0, big=False, clean=False)
    table, tests = _tests(table, np.random.default_rng(seed))
    at_once = figures_by_test(table, tests, ks=(1, 5), score_ci="t", seed=0, alpha=0.3)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(all_figures, "ROWS_AT_ONCE", rows)
        in_runs = figures_by_test(table, tests, ks=(1, 5), score_ci="t", seed=0, alpha=0.3)
    assert [repr(f) for f in in_runs] == [repr(f) for f in at_once]


@settings(deadline=None, max_examples=15)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60))
def test_runs_made_two_at_once_get_the_figures_of_runs_made_one_at_a_time(
    seed: int, rows: int
) -> None:
    # From PARTS_FROM_ROWS rows (and tests of PARTS_FROM_TEST_ROWS) on, runs of tests are read
    # in threads, two at once.
    table = _table(seed, twice=seed % 2 == 0, big=seed % 3 == 0, clean=False)
    table, tests = _tests(table, np.random.default_rng(seed))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(all_figures, "ROWS_AT_ONCE", rows)
        one = figures_by_test(table, tests, ks=(1, 5), score_ci="t", seed=0, alpha=0.3)
        patch.setattr(all_figures, "PARTS_FROM_ROWS", 0)
        patch.setattr(all_figures, "PARTS_FROM_TEST_ROWS", 0)
        two = figures_by_test(table, tests, ks=(1, 5), score_ci="t", seed=0, alpha=0.3)
    assert [repr(f) for f in two] == [repr(f) for f in one]


def test_runs_of_rows_keep_every_test_whole_and_in_order() -> None:
    tests = [TestRows(a, b, False, 0.95) for a, b in [(0, 3), (3, 10), (10, 11), (11, 30)]]
    parts = all_figures._parts(tests, 8)
    assert parts == [[tests[0]], [tests[1], tests[2]], [tests[3]]]
    assert all_figures._parts([], 8) == []


def _trial_scores(recorded: list[dict] | None) -> dict[str, float]:
    """A trial's score per name: the mean of its known values (NaN when only nulls)."""
    named: dict[str, list[float]] = {}
    for score in recorded or ():
        named.setdefault(score["name"], [])
        if score["value"] is not None:
            named[score["name"]].append(score["value"])
    return {k: float(np.mean(v)) if v else math.nan for k, v in named.items()}


def _check_against_numpy(rows: pl.DataFrame, test: TestRows, figure: Figures, ks: tuple) -> None:
    """Every figure of one test's rows, recomputed here from plain lists, numpy and scipy."""
    error = [bool(e) for e in rows[tc.ERROR].to_list()]
    passed = [bool(p) for p in rows[tc.PASSED].to_list()]
    keep = [not e for e in error] if test.exclude_errors else [True] * rows.height
    n = sum(keep)
    c = sum(p for p, k in zip(passed, keep, strict=True) if k)
    unknown = any(rows[tc.WORK_UNKNOWN].to_list())
    # pass@k = 1 - C(n-c, k)/C(n, k); pass^k = C(c, k)/C(n, k) (Chen 2021; Yao 2024).
    if n == 0:
        assert figure.pass_at_k is None and figure.pass_hat_k is None
    else:
        assert figure.pass_at_k is not None and figure.pass_hat_k is not None
        for k in ks:
            at, hat = figure.pass_at_k[str(k)], figure.pass_hat_k[str(k)]
            if k > n:
                assert at is None and hat is None
                assert any(f"pass@{k} not reported" in note for note in figure.notes)
            else:
                assert at == pytest.approx(1 - comb(n - c, k, exact=True) / comb(n, k, exact=True))
                assert hat == pytest.approx(comb(c, k, exact=True) / comb(n, k, exact=True))
    # Scores of the counted trials, each trial's mean of a name repeated.
    per_trial = [
        _trial_scores(r) for r, k in zip(rows[tc.SCORES].to_list(), keep, strict=True) if k
    ]
    names = sorted({name for trial in per_trial for name in trial})
    known = {
        name: np.array([t[name] for t in per_trial if name in t and not math.isnan(t[name])])
        for name in names
    }
    assert sorted(figure.scores) == [name for name in names if known[name].size]
    for name, summary in figure.scores.items():
        values = known[name]
        assert summary.n == values.size
        assert summary.mean == pytest.approx(values.mean())
        # A trial's mean of a name recorded twice is summed in another order there: the
        # extremes agree to the last bit or one ulp of it.
        assert summary.min == pytest.approx(values.min(), rel=1e-15, abs=0)
        assert summary.max == pytest.approx(values.max(), rel=1e-15, abs=0)
        assert summary.p90 == pytest.approx(np.percentile(values, 90))
        if values.size == 1:
            assert summary.std is None and summary.ci_low is None
        else:
            assert summary.std == pytest.approx(values.std(ddof=1))
            if values.std() > 0:  # tied values: scipy's t interval is undefined (sem 0)
                low, high = scipy_stats.t.interval(
                    test.confidence, values.size - 1, values.mean(), scipy_stats.sem(values)
                )
                # Values in [0, 1]: the interval is cut to that assumed range.
                assert summary.range_source == "assumed"
                assert (summary.ci_low, summary.ci_high) == (
                    pytest.approx(max(low, 0.0)),
                    pytest.approx(min(high, 1.0)),
                )
                assert summary.clipped == (low < 0.0 or high > 1.0)
            else:
                assert summary.ci_low is None and summary.note is not None
    if figure.scores:  # the name recorded (with a value) in most counted trials, ties by name
        counts = {
            name: sum(name in t and not math.isnan(t[name]) for t in per_trial) for name in names
        }
        assert figure.primary_score == max(sorted(counts), key=counts.__getitem__)
    else:
        assert figure.primary_score is None and figure.score is None
    # Usage and durations over every trial, error trials included.
    if unknown:
        assert figure.usage is None and figure.tool_errors is None
        assert figure.tool_consistency is None
    else:
        assert figure.usage is not None
        assert figure.usage.llm_calls == sum(v or 0 for v in rows[tc.LLM_CALLS].to_list())
        for got, column in (
            (figure.usage.input_tokens, tc.INPUT_TOKENS),
            (figure.usage.output_tokens, tc.OUTPUT_TOKENS),
        ):
            tokens = rows[column].to_list()
            # Unknown in one trial (a call with no usage): the test's total is unknown too.
            assert got == (None if None in tokens else sum(tokens))
    durations = np.array([d for d in rows[tc.DURATION_S].to_list() if d is not None], dtype=float)
    durations = durations[~np.isnan(durations)]
    if durations.size:
        assert figure.duration_s.mean == pytest.approx(durations.mean())
        assert figure.duration_s.p90 == pytest.approx(np.percentile(durations, 90))
    else:
        assert figure.duration_s == _figures.DurationSummary(None, None)
    if rows.height < 2:
        assert figure.tool_consistency is None
    # The first error trial by index (no index: last), named by its index or trace.
    errors = [r for r in rows.iter_rows(named=True) if r[tc.ERROR]]
    if not errors:
        assert figure.first_error is None
    else:
        first = min(
            enumerate(errors),
            key=lambda e: (e[1][tc.TRIAL_INDEX] is None, e[1][tc.TRIAL_INDEX] or 0, e[0]),
        )[1]
        where = (
            f"trial {first[tc.TRIAL_INDEX]}"
            if first[tc.TRIAL_INDEX] is not None
            else f"trace {first[tc.TRACE_ID]}"
        )
        assert figure.first_error == f"{where}: {first[tc.STATUS_MESSAGE] or 'error'}"
    assert figure.work_unknown == sum(bool(u) for u in rows[tc.WORK_UNKNOWN].to_list())
    # Flakiness over every trial, from what the statistics library is handed per trial.
    primary = figure.primary_score
    all_scores = [_trial_scores(r) for r in rows[tc.SCORES].to_list()]
    expected = flakiness(
        np.array(passed),
        errors=np.array(error),
        scores=(np.array([t.get(primary, math.nan) for t in all_scores]) if primary else None),
        tool_sequences=None
        if unknown
        else [tuple(p or ()) for p in rows[tc.TOOL_SEQUENCE].to_list()],
        step_counts=None if unknown else np.array(rows[tc.TOOL_CALLS].to_numpy(), dtype=float),
        latencies=np.array(rows[tc.DURATION_S].to_numpy(), dtype=float),
    )
    assert figure.flakiness is not None
    assert figure.flakiness.score == pytest.approx(expected.score)
    assert figure.flakiness.category == expected.category


@settings(deadline=None, max_examples=30)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.booleans())
def test_figures_are_numpy_and_scipys_of_each_tests_rows(
    seed: int, twice: bool, clean: bool
) -> None:
    table, tests = _tests(_table(seed, twice=twice, clean=clean), np.random.default_rng(seed))
    ks = (1, 5, 10)
    figures = figures_by_test(table, tests, ks=ks, score_ci="t", seed=0, alpha=0.05)
    for test, figure in zip(tests, figures, strict=True):
        _check_against_numpy(table.slice(test.start, test.stop - test.start), test, figure, ks)


def _one_test(rows: list[dict]) -> pl.DataFrame:
    """One test's trials: passing, no error, one tool call and LLM call, 1 s, unless given."""
    base = {
        tc.TEST_ID: "test-00",
        tc.PASSED: True,
        tc.ERROR: False,
        tc.SCORES: None,
        tc.TOOL_SEQUENCE: ["answer"],
        tc.TOOL_CALLS: 1,
        tc.LLM_CALLS: 1,
        tc.INPUT_TOKENS: 10,
        tc.OUTPUT_TOKENS: 5,
        tc.ERROR_SPANS: 0,
        tc.MODELS: ["gpt"],
        tc.TOOL_ERRORS: 0,
        tc.TOOL_ERROR_MESSAGES: [],
        tc.DURATION_S: 1.0,
        tc.WORK_UNKNOWN: False,
    }
    return pl.DataFrame(
        [
            base | {tc.TRIAL_INDEX: i, tc.TRACE_ID: f"t{i}", tc.SPAN_ID: f"s{i}"} | row
            for i, row in enumerate(rows)
        ],
        schema=_SCHEMA,
    )


def _figures_of(table: pl.DataFrame, exclude: bool = False, alpha: float = 0.05) -> Figures:
    test = TestRows(0, table.height, exclude, 0.95)
    return figures_by_test(table, [test], ks=(1, 5), score_ci="t", seed=0, alpha=alpha)[0]


def test_one_trial_has_figures_without_spreads() -> None:
    table = _one_test([{tc.SCORES: [{"name": "quality", "value": 0.7}], tc.DURATION_S: 2.0}])
    figure = _figures_of(table)
    assert figure.pass_at_k == {"1": 1.0, "5": None}
    assert figure.notes == (
        "pass@5 not reported: k = 5 needs at least 5 trials; only 1 were run",
        "pass^5 not reported: k = 5 needs at least 5 trials; only 1 were run",
    )
    score = figure.score
    assert score is not None and (score.n, score.mean, score.std, score.ci_low) == (
        1,
        0.7,
        None,
        None,
    )
    assert figure.duration_s == _figures.DurationSummary(2.0, 2.0)
    assert figure.tool_consistency is None
    assert figure.flakiness is not None and figure.flakiness.score == 0.0


def test_no_scores_no_primary_score() -> None:
    figure = _figures_of(_one_test([{tc.SCORES: None}, {tc.SCORES: []}]))
    assert figure.scores == {} and figure.primary_score is None and figure.score is None
    # A name recorded only with nulls has no summary, so no primary score either.
    nulls = _one_test([{tc.SCORES: [{"name": "quality", "value": None}]}] * 3)
    assert _figures_of(nulls).scores == {} and _figures_of(nulls).primary_score is None


def test_error_trials_left_out_of_counted_figures_when_excluded() -> None:
    ok = {tc.PASSED: True, tc.ERROR: False, tc.SCORES: [{"name": "quality", "value": 1.0}]}
    bad = {
        tc.PASSED: False,
        tc.ERROR: True,
        tc.STATUS_MESSAGE: "timeout",
        tc.TRIAL_INDEX: 3,
        tc.SCORES: [{"name": "quality", "value": 0.0}],
    }
    table = _one_test([ok, ok, bad, ok])
    counted, every = _figures_of(table, exclude=True), _figures_of(table)
    assert counted.pass_at_k == {"1": 1.0, "5": None}
    assert every.pass_at_k is not None and every.pass_at_k["1"] == 0.75
    assert counted.score is not None and (counted.score.n, counted.score.mean) == (3, 1.0)
    assert every.score is not None and (every.score.n, every.score.mean) == (4, 0.75)
    # Usage, durations, flakiness and the first error read every trial either way.
    for figure in (counted, every):
        assert figure.first_error == "trial 3: timeout"
        assert figure.flakiness is not None
        factors = {f.name: f.value for f in figure.flakiness.factors}
        assert factors["error_rate"] == 0.25
    # Every trial an error: nothing counted, no pass@k.
    only = _figures_of(_one_test([bad, bad]), exclude=True)
    assert only.pass_at_k is None and only.scores == {}


def test_null_flags_read_as_false_in_figures_and_counts() -> None:
    rows = [
        {tc.PASSED: True, tc.ERROR: None},
        {tc.PASSED: None, tc.ERROR: False},
        {tc.PASSED: False, tc.ERROR: True},
        {tc.PASSED: True, tc.ERROR: False},
    ]
    table = _one_test(rows)
    filled = table.with_columns(pl.col(tc.PASSED, tc.ERROR).fill_null(False))
    for exclude in (False, True):
        assert repr(_figures_of(table, exclude)) == repr(_figures_of(filled, exclude))
    for errors in (None, ErrorPolicy.EXCLUDE):
        results, _ = judge(table, AnalyzeOptions(errors=errors))
        expected, _ = judge(filled, AnalyzeOptions(errors=errors))
        assert [repr(r) for r in results] == [repr(r) for r in expected]
        assert (results[0].n, results[0].passed, results[0].errors) == (
            (3, 2, 1) if errors else (4, 2, 1)
        )


def test_a_tool_every_failing_trial_calls_explains_failures_by_fishers_test() -> None:
    failing = {tc.PASSED: False, tc.TOOL_SEQUENCE: ["search", "answer"], tc.TOOL_CALLS: 2}
    passing = {tc.PASSED: True, tc.TOOL_SEQUENCE: ["answer"], tc.TOOL_CALLS: 1}
    table = _one_test([failing] * 8 + [passing] * 12)
    factors = _figures_of(table).failure_explanations
    fisher = [f for f in factors if f.test == "fisher"]
    assert fisher, factors
    for factor in fisher:
        a = round(factor.fail_value * 8)
        c = round(factor.pass_value * 12)
        expected = scipy_stats.fisher_exact([[a, 8 - a], [c, 12 - c]]).pvalue
        assert factor.p_value == pytest.approx(expected)
        assert factor.p_adjusted >= factor.p_value
    assert any("search" in f.feature for f in fisher)
    # Every trial passing (or failing): nothing to explain.
    assert _figures_of(_one_test([passing] * 5)).failure_explanations == ()


def test_judge_counts_and_costs_are_each_tests_sums() -> None:
    table = _table(11, big=True)
    options = AnalyzeOptions(errors=ErrorPolicy.EXCLUDE)
    results, _ = judge(table, options)
    ordered, rows = _rows_by_test(table)
    for result, (a, b) in zip(results, rows.values(), strict=True):
        frame = ordered.slice(a, b - a)
        error = frame[tc.ERROR].to_numpy()
        assert result.errors == int(error.sum())
        assert result.n == int((~error).sum())
        assert result.passed == int(frame[tc.PASSED].to_numpy()[~error].sum())
        assert result.trials == frame.height
    ranges = list(rows.values())
    for (a, b), cost in zip(ranges, cost_summaries(ordered, ranges, None), strict=True):
        values = ordered[tc.COST_USD].slice(a, b - a).drop_nulls().to_numpy()
        assert cost is not None
        assert cost.total_usd == pytest.approx(values.sum())
        assert cost.priced == values.size and cost.unpriced == b - a - values.size
        assert cost.mean_usd == (pytest.approx(values.mean()) if values.size else None)
        assert cost == CostSummary.of(ordered[tc.COST_USD].slice(a, b - a).to_numpy(), cost.prices)
    assert cost_summaries(ordered.drop(tc.COST_USD), ranges, None) == [None] * len(ranges)


@settings(deadline=None, max_examples=60)
@given(
    st.lists(st.sampled_from(range(len(_PATHS))), min_size=1, max_size=60),
    st.lists(st.tuples(st.integers(0, 59), st.integers(1, 30)), min_size=1, max_size=8),
)
def test_lists_numbered_by_range_are_each_ranges_own(
    picks: list[int], spans: list[tuple[int, int]]
) -> None:
    from assay.analysis._features import distinct_lists
    from assay.judge._all_figures import _Lists

    column = pl.Series([_PATHS[k] for k in picks], dtype=pl.List(pl.String))
    ranges = [(min(a, len(picks) - 1), min(a + k, len(picks))) for a, k in spans]
    # As strings, and as a dictionary (a set read in many buckets holds them so); each
    # range's lists as tuples, and as a view of the table (as a test of many paths has them).
    for values, view_from in itertools.product(
        (column, column.cast(pl.List(pl.Categorical))), (1, all_figures._VIEW_FROM)
    ):
        with mock.patch.object(all_figures, "_VIEW_FROM", view_from):
            coded = _Lists.of(values)
            assert coded.calls is not None  # no list holds a null name
            for (a, b), (distinct, index) in zip(ranges, coded.by_range(ranges), strict=True):
                expected, expected_index = distinct_lists(column.slice(a, b - a))
                assert list(distinct) == expected
                assert [distinct[k] for k in range(len(distinct))] == expected
                assert index.tolist() == expected_index.tolist()


@settings(deadline=None, max_examples=100)
@given(
    st.lists(st.integers(-5, 5), min_size=1, max_size=50),
    st.lists(st.integers(1, 10), min_size=1, max_size=10),
    st.booleans(),
)
def test_range_sums_are_slices_sums(values: list[int], sizes: list[int], cover: bool) -> None:
    from assay.judge._all_figures import range_sums

    array = np.array(values, dtype=np.int64)
    if cover:  # ranges one after the other over every row: np.add.reduceat
        bounds = np.cumsum([0, *sizes]) * len(values) // sum(sizes)
        ranges = [(int(a), int(b)) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]
    else:  # any ranges, overlapping or not: running sums
        ranges = [(min(k, len(values) - 1), min(k + 3, len(values))) for k in sizes]
    expected = [int(array[a:b].sum()) for a, b in ranges]
    assert range_sums(array, ranges) == expected
    assert range_sums(array > 0, ranges) == [int((array[a:b] > 0).sum()) for a, b in ranges]


def test_a_name_twice_is_found_wherever_it_is_in_the_trial() -> None:
    def twice(scores: list[list[str]]) -> bool:
        lists = [[{"name": n, "value": 0.5} for n in names] for names in scores]
        table = pl.DataFrame({tc.SCORES: lists}, schema={tc.SCORES: _SCHEMA[tc.SCORES]})
        return _figures._names_twice(_figures.score_rows(table), max(map(len, scores)))

    assert twice([["a", "b", "a"]])  # not next to each other
    assert twice([["b"], ["a", "c", "b", "a"]])
    assert not twice([["a", "b"], ["a", "b"], ["b"]])  # one name in several trials
    assert not twice([["a"], ["a"]])


def test_score_range_declared_assumed_or_unknown() -> None:
    from assay.judge._all_figures import score_range

    assert score_range("evalview_score", np.array([90.0, 100.0])) == ((0.0, 100.0), "declared")
    assert score_range("quality", np.array([0.2, 1.0])) == ((0.0, 1.0), "assumed")
    assert score_range("quality", np.array([0.2, 7.0])) is None  # no known scale: no cut
    assert score_range("evalview_score", np.array([90.0, 101.0])) is None  # range broken


def test_tied_scores_have_no_interval_and_a_note() -> None:
    tied = [{tc.SCORES: [{"name": "quality", "value": 0.8}]}] * 5
    figure = _figures_of(_one_test(tied))
    score = figure.scores["quality"]
    assert score.std == 0.0 and score.ci_low is None and score.ci_high is None
    assert any(
        n.startswith("score quality: all 5 scores equal 0.8: no interval") for n in figure.notes
    )
    # An EvalView score near the top of its 0-100 scale: the interval is cut at 100.
    rows = [{tc.SCORES: [{"name": "evalview_score", "value": v}]} for v in (90.0, 100.0, 100.0)]
    evalview = _figures_of(_one_test(rows)).scores["evalview_score"]
    assert evalview.ci_high == 100.0 and evalview.clipped
    assert evalview.range_source == "declared"


def test_lists_holding_a_null_name_are_numbered_as_their_python_lists() -> None:
    from assay.analysis._features import distinct_lists
    from assay.judge._all_figures import _Lists

    column = pl.Series(
        [["a", None], ["a"], ["a", None], [], None, ["b", "a"]] * 100, dtype=pl.List(pl.String)
    )
    ((distinct, index),) = _Lists.of(column).by_range([(0, column.len())])
    expected, expected_index = distinct_lists(column)
    assert list(distinct) == expected == [("a", None), ("a",), (), ("b", "a")]
    assert index.tolist() == expected_index.tolist()


@settings(deadline=None, max_examples=60)
@given(
    st.lists(
        st.tuples(st.sampled_from(range(len(_PATHS))), st.booleans()), min_size=1, max_size=60
    ),
    st.lists(st.tuples(st.integers(0, 59), st.integers(1, 30)), min_size=1, max_size=8),
)
def test_path_features_from_counted_codes_are_those_counted_from_the_paths(
    rows: list[tuple[int, bool]], spans: list[tuple[int, int]]
) -> None:
    from assay.analysis import path_features
    from assay.judge._all_figures import _Lists
    from assay.stats import ToolPaths

    column = pl.Series([_PATHS[k] for k, _ in rows], dtype=pl.List(pl.String))
    passed = np.array([ok for _, ok in rows])
    ranges = [(min(a, len(rows) - 1), min(a + k, len(rows))) for a, k in spans]
    with mock.patch.object(all_figures, "_VIEW_FROM", 1):  # every range's paths a view
        by_range = _Lists.of(column).paths_by_range(ranges)
    for (a, b), paths in zip(ranges, by_range, strict=True):
        assert paths.calls is not None
        counted = path_features(paths, passed[a:b])
        expected = path_features(ToolPaths(paths.distinct, paths.index), passed[a:b])
        assert [(f.name, f.kind, f.label) for f in counted] == [
            (f.name, f.kind, f.label) for f in expected
        ]
        for mine, theirs in zip(counted, expected, strict=True):
            assert mine.values.dtype == theirs.values.dtype == np.float64
            assert mine.values.tolist() == theirs.values.tolist()
        # A path leaves the most common passing path (Counter's, ties to the one the passing
        # trials took first) exactly when it is another path.
        kept = [tuple(_PATHS[k] or ()) for k, ok in rows[a:b] if ok]
        counts = Counter(kept)
        reference = max(kept, key=lambda t: (counts[t], -kept.index(t))) if kept else None
        leaves = {f.name: f.values for f in counted}.get("leaves_common_path")
        wanted = [float(t != reference) for t in paths.distinct]
        if reference is None or len(set(wanted)) < 2:
            assert leaves is None
        else:
            assert leaves is not None and leaves.tolist() == wanted
