import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.analysis._features import trial_features, varies


def _divergence_step(sequence: tuple[str, ...], reference: tuple[str, ...]) -> int:
    """1-based step where ``sequence`` first differs from ``reference``; 0 if it never does."""
    for step, (a, b) in enumerate(zip(sequence, reference, strict=False), start=1):
        if a != b:
            return step
    return 0 if len(sequence) == len(reference) else min(len(sequence), len(reference)) + 1


def _trials(sequences: list[list[str]], passed: list[bool]) -> pl.DataFrame:
    n = len(sequences)
    return pl.DataFrame(
        {
            "tool_sequence": sequences,
            "passed": passed,
            "models": [["m"]] * n,
            "error_spans": [0] * n,
            "tool_calls": [len(s) for s in sequences],
            "llm_calls": [1] * n,
            "duration_s": [1.0] * n,
        }
    )


def test_features_describe_tool_use_and_divergence() -> None:
    trials = _trials(
        [["search", "answer"], ["search", "answer"], ["search", "search", "answer"], ["answer"]],
        [True, True, False, False],
    )
    features = {f.name: f for f in trial_features(trials)}
    assert features["tool_calls:search"].values.tolist() == [1, 1, 2, 0]
    assert features["uses:search"].values.tolist() == [1, 1, 1, 0]
    assert features["leaves_common_path"].values.tolist() == [0, 0, 1, 1]
    assert features["steps"].values.tolist() == [2, 2, 3, 1]
    # constant features are left out: every trial answers once, uses one model, same latency
    assert {
        "uses:answer",
        "tool_calls:answer",
        "latency",
        "llm_calls",
        "has_error_spans",
    }.isdisjoint(features)
    assert all(isinstance(f.values, np.ndarray) for f in features.values())


def test_divergence_step() -> None:
    assert _divergence_step(("a", "b"), ("a", "b")) == 0
    assert _divergence_step(("a", "c"), ("a", "b")) == 2
    assert _divergence_step(("a",), ("a", "b")) == 2
    assert _divergence_step(("a", "b", "c"), ("a", "b")) == 3


LEAVES = "leave the most common passing tool path"


def _as_before(trials: pl.DataFrame) -> list[tuple[str, str, list[float], str]]:
    """trial_features as it was: every feature per trial, constant ones dropped by np.unique."""
    from assay.analysis._features import distinct_lists, tool_paths

    paths = tool_paths(trials)
    passed = trials["passed"].to_numpy().astype(bool)
    out = []
    tools = sorted({t for s in paths.distinct for t in s})
    calls = np.array(
        [[s.count(tool) for tool in tools] for s in paths.distinct], dtype=float
    ).reshape(len(paths.distinct), len(tools))[paths.index]
    for column, tool in enumerate(tools):
        counts = calls[:, column]
        out.append((f"uses:{tool}", "binary", (counts > 0).astype(float), f"use `{tool}`"))
        out.append((f"tool_calls:{tool}", "count", counts, f"calls to `{tool}`"))
    reference = paths.most_common_among(passed)
    if reference is not None:
        steps = np.array([_divergence_step(s, reference) for s in paths.distinct], dtype=float)
        leaves = (steps[paths.index] > 0).astype(float)
        out.append(
            ("leaves_common_path", "binary", leaves, "leave the most common passing tool path")
        )
    model_sets, model_index = distinct_lists(trials["models"])
    models = sorted({m for ms in model_sets for m in ms})
    if len(models) > 1:
        for model in models:
            used = np.array([model in ms for ms in model_sets], dtype=float)[model_index]
            out.append((f"model:{model}", "binary", used, f"use model `{model}`"))
    errors = trials["error_spans"].to_numpy().astype(float)
    out.append(("has_error_spans", "binary", (errors > 0).astype(float), "have error spans"))
    out.append(("steps", "count", trials["tool_calls"].to_numpy().astype(float), "tool steps"))
    out.append(("llm_calls", "count", trials["llm_calls"].to_numpy().astype(float), "LLM calls"))
    out.append(
        ("latency", "continuous", trials["duration_s"].to_numpy().astype(float), "latency (s)")
    )
    return [(n, k, v.tolist(), lab) for n, k, v, lab in out if np.unique(v).size > 1]


@settings(deadline=None, max_examples=80)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.lists(st.sampled_from(["a", "b", "c"]), max_size=4)),
            st.booleans(),
            st.one_of(st.none(), st.lists(st.sampled_from(["m1", "m2"]), max_size=2)),
            st.integers(0, 2),
            st.one_of(st.none(), st.integers(0, 5)),
            st.one_of(st.none(), st.sampled_from([0.5, 1.0, float("nan"), float("inf")])),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_features_are_those_made_one_per_trial(rows: list[tuple]) -> None:
    # Path features are now read per distinct path and dropped there when constant.
    trials = pl.DataFrame(
        {
            "tool_sequence": [r[0] for r in rows],
            "passed": [r[1] for r in rows],
            "models": [r[2] for r in rows],
            "error_spans": [r[3] for r in rows],
            "tool_calls": [r[4] for r in rows],
            "llm_calls": [1] * len(rows),
            "duration_s": [r[5] for r in rows],
        },
        schema={
            "tool_sequence": pl.List(pl.String),
            "passed": pl.Boolean,
            "models": pl.List(pl.String),
            "error_spans": pl.Int64,
            "tool_calls": pl.Int64,
            "llm_calls": pl.Int64,
            "duration_s": pl.Float64,
        },
    )
    made = [(f.name, f.kind, f.values.tolist(), f.label) for f in trial_features(trials)]
    assert repr(made) == repr(_as_before(trials))


@settings(deadline=None, max_examples=200)
@given(st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.5, float("nan"), float("inf")]), max_size=6))
def test_varies_is_more_than_one_unique_value(values: list[float]) -> None:
    array = np.array(values, dtype=float)
    assert varies(array) == (np.unique(array).size > 1)
