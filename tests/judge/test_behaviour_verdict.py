import math

import numpy as np
import pytest

from assay.judge import BehaviourVerdict, behaviour_diff, behaviour_diffs, describe_change
from assay.stats import BehaviourSample, FeaturePair, adjust_p_values


def _sample(
    rng: np.random.Generator,
    n: int,
    *,
    verify: float = 0.8,
    retry: float = 0.1,
    tokens: float = 1.0,
    prefix: str = "",
) -> tuple[tuple[str, ...], list[FeaturePair]]:
    searches = 1 + (rng.random(n) < retry)
    uses_verify = rng.random(n) < verify
    paths = tuple(
        ("search",) * int(s) + (("verify",) if v else ()) + ("answer",)
        for s, v in zip(searches, uses_verify, strict=True)
    )
    input_tokens = rng.lognormal(math.log(1500), 0.35, n) * tokens
    return tuple(f"{prefix}{i:032x}" for i in range(n)), [
        FeaturePair("path", "path", "tool path", np.empty(0), np.empty(0), paths, paths),
        FeaturePair("uses:verify", "binary", "use `verify`", uses_verify * 1.0, uses_verify * 1.0),
        FeaturePair(
            "tool_calls:search", "count", "calls to `search`", searches * 1.0, searches * 1.0
        ),
        FeaturePair("input_tokens", "continuous", "input tokens", input_tokens, input_tokens),
    ]


def _pair(rng: np.random.Generator, n: int, **current: float) -> BehaviourSample:
    ids_b, base = _sample(rng, n, prefix="b")
    ids_c, cur = _sample(rng, n, prefix="c", **current)
    features = tuple(
        FeaturePair(
            b.name, b.kind, b.label, b.baseline, c.current, b.baseline_paths, c.current_paths
        )
        for b, c in zip(base, cur, strict=True)
    )
    return BehaviourSample(ids_b, ids_c, features)


def test_a_dropped_tool_is_changed_with_effect_interval_and_examples() -> None:
    result = behaviour_diff(_pair(np.random.default_rng(1), 30, verify=0.0))
    assert result.verdict is BehaviourVerdict.CHANGED
    names = [c.feature for c in result.changes]
    assert "uses:verify" in names and "path" in names
    drop = next(c for c in result.changes if c.feature == "uses:verify")
    assert drop.note == "vanished" and drop.current == 0.0
    assert drop.effect is not None and drop.ci_low is not None and drop.ci_high is not None
    assert drop.ci_low <= drop.effect <= drop.ci_high < 0
    assert drop.adjusted_p < 0.05 and drop.adjusted_p >= drop.p_value
    # Typical trials: baseline ones that used verify, current ones (none use it).
    assert drop.baseline_traces and all(t.startswith("b") for t in drop.baseline_traces)
    assert len(drop.current_traces) == 3 and all(t.startswith("c") for t in drop.current_traces)
    assert "vanished" in describe_change(drop) and "use `verify`" in result.reason
    magnitudes = [c.magnitude for c in result.changes]
    assert magnitudes == sorted(magnitudes, reverse=True)


def test_more_tokens_is_a_ratio_change() -> None:
    result = behaviour_diff(_pair(np.random.default_rng(2), 100, tokens=1.4))
    tokens = next(c for c in result.features if c.feature == "input_tokens")
    assert tokens.changed and tokens.measure == "ratio"
    assert tokens.ci_low is not None and tokens.ci_high is not None
    assert tokens.ci_low < 1.4 < tokens.ci_high
    assert "ratio" in describe_change(tokens)


def test_no_change_with_many_trials_is_unchanged_with_few_inconclusive() -> None:
    many = behaviour_diff(_pair(np.random.default_rng(3), 300))
    assert many.verdict is BehaviourVerdict.UNCHANGED, many.reason
    assert all(c.power >= 0.8 for c in many.features)
    few = behaviour_diff(_pair(np.random.default_rng(3), 12))
    assert few.verdict is BehaviourVerdict.INCONCLUSIVE
    assert few.trials_needed is not None and few.trials_needed > 12
    assert f"about {few.trials_needed} trials" in few.reason
    tiny = behaviour_diff(_pair(np.random.default_rng(3), 4))
    assert tiny.verdict is BehaviourVerdict.INCONCLUSIVE and "too few trials" in tiny.reason


def test_identical_versions_are_rarely_called_changed() -> None:
    rng = np.random.default_rng(4)
    runs = 150
    changed = sum(
        behaviour_diff(_pair(rng, 30)).verdict is BehaviourVerdict.CHANGED for _ in range(runs)
    )
    # Holm within the test keeps the chance of a false CHANGED at most alpha.
    assert changed / runs <= 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / runs)


@pytest.mark.parametrize("method", ["holm", "bh"])
def test_suite_wide_adjustment_pools_every_feature(method: str) -> None:
    rng = np.random.default_rng(5)
    samples = {"a": _pair(rng, 30, verify=0.4), "b": _pair(rng, 30)}
    within = behaviour_diffs(samples)
    pooled = behaviour_diffs(samples, adjust=method)
    raw = [c.p_value for t in ("a", "b") for c in sorted(within[t].features, key=_key)]
    expected = adjust_p_values(raw, method)
    got = [c.adjusted_p for t in ("a", "b") for c in sorted(pooled[t].features, key=_key)]
    np.testing.assert_allclose(got, expected)
    assert pooled["a"].family_size == len(raw) and pooled["a"].adjust == method
    assert within["a"].adjust == "holm" and within["a"].family_size == len(within["a"].features)


def _key(change):  # the input order of the features
    return ["path", "uses:verify", "tool_calls:search", "input_tokens"].index(change.feature)
