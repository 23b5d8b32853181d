"""Every test's figures at once must be each test's figures alone, bit for bit.

``figures_by_test`` (and ``judge``, which uses it with counts and costs read at once) is
checked against the per-test path it replaces — ``test_figures``, ``judge_test``,
``cost_summary`` — on random trials tables holding what real ones hold: errors, nulls, NaN,
several score names (and a name twice in a trial), empty and null tool paths, several models,
unknown work, tool errors, tests of one trial and of more than 500.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.analysis import columns as tc
from assay.choices import Adjustment, ErrorPolicy
from assay.judge import AnalyzeOptions, Judgement, _figures, judge
from assay.judge import _all_figures as all_figures
from assay.judge._all_figures import TestRows, figures_by_test
from assay.judge._cost import cost_summaries, cost_summary
from assay.judge._pipeline import (
    _rows_by_test,
    _suite_confidence,
    _suite_notes,
    judge_test,
)
from assay.judge._recorded import resolve

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
    table: pl.DataFrame,
    test: TestRows,
    alpha: float,
    ks: tuple[int, ...] = (1, 5, 10),
    score_ci: str = "t",
    seed: int = 0,
) -> object:
    trials = table.slice(test.start, test.stop - test.start)
    counted = trials.filter(~pl.col(tc.ERROR)) if test.exclude_errors else trials
    return _figures.test_figures(
        trials,
        counted,
        confidence=test.confidence,
        ks=ks,
        score_ci=score_ci,
        seed=seed,
        alpha=alpha,
    )


@settings(deadline=None, max_examples=50)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.booleans(), st.booleans())
def test_figures_of_every_test_at_once_are_each_tests_alone(
    seed: int, twice: bool, big: bool, clean: bool
) -> None:
    table = _table(seed, twice=twice and not clean, big=big, clean=clean)
    table, tests = _tests(table, np.random.default_rng(seed))
    alpha = 0.3  # explanations found often: their words are compared too
    together = figures_by_test(table, tests, ks=(1, 5, 10), score_ci="t", seed=0, alpha=alpha)
    # repr: every float to the last bit, NaN equal to NaN.
    assert [repr(f) for f in together] == [repr(_alone(table, t, alpha)) for t in tests]


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


def test_runs_of_rows_keep_every_test_whole_and_in_order() -> None:
    tests = [TestRows(a, b, False, 0.95) for a, b in [(0, 3), (3, 10), (10, 11), (11, 30)]]
    parts = all_figures._parts(tests, 8)
    assert parts == [[tests[0]], [tests[1], tests[2]], [tests[3]]]
    assert all_figures._parts([], 8) == []


def test_explanations_are_found_and_compared() -> None:
    # The property above compares words only where explanations are found: make sure they are.
    found = 0
    for seed in range(30):
        table, tests = _tests(_table(seed), np.random.default_rng(seed))
        figures = figures_by_test(table, tests, ks=(1, 5), score_ci="t", seed=0, alpha=0.3)
        found += sum(len(f.failure_explanations) for f in figures)
        assert [repr(f) for f in figures] == [repr(_alone(table, t, 0.3, (1, 5))) for t in tests]
    assert found >= 10


def test_bootstrap_score_intervals_go_one_by_one_and_agree() -> None:
    table, tests = _tests(_table(3), np.random.default_rng(3))
    together = figures_by_test(table, tests, ks=(1,), score_ci="bootstrap", seed=7, alpha=0.05)
    alone = [_alone(table, t, 0.05, (1,), "bootstrap", 7) for t in tests]
    assert [repr(f) for f in together] == [repr(f) for f in alone]


def _judged_one_by_one(
    trials: pl.DataFrame, options: AnalyzeOptions, recorded: dict[str, Judgement]
) -> tuple:
    """What ``judge`` gave before it judged every test at once (no baseline)."""
    table, rows = _rows_by_test(trials)
    results = []
    for name, (a, b) in rows.items():
        frame = table.slice(a, b - a)
        resolved = resolve(frame, recorded, options)
        confidence = _suite_confidence(resolved.judgement.confidence, options, len(rows))
        judgement = replace(resolved.judgement, confidence=confidence)
        result = judge_test(name, frame, judgement, options, notes=resolved.notes)
        unknown = int(frame[tc.WORK_UNKNOWN].sum())
        results.append(
            replace(result, cost=None if unknown else cost_summary(frame, options.prices))
        )
    return tuple(results), _suite_notes(options, tuple(results))


@settings(deadline=None, max_examples=25)
@given(st.integers(0, 2**32 - 1), st.sampled_from([None, ErrorPolicy.EXCLUDE]), st.booleans())
def test_judging_every_test_at_once_is_judging_each_alone(
    seed: int, errors: ErrorPolicy | None, record: bool
) -> None:
    trials = _table(seed, twice=seed % 3 == 0, clean=seed % 4 == 1)
    options = AnalyzeOptions(errors=errors, adjust=Adjustment.HOLM if seed % 2 else "none")
    recorded: dict[str, Judgement] = {}
    if record:
        # Some tests record their own judgement (threshold, confidence, error policy).
        rng = np.random.default_rng(seed)
        for _, spans in trials.group_by(tc.TEST_ID):
            if rng.random() < 0.6:
                judgement = Judgement(
                    float(rng.choice([0.5, 0.8])),
                    float(rng.choice([0.9, 0.95])),
                    ErrorPolicy.EXCLUDE if rng.random() < 0.5 else ErrorPolicy.COUNT,
                )
                recorded |= {span: judgement for span in spans[tc.SPAN_ID].to_list()}
    results, notes = judge(trials, options, recorded=recorded)
    expected, expected_notes = _judged_one_by_one(trials, options, recorded)
    assert [repr(r) for r in results] == [repr(r) for r in expected]
    assert notes == expected_notes


def test_costs_of_every_test_at_once_are_each_tests_alone() -> None:
    table = _table(11, big=True)
    ordered, rows = _rows_by_test(table)
    ranges = list(rows.values())
    together = cost_summaries(ordered, ranges, "prices.toml")
    alone = [cost_summary(ordered.slice(a, b - a), "prices.toml") for a, b in ranges]
    assert [repr(c) for c in together] == [repr(c) for c in alone]
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
    coded = _Lists.of(column)
    for (a, b), (distinct, index) in zip(ranges, coded.by_range(ranges), strict=True):
        expected, expected_index = distinct_lists(column.slice(a, b - a))
        assert list(distinct) == expected
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
        return all_figures._names_twice(_figures.score_rows(table), max(map(len, scores)))

    assert twice([["a", "b", "a"]])  # not next to each other
    assert twice([["b"], ["a", "c", "b", "a"]])
    assert not twice([["a", "b"], ["a", "b"], ["b"]])  # one name in several trials
    assert not twice([["a"], ["a"]])
