import numpy as np
import polars as pl

from assay.analysis._features import _divergence_step, trial_features


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
